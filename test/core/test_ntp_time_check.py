"""The one rule for invalid NTP64 header times (core/ntp.py), ROS-free: 0 and all ones are no
time; a time more than ``max_jump_s`` from the last valid one is invalid unless the times after
it confirm a clock step; whole recordings get their invalid times replaced by a neighbouring
valid one.

Byte vectors are data headers built by the spec's table (ibeo interface §2.4, 24 bytes,
big-endian): magic 0xAFFEC0C2 (u32), size of previous message (u32), body size (u32),
reserved (u8), device id (u8), data type (u16), NTP64 time (seconds << 32 | fraction).
"""
from __future__ import annotations

import struct

import pytest

from ros_sim_bridge.core.ntp import NTP64_ALL_ONES, NtpTimeCheck, check_ntp_times
from ros_sim_bridge.ibeo.codec.header import decode_header

S = 1 << 32                                  # one second in NTP64
T0 = 3_900_000_000 * S                       # 2023-08-03, a set clock
YEARS = 5 * 365 * 86_400 * S


def header_bytes(ntp_seconds: int, ntp_fraction: int = 0, data_type: int = 0x2805) -> bytes:
    """§2.4 data header with the NTP time as its two 32-bit words."""
    return struct.pack('>IIIBBHII', 0xAFFEC0C2, 0, 0, 0, 1, data_type, ntp_seconds,
                       ntp_fraction)


def ntp_of(raw: bytes) -> int:
    return decode_header(raw).ntp


def test_zero_and_all_ones_headers_are_no_time():
    check = NtpTimeCheck()
    assert check.why_invalid(ntp_of(header_bytes(3_900_000_000))) is None
    assert 'time 0' in check.why_invalid(ntp_of(header_bytes(0, 0)))
    assert ntp_of(header_bytes(0xFFFFFFFF, 0xFFFFFFFF)) == NTP64_ALL_ONES
    assert 'all ones' in check.why_invalid(ntp_of(header_bytes(0xFFFFFFFF, 0xFFFFFFFF)))
    assert check.why_invalid(ntp_of(header_bytes(3_900_000_000, 1 << 31))) is None


def test_power_up_clock_and_small_steps_are_valid():
    """A clock counting from power-up (12 s) is a time; steps of ms and a stall of 59 s are
    valid; 0 s 1 fraction is not 0."""
    check = NtpTimeCheck(60.0)
    for sec, frac in ((0, 1), (12, 0), (12, 1 << 28), (13, 0), (72, 0), (71, 0)):
        assert check.why_invalid(ntp_of(header_bytes(sec, frac))) is None, (sec, frac)


def test_a_single_jump_of_years_is_invalid_and_the_times_go_on():
    check = NtpTimeCheck(60.0)
    assert check.why_invalid(T0) is None
    why = check.why_invalid(T0 + YEARS)
    assert why is not None and 's from the last valid time' in why
    assert check.why_invalid(T0 - YEARS) is not None            # backwards too
    assert check.why_invalid(T0 + S // 10) is None
    assert check.why_invalid(T0 + 61 * S) is not None           # beyond the bound
    assert check.why_invalid(T0 + 2 * S) is None


def test_a_confirmed_clock_step_is_taken_after_confirm_times():
    """Power-up clock, then the clock is set: the first ``confirm - 1`` set times are invalid,
    then the new time base is valid (not invalid for ever)."""
    check = NtpTimeCheck(60.0, confirm=3)
    assert [check.why_invalid(t) is None for t in (12 * S, 13 * S, T0, T0 + S, T0 + 2 * S,
                                                   T0 + 3 * S)] == \
        [True, True, False, False, True, True]
    assert check.why_invalid(14 * S) is not None                # the old base is gone


def test_an_unsynced_device_interleaved_never_becomes_valid():
    """Every second message from a device without time sync (power-up clock): never
    confirmed, because a valid time comes between its times."""
    check = NtpTimeCheck(60.0)
    valid = [check.why_invalid(t) is None
             for k in range(20) for t in (T0 + k * S // 10, (100 + k) * S)]
    assert valid == [True, False] * 20


def test_receive_time_elapsed_widens_the_bound_forwards_only():
    """Live: a sensor silent for 10 minutes sends a time 10 minutes on: valid; a time 10
    minutes back after the same silence is not."""
    check = NtpTimeCheck(60.0)
    now = 1_700_000_000 * 10**9
    assert check.why_invalid(T0, now) is None
    assert check.why_invalid(T0 + 600 * S, now + 600 * 10**9) is None
    assert check.why_invalid(T0, now + 601 * 10**9) is not None
    assert check.why_invalid(T0 + 1200 * S, now + 601 * 10**9) is not None


def test_reset_forgets_the_stream():
    check = NtpTimeCheck(60.0)
    assert check.why_invalid(T0) is None
    check.reset()
    assert check.why_invalid(T0 + YEARS) is None


def test_bad_bounds_refused():
    for bad in (0.0, -1.0, float('nan'), float('inf')):
        with pytest.raises(ValueError):
            NtpTimeCheck(bad)


def test_a_recording_gets_neighbouring_valid_times():
    """Leading 0 and all ones: the first valid time; a jump of years and a 0 inside: the
    last valid time before them; times without a check (None: an IDC trailer) filled, not
    counted."""
    raw = [header_bytes(0), header_bytes(0xFFFFFFFF, 0xFFFFFFFF)]
    raw += [header_bytes(3_900_000_000 + k) for k in range(3)]
    raw += [header_bytes(3_900_000_000 + 5 * 365 * 86_400 + 2)]          # years on
    raw += [header_bytes(3_900_000_003), header_bytes(0), header_bytes(3_900_000_004)]
    times = [ntp_of(r) for r in raw] + [None]
    got = check_ntp_times(times, 60.0)
    assert got.invalid == [0, 1, 5, 7]
    assert got.times == [T0, T0, T0, T0 + S, T0 + 2 * S, T0 + 2 * S, T0 + 3 * S, T0 + 3 * S,
                         T0 + 4 * S, T0 + 4 * S]
    assert [i for i, _ in got.reasons] == [0, 1, 5, 7]
    assert all(got.times[i + 1] >= got.times[i] for i in range(len(times) - 1))


def test_a_leading_outlier_is_outvoted():
    """The first time is years off, the rest agree: only the first is invalid."""
    times = [T0 + YEARS] + [T0 + k * S for k in range(6)]
    got = check_ntp_times(times, 60.0)
    assert got.invalid == [0] and got.times[0] == T0


def test_a_recording_without_any_valid_time_is_all_zero():
    got = check_ntp_times([0, NTP64_ALL_ONES, None, 0], 60.0)
    assert got.invalid == [0, 1, 3] and got.times == [0, 0, 0, 0]


def test_only_the_first_reasons_are_kept():
    got = check_ntp_times([T0] + [0] * 100, 60.0)
    assert len(got.invalid) == 100 and len(got.reasons) == 10


def test_a_clock_step_in_a_recording_is_valid_from_its_first_time():
    """Power-up clock (12 s …), then set: looking back, nothing is invalid."""
    times = [12 * S, 13 * S, 14 * S, 0, T0, T0 + S, T0 + 2 * S]
    got = check_ntp_times(times, 60.0)
    assert got.invalid == [3] and got.times[3] == 14 * S and got.times[4:] == times[4:]


def test_a_step_expected_is_taken_at_once():
    """The caller set the clock (expect_step): the first time of the new base is valid, and
    the flag is used up by it."""
    check = NtpTimeCheck(60.0)
    assert check.why_invalid(12 * S) is None
    check.expect_step()
    assert check.why_invalid(T0) is None and check.why_invalid(T0 + S) is None
    assert check.why_invalid(T0 + YEARS) is not None


def test_an_expected_step_ends_with_the_next_valid_time():
    """The clock was set to about the time it had (the normal sync): its next time is within
    the bound and ends the expectation; a corrupt header hours later is invalid, not the new
    time base, and the good times after it stay valid."""
    check = NtpTimeCheck(60.0)
    assert check.why_invalid(ntp_of(header_bytes(3_900_000_000))) is None
    check.expect_step()
    assert check.why_invalid(ntp_of(header_bytes(3_900_000_000, 1 << 31))) is None
    assert check.why_invalid(ntp_of(header_bytes(3_900_000_000 + 5 * 3600))) is not None
    assert check.why_invalid(ntp_of(header_bytes(3_900_000_001))) is None
    assert check.why_invalid(ntp_of(header_bytes(3_900_000_001, 1 << 31))) is None


# --- a clock step needs agreement over time -------------------------------------------------

US = S // 1_000_000                          # one microsecond in NTP64


def test_one_frame_of_agreeing_times_years_off_is_no_step():
    """The attack: one ECU frame whose header time is 5 years off carries 7 messages
    microseconds apart: they agree with each other, but span no time, so all 7 are invalid and
    the next frame's time (on the old base) is valid, the old base kept."""
    check = NtpTimeCheck(60.0)
    assert check.why_invalid(T0) is None
    assert [check.why_invalid(T0 + YEARS + k * US) is None for k in range(7)] == [False] * 7
    assert check.why_invalid(T0 + S // 10) is None
    assert check.why_invalid(T0 + YEARS + S) is not None           # the old base still holds


def test_live_a_step_needs_its_receive_times_to_advance_as_well():
    """Live: jumped times that advance 0.6 s with each other but arrive in one burst are no
    step; the same times arriving 0.3 s apart are (from the one that makes 0.5 s of both)."""
    now = 1_700_000_000 * 10**9
    burst, spread = NtpTimeCheck(60.0), NtpTimeCheck(60.0)
    for check in (burst, spread):
        assert check.why_invalid(T0, now) is None
    jumped = [T0 + YEARS + k * 3 * S // 10 for k in range(3)]
    assert [burst.why_invalid(t, now + 10**6) is None for t in jumped] == [False] * 3
    assert [spread.why_invalid(t, now + k * 3 * 10**8) is None for k, t in enumerate(jumped)] \
        == [False, False, True]
    assert spread.stepped == 2 and spread.why_invalid(T0, now + 7 * 10**8) is not None


def test_agreeing_times_that_do_not_advance_are_no_step():
    """A header time stuck at one value years off (received over seconds) never becomes the
    time base: its times do not advance with each other."""
    check = NtpTimeCheck(60.0)
    now = 1_700_000_000 * 10**9
    assert check.why_invalid(T0, now) is None
    assert all(check.why_invalid(T0 + YEARS, now + k * 10**9) is not None for k in range(1, 6))


def test_a_frame_years_off_in_a_recording_is_invalid_not_its_span():
    """check_ntp_times: frames of 7 messages 40 ms apart, one of them 5 years off (its
    messages µs apart): those 7 invalid and given the last valid time, nothing else."""
    times = [T0 + f * S // 25 + k * US for f in range(20) for k in range(7)]
    bad = range(10 * 7, 11 * 7)
    for i in bad:
        times[i] += YEARS
    got = check_ntp_times(times, 60.0)
    assert got.invalid == list(bad)
    assert max(got.times) - min(got.times) < S
    assert all(got.times[i] == times[bad[0] - 1] for i in bad)


def test_an_excursion_the_clock_returns_from_is_invalid():
    """A recording's clock jumps 5 years on for a second (long enough to be a step), then
    comes back to its old base about a second on: the excursion is invalid, every time of the
    old base valid (also the first ones of its return)."""
    times = [T0 + k * S // 10 for k in range(10)]
    times += [T0 + YEARS + k * S // 10 for k in range(10)]          # 1 s, 5 years off
    times += [T0 + 2 * S + k * S // 10 for k in range(10)]         # back, a second on
    got = check_ntp_times(times, 60.0)
    assert got.invalid == list(range(10, 20))
    assert all('from the last valid time' in why for why in got.why.values())
    assert max(got.times) - min(got.times) < 3 * S


def test_a_clock_set_then_reset_to_power_up_stays_valid():
    """Power-up clock (12 s …), set to a date for 10 s, then reset (power-up clock from 0
    again): two steps, no excursion — the old base does not go on where it would have."""
    times = [(12 << 32) + k * S // 10 for k in range(10)]
    times += [T0 + k * S // 10 for k in range(100)]
    times += [k * S // 10 for k in range(1, 11)]
    got = check_ntp_times(times, 60.0)
    assert got.invalid == []
