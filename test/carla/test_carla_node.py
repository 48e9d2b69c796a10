"""carla_replayer through real DDS: clock, TF (units and axes of SUPPLEMENT §5.4, parents),
actor list, markers (boxes, labels, DELETE on destroy), traffic lights, collisions, controls,
hero odometry, interpolation, pause/resume/seek, follow actor — checked against the generator's
Scene formulas."""
import math
import subprocess
import time

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from conftest import wait_until
from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.emulator.scene import SENSOR_OFFSET, SENSOR_RELATIVE, Scene
from ros_sim_bridge.carla.emulator.writer import write
from ros_sim_bridge.carla.ros.frame_cdr import FrameCdr, Frames
from ros_sim_bridge.carla.ros.node import CarlaReplayerNode
from ros_sim_bridge.carla.world import World
from ros_sim_bridge.ros.stamps import seconds_to_stamp
from ros_sim_bridge.msg import (CarlaActorList, CarlaCollision, CarlaTrafficLightList,
                                CarlaVehicleControlList)
from ros_sim_bridge.srv import CarlaSeek
from ros_sim_bridge.tools.launcher import executable, ros_args

SCENE = Scene(seconds=8.0, rate=20.0, vehicles=4, walkers=1, traffic_lights=2)


@pytest.fixture(scope='module')
def log_file(tmp_path_factory):
    path = tmp_path_factory.mktemp('carla_node') / 'scene.log'
    with open(path, 'wb') as f:
        write(f, SCENE, 'ue4-0.9.13')
    return str(path)


def t_of(stamp):
    return stamp.sec + stamp.nanosec * 1e-9


def expected_hero(t):
    loc, rot, _, _ = SCENE.vehicle_state(t)
    return loc[0] * [0.01, -0.01, 0.01], rot[0]


class Services:
    """The replayer's services called from the probe node: one client per service for the
    whole test, which waits for its service before each call.  A reply can still be lost
    while the server has not yet discovered the client's reply reader (wait_for_service sees
    only the client's side); the calls are idempotent (seek to t, pause, resume), so one that
    gets no reply within 2 s is sent again until ``timeout``."""

    def __init__(self, ros):
        self.ros, self.clients = ros, {}

    def call(self, srv_type, name: str, request, timeout: float = 10.0):
        client = self.clients.get(name)
        if client is None:
            client = self.clients[name] = self.ros.probe.create_client(srv_type, name)
        deadline = time.monotonic() + timeout
        assert client.wait_for_service(timeout_sec=timeout), f'{name}: no such service'
        while time.monotonic() < deadline:
            future = client.call_async(request)
            if wait_until(future.done, min(2.0, max(deadline - time.monotonic(), 0.1)), 0.01):
                return future.result()
            client.remove_pending_request(future)
        return None

    def close(self) -> None:
        for client in self.clients.values():
            self.ros.probe.destroy_client(client)
        self.clients.clear()


@pytest.fixture
def services(ros):
    calls = Services(ros)
    yield calls
    calls.close()


def call_service(services, srv_type, name, request, timeout=10.0):
    return services.call(srv_type, name, request, timeout)


def seek(services, t):
    res = services.call(CarlaSeek, 'carla/seek', CarlaSeek.Request(time=t))
    assert res is not None and res.success
    return res.time


def at(collector, t, timeout=10.0):
    """The first message stamped ``t`` (header or clock)."""
    def stamp(m):
        if isinstance(m, Clock):
            return t_of(m.clock)
        if isinstance(m, (TFMessage, MarkerArray)):
            items = m.transforms if isinstance(m, TFMessage) else m.markers
            return t_of(items[0].header.stamp) if items else -1.0
        return t_of(m.header.stamp)
    return collector.wait_for(1, timeout, where=lambda m: abs(stamp(m) - t) < 1e-6)[-1]


def tf_of(msg, child):
    return [t for t in msg.transforms if t.child_frame_id == child][0]


def test_replay_state_frame_by_frame(ros, services, log_file):
    ros.start(CarlaReplayerNode, {'file': log_file, 'start_paused': True, 'publish_rate': 20.0})
    clock = ros.collect(Clock, '/clock')
    tf = ros.collect(TFMessage, '/tf', 100)
    actors = ros.collect(CarlaActorList, 'carla/actor_list')
    markers = ros.collect(MarkerArray, 'carla/markers', 50)
    lights = ros.collect(CarlaTrafficLightList, 'carla/traffic_lights')
    controls = ros.collect(CarlaVehicleControlList, 'carla/vehicle_controls')
    odom = ros.collect(Odometry, 'carla/hero/odometry')
    coll = ros.collect(CarlaCollision, 'carla/collisions', 50)

    # paused at t = 0: the first frame's world
    at(clock, 0.0)
    a0 = at(actors, 0.0)
    ids = sorted(a.id for a in a0.actors)
    assert ids == sorted([1, *SCENE.light_ids.tolist(), *SCENE.vehicle_ids.tolist(),
                          *SCENE.walker_ids.tolist(), SCENE.hero + SENSOR_OFFSET])
    hero = [a for a in a0.actors if a.id == SCENE.hero][0]
    assert hero.role_name == 'hero' and hero.frame_id == 'hero' and hero.type_name == 'vehicle'
    assert hero.has_bounding_box and hero.bounding_box_extent.x == pytest.approx(2.35)
    assert 'role_name' in hero.attribute_ids and hero.light_state == 3
    sensor = [a for a in a0.actors if a.id == SCENE.hero + SENSOR_OFFSET][0]
    assert sensor.parent_id == SCENE.hero and sensor.type == 5

    t0 = at(tf, 0.0)
    h = tf_of(t0, 'hero')
    xyz, rot = expected_hero(0.0)
    assert h.header.frame_id == 'map'
    assert [h.transform.translation.x, h.transform.translation.y, h.transform.translation.z] \
        == pytest.approx(xyz.tolist(), abs=1e-4)
    # yaw 90° (Unreal, clockwise seen from above) is −90° in REP-103:
    # q = (cos −45°, 0, 0, sin −45°)
    q = h.transform.rotation
    assert rot[2] == pytest.approx(90.0)
    assert [q.w, q.x, q.y, q.z] == pytest.approx([np.sqrt(.5), 0, 0, -np.sqrt(.5)], abs=1e-5)
    s = tf_of(t0, f'actor_{SCENE.hero + SENSOR_OFFSET}')
    assert s.header.frame_id == 'hero'                       # parent respected
    # at its spawn transform relative to the hero (CARLA records attached actors so)
    v = s.transform.translation
    assert [v.x, v.y, v.z] == pytest.approx([d * 0.01 for d in SENSOR_RELATIVE[0]], abs=1e-6)

    m0 = at(markers, 0.0)
    boxes = {m.id: m for m in m0.markers if m.ns == 'carla_actors' and m.action == Marker.ADD}
    assert set(boxes) == set(SCENE.vehicle_ids.tolist() + SCENE.walker_ids.tolist()
                             + SCENE.light_ids.tolist())
    assert boxes[SCENE.hero].type == Marker.CUBE and boxes[SCENE.hero].scale.x == \
        pytest.approx(4.7)
    assert boxes[SCENE.hero].pose.position.z == pytest.approx(xyz[2] + 0.75)
    green = SCENE.light_state(0.0)[0].tolist()
    for lid, st in zip(SCENE.light_ids.tolist(), green):   # lights drawn in their state's colour
        c = boxes[lid].color
        assert (c.r, c.g) == ({0: (1.0, 0.0), 1: (1.0, 0.8), 2: (0.0, 1.0)}[st])
    labels = [m for m in m0.markers if m.ns == 'carla_labels']
    assert any('(hero)' in m.text for m in labels)

    state, _ = SCENE.light_state(0.0)
    assert [lt.state for lt in at(lights, 0.0).lights] == state.tolist()
    assert len(at(controls, 0.0).controls) == SCENE.vehicles
    o = at(odom, 0.0)
    assert o.child_frame_id == 'hero' and o.pose.pose.position.x == pytest.approx(xyz[0])

    # interpolation as CARLA's replayer (SUPPLEMENT §5.5): t = 2.025 is halfway through the
    # frame at 2.0, so halfway from the previous frame's pose (1.95) to that frame's (2.0)
    t_mid = 2.025
    assert seek(services, t_mid) == pytest.approx(t_mid)
    h = tf_of(at(tf, t_mid), 'hero')
    a, _ = expected_hero(1.95)
    b, _ = expected_hero(2.0)
    assert [h.transform.translation.x, h.transform.translation.y] == \
        pytest.approx(((a + b) / 2)[:2].tolist(), abs=1e-4)

    # collisions: the frame of the hero's collision
    t_coll = SCENE.collision_frames()[0] / SCENE.rate
    seek(services, t_coll)
    c = coll.wait_for(2, 10.0)
    assert (c[0].actor1_id, c[0].actor2_id, c[0].actor1_is_hero) == \
        (SCENE.hero, int(SCENE.vehicle_ids[1]), True)
    assert c[1].actor2_id == 0xFFFFFFFF and c[0].actor1_blueprint == 'vehicle.tesla.model3'

    # destruction: gone from the list, its box and label deleted
    t_del = SCENE.destroy_frame / SCENE.rate
    markers.clear()
    seek(services, t_del)
    gone = at(actors, t_del)
    assert SCENE.destroyed not in [a.id for a in gone.actors]
    deleted = [m for m in markers.wait_for(1, 10.0, where=lambda arr: any(
        m.action == Marker.DELETE for m in arr.markers))[0].markers if m.action == Marker.DELETE]
    assert {(m.ns, m.id) for m in deleted} == {('carla_actors', SCENE.destroyed),
                                              ('carla_labels', SCENE.destroyed)}

    # seeking back brings the destroyed actor back
    seek(services, 1.0)
    assert SCENE.destroyed in [a.id for a in at(actors, 1.0).actors]

    # a time that is no time is refused, the replay stays where it was
    for bad in (math.nan, math.inf, -math.inf):
        res = call_service(services, CarlaSeek, 'carla/seek', CarlaSeek.Request(time=bad), 10.0)
        assert res is not None and not res.success and 'finite' in res.message
    # negative seek = from the end; resume lets the clock run
    assert seek(services, -1.0) == pytest.approx(SCENE.seconds - 1.0)
    seek(services, 3.0)
    assert call_service(services, Trigger, 'carla/resume', Trigger.Request(), 10.0).success
    clock.wait_for(1, 10.0, where=lambda m: t_of(m.clock) > 3.2)
    assert call_service(services, Trigger, 'carla/pause', Trigger.Request(), 10.0).success


def test_follow_hero_and_start_time(ros, log_file):
    ros.start(CarlaReplayerNode, {'file': log_file, 'start_paused': True, 'follow_actor': 0,
                                  'start_time': -2.0, 'actor_frame': 'carla/{type}_{id}'})
    tf = ros.collect(TFMessage, '/tf', 100)
    t = SCENE.seconds - 2.0
    msg = at(tf, t)
    root = [x for x in msg.transforms if x.header.frame_id == 'hero']
    assert {x.child_frame_id for x in root} == {'map', f'carla/sensor_{SCENE.hero + SENSOR_OFFSET}'}
    inv = [x for x in root if x.child_frame_id == 'map'][0]
    xyz, _ = expected_hero(t - 1.0 / SCENE.rate)   # at a frame's own time: the previous pose
    # hero → map is the inverse: map's origin seen from the hero is at distance |xyz|
    v = inv.transform.translation
    assert np.linalg.norm([v.x, v.y, v.z]) == pytest.approx(np.linalg.norm(xyz), abs=1e-3)
    assert any(x.child_frame_id == f'carla/vehicle_{SCENE.vehicle_ids[1]}' for x in msg.transforms)


def test_damaged_recording_replays_what_is_before_the_damage(ros, services, tmp_path):
    import io
    import struct
    buf = io.BytesIO()
    write(buf, SCENE)
    data = bytearray(buf.getvalue())
    from ros_sim_bridge.carla.codec import Recording
    rec = Recording(bytes(data))
    # frame 20: an absurd count in its Position packet; the file cut inside its last frame
    pos = [off for pid, off, size in rec.packets(20) if pid == 6][0]
    struct.pack_into('<H', data, pos, 60000)
    path = tmp_path / 'damaged.log'
    path.write_bytes(bytes(data[:int(rec.offsets[-1]) + 40]))
    ros.start(CarlaReplayerNode, {'file': str(path), 'start_paused': True})
    actors = ros.collect(CarlaActorList, 'carla/actor_list')
    at(actors, 0.0)
    last = (len(rec) - 1) / SCENE.rate                 # the cut frame's start is kept
    seek(services, 20 / SCENE.rate)
    at(actors, 20 / SCENE.rate)                         # the bad packet's frame still replays
    seek(services, 99.0)
    assert len(at(actors, last).actors) > 0
    values = ros.diagnostics('carla_replayer', lambda v: int(v.get('decode_errors', 0)) >= 2,
                             timeout=10.0)
    assert int(values['errors.truncated']) >= 2 and values['frames'] == str(len(rec))
    assert 'cut here' in values['last_error'] or 'Position' in values['last_error']


@pytest.mark.parametrize('content,text', [
    (b'', 'empty recording, no CARLA header'),
    (b'\x01\x00\x0e\x00CARLA_RECORDER\x00\x00', 'recording of 20 B is shorter than its CARLA '
                                                  'header')])
def test_empty_or_short_file_is_one_fatal_line_under_the_node_name(tmp_path, content, text):
    path = tmp_path / 'bad.log'
    path.write_bytes(content)
    out = subprocess.run([str(executable('carla_replayer')),
                          *ros_args(parameters={'file': str(path)})],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and 'Traceback' not in out.stderr, out.stderr
    fatal = [line for line in out.stderr.splitlines() if 'FATAL' in line]
    assert len(fatal) == 1, out.stderr
    assert '[carla_replayer]' in fatal[0] and 'CarlaReplayerNode' not in fatal[0]
    assert f'cannot start: {path}: ' in fatal[0] and text in fatal[0]


def only_in_frames(data: bytes, pid: int, frames: set) -> bytes:
    """The recording with packet ``pid`` left out of every frame not in ``frames`` (as CARLA
    writes event-like state, e.g. SceneLight, only when it changes)."""
    rec = Recording(data)
    out = bytearray(data[:rec.header.size])
    for i in range(len(rec)):
        start = int(rec.offsets[i])
        out += data[start:start + 29]                      # its FrameStart packet
        for p, off, size in rec.packets(i):
            if p != pid or i in frames:
                out += data[off - 5:off + size]
    return bytes(out)


KIND_TYPES = {'actor_list': ('actors', CarlaActorList), 'tf': ('tf', TFMessage),
              'markers': ('markers', MarkerArray),
              'traffic_lights': ('lights', CarlaTrafficLightList),
              'vehicle_controls': ('controls', CarlaVehicleControlList),
              'odometry': ('odometry', Odometry), 'clock': ('clock', Clock)}


def world_messages(world, t):
    """What the replayer publishes at ``t`` (its conversion, poses interpolated as it does
    below ×2), read back by rclpy."""
    _, loc, rot = world.poses(t, True)
    msgs = FrameCdr(Frames(), block=1).frame(world, seconds_to_stamp(t), (), (), (loc, rot))
    return {KIND_TYPES[k][0]: deserialize_message(bytes(d), KIND_TYPES[k][1])
            for k, d in msgs if k in KIND_TYPES}


def test_seek_rebuilds_the_world_of_a_straight_replay(tmp_path):
    """A seek to t (from before, from after, from far) gives the same actors, parents, TF,
    markers, traffic lights, controls and odometry as replaying frame by frame to t; vehicle
    lights recorded only when they change still hold after the jump."""
    buf = __import__('io').BytesIO()
    write(buf, SCENE)
    first_coll = SCENE.collision_frames()[0]
    data = only_in_frames(buf.getvalue(), 10, {0, first_coll})   # VehicleLight on change only
    rec = Recording(data)
    played = World(rec)
    coll_seen = []
    for target in sorted({first_coll + 3, SCENE.destroy_frame + 2, len(rec) - 2, 70}):
        while played.index < target:
            coll_seen += played.advance(played.index + 1).collisions
        t = float(rec.elapsed[target]) + 0.4 * float(rec.durations[target])
        expected = world_messages(played, t)
        for start in (0, target - 7, len(rec) - 1):          # near, far and backward jumps
            sought = World(rec)
            sought.advance(start)
            changes = sought.advance(rec.frame_at(t), jump=True)
            assert [c.frame for c in changes.collisions] in ([], [rec.frame_ids[target]] * 2)
            got = world_messages(sought, t)
            for name, msg in expected.items():
                assert got[name] == msg, (name, start, target)
    assert len(coll_seen) == 2 * sum(f <= len(rec) - 2 for f in SCENE.collision_frames())
    hero_light = [a.light_state for a in expected['actors'].actors if a.id == SCENE.hero]
    assert hero_light == [1 | 2 | 8]     # the brake light of the first collision holds


def test_seek_publishes_no_collision_it_jumped_over(ros, services, log_file):
    """CARLA's replayer never replays Collision packets; ours publishes those of the frames it
    replays and of the frame a seek lands in, never those of the frames a seek jumps over."""
    frames = SCENE.collision_frames()
    ros.start(CarlaReplayerNode, {'file': log_file, 'start_paused': True, 'publish_rate': 20.0})
    actors = ros.collect(CarlaActorList, 'carla/actor_list')
    coll = ros.collect(CarlaCollision, 'carla/collisions', 50)
    at(actors, 0.0)
    for t in (frames[0] - 2) / SCENE.rate, (frames[-1] + 2) / SCENE.rate:   # near and far
        seek(services, t)
        at(actors, t)
    seek(services, (frames[0] - 1) / SCENE.rate)              # backwards, over all of them
    at(actors, (frames[0] - 1) / SCENE.rate)
    assert coll.messages == []
    t_coll = frames[1] / SCENE.rate
    seek(services, t_coll)                                    # landing on a collision frame
    got = coll.wait_for(2, 10.0)
    assert [t_of(c.header.stamp) for c in got] == pytest.approx([t_coll] * len(got))
    assert len(got) == 2 and {c.collision_id for c in got} == {frames[1], frames[1] + 10000}


def test_units_and_axes_of_every_published_field():
    """SUPPLEMENT §5.4 on golden bytes (UE4, written by hand): positions cm → m with y
    flipped, rotations deg → rad with pitch and yaw flipped, Kinematics m/s and deg/s (y and
    z of the angular velocity flipped), bounding box origin (cm, actor frame) and half sizes,
    walker speed cm/s (CARLA records FWalkerControl.Speed) → m/s."""
    import math
    import struct

    def s(text):
        return struct.pack('<H', len(text)) + text.encode()

    def pk(pid, data):
        return struct.pack('<BI', pid, len(data)) + data

    def add(aid, atype, blueprint, role):
        return (struct.pack('<IB', aid, atype) + struct.pack('<6f', 0, 0, 0, 0, 0, 0)
                + struct.pack('<I', 0) + s(blueprint) + struct.pack('<H', 1) + b'\x03'
                + s('role_name') + s(role))
    body = (pk(0, struct.pack('<Qdd', 1, -1.0, 0.0))
            + pk(2, struct.pack('<H', 2) + add(7, 1, 'vehicle.audi.tt', 'hero')
                 + add(8, 2, 'walker.pedestrian.0001', ''))
            + pk(6, struct.pack('<H', 2) + struct.pack('<I6f', 7, 100, 200, 300, 0, 0, 90)
                 + struct.pack('<I6f', 8, -50, 0, 0, 0, 30, 0))
            + pk(9, struct.pack('<H', 1) + struct.pack('<If', 8, 140.0))
            + pk(12, struct.pack('<H', 1) + struct.pack('<I6f', 7, 3, 4, 0.5, 90, 180, -360))
            + pk(13, struct.pack('<H', 1) + struct.pack('<I6f', 7, 10, 20, 70, 230, 95, 75))
            + pk(1, b''))
    header = (b'\x01\x00' + s('CARLA_RECORDER') + struct.pack('<q', 0) + s('Town01'))
    world = World(Recording(header + body))
    world.advance(0)
    msgs = world_messages(world, 0.0)
    hero = [a for a in msgs['actors'].actors if a.id == 7][0]
    walker = [a for a in msgs['actors'].actors if a.id == 8][0]
    p = hero.pose.position
    assert (p.x, p.y, p.z) == pytest.approx((1.0, -2.0, 3.0))
    q = hero.pose.orientation                     # Unreal yaw +90° → −90° about +z
    assert (q.w, q.x, q.y, q.z) == pytest.approx((math.sqrt(.5), 0, 0, -math.sqrt(.5)))
    q = walker.pose.orientation                   # Unreal pitch +30° (nose up) → −30° about y
    assert (q.w, q.x, q.y, q.z) == pytest.approx((math.cos(-math.pi / 12), 0,
                                                  math.sin(-math.pi / 12), 0))
    lin, ang = hero.twist.linear, hero.twist.angular   # map frame
    assert (lin.x, lin.y, lin.z) == pytest.approx((3.0, -4.0, 0.5))
    assert (ang.x, ang.y, ang.z) == pytest.approx((math.pi / 2, -math.pi, 2 * math.pi))
    o, e = hero.bounding_box_origin, hero.bounding_box_extent
    assert (o.x, o.y, o.z) == pytest.approx((0.1, -0.2, 0.7))
    assert (e.x, e.y, e.z) == pytest.approx((2.3, 0.95, 0.75))
    assert walker.walker_speed == pytest.approx(1.4)
    odom = msgs['odometry']                        # twist in the hero's own frame (FLU)
    v = odom.twist.twist.linear                    # map (3, −4) seen from a −90° yaw: (4, 3)
    assert (v.x, v.y, v.z) == pytest.approx((4.0, 3.0, 0.5), abs=1e-6)
    box = [m for m in msgs['markers'].markers if m.ns == 'carla_actors' and m.id == 7][0]
    c = box.pose.position                          # origin rotated by the hero's yaw
    assert (c.x, c.y, c.z) == pytest.approx((1.0 - 0.2, -2.0 - 0.1, 3.7))
    assert (box.scale.x, box.scale.y, box.scale.z) == pytest.approx((4.6, 1.9, 1.5))


def test_garbage_in_the_middle_is_skipped_logged_once_and_replayed_over(ros, services, tmp_path, capfd):
    """Two regions of random bytes written over a recording: the replayer logs the damage in
    one line, counts both regions in its diagnostics (with the bytes skipped), and replays
    through them: the clock runs on past the damage and a seek after it shows the actors of
    the undamaged recording at that frame."""
    import io
    buf = io.BytesIO()
    write(buf, SCENE)
    intact = buf.getvalue()
    ra = Recording(intact)
    data = bytearray(intact)
    rng = np.random.default_rng(13)
    for frame in (len(ra) // 3, 2 * len(ra) // 3):
        pos = [start - 5 for pid, start, _ in ra.packets(frame) if pid == 6][0]
        data[pos - 50:pos + 150] = rng.integers(0, 256, 200, dtype=np.uint8).tobytes()
    path = tmp_path / 'garbage.log'
    path.write_bytes(bytes(data))
    rd = Recording(bytes(data))
    assert len(rd.damage) == 2 and rd.cut is None
    first = float(ra.elapsed[len(ra) // 3 - 2])
    after = float(ra.elapsed[2 * len(ra) // 3 + 3])
    capfd.readouterr()
    ros.start(CarlaReplayerNode, {'file': str(path), 'start_time': first, 'rate_factor': 4.0,
                                  'publish_rate': 50.0})
    clock = ros.collect(Clock, '/clock')
    clock.wait_for(1, 20.0, where=lambda m: t_of(m.clock) > after)    # replayed over both
    values = ros.diagnostics('carla_replayer',
                             lambda v: v.get('damaged_regions') == '2', timeout=10.0)
    assert values['skipped_bytes'] == str(rd.skipped_bytes) and int(values['decode_errors']) >= 2
    assert values['frames'] == str(len(rd))
    err = capfd.readouterr().err
    assert err.count('2 damaged regions') == 1, err
    assert all(f'at byte {d.offset}' in err for d in rd.damage)
    # a seek after the damage: the world of the undamaged recording at that frame
    i = 2 * len(ra) // 3 + 5
    world = World(ra)
    world.advance(i, jump=True)
    call_service(services, Trigger, 'carla/pause', Trigger.Request(), 10.0)
    t = float(ra.elapsed[i])
    seek(services, t)
    actors = ros.collect(CarlaActorList, 'carla/actor_list')
    msg = at(actors, t)
    assert sorted(a.id for a in msg.actors) == sorted(world.actors)


@pytest.mark.parametrize('sig', ['SIGINT', 'SIGTERM'])
def test_replays_with_use_sim_time_and_exits_0_on_a_stop_signal(ros, log_file, sig):
    """The replayer is the /clock source: with use_sim_time true its timer must not run on the
    ROS time it alone publishes (it would never fire).  /clock and /tf advance; a stop signal
    ends it with 0."""
    import signal
    proc = subprocess.Popen([str(executable('carla_replayer')),
                             *ros_args(parameters={'file': log_file, 'use_sim_time': True,
                                                   'rate_factor': 4.0})],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        clock = ros.collect(Clock, '/clock', 50)
        tf = ros.collect(TFMessage, '/tf', 100)
        clock.wait_for(1, 20.0, where=lambda m: t_of(m.clock) > 1.0)
        tf.wait_for(1, 10.0, where=lambda m: m.transforms
                    and t_of(m.transforms[0].header.stamp) > 1.0)
        proc.send_signal(getattr(signal, sig))
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert 'Traceback' not in err


def test_seeks_stay_within_start_and_end_time(ros, services, log_file):
    """With start_time/end_time, a seek lands within them (negative: from end_time) and the
    reply says where it went."""
    ros.start(CarlaReplayerNode, {'file': log_file, 'start_paused': True, 'start_time': 2.0,
                                  'end_time': 5.0})
    clock = ros.collect(Clock, '/clock')
    at(clock, 2.0)

    def seek_reply(t):
        res = call_service(services, CarlaSeek, 'carla/seek', CarlaSeek.Request(time=t), 10.0)
        assert res is not None and res.success
        return res
    assert seek_reply(-1.0).time == pytest.approx(4.0)        # 1 s before end_time
    assert seek_reply(3.5).time == pytest.approx(3.5)
    for asked, went in ((7.0, 5.0), (0.5, 2.0), (-6.0, 2.0)):
        res = seek_reply(asked)
        assert res.time == pytest.approx(went), asked
        assert f'at {went:.3f} s' in res.message and 'start_time..end_time' in res.message
        at(clock, went)


def test_start_after_end_is_one_fatal_line(log_file):
    out = subprocess.run([str(executable('carla_replayer')),
                          *ros_args(parameters={'file': log_file, 'start_time': 6.0,
                                                'end_time': 3.0})],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and 'Traceback' not in out.stderr, out.stderr
    fatal = [line for line in out.stderr.splitlines() if 'FATAL' in line]
    assert len(fatal) == 1 and 'start_time 6 s is after end_time 3 s' in fatal[0], out.stderr


@pytest.mark.parametrize('follow, text', [(9999, 'follow_actor 9999: no actor of that id'),
                                          (SCENE.hero, None)])
def test_follow_actor_that_never_appears_is_warned_once(ros, log_file, follow, text):
    import signal
    proc = subprocess.Popen([str(executable('carla_replayer')),
                             *ros_args(parameters={'file': log_file, 'follow_actor': follow,
                                                   'rate_factor': 4.0})],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        clock = ros.collect(Clock, '/clock', 50)
        clock.wait_for(1, 20.0, where=lambda m: t_of(m.clock) > 1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    warned = [line for line in err.splitlines() if 'follow_actor' in line]
    assert warned == ([] if text is None else warned[:1]) and len(warned) == (text is not None)
    if text:
        assert 'WARN' in warned[0] and text in warned[0]
