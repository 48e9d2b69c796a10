"""The compiled element filler (``cdr_fill.c`` beside this module), loaded with ctypes, for
:func:`~ros_sim_bridge.ros.cdr_template.messages_with_elements`: the elements' places followed
phase by phase, then element templates copied to their places and slot values to their fields
in one loop over all elements, where numpy needs an index array per slot.  None where the
library is missing (a source tree that was not built) or the host is big-endian; the caller
then assigns with numpy (the same bytes, tested)."""
from __future__ import annotations

import ctypes

from ros_sim_bridge.core.native import beside, load_kernel

LIBRARY = 'libsim_bridge_cdr_fill.so'
#: ``sim_bridge_cdr_fill_abi()`` of the cdr_fill.c this module calls
ABI = 6

_p, _i = ctypes.c_void_p, ctypes.c_int64
_PATH = beside(__file__, LIBRARY)
#: ``LAYOUT(n_msg, head_end, n_runs, runs, fmaps, table, tsize, tid, start, base, ends,
#: state)`` → buffer size, or -1 (a template missing: see ``state``) / -2 (a bad shape number)
LAYOUT = load_kernel(_PATH, 'sim_bridge_cdr_layout', [_i, _p, _i] + [_p] * 9, _i, abi=ABI,
                     abi_symbol='sim_bridge_cdr_fill_abi')
#: ``FILL(n_runs, runs, tid, start, pool, pool_at, tsize, slot_at, slots, copies, sources,
#: refused)``: every element's template bytes and slot values
FILL = load_kernel(_PATH, 'sim_bridge_cdr_fill', [_i] + [_p] * 11, None, abi=ABI,
                   abi_symbol='sim_bridge_cdr_fill_abi')
AVAILABLE = None not in (LAYOUT, FILL)
