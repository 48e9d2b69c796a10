"""NTP64 time stamps (RFC 5905 §6: 32-bit seconds since 1900-01-01, 32-bit fraction) ↔ Unix time."""
from __future__ import annotations

NTP_UNIX_OFFSET = 2_208_988_800  # seconds from 1900-01-01 to 1970-01-01
_FRAC = 1 << 32


def ntp_to_unix_ns(seconds: int, fraction: int) -> int:
    """NTP64 (seconds, fraction) → Unix nanoseconds (rounded to the nearest ns)."""
    return (seconds - NTP_UNIX_OFFSET) * 1_000_000_000 + (fraction * 1_000_000_000 + _FRAC // 2) // _FRAC


def unix_ns_to_ntp(ns: int) -> tuple[int, int]:
    """Unix nanoseconds → NTP64 (seconds, fraction), fraction rounded to nearest."""
    sec, rem = divmod(ns, 1_000_000_000)
    frac = (rem * _FRAC + 500_000_000) // 1_000_000_000
    if frac == _FRAC:
        sec, frac = sec + 1, 0
    return sec + NTP_UNIX_OFFSET, frac


def ntp64_to_unix_ns(value: int) -> int:
    """A packed 64-bit NTP value (seconds in the high word) → Unix nanoseconds."""
    return ntp_to_unix_ns(value >> 32, value & 0xFFFFFFFF)


def unix_ns_to_ntp64(ns: int) -> int:
    sec, frac = unix_ns_to_ntp(ns)
    return ((sec & 0xFFFFFFFF) << 32) | frac
