"""The compiled element filler (``cdr_fill.c`` beside this module), loaded with ctypes, for
:func:`~ros_sim_bridge.ros.cdr_template.messages_with_elements`: element templates copied to
their places and slot values to their fields in loops over the elements, where numpy needs an
index array per slot.  None where the library is missing (a source tree that was not built) or
the host is big-endian; the caller then assigns with numpy (the same bytes, tested)."""
from __future__ import annotations

import ctypes

from ros_sim_bridge.core.native import beside, load_kernel

LIBRARY = 'libsim_bridge_cdr_fill.so'
#: ``sim_bridge_cdr_fill_abi()`` of the cdr_fill.c this module calls
ABI = 3

_p, _i = ctypes.c_void_p, ctypes.c_int64
_PATH = beside(__file__, LIBRARY)
_ABI = load_kernel(_PATH, 'sim_bridge_cdr_fill_abi', [], ctypes.c_int)


def _load(symbol: str, argtypes: list):
    """The kernel ``symbol``; None unless the library answers :data:`ABI`."""
    if _ABI is None or _ABI() != ABI:
        return None
    return load_kernel(_PATH, symbol, argtypes, None)


#: ``PLACE(out, n, at, tmpl, pool, pool_at, size)``: element e's template bytes to ``at[e]``
PLACE = _load('sim_bridge_cdr_place', [_p, _i, _p, _p, _p, _p, _p])
#: ``RUN(out, n, at, local, rows, desc, slots)``: the slots of a run of elements
RUN = _load('sim_bridge_cdr_run', [_p, _i, _p, _p, _p, _p, _i])
AVAILABLE = None not in (PLACE, RUN)
