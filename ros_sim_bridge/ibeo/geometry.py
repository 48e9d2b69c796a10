"""ibeo LUX / SICK LD-MRS scan geometry in SI (spec §3, SUPPLEMENT §3.2), ROS-free.

The codec (``codec/scan.py``) keeps a 0x2202 scan in its table's units: angles in ticks,
distances and echo widths in cm.  This module turns them into the scanner frame (ISO 8855 =
REP-103 FLU: x forward, y left, z up) with the factors of ``codec/units.py``
(:func:`~.codec.units.ticks_to_rad`, :data:`~.codec.units.CM`): the layer-elevation table, the
8-layer mirror-side tilt, x/y/z per point, and :data:`CLOUD_DTYPE`, the published point layout.
It is the float64 reference for the driver's point builder (``ros/conversions.CloudBuilder``,
which applies the same factors in float32), and the emulator casts its rays with it.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.codec.scan import (DEFAULT_8_LAYER_BEAM_TILT_RAD,
                                            DEFAULT_LAYER_ELEVATIONS_DEG, POINT_FLAG_MASK,
                                            TICKS_PER_ROTATION, LuxScan)

__all__ = ['CLOUD_DTYPE', 'mirror_side_offset', 'layer_elevations', 'points_xyz', 'scan_xyz',
           'scan_cloud']


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
    """(xyz float32 (N, 3) in m, horizontal angle float32 (N,) in rad) of the codec's
    POINT_DTYPE points (ticks, cm).

    x = r·cos(e)·cos(h), y = r·cos(e)·sin(h), z = r·sin(e), scanner frame (not the mounting
    pose: express that as TF).  See :func:`layer_elevations` for the 8-layer options.
    """
    h = units.ticks_to_rad(points['angle_ticks'].astype(np.float64), ticks_per_rotation)
    r = points['distance_cm'].astype(np.float64) * units.CM
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
    out['echo_width'] = pts['echo_width_cm'] * np.float32(units.CM)
    layer = pts['layer']
    if kwargs.get('eight_layer'):
        layer = layer + np.uint8(4 * scan.mirror_side)
    out['layer'] = layer
    out['echo'] = pts['echo']
    out['flags'] = pts['flags'] & POINT_FLAG_MASK
    return out
