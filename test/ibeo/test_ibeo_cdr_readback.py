"""The ibeo node's output as bytes (issue #27): every type it publishes at data rate — LUX
points, scan info, objects, markers, vehicle state and twist; ECU points, scan info, objects,
markers, vehicle odometry, fixes, twists, IMU, odometry, images, CAN frames, time references —
read back over real DDS as raw CDR, decoded by rclpy and by rosbags (test/cdr_readback.py) and
compared with values worked out from the spec's units (cm → m, ticks → rad, rad → deg, NTP64
→ stamps), not from our encoder."""
from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import CompressedImage, Image, Imu, NavSatFix, PointCloud2, TimeReference
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core.ntp import unix_ns_to_ntp64
from ros_sim_bridge.ibeo.codec import gps_imu as gi
from ros_sim_bridge.ibeo.codec import image as im
from ros_sim_bridge.ibeo.codec import objects_ecu as oe
from ros_sim_bridge.ibeo.codec import odometry as od
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan_ecu as se
from ros_sim_bridge.ibeo.codec import vehicle_state_ecu as ve
from ros_sim_bridge.ibeo.codec.can_message import CanMessage
from ros_sim_bridge.ibeo.codec.time_record import TimeRecord
from ros_sim_bridge.ibeo.ros.ecu_node import IbeoEcuNode
from ros_sim_bridge.msg import (IbeoCanMessage, IbeoObjectList, IbeoOdometry, IbeoScanInfo,
                                LuxObjectList, LuxScanInfo, LuxVehicleState)
from ros_sim_bridge.ros.pointcloud import from_pointcloud2
from rclpy.serialization import deserialize_message

import cdr_readback
import pytest
from cdr_readback import RawCollector
from ibeo_readback import readback
from ros_sim_bridge.ros.bag import type_name
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage
from conftest import free_tcp_port, wait_until
from test_lux_node import (RAW, SENSOR_NS, connected_sensor, node_topic, object_list_msg,
                           points, scan_msg, vehicle_msg)

FAST = {'diagnostics_period': 0.2, 'min_backoff': 0.05, 'max_backoff': 0.25}
T_NS = 1_750_000_000_250_000_000                  # a record time (2025), 0.25 s into a second
T_NTP = unix_ns_to_ntp64(T_NS)
STAMP = {'header.stamp.sec': T_NS // 10**9, 'header.stamp.nanosec': T_NS % 10**9}
CM = 0.01


def check(raw: bytes, msg_type, expected: dict, *, abs: float = 1e-9) -> None:
    """:func:`cdr_readback.check` for messages that may hold NaN (object fields not sent,
    invalid velocities; its round trip compares messages with ==, NaN unequal to itself): the
    same byte checks and rosbags' decoding equal to rclpy's field by field
    (:func:`ibeo_readback.readback`), then every dotted path of ``expected``."""
    msg = readback(CdrMessage(type_name(msg_type), (raw,)))
    for path, want in expected.items():
        got = cdr_readback._get(msg, path)
        if isinstance(want, (list, tuple)):
            assert list(got) == pytest.approx(list(want), abs=abs), path
        elif isinstance(want, float):
            assert got == pytest.approx(want, abs=abs), path
        else:
            assert got == want, f'{path}: {got!r} != {want!r}'


def lux_node(ros, **params):
    from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode
    port = free_tcp_port()
    return ros.start(IbeoLuxNode, {'port': port, **RAW, 'stamp_source': 'sensor', **params}), \
        port


def test_lux_points_and_scan_info_read_back(ros, closing):
    node, port = lux_node(ros)
    clouds = RawCollector(ros, PointCloud2, node_topic(node, 'points'))
    infos = RawCollector(ros, LuxScanInfo, node_topic(node, 'scan_info'))
    sensor = connected_sensor(port, closing)
    pts = points([(3, 0, 0, 0, 1000, 150),                 # layer 3 (+1.2°), ahead, 10 m
                  (0, 1, 0, 2880, 2000, 30)])               # layer 0 (−1.2°), 90° left, 20 m
    sensor.send(scan_msg(pts, 7, mounting_yaw_ticks=320, mounting_x_cm=150,
                         mounting_z_cm=-20))
    e3, e0 = math.radians(1.2), math.radians(-1.2)
    sensor_stamp = {'header.stamp.sec': SENSOR_NS // 10**9,
                    'header.stamp.nanosec': SENSOR_NS % 10**9}
    raw = clouds.wait_for(1)[0]
    check(raw, PointCloud2, {**sensor_stamp, 'header.frame_id': 'laser', 'height': 1,
                             'width': 2, 'point_step': 24, 'row_step': 48,
                             'is_bigendian': False, 'is_dense': True,
                             'fields.5.name': 'layer', 'fields.5.offset': 20})
    cloud = from_pointcloud2(deserialize_message(raw, PointCloud2))
    assert np.allclose([cloud['x'][0], cloud['y'][0], cloud['z'][0]],
                       [10 * math.cos(e3), 0.0, 10 * math.sin(e3)], atol=1e-5)
    assert np.allclose([cloud['x'][1], cloud['y'][1], cloud['z'][1]],
                       [0.0, 20 * math.cos(e0), 20 * math.sin(e0)], atol=1e-4)
    assert cloud['echo_width'].tolist() == pytest.approx([1.5, 0.3], rel=1e-6)
    assert (cloud['layer'].tolist(), cloud['echo'].tolist()) == ([3, 0], [0, 1])
    check(infos.wait_for(1)[0], LuxScanInfo, {
        **sensor_stamp, 'header.frame_id': 'laser', 'device_id': 3, 'scan_number': 7,
        'scanner_status': 0x030B, 'scanner_status_names': ['motor_on', 'laser_on',
                                                          'set_frequency_reached',
                                                          'epw_compensation_on',
                                                          'system_compensation_on'],
        'scan_start_ntp': unix_ns_to_ntp64(SENSOR_NS),
        'scan_duration': 0.08, 'angle_ticks_per_rotation': 11520,
        'start_angle': math.radians(1600 / 32), 'end_angle': math.radians(-1920 / 32),
        'scan_points': 2, 'published_points': 2, 'mounting_yaw': math.radians(10.0),
        'mounting_x': 1.5, 'mounting_z': -0.2, 'mirror_side': 0, 'upside_down': False,
        'eight_layer': False, 'beam_tilt': 0.0, 'flag_names': []}, abs=1e-6)


def test_lux_objects_markers_vehicle_state_and_twist_read_back(ros, closing):
    node, port = lux_node(ros)
    objects = RawCollector(ros, LuxObjectList, node_topic(node, 'objects'))
    markers = RawCollector(ros, MarkerArray, node_topic(node, 'objects/markers'))
    states = RawCollector(ros, LuxVehicleState, node_topic(node, 'vehicle_state'))
    twists = RawCollector(ros, TwistStamped, node_topic(node, 'vehicle_state/twist'))
    sensor = connected_sensor(port, closing)
    sensor.send(object_list_msg([
        (5, 5, (10.0, -2.0), (4.5, 1.8), math.radians(30.0), (3.0, -1.5),
         [(8.0, -1.0), (9.0, -3.0)]),
        (9, 12, (4.0, 3.0), (1.2, 0.6), 0.0, None, [(3.5, 2.75)])]))
    sensor.send(vehicle_msg(0, 12.5, 0.25))
    check(objects.wait_for(1)[0], LuxObjectList, {
        'header.frame_id': 'laser', 'device_id': 0, 'scan_start_ntp': unix_ns_to_ntp64(
            SENSOR_NS),
        'objects.0.id': 5, 'objects.0.age': 10, 'objects.0.classification': 5,
        'objects.0.classification_name': 'car', 'objects.0.box_center_x': 10.0,
        'objects.0.box_center_y': -2.0, 'objects.0.box_size_x': 4.5,
        'objects.0.box_size_y': 1.8, 'objects.0.box_orientation': math.radians(30.0),
        'objects.0.absolute_velocity_valid': True, 'objects.0.absolute_velocity_x': 3.0,
        'objects.0.absolute_velocity_y': -1.5, 'objects.0.relative_velocity_valid': False,
        'objects.0.reference_x': 10.0, 'objects.0.contour.1.x': 9.0,
        'objects.0.contour.1.y': -3.0, 'objects.0.contour.1.z': 0.0,
        'objects.1.id': 9, 'objects.1.classification_name': 'bicycle',
        'objects.1.absolute_velocity_valid': False, 'objects.1.contour.0.x': 3.5,
        'objects.1.contour.0.y': 2.75}, abs=1e-6)
    raw = markers.wait_for(1)[0]
    msg = deserialize_message(raw, MarkerArray)
    order = [(m.ns, m.id) for m in msg.markers]
    assert order == [('boxes', 5), ('boxes', 9), ('contours', 5), ('contours', 9),
                     ('labels', 5), ('labels', 9), ('velocities', 5)]
    check(raw, MarkerArray, {
        'markers.0.header.frame_id': 'laser', 'markers.0.type': 1, 'markers.0.action': 0,
        'markers.0.pose.position.x': 10.0, 'markers.0.pose.position.z': 0.75,
        'markers.0.pose.orientation.z': math.sin(math.radians(15.0)),
        'markers.0.pose.orientation.w': math.cos(math.radians(15.0)),
        'markers.0.scale.x': 4.5, 'markers.0.scale.z': 1.5, 'markers.0.color.a': 0.35,
        'markers.2.type': 4, 'markers.2.points.1.x': 9.0, 'markers.2.points.1.y': -3.0,
        'markers.3.points.0.x': 3.5, 'markers.3.points.1.x': 3.5,     # one point: doubled
        'markers.4.type': 9, 'markers.4.text': '5 car', 'markers.5.text': '9 bicycle',
        'markers.4.pose.position.z': 2.0, 'markers.6.type': 0,
        'markers.6.points.0.x': 10.0, 'markers.6.points.1.x': 13.0,
        'markers.6.points.1.y': -3.5, 'markers.6.color.g': 1.0}, abs=1e-6)
    check(states.wait_for(1)[0], LuxVehicleState, {
        'header.frame_id': 'base_link', 'timestamp_ntp': unix_ns_to_ntp64(SENSOR_NS),
        'scan_number': 42, 'error_flags': 0, 'error_names': [], 'valid': True,
        'longitudinal_velocity': 12.5, 'x': 12.0, 'y': -3.0, 'course_angle': 0.5,
        'yaw_rate': 0.25}, abs=1e-4)
    check(twists.wait_for(1)[0], TwistStamped, {
        'header.frame_id': 'base_link', 'twist.linear.x': 12.5, 'twist.linear.y': 0.0,
        'twist.angular.z': 0.25}, abs=1e-4)
    # the objects vanish: a DELETE of each marker shown, in (ns, id) order
    sensor.send(object_list_msg([]))
    check(markers.wait_for(2)[1], MarkerArray, {
        'markers.0.action': 2, 'markers.0.ns': 'boxes', 'markers.0.id': 5,
        'markers.6.ns': 'velocities', 'markers.6.action': 2}, abs=1e-9)


def ecu_node(ros, **params):
    port = free_tcp_port()
    return ros.start(IbeoEcuNode, {'port': port, **FAST, 'data_types': '', **params}), port


def send_record(sensor, record, device_id=4):
    sensor.send(registry.encode_record_message(record, device_id=device_id, ntp=T_NTP))


def test_ecu_scan_objects_and_states_read_back(ros, closing):
    node, port = ecu_node(ros)
    topics = {'points': PointCloud2, 'ecu/scan_info': IbeoScanInfo,
              'ecu/objects': IbeoObjectList, 'objects/markers': MarkerArray,
              'vehicle_state/odometry': Odometry, 'vehicle_state/fix': NavSatFix,
              'vehicle_state/twist': TwistStamped, 'gps/fix': NavSatFix,
              'gps_imu/fix': NavSatFix, 'imu/data': Imu, 'odometry': IbeoOdometry,
              'odometry/twist': TwistStamped, 'image/compressed': CompressedImage,
              'image': Image}
    got = {t: RawCollector(ros, m, node_topic(node, t)) for t, m in topics.items()}
    sensor = connected_sensor(port, closing)
    infos = se.make_scanners(1)
    infos['device_id'], infos['mounting_x'], infos['mounting_yaw'] = 10, 3.5, 0.25
    pts = np.zeros(3, se.POINT_DTYPE)
    pts['x'], pts['y'], pts['device_id'], pts['layer'] = [1.0, 2.0, 3.0], -1.0, 10, [0, 1, 2]
    send_record(sensor, se.EcuScan(T_NTP, 40_000, se.SCAN_FLAG_VEHICLE_COORDINATES, 77, infos,
                                   pts))
    o = oe.make_objects(1, oe.OBJECTS_2280)
    o['id'], o['classification'] = 21, 5
    o['box_center_x'], o['box_center_y'], o['box_size_x'], o['box_size_y'] = 6.0, 1.0, 4.0, 2.0
    o['course_angle'] = 0.0
    send_record(sensor, oe.EcuObjectList2280(T_NTP, o, [np.array([[5.0, 0.5], [7.0, 1.5]],
                                                                 np.float32)]))
    send_record(sensor, ve.EcuVehicleState2807(timestamp_ntp=T_NTP, distance_x=123456,
                                               distance_y=-5000, course_angle=0.5,
                                               longitudinal_velocity=3.0, yaw_rate=0.1))
    send_record(sensor, ve.EcuVehicleState2808(timestamp_ntp=T_NTP, latitude_deg=48.125,
                                               longitude_deg=11.5, altitude=520.0, sigma_x=0.5,
                                               sigma_y=1.5, longitudinal_velocity=7.5,
                                               yaw_rate=-0.2))
    send_record(sensor, gi.PositionWgs84(timestamp_ntp=T_NTP, latitude=math.radians(52.5),
                                         longitude=math.radians(-13.25), altitude=40.0,
                                         latitude_sigma=2.0, longitude_sigma=1.0,
                                         altitude_sigma=3.0, source_type=8))
    send_record(sensor, gi.GpsImu(latitude=math.radians(10.0), longitude=math.radians(20.0),
                                  altitude=5.0, yaw_angle=0.0, roll_angle=0.0, yaw_rate=0.2,
                                  longitudinal_acceleration=1.5, vertical_acceleration=9.75,
                                  yaw_angle_sigma=0.1, roll_angle_sigma=0.1,
                                  pitch_angle_sigma=0.1, measurement_time_ecu_ntp=T_NTP))
    send_record(sensor, od.EcuOdometry(steering_angle=-0.2, velocity=13.5, yaw_rate=0.05,
                                       clock_id=3, measurement_time_ecu_ntp=T_NTP))
    send_record(sensor, im.EcuImage(im.JPEG, 0, T_NTP, 1, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2,
                                    b'\xff\xd8\xff\xd9'))
    send_record(sensor, im.EcuImage(im.GRAY8, 0, T_NTP, 1, 0, 0, 0, 0, 0, 0, 1, 1, 3, 2,
                                    b'abcdef'))
    cloud_raw = got['points'].wait_for(1)[0]
    check(cloud_raw, PointCloud2, {**STAMP, 'header.frame_id': 'base_link', 'width': 3,
                                   'point_step': 28, 'is_dense': True})
    cloud = from_pointcloud2(deserialize_message(cloud_raw, PointCloud2))
    assert cloud['x'].tolist() == [1.0, 2.0, 3.0] and cloud['layer'].tolist() == [0, 1, 2]
    check(got['ecu/scan_info'].wait_for(1)[0], IbeoScanInfo, {
        **STAMP, 'header.frame_id': 'base_link', 'data_type': 0x2205, 'device_id': 4,
        'scan_start_ntp': T_NTP, 'scan_end_offset_us': 40_000, 'scan_number': 77,
        'scan_points': 3, 'scanners.0.device_id': 10, 'scanners.0.mounting_x': 3.5,
        'scanners.0.mounting_yaw': 0.25}, abs=1e-6)
    check(got['ecu/objects'].wait_for(1)[0], IbeoObjectList, {
        **STAMP, 'header.frame_id': 'base_link', 'data_type': 0x2280, 'device_id': 4,
        'mid_scan_ntp': T_NTP, 'objects.0.id': 21, 'objects.0.classification': 5,
        'objects.0.classification_name': 'car', 'objects.0.box_center_x': 6.0,
        'objects.0.box_size_y': 2.0, 'objects.0.contour.1.x': 7.0,
        'objects.0.contour.1.y': 1.5}, abs=1e-6)
    check(got['objects/markers'].wait_for(1)[0], MarkerArray, {
        'markers.0.ns': 'ecu_objects', 'markers.0.id': 21, 'markers.0.pose.position.x': 6.0,
        'markers.0.scale.x': 4.0, 'markers.0.scale.z': 1.5, 'markers.0.lifetime.nanosec':
        250_000_000, 'markers.1.ns': 'ecu_contours', 'markers.1.points.1.x': 7.0,
        'markers.2.ns': 'ecu_labels', 'markers.2.text': '21 car'}, abs=1e-6)
    check(got['vehicle_state/odometry'].wait_for(1)[0], Odometry, {
        **STAMP, 'header.frame_id': 'odom', 'child_frame_id': 'base_link',
        'pose.pose.position.x': 12.3456, 'pose.pose.position.y': -0.5,
        'pose.pose.orientation.z': math.sin(0.25), 'pose.pose.orientation.w': math.cos(0.25),
        'twist.twist.linear.x': 3.0, 'twist.twist.angular.z': 0.1}, abs=1e-6)
    check(got['vehicle_state/fix'].wait_for(1)[0], NavSatFix, {
        **STAMP, 'header.frame_id': 'gps', 'latitude': 48.125, 'longitude': 11.5,
        'altitude': 520.0, 'position_covariance': [0.25, 0, 0, 0, 2.25, 0, 0, 0, 2.25],
        'position_covariance_type': NavSatFix.COVARIANCE_TYPE_APPROXIMATED}, abs=1e-6)
    check(got['vehicle_state/twist'].wait_for(1)[0], TwistStamped, {
        **STAMP, 'twist.linear.x': 7.5, 'twist.angular.z': -0.2}, abs=1e-6)
    check(got['gps/fix'].wait_for(1)[0], NavSatFix, {
        **STAMP, 'latitude': 52.5, 'longitude': -13.25, 'altitude': 40.0,
        'status.status': 2, 'status.service': 1,                      # GBAS fix (RTK), GPS
        'position_covariance': [1.0, 0, 0, 0, 4.0, 0, 0, 0, 9.0],
        'position_covariance_type': NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN}, abs=1e-9)
    check(got['gps_imu/fix'].wait_for(1)[0], NavSatFix, {
        **STAMP, 'latitude': 10.0, 'longitude': 20.0, 'altitude': 5.0}, abs=1e-9)
    check(got['imu/data'].wait_for(1)[0], Imu, {
        **STAMP, 'header.frame_id': 'imu', 'orientation.z': math.sqrt(0.5),   # north → ENU +y
        'orientation.w': math.sqrt(0.5), 'angular_velocity.z': 0.2,
        'linear_acceleration.x': 1.5, 'linear_acceleration.z': 9.75,
        'orientation_covariance': [0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01]}, abs=1e-6)
    check(got['odometry'].wait_for(1)[0], IbeoOdometry, {
        **STAMP, 'steering_angle': -0.2, 'velocity': 13.5, 'yaw_rate': 0.05, 'clock_id': 3,
        'measurement_time_ecu_ntp': T_NTP}, abs=1e-9)
    check(got['odometry/twist'].wait_for(1)[0], TwistStamped, {
        **STAMP, 'twist.linear.x': 13.5, 'twist.angular.z': 0.05}, abs=1e-9)
    check(got['image/compressed'].wait_for(1)[0], CompressedImage, {
        **STAMP, 'header.frame_id': 'camera', 'format': 'jpeg',
        'data': list(b'\xff\xd8\xff\xd9')})
    check(got['image'].wait_for(1)[0], Image, {
        **STAMP, 'header.frame_id': 'camera', 'width': 3, 'height': 2, 'step': 3,
        'encoding': 'mono8', 'is_bigendian': 0, 'data': list(b'abcdef')})


def test_ecu_can_and_time_reference_read_back_with_receive_stamps(ros, closing):
    """Topics made on first use; ``stamp_source: receive``: the receive time fills the stamp
    slot of the same conversion (a time reference keeps the external clock's time)."""
    node, port = ecu_node(ros, stamp_source='receive')
    sensor = connected_sensor(port, closing)
    can = CanMessage(b'\xaa\xbb\xcc', 0x123, device_time_us=500, device_id=4, message_type=2)
    ext = unix_ns_to_ntp64(T_NS + 18 * 10**9)
    times = TimeRecord(1, 5, 2, 6, np.array([ext], np.uint64), np.array([T_NTP], np.uint64),
                       np.array([3], np.uint8))
    collectors = {}
    for topic, cls, record in (('can', IbeoCanMessage, can),
                               ('time_reference', TimeReference, times)):
        send_record(sensor, record, device_id=7)       # makes the publisher
        assert wait_until(lambda: any(p.topic_name == node_topic(node, topic)
                                      for p in node.publishers),
                          10.0), topic
        collectors[topic] = RawCollector(ros, cls, node_topic(node, topic))
        before = time_ns()
        send_record(sensor, record, device_id=7)
        raw = collectors[topic].wait_for(1)[0]
        stamp = deserialize_message(raw, cls).header.stamp
        assert before <= stamp.sec * 10**9 + stamp.nanosec <= time_ns()
        if topic == 'can':
            check(raw, cls, {'header.frame_id': '', 'can_id': 0x123, 'message_type': 2,
                             'device_id': 4, 'source_device_id': 7, 'device_time_us': 500,
                             'data': [0xAA, 0xBB, 0xCC]})
        else:
            check(raw, cls, {'time_ref.sec': (T_NS + 18 * 10**9) // 10**9,
                             'time_ref.nanosec': T_NS % 10**9,
                             'source': 'ibeo clock 1/5 fix fix_3d'})


def time_ns() -> int:
    import time
    return time.time_ns()
