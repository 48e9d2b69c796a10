"""RflySim truth records → the CDR bytes of the ROS messages (custom truth as sent; standard
views in ENU/FLU), each from a :mod:`ros_sim_bridge.ros.cdr_template` template of its vehicle
whose numbers and stamp are slots filled per record."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import NavSatFix, NavSatStatus

from ros_sim_bridge.rflysim.codec import GPS_ORDERS
from ros_sim_bridge.msg import RflySimCollision, RflySimTruth
from ros_sim_bridge.core import frames
from ros_sim_bridge.ros.cdr_template import Slot, build

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


#: Variance ((rad/s)²) of an Odometry's angular twist the record does not carry (the
#: simple_time form): nav_msgs has no "not provided" flag, so a huge variance says "unknown"
#: (a filter weighs it as nothing) where zero would claim exact zero rates.
UNKNOWN_VARIANCE = 1.0e6
#: Diagonal of the angular part (rows/columns 3..5) in the 6×6 row-major twist covariance.
ANGULAR_DIAGONAL = (21, 28, 35)

_HEADER = {'stamp': Slot('stamp')}
_TRUTH_INTS = ('copter_id', 'vehicle_type', 'reserved', 'collision_target')
_TRUTH_FLAGS = ('form', 'has_quaternion', 'has_body_motion', 'collided')
_TRUTH_ARRAYS = ('runned_time', 'pos_ned', 'vel_ned', 'euler', 'quat_wxyz', 'motor_rpm',
                 'acc_frd', 'rate_frd', 'pos_gps')


def _stamp(stamp) -> tuple:
    """(sec, nanosec) of a builtin_interfaces Time or of such a pair."""
    return (stamp.sec, stamp.nanosec) if hasattr(stamp, 'sec') else tuple(stamp)


def _xyzw(q_wxyz) -> np.ndarray:
    """w-x-y-z → the x, y, z, w order of geometry_msgs/Quaternion."""
    return np.asarray(q_wxyz, np.float64)[[1, 2, 3, 0]]


def fix_template(frame_id: str):
    return build('sensor_msgs/msg/NavSatFix', {
        'header': dict(_HEADER, frame_id=frame_id),
        'status': {'status': NavSatStatus.STATUS_FIX, 'service': NavSatStatus.SERVICE_GPS},
        'latitude': Slot('lat'), 'longitude': Slot('lon'), 'altitude': Slot('alt'),
        'position_covariance_type': NavSatFix.COVARIANCE_TYPE_UNKNOWN})


def fix_cdr(template, pos_gps, stamp, gps_order: str) -> bytes:
    """A NavSatFix of PosGPS read in ``gps_order`` (covariance unknown)."""
    lat, lon, alt = (float(pos_gps[i]) for i in GPS_ORDERS[gps_order])
    return bytes(template.fill(stamp=_stamp(stamp), lat=lat, lon=lon, alt=alt))


class VehicleCdr:
    """The templates of one vehicle's messages (its frames baked in) and the conversions of a
    truth record to their CDR bytes; ``stamp`` a builtin_interfaces Time or (sec, nanosec)."""

    def __init__(self, map_frame: str, base_frame: str, gps_order: str):
        if gps_order not in GPS_ORDERS:
            raise ValueError(f'gps_order must be one of {sorted(GPS_ORDERS)}')
        self.gps_order = gps_order
        self._truth = build('ros_sim_bridge/msg/RflySimTruth', {
            'header': dict(_HEADER, frame_id=map_frame),
            **{name: Slot(name) for name in _TRUTH_INTS + _TRUTH_FLAGS + _TRUTH_ARRAYS}})
        #: by has_body_motion: the angular twist variance is unknown without body rates
        self._odom = {body: build('nav_msgs/msg/Odometry', {
            'header': dict(_HEADER, frame_id=map_frame), 'child_frame_id': base_frame,
            'pose': {'pose': Slot('pose')},
            'twist': {'twist': Slot('twist'), 'covariance': [
                0.0 if body or i not in ANGULAR_DIAGONAL else UNKNOWN_VARIANCE
                for i in range(36)]}}) for body in (False, True)}
        # REP-145: element 0 of a covariance = -1 means "not provided"
        unknown = [-1.0] + [0.0] * 8
        self._imu = {True: build('sensor_msgs/msg/Imu', {
            'header': dict(_HEADER, frame_id=base_frame), 'orientation': Slot('orientation'),
            'angular_velocity': Slot('rates'), 'linear_acceleration': Slot('acc')}),
            False: build('sensor_msgs/msg/Imu', {
                'header': dict(_HEADER, frame_id=base_frame),
                'orientation': Slot('orientation'), 'angular_velocity_covariance': unknown,
                'linear_acceleration_covariance': unknown})}
        self._fix = fix_template(base_frame)
        self._tf = build('tf2_msgs/msg/TFMessage', {'transforms': [{
            'header': dict(_HEADER, frame_id=map_frame), 'child_frame_id': base_frame,
            'transform': Slot('transform')}]})
        self._collision = build('ros_sim_bridge/msg/RflySimCollision', {
            'header': dict(_HEADER, frame_id=base_frame), 'copter_id': Slot('copter_id'),
            'target_id': Slot('target_id')})

    def truth(self, s, stamp) -> bytes:
        """RflySimTruth: the record as sent (NED/FRD); quat_wxyz from the Euler angles when the
        form has none; acc/rates zero without body motion; collision_target −1 when none."""
        body = s.has_body_motion
        target = s.collision_target
        return bytes(self._truth.fill(
            stamp=_stamp(stamp), form=FORM_IDS[s.form], copter_id=s.copter_id,
            vehicle_type=s.vehicle_type, reserved=s.reserved,
            collision_target=-1 if target is None else target,
            has_quaternion=s.has_quaternion, has_body_motion=body,
            collided=target is not None, runned_time=s.runned_time, pos_ned=s.pos_ned,
            vel_ned=s.vel_ned, euler=s.euler, quat_wxyz=_quaternion_ned(s),
            motor_rpm=s.motor_rpm, acc_frd=s.acc_frd if body else 0.0,
            rate_frd=s.rate_frd if body else 0.0, pos_gps=s.pos_gps))

    def odometry(self, e: EnuState, stamp) -> bytes:
        """Pose in the map frame (ENU), twist in the base frame (FLU), as nav_msgs/Odometry
        says.  Ground truth: the covariances stay zero (exact), except the angular twist of a
        record without body rates (simple_time), whose diagonal is :data:`UNKNOWN_VARIANCE`."""
        return bytes(self._odom[bool(e.has_body_motion)].fill(
            stamp=_stamp(stamp), pose=np.concatenate([e.position, _xyzw(e.orientation)]),
            twist=np.concatenate([e.velocity_body, e.rates_body])))

    def imu(self, e: EnuState, stamp) -> bytes:
        """Orientation, body rates and acceleration (FLU); without body motion the rate and
        acceleration covariances say "not provided" (REP-145)."""
        if e.has_body_motion:
            return bytes(self._imu[True].fill(stamp=_stamp(stamp),
                                              orientation=_xyzw(e.orientation),
                                              rates=e.rates_body, acc=e.acc_body))
        return bytes(self._imu[False].fill(stamp=_stamp(stamp),
                                           orientation=_xyzw(e.orientation)))

    def nav_sat_fix(self, s, stamp) -> bytes:
        return fix_cdr(self._fix, s.pos_gps, stamp, self.gps_order)

    def transform(self, e: EnuState, stamp) -> bytes:
        """TFMessage of map → base frame."""
        return bytes(self._tf.fill(stamp=_stamp(stamp), transform=np.concatenate(
            [e.position, _xyzw(e.orientation)])))

    def collision(self, notice, stamp) -> bytes:
        """RflySimCollision; target_id −1 for the scene / unknown."""
        target = notice.target_id
        return bytes(self._collision.fill(
            stamp=_stamp(stamp), copter_id=int(notice.copter_id),
            target_id=int(target) if target is not None and target >= 0 else -1))


__all__ = ['EnuState', 'GPS_ORDERS', 'VehicleCdr', 'fix_template', 'fix_cdr']
