"""GPS position 0x2604 (PositionWGS84, spec §22) and GpsImu 0x9001 (spec §33); big-endian
(§33 states it; §22 does not, and is read in the ECU's network byte order like the rest).

Angles are radians (latitude/longitude too, as the tables state; NavSatFix's degrees are made
by ``ibeo/ros/ecu_conversions.py``), course and yaw relative to north (0 = north, π/2 = west),
sigmas in metres; :data:`MEASUREMENT_TIMESTAMP` is the 42-byte Timestamp block of
0x9001/0x9002 (five NTP64 times and the clock type).
"""
from __future__ import annotations

from dataclasses import dataclass

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from .fixed_layout import FixedLayout

GPS_2604 = 0x2604
GPS_IMU_9001 = 0x9001
#: Format of the §33/§34 Timestamp block: measurement/received time (ECU), raw device time,
#: measurement/received time (external clock), clock id, clock name.
MEASUREMENT_TIMESTAMP = '5QBB'
SOURCE_TYPES_2604 = {0: 'unknown', 1: 'gps_sps', 2: 'gps_pps', 3: 'gps_sbas',
                     4: 'gps_sbas_omnistar_vbs', 5: 'gps_sbas_omnistar_hp', 6: 'gps_gbas',
                     7: 'gps_gbas_rtk_float', 8: 'gps_gbas_rtk_integer', 9: 'imu',
                     10: 'landmark_positioning', 11: 'manual'}
SOURCES_9001 = {0: 'can', 1: 'xsens_imu', 2: 'oxts_rt', 3: 'genesys_adma', 4: 'spatial_dual',
                5: 'tfc', 6: 'vbox3i', 99: 'unknown'}
INS_QUALITY = {0: 'unknown', 1: 'gps', 2: 'dgps_course', 3: 'dgps_precise'}


@dataclass(frozen=True)
class PositionWgs84:
    """0x2604 (§22): µs since startup, NTP64 time, device id, latitude/longitude [rad],
    altitude MSL [m], their sigmas [m], course and yaw angles [rad] with sigmas, source type."""
    us_since_startup: int = 0
    timestamp_ntp: int = 0
    device_id: int = 0
    latitude: float = 0.0
    longitude: float = 0.0
    altitude: float = 0.0
    latitude_sigma: float = 0.0
    longitude_sigma: float = 0.0
    altitude_sigma: float = 0.0
    course_angle: float = 0.0
    course_angle_sigma: float = 0.0
    yaw_angle: float = 0.0
    yaw_angle_sigma: float = 0.0
    source_type: int = 0

    DATA_TYPE = GPS_2604

    @property
    def stamp_ns(self) -> int:
        return ntp64_to_unix_ns(self.timestamp_ntp)


_GPS_IMU_FIELDS = ('latitude', 'latitude_sigma', 'longitude', 'longitude_sigma', 'altitude',
                   'altitude_sigma', 'course_angle', 'course_angle_sigma', 'yaw_angle',
                   'yaw_angle_sigma', 'pitch_angle', 'pitch_angle_sigma', 'roll_angle',
                   'roll_angle_sigma', 'cross_acceleration', 'cross_acceleration_sigma',
                   'longitudinal_acceleration', 'longitudinal_acceleration_sigma',
                   'vertical_acceleration', 'vertical_acceleration_sigma', 'velocity_north',
                   'velocity_north_sigma', 'velocity_west', 'velocity_west_sigma', 'velocity_up',
                   'velocity_up_sigma', 'velocity_x', 'velocity_x_sigma', 'velocity_y',
                   'velocity_y_sigma', 'velocity_z', 'velocity_z_sigma', 'roll_rate',
                   'roll_rate_sigma', 'yaw_rate', 'yaw_rate_sigma', 'pitch_rate',
                   'pitch_rate_sigma', 'gps_status')


@dataclass(frozen=True)
class GpsImu:
    """0x9001 (§33): 39 doubles (position rad/m, angles rad, accelerations m/s², velocities
    m/s, rates rad/s, each with its sigma; GPS status), satellites, five dilutions of
    precision, the Timestamp block, source and INS quality."""
    latitude: float = 0.0
    latitude_sigma: float = 0.0
    longitude: float = 0.0
    longitude_sigma: float = 0.0
    altitude: float = 0.0
    altitude_sigma: float = 0.0
    course_angle: float = 0.0
    course_angle_sigma: float = 0.0
    yaw_angle: float = 0.0
    yaw_angle_sigma: float = 0.0
    pitch_angle: float = 0.0
    pitch_angle_sigma: float = 0.0
    roll_angle: float = 0.0
    roll_angle_sigma: float = 0.0
    cross_acceleration: float = 0.0
    cross_acceleration_sigma: float = 0.0
    longitudinal_acceleration: float = 0.0
    longitudinal_acceleration_sigma: float = 0.0
    vertical_acceleration: float = 0.0
    vertical_acceleration_sigma: float = 0.0
    velocity_north: float = 0.0
    velocity_north_sigma: float = 0.0
    velocity_west: float = 0.0
    velocity_west_sigma: float = 0.0
    velocity_up: float = 0.0
    velocity_up_sigma: float = 0.0
    velocity_x: float = 0.0
    velocity_x_sigma: float = 0.0
    velocity_y: float = 0.0
    velocity_y_sigma: float = 0.0
    velocity_z: float = 0.0
    velocity_z_sigma: float = 0.0
    roll_rate: float = 0.0
    roll_rate_sigma: float = 0.0
    yaw_rate: float = 0.0
    yaw_rate_sigma: float = 0.0
    pitch_rate: float = 0.0
    pitch_rate_sigma: float = 0.0
    gps_status: float = 0.0
    satellites: int = 0
    dop_x: float = 0.0
    dop_y: float = 0.0
    dop_z: float = 0.0
    dop_vertical: float = 0.0
    dop_position: float = 0.0
    measurement_time_ecu_ntp: int = 0
    received_time_ecu_ntp: int = 0
    raw_device_time_ntp: int = 0
    measurement_time_ntp: int = 0
    received_time_ntp: int = 0
    clock_id: int = 0
    clock_name: int = 0
    source: int = 99
    ins_quality: int = 0

    DATA_TYPE = GPS_IMU_9001

    @property
    def stamp_ns(self) -> int:
        """Measurement time in the ECU time base (Unix ns)."""
        return ntp64_to_unix_ns(self.measurement_time_ecu_ntp)


LAYOUT_2604 = FixedLayout(GPS_2604, 'gps_wgs84', '>IQB10d32xH', PositionWgs84).register()
LAYOUT_9001 = FixedLayout(GPS_IMU_9001, 'gps_imu', '>39dB5d' + MEASUREMENT_TIMESTAMP + 'BB16x',
                          GpsImu).register()
assert (LAYOUT_2604.size, LAYOUT_9001.size) == (127, 413)
