"""Declaring a node's parameters from one table of defaults and descriptions."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor


def declare_parameters(node, table: dict[str, tuple[Any, str]]) -> SimpleNamespace:
    """Declare every ``name: (default, description)`` and return their values.

    Dotted names become attributes with underscores (``udp.port`` → ``udp_port``).
    """
    values = {}
    for name, (default, description) in table.items():
        value = node.declare_parameter(
            name, default, ParameterDescriptor(description=description)).value
        values[name.replace('.', '_')] = value
    return SimpleNamespace(**values)
