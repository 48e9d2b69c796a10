"""The compiled packet walk (``packet_walk.c`` beside this module), loaded with ctypes, with
the same walk in Python where the library is missing (a source tree or a ``pip install .``)
or the host is big-endian.  Both return numpy arrays (offsets, ids, sizes) of every packet
that lies wholly in the buffer, and the offset where the walk stopped."""
from __future__ import annotations

import ctypes
import os
import struct
import sys

import numpy as np

LIBRARY = 'libsim_bridge_carla_walk.so'
_CHUNK = 1 << 20


def _load(path: str):
    if sys.byteorder != 'little' or not os.path.exists(path):
        return None
    fn = ctypes.CDLL(path).sim_bridge_carla_walk
    p = ctypes.c_void_p
    fn.argtypes = [p, ctypes.c_int64, ctypes.c_int64, p, p, p, ctypes.c_int64, p]
    fn.restype = ctypes.c_int64
    return fn


WALK = _load(os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY))


def walk(data, start: int, use_native: bool = True):
    """(offsets int64, ids uint8, sizes uint32, end) of the packets from ``start``."""
    n = len(data)
    if WALK is not None and use_native and n:
        buf = np.frombuffer(data, np.uint8, count=n)
        parts = []
        end = ctypes.c_int64(start)
        off = start
        while True:
            o = np.empty(_CHUNK, np.int64)
            i = np.empty(_CHUNK, np.uint8)
            s = np.empty(_CHUNK, np.uint32)
            k = WALK(buf.ctypes.data, n, off, o.ctypes.data, i.ctypes.data, s.ctypes.data,
                     _CHUNK, ctypes.addressof(end))
            parts.append((o[:k], i[:k], s[:k]))
            off = end.value
            if k < _CHUNK:
                break
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]), off)
    unpack = struct.Struct('<BI').unpack_from
    offsets, ids, sizes = [], [], []
    off = start
    while off + 5 <= n:
        pid, size = unpack(data, off)
        if off + 5 + size > n:
            break
        offsets.append(off)
        ids.append(pid)
        sizes.append(size)
        off += 5 + size
    return (np.array(offsets, np.int64), np.array(ids, np.uint8), np.array(sizes, np.uint32),
            off)
