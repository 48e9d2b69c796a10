"""The ibeo wire's units and their factors to SI (the units rule: docs/development.md, "Units rule").

The codec decodes every field in the unit the spec's table names for it: 0x2202 scans (§3)
keep angles in ticks, distances, echo widths and the mounting position in cm, the sync phase
in 409.6 ns counts (:func:`ticks_to_rad`, :data:`CM`, :data:`SYNC_PHASE_TO_SI`; applied by
``ibeo/geometry.py`` and ``ibeo/ros/conversions.py``); 0x2221 objects (§4 "Object: content")
keep positions, sizes and sigmas in cm, velocities in cm/s, the box orientation in deg after
undoing its 1/100 deg fixed point, the relative timestamp in ms.
``ibeo/ros/conversions.py`` applies :data:`OBJECT_TO_SI` on the way to ROS; encoders take the
spec's units, and :data:`OBJECT_FROM_SI` turns SI values (e.g. a simulated scene) back into them.
The table lives here, ROS-free, so offline tools convert with the same factors.

Command parameters (§7.2, ``commands.PARAMETERS``) are typed in the unit their table states
(deg after undoing 1/32 deg, cm, Hz, BeamTilt rad); :data:`PARAMETER_UNITS_TO_SI` maps those
units to SI, :func:`parameter_to_si` / :func:`parameter_from_si` apply it (the services of
``ibeo/ros`` and the session's BeamTilt probe).

The ECU types (§8 on) are SI floats in their tables except a few integers: the 0x2806/0x2807
distances in 1/10 mm (:data:`ECU_VEHICLE_STATE_TO_SI`, applied by ``ros/ecu_conversions.py``),
µs point time offsets and ms classification ages, which the ECU messages carry as such.
"""
from __future__ import annotations

import math

import numpy as np

CM = 0.01                      # m per cm (also m/s per cm/s)
CM_PER_M = 100.0               # cm per m: SI lengths back into the wire's cm
MS = 1e-3                      # s per ms
DEG = math.pi / 180.0          # rad per deg

#: LUX 0x2202 scan (§3): the sync phase offset counts 409.6 ns ("conversion factor 409.6 ns").
SYNC_PHASE_TO_SI = 409.6e-9    # s per count


def rad_per_tick(ticks_per_rotation: int) -> float:
    """LUX 0x2202 angles (§3): angle = 2π · ticks / ticks per rotation (the scan header's
    "angle ticks per rotation", 11520 on a LUX: 1/32 deg)."""
    return 2.0 * math.pi / ticks_per_rotation


def ticks_to_rad(ticks, ticks_per_rotation: int):
    """Angle ticks (a number or an array) → rad, ``ticks · rad_per_tick``."""
    return ticks * rad_per_tick(ticks_per_rotation)


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
TENTH_MM = 1e-4                # m per 1/10 mm
#: ECU 0x2806/0x2807 vehicle state (§15, §16) field → factor to SI: the distances from the
#: origin are INT32 in 1/10 mm; every other field is FLOAT32 in SI already.
ECU_VEHICLE_STATE_TO_SI = {'distance_x': TENTH_MM, 'distance_y': TENTH_MM}
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


#: §7.2 parameter unit (``commands.Parameter.unit``) → (SI unit, factor to SI).  Units not
#: listed (kBd, plain counts, IP addresses) are passed through unchanged.
PARAMETER_UNITS_TO_SI = {'deg': ('rad', DEG), 'cm': ('m', CM), 'Hz': ('Hz', 1.0),
                         'rad': ('rad', 1.0)}


def parameter_si_unit(p) -> str:
    """The unit of :func:`parameter_to_si`'s value for parameter ``p`` ('' for plain counts)."""
    return PARAMETER_UNITS_TO_SI.get(p.unit, (p.unit, None))[0]


def parameter_to_si(p, value):
    """A parameter value in its table unit (``commands.parameter_from_raw``) → SI; text (IP
    addresses) and values of units without a factor pass through."""
    factor = PARAMETER_UNITS_TO_SI.get(p.unit, (None, None))[1]
    if factor is None or isinstance(value, str):
        return value
    return value * factor


def parameter_from_si(p, value):
    """SI value → the parameter's table unit (the inverse of :func:`parameter_to_si`; dividing
    by the same factor, so 1/32 deg steps round exactly as 2π/11520 rad steps)."""
    factor = PARAMETER_UNITS_TO_SI.get(p.unit, (None, None))[1]
    if factor is None or isinstance(value, str):
        return value
    return value / factor
