"""Ibeo FUSION SYSTEM / ECU vehicle states 0x2806, 0x2807, 0x2808 (spec §15–§17).

Byte order: the ECU's network byte order (big-endian, as every ECU type of the document;
§15–§17 do not repeat it).  ISO 8855 vehicle frame (x forward, y left), in the units the
tables state (the units rule): SI except the 0x2806/0x2807 distances from the origin, which stay
INT32 in 1/10 mm (``units.ECU_VEHICLE_STATE_TO_SI`` has their factor to m), and the 0x2808
latitude/longitude in deg.

0x2808: the document gives latitude/longitude as DOUBLE [deg] but altitude as 4 bytes at
offset 40 (DOUBLE in the type column): the byte count and the following offsets only fit a
FLOAT32, which is what is decoded.
"""
from __future__ import annotations

from dataclasses import dataclass

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from .fixed_layout import FixedLayout

VEHICLE_STATE_2806 = 0x2806
VEHICLE_STATE_2807 = 0x2807
VEHICLE_STATE_2808 = 0x2808
SOURCE_CAN, SOURCE_GPS, SOURCE_IMU = 0x1, 0x2, 0x4     # 0x2808 source bits


@dataclass(frozen=True)
class EcuVehicleState2806:
    """§15: timestamp NTP64, distance x/y [1/10 mm], course angle [rad], longitudinal velocity
    [m/s], yaw rate [rad/s], steering wheel angle [rad], front wheel angle [rad], vehicle
    width, front-axle-to-front, rear-to-front axle, rear-axle-to-rear [m], steer ratio
    polynomial s0..s3."""
    timestamp_ntp: int = 0
    distance_x: int = 0
    distance_y: int = 0
    course_angle: float = 0.0
    longitudinal_velocity: float = 0.0
    yaw_rate: float = 0.0
    steering_wheel_angle: float = 0.0
    front_wheel_angle: float = 0.0
    vehicle_width: float = 0.0
    front_axle_to_front: float = 0.0
    rear_axle_to_front_axle: float = 0.0
    rear_axle_to_rear: float = 0.0
    steer_ratio_s0: float = 0.0
    steer_ratio_s1: float = 0.0
    steer_ratio_s2: float = 0.0
    steer_ratio_s3: float = 0.0

    DATA_TYPE = VEHICLE_STATE_2806

    @property
    def stamp_ns(self) -> int:
        return ntp64_to_unix_ns(self.timestamp_ntp)


@dataclass(frozen=True)
class EcuVehicleState2807(EcuVehicleState2806):
    """§16: 0x2806 + longitudinal acceleration [m/s²]."""
    longitudinal_acceleration: float = 0.0
    DATA_TYPE = VEHICLE_STATE_2807


@dataclass(frozen=True)
class EcuVehicleState2808:
    """§17: sources (bits CAN/GPS/IMU), WGS84 latitude/longitude [deg], altitude, position
    sigmas [m] and correlation, course/heading angles (north = 0) [rad] and their sigmas,
    longitudinal velocity, yaw rate, longitudinal and cross accelerations with sigmas, steer
    and steering wheel angles [rad], vehicle dimensions [m], steer ratio polynomial."""
    timestamp_ntp: int = 0
    sources: int = 0
    latitude_deg: float = 0.0
    longitude_deg: float = 0.0
    altitude: float = 0.0
    sigma_x: float = 0.0
    sigma_y: float = 0.0
    position_correlation_xy: float = 0.0
    course_angle: float = 0.0
    course_angle_sigma: float = 0.0
    heading_angle: float = 0.0
    heading_angle_sigma: float = 0.0
    longitudinal_velocity: float = 0.0
    longitudinal_velocity_sigma: float = 0.0
    yaw_rate: float = 0.0
    yaw_rate_sigma: float = 0.0
    longitudinal_acceleration: float = 0.0
    longitudinal_acceleration_sigma: float = 0.0
    cross_acceleration: float = 0.0
    cross_acceleration_sigma: float = 0.0
    steer_angle: float = 0.0
    steering_wheel_angle: float = 0.0
    vehicle_width: float = 0.0
    front_axle_to_front: float = 0.0
    rear_axle_to_front_axle: float = 0.0
    rear_axle_to_rear: float = 0.0
    steer_ratio_s0: float = 0.0
    steer_ratio_s1: float = 0.0
    steer_ratio_s2: float = 0.0
    steer_ratio_s3: float = 0.0

    DATA_TYPE = VEHICLE_STATE_2808

    @property
    def stamp_ns(self) -> int:
        return ntp64_to_unix_ns(self.timestamp_ntp)


_2806 = '>4xQiiffff4xf2xf4xfff4xffff'
LAYOUT_2806 = FixedLayout(VEHICLE_STATE_2806, 'ecu_vehicle_state_2806', _2806,
                          EcuVehicleState2806).register()
LAYOUT_2807 = FixedLayout(VEHICLE_STATE_2807, 'ecu_vehicle_state_2807', _2806 + 'f',
                          EcuVehicleState2807).register()
LAYOUT_2808 = FixedLayout(VEHICLE_STATE_2808, 'ecu_vehicle_state_2808',
                          '>4xQH2xd4xd4xf4x8xf8xf8xf8xffff16x11f4xfff4xffff',
                          EcuVehicleState2808).register()
assert (LAYOUT_2806.size, LAYOUT_2807.size, LAYOUT_2808.size) == (86, 90, 204)
