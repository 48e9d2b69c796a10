"""Big freed buffers kept by the process for the next ones (glibc ``malloc``): for converters
that make a multi-megabyte array per message and free it a few messages later.

By default glibc maps each buffer of a few MB afresh and unmaps it when freed (or trims the
heap once more than twice that is free at its top), so every new point array of a scan costs
the kernel one page fault per 4 kB: 0.5 ms of a 1.7 MB ECU scan's 0.7 ms.  With
:func:`reuse_freed_memory` buffers up to 32 MiB come from the heap and freed memory stays in the
process (up to :data:`KEEP` bytes), so the next array reuses pages already mapped.  The peak
memory of the process is unchanged; it is just not handed back before the process ends.
"""
from __future__ import annotations

import ctypes
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3    # mallopt parameters (malloc.h)
#: the biggest mmap threshold glibc takes on 64-bit hosts (DEFAULT_MMAP_THRESHOLD_MAX)
MMAP_THRESHOLD = 32 << 20
#: free memory kept at the heap's top instead of returned to the kernel
KEEP = 256 << 20

_applied = False


def reuse_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds for this process (once); False where the C
    library is not glibc (nothing changed)."""
    global _applied
    if _applied:
        return True
    if not sys.platform.startswith('linux'):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):       # musl and others: no mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _applied = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                    and mallopt(_M_TRIM_THRESHOLD, KEEP))
    return _applied
