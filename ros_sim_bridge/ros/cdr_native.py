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
ABI = 4

_p, _i = ctypes.c_void_p, ctypes.c_int64
_PATH = beside(__file__, LIBRARY)
#: ``PLACE(out, n, at, tmpl, pool, pool_at, size)``: element e's template bytes to ``at[e]``
PLACE = load_kernel(_PATH, 'sim_bridge_cdr_place', [_p, _i, _p, _p, _p, _p, _p], None,
                    abi=ABI, abi_symbol='sim_bridge_cdr_fill_abi')
#: ``RUN(out, n, at, local, rows, desc, slots)``: the slots of a run of elements
RUN = load_kernel(_PATH, 'sim_bridge_cdr_run', [_p, _i, _p, _p, _p, _p, _i], None, abi=ABI,
                  abi_symbol='sim_bridge_cdr_fill_abi')
AVAILABLE = None not in (PLACE, RUN)
