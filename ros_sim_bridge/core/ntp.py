"""NTP64 time stamps (RFC 5905 §6: 32-bit seconds since 1900-01-01, 32-bit fraction) ↔ Unix time,
and the one rule for which of a stream's NTP64 times are invalid (:class:`NtpTimeCheck`, per
device :class:`DeviceNtpTimeChecks`, a whole recording :func:`check_ntp_times`), applied to a
second time a message carries beside its header time too (:func:`why_invalid_beside`)."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import NamedTuple, Optional, Sequence

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


#: An NTP64 field with every bit set: never written (erased flash, a buffer filled with 0xFF).
NTP64_ALL_ONES = (1 << 64) - 1
#: Default bound of :class:`NtpTimeCheck`: a sensor stream sends several messages a second,
#: so consecutive valid times lie milliseconds apart; a minute leaves room for stalls.
MAX_TIME_JUMP_S = 60.0
#: A clock step needs its agreeing times to span this much time (:class:`NtpTimeCheck`): a
#: running clock's times advance, one bad frame's (its messages µs apart) do not.
MIN_STEP_S = 0.5
_MIN_STEP = int(MIN_STEP_S * (1 << 32))          # in NTP64 units
_MIN_STEP_NS = int(MIN_STEP_S * 1e9)


def ntp64_is_unset(value: int) -> bool:
    """0 (RFC 5905: unknown; a clock never set) or all ones (a field never written): no
    time at all."""
    return value == 0 or value == NTP64_ALL_ONES


def _why_unset(ntp: int) -> str | None:
    """Why ``ntp`` is no time at all (:func:`ntp64_is_unset`), else None."""
    if not ntp64_is_unset(ntp):
        return None
    return 'time 0 (clock not set)' if ntp == 0 else 'all ones (never written)'


def why_invalid_beside(ntp: int, header_ntp: int, max_jump_s: float = MAX_TIME_JUMP_S
                       ) -> str | None:
    """None when ``ntp``, a time a message carries beside its header time (e.g. a measurement
    time in its body), is valid: set, and within ``max_jump_s`` of ``header_ntp``, the
    message's own header time (a valid one); else why not."""
    why = _why_unset(ntp)
    if why is None and abs(ntp - header_ntp) > _jump_bound(max_jump_s):
        why = f'{(ntp - header_ntp) / _FRAC:+.3g} s from its header time'
    return why


class NtpTimeCheck:
    """Which NTP64 times of one stream (its messages' times in stream order) are valid.

    Invalid: :func:`ntp64_is_unset` (0, all ones), and a time more than ``max_jump_s`` before
    or after the last valid one (a device without time sync, a corrupt header), after it by
    the receive time elapsed since then in addition when the caller gives receive times (a
    live link that was silent).  Consecutive such times, each within ``max_jump_s`` of the one
    before, are a clock step (set, reset, recordings joined), not corruption, once they are
    ``confirm`` or more and have advanced :data:`MIN_STEP_S` of their own time (and of receive
    time when given): the one that makes it is valid and the new time base with it.  So the
    messages of one frame whose header time is bad (µs apart, one read) never are, however
    many agree.  After :meth:`expect_step` (the caller set the clock) the first one is, until
    the next valid time.  The first time is taken as it is unless ``anchor`` (a time known
    valid) is given.
    """

    def __init__(self, max_jump_s: float = MAX_TIME_JUMP_S, *, confirm: int = 3,
                 anchor: int | None = None):
        self.max_jump = _jump_bound(max_jump_s)
        self.confirm = confirm
        self.reset(anchor)

    def reset(self, anchor: int | None = None) -> None:
        """A new stream (a reconnect, a seek): no valid time seen yet (or ``anchor``)."""
        self.last, self.last_at = anchor, None   # last valid time, its receive time (ns)
        self._jumps, self._jumped = 0, 0         # consecutive agreeing jumped times, last one
        self._run_from = (0, None)               # the first of them and its receive time
        self._step_expected = False
        #: after a valid answer: how many of the times just before it it confirmed as a
        #: clock step (invalid when they came; a caller that can look back may take them)
        self.stepped = 0
        #: after a valid answer that stepped the clock: the last valid time of the old base
        self.stepped_from: int | None = None

    def expect_step(self) -> None:
        """The clock was set: a time beyond the bound starts a new time base at once, until
        the next valid time (a clock set to about the time it had steps no further)."""
        self._step_expected = True

    def why_invalid(self, ntp: int, now_ns: int | None = None) -> str | None:
        """None when ``ntp`` (received at ``now_ns``, if known) is valid, else why not."""
        unset = _why_unset(ntp)
        if unset is not None:
            return unset
        last, stepped, stepped_from = self.last, 0, None
        if last is not None:
            ahead = self.max_jump
            if now_ns is not None and self.last_at is not None:
                ahead += ((now_ns - self.last_at) << 32) // 1_000_000_000
            if not -self.max_jump <= ntp - last <= ahead:
                if not (self._jumps and abs(ntp - self._jumped) <= self.max_jump):
                    self._jumps, self._run_from = 0, (ntp, now_ns)     # a new run
                self._jumps, self._jumped = self._jumps + 1, ntp
                if not (self._step_expected or self._run_is_step(ntp, now_ns)):
                    return f'{(ntp - last) / _FRAC:+.3g} s from the last valid time'
                stepped, stepped_from = self._jumps - 1, last
        self.last, self.last_at, self._jumps = ntp, now_ns, 0
        self.stepped, self.stepped_from = stepped, stepped_from
        self._step_expected = False              # the clock's time after the set has come
        return None

    def _run_is_step(self, ntp: int, now_ns: int | None) -> bool:
        """The agreeing jumped times up to ``ntp`` (received at ``now_ns``) are a clock step:
        ``confirm`` of them, over :data:`MIN_STEP_S` of their own time and, when both ends'
        receive times are known, of receive time."""
        first, first_at = self._run_from
        if self._jumps < self.confirm or ntp - first < _MIN_STEP:
            return False
        return now_ns is None or first_at is None or now_ns - first_at >= _MIN_STEP_NS


def _jump_bound(max_jump_s: float) -> int:
    """``max_jump_s`` in NTP64 units; ValueError unless finite and above 0."""
    if not (math.isfinite(max_jump_s) and max_jump_s > 0):
        raise ValueError(f'the time jump bound must be a finite number of seconds above '
                         f'0, not {max_jump_s}')
    return int(max_jump_s * _FRAC)


class DeviceNtpTimeChecks:
    """One :class:`NtpTimeCheck` per device of a stream (an ECU forwards the messages of
    devices with clocks of their own), made on a device's first time; keys are the header's
    u8 device id, so there are at most 256."""

    def __init__(self, max_jump_s: float = MAX_TIME_JUMP_S, *, confirm: int = 3):
        _jump_bound(max_jump_s)                  # refused now, not at a device's first time
        self.max_jump_s, self.confirm = max_jump_s, confirm
        self.devices: dict[int, NtpTimeCheck] = {}

    def __getitem__(self, device_id: int) -> NtpTimeCheck:
        check = self.devices.get(device_id)
        if check is None:
            if not 0 <= device_id <= 0xFF:
                raise ValueError(f'a device id is a u8, not {device_id}')
            check = self.devices[device_id] = NtpTimeCheck(self.max_jump_s,
                                                            confirm=self.confirm)
        return check

    def why_invalid(self, device_id: int, ntp: int, now_ns: int | None = None) -> str | None:
        """:meth:`NtpTimeCheck.why_invalid` against the device's own last valid time."""
        return self[device_id].why_invalid(ntp, now_ns)

    def expect_step(self) -> None:
        """The clock was set: :meth:`NtpTimeCheck.expect_step` for every device seen (one
        seen after it starts with its first time anyway)."""
        for check in self.devices.values():
            check.expect_step()

    def reset(self) -> None:
        """A new stream: no device seen yet."""
        self.devices.clear()


class CheckedTime(NamedTuple):
    """A time as its check found it (a message's header time as its whole recording's check,
    a record's own time as :func:`why_invalid_beside`): ``ntp`` the time to use (an invalid
    one's: a valid neighbour's, or the header time), ``why`` None when valid, else why not."""
    ntp: int
    why: Optional[str]


@dataclass
class CheckedTimes:
    """:func:`check_ntp_times`' answer: the time to use for each message (``times``) and why
    each invalid one is (``why``: index → why, in order)."""
    times: list
    why: dict

    @property
    def invalid(self) -> list:
        """The indices of the invalid times."""
        return list(self.why)

    @property
    def reasons(self) -> list:
        """(index, why) of the first ten invalid times."""
        return list(itertools.islice(self.why.items(), 10))


def _returns(old_last: int, away_first: int, away_last: int, back: int, bound: int) -> bool:
    """A clock that left the base whose last valid time is ``old_last`` for times from
    ``away_first`` to ``away_last``, then stepped to ``back``, came back to that base: ``back``
    is where it would have gone on to, ``old_last`` plus the time away, up to ``bound`` later
    (gaps) and :data:`MIN_STEP_S` earlier (a reset clock counting from power-up again, or one
    set anew, lands elsewhere)."""
    return -_MIN_STEP <= back - old_last - (away_last - away_first) <= bound


def check_ntp_times(times: Sequence[int | None], max_jump_s: float = MAX_TIME_JUMP_S,
                    devices: Sequence[int] | None = None) -> CheckedTimes:
    """The NTP64 times of a whole recording through one :class:`NtpTimeCheck` per device
    (``devices``: each message's device id; None: one device), each anchored at the median of
    its device's first five times that are not :func:`ntp64_is_unset` (a leading outlier is
    outvoted); the times of a confirmed clock step are valid from its first one, unless a
    later step returns to the base it left (:func:`_returns`): then that excursion is
    invalid.  An invalid time is replaced by the last valid time before it (leading ones: the
    first valid one), so the times stay monotonic where the valid ones are, unless that time
    is another clock's (more than ``max_jump_s`` from its device's last valid time, leading:
    first): then by that one of its device.  None (a message without a time, e.g. a file
    trailer) is filled likewise, not checked; without any valid time, every time is 0."""
    devices = [0] * len(times) if devices is None else devices
    first: dict[int, list] = {}                  # device → its first five set times
    for t, d in zip(times, devices):
        if t is not None and not ntp64_is_unset(t) and len(first.setdefault(d, [])) < 5:
            first[d].append(t)
    bound = _jump_bound(max_jump_s)
    checks = {d: NtpTimeCheck(max_jump_s, anchor=sorted(f)[len(f) // 2])
              for d, f in first.items()}
    unset = NtpTimeCheck(max_jump_s)             # a device whose times are all unset
    jumped: dict[int, list] = {d: [] for d in checks}
    left: dict[int, tuple] = {}                  # device → (old base's last time, step index)
    invalid: dict[int, str] = {}                 # index → why
    for i, (t, d) in enumerate(zip(times, devices)):
        if t is None:
            continue
        check = checks.get(d, unset)
        why = check.why_invalid(t)
        if why is not None:
            invalid[i] = why
            if not ntp64_is_unset(t):
                jumped[d].append(i)
            continue
        start = jumped[d][-check.stepped] if check.stepped else i
        for k in jumped[d][len(jumped[d]) - check.stepped:]:   # a clock step: valid after all
            del invalid[k]
        jumped[d].clear()
        if check.stepped_from is None:
            continue
        old = left.pop(d, None)
        if old is not None and _returns(old[0], times[old[1]], check.stepped_from,
                                        times[start], bound):
            for k in range(old[1], start):       # the excursion: invalid after all
                if devices[k] == d and times[k] is not None and k not in invalid:
                    invalid[k] = (f'{(times[k] - old[0]) / _FRAC:+.3g} s from the last valid '
                                  'time (its clock came back to that)')
            invalid = dict(sorted(invalid.items()))
        else:
            left[d] = (check.stepped_from, start)
    first_valid: dict[int, int] = {}             # device → its first valid time
    for i, (t, d) in enumerate(zip(times, devices)):
        if t is not None and i not in invalid and d not in first_valid:
            first_valid[d] = t
    out = list(times)
    last: dict[int, int] = {}                    # device → its last valid time so far
    last_any = next((t for i, t in enumerate(times) if t is not None and i not in invalid), 0)
    for i, (t, d) in enumerate(zip(times, devices)):
        if t is not None and i not in invalid:
            last[d] = last_any = t
        else:
            own = last.get(d, first_valid.get(d)) if t is not None else None
            out[i] = own if own is not None and abs(last_any - own) > bound else last_any
    return CheckedTimes(out, invalid)
