"""The compiled packet walk (``packet_walk.c`` beside this module), loaded with ctypes, with
the same walk in Python where the library is missing (a source tree or a ``pip install .``)
or the host is big-endian.  Both return numpy arrays (offsets, ids, sizes) of the packets that
lie wholly in the buffer, and the offset where the walk stopped.  The walk only follows the
sizes; whether the packets make sense is :mod:`.frame_index`'s business."""
from __future__ import annotations

import ctypes
import struct
from typing import Optional

import numpy as np

from ros_sim_bridge.core.native import beside, load_kernel

LIBRARY = 'libsim_bridge_carla_walk.so'
_CHUNK = 1 << 20


def _load(path: str):
    p = ctypes.c_void_p
    return load_kernel(path, 'sim_bridge_carla_walk',
                       [p, ctypes.c_int64, ctypes.c_int64, p, p, p, ctypes.c_int64, p],
                       ctypes.c_int64)


WALK = _load(beside(__file__, LIBRARY))


def walk(data, start: int, use_native: bool = True, cap: Optional[int] = None):
    """(offsets int64, ids uint8, sizes uint32, end) of the packets from ``start``: all of
    them, or the first ``cap`` (then ``end`` is where the next one starts)."""
    n = len(data)
    if WALK is not None and use_native and n:
        buf = np.frombuffer(data, np.uint8, count=n)
        parts = []
        end = ctypes.c_int64(start)
        off = start
        left = cap
        while left is None or left > 0:
            chunk = _CHUNK if left is None else min(left, _CHUNK)
            o = np.empty(chunk, np.int64)
            i = np.empty(chunk, np.uint8)
            s = np.empty(chunk, np.uint32)
            k = WALK(buf.ctypes.data, n, off, o.ctypes.data, i.ctypes.data, s.ctypes.data,
                     chunk, ctypes.addressof(end))
            parts.append((o[:k], i[:k], s[:k]))
            off = end.value
            if left is not None:
                left -= k
            if k < chunk:
                break
        if len(parts) == 1:
            return parts[0] + (off,)
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]), off)
    unpack = struct.Struct('<BI').unpack_from
    offsets, ids, sizes = [], [], []
    off = start
    limit = n if cap is None else cap
    while off + 5 <= n and len(offsets) < limit:
        pid, size = unpack(data, off)
        if off + 5 + size > n:
            break
        offsets.append(off)
        ids.append(pid)
        sizes.append(size)
        off += 5 + size
    return (np.array(offsets, np.int64), np.array(ids, np.uint8), np.array(sizes, np.uint32),
            off)
