"""Compiled kernels (plain C libraries built by CMake beside the module that uses them),
loaded with ctypes: one loader for all of them.

A kernel reads and writes little-endian layouts with host numbers, so a big-endian host gets
none; nor does a source tree that was not built, a library that does not load, or one built
from another version of its source (it answers ``<symbol>_abi()`` with another number, or not
at all, when the module asks for an ``abi``).  Each user keeps a numpy or Python path for
``None``.
"""
from __future__ import annotations

import ctypes
import os
import sys
from typing import Callable, Optional, Sequence


def load_kernel(path: str, symbol: str, argtypes: Sequence, restype,
                abi: Optional[int] = None, abi_symbol: Optional[str] = None
                ) -> Optional[Callable]:
    """The C function ``symbol`` of the library at ``path`` with its ctypes signature; None
    where it cannot be used (see the module).  ``abi``: the number ``<symbol>_abi()`` (or
    ``abi_symbol()``, one for a library of several functions) must answer."""
    if sys.byteorder != 'little' or not os.path.exists(path):
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:                 # not loadable here (another architecture, a broken file)
        return None
    if abi is not None:
        version = getattr(lib, abi_symbol or f'{symbol}_abi', None)
        if version is None:
            return None
        version.argtypes, version.restype = [], ctypes.c_int
        if version() != abi:
            return None
    fn = getattr(lib, symbol, None)
    if fn is None:
        return None
    fn.argtypes, fn.restype = list(argtypes), restype
    return fn


def load_kernel_on(path: str, paths: Sequence[str], library: str, symbol: str,
                   argtypes: Sequence, restype, abi: int, abi_symbol: str
                   ) -> Optional[Callable]:
    """A kernel held to one of its ``paths`` (scalar, then the vector widths it has): its C
    function ``symbol`` takes the path's index before the kernel's ``argtypes`` and answers
    (size_t)-1 for a path this CPU lacks (asked with no data); None where the library or the
    CPU lacks the path.  For the tests and benchmarks, which compare the paths on one
    machine."""
    if path not in paths:
        return None
    on = load_kernel(library, symbol, [ctypes.c_int, *argtypes], restype, abi=abi,
                     abi_symbol=abi_symbol)
    index = paths.index(path)
    if on is None or on(index, *[None if t is ctypes.c_void_p else 0 for t in argtypes]) != 0:
        return None
    return lambda *args: on(index, *args)


_CHAR = ctypes.c_char


def address(a) -> int:
    """The address of a numpy array's first byte, for a kernel's argument: a writable
    contiguous one's through ctypes (faster than ``a.ctypes.data``), any other's (read-only:
    a view of a read) by ``a.ctypes.data`` (faster than numpy's interface dict)."""
    if a.flags.writeable and a.flags.c_contiguous and a.nbytes:
        return ctypes.addressof(_CHAR.from_buffer(a))
    return a.ctypes.data


_NEW_BYTES = ctypes.pythonapi.PyBytes_FromStringAndSize
_NEW_BYTES.argtypes, _NEW_BYTES.restype = [ctypes.c_void_p, ctypes.c_ssize_t], ctypes.py_object
_BYTES_AT = ctypes.pythonapi.PyBytes_AsString
_BYTES_AT.argtypes, _BYTES_AT.restype = [ctypes.py_object], ctypes.c_void_p


def new_bytes(size: int) -> tuple:
    """A new ``bytes`` of ``size`` (≥ 1) bytes not yet written, and the address of its bytes,
    for a kernel to write in before anything else sees it (``PyBytes_FromStringAndSize(NULL,
    size)`` of the C API): a message built in the object it is published as, not copied to
    it."""
    if size < 1:                    # 0 bytes: the one empty bytes
        raise ValueError(f'new_bytes: {size} bytes')
    made = _NEW_BYTES(None, size)
    return made, _BYTES_AT(made)


def _hash_at() -> Optional[int]:
    """Where a ``bytes`` object caches its hash, counted back from its first byte (CPython's
    ``PyBytesObject.ob_shash``, just before the bytes), checked on a hashed object; None where
    that does not hold (then no bytes are written again)."""
    made, at = new_bytes(16)
    ctypes.memmove(at, b'ros_sim_bridge16', 16)
    cached = ctypes.c_ssize_t.from_address(at - ctypes.sizeof(ctypes.c_ssize_t))
    return ctypes.sizeof(ctypes.c_ssize_t) if cached.value == -1 and \
        hash(made) == cached.value else None


_HASH_AT = _hash_at()


def rewrite_bytes(made: bytes) -> Optional[int]:
    """The address of the bytes of ``made`` (a ``bytes`` from :func:`new_bytes` that its
    caller alone holds, as ``sys.getrefcount`` told it: nothing else can see it change), to
    write a new message in, its cached hash forgotten; None where that cannot be done (then
    the caller takes :func:`new_bytes`).  A publisher has copied a message when ``publish``
    returns, so the next message of the same size is written where the last one was: warm
    in the caches, no allocation."""
    if _HASH_AT is None:
        return None
    at = _BYTES_AT(made)
    ctypes.c_ssize_t.from_address(at - _HASH_AT).value = -1
    return at


def beside(module_file: str, library: str) -> str:
    """The path of ``library`` in the folder of the module file ``module_file``."""
    return os.path.join(os.path.dirname(os.path.abspath(module_file)), library)
