"""ibeo LUX / SICK LD-MRS scan data, data type 0x2202 (spec §3; little-endian).

Body = 44-byte scan header + ``scan points`` × 10-byte points.  Points are decoded in one go
into :data:`POINT_DTYPE` (layer/echo nibbles split, reserved flag bits masked, SUPPLEMENT
§3.3).  Every value stays in the unit of the §3 tables (the units rule): angles in ticks,
distances, echo widths and mounting positions in cm, the sync phase in 409.6 ns counts.  Their
factors to SI are in ``units.py``; Cartesian coordinates (layer-elevation table, 8-layer
mirror tilt) come from ``ros_sim_bridge/ibeo/geometry.py``.
"""
from __future__ import annotations

import dataclasses
import math
import struct
from dataclasses import dataclass, field

import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError, pack, records, unpack_from
from ros_sim_bridge.core.ntp import ntp64_is_unset, ntp64_to_unix_ns
from . import registry

DATA_TYPE = registry.SCAN
NAME = 'ibeo_scan'
TICKS_PER_ROTATION = 11520          # LUX: 1/32 degree per tick

_HEADER = struct.Struct('<HHHQQHhhHhhhhhhH')
HEADER_SIZE = _HEADER.size          # 44

#: Wire layout of one point (§3 "Scan point"), little-endian, 10 bytes.
WIRE_POINT_DTYPE = np.dtype([('layer_echo', 'u1'), ('flags', 'u1'), ('angle', '<i2'),
                             ('distance', '<u2'), ('echo_width', '<u2'), ('reserved', '<u2')])
assert WIRE_POINT_DTYPE.itemsize == 10

#: Decoded points (native byte order, spec units): layer 0..15 (low nibble), echo 0..15 (high
#: nibble), flags (low nibble only, see POINT_FLAG_*), horizontal angle in ticks, radial
#: distance in cm, echo pulse width in cm.
POINT_DTYPE = np.dtype([('layer', 'u1'), ('echo', 'u1'), ('flags', 'u1'),
                        ('angle_ticks', 'i2'), ('distance_cm', 'u2'), ('echo_width_cm', 'u2')])

POINT_FLAG_TRANSPARENT = 0x01
POINT_FLAG_CLUTTER = 0x02           # atmospheric
POINT_FLAG_GROUND = 0x04
POINT_FLAG_DIRT = 0x08
POINT_FLAG_MASK = 0x0F              # real LD-MRS sets reserved bits 0x40/0x50 (SUPPLEMENT §3.1)

SCANNER_STATUS_BITS = {
    0x0001: 'motor_on', 0x0002: 'laser_on', 0x0004: 'internal_feedback',
    0x0008: 'set_frequency_reached', 0x0010: 'external_sync_detected', 0x0020: 'sync_ok',
    0x0040: 'sync_master', 0x0100: 'epw_compensation_on', 0x0200: 'system_compensation_on',
    0x0400: 'start_pulse_compensation_on', 0x8000: 'upside_down',
}
STATUS_UPSIDE_DOWN = 0x8000

SCAN_FLAG_BITS = {0x0001: 'ground_labeled', 0x0002: 'dirt_labeled', 0x0004: 'rain_labeled',
                  0x0400: 'mirror_side_rear'}
SCAN_FLAG_MIRROR_SIDE = 0x0400      # bit 10: 0 = front (8-layer: facing down), 1 = rear

#: Layer elevations (deg) for layers 0..3, layer 0 lowest (libsick/MRPT/ViSP; SUPPLEMENT §3.2).
DEFAULT_LAYER_ELEVATIONS_DEG = (-1.2, -0.4, 0.4, 1.2)
#: Beam tilt that makes an 8-layer unit's two mirror sides interleave at 0.8 deg spacing at
#: h = 0 (inference; read the real value from parameter 0x3302 when you can).
DEFAULT_8_LAYER_BEAM_TILT_RAD = math.radians(1.6)


def bit_names(value: int, table: dict) -> list[str]:
    return [name for bit, name in table.items() if value & bit]


@dataclass(frozen=True, eq=False)
class LuxScan:
    """One 0x2202 scan.  Angles are in ticks, positions in cm, the sync phase offset in
    409.6 ns counts, times NTP64, as the §3 table states (SI: ``units.ticks_to_rad``,
    ``units.CM``, ``units.SYNC_PHASE_TO_SI``).  ``points`` is an array of :data:`POINT_DTYPE`."""
    scan_number: int
    scanner_status: int
    sync_phase_offset: int              # × 409.6 ns
    start_ntp: int
    end_ntp: int
    ticks_per_rotation: int
    start_angle_ticks: int
    end_angle_ticks: int
    mounting_yaw_ticks: int = 0
    mounting_pitch_ticks: int = 0
    mounting_roll_ticks: int = 0
    mounting_x_cm: int = 0
    mounting_y_cm: int = 0
    mounting_z_cm: int = 0
    flags: int = 0
    points: np.ndarray = field(default_factory=lambda: np.zeros(0, POINT_DTYPE))

    DATA_TYPE = DATA_TYPE

    @property
    def mirror_side(self) -> int:
        """0 = front, 1 = rear (bit 10).  Toggles on 4-layer units too: not an 8-layer test."""
        return 1 if self.flags & SCAN_FLAG_MIRROR_SIDE else 0

    @property
    def upside_down(self) -> bool:
        return bool(self.scanner_status & STATUS_UPSIDE_DOWN)

    @property
    def start_ns(self) -> int:
        return ntp64_to_unix_ns(self.start_ntp)

    @property
    def end_ns(self) -> int:
        return ntp64_to_unix_ns(self.end_ntp)

    @property
    def duration_s(self) -> float:
        """End − start time in s (NTP64 is seconds in 32.32 fixed point); NaN when either time
        is no time at all (:func:`~ros_sim_bridge.core.ntp.ntp64_is_unset`: 0 or all ones) or
        the end is before the start: no scan lasts for a wrong time."""
        start, end = self.start_ntp, self.end_ntp
        if ntp64_is_unset(start) or ntp64_is_unset(end) or end < start:
            return float('nan')
        return (end - start) / 4294967296.0

    @property
    def status_names(self) -> list[str]:
        return bit_names(self.scanner_status, SCANNER_STATUS_BITS)

    @property
    def flag_names(self) -> list[str]:
        return bit_names(self.flags, SCAN_FLAG_BITS)


#: the points of a scan header decoded without them (shared: it holds nothing to change)
_NO_POINTS = np.zeros(0, POINT_DTYPE)
_NO_POINTS.flags.writeable = False


def decode_scan_wire(body, header=None) -> tuple[LuxScan, np.ndarray]:
    """(scan header as a LuxScan whose ``points`` is empty, the points as a zero-copy
    :data:`WIRE_POINT_DTYPE` view of ``body``): the fast path for drivers that convert the
    wire points straight to their output layout.  Same checks as :func:`decode_scan` (mask the
    flag byte with :data:`POINT_FLAG_MASK`, split layer/echo nibbles yourself)."""
    (number, status, sync, start, end, ticks, a0, a1, count, yaw, pitch, roll, mx, my, mz,
     flags) = unpack_from(_HEADER, body, 0, NAME, 'scan_header')
    if ticks == 0:
        raise CodecError(NAME, 'angle ticks per rotation is 0', field='ticks_per_rotation',
                         offset=22, kind=BAD_VALUE)
    wire = records(WIRE_POINT_DTYPE, body, HEADER_SIZE, count, NAME, 'points')
    return LuxScan(number, status, sync, start, end, ticks, a0, a1, yaw, pitch, roll, mx, my, mz,
                   flags, _NO_POINTS), wire


def decode_scan(body, header=None) -> LuxScan:
    """Decode a 0x2202 body (§3).  TRUNCATED if the point count exceeds the body; trailing
    bytes after the last point are ignored."""
    head, wire = decode_scan_wire(body, header)
    count = len(wire)
    points = np.empty(count, POINT_DTYPE)
    le = wire['layer_echo']
    points['layer'] = le & 0x0F
    points['echo'] = le >> 4
    points['flags'] = wire['flags'] & POINT_FLAG_MASK
    points['angle_ticks'] = wire['angle']
    points['distance_cm'] = wire['distance']
    points['echo_width_cm'] = wire['echo_width']
    return dataclasses.replace(head, points=points)


def encode_scan(scan: LuxScan) -> bytes:
    """The 0x2202 body of ``scan`` (points from :data:`POINT_DTYPE`, reserved bytes zero)."""
    pts = np.asarray(scan.points)
    if len(pts) > 0xFFFF:
        raise CodecError(NAME, f'{len(pts)} points do not fit the 16-bit count', field='points')
    head = pack(_HEADER, (scan.scan_number, scan.scanner_status, scan.sync_phase_offset,
                          scan.start_ntp, scan.end_ntp, scan.ticks_per_rotation,
                          scan.start_angle_ticks, scan.end_angle_ticks, len(pts),
                          scan.mounting_yaw_ticks, scan.mounting_pitch_ticks,
                          scan.mounting_roll_ticks, scan.mounting_x_cm, scan.mounting_y_cm,
                          scan.mounting_z_cm, scan.flags), NAME)
    wire = np.zeros(len(pts), WIRE_POINT_DTYPE)
    wire['layer_echo'] = (pts['layer'] & 0x0F) | ((pts['echo'] & 0x0F) << 4)
    wire['flags'] = pts['flags']
    wire['angle'] = pts['angle_ticks']
    wire['distance'] = pts['distance_cm']
    wire['echo_width'] = pts['echo_width_cm']
    return head + wire.tobytes()


registry.register(DATA_TYPE, 'lux_scan', decode_scan, record=LuxScan, encode=encode_scan,
                  min_size=HEADER_SIZE, max_size=HEADER_SIZE + 0xFFFF * 10 + 64)
