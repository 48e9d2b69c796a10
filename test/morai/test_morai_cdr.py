"""morai_bridge's output as bytes (issue #27): every simulator → client type (Ego Status:
status, odom, tf; Object Info: list, markers; the others and their markers) read back over
real DDS with rclpy and rosbags, compared with values worked out from SUPPLEMENT §1.3 (wire
km/h and deg → m/s and rad)."""
import math
import struct

import numpy as np
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.msg import (MoraiCollisionData, MoraiEgoVehicleStatus,
                                MoraiGetTrafficLightStatus, MoraiIntersectionStatus,
                                MoraiMultiEgoSetting, MoraiObjectStatusList,
                                MoraiVehicleCollisionData)
from ros_sim_bridge.ros.qos import TF

from cdr_readback import RawCollector, check
from conftest import UdpSender
from test_morai_node import Bridge, ego94, objects68

S2 = math.sqrt(0.5)
DEG = math.pi / 180


def objects106(records):
    """Object Info, 106-byte records (68 + link_id char[38]) from @30 (2152 bytes)."""
    b = bytearray(2152)
    b[0:14] = b'#MoraiObjInfo$'
    struct.pack_into('<i', b, 14, 2120)
    for slot, (obj_id, obj_type, x, link) in records.items():
        struct.pack_into('<hh16f38s', b, 30 + 106 * slot, obj_id, obj_type, x, 1.0, 0.0, 0.0,
                         4.0, 2.0, 1.0, 0.9, 2.7, 0.9, 72.0, 0.0, 0.0, 0.0, 0.0, 0.0, link)
    b[2150:2152] = b'\r\n'
    return bytes(b)


def test_ego_status_odom_and_tf_read_back(ros):
    b = Bridge(ros)
    try:
        node, ports = b.start(inbound=('ego_status',))
        status = RawCollector(ros, MoraiEgoVehicleStatus, 'morai/ego_status')
        odom = RawCollector(ros, Odometry, 'morai/odom')
        tf = RawCollector(ros, TFMessage, '/tf', TF)
        UdpSender().send_to(ports['ego_status'], ego94())
        check(status.wait_for(1)[0], MoraiEgoVehicleStatus, {
            'header.frame_id': 'map', 'layout': 'ego94_notail', 'has_sim_time': False, 'sec': 0,
            'nsec': 0, 'ctrl_mode': 2, 'gear': 4, 'signed_velocity': 10.0, 'map_data_id': 42,
            'accel': 0.25, 'brake': 0.0, 'size_x': 4.6, 'size_y': 1.9, 'size_z': 1.5,
            'overhang': 0.9, 'wheelbase': 2.7, 'rear_overhang': 1.0, 'pos_x': 10.0,
            'pos_y': 20.0, 'pos_z': 1.5, 'roll': 0.0, 'pitch': 0.0, 'heading': math.pi / 2,
            'velocity_x': 10.0, 'velocity_y': 0.0, 'accel_x': 0.5, 'steer': -3 * DEG,
            'has_angular_velocity': False, 'angular_velocity_z': 0.0, 'has_rear_steer': False,
            'has_link_id': False, 'link_id': '', 'has_tire_data': False,
            'has_lane_data': False, 'cross_track_error': 0.0}, abs=1e-6)
        check(odom.wait_for(1)[0], Odometry, {
            'header.frame_id': 'map', 'child_frame_id': 'base_link',
            'pose.pose.position.x': 10.0, 'pose.pose.position.y': 20.0,
            'pose.pose.position.z': 1.5, 'pose.pose.orientation.z': S2,
            'pose.pose.orientation.w': S2, 'twist.twist.linear.x': 10.0,
            'twist.twist.angular.z': 0.0, 'twist.covariance': [0.0] * 36}, abs=1e-6)
        check(tf.wait_for(1)[0], TFMessage, {
            'transforms.0.header.frame_id': 'map', 'transforms.0.child_frame_id': 'base_link',
            'transforms.0.transform.translation.y': 20.0,
            'transforms.0.transform.rotation.z': S2}, abs=1e-6)
    finally:
        b.sim.close()


def test_object_list_and_markers_read_back(ros):
    b = Bridge(ros)
    try:
        node, ports = b.start(inbound=('object_info',), object_labels=True)
        objects = RawCollector(ros, MoraiObjectStatusList, 'morai/objects')
        markers = RawCollector(ros, MarkerArray, 'morai/object_markers')
        tx = UdpSender()
        tx.send_to(ports['object_info'], objects68({
            0: (7, 1, 30.0, 3.5, 0.0, 4.5, 1.9, 1.5, 36.0),
            5: (201, 2, 50.0, -7.5, 90.0, 0.0, 1.0, 1.0, 0.0)}))
        check(objects.wait_for(1)[0], MoraiObjectStatusList, {
            'header.frame_id': 'map', 'layout': 'obj68', 'has_sim_time': False,
            'num_of_npcs': 1, 'num_of_pedestrian': 0, 'num_of_obstacle': 1,
            'objects.0.obj_id': 7, 'objects.0.obj_type': 1, 'objects.0.pos_x': 30.0,
            'objects.0.pos_y': 3.5, 'objects.0.size_x': 4.5, 'objects.0.wheelbase': 2.7,
            'objects.0.velocity_x': 10.0, 'objects.0.link_id': '',
            'objects.1.obj_id': 201, 'objects.1.heading': math.pi / 2,
            'objects.1.size_x': 0.0}, abs=1e-5)
        m = markers.wait_for(1)[0]
        cube = {'type': Marker.CUBE, 'action': Marker.ADD, 'ns': 'morai_objects',
                'header.frame_id': 'map'}
        check(m, MarkerArray, {
            'markers.0.action': Marker.DELETEALL, 'markers.0.ns': 'morai_objects',
            'markers.1.action': Marker.DELETEALL, 'markers.1.ns': 'morai_object_labels',
            **{f'markers.2.{k}': v for k, v in cube.items()}, 'markers.2.id': 7,
            'markers.2.pose.position.x': 30.0, 'markers.2.pose.position.z': 0.75,
            'markers.2.pose.orientation.w': 1.0, 'markers.2.scale.x': 4.5,
            'markers.2.scale.z': 1.5, 'markers.2.color.r': 0.2, 'markers.2.color.b': 1.0,
            'markers.2.color.a': 0.8,
            'markers.3.id': 201, 'markers.3.scale.x': 0.1,               # zero size: visible
            'markers.3.pose.orientation.z': S2, 'markers.3.pose.orientation.w': S2,
            'markers.4.type': Marker.TEXT_VIEW_FACING, 'markers.4.text': 'npc 7',
            'markers.4.pose.position.z': 2.25, 'markers.4.scale.z': 0.8,
            'markers.5.text': 'obstacle 201'}, abs=1e-6)

        # the 106-byte records carry a link id per object
        tx.send_to(ports['object_info'], objects106({2: (9, 1, 5.0, b'LN-17'),
                                                     3: (10, 0, 6.0, b'')}))
        check(objects.wait_for(2)[1], MoraiObjectStatusList, {
            'layout': 'obj106', 'objects.0.obj_id': 9, 'objects.0.link_id': 'LN-17',
            'objects.0.velocity_x': 20.0, 'objects.1.link_id': '', 'objects.1.pos_x': 6.0,
            'num_of_pedestrian': 1}, abs=1e-5)
    finally:
        b.sim.close()


def test_other_inbound_types_read_back(ros):
    """Traffic light, intersection, multi-ego, collision and vehicle collision (+ markers)."""
    b = Bridge(ros)
    try:
        node, ports = b.start()
        topics = {n: RawCollector(ros, t, f'morai/{n}') for n, t in (
            ('traffic_light_status', MoraiGetTrafficLightStatus),
            ('intersection_status', MoraiIntersectionStatus),
            ('multi_ego_setting', MoraiMultiEgoSetting), ('collision', MoraiCollisionData),
            ('collision_markers', MarkerArray),
            ('vehicle_collision', MoraiVehicleCollisionData),
            ('vehicle_collision_markers', MarkerArray))}
        tx = UdpSender()
        # Get TrafficLight Status (48 B): index @30, type @42, status @44
        d = bytearray(48)
        d[0:14] = b'#TrafficLight$'
        struct.pack_into('<i', d, 14, 16)
        d[30:39] = b'C119BS010'
        struct.pack_into('<hh', d, 42, 1, 33)
        d[46:48] = b'\r\n'
        tx.send_to(ports['traffic_light_status'], bytes(d))
        check(topics['traffic_light_status'].wait_for(1)[0], MoraiGetTrafficLightStatus, {
            'header.frame_id': '', 'traffic_light_index': 'C119BS010',
            'traffic_light_type': 1, 'traffic_light_status': 33})
        # Get Intersection Status (37 B): index @27, status @29, time @31
        d = bytearray(37)
        d[0:11] = b'#IntStatus$'
        struct.pack_into('<i', d, 11, 8)
        struct.pack_into('<hhf', d, 27, 3, 2, 4.5)
        d[35:37] = b'\r\n'
        tx.send_to(ports['intersection_status'], bytes(d))
        check(topics['intersection_status'].wait_for(1)[0], MoraiIntersectionStatus, {
            'intersection_index': 3, 'intersection_status': 2,
            'intersection_status_time': 4.5})
        # Multi Ego Setting: two egos (km/h and deg on the wire)
        egos = np.zeros(2, morai.MULTI_EGO_DTYPE)
        egos['ego_index'], egos['pos_x'] = [0, 1], [5.0, 15.0]
        egos['velocity'], egos['heading'] = [36.0, 18.0], [90.0, -45.0]
        egos['gear'], egos['ctrl_mode'] = 4, [1, 2]
        tx.send_to(ports['multi_ego_setting'],
                   morai.encode_multi_ego(morai.MultiEgoSetting(2, 1, egos)))
        check(topics['multi_ego_setting'].wait_for(1)[0], MoraiMultiEgoSetting, {
            'header.frame_id': 'map', 'num_of_ego': 2, 'camera_index': 1,
            'egos.0.ego_index': 0, 'egos.0.pos_x': 5.0, 'egos.0.velocity': 10.0,
            'egos.0.heading': math.pi / 2, 'egos.0.gear': 4, 'egos.0.ctrl_mode': 1,
            'egos.1.ego_index': 1, 'egos.1.pos_x': 15.0, 'egos.1.velocity': 5.0,
            'egos.1.heading': -math.pi / 4, 'egos.1.ctrl_mode': 2}, abs=1e-6)
        # Collision with sim time: slots 0 and 2
        recs = np.zeros(3, morai.COLLISION_DTYPE)
        recs[0] = (1, 7, 2.0, 0.5, 0.0, 32.0, 3.5, 0.0)
        recs[2] = (0, 101, 1.0, -1.0, 0.0, 31.0, 2.0, 0.0)
        tx.send_to(ports['collision'], morai.encode_collision(recs, 'col148', sec=12, nsec=500))
        check(topics['collision'].wait_for(1)[0], MoraiCollisionData, {
            'layout': 'col148', 'has_sim_time': True, 'sec': 12, 'nsec': 500,
            'collision_objects.0.obj_type': 1, 'collision_objects.0.obj_id': 7,
            'collision_objects.0.pos_x': 2.0, 'collision_objects.0.global_offset_x': 32.0,
            'collision_objects.1.obj_id': 101, 'collision_objects.1.global_offset_y': 2.0})
        check(topics['collision_markers'].wait_for(1)[0], MarkerArray, {
            'markers.0.action': Marker.DELETEALL, 'markers.0.ns': 'morai_collision',
            'markers.1.id': 7, 'markers.1.type': Marker.SPHERE,
            'markers.1.pose.position.x': 32.0, 'markers.1.pose.position.y': 3.5,
            'markers.1.pose.orientation.w': 1.0, 'markers.1.scale.x': 1.0,
            'markers.1.color.r': 1.0, 'markers.1.color.a': 0.9, 'markers.2.id': 101},
            abs=1e-6)
        # NPC Vehicle Collision: one pair
        pair = np.zeros((1, 2), morai.VEHICLE_DTYPE)
        pair[0, 0]['obj_id'], pair[0, 1]['obj_id'] = 3, 4
        pair[0, 0]['pos_x'], pair[0, 1]['pos_x'] = 60.0, 62.0
        pair[0, 0]['size_x'] = pair[0, 1]['size_x'] = 4.5
        pair[0, 0]['size_z'] = 2.0
        pair[0, 0]['heading'], pair[0, 1]['heading'] = 180.0, -90.0
        pair[0, 0]['velocity_x'], pair[0, 0]['accel_x'] = 54.0, -6.0
        tx.send_to(ports['vehicle_collision'], morai.encode_vehicle_collision(pair))
        check(topics['vehicle_collision'].wait_for(1)[0], MoraiVehicleCollisionData, {
            'collisions.0.vehicle_a.obj_id': 3, 'collisions.0.vehicle_b.obj_id': 4,
            'collisions.0.vehicle_a.heading': math.pi, 'collisions.0.vehicle_a.velocity_x': 15.0,
            'collisions.0.vehicle_a.accel_x': -6.0, 'collisions.0.vehicle_b.pos_x': 62.0,
            'collisions.0.vehicle_b.heading': -math.pi / 2}, abs=1e-6)
        check(topics['vehicle_collision_markers'].wait_for(1)[0], MarkerArray, {
            'markers.0.action': Marker.DELETEALL, 'markers.1.id': 0, 'markers.2.id': 1,
            'markers.1.type': Marker.CUBE, 'markers.1.pose.position.x': 60.0,
            'markers.1.pose.position.z': 1.0, 'markers.1.scale.x': 4.5,
            'markers.1.scale.y': 0.1, 'markers.1.pose.orientation.z': 1.0,
            'markers.1.color.g': 0.5, 'markers.2.color.g': 0.1,
            'markers.2.pose.orientation.z': -S2}, abs=1e-6)
    finally:
        b.sim.close()
