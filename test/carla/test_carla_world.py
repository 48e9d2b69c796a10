"""The replay world (ROS-free): Unreal → REP-103 by SUPPLEMENT §5.4 with hand-computed values,
interpolation between frames (§5.5), events applied forward and rebuilt on a backward seek."""
import io
import math
import struct

import pytest

from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.generator import SENSOR_OFFSET, Scene, write
from ros_sim_bridge.carla.world import World, ue_to_rep103, ue_velocity_to_rep103


def test_units_and_axes_hand_computed():
    xyz, q = ue_to_rep103([100.0, 200.0, 300.0], [0.0, 0.0, 90.0])
    assert xyz.tolist() == [1.0, -2.0, 3.0]
    h = math.sqrt(0.5)   # Unreal yaw +90° (towards +Y, right) is −90° about +z in ENU
    assert q.tolist() == pytest.approx([h, 0.0, 0.0, -h])
    _, q = ue_to_rep103([0, 0, 0], [0.0, 30.0, 0.0])       # pitch up 30° → −30° about y
    assert q.tolist() == pytest.approx([math.cos(-math.pi / 12), 0, math.sin(-math.pi / 12), 0])
    _, q = ue_to_rep103([0, 0, 0], [20.0, 0.0, 0.0])       # roll keeps its sign
    assert q.tolist() == pytest.approx([math.cos(math.pi / 18), math.sin(math.pi / 18), 0, 0])
    lin, ang = ue_velocity_to_rep103([1.0, 2.0, 3.0], [90.0, 90.0, 180.0])
    assert lin.tolist() == [1.0, -2.0, 3.0]
    assert ang.tolist() == pytest.approx([math.pi / 2, -math.pi / 2, -math.pi])


@pytest.fixture(scope='module')
def scene_rec():
    scene = Scene(seconds=8.0, rate=20.0, vehicles=4, walkers=1)
    buf = io.BytesIO()
    write(buf, scene)
    return scene, Recording(buf.getvalue())


# -- golden frames by hand (SUPPLEMENT §5.2–5.3, UE4 vectors) ---------------------------------
def _s(text):
    return struct.pack('<H', len(text)) + text.encode()


def _pk(pid, data):
    return struct.pack('<BI', pid, len(data)) + data


def _add(aid, atype, loc, rot, blueprint, role=''):
    attrs = [(3, 'role_name', role)] if role else []
    return (struct.pack('<IB', aid, atype) + struct.pack('<3f', *loc) + struct.pack('<3f', *rot)
            + struct.pack('<I', 0) + _s(blueprint) + struct.pack('<H', len(attrs))
            + b''.join(struct.pack('<B', t) + _s(k) + _s(v) for t, k, v in attrs))


def _positions(rows):
    return _pk(6, struct.pack('<H', len(rows)) + b''.join(
        struct.pack('<I', aid) + struct.pack('<3f', *loc) + struct.pack('<3f', *rot)
        for aid, loc, rot in rows))


HEADER = (b'\x01\x00' + _s('CARLA_RECORDER') + struct.pack('<q', 1637671165) + _s('Town01'))
# actor 42's recorded poses (cm, deg: roll, pitch, yaw) in frames 0..3; actor 43 from frame 2
POSES_42 = [((0, 0, 0), (0, 0, 170)), ((100, 200, 0), (0, 0, -170)),
            ((300, 200, 50), (0, 10, -160)), ((600, 0, 0), (0, 0, -160))]
POSE_43 = ((-50, 20, 0), (0, 0, 45))


def golden_file():
    """Four frames of 0.05 s (the last one's duration −1, as CARLA leaves it)."""
    out = HEADER
    for i, (loc, rot) in enumerate(POSES_42):
        out += _pk(0, struct.pack('<Qdd', i + 1, 0.05 if i < 3 else -1.0, 0.05 * i))
        adds = [_add(42, 1, loc, rot, 'vehicle.tesla.model3', 'hero')] if i == 0 else []
        if i == 2:
            adds.append(_add(43, 2, *POSE_43, 'walker.pedestrian.0001'))
        out += _pk(2, struct.pack('<H', len(adds)) + b''.join(adds))
        out += _positions([(42, loc, rot)] + ([(43,) + POSE_43] if i >= 2 else []))
        out += _pk(1, b'')
    return out


def test_interpolation_is_carlas_rule_on_golden_frames():
    """SUPPLEMENT §5.5: at t in frame i (elapsed_i <= t < elapsed_i + duration_i) a pose is
    lerp(previous Position, frame i's Position, (t − elapsed_i) / duration_i), angles the
    short way; no previous position: the current one; no interpolation: fraction 0."""
    rec = Recording(golden_file())
    world = World(rec)

    def pose(t, actor=42, **kw):
        world.advance(rec.frame_at(t))
        ids, loc, rot = world.poses(t, **kw)
        k = ids.tolist().index(actor)
        return loc[k].tolist() + rot[k].tolist()   # x, y, z cm, roll, pitch, yaw deg

    # frame 0: nothing before it, its own recorded pose at any fraction
    assert pose(0.0) == [0, 0, 0, 0, 0, 170]
    assert pose(0.025) == [0, 0, 0, 0, 0, 170]
    # t = 0.0625 is in frame 1 at (0.0625 − 0.05) / 0.05 = 0.25 of the way from frame 0's pose
    # to frame 1's: (0,0,0) + 0.25·(100,200,0); yaw 170 → −170 is +20 the short way: 175
    assert pose(0.0625) == pytest.approx([25, 50, 0, 0, 0, 175])
    # at frame 2's own time the fraction is 0: frame 1's pose (CARLA shows it until later)
    assert pose(0.1) == pytest.approx([100, 200, 0, 0, 0, -170])
    # t = 0.1375: frame 2, fraction 0.75 from frame 1's pose to frame 2's
    assert pose(0.1375) == pytest.approx([250, 200, 37.5, 0, 7.5, -162.5])
    # actor 43 has no Position before frame 2: its current one
    assert pose(0.1375, 43) == pytest.approx([-50, 20, 0, 0, 0, 45])
    # no interpolation (CARLA at a time factor >= 2): fraction 0, the previous pose
    assert pose(0.1375, interpolate=False) == pytest.approx([100, 200, 0, 0, 0, -170])
    # the last frame (duration −1) is reached only at its own time: fraction 0
    assert pose(0.15) == pytest.approx([300, 200, 50, 0, 10, -160])
    # t=None: the current frame's recorded pose as it is (to-bag writes those)
    world.advance(2)
    ids, loc, rot = world.poses(None)
    k = ids.tolist().index(42)
    assert (loc[k].tolist(), rot[k].tolist()) == ([300, 200, 50], [0, 10, -160])
    # the same poses after a backward jump (rebuilt from the index)
    world.advance(0)
    assert pose(0.1375) == pytest.approx([250, 200, 37.5, 0, 7.5, -162.5])


def test_events_forward_and_backward(scene_rec):
    scene, rec = scene_rec
    world = World(rec)
    ch = world.advance(0)
    assert scene.hero in ch.added and world.hero() == scene.hero
    assert world.actors[scene.hero + SENSOR_OFFSET].parent == scene.hero
    world.advance(scene.collision_frames()[0] - 1)       # a far jump: rebuilt from the index
    ch = world.advance(scene.collision_frames()[-1])     # then frame by frame
    assert not ch.reset and len(ch.collisions) == 2 * len(scene.collision_frames())
    ch = world.advance(scene.destroy_frame)
    assert ch.removed == [scene.destroyed] and scene.destroyed not in world.actors
    ch = world.advance(10)                                     # backwards: rebuilt
    assert ch.reset and ch.added == [scene.destroyed] and ch.removed == []
    assert world.actors[scene.hero + SENSOR_OFFSET].parent == scene.hero
    assert world.record('AnimVehicle', scene.hero)['gear'] == 1
    assert world.actors[scene.hero].box == ((0.0, 0.0, 75.0), (235.0, 95.0, 75.0))
