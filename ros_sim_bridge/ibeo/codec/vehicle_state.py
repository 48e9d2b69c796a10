"""ibeo LUX vehicle state, data type 0x2805 (spec §5; little-endian, 46 bytes).

Computed by the LUX from CAN data.  The fixed-point steps of the spec's table (0.01 m/s,
0.001 rad, ...) are undone, which gives SI (m, m/s, rad, rad/s); the time difference stays in
the table's ms (factor in :mod:`.units`, applied by ``ibeo/ros/conversions.py``).
Validity rule (§5): invalid if any error flag other than 0x0100 / 0x0200 is set.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import CodecError, pack, unpack_from
from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from . import registry
from .scan import bit_names

DATA_TYPE = registry.VEHICLE_STATE
NAME = 'ibeo_vehicle_state'

_BODY = struct.Struct('<QHHhhhHiihHhhhHhI')
SIZE = _BODY.size   # 46

ERROR_FLAGS = {
    0x0001: 'axle_distance_not_set',
    0x0100: 'steering_wheel_angle_stale',
    0x0200: 'front_wheel_angle_stale',
    0x0800: 'no_can_data',
}
#: Flags that do not invalidate the state (steering/front wheel angle are not needed).
NON_FATAL_FLAGS = 0x0100 | 0x0200


@dataclass(frozen=True)
class LuxVehicleState:
    """0x2805 in SI units."""
    timestamp_ntp: int
    scan_number: int
    error_flags: int
    longitudinal_velocity: float     # m/s (wire 0.01 m/s)
    steering_wheel_angle: float      # rad (wire 0.001 rad)
    front_wheel_angle: float         # rad (wire 0.0001 rad)
    x: float                         # m (wire 0.01 m, int32)
    y: float                         # m
    course_angle: float              # rad (wire 0.0001 rad)
    time_difference: float           # ms, as the spec's table (SI: units.VEHICLE_STATE_TO_SI)
    x_difference: float              # m (wire 0.001 m)
    y_difference: float              # m
    heading_difference: float        # rad (wire 0.0001 rad)
    yaw_rate: float                  # rad/s (wire 0.0001 rad/s; firmware >= 2.5.00)

    DATA_TYPE = DATA_TYPE

    @property
    def valid(self) -> bool:
        return (self.error_flags & ~NON_FATAL_FLAGS & 0xFFFF) == 0

    @property
    def error_names(self) -> list[str]:
        names = bit_names(self.error_flags, ERROR_FLAGS)
        other = self.error_flags & ~sum(ERROR_FLAGS) & 0xFFFF
        if other:
            names.append(f'unknown_0x{other:04X}')
        return names

    @property
    def timestamp_ns(self) -> int:
        return ntp64_to_unix_ns(self.timestamp_ntp)


def decode_vehicle_state(body, header=None) -> LuxVehicleState:
    """Decode a 0x2805 body (§5); trailing bytes beyond 46 are ignored."""
    (ts, scan, err, vel, steer, front, _r1, x, y, course, dt, dx, dy, dh, _r2, yaw,
     _r3) = unpack_from(_BODY, body, 0, NAME, 'vehicle_state')
    return LuxVehicleState(ts, scan, err, vel * 0.01, steer * 0.001, front * 1e-4, x * 0.01,
                           y * 0.01, course * 1e-4, float(dt), dx * 1e-3, dy * 1e-3, dh * 1e-4,
                           yaw * 1e-4)


def _i(value: float, scale: float, name: str) -> int:
    try:
        return int(round(value / scale))
    except (ValueError, OverflowError):
        raise CodecError(NAME, f'{value!r} is not a number', field=name) from None


def encode_vehicle_state(s: LuxVehicleState) -> bytes:
    return pack(_BODY, (s.timestamp_ntp, s.scan_number, s.error_flags,
                        _i(s.longitudinal_velocity, 0.01, 'longitudinal_velocity'),
                        _i(s.steering_wheel_angle, 0.001, 'steering_wheel_angle'),
                        _i(s.front_wheel_angle, 1e-4, 'front_wheel_angle'), 0,
                        _i(s.x, 0.01, 'x'), _i(s.y, 0.01, 'y'),
                        _i(s.course_angle, 1e-4, 'course_angle'),
                        _i(s.time_difference, 1, 'time_difference'),
                        _i(s.x_difference, 1e-3, 'x_difference'),
                        _i(s.y_difference, 1e-3, 'y_difference'),
                        _i(s.heading_difference, 1e-4, 'heading_difference'), 0,
                        _i(s.yaw_rate, 1e-4, 'yaw_rate'), 0), NAME)


registry.register(DATA_TYPE, 'lux_vehicle_state', decode_vehicle_state, record=LuxVehicleState,
                  encode=encode_vehicle_state, min_size=SIZE, max_size=SIZE + 64)
