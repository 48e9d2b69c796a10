"""Declaring a node's parameters from one table, and the parameters every node shares.

A table maps ``name: (default, description)`` or ``name: (default, description, check)``;
``check(value)`` returns None when the value is fine or a short reason when it is not, and
:func:`declare_parameters` raises ValueError naming the parameter (the runner turns it into one
clear log line and exit code 1).

Every node has ``diagnostics_period``, ``stale_after`` and ``stamp_source``: build them with
:func:`common_parameters` so their names, meaning and checks are the same everywhere; a node
only chooses its defaults and which stamp sources it offers.
"""
from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any, Callable, Mapping, Optional

from rcl_interfaces.msg import ParameterDescriptor

Check = Callable[[Any], Optional[str]]


def positive(value) -> Optional[str]:
    """A finite number above zero."""
    ok = isinstance(value, (int, float)) and math.isfinite(value) and value > 0
    return None if ok else 'must be a finite number > 0'


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
        'diagnostics_period': (diagnostics_period, 's between /diagnostics messages', positive),
        'stale_after': (stale_after, f's without data before {stale_what} is reported stale',
                        positive),
    }


def declare_parameters(node, table: dict[str, tuple]) -> SimpleNamespace:
    """Declare every entry of ``table``, check the values and return them.

    Dotted names become attributes with underscores (``udp.port`` → ``udp_port``).
    """
    values = {}
    for name, entry in table.items():
        default, description = entry[0], entry[1]
        check = entry[2] if len(entry) > 2 else None
        value = node.declare_parameter(
            name, default, ParameterDescriptor(description=description)).value
        if check is not None:
            problem = check(value)
            if problem:
                raise ValueError(f'parameter {name} = {value!r} {problem}')
        values[name.replace('.', '_')] = value
    return SimpleNamespace(**values)
