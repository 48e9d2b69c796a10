"""A corrupt CARLA recording with NaN / ±Inf in Position records and in a spawn transform
(SUPPLEMENT §5.3): the actor's transform is left out of /tf for the frames it is not finite
(live replayer and to-bag), the other actors' are published, the transforms left out are
counted, nothing crashes and numpy warns of nothing."""
import io
import math
import struct
import subprocess

import pytest
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.generator import SENSOR_OFFSET, Scene, write
from ros_sim_bridge.carla.ros.node import CarlaReplayerNode
from ros_sim_bridge.carla.ros.to_bag import to_bag
from ros_sim_bridge.srv import CarlaSeek
from ros_sim_bridge.tools.launcher import executable
from ros_sim_bridge.tools.session import call_service

from test_carla_to_bag import read_bag

SCENE = Scene(seconds=3.0, rate=10.0, vehicles=4, walkers=1, traffic_lights=2)
POSITION, EVENT_ADD = 6, 2              # packet ids (SUPPLEMENT §5.3)
POSITION_RECORD = 28                    # u32 id, location 3 × f32 @4, rotation 3 × f32 @16 (UE4)
HERO, VEHICLE, WALKER = SCENE.hero, int(SCENE.vehicle_ids[1]), int(SCENE.walker_ids[0])
LIGHT = int(SCENE.light_ids[1])         # never in a Position record: placed by its spawn
# (frame, actor, byte offset in its Position record, value)
CORRUPT = [(10, VEHICLE, 4, math.nan),          # location x
           (15, WALKER, 24, math.inf),          # rotation yaw
           (20, HERO, 12, -math.inf)]           # location z: its sensor (a child) goes too
FRAMES = SCENE.frames
# actor transforms left out in a frame-by-frame conversion
LEFT_OUT = {10: {VEHICLE}, 15: {WALKER}, 20: {HERO, HERO + SENSOR_OFFSET}}
EXPECTED = FRAMES + sum(len(v) for v in LEFT_OUT.values())    # + the light in every frame


def frame_name(actor: int) -> str:
    return 'hero' if actor == HERO else f'actor_{actor}'


@pytest.fixture(scope='module')
def corrupt_log(tmp_path_factory):
    """The generated scene with the CORRUPT floats written into its Position records, and
    LIGHT's EventAdd location x made +Inf."""
    out = io.BytesIO()
    write(out, SCENE, 'ue4-0.9.13')
    data = bytearray(out.getvalue())
    rec = Recording(bytes(data))
    for frame, actor, at, value in CORRUPT:
        [(start, size)] = [(s, n) for pid, s, n in rec.packets(frame) if pid == POSITION]
        (count,) = struct.unpack_from('<H', data, start)
        rows = [start + 2 + k * POSITION_RECORD for k in range(count)]
        [row] = [r for r in rows if struct.unpack_from('<I', data, r)[0] == actor]
        struct.pack_into('<f', data, row + at, value)
    [(start, size)] = [(s, n) for pid, s, n in rec.packets(0) if pid == EVENT_ADD]
    spawn = struct.pack('<I', LIGHT) + bytes([3]) + struct.pack(
        '<3f', *SCENE.light_location()[1])                 # u32 id, u8 type 3, V location
    at = data.index(spawn, start, start + size) + 5
    struct.pack_into('<f', data, at, math.inf)
    path = tmp_path_factory.mktemp('carla_non_finite') / 'corrupt.log'
    path.write_bytes(bytes(data))
    return path


def test_to_bag_leaves_non_finite_transforms_out_and_counts_them(tmp_path, corrupt_log):
    out = tmp_path / 'bag'
    proc = subprocess.run([str(executable('carla_log')), 'to-bag', str(corrupt_log), str(out),
                           '--no-progress', '--json'], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert 'Warning' not in proc.stderr and 'Traceback' not in proc.stderr, proc.stderr
    assert f'{EXPECTED} actor poses not finite' in proc.stderr
    assert f'"non_finite_poses": {EXPECTED}' in proc.stdout
    intact = tmp_path / 'intact.log'
    with open(intact, 'wb') as f:
        write(f, SCENE, 'ue4-0.9.13')
    assert to_bag(Recording(intact.read_bytes()), str(tmp_path / 'intact'),
                  progress=False).non_finite_poses == 0
    tfs = [m for _, m in read_bag(out)[0]['/tf']]
    whole = [m for _, m in read_bag(tmp_path / 'intact')[0]['/tf']]
    assert len(tfs) == len(whole) == FRAMES
    for i, (msg, full) in enumerate(zip(tfs, whole)):
        left_out = {frame_name(a) for a in LEFT_OUT.get(i, set()) | {LIGHT}}
        assert [values(t) for t in full.transforms if t.child_frame_id not in left_out] == \
            [values(t) for t in msg.transforms], i      # the others as in the intact log


def values(t) -> tuple:
    """A transform's frames and numbers."""
    r, x = t.transform.rotation, t.transform.translation
    return t.header.frame_id, t.child_frame_id, x.x, x.y, x.z, r.w, r.x, r.y, r.z


def test_replayer_leaves_non_finite_transforms_out_and_counts_them(ros, corrupt_log,
                                                                   recwarn):
    ros.start(CarlaReplayerNode, {'file': str(corrupt_log), 'start_paused': True,
                                  'publish_rate': 20.0, 'diagnostics_period': 0.2})
    tf = ros.collect(TFMessage, '/tf', 500)
    rec = Recording(corrupt_log.read_bytes())
    for frame, actor, _, _ in CORRUPT:
        t = float(rec.elapsed[frame])        # interpolated from the frame before: not finite
        res = call_service(ros.probe, CarlaSeek, 'carla/seek', CarlaSeek.Request(time=t), 10.0)
        assert res is not None and res.success

        def at_t(m):
            return m.transforms and abs(m.transforms[0].header.stamp.sec
                                        + m.transforms[0].header.stamp.nanosec * 1e-9 - t) < 1e-6
        children = {x.child_frame_id for x in tf.wait_for(1, 10.0, where=at_t)[-1].transforms}
        assert frame_name(actor) not in children and frame_name(LIGHT) not in children
        alive = SCENE.vehicle_ids[SCENE.alive_vehicles(frame)].tolist()
        assert {frame_name(a) for a in alive if a != actor} <= children
    assert all(math.isfinite(v) for msg in list(tf.messages) for t in msg.transforms
               for v in values(t)[2:])
    ros.diagnostics('replay', lambda v: int(v.get('non_finite_poses', '0')) >= len(CORRUPT))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
