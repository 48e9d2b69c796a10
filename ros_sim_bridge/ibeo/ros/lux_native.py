"""The compiled LUX point kernel (``lux_cloud.c`` beside this module), loaded with ctypes.

CMake builds it with the messages (the package compiles C already for the rosidl type
support) and installs ``libsim_bridge_lux_cloud.so`` beside this module.  It does in one loop
over the points what :class:`~ros_sim_bridge.ibeo.ros.conversions.CloudBuilder`'s numpy path does
in ~15 array passes; the results agree to float32 rounding (test/test_lux_cloud.py).

:data:`KERNEL` is None where the library is missing (a source tree that was not built) or
the host is big-endian (the kernel writes the little-endian cloud layout with host floats);
the builder then uses numpy.  :func:`tick_table`, :func:`tilt_table` and :func:`layer_table`
make the trigonometry tables the kernel reads.
"""
from __future__ import annotations

import ctypes
from typing import Callable, Optional

import numpy as np

from ros_sim_bridge.core.native import beside, load_kernel, load_kernel_on
from ros_sim_bridge.ibeo import geometry
from ros_sim_bridge.ibeo.codec import units

LIBRARY = 'libsim_bridge_lux_cloud.so'
#: Every int16 tick value, -32768..32767: the kernel indexes the tables without a bounds check.
TICKS = np.arange(-32768, 32768, dtype=np.float64)


#: The kernel interface this module calls (``sim_bridge_lux_cloud_abi()`` in lux_cloud.c): a
#: library built from an older lux_cloud.c (another argument list) is not loaded.
ABI = 2


def _load(path: str) -> Optional[Callable[..., int]]:
    p = ctypes.c_void_p
    return load_kernel(path, 'sim_bridge_lux_cloud',
                       [p, ctypes.c_size_t, p, p, p, p, ctypes.c_float, ctypes.c_float,
                        ctypes.c_uint8], ctypes.c_size_t, abi=ABI)


#: ``KERNEL(wire, n, out, tick_trig, tilt_trig, layer_trig, rad_per_tick, m_per_cm,
#: layer_offset)`` → number of NaN points; addresses as ints (``array.ctypes.data``), tilt_trig
#: None for none.  ``rad_per_tick`` and ``m_per_cm`` are the factors of ``codec/units.py``
#: (the wire's ticks and cm to rad and m).
KERNEL = _load(beside(__file__, LIBRARY))


#: The paths of lux_cloud.c, narrowest first: KERNEL takes the widest this CPU has.
PATHS = ('scalar', 'avx2', 'avx512')


def kernel_on(path: str) -> Optional[Callable[..., int]]:
    """KERNEL held to one of :data:`PATHS` (``sim_bridge_lux_cloud_on``,
    :func:`~ros_sim_bridge.core.native.load_kernel_on`), the same arguments; None where the
    library or this CPU lacks that path."""
    p = ctypes.c_void_p
    return load_kernel_on(path, PATHS, beside(__file__, LIBRARY), 'sim_bridge_lux_cloud_on',
                          [p, ctypes.c_size_t, p, p, p, p, ctypes.c_float, ctypes.c_float,
                           ctypes.c_uint8], ctypes.c_size_t, ABI, 'sim_bridge_lux_cloud_abi')


def _cos_sin(angle: np.ndarray) -> np.ndarray:
    """float32 (len, 2): cos, sin of each angle (rad), rows contiguous as the kernel reads."""
    return np.ascontiguousarray(np.stack([np.cos(angle), np.sin(angle)], axis=1), np.float32)


def _tick_angles(ticks_per_rotation: int) -> np.ndarray:
    return units.ticks_to_rad(TICKS, ticks_per_rotation)


def tick_table(ticks_per_rotation: int) -> np.ndarray:
    """float32 (65536, 2): cos h, sin h of every int16 tick, h = 2π·tick / ticks_per_rotation."""
    return _cos_sin(_tick_angles(ticks_per_rotation))


def tilt_table(ticks_per_rotation: int, mirror_side: int, beam_tilt_rad: float,
               upside_down: bool) -> np.ndarray:
    """float32 (65536, 2): cos d, sin d of the 8-layer mirror-side elevation offset d(h)
    (``geometry.mirror_side_offset``) at every int16 tick."""
    return _cos_sin(geometry.mirror_side_offset(_tick_angles(ticks_per_rotation), mirror_side,
                                                beam_tilt_rad, upside_down))


def layer_table(elevations_rad: np.ndarray) -> np.ndarray:
    """float32 (16, 2): cos e, sin e of each 4-bit layer's elevation; NaN beyond the table."""
    table = np.full((16, 2), np.nan, np.float32)
    table[:len(elevations_rad)] = _cos_sin(elevations_rad)
    return table
