"""Arrays that end at (and, when they fill whole pages, start after) a page that cannot be
read: a compiled kernel's load past its input is SIGSEGV, so the tests that use them run in an
interpreter of their own (Linux: mmap and mprotect)."""
from __future__ import annotations

import ctypes
import mmap
import os
import subprocess
import sys

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


def runs_in_own_interpreter(code: str, cwd) -> int:
    """Run ``code`` (it imports this folder's modules: the folder is on its path) in an
    interpreter of its own, where a load or store past a guarded array ends that interpreter
    (SIGSEGV), not the tests; the number it printed last (how many kernel runs it made)."""
    run = subprocess.run([sys.executable, '-c', f'import sys\nsys.path.append('
                          f'{os.path.dirname(os.path.abspath(__file__))!r})\n{code}'],
                         capture_output=True, text=True, timeout=120, cwd=cwd)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    return int(run.stdout.split()[-1])
