"""Command-line helpers shared by the emulators."""
from __future__ import annotations

from typing import Sequence


def strip_ros_args(argv: Sequence[str]) -> list:
    """``argv`` without ROS arguments (``--ros-args … [--]``), which `ros2 launch` appends to
    every executable it starts, emulators included."""
    out, inside = [], False
    for arg in argv:
        if arg == '--ros-args':
            inside = True
        elif inside and arg == '--':
            inside = False
        elif not inside:
            out.append(arg)
    return out
