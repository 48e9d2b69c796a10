"""The compiled walk of an object list's variable-length objects (``object_walk.c`` beside
this module), loaded with ctypes: each object's offset and contour point count, its fixed
part and its points gathered, in one loop in C where the decoders' Python walk reads two bytes
an object.  :func:`walk` is None-returning where the library is missing (a source tree) or the
host is big-endian: the decoders then walk in Python (the same records and errors, tested)."""
from __future__ import annotations

import ctypes
from typing import Optional

import numpy as np

from ros_sim_bridge.core.native import address, beside, load_kernel

LIBRARY, ABI = 'libsim_bridge_ibeo_object_walk.so', 1
_p, _i = ctypes.c_void_p, ctypes.c_int64
_PATH = beside(__file__, LIBRARY)
WALK = load_kernel(_PATH, 'sim_bridge_ibeo_object_walk',
                   [_p, _i, _i, _i, _i, _i, _i, _i, _i, _i, _p, _p, _p, _p], _i, abi=ABI)
CONTOURS = load_kernel(_PATH, 'sim_bridge_ibeo_object_contours', [_p, _i, _p, _p, _i, _i, _p],
                       None, abi=ABI, abi_symbol='sim_bridge_ibeo_object_walk_abi')
#: whether the decoders use the compiled walk (tests set it False for the Python one)
NATIVE = WALK is not None and CONTOURS is not None


def walk(body, pos: int, count: int, size: int, cnt_at: int, cnt_bytes: int,
         big_endian: bool, single: int, point_size: int) -> Optional[tuple]:
    """(offsets int64, point counts int64, the objects' fixed parts (k, size) uint8, their
    points one after another (uint8), where the walk stopped) of up to ``count`` objects from
    ``pos`` (see ``object_walk.c``: it stops at an object that does not fit); None without
    the kernel."""
    if not NATIVE:
        return None
    if not 0 <= cnt_at <= size - cnt_bytes or cnt_bytes not in (1, 2) or point_size < 0:
        raise ValueError(f'walk: count field {cnt_at}+{cnt_bytes} outside an object of {size}')
    raw = np.frombuffer(body, np.uint8)
    n = len(raw)
    cap = max(0, min(count, (n - pos) // size if size else 0))
    offsets = np.empty(cap, np.int64)
    counts = np.empty(cap, np.int64)
    wire = np.empty((cap, size), np.uint8)
    end = ctypes.c_int64(pos)
    k = WALK(address(raw), n, pos, cap, size, cnt_at, cnt_bytes, int(big_endian), single,
             point_size, address(offsets), address(counts), address(wire),
             ctypes.addressof(end)) if cap else 0
    offsets, counts, wire = offsets[:k], counts[:k], wire[:k]
    if end.value > n and k:         # the last object's points run past the body: not gathered
        points = np.empty(int(counts[:-1].sum()) * point_size, np.uint8)
        gathered = k - 1
    else:
        points = np.empty(int(counts.sum()) * point_size, np.uint8)
        gathered = k
    if gathered:
        CONTOURS(address(raw), gathered, address(offsets), address(counts), size,
                 point_size, address(points))
    return offsets, counts, wire, points, end.value
