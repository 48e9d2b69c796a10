"""RflySim truth records → ROS messages (custom truth as sent; standard views in ENU/FLU)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus
from std_msgs.msg import Header

from ros_sim_bridge.rflysim.codec import GPS_ORDERS
from ros_sim_bridge.msg import RflySimCollision, RflySimTruth
from ros_sim_bridge.core import frames
from ros_sim_bridge.ros.geometry import point, quaternion, transform as make_transform, vector3

FORM_IDS = {
    'sout2simulator': RflySimTruth.FORM_SOUT2SIMULATOR,
    'netdatashort_legacy': RflySimTruth.FORM_NETDATASHORT_LEGACY,
    'netdatashort_doc': RflySimTruth.FORM_NETDATASHORT_DOC,
    'simple_time': RflySimTruth.FORM_SIMPLE_TIME,
}


@dataclass
class EnuState:
    """One truth record in REP-103 frames: map ENU, body FLU."""
    position: np.ndarray        # m, ENU
    orientation: np.ndarray     # w-x-y-z, FLU body in ENU
    velocity_body: np.ndarray   # m/s, FLU (the Odometry twist frame)
    rates_body: np.ndarray      # rad/s, FLU
    acc_body: np.ndarray        # m/s², FLU
    has_body_motion: bool

    @classmethod
    def from_truth(cls, s) -> 'EnuState':
        q_ned = _quaternion_ned(s)
        q = frames.quat_positive_w(frames.quat_normalize(frames.quat_ned_frd_to_enu_flu(q_ned)))
        vel_enu = frames.ned_to_enu(s.vel_ned)
        body = s.has_body_motion
        zero = np.zeros(3)
        return cls(
            position=frames.ned_to_enu(s.pos_ned),
            orientation=q,
            velocity_body=frames.quat_rotate(frames.quat_conjugate(q), vel_enu),
            rates_body=frames.frd_to_flu(s.rate_frd) if body else zero,
            acc_body=frames.frd_to_flu(s.acc_frd) if body else zero,
            has_body_motion=body,
        )


def _quaternion_ned(s) -> np.ndarray:
    """The record's FRD-in-NED quaternion (w-x-y-z), from its Euler angles when none was sent."""
    if s.has_quaternion:
        return np.asarray(s.quat_wxyz, dtype=np.float64)
    return frames.quat_from_euler(*np.asarray(s.euler, dtype=np.float64))


def _header(stamp, frame_id: str) -> Header:
    return Header(stamp=stamp, frame_id=frame_id)


def truth_msg(s, stamp, frame_id: str) -> RflySimTruth:
    m = RflySimTruth()
    m.header = _header(stamp, frame_id)
    m.form = FORM_IDS[s.form]
    m.copter_id = s.copter_id
    m.vehicle_type = s.vehicle_type
    m.reserved = s.reserved
    m.runned_time = float(s.runned_time)
    m.pos_ned = [float(v) for v in s.pos_ned]
    m.vel_ned = [float(v) for v in s.vel_ned]
    m.euler = [float(v) for v in s.euler]
    m.has_quaternion = s.has_quaternion
    m.quat_wxyz = [float(v) for v in _quaternion_ned(s)]
    m.motor_rpm = [float(v) for v in s.motor_rpm]
    m.has_body_motion = s.has_body_motion
    if m.has_body_motion:
        m.acc_frd = [float(v) for v in s.acc_frd]
        m.rate_frd = [float(v) for v in s.rate_frd]
    m.pos_gps = [float(v) for v in s.pos_gps]
    m.collided = s.collision_target is not None
    m.collision_target = s.collision_target if s.collision_target is not None else -1
    return m


#: Variance ((rad/s)²) of an Odometry's angular twist the record does not carry (the
#: simple_time form): nav_msgs has no "not provided" flag, so a huge variance says "unknown"
#: (a filter weighs it as nothing) where zero would claim exact zero rates.
UNKNOWN_VARIANCE = 1.0e6
#: Diagonal of the angular part (rows/columns 3..5) in the 6×6 row-major twist covariance.
ANGULAR_DIAGONAL = (21, 28, 35)


def odometry(e: EnuState, stamp, frame_id: str, child_frame_id: str) -> Odometry:
    """Pose in ``frame_id`` (ENU), twist in ``child_frame_id`` (FLU), as nav_msgs/Odometry says.

    Ground truth: the covariances stay zero (exact), except the angular twist of a record
    without body rates (simple_time), whose diagonal is :data:`UNKNOWN_VARIANCE`."""
    m = Odometry()
    m.header = _header(stamp, frame_id)
    m.child_frame_id = child_frame_id
    m.pose.pose.position = point(e.position)
    m.pose.pose.orientation = quaternion(e.orientation)
    m.twist.twist.linear = vector3(e.velocity_body)
    m.twist.twist.angular = vector3(e.rates_body)
    if not e.has_body_motion:
        for i in ANGULAR_DIAGONAL:
            m.twist.covariance[i] = UNKNOWN_VARIANCE
    return m


def imu(e: EnuState, s, stamp, frame_id: str) -> Imu:
    m = Imu()
    m.header = _header(stamp, frame_id)
    m.orientation = quaternion(e.orientation)
    if e.has_body_motion:
        m.angular_velocity = vector3(e.rates_body)
        m.linear_acceleration = vector3(e.acc_body)
    else:  # REP-145: element 0 of a covariance = -1 means "not provided"
        m.angular_velocity_covariance[0] = -1.0
        m.linear_acceleration_covariance[0] = -1.0
    return m


def nav_sat_fix(s, stamp, frame_id: str, gps_order: str) -> NavSatFix:
    lat_i, lon_i, alt_i = GPS_ORDERS[gps_order]
    m = NavSatFix()
    m.header = _header(stamp, frame_id)
    m.status.status = NavSatStatus.STATUS_FIX
    m.status.service = NavSatStatus.SERVICE_GPS
    m.latitude = float(s.pos_gps[lat_i])
    m.longitude = float(s.pos_gps[lon_i])
    m.altitude = float(s.pos_gps[alt_i])
    m.position_covariance_type = NavSatFix.COVARIANCE_TYPE_UNKNOWN
    return m


def origin_fix(origin, stamp, frame_id: str, gps_order: str) -> NavSatFix:
    """The map's GPS origin (Ue4CMDGPS) as a latched NavSatFix in the map frame."""
    return nav_sat_fix(origin, stamp, frame_id, gps_order)


def transform(e: EnuState, stamp, parent: str, child: str):
    return make_transform(stamp, parent, child, e.position, e.orientation)


def collision_msg(notice, stamp, frame_id: str) -> RflySimCollision:
    m = RflySimCollision()
    m.header = _header(stamp, frame_id)
    m.copter_id = int(notice.copter_id)
    target = notice.target_id
    m.target_id = int(target) if target is not None and target >= 0 else -1
    return m


__all__ = ['EnuState', 'GPS_ORDERS', 'truth_msg', 'odometry', 'imu', 'nav_sat_fix',
           'origin_fix', 'transform', 'collision_msg']
