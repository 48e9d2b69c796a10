"""The ibeo wire's units and their factors to SI (the units rule: README, "Units rule").

The codec decodes every field in the unit the spec's table names for it (ibeo-lux-interface.txt
§4 "Object: content": positions, sizes and sigmas in cm, velocities in cm/s, the box orientation
in deg after undoing its 1/100 deg fixed point, the relative timestamp in ms).
``ibeo/ros/conversions.py`` applies :data:`OBJECT_TO_SI` on the way to ROS; encoders take the
spec's units, and :data:`OBJECT_FROM_SI` turns SI values (e.g. a simulated scene) back into them.
The table lives here, ROS-free, so offline tools convert with the same factors.
"""
from __future__ import annotations

import math

import numpy as np

CM = 0.01                      # m per cm (also m/s per cm/s)
MS = 1e-3                      # s per ms
DEG = math.pi / 180.0          # rad per deg

#: LUX 0x2221 object field (OBJECT_DTYPE name) → factor from its wire unit to SI.  A field not
#: listed is unitless (ids, ages in scans, classes) and passed through.
OBJECT_TO_SI = {
    'relative_time': MS,
    **{name: CM for name in (
        'reference_x', 'reference_y', 'reference_sigma_x', 'reference_sigma_y',
        'closest_x', 'closest_y', 'bbox_center_x', 'bbox_center_y', 'bbox_size_x', 'bbox_size_y',
        'box_center_x', 'box_center_y', 'box_size_x', 'box_size_y',
        'abs_velocity_x', 'abs_velocity_y', 'abs_velocity_sigma_x', 'abs_velocity_sigma_y',
        'rel_velocity_x', 'rel_velocity_y')},
    'box_orientation': DEG,
}
#: The inverse factors (SI → wire unit), exact constants rather than 1 / OBJECT_TO_SI.
OBJECT_FROM_SI = {name: {CM: 100.0, MS: 1e3, DEG: 180.0 / math.pi}[factor]
                  for name, factor in OBJECT_TO_SI.items()}
#: LUX 0x2221 contour points (Point2D): cm → m.
CONTOUR_TO_SI = CM
CONTOUR_FROM_SI = 100.0
#: LUX 0x2805 vehicle state field → factor to SI.  Every other field's spec unit is a
#: fixed-point SI step (0.01 m/s, 0.001 rad, ...), undone by the codec, so already SI.
VEHICLE_STATE_TO_SI = {'time_difference': MS}
VEHICLE_STATE_FROM_SI = {'time_difference': 1e3}
#: Wire unit of every converted object field, for texts.
OBJECT_WIRE_UNITS = {name: ('ms' if f == MS else 'deg' if f == DEG
                            else 'cm/s' if 'velocity' in name else 'cm')
                     for name, f in OBJECT_TO_SI.items()}


def scaled(records: np.ndarray, factors: dict) -> np.ndarray:
    """A copy of ``records`` (a structured array) with each field named in ``factors``
    multiplied by its factor (whole columns, no per-record loop)."""
    out = np.array(records, copy=True)
    for name, factor in factors.items():
        out[name] = out[name] * factor
    return out
