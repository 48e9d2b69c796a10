"""Measurement list, data type 0x2821 (spec §21, also §13; big-endian).

DeviceSpecificTime (µs since power-on, NTP seconds, NTP fraction), list name and group name
(NUL-terminated), UINT16 count, then typed measurements (:mod:`.typed_values`).  Keys as §13
lists them (:data:`KEYS`); unknown keys are kept as numbers.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ros_sim_bridge.core.binary import pack, unpack_from
from ros_sim_bridge.core.ntp import ntp_to_unix_ns
from . import registry
from .typed_values import encode_entries, read_cstring, read_entries

MEASUREMENT_LIST_2821 = 0x2821
NAME = 'ibeo_measurement_list'
KEYS = {1: 'longitudinal_velocity', 2: 'yaw_rate', 3: 'steering_wheel_angle',
        4: 'cross_acceleration', 5: 'steering_angle', 6: 'longitudinal_acceleration',
        7: 'roll_angle', 8: 'pitch_angle', 43: 'vertical_acceleration', 44: 'pitch_rate',
        45: 'roll_rate', 49: 'velocity_north', 50: 'velocity_west', 51: 'velocity_up',
        60: 'latitude', 61: 'longitude', 62: 'altitude', 67: 'yaw_angle', 70: 'utc_hours',
        71: 'utc_minutes', 72: 'utc_seconds', 73: 'utc_milliseconds', 79: 'utc_days',
        80: 'utc_months', 81: 'utc_years'}
_TIME = struct.Struct('>III')
_U16 = struct.Struct('>H')


@dataclass(frozen=True)
class MeasurementList:
    """``measurements``: [(key, type id, value)] in wire order."""
    microseconds: int = 0
    ntp_seconds: int = 0
    ntp_fraction: int = 0
    list_name: str = ''
    group_name: str = ''
    measurements: list = field(default_factory=list)

    DATA_TYPE = MEASUREMENT_LIST_2821

    @property
    def stamp_ns(self) -> int:
        return ntp_to_unix_ns(self.ntp_seconds, self.ntp_fraction)

    @property
    def ntp(self) -> int:
        """The list's time as one NTP64 (seconds in the high word)."""
        return (self.ntp_seconds << 32) | self.ntp_fraction

    def key_name(self, key: int) -> str:
        return KEYS.get(key, f'key_{key}')


def decode_measurement_list(body, header=None) -> MeasurementList:
    us, sec, frac = unpack_from(_TIME, body, 0, NAME, 'time_stamp')
    list_name, pos = read_cstring(body, 12, NAME, 'list_name')
    group_name, pos = read_cstring(body, pos, NAME, 'group_name')
    (count,) = unpack_from(_U16, body, pos, NAME, 'number_of_measurements')
    entries, _ = read_entries(body, pos + 2, count, NAME, 'measurements')
    return MeasurementList(us, sec, frac, list_name, group_name, entries)


def encode_measurement_list(ml: MeasurementList) -> bytes:
    return (pack(_TIME, (ml.microseconds, ml.ntp_seconds, ml.ntp_fraction), NAME)
            + ml.list_name.encode('ascii') + b'\0' + ml.group_name.encode('ascii') + b'\0'
            + pack(_U16, (len(ml.measurements),), NAME) + encode_entries(ml.measurements))


registry.register(MEASUREMENT_LIST_2821, 'measurement_list', decode_measurement_list,
                  record=MeasurementList, encode=encode_measurement_list, min_size=16)
