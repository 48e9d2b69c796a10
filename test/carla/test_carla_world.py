"""The replay world (ROS-free): Unreal → REP-103 by SUPPLEMENT §5.4 with hand-computed values,
interpolation between frames (§5.5), events applied forward and rebuilt on a backward seek."""
import io
import math
import struct

import numpy as np
import pytest

from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.emulator.scene import SENSOR_OFFSET, Scene
from ros_sim_bridge.carla.emulator.writer import write
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


# -- parented actors (CARLA: attach_to spawns at the transform relative to the parent) ---------
def parented_file(parent_deleted_at=None):
    """Hero 42 moving with Position records; sensor 50 spawned relative to it (EventAdd at the
    relative transform, EventParent to 42, never a Position record, as CARLA records it);
    sensor 51 relative to 50 (a chain).  Frame 0: hero at (1000, 2000, 0) cm yaw 90°;
    frames 1..: at (1000, 3000, 0) yaw 90° pitch 30°.  ``parent_deleted_at``: 42 destroyed
    in that frame."""
    out = HEADER
    hero = [((1000, 2000, 0), (0, 0, 90))] + [((1000, 3000, 0), (0, 30, 90))] * 4
    for i, (loc, rot) in enumerate(hero):
        out += _pk(0, struct.pack('<Qdd', i + 1, 0.05 if i < 4 else -1.0, 0.05 * i))
        adds = []
        if i == 0:
            adds = [_add(42, 1, loc, rot, 'vehicle.tesla.model3', 'hero'),
                    _add(50, 5, (100, 0, 280), (0, 0, 30), 'sensor.camera.rgb', 'front'),
                    _add(51, 5, (0, 50, 0), (0, 0, 0), 'sensor.other.collision')]
        out += _pk(2, struct.pack('<H', len(adds)) + b''.join(adds))
        if i == parent_deleted_at:
            out += _pk(3, struct.pack('<HI', 1, 42))
        if i == 0:
            out += _pk(4, struct.pack('<HIIII', 2, 50, 42, 51, 50))
        if parent_deleted_at is None or i < parent_deleted_at:
            out += _positions([(42, loc, rot)])
        out += _pk(1, b'')
    return out


def _pose_of(world, actor, t=None):
    ids, loc, rot = world.poses(t)
    k = ids.tolist().index(actor)
    return loc[k].tolist() + rot[k].tolist()


def test_parented_actor_is_relative_to_its_parent_hand_computed():
    """Hand-computed (Unreal: yaw +90° turns +X to +Y; pitch +30° lifts +X towards +Z):
    frame 0, hero at (1000, 2000, 0) yaw 90: sensor 50 at (100, 0, 280) relative → world
    (1000, 2100, 280), yaw 90 + 30 = 120; sensor 51 at (0, 50, 0) relative to 50 (yaw 120:
    its +Y is (−sin 120°, cos 120°)) → (1000 − 43.30, 2100 − 25, 280)."""
    rec = Recording(parented_file())
    world = World(rec)
    world.advance(0)
    assert world.actors[50].parent == 42 and world.actors[51].parent == 50
    assert _pose_of(world, 50, 0.0) == pytest.approx([1000, 2100, 280, 0, 0, 120], abs=1e-6)
    s, c = math.sin(math.radians(120)), math.cos(math.radians(120))
    assert _pose_of(world, 51, 0.0) == pytest.approx(
        [1000 - 50 * s, 2100 + 50 * c, 280, 0, 0, 120], abs=1e-6)
    # frame 1 recorded pose (t=None): hero at (1000, 3000, 0) yaw 90 pitch 30: its +X is
    # (0, cos 30°, sin 30°), its +Z (0, −sin 30°, cos 30°); 100·X + 280·Z
    world.advance(1)
    c30, s30 = math.cos(math.radians(30)), math.sin(math.radians(30))
    x, y, z, roll, pitch, yaw = _pose_of(world, 50)
    assert [x, y, z] == pytest.approx([1000, 3000 + 100 * c30 - 280 * s30,
                                       100 * s30 + 280 * c30], abs=1e-6)
    # rotation: the hero's (yaw 90, pitch 30) then yaw 30 about the pitched up axis
    _, q_hero = ue_to_rep103([0, 0, 0], [0, 30, 90])
    _, q_rel = ue_to_rep103([0, 0, 0], [0, 0, 30])
    _, q = ue_to_rep103([0, 0, 0], [roll, pitch, yaw])
    from ros_sim_bridge.core.frames import quat_multiply
    want = quat_multiply(q_hero, q_rel)
    assert abs(float(np.dot(q, want))) == pytest.approx(1.0, abs=1e-12)
    # interpolated time: the sensor follows the interpolated hero (halfway: pitch 15)
    x, y, z, *_ = _pose_of(world, 50, 0.075)
    c15, s15 = math.cos(math.radians(15)), math.sin(math.radians(15))
    assert [x, y, z] == pytest.approx([1000, 2500 + 100 * c15 - 280 * s15,
                                       100 * s15 + 280 * c15], abs=1e-6)


def published_tf(world, t) -> dict:
    """child frame → transform of the /tf message the replayer publishes at ``t`` (None: the
    frame's recorded poses, as to-bag), read back by rclpy."""
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage

    from ros_sim_bridge.carla.ros.frame_cdr import FrameCdr
    from ros_sim_bridge.ros.stamps import seconds_to_stamp
    _, loc, rot = world.poses(t)
    msgs = dict(FrameCdr(block=1).frame(world, seconds_to_stamp(t or 0.0), poses=(loc, rot)))
    return {x.child_frame_id: x
            for x in deserialize_message(bytes(msgs['tf']), TFMessage).transforms}


def test_parented_actor_relative_transform_in_tf_is_its_spawn_transform():
    rec = Recording(parented_file())
    world = World(rec)
    for i in (0, 2):
        world.advance(i)
        tf = published_tf(world, None)
        s = tf['actor_50']
        assert s.header.frame_id == 'hero'
        v, q = s.transform.translation, s.transform.rotation
        assert [v.x, v.y, v.z] == pytest.approx([1.0, 0.0, 2.8], abs=1e-9)
        h = math.sin(math.radians(-15))          # Unreal yaw +30° is −30° about +z
        assert [q.w, q.x, q.y, q.z] == pytest.approx([math.cos(math.radians(15)), 0, 0, h],
                                                     abs=1e-9)
        v = tf['actor_51'].transform.translation
        assert tf['actor_51'].header.frame_id == 'actor_50'
        assert [v.x, v.y, v.z] == pytest.approx([0.0, -0.5, 0.0], abs=1e-9)


@pytest.mark.parametrize('jump_back', [False, True])
def test_parented_actor_stays_where_it_was_when_its_parent_is_destroyed(jump_back):
    """CARLA detaches the children of a destroyed actor: they stay at their last world
    pose (the parent's last recorded pose composed with the relative transform); the same
    after a rebuild (seek)."""
    rec = Recording(parented_file(parent_deleted_at=2))
    world = World(rec)
    world.advance(1)
    before = _pose_of(world, 50)
    chain = _pose_of(world, 51)
    c30, s30 = math.cos(math.radians(30)), math.sin(math.radians(30))
    assert before[:3] == pytest.approx([1000, 3000 + 100 * c30 - 280 * s30,
                                        100 * s30 + 280 * c30], abs=1e-6)
    world.advance(3)
    if jump_back:
        world.advance(4)
        assert world.advance(3).reset              # backwards: rebuilt from the index
    assert 42 not in world.actors
    assert _pose_of(world, 50) == pytest.approx(before, abs=1e-9)
    assert _pose_of(world, 51) == pytest.approx(chain, abs=1e-9)


def test_generated_collision_sensor_is_written_as_carla_does(scene_rec):
    """The generator's sensor: EventAdd at a transform relative to the hero, no Position."""
    from ros_sim_bridge.carla.emulator.scene import SENSOR_RELATIVE
    scene, rec = scene_rec
    sensor = scene.hero + SENSOR_OFFSET
    world = World(rec)
    for i in range(len(rec)):
        assert sensor not in rec.frame(i).get('Position')['id'].tolist()
    world.advance(0)
    assert world.actors[sensor].spawn_location == pytest.approx(SENSOR_RELATIVE[0])
    world.advance(30)
    _, loc, rot = world.poses(None)
    ids = world.poses(None)[0].tolist()
    h, s = ids.index(scene.hero), ids.index(sensor)
    yaw = math.radians(rot[h][2])
    dx, dy, dz = SENSOR_RELATIVE[0]
    assert (loc[s] - loc[h]).tolist() == pytest.approx(
        [dx * math.cos(yaw) - dy * math.sin(yaw), dx * math.sin(yaw) + dy * math.cos(yaw), dz],
        abs=1e-6)


def test_real_recording_sensors_sit_at_their_relative_offsets():
    """scenario_runner's metrics recording: sensors 239–243 attached to hero 234 (EventAdd at
    (0,0,0), (100,0,280), (−590.17,0,251.07) cm, no Position records).  TF hero → sensor is
    that small offset (it was the sensor's offset taken as a map position: hundreds of m)."""
    from conftest import shared_path
    rec = Recording(shared_path('samples', 'carla', 'scenario_runner-metrics',
                                'DistanceToLaneCenter.log').read_bytes())
    world = World(rec)
    for i in (241, 300, 429):
        world.advance(i)
        t = float(rec.elapsed[i]) + 0.01
        tf = published_tf(world, t)
        for aid, want in ((239, (0, 0, 0)), (241, (1.0, 0, 2.8)),
                          (243, (-5.901683349609375, 0, 2.5107464599609375))):
            x = tf[f'actor_{aid}']
            assert x.header.frame_id == 'hero'
            v = x.transform.translation
            assert [v.x, v.y, v.z] == pytest.approx(want, abs=1e-6), (i, aid)


def _parent_world(events):
    """A world of actors 1..4 (spawned at x = 100·id cm) after frames of ``events``:
    ('parent', child, parent) or ('del', id) or ('add', id)."""
    from ros_sim_bridge.carla.codec.recording import Recording
    from test_carla_resync import HEADER, pk

    def add(aid):
        return (struct.pack('<IB', aid, 1) + struct.pack('<6f', 100.0 * aid, 0, 0, 0, 0, 0)
                + struct.pack('<I', 0) + struct.pack('<H', 11) + b'vehicle.x.y' + struct.pack('<H', 0))
    frames = [pk(2, struct.pack('<H', 4) + b''.join(add(a) for a in (1, 2, 3, 4)))]
    for ev in events:
        if ev[0] == 'parent':
            frames.append(pk(4, struct.pack('<H', 1) + struct.pack('<II', ev[1], ev[2])))
        elif ev[0] == 'del':
            frames.append(pk(3, struct.pack('<HI', 1, ev[1])))
        else:
            frames.append(pk(2, struct.pack('<H', 1) + add(ev[1])))
    body = b''.join(pk(0, struct.pack('<Qdd', k + 1, 0.05, 0.05 * k)) + f + pk(1, b'')
                    for k, f in enumerate(frames))
    world = World(Recording(HEADER + body))
    world.advance(len(frames) - 1)
    return world


def test_a_parent_that_would_close_a_loop_is_refused_and_counted():
    """2 under 3, 3 under 4, then 4 under 2 (and 1 under itself): TF would get a loop; the
    closing EventParent is ignored and reported as bad input."""
    world = _parent_world([('parent', 2, 3), ('parent', 3, 4), ('parent', 4, 2),
                           ('parent', 1, 1)])
    assert {a: world.actors[a].parent for a in (1, 2, 3, 4)} == {1: 0, 2: 3, 3: 4, 4: 0}
    assert [e.kind for e in world.errors] == ['bad_value', 'bad_value']
    assert 'loop of parents' in str(world.errors[0])


def test_a_destroyed_parent_s_id_taken_again_is_not_the_child_s_parent():
    """2 under 4, 4 destroyed (2 detached), a new actor 4 added: 2 stays without a parent."""
    world = _parent_world([('parent', 2, 4), ('del', 4), ('add', 4)])
    assert 4 in world.actors and world.actors[2].parent == 0
