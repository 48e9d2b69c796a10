"""Declaring a node's parameters from one table, and the parameters every node shares.

A table maps ``name: (default, description)`` or ``name: (default, description, check)``;
``check(value)`` returns None when the value is fine or a short reason when it is not, and
:func:`declare_parameters` raises ValueError naming the parameter (the runner turns it into one
clear log line and exit code 1).

Every node has ``diagnostics_period``, ``stale_after`` and ``stamp_source``: build them with
:func:`common_parameters` so their names, meaning and checks are the same everywhere; a node
only chooses its defaults and which stamp sources it offers.

A value of another type than the default's is one clear error too (rclpy's own check would be
a traceback), except where the meaning is plain: an integer for a float (``rate:=2``), a number
for a string (``header_size:=12``).  Parameters are read-only once the node runs (``ros2 param
set`` is refused with rclpy's "read-only" reason instead of accepted and ignored), but for the
ones a node names ``dynamic`` and applies in its own set-parameters callback.
"""
from __future__ import annotations

import math
import os
from types import SimpleNamespace
from typing import Any, Callable, Collection, Mapping, Optional

from rcl_interfaces.msg import ParameterDescriptor

Check = Callable[[Any], Optional[str]]


def positive(value) -> Optional[str]:
    """A finite number above zero."""
    ok = isinstance(value, (int, float)) and math.isfinite(value) and value > 0
    return None if ok else 'must be a finite number > 0'


def non_negative(value) -> Optional[str]:
    """A finite number of zero or more (a time where 0 turns the feature off)."""
    ok = isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
    return None if ok else 'must be a finite number >= 0'


def period(value) -> Optional[str]:
    """A timer period: 1 ms … 1 day (rcl's timers take int64 ns; 1e300 s overflowed)."""
    ok = isinstance(value, (int, float)) and 1e-3 <= value <= 86400.0
    return None if ok else 'must be a period of 0.001 … 86400 s'


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def positive_int(value) -> Optional[str]:
    """An integer above zero (a buffer size, a count)."""
    return None if _integer(value) and value > 0 else 'must be an integer > 0'


def non_negative_int(value) -> Optional[str]:
    return None if _integer(value) and value >= 0 else 'must be an integer ≥ 0'


def port(*, off: tuple = (), what: str = 'port') -> Check:
    """A port 1..65535, or one of the ``off`` values meaning "not used" (checked at start: a
    port beyond 65535 would end in an OverflowError from the socket layer, or be retried for
    ever)."""
    said = f' ({" or ".join(map(str, off))}: not used)' if off else ''

    def check(value) -> Optional[str]:
        ok = _integer(value) and (value in off or 1 <= value <= 65535)
        return None if ok else f'must be a {what} 1..65535{said}'
    return check


def one_of(*choices: str) -> Check:
    def check(value) -> Optional[str]:
        return None if value in choices else 'must be one of ' + ', '.join(map(repr, choices))
    return check


def common_parameters(*, stamp_sources: Mapping[str, str], stamp_default: str,
                      stale_after: float = 2.0, diagnostics_period: float = 1.0,
                      stale_what: str = 'a stream') -> dict[str, tuple]:
    """The shared entries: ``stamp_sources`` maps each accepted value to what it means."""
    if stamp_default not in stamp_sources:
        raise ValueError(f'stamp_default {stamp_default!r} is not one of the stamp sources')
    meaning = '; '.join(f"'{k}': {v}" for k, v in stamp_sources.items())
    return {
        'stamp_source': (stamp_default, f'header stamps: {meaning}', one_of(*stamp_sources)),
        'diagnostics_period': (diagnostics_period, 's between /diagnostics messages', period),
        'stale_after': (stale_after, f's without data before {stale_what} is reported stale',
                        positive),
    }


def declare_parameters(node, table: dict[str, tuple], *,
                       dynamic: Collection[str] = ()) -> SimpleNamespace:
    """Declare every entry of ``table`` (read-only unless named in ``dynamic``), check the
    values' types and the entries' checks, and return the values.

    Dotted names become attributes with underscores (``udp.port`` → ``udp_port``).
    """
    values = {}
    for name, entry in table.items():
        default, description = entry[0], entry[1]
        check = entry[2] if len(entry) > 2 else None
        value = node.declare_parameter(name, default, ParameterDescriptor(
            description=description, read_only=name not in dynamic,
            dynamic_typing=True)).value      # the type is checked here, in one clear line
        value = _as_type_of(default, value, name)
        if check is not None:
            problem = check(value)
            if problem:
                raise ValueError(f'parameter {name} = {value!r} {problem}')
        values[name.replace('.', '_')] = value
    return SimpleNamespace(**values)


_KINDS = ((bool, 'boolean'), (int, 'integer'), (float, 'number'), (str, 'string'),
          ((list, tuple), 'list'))


def _kind(value) -> str:
    """What ``value`` is, as a parameter's type is said: 'integer', 'list', … ('value' for
    none); bool before int, which it also is."""
    return next((name for kind, name in _KINDS if isinstance(value, kind)), 'value')


def _a(kind: str) -> str:
    return ('an ' if kind[0] in 'aeiou' else 'a ') + kind if kind != 'value' else 'no value'


def _as_type_of(default, value, name: str):
    """``value`` as the type of ``default``; ValueError naming the parameter otherwise."""
    if isinstance(default, (list, tuple)):
        items = [] if value is None else value      # rcl gives an empty list as unset
        kind = _kind(default[0]) if len(default) else None
        if isinstance(items, (list, tuple)) and (
                kind is None or all(_kind(v) == kind for v in items)
                or kind == 'number' and all(_kind(v) == 'integer' for v in items)):
            return [float(v) for v in items] if kind == 'number' else list(items)
        wanted = f'a list of {kind}s' if kind is not None else 'a list'
    else:
        kind = _kind(default)
        if _kind(value) == kind:
            return value
        if kind == 'number' and _kind(value) == 'integer':
            return float(value)                     # rate:=2
        if kind == 'string' and _kind(value) in ('integer', 'number'):
            return str(value)                       # header_size:=12
        wanted = _a(kind)
    raise ValueError(f'parameter {name} = {value!r} is {_a(_kind(value))}, not {wanted} '
                     f'(default {default!r})')


def describe_parameters(table: dict[str, tuple]) -> str:
    """The entries of ``table`` as ``--help`` lists them: name, default, description."""
    lines = []
    for name, entry in table.items():
        default = entry[0]
        shown = repr(default) if isinstance(default, str) else str(default).lower() \
            if isinstance(default, bool) else str(default)
        lines.append(f'  {name} (default {shown})')
        lines.append(f'      {entry[1]}')
    return '\n'.join(lines)


def resolve_config_path(path: str) -> str:
    """A file named in the parameters (a JSON sensors file, say): as given (absolute or from the
    working directory), else relative to this package's installed config/ folder."""
    if os.path.isabs(path) or os.path.exists(path):
        return path
    try:
        from ament_index_python.packages import get_package_share_directory
        candidate = os.path.join(get_package_share_directory('ros_sim_bridge'), 'config', path)
    except Exception:  # not installed (tests from the source tree)
        candidate = os.path.join(os.path.dirname(__file__), '..', '..', 'config', path)
    return candidate if os.path.exists(candidate) else path
