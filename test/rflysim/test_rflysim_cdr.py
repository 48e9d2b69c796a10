"""rflysim_truth's output as bytes (issue #27): every data-rate type read back over real DDS
with rclpy and rosbags, compared with values worked out from SUPPLEMENT §2.2 (NED/FRD as sent;
ENU/FLU views per REP-103)."""
import math
import time
import struct

import pytest
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.msg import RflySimCollision, RflySimTruth
from ros_sim_bridge.rflysim import codec
from ros_sim_bridge.rflysim.ros.node import RflySimTruthNode
from ros_sim_bridge.ros.qos import LATCHED, TF

from cdr_readback import RawCollector, check
from conftest import UdpSender, free_udp_ports

S2 = math.sqrt(0.5)


def sout2simulator():
    """SOut2Simulator (168 B) at the §2.2 offsets: copter 1, type 3, reserv 7; nose north,
    level (quaternion identity in NED); VelE (1, 2, −0.5); AccB (0.5, 0.25, −9.75); RateB
    (0.125, 0.25, 0.5); runnedTime 12.5 s; PosE (10, 20, −5); PosGPS (40.1, 116.2, 55.5)."""
    b = bytearray(168)
    struct.pack_into('<4i', b, 0, 123456789, 1, 3, 7)
    struct.pack_into('<3f', b, 16, 1.0, 2.0, -0.5)
    struct.pack_into('<3f', b, 28, 0.0, 0.0, 0.0)
    struct.pack_into('<4f', b, 40, 1.0, 0.0, 0.0, 0.0)
    struct.pack_into('<8f', b, 56, *[1000.0 + i for i in range(8)])
    struct.pack_into('<3f', b, 88, 0.5, 0.25, -9.75)
    struct.pack_into('<3f', b, 100, 0.125, 0.25, 0.5)
    struct.pack_into('<d', b, 112, 12.5)
    struct.pack_into('<3d', b, 120, 10.0, 20.0, -5.0)
    struct.pack_into('<3d', b, 144, 40.1, 116.2, 55.5)
    return bytes(b)


def simple_time():
    """SOut2SimulatorSimpleTime (112 B): no quaternion, acc or rates; yaw 0; t 9 s."""
    b = bytearray(112)
    struct.pack_into('<6i', b, 0, 1234567891, 1, 3, 401234567, 1161234567, 55500)
    struct.pack_into('<3d', b, 80, 1.0, 2.0, -3.0)
    struct.pack_into('<d', b, 104, 9.0)
    return bytes(b)


@pytest.fixture
def node(ros):
    base = free_udp_ports(1, step=2)
    ros.start(RflySimTruthNode, {'copter_ids': [1], 'base_port': base, 'stamp_source': 'sim',
                                 'diagnostics_period': 0.2})
    return codec.truth_port(1, base)


def test_every_published_type_reads_back_with_rclpy_and_rosbags(ros, node):
    topics = {name: RawCollector(ros, t, f'rflysim/vehicle_1/{name}') for name, t in
              (('truth', RflySimTruth), ('odom', Odometry), ('imu', Imu), ('fix', NavSatFix),
               ('collision', RflySimCollision))}
    tf = RawCollector(ros, TFMessage, '/tf', TF)
    tx = UdpSender()
    tx.send_to(node, sout2simulator())
    stamp = {'header.stamp.sec': 12, 'header.stamp.nanosec': 500_000_000}
    base = dict(stamp, **{'header.frame_id': 'vehicle_1/base_link'})
    check(topics['truth'].wait_for(1)[0], RflySimTruth, dict(
        stamp, **{'header.frame_id': 'map'}, form=0, copter_id=1, vehicle_type=3, reserved=7,
        runned_time=12.5, pos_ned=[10.0, 20.0, -5.0], vel_ned=[1.0, 2.0, -0.5],
        euler=[0.0] * 3, has_quaternion=True, quat_wxyz=[1.0, 0.0, 0.0, 0.0],
        motor_rpm=[1000.0 + i for i in range(8)], has_body_motion=True,
        acc_frd=[0.5, 0.25, -9.75], rate_frd=[0.125, 0.25, 0.5], pos_gps=[40.1, 116.2, 55.5],
        collided=False, collision_target=-1))
    # nose north in ENU: yaw +90° about z; NED (1, 2, −0.5) m/s = ENU (2, 1, 0.5) = forward 1,
    # left −2, up 0.5; FRD → FLU negates y and z
    pose = {'pose.pose.position.x': 20.0, 'pose.pose.position.y': 10.0,
            'pose.pose.position.z': 5.0, 'pose.pose.orientation.x': 0.0,
            'pose.pose.orientation.y': 0.0, 'pose.pose.orientation.z': S2,
            'pose.pose.orientation.w': S2}
    check(topics['odom'].wait_for(1)[0], Odometry, dict(
        stamp, **{'header.frame_id': 'map', 'child_frame_id': 'vehicle_1/base_link'}, **pose,
        **{'twist.twist.linear.x': 1.0, 'twist.twist.linear.y': -2.0,
           'twist.twist.linear.z': 0.5, 'twist.twist.angular.x': 0.125,
           'twist.twist.angular.y': -0.25, 'twist.twist.angular.z': -0.5,
           'twist.covariance': [0.0] * 36, 'pose.covariance': [0.0] * 36}), abs=1e-6)
    check(topics['imu'].wait_for(1)[0], Imu, dict(
        base, **{'orientation.z': S2, 'orientation.w': S2, 'orientation.x': 0.0,
                 'angular_velocity.x': 0.125, 'angular_velocity.y': -0.25,
                 'angular_velocity.z': -0.5, 'linear_acceleration.x': 0.5,
                 'linear_acceleration.y': -0.25, 'linear_acceleration.z': 9.75,
                 'angular_velocity_covariance': [0.0] * 9,
                 'linear_acceleration_covariance': [0.0] * 9,
                 'orientation_covariance': [0.0] * 9}), abs=1e-6)
    check(topics['fix'].wait_for(1)[0], NavSatFix, dict(
        base, latitude=40.1, longitude=116.2, altitude=55.5, **{
            'status.status': 0, 'status.service': 1}, position_covariance=[0.0] * 9,
        position_covariance_type=0))
    check(tf.wait_for(1)[0], TFMessage, {
        'transforms.0.header.stamp.sec': 12, 'transforms.0.header.frame_id': 'map',
        'transforms.0.child_frame_id': 'vehicle_1/base_link',
        'transforms.0.transform.translation.x': 20.0,
        'transforms.0.transform.translation.y': 10.0,
        'transforms.0.transform.rotation.z': S2, 'transforms.0.transform.rotation.w': S2},
        abs=1e-6)

    # crash notice (12 B: checksum 1234567890, copter, target), stamped at reception
    tx.send_to(node, struct.pack('<3i', 1234567890, 1, 4))
    check(topics['collision'].wait_for(1)[0], RflySimCollision,
          {'header.frame_id': 'vehicle_1/base_link', 'copter_id': 1, 'target_id': 4})
    tx.send_to(node, struct.pack('<3i', 1234567890, 1, -1))
    check(topics['collision'].wait_for(2)[1], RflySimCollision, {'target_id': -1})

    # the map's GPS origin (32 B), latched: a late subscriber still gets it
    tx.send_to(node, struct.pack('<2i3d', 1234567890, 1, 39.9, 116.3, 40.0))
    time.sleep(0.5)
    origin = RawCollector(ros, NavSatFix, 'rflysim/map_origin', LATCHED)
    check(origin.wait_for(1)[0], NavSatFix, {'header.frame_id': 'map', 'latitude': 39.9,
                                             'longitude': 116.3, 'altitude': 40.0})

    # simple_time: no body motion, so the IMU says "not provided" (REP-145) and the angular
    # twist variance is unknown (1e6 on the diagonal 21, 28, 35)
    tx.send_to(node, simple_time())
    cov = [1.0e6 if k in (21, 28, 35) else 0.0 for k in range(36)]
    check(topics['odom'].wait_for(2)[1], Odometry, {
        'header.stamp.sec': 9, 'twist.covariance': cov, 'twist.twist.angular.x': 0.0,
        'pose.pose.position.x': 2.0, 'pose.pose.position.z': 3.0})
    check(topics['imu'].wait_for(2)[1], Imu, {
        'angular_velocity_covariance': [-1.0] + [0.0] * 8,
        'linear_acceleration_covariance': [-1.0] + [0.0] * 8, 'angular_velocity.z': 0.0})
    check(topics['truth'].wait_for(2)[1], RflySimTruth, {
        'form': 3, 'has_quaternion': False, 'has_body_motion': False, 'acc_frd': [0.0] * 3,
        'quat_wxyz': [1.0, 0.0, 0.0, 0.0], 'pos_gps': [40.1234567, 116.1234567, 55.5]})
