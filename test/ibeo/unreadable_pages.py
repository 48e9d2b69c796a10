"""Arrays that end at (and, when they fill whole pages, start after) a page that cannot be
read: a compiled kernel's load past its input is SIGSEGV, so the tests that use them run in an
interpreter of their own (Linux: mmap and mprotect)."""
from __future__ import annotations

import ctypes
import mmap

import numpy as np

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
_KEEP: list = []                    # the mappings live as long as the process


def guarded(nbytes: int) -> np.ndarray:
    """A writable uint8 array of ``nbytes`` whose last byte is followed by an unreadable page
    (and whose first is preceded by one when ``nbytes`` is a whole number of pages)."""
    pages = -(-nbytes // PAGE)
    region = mmap.mmap(-1, (pages + 2) * PAGE)
    _KEEP.append(region)
    start = ctypes.addressof(ctypes.c_char.from_buffer(region))
    for at in (start, start + (pages + 1) * PAGE):
        assert _LIBC.mprotect(at, PAGE, 0) == 0, ctypes.get_errno()
    end = (pages + 1) * PAGE
    return np.frombuffer(region, np.uint8, nbytes, end - nbytes)
