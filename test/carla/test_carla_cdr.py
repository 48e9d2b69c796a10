"""carla_replayer's output as bytes (issue #27): every type it publishes, read back over real
DDS as raw CDR and decoded by rclpy and by rosbags, compared field by field with values worked
out by hand from a recording written here byte by byte (SUPPLEMENT §5.2–5.4: cm → m with y
flipped, pitch and yaw senses flipped, deg/s → rad/s, half sizes, cm/s → m/s)."""
import math
import struct

import pytest
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.carla.ros.node import CarlaReplayerNode
from ros_sim_bridge.msg import (CarlaActorList, CarlaCollision, CarlaTrafficLightList,
                                CarlaVehicleControlList)
from ros_sim_bridge.ros.qos import TF
from ros_sim_bridge.srv import CarlaSeek

from cdr_readback import RawCollector, check
from test_carla_node import services  # noqa: F401 (fixture)

S2 = math.sqrt(0.5)
HERO, WALKER, LIGHT, SENSOR = 7, 8, 9, 10


def s(text: str) -> bytes:
    return struct.pack('<H', len(text)) + text.encode()


def packet(pid: int, data: bytes) -> bytes:
    return struct.pack('<BI', pid, len(data)) + data


def records(fmt: str, rows) -> bytes:
    return struct.pack('<H', len(rows)) + b''.join(struct.pack('<' + fmt, *r) for r in rows)


def add(aid, atype, blueprint, location, attributes=()):
    """EventAdd record: u32 id, u8 type, location, rotation (UE4: 3 × f32 each), u32 uid,
    blueprint, u16 n, n × (u8 type, id, value)."""
    return (struct.pack('<IB', aid, atype) + struct.pack('<6f', *location, 0, 0, 0)
            + struct.pack('<I', 0) + s(blueprint) + struct.pack('<H', len(attributes))
            + b''.join(bytes([t]) + s(k) + s(v) for t, k, v in attributes))


def recording() -> bytes:
    """Two frames of 50 ms: a hero vehicle (7) with a bounding box, kinematics, lights and
    controls; a walker (8); a traffic light (9, green, its times); a sensor (10) attached to
    the hero 1 m ahead, 2.8 m up; the hero hitting the walker (collision 1) in frame 0."""
    header = b'\x01\x00' + s('CARLA_RECORDER') + struct.pack('<q', 0) + s('Town01')
    body = b''
    for frame, elapsed in ((0, 0.0), (1, 0.05)):
        body += packet(0, struct.pack('<Qdd', frame + 1, 0.05 if frame == 0 else -1.0,
                                      elapsed))
        if frame == 0:
            adds = [add(HERO, 1, 'vehicle.audi.tt', (0, 0, 0), [(3, 'role_name', 'hero')]),
                    add(WALKER, 2, 'walker.pedestrian.0001', (0, 0, 0)),
                    add(LIGHT, 3, 'traffic.traffic_light', (1000, -800, 0)),
                    add(SENSOR, 5, 'sensor.other.collision', (100, 0, 280))]
            body += packet(2, struct.pack('<H', len(adds)) + b''.join(adds))
            body += packet(4, records('II', [(SENSOR, HERO)]))
            body += packet(5, records('III??', [(1, HERO, WALKER, True, False)]))
        body += packet(6, records('I6f', [(HERO, 100, 200, 300, 0, 0, 90),
                                          (WALKER, -50, 0, 0, 0, 30, 0)]))
        body += packet(7, records('I?fB', [(LIGHT, False, 2.5, 2)]))
        body += packet(8, records('I3f?i', [(HERO, 0.25, 0.5, 0.0, False, 3)]))
        body += packet(9, records('If', [(WALKER, 140.0)]))
        body += packet(10, records('II', [(HERO, 1 | 2)]))
        body += packet(12, records('I6f', [(HERO, 3, 4, 0.5, 90, 180, -360)]))
        body += packet(13, records('I6f', [(HERO, 10, 20, 70, 230, 95, 75)]))
        body += packet(16, records('I3f', [(LIGHT, 10.0, 3.0, 2.0)]))
        body += packet(1, b'')
    return header + body


@pytest.fixture
def log_file(tmp_path):
    path = tmp_path / 'handmade.log'
    path.write_bytes(recording())
    return str(path)


def xyz(prefix, x, y, z) -> dict:
    return {f'{prefix}.x': x, f'{prefix}.y': y, f'{prefix}.z': z}


def quat(prefix, w, x, y, z) -> dict:
    return {f'{prefix}.w': w, f'{prefix}.x': x, f'{prefix}.y': y, f'{prefix}.z': z}


# the hero: (100, 200, 300) cm → (1, −2, 3) m; Unreal yaw +90° → −90° about +z
HERO_POSE = {**xyz('position', 1.0, -2.0, 3.0), **quat('orientation', S2, 0.0, 0.0, -S2)}
# the walker: pitch +30° (nose up) → −30° about y
C15, S15 = math.cos(math.radians(-15)), math.sin(math.radians(-15))
WALKER_POSE = {**xyz('position', -0.5, 0.0, 0.0), **quat('orientation', C15, 0.0, S15, 0.0)}
LIGHT_POSE = {**xyz('position', 10.0, 8.0, 0.0), **quat('orientation', 1.0, 0.0, 0.0, 0.0)}


def under(prefix: str, values: dict) -> dict:
    return {f'{prefix}.{k}': v for k, v in values.items()}


def stamp_of(prefix: str = 'header') -> dict:
    return {f'{prefix}.stamp.sec': 0, f'{prefix}.stamp.nanosec': 0,
            f'{prefix}.frame_id': 'map'}


def test_every_published_type_reads_back_with_rclpy_and_rosbags(ros, services, log_file):
    ros.start(CarlaReplayerNode, {'file': log_file, 'start_paused': True,
                                  'publish_rate': 20.0})
    pre = 'carla/'
    topics = {name: RawCollector(ros, t, pre + name) for name, t in (
        ('actor_list', CarlaActorList), ('markers', MarkerArray),
        ('traffic_lights', CarlaTrafficLightList), ('vehicle_controls', CarlaVehicleControlList),
        ('hero/odometry', Odometry), ('collisions', CarlaCollision),
        ('collision_markers', MarkerArray))}
    clock = RawCollector(ros, Clock, '/clock')
    tf = RawCollector(ros, TFMessage, '/tf', TF)
    # the collision of frame 0 is published when a seek lands on it (now, all matched)
    res = services.call(CarlaSeek, 'carla/seek', CarlaSeek.Request(time=0.0))
    assert res is not None and res.success

    check(clock.wait_for(1)[-1], Clock, {'clock.sec': 0, 'clock.nanosec': 0})

    check(tf.wait_for(1)[-1], TFMessage, {
        **stamp_of('transforms.0.header'), 'transforms.0.child_frame_id': 'hero',
        **xyz('transforms.0.transform.translation', 1.0, -2.0, 3.0),
        **quat('transforms.0.transform.rotation', S2, 0.0, 0.0, -S2),
        'transforms.1.child_frame_id': 'actor_8',
        **under('transforms.1.transform', {
            **xyz('translation', -0.5, 0.0, 0.0), **quat('rotation', C15, 0.0, S15, 0.0)}),
        'transforms.2.child_frame_id': 'actor_9',
        **xyz('transforms.2.transform.translation', 10.0, 8.0, 0.0),
        # the sensor relative to its parent: its spawn transform (the hero's frame)
        'transforms.3.header.frame_id': 'hero', 'transforms.3.child_frame_id': 'actor_10',
        **xyz('transforms.3.transform.translation', 1.0, 0.0, 2.8),
        **quat('transforms.3.transform.rotation', 1.0, 0.0, 0.0, 0.0)}, abs=1e-6)

    check(topics['actor_list'].wait_for(1)[-1], CarlaActorList, {
        **stamp_of(), 'actors.0.id': HERO, 'actors.0.type': 1, 'actors.0.type_name': 'vehicle',
        'actors.0.blueprint': 'vehicle.audi.tt', 'actors.0.role_name': 'hero',
        'actors.0.frame_id': 'hero', 'actors.0.parent_id': 0, 'actors.0.spawn_time': 0.0,
        'actors.0.attribute_types': [3], 'actors.0.attribute_ids': ['role_name'],
        'actors.0.attribute_values': ['hero'], **under('actors.0.pose', HERO_POSE),
        'actors.0.has_bounding_box': True,
        **xyz('actors.0.bounding_box_origin', 0.1, -0.2, 0.7),
        **xyz('actors.0.bounding_box_extent', 2.3, 0.95, 0.75),
        # Kinematics: m/s (x, −y, z); deg/s → rad/s (x, −y, −z)
        **xyz('actors.0.twist.linear', 3.0, -4.0, 0.5),
        **xyz('actors.0.twist.angular', math.pi / 2, -math.pi, 2 * math.pi),
        'actors.0.light_state': 3, 'actors.1.id': WALKER, 'actors.1.type_name': 'walker',
        **under('actors.1.pose', WALKER_POSE), 'actors.1.walker_speed': 1.4,
        'actors.1.has_bounding_box': False, 'actors.2.id': LIGHT,
        'actors.2.type_name': 'traffic_light', **under('actors.2.pose', LIGHT_POSE),
        'actors.3.id': SENSOR, 'actors.3.parent_id': HERO, 'actors.3.frame_id': 'actor_10',
        # the sensor in the map frame: 1 m ahead of the hero (facing −y), 2.8 m above it
        **xyz('actors.3.pose.position', 1.0, -3.0, 5.8)}, abs=1e-6)

    # boxes (hero, walker, light; the sensor's type is not drawn), then their labels
    check(topics['markers'].wait_for(1)[-1], MarkerArray, {
        **stamp_of('markers.0.header'), 'markers.0.ns': 'carla_actors', 'markers.0.id': HERO,
        'markers.0.type': 1, 'markers.0.action': 0,
        # centre: the pose ⊕ the box origin (0.1, −0.2, 0.7) turned by the hero's −90° yaw
        **xyz('markers.0.pose.position', 0.8, -2.1, 3.7),
        **quat('markers.0.pose.orientation', S2, 0.0, 0.0, -S2),
        **xyz('markers.0.scale', 4.6, 1.9, 1.5),
        'markers.0.color.r': 0.1, 'markers.0.color.g': 0.9, 'markers.0.color.b': 0.2,
        'markers.0.color.a': 0.8,
        'markers.1.id': WALKER, **xyz('markers.1.scale', 0.5, 0.5, 1.8),
        **xyz('markers.1.pose.position', -0.5, 0.0, 0.0), 'markers.1.color.r': 1.0,
        'markers.1.color.g': 0.6, 'markers.1.color.b': 0.0,
        # the light green (its state), its box standing on its position
        'markers.2.id': LIGHT, **xyz('markers.2.pose.position', 10.0, 8.0, 2.5),
        **xyz('markers.2.scale', 0.6, 0.6, 5.0), 'markers.2.color.r': 0.0,
        'markers.2.color.g': 1.0, 'markers.2.color.b': 0.0,
        'markers.3.ns': 'carla_labels', 'markers.3.id': HERO, 'markers.3.type': 9,
        'markers.3.text': '7 vehicle.audi.tt (hero)', 'markers.3.scale.z': 0.6,
        **xyz('markers.3.pose.position', 0.8, -2.1, 3.7 + 0.75 + 0.5),
        'markers.4.text': '8 walker.pedestrian.0001', 'markers.5.text': '9 traffic.traffic_light',
        'markers.5.color.a': 1.0}, abs=1e-6)

    check(topics['traffic_lights'].wait_for(1)[-1], CarlaTrafficLightList, {
        **stamp_of(), 'lights.0.id': LIGHT, 'lights.0.state': 2, 'lights.0.state_name': 'green',
        'lights.0.frozen': False, 'lights.0.elapsed_in_state': 2.5, 'lights.0.green_time': 10.0,
        'lights.0.yellow_time': 3.0, 'lights.0.red_time': 2.0,
        **under('lights.0.pose', LIGHT_POSE)}, abs=1e-6)

    check(topics['vehicle_controls'].wait_for(1)[-1], CarlaVehicleControlList, {
        **stamp_of(), 'controls.0.id': HERO, 'controls.0.steering': 0.25,
        'controls.0.throttle': 0.5, 'controls.0.brake': 0.0, 'controls.0.handbrake': False,
        'controls.0.gear': 3})

    # the twist in the hero's own frame: map (3, −4) seen from a −90° yaw is (4, 3)
    check(topics['hero/odometry'].wait_for(1)[-1], Odometry, {
        **stamp_of(), 'child_frame_id': 'hero', **under('pose.pose', HERO_POSE),
        **xyz('twist.twist.linear', 4.0, 3.0, 0.5),
        **xyz('twist.twist.angular', math.pi, math.pi / 2, 2 * math.pi),
        'pose.covariance': [0.0] * 36, 'twist.covariance': [0.0] * 36}, abs=1e-6)

    check(topics['collisions'].wait_for(1)[-1], CarlaCollision, {
        **stamp_of(), 'collision_id': 1, 'actor1_id': HERO, 'actor2_id': WALKER,
        'actor1_is_hero': True, 'actor2_is_hero': False,
        'actor1_blueprint': 'vehicle.audi.tt', 'actor2_blueprint': 'walker.pedestrian.0001'})

    # a red sphere (3 m, one second) on each actor of the collision: ids 2·id and 2·id + 1
    check(topics['collision_markers'].wait_for(1)[-1], MarkerArray, {
        **stamp_of('markers.0.header'), 'markers.0.ns': 'carla_collisions', 'markers.0.id': 2,
        'markers.0.type': 2, 'markers.0.action': 0,
        **xyz('markers.0.pose.position', 1.0, -2.0, 3.0), 'markers.0.pose.orientation.w': 1.0,
        **xyz('markers.0.scale', 3.0, 3.0, 3.0), 'markers.0.color.r': 1.0,
        'markers.0.color.g': 0.1, 'markers.0.color.a': 0.7, 'markers.0.lifetime.sec': 1,
        'markers.1.id': 3, **xyz('markers.1.pose.position', -0.5, 0.0, 0.0)}, abs=1e-6)
