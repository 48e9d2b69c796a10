"""A corrupt CARLA recording with NaN / ±Inf in Position records, in a spawn transform and in
Kinematics records (SUPPLEMENT §5.3): the actor's transform is left out of /tf for the frames
its pose is not finite (live replayer and to-bag), and so are its entry in the actor list, its
markers, its traffic light entry and (the hero) the odometry; a velocity that is not finite
gives a zero twist in the actor list and no odometry.  The other actors' are published, what
is left out is counted once per frame (the replayer paused on a bad frame counts it once), the
fast to-bag path gives the node's messages, ``blocked`` skips the bad locations, nothing
crashes and numpy warns of nothing."""
import io
import json
import math
import struct
import subprocess

import pytest
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.carla.cli import blocked_rows
from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.emulator.scene import SENSOR_OFFSET, Scene
from ros_sim_bridge.carla.emulator.writer import write
from ros_sim_bridge.carla.ros.node import CarlaReplayerNode
from ros_sim_bridge.carla.ros.to_bag import to_bag
from ros_sim_bridge.msg import CarlaActorList, CarlaTrafficLightList
from ros_sim_bridge.ros.stamps import seconds_to_stamp
from ros_sim_bridge.srv import CarlaSeek
from ros_sim_bridge.tools.launcher import executable

from test_carla_frame_cdr import compare
from test_carla_node import services  # noqa: F401 (fixture)
from test_carla_to_bag import read_bag

SCENE = Scene(seconds=3.0, rate=10.0, vehicles=4, walkers=1, traffic_lights=2)
POSITION, EVENT_ADD, KINEMATICS = 6, 2, 12      # packet ids (SUPPLEMENT §5.3)
RECORD = 28     # Position: u32 id, location 3 × f32 @4, rotation 3 × f32 @16 (UE4);
#                 Kinematics: u32 id, linear 3 × f32 @4, angular 3 × f32 @16
HERO, VEHICLE, WALKER = SCENE.hero, int(SCENE.vehicle_ids[1]), int(SCENE.walker_ids[0])
PARKED = SCENE.parked                   # never moves: `blocked` finds it
LIGHT = int(SCENE.light_ids[1])         # never in a Position record: placed by its spawn
# (frame, actor, byte offset in its Position record, value)
CORRUPT = [(10, VEHICLE, 4, math.nan),          # location x
           (15, WALKER, 24, math.inf),          # rotation yaw
           (20, HERO, 12, -math.inf),           # location z: its sensor (a child) goes too
           (24, PARKED, 8, math.inf),           # location y, two frames running
           (25, PARKED, 8, math.inf)]
# (frame, actor, byte offset in its Kinematics record, value)
CORRUPT_KINEMATICS = [(12, VEHICLE, 24, math.nan),      # angular z
                      (27, HERO, 4, math.inf)]          # linear x
FRAMES = SCENE.frames
# actor transforms left out in a frame-by-frame conversion
LEFT_OUT = {10: {VEHICLE}, 15: {WALKER}, 20: {HERO, HERO + SENSOR_OFFSET}, 24: {PARKED},
            25: {PARKED}}
EXPECTED = FRAMES + sum(len(v) for v in LEFT_OUT.values())    # + the light in every frame
# frames without hero odometry: its pose or its velocity not finite
NO_ODOMETRY = {20, 27}


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
    for packet, corrupt in ((POSITION, CORRUPT), (KINEMATICS, CORRUPT_KINEMATICS)):
        for frame, actor, at, value in corrupt:
            [(start, size)] = [(s, n) for pid, s, n in rec.packets(frame) if pid == packet]
            (count,) = struct.unpack_from('<H', data, start)
            rows = [start + 2 + k * RECORD for k in range(count)]
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


@pytest.fixture(scope='module')
def corrupt_bag(tmp_path_factory, corrupt_log):
    """``carla_log to-bag --json`` of the corrupt log: (the finished process, the bag's
    messages by topic, frame by frame, the intact log's bag's, to_bag's counts of it)."""
    tmp = tmp_path_factory.mktemp('carla_non_finite_bag')
    proc = subprocess.run([str(executable('carla_log')), 'to-bag', str(corrupt_log),
                           str(tmp / 'bag'), '--no-progress', '--json'], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    intact = tmp / 'intact.log'
    with open(intact, 'wb') as f:
        write(f, SCENE, 'ue4-0.9.13')
    counts = to_bag(Recording(intact.read_bytes()), str(tmp / 'intact'), progress=False)
    elapsed = Recording(corrupt_log.read_bytes()).elapsed
    frame_of = {int(round(float(t) * 1e9)): i for i, t in enumerate(elapsed)}
    bags = []
    for bag in (tmp / 'bag', tmp / 'intact'):
        by_frame = {}
        for topic, msgs in read_bag(bag)[0].items():
            by_frame[topic] = {frame_of[t]: m for t, m in msgs}
        bags.append(by_frame)
    return proc, *bags, counts


def test_to_bag_leaves_non_finite_transforms_out_and_counts_them(corrupt_bag):
    proc, bag, intact, counts = corrupt_bag
    assert counts.non_finite_poses == 0
    assert 'Warning' not in proc.stderr and 'Traceback' not in proc.stderr, proc.stderr
    assert f'{EXPECTED} actor poses not finite' in proc.stderr
    assert json.loads(proc.stdout)['non_finite_poses'] == EXPECTED
    assert len(bag['/tf']) == len(intact['/tf']) == FRAMES
    for i in range(FRAMES):
        left_out = {frame_name(a) for a in LEFT_OUT.get(i, set()) | {LIGHT}}
        assert [values(t) for t in intact['/tf'][i].transforms
                if t.child_frame_id not in left_out] == \
            [values(t) for t in bag['/tf'][i].transforms], i   # the others as in the intact log


def test_to_bag_leaves_unknown_poses_out_of_the_other_messages(corrupt_bag):
    """Actor list, markers, traffic lights: the actors whose pose is not finite in the map
    frame are left out of that frame's message (the others as in the intact log); no hero
    odometry in a frame its pose or velocity is not finite; no NaN anywhere."""
    _, bag, intact, _ = corrupt_bag
    for i in range(FRAMES):
        gone = LEFT_OUT.get(i, set()) | {LIGHT}      # the sensor: placed by the hero, in map
        actors = bag['/carla/actor_list'][i].actors
        assert [a.id for a in intact['/carla/actor_list'][i].actors if a.id not in gone] == \
            [a.id for a in actors], i
        assert all(finite(a.pose) for a in actors), i
        boxes = [m for m in bag['/carla/markers'][i].markers if m.action == 0]
        assert [(m.ns, m.id) for m in intact['/carla/markers'][i].markers
                if m.action == 0 and m.id not in gone] == [(m.ns, m.id) for m in boxes], i
        assert all(finite(m.pose) for m in boxes), i
        lights = bag['/carla/traffic_lights'][i].lights
        assert [x.id for x in lights] == [int(x) for x in SCENE.light_ids if x != LIGHT], i
        assert all(finite(x.pose) for x in lights), i
    odometry = bag['/carla/hero/odometry']
    assert sorted(odometry) == [i for i in range(FRAMES) if i not in NO_ODOMETRY]
    assert all(finite(m.pose.pose) and finite(m.twist.twist) for m in odometry.values())


def test_to_bag_zero_twist_for_non_finite_velocities_and_counts_them(corrupt_bag):
    proc, bag, intact, counts = corrupt_bag
    assert counts.non_finite_kinematics == 0
    n = len(CORRUPT_KINEMATICS)
    assert f'{n} actor velocities not finite' in proc.stderr
    assert json.loads(proc.stdout)['non_finite_kinematics'] == n
    assert all(finite(a.twist) for msg in bag['/carla/actor_list'].values()
               for a in msg.actors)
    for frame, actor, _, _ in CORRUPT_KINEMATICS:
        for i in range(FRAMES):
            if actor in LEFT_OUT.get(i, ()):
                continue
            [twist] = [a.twist for a in bag['/carla/actor_list'][i].actors if a.id == actor]
            [whole] = [a.twist for a in intact['/carla/actor_list'][i].actors if a.id == actor]
            if i == frame:
                assert twist_values(twist) == (0.0,) * 6 != twist_values(whole)
            else:
                assert twist_values(twist) == twist_values(whole), i


@pytest.mark.parametrize('block', [1, 7, 200])
def test_to_bag_fast_path_gives_the_node_messages_of_a_corrupt_log(corrupt_log, block,
                                                                   recwarn):
    """Frame by frame, field for field, the node's conversions and frame_cdr agree on what
    they leave out (the runs of actors left out cut the blocks anywhere)."""
    checked = compare(Recording(corrupt_log.read_bytes()), block)
    assert checked['odometry'] == FRAMES - len(NO_ODOMETRY)
    assert checked['tf'] == checked['actor_list'] == checked['markers'] == FRAMES
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_blocked_skips_non_finite_locations(corrupt_log):
    """Inf in two Position records running made ``inf - inf``: a numpy warning.  The records
    with a NaN or ±Inf location are skipped, said once: the parked car stays blocked over its
    two (the run is not cut; their time is not counted)."""
    non_finite = sum(1 for _, _, at, _ in CORRUPT if at < 16)       # a location, not rotation
    runs = {}
    for fmt in ('--json', None):
        proc = subprocess.run([str(executable('carla_log')), 'blocked', str(corrupt_log),
                               '--min-time', '1'] + ([fmt] if fmt else []),
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert 'Warning' not in proc.stderr and 'Traceback' not in proc.stderr, proc.stderr
        assert proc.stderr.count('NaN or ±Inf') == 1, proc.stderr
        assert f'{non_finite} Position records with a NaN or ±Inf location skipped' \
            in proc.stderr
        runs[fmt] = proc.stdout
    out = json.loads(runs['--json'])
    assert out['non_finite_positions'] == non_finite
    intact = io.BytesIO()
    write(intact, SCENE, 'ue4-0.9.13')
    rows, skipped = blocked_rows(Recording(intact.getvalue()), 1.0)
    assert skipped == 0
    [parked] = [r for r in out['blocked'] if r['id'] == PARKED]
    [whole] = [r for r in rows if r['id'] == PARKED]
    assert parked['time'] == whole['time']
    assert parked['duration'] == pytest.approx(whole['duration'] - 2 / SCENE.rate)


def values(t) -> tuple:
    """A transform's frames and numbers."""
    r, x = t.transform.rotation, t.transform.translation
    return t.header.frame_id, t.child_frame_id, x.x, x.y, x.z, r.w, r.x, r.y, r.z


def twist_values(t) -> tuple:
    return t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z


def finite(m) -> bool:
    """A Pose or Twist with no NaN or ±Inf."""
    if hasattr(m, 'linear'):
        return all(map(math.isfinite, twist_values(m)))
    p, q = m.position, m.orientation
    return all(map(math.isfinite, (p.x, p.y, p.z, q.x, q.y, q.z, q.w)))


def test_replayer_leaves_non_finite_poses_out_and_counts_them_once_per_frame(
        ros, services, corrupt_log, recwarn):
    """Seeks (paused) to each bad frame: the actor is in no message of it, the hero odometry
    is not published for a bad hero pose or velocity, nothing published is NaN; the counts
    are per frame replayed: ticking on while paused adds nothing."""
    ros.start(CarlaReplayerNode, {'file': str(corrupt_log), 'start_paused': True,
                                  'publish_rate': 20.0, 'diagnostics_period': 0.2})
    tf = ros.collect(TFMessage, '/tf', 500)
    actors = ros.collect(CarlaActorList, 'carla/actor_list', 500)
    markers = ros.collect(MarkerArray, 'carla/markers', 500)
    lights = ros.collect(CarlaTrafficLightList, 'carla/traffic_lights', 500)
    odom = ros.collect(Odometry, 'carla/hero/odometry', 500)
    rec = Recording(corrupt_log.read_bytes())
    tf.wait_for(1, 10.0, where=lambda m: m.transforms and m.transforms[0].header.stamp.sec
                == m.transforms[0].header.stamp.nanosec == 0)     # the start frame counted
    bad = {f: {a} for f, a, _, _ in CORRUPT_KINEMATICS}
    for frame, actors_out in {**LEFT_OUT, **bad}.items():
        t = float(rec.elapsed[frame])        # interpolated from the frame before: not finite
        res = services.call(CarlaSeek, 'carla/seek', CarlaSeek.Request(time=t))
        assert res is not None and res.success

        def at_t(m):
            return abs(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 - t) < 1e-6

        def tf_at_t(m):
            return m.transforms and at_t(m.transforms[0])
        # a few ticks at t: each topic published at least twice since the seek
        children = {x.child_frame_id for x in tf.wait_for(3, 10.0, where=tf_at_t)[-1].transforms}
        listed = {a.id for a in actors.wait_for(2, 10.0, where=at_t)[-1].actors}
        drawn = {m.id for m in markers.wait_for(2, 10.0, where=lambda m: m.markers and at_t(
            m.markers[0]))[-1].markers}
        lit = {x.id for x in lights.wait_for(2, 10.0, where=at_t)[-1].lights}
        alive = SCENE.vehicle_ids[SCENE.alive_vehicles(frame)].tolist()
        if frame in LEFT_OUT:
            out = actors_out | {LIGHT}
            assert not {frame_name(a) for a in out} & children
            assert not out & listed and not out & drawn and LIGHT not in lit
            assert {a for a in alive if a not in out} <= listed & drawn
        if frame in NO_ODOMETRY:
            assert not [m for m in list(odom.messages) if at_t(m)], frame
        else:
            odom.wait_for(1, 10.0, where=at_t)
    assert all(math.isfinite(v) for msg in list(tf.messages) for t in msg.transforms
               for v in values(t)[2:])
    assert all(finite(a.pose) and finite(a.twist) for msg in list(actors.messages)
               for a in msg.actors)
    assert all(finite(m.pose) for msg in list(markers.messages) for m in msg.markers)
    assert all(finite(x.pose) for msg in list(lights.messages) for x in msg.lights)
    assert all(finite(m.pose.pose) and finite(m.twist.twist) for m in list(odom.messages))
    # the start frame and each frame sought, once: the light in each, the actors left out
    poses = 1 + len(LEFT_OUT) + len(bad) + sum(len(v) for v in LEFT_OUT.values())
    want = {'non_finite_poses': str(poses), 'non_finite_kinematics': str(len(bad))}

    def counted(v):
        return {k: v.get(k) for k in want} == want
    ros.diagnostics('replay', counted)
    n = len(tf.messages)
    tf.wait_for(n + 10, 10.0)                   # ticking on, paused on the last bad frame
    diag = ros.diagnostics('replay')
    assert {k: diag.get(k) for k in want} == want
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize('parts', [
    ('scenario_runner-metrics', 'DistanceToLaneCenter.log'),
    ('scenario_runner-versions', 'v0.9.13__DistanceBetweenVehicles.log')])
def test_an_actor_recorded_without_a_box_has_none(parts):
    """The recorder writes an actor without a bounding box (the spectator, some sensors) as
    Unreal's empty box, origin NaN and extent -Inf: no box, not a box of NaN and -Inf in
    every actor list (a real recording, unmodified)."""
    from rclpy.serialization import deserialize_message

    from conftest import shared_path
    from ros_sim_bridge.carla.codec import Recording
    from ros_sim_bridge.carla.ros.frame_cdr import FrameCdr
    from ros_sim_bridge.carla.world import World
    rec = Recording(shared_path('samples', 'carla', *parts).read_bytes())
    world = World(rec)
    boxed, boxless = set(), set()
    for k in range(0, len(rec), max(1, len(rec) // 20)):
        world.advance(k)
        for aid, a in world.actors.items():
            (boxed if a.box is not None else boxless).add(aid)
            for vector in (a.box or ()) + (a.trigger or ()):
                assert all(map(math.isfinite, vector)), (aid, a.box, a.trigger)
    assert boxed and boxless          # vehicles have boxes; the spectator has none
    world.advance(len(rec) - 1)
    _, loc, rot = world.poses(None)
    msgs = dict(FrameCdr(block=1).frame(world, seconds_to_stamp(0.0), poses=(loc, rot)))
    listed = deserialize_message(bytes(msgs['actor_list']), CarlaActorList).actors
    assert len(listed) > 1
    for m in listed:
        values = [*vars_of(m.bounding_box_origin), *vars_of(m.bounding_box_extent)]
        assert all(map(math.isfinite, values)), m.id
        assert m.has_bounding_box == (world.actors[m.id].box is not None)


def vars_of(v):
    return (v.x, v.y, v.z)
