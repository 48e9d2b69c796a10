"""Odometry, data type 0x9002 (spec §34; big-endian): unprocessed CAN motion data."""
from __future__ import annotations

from dataclasses import dataclass

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from .fixed_layout import FixedLayout
from .gps_imu import MEASUREMENT_TIMESTAMP

ODOMETRY_9002 = 0x9002


@dataclass(frozen=True)
class EcuOdometry:
    """§34: steering angle [rad], steering wheel angle (the document: [0.001 rad]; passed
    through as sent) and its rate, wheel speeds FL/FR/RL/RR [m/s], wheel circumference [m],
    vehicle velocity [m/s], acceleration [m/s²], yaw rate [rad/s], the Timestamp block."""
    steering_angle: float = 0.0
    steering_wheel_angle: float = 0.0
    steering_wheel_angle_velocity: float = 0.0
    wheel_speed_fl: float = 0.0
    wheel_speed_fr: float = 0.0
    wheel_speed_rl: float = 0.0
    wheel_speed_rr: float = 0.0
    wheel_circumference: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0
    yaw_rate: float = 0.0
    measurement_time_ecu_ntp: int = 0
    received_time_ecu_ntp: int = 0
    raw_device_time_ntp: int = 0
    measurement_time_ntp: int = 0
    received_time_ntp: int = 0
    clock_id: int = 0
    clock_name: int = 0

    DATA_TYPE = ODOMETRY_9002

    @property
    def stamp_ns(self) -> int:
        return ntp64_to_unix_ns(self.measurement_time_ecu_ntp)


LAYOUT_9002 = FixedLayout(ODOMETRY_9002, 'odometry', '>11d' + MEASUREMENT_TIMESTAMP + '16x',
                          EcuOdometry).register()
assert LAYOUT_9002.size == 146
