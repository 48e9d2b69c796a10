"""monodrive_client's output as bytes (issue #27): every data-rate type read back over real DDS
with rclpy and rosbags, compared with values worked out by hand from the sensor payloads of
SUPPLEMENT §4.4 and monoDrive's State documentation (cm → m, Unreal's left-handed axes →
REP-103: y, yaw and roll negated)."""
import json
import math
import struct

import pytest
from nav_msgs.msg import Odometry
from sensor_msgs.msg import CameraInfo, Image, Imu, NavSatFix, PointCloud2
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from cdr_readback import RawCollector, check
from conftest import free_tcp_port
from monodrive_support import NODE, ScriptedServer, params, sensor_header
from ros_sim_bridge.monodrive.ros.node import MonoDriveClientNode
from ros_sim_bridge.msg import (MonoDriveCollision, MonoDriveRadarTargets, MonoDriveRaw,
                                MonoDriveRpm, MonoDriveState, MonoDriveUltrasonic,
                                MonoDriveWaypoint)
from ros_sim_bridge.ros.qos import TF
from test_monodrive_conversions import DOC_STATE

GAME_TIME = 2.5                      # every sample's header: stamps 2 s 500 000 000 ns
STAMP = {'header.stamp.sec': 2, 'header.stamp.nanosec': 500_000_000}
D10 = math.radians(10.0)

PIXELS = bytes(range(8))                                   # 2 × 1 bgra
ANNOTATION = json.dumps([{
    'name': 'car', '2d_bounding_boxes': [{'name': 'b', '2d_bounding_box': [0, 2, 0, 1]}],
    'oriented_bounding_boxes': [{'center': {'x': 1000, 'y': -200, 'z': 75},
                                 'extents': {'x': 460, 'y': 190, 'z': 150},
                                 'orientation': {'x': 0, 'y': 0, 'z': 0, 'w': 1}}]}]).encode()
DEPTH = struct.pack('<2f', 150.0, 250.0)                   # cm, 2 × 1
SEMANTIC = bytes([3, 7, 7, 1])                             # 2 × 2 class ids
IMU = struct.pack('>B3f3fIHI', 0xC2, 1.0, 2.0, 9.75, 0.125, 0.25, 0.5, 0, 0, 0)
GPS = struct.pack('>BhhBdddfffffffHHBBH', 0x55, 0x020A, 0, 34, 40.5, -105.25, 1600.0,
                  0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2, 3, 12, 1, 0)
RPM = struct.pack('>if', 2, 812.5)
RADAR = (b'{"target_list": [{"range": 1500, "aoa": 30, "velocity": -2.5, "rcs": 10,'
         b' "target_ids": ["car_1"]}], "gt_targets": []}')
COLLISION = (b'{"name": "ego", "collision": true, "game_time": 2.5, "distance": 4.5,'
             b' "time_to_collision": 0.75, "forward_velocity": 6, "targets":'
             b' [{"name": "car_1", "distance": 4.5, "time_to_collision": 0.75}]}')
WAYPOINT = b'{"lanes": []}'
ULTRASONIC = b'{"targets": [{"range": 250}]}'
ULTRASONIC_RAW = struct.pack('<2f', 1.5, 2.5)
OTHER = b'{"a": 1}'


def lidar_packet(first_azimuth: int, distance: int) -> bytes:
    """1206 bytes (§4.4, little-endian): 12 blocks 0xFFEE, azimuths from ``first_azimuth``
    (0.01°) by 1°, only laser 0 of block 0 hit at ``distance`` (2 mm steps), reflectivity 77."""
    b = bytearray(1206)
    for block in range(12):
        struct.pack_into('<HH', b, block * 100, 0xEEFF, first_azimuth + block * 100)
    struct.pack_into('<HB', b, 4, distance, 77)
    return bytes(b)


SENSORS = {   # kind: (config extras, the messages its port sends)
    'Camera': ({'stream_dimensions': {'x': 2, 'y': 1}, 'channels': 'bgra', 'fov': 90.0},
               [PIXELS, ANNOTATION]),
    'DepthCamera': ({'stream_dimensions': {'x': 2, 'y': 1}, 'fov': 90.0}, [DEPTH]),
    'SemanticCamera': ({'stream_dimensions': {'x': 2, 'y': 2}, 'fov': 90.0}, [SEMANTIC]),
    'IMU': ({}, [IMU]), 'GPS': ({}, [GPS]), 'RPM': ({}, [RPM]), 'State': ({}, [DOC_STATE]),
    'Radar': ({}, [RADAR]), 'Collision': ({}, [COLLISION]), 'Waypoint': ({}, [WAYPOINT]),
    'Ultrasonic': ({}, [ULTRASONIC, ULTRASONIC_RAW]), 'Thermal': ({}, [OTHER]),
    'Lidar': ({'n_lasers': 16, 'horizontal_resolution': 0.4},
              [lidar_packet(0, 5000), lidar_packet(100, 0)]),
}


@pytest.fixture
def streams(ros, tmp_path):
    """One scripted sensor server per kind, each sending its messages with 16-byte headers
    (game time 2.5 s, sample count 1) once its client connects."""
    servers, config = {}, []
    for kind, (extra, messages) in SENSORS.items():
        def send(conn, stop, messages=messages):
            for body in messages:
                conn.sendall(sensor_header(len(body), GAME_TIME, 1) + body)
            stop.wait(30.0)
        servers[kind] = ScriptedServer(send)
        config.append({'type': kind, 'listen_port': servers[kind].port,
                       'description': kind.lower(), **extra})
    path = tmp_path / 'sensors.json'
    path.write_text(json.dumps(config))
    yield path, {k: s.port for k, s in servers.items()}
    for s in servers.values():
        s.stop()


def test_every_published_type_reads_back_with_rclpy_and_rosbags(ros, streams):
    path, ports = streams
    topics = {
        'image': (Image, 'camera/image'), 'info': (CameraInfo, 'camera/camera_info'),
        'annotations': (MarkerArray, 'camera/annotations'),
        'depth': (Image, 'depthcamera/depth'), 'semantic': (Image, 'semanticcamera/semantic'),
        'imu': (Imu, 'imu/imu'), 'fix': (NavSatFix, 'gps/fix'), 'rpm': (MonoDriveRpm, 'rpm/rpm'),
        'state': (MonoDriveState, 'state'), 'boxes': (MarkerArray, 'state/markers'),
        'odom': (Odometry, 'vehicles/compact_monoDrive_01_2/odom'),
        'cone_odom': (Odometry, 'vehicles/Misc_TrafficCone_2/odom'),
        'targets': (MonoDriveRadarTargets, 'radar/targets'),
        'radar_markers': (MarkerArray, 'radar/markers'),
        'collision': (MonoDriveCollision, 'collision/collision'),
        'waypoint': (MonoDriveWaypoint, 'waypoint/waypoint'),
        'ultrasonic': (MonoDriveUltrasonic, 'ultrasonic/ultrasonic'),
        'points': (PointCloud2, 'lidar/points')}
    got = {k: RawCollector(ros, t, f'monodrive/{name}', matched=False)
           for k, (t, name) in topics.items()}
    tf = RawCollector(ros, TFMessage, '/tf', TF, matched=False)
    raw = RawCollector(ros, MonoDriveRaw, f'{NODE}/raw', matched=False)
    ros.start(MonoDriveClientNode, params(free_tcp_port(), sensors_config=str(path),
                                          stamp_source='sim'))

    def first(key, timeout=20.0):
        return got[key].wait_for(1, timeout)[0]

    optical = {'header.frame_id': 'monodrive/camera_optical', **STAMP}
    check(first('image'), Image, dict(optical, height=1, width=2, encoding='bgra8',
                                      is_bigendian=0, step=8, data=list(PIXELS)))
    # fx = width / (2 tan(fov / 2)) = 1 px; principal point at the image centre (1, 0.5)
    check(first('info'), CameraInfo, dict(
        optical, height=1, width=2, distortion_model='plumb_bob', d=[0.0] * 5,
        k=[1.0, 0.0, 1.0, 0.0, 1.0, 0.5, 0.0, 0.0, 1.0],
        r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        p=[1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0]))
    # 2-D box x 0…2, y 0…1 px, 1 m ahead: x −1…1, y −0.5…0.5 m; the label 3 cm above; the
    # oriented box at (10, 2, 0.75) m, full size 4.6 × 1.9 × 1.5 m
    x0, x1, y0, y1 = -1.0, 1.0, -0.5, 0.5
    check(first('annotations'), MarkerArray, {
        'markers.0.header.frame_id': 'monodrive/camera_optical',
        'markers.0.header.stamp.sec': 2, 'markers.0.ns': 'monodrive_annotation_2d',
        'markers.0.type': Marker.LINE_STRIP, 'markers.0.scale.x': 0.004,
        'markers.0.pose.orientation.w': 1.0,
        'markers.0.points.0.x': x0, 'markers.0.points.0.y': y0, 'markers.0.points.0.z': 1.0,
        'markers.0.points.2.x': x1, 'markers.0.points.2.y': y1, 'markers.0.points.4.x': x0,
        'markers.0.color.r': 1.0, 'markers.0.color.g': 0.9,
        'markers.1.ns': 'monodrive_annotation_labels', 'markers.1.text': 'car',
        'markers.1.type': Marker.TEXT_VIEW_FACING, 'markers.1.pose.position.x': 0.0,
        'markers.1.pose.position.y': -0.53, 'markers.1.scale.z': 0.04,
        'markers.2.ns': 'monodrive_annotation_3d', 'markers.2.header.frame_id': 'map',
        'markers.2.type': Marker.CUBE, 'markers.2.pose.position.x': 10.0,
        'markers.2.pose.position.y': 2.0, 'markers.2.pose.position.z': 0.75,
        'markers.2.pose.orientation.w': 1.0, 'markers.2.scale.x': 4.6,
        'markers.2.scale.y': 1.9, 'markers.2.scale.z': 1.5}, abs=1e-6)
    depth = first('depth')
    check(depth, Image, {'header.frame_id': 'monodrive/depthcamera_optical', **STAMP,
                         'height': 1, 'width': 2, 'encoding': '32FC1', 'step': 8})
    from rclpy.serialization import deserialize_message
    metres = struct.unpack('<2f', bytes(deserialize_message(depth, Image).data))
    assert metres == pytest.approx((1.5, 2.5), rel=1e-6)
    check(first('semantic'), Image, {'height': 2, 'width': 2, 'encoding': 'mono8', 'step': 2,
                                     'data': list(SEMANTIC), **STAMP})
    # Unreal (x, y, z) → (x, −y, z); angular velocity (x, −y, −z) (§5.4)
    check(first('imu'), Imu, {'header.frame_id': 'monodrive/imu', **STAMP,
                              'linear_acceleration.x': 1.0, 'linear_acceleration.y': -2.0,
                              'linear_acceleration.z': 9.75, 'angular_velocity.x': 0.125,
                              'angular_velocity.y': -0.25, 'angular_velocity.z': -0.5,
                              'orientation_covariance': [-1.0] + [0.0] * 8,
                              'orientation.w': 1.0}, abs=1e-6)
    check(first('fix'), NavSatFix, {'header.frame_id': 'monodrive/gps', **STAMP,
                                    'latitude': 40.5, 'longitude': -105.25, 'altitude': 1600.0,
                                    'status.status': 0, 'status.service': 1,
                                    'position_covariance': [4.0, 0, 0, 0, 4.0, 0, 0, 0, 9.0],
                                    'position_covariance_type': 2})
    check(first('rpm'), MonoDriveRpm, {'header.frame_id': 'monodrive/rpm', **STAMP,
                                       'wheel_number': 2, 'speed': 812.5})

    # the State documentation's frame: the compact car (ego) and the traffic cone
    n = math.sqrt(0.0343129225075245 ** 2 + 0.000261345121543854 ** 2
                  + 0.0231100562959909 ** 2 + 0.999143958091736 ** 2)
    car_q = (0.000261345121543854 / n, -0.0231100562959909 / n, -0.999143958091736 / n,
             0.0343129225075245 / n)                              # x, y, z, w in REP-103
    car_p = (83.02064453125, -42.8283154296875, 0.0668744659423828)
    cone_p = (122.0, -37.1, 0.1)
    pose = lambda at, p, q: {f'{at}.position.{c}': v for c, v in zip('xyz', p)} | {  # noqa
        f'{at}.orientation.{c}': v for c, v in zip('xyzw', q)}
    check(first('state'), MonoDriveState, {
        'header.frame_id': 'map', **STAMP, 'game_time': 2.5, 'sample_count': 1,
        'vehicles.0.name': 'compact_monoDrive_01_2', 'vehicles.0.tags': ['vehicle', 'ego'],
        'vehicles.0.is_object': False, **pose('vehicles.0.pose', car_p, car_q),
        'vehicles.0.twist.linear.x': 0.0, 'objects.0.name': 'Misc_TrafficCone_2',
        'objects.0.tags': ['cone'], 'objects.0.is_object': True,
        **pose('objects.0.pose', cone_p, (0.0, 0.0, 0.0, 1.0))}, abs=1e-12)
    check(first('odom'), Odometry, {
        'header.frame_id': 'map', **STAMP, 'child_frame_id': 'ego/base_link',
        **pose('pose.pose', car_p, car_q), 'twist.twist.linear.x': 0.0,
        'pose.covariance': [0.0] * 36}, abs=1e-12)
    check(first('cone_odom'), Odometry, {
        'child_frame_id': 'Misc_TrafficCone_2/base_link', **pose('pose.pose', cone_p,
                                                                  (0.0, 0.0, 0.0, 1.0))})
    check(tf.wait_for(1, 10.0)[0], TFMessage, {
        'transforms.0.header.frame_id': 'map', 'transforms.0.header.stamp.sec': 2,
        'transforms.0.child_frame_id': 'ego/base_link',
        'transforms.0.transform.translation.x': car_p[0],
        'transforms.0.transform.rotation.z': car_q[2],
        'transforms.1.child_frame_id': 'Misc_TrafficCone_2/base_link',
        'transforms.1.transform.translation.y': cone_p[1]}, abs=1e-12)
    m = math.sqrt(0.508013129234314 ** 2 + 0.53005838394165 ** 2 + 0.467878460884094 ** 2
                  + 0.49198642373085 ** 2)
    check(first('boxes'), MarkerArray, {
        'markers.0.header.frame_id': 'map', 'markers.0.header.stamp.nanosec': 500_000_000,
        'markers.0.ns': 'monodrive_boxes', 'markers.0.id': 0, 'markers.0.type': Marker.CUBE,
        'markers.0.text': 'compact_monoDrive_01_2', 'markers.0.lifetime.nanosec': 500_000_000,
        **pose('markers.0.pose', (83.018271484375, -42.781474609375, 0.969822463989258),
               (-0.53005838394165 / m, 0.467878460884094 / m, -0.49198642373085 / m,
                0.508013129234314 / m)),
        'markers.0.scale.x': 1.80120330810547, 'markers.0.scale.y': 1.41698760986328,
        'markers.0.scale.z': 4.15024993896484, 'markers.0.color.g': 0.8,
        'markers.1.id': 16, 'markers.1.text': 'Misc_TrafficCone_2',
        **pose('markers.1.pose', (121.999521484375, -37.1002758789062, 0.372839050292969),
               (0.0, 0.0, 0.0, 1.0)),
        'markers.1.scale.z': 0.64438591003418, 'markers.1.color.r': 0.9}, abs=1e-6)

    # radar: range 1500 cm = 15 m, aoa 30° right (Unreal) = −π/6 rad (REP-103)
    check(first('targets'), MonoDriveRadarTargets, {
        'header.frame_id': 'monodrive/radar', **STAMP, 'targets.0.range': 15.0,
        'targets.0.aoa': -math.pi / 6, 'targets.0.velocity': -2.5, 'targets.0.rcs': 10.0,
        'targets.0.target_ids': ['car_1'], 'gt_targets': []}, abs=1e-6)
    check(first('radar_markers'), MarkerArray, {
        'markers.0.header.frame_id': 'monodrive/radar', 'markers.0.ns': 'monodrive_radar',
        'markers.0.type': Marker.SPHERE, 'markers.0.pose.position.x': 15 * math.cos(math.pi / 6),
        'markers.0.pose.position.y': -7.5, 'markers.0.scale.x': 0.5,
        'markers.0.color.r': 1.0, 'markers.0.color.a': 0.8,
        'markers.0.lifetime.nanosec': 200_000_000}, abs=1e-5)
    check(first('collision'), MonoDriveCollision, {
        'header.frame_id': 'monodrive/collision', **STAMP, 'name': 'ego', 'collision': True,
        'game_time': 2.5, 'distance': 4.5, 'time_to_collision': 0.75, 'forward_velocity': 6.0,
        'target_names': ['car_1'], 'target_distances': [4.5],
        'target_time_to_collision': [0.75], 'json': COLLISION.decode()})
    check(first('waypoint'), MonoDriveWaypoint, {'header.frame_id': 'monodrive/waypoint',
                                                 **STAMP, 'json': WAYPOINT.decode()})
    us = got['ultrasonic'].wait_for(2, 10.0)
    check(us[0], MonoDriveUltrasonic, {'header.frame_id': 'monodrive/ultrasonic', **STAMP,
                                       'ranges': [2.5], 'json': ULTRASONIC.decode(), 'raw': []})
    check(us[1], MonoDriveUltrasonic, {'ranges': [], 'json': '', 'raw': [1.5, 2.5]})
    other = [r for r in raw.wait_for(1, 10.0)]
    check(other[0], MonoDriveRaw, {'header.frame_id': '', **STAMP, 'source': 'Thermal',
                                   'port': ports['Thermal'], 'type': '', 'game_time': 2.5,
                                   'sample_count': 1, 'json': OTHER.decode(), 'data': []})
    # lidar: one return of laser 0 (elevation −10°, ring 0) at azimuth 0°, 5000 × 2 mm = 10 m:
    # x = d cos ω cos α, y = −d cos ω sin α, z = d sin ω
    cloud = first('points')
    check(cloud, PointCloud2, {
        'header.frame_id': 'monodrive/lidar', **STAMP, 'height': 1, 'width': 1,
        'fields.0.name': 'x', 'fields.0.offset': 0, 'fields.0.datatype': 7,
        'fields.0.count': 1, 'fields.3.name': 'intensity', 'fields.4.name': 'ring',
        'fields.4.offset': 16, 'fields.4.datatype': 4, 'is_bigendian': False,
        'point_step': 18, 'row_step': 18, 'is_dense': True})   # packed: 4 × f4 + u2
    x, y, z, intensity, ring = struct.unpack_from(
        '<4fH', bytes(deserialize_message(cloud, PointCloud2).data))
    assert (x, y, z) == pytest.approx((10 * math.cos(D10), 0.0, -10 * math.sin(D10)),
                                      abs=1e-5)
    assert (intensity, ring) == (77.0, 0)
