"""ROS time stamps from nanoseconds and seconds."""
from __future__ import annotations

from builtin_interfaces.msg import Time


def ns_to_stamp(ns: int) -> Time:
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def seconds_to_stamp(seconds: float) -> Time:
    return ns_to_stamp(round(seconds * 1e9))


def stamp_to_ns(stamp: Time) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec
