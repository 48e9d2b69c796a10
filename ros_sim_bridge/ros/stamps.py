"""ROS time stamps from nanoseconds and seconds, refusing what a stamp cannot hold.

``builtin_interfaces/Time`` holds ``sec`` as int32 and ``nanosec`` as uint32 < 1e9; a time
before 0 (the epoch, or the start of a simulation) is not a time a driver should publish.
Every conversion here checks its input and raises :class:`StampError` (a ``CodecError`` of kind
``bad_value``) for NaN, ±Inf, negative and too-large values, so a caller counts the packet as
bad input instead of dying in a receive thread (issue #10, defect 4).
"""
from __future__ import annotations

import math

from builtin_interfaces.msg import Time

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError

MAX_SEC = 2**31 - 1                       # int32 sec of builtin_interfaces/Time
MAX_NS = MAX_SEC * 1_000_000_000 + 999_999_999


class StampError(CodecError):
    """A time value that no ROS stamp can carry."""

    def __init__(self, source: str, field: str, detail: str):
        super().__init__(source, detail, field=field, kind=BAD_VALUE)


def ns_to_sec_nanosec(ns: int, *, source: str = 'time', field: str = 'ns') -> tuple[int, int]:
    """(sec, nanosec) of integer nanoseconds in [0, MAX_NS] (for a stamp written as CDR);
    StampError otherwise."""
    ns = int(ns)
    if not 0 <= ns <= MAX_NS:
        raise StampError(source, field, f'{ns} ns is outside 0 … {MAX_NS} ns (int32 seconds)')
    return divmod(ns, 1_000_000_000)


def ns_to_stamp(ns: int, *, source: str = 'time', field: str = 'ns') -> Time:
    """A stamp from integer nanoseconds in [0, MAX_NS]; StampError otherwise."""
    sec, nanosec = ns_to_sec_nanosec(ns, source=source, field=field)
    return Time(sec=sec, nanosec=nanosec)


def seconds_to_stamp(seconds: float, *, source: str = 'time', field: str = 'seconds') -> Time:
    """A stamp from seconds: finite, ≥ 0 and ≤ MAX_SEC, else StampError."""
    try:
        value = float(seconds)
    except (TypeError, ValueError, OverflowError):
        raise StampError(source, field, f'{seconds!r} is not a number of seconds') from None
    if not math.isfinite(value):
        raise StampError(source, field, f'{value} s is not a finite time')
    if not 0.0 <= value < MAX_SEC + 1:
        raise StampError(source, field, f'{value!r} s is outside 0 … {MAX_SEC} s')
    return ns_to_stamp(min(round(value * 1e9), MAX_NS), source=source, field=field)


def stamp_to_ns(stamp: Time) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec
