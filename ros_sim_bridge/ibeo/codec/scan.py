"""ibeo LUX / SICK LD-MRS scan data, data type 0x2202 (spec §3; little-endian).

Body = 44-byte scan header + ``scan points`` × 10-byte points.  Points are decoded in one go
into :data:`POINT_DTYPE` (layer/echo nibbles split, reserved flag bits masked, SUPPLEMENT
§3.3).  :func:`points_xyz` / :func:`scan_xyz` give Cartesian coordinates in the scanner frame
(ISO 8855: x forward, y left, z up) from a layer-elevation table (SUPPLEMENT §3.2), including
the mirror-side tilt of 8-layer units.
"""
from __future__ import annotations

import dataclasses
import math
import struct
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError, pack, records, unpack_from
from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from . import registry

DATA_TYPE = registry.SCAN
NAME = 'ibeo_scan'
TICKS_PER_ROTATION = 11520          # LUX: 1/32 degree per tick
SYNC_PHASE_UNIT_S = 409.6e-9        # sync phase offset unit (§3)

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
    """One 0x2202 scan.  Angles are in ticks, positions in cm, times NTP64 as on the wire;
    properties give SI values.  ``points`` is an array of :data:`POINT_DTYPE`."""
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

    # --- SI views -------------------------------------------------------------------------
    def ticks_to_rad(self, ticks) -> float:
        return 2.0 * math.pi * ticks / self.ticks_per_rotation

    @property
    def start_angle(self) -> float:
        """Start angle (rad)."""
        return self.ticks_to_rad(self.start_angle_ticks)

    @property
    def end_angle(self) -> float:
        """End angle (rad)."""
        return self.ticks_to_rad(self.end_angle_ticks)

    @property
    def mirror_side(self) -> int:
        """0 = front, 1 = rear (bit 10).  Toggles on 4-layer units too: not an 8-layer test."""
        return 1 if self.flags & SCAN_FLAG_MIRROR_SIDE else 0

    @property
    def upside_down(self) -> bool:
        return bool(self.scanner_status & STATUS_UPSIDE_DOWN)

    @property
    def mounting_position_m(self) -> tuple[float, float, float]:
        return (self.mounting_x_cm / 100.0, self.mounting_y_cm / 100.0, self.mounting_z_cm / 100.0)

    @property
    def mounting_rpy_rad(self) -> tuple[float, float, float]:
        """(roll, pitch, yaw) in rad; apply yaw → pitch → roll → translation (§3)."""
        return (self.ticks_to_rad(self.mounting_roll_ticks),
                self.ticks_to_rad(self.mounting_pitch_ticks),
                self.ticks_to_rad(self.mounting_yaw_ticks))

    @property
    def start_ns(self) -> int:
        return ntp64_to_unix_ns(self.start_ntp)

    @property
    def end_ns(self) -> int:
        return ntp64_to_unix_ns(self.end_ntp)

    @property
    def duration_s(self) -> float:
        return (self.end_ntp - self.start_ntp) / 4294967296.0

    @property
    def sync_phase_offset_s(self) -> float:
        return self.sync_phase_offset * SYNC_PHASE_UNIT_S

    @property
    def status_names(self) -> list[str]:
        return bit_names(self.scanner_status, SCANNER_STATUS_BITS)

    @property
    def flag_names(self) -> list[str]:
        return bit_names(self.flags, SCAN_FLAG_BITS)


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
                   flags, np.zeros(0, POINT_DTYPE)), wire


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


# --- geometry ------------------------------------------------------------------------------

def mirror_side_offset(h_angle, mirror_side, beam_tilt_rad: float,
                       upside_down: bool = False) -> np.ndarray:
    """Elevation offset (rad, up positive) of an 8-layer unit's mirror side at horizontal angle
    ``h_angle`` (rad), SUPPLEMENT §3.2: effective tilt = beam_tilt/2·√2·sin(h/2 − π/4); the
    front side (``mirror_side`` 0) is pitched down and the rear side (1) up by 2·effective
    tilt, sides swapped when upside down.  ``mirror_side`` is a scalar or one per point."""
    h = np.asarray(h_angle, dtype=np.float64)
    eff = beam_tilt_rad / 2.0 * math.sqrt(2.0) * np.sin(0.5 * h - math.pi / 4.0)
    direction = np.where(np.asarray(mirror_side) != 0, 1.0, -1.0)
    if upside_down:
        direction = -direction
    # The pitch offset (down positive) is direction·2·eff; eff < 0 around h = 0, so the
    # front side (direction −1) looks down and the rear side up.
    return -direction * 2.0 * eff


def layer_elevations(layer, h_angle, *, layer_elevations_deg: Sequence[float] =
                     DEFAULT_LAYER_ELEVATIONS_DEG, mirror_side=None, beam_tilt_rad: float = 0.0,
                     upside_down: bool = False) -> np.ndarray:
    """Elevation (rad, up positive) of each point from its layer and horizontal angle (rad).

    With ``mirror_side`` (0 front / 1 rear, scalar or per point) and a non-zero
    ``beam_tilt_rad`` (8-layer units, parameter 0x3302) the :func:`mirror_side_offset` is
    added.  Layers beyond the table get NaN.
    """
    table = np.radians(np.asarray(layer_elevations_deg, dtype=np.float64))
    layer = np.asarray(layer)
    inside = layer < len(table)
    elev = np.where(inside, table[np.minimum(layer, len(table) - 1)], np.nan)
    if mirror_side is not None and beam_tilt_rad:
        elev = elev + mirror_side_offset(h_angle, mirror_side, beam_tilt_rad, upside_down)
    return elev


def points_xyz(points: np.ndarray, ticks_per_rotation: int = TICKS_PER_ROTATION, *,
               layer_elevations_deg: Sequence[float] = DEFAULT_LAYER_ELEVATIONS_DEG,
               mirror_side=None, beam_tilt_rad: float = 0.0, upside_down: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
    """(xyz float32 (N, 3) in m, horizontal angle float32 (N,) in rad) of POINT_DTYPE points.

    x = r·cos(e)·cos(h), y = r·cos(e)·sin(h), z = r·sin(e), scanner frame (not the mounting
    pose: express that as TF).  See :func:`layer_elevations` for the 8-layer options.
    """
    h = points['angle_ticks'].astype(np.float64) * (2.0 * math.pi / ticks_per_rotation)
    r = points['distance_cm'].astype(np.float64) * 0.01
    e = layer_elevations(points['layer'], h, layer_elevations_deg=layer_elevations_deg,
                         mirror_side=mirror_side, beam_tilt_rad=beam_tilt_rad,
                         upside_down=upside_down)
    rc = r * np.cos(e)
    xyz = np.empty((len(points), 3), np.float32)
    xyz[:, 0] = rc * np.cos(h)
    xyz[:, 1] = rc * np.sin(h)
    xyz[:, 2] = r * np.sin(e)
    return xyz, h.astype(np.float32)


def scan_xyz(scan: LuxScan, *, layer_elevations_deg: Sequence[float] =
             DEFAULT_LAYER_ELEVATIONS_DEG, eight_layer: bool = False,
             beam_tilt_rad: float = DEFAULT_8_LAYER_BEAM_TILT_RAD,
             upside_down: Optional[bool] = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`points_xyz` with the scan's ticks/rotation, mirror side and upside-down bit.

    ``eight_layer`` must come from configuration or DeviceType 0x18/0x19 (parameter 0x3301):
    the mirror-side bit alone does not mean 8 layers (SUPPLEMENT §3.1).
    """
    return points_xyz(scan.points, scan.ticks_per_rotation,
                      layer_elevations_deg=layer_elevations_deg,
                      mirror_side=scan.mirror_side if eight_layer else None,
                      beam_tilt_rad=beam_tilt_rad if eight_layer else 0.0,
                      upside_down=scan.upside_down if upside_down is None else upside_down)


#: The published point layout, 24 bytes (the one definition; the driver's builder writes it):
#: x, y, z (m, scanner frame FLU), horizontal_angle (rad), echo_width (m), layer, echo,
#: flags (low nibble of the wire flags), one zero pad byte.
CLOUD_DTYPE = np.dtype({
    'names': ['x', 'y', 'z', 'horizontal_angle', 'echo_width', 'layer', 'echo', 'flags'],
    'formats': ['<f4', '<f4', '<f4', '<f4', '<f4', 'u1', 'u1', 'u1'],
    'offsets': [0, 4, 8, 12, 16, 20, 21, 22],
    'itemsize': 24})


def scan_cloud(scan: LuxScan, **kwargs) -> np.ndarray:
    """Points as :data:`CLOUD_DTYPE` (m, rad, echo width in m); kwargs as :func:`scan_xyz`.

    With an 8-layer unit the layer field is 0..7: ``layer + 4·mirror_side``, ordered by
    elevation at h = 0 only when the front side is the lower one (default tilt)."""
    xyz, h = scan_xyz(scan, **kwargs)
    pts = scan.points
    out = np.zeros(len(pts), CLOUD_DTYPE)
    out['x'], out['y'], out['z'] = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    out['horizontal_angle'] = h
    out['echo_width'] = pts['echo_width_cm'] * np.float32(0.01)
    layer = pts['layer']
    if kwargs.get('eight_layer'):
        layer = layer + np.uint8(4 * scan.mirror_side)
    out['layer'] = layer
    out['echo'] = pts['echo']
    out['flags'] = pts['flags'] & POINT_FLAG_MASK
    return out


registry.register(DATA_TYPE, 'lux_scan', decode_scan, record=LuxScan, encode=encode_scan,
                  min_size=HEADER_SIZE, max_size=HEADER_SIZE + 0xFFFF * 10 + 64)
