"""carla.session.ReplaySession: what the replayer publishes when (SUPPLEMENT §5.5): every
recorded frame once at its own time without interpolation, the time reached with it, the time
held while paused, a jump at start and seek."""
import numpy as np
import pytest

from ros_sim_bridge.carla.session import ReplaySession

ELAPSED = np.arange(201) * 0.05          # 10 s at 20 Hz


def test_without_interpolation_every_frame_is_published_once_in_order():
    s = ReplaySession(ELAPSED, 10.0, rate_factor=20.0, publish_rate=400.0)
    assert s.tick_period == pytest.approx(0.01) and not s.interpolate   # MIN_TICK_S
    _, first = s.tick(0.0)
    assert [(p.index, p.jump) for p in first] == [(0, True)]
    got, now = [], 0.0
    for late in (0.0025, 0.0025, 0.011, 0.0007, 0.02, 0.0025):  # ticks late and early
        now += late
        got += s.tick(now)[1]
    idx = [p.index for p in got]
    assert idx == list(range(1, idx[-1] + 1))                  # none left out, none twice
    assert [p.t for p in got] == pytest.approx(ELAPSED[1:idx[-1] + 1].tolist())
    assert idx[-1] == s.frame_at(now * 20.0) and not any(p.jump for p in got)
    assert s.skipped == 0


def test_a_tick_far_too_late_publishes_the_newest_frames_and_counts_the_others():
    s = ReplaySession(ELAPSED, 10.0, rate_factor=20.0, publish_rate=400.0)
    s.tick(0.0)
    _, got = s.tick(0.4)                                        # 8 s of recording passed
    assert len(got) == s.max_batch and got[-1].index == 160
    assert s.skipped == 160 - s.max_batch


def test_interpolating_publishes_the_time_reached_each_tick():
    s = ReplaySession(ELAPSED, 10.0, rate_factor=1.0, publish_rate=20.0)
    assert s.interpolate and s.tick_period == pytest.approx(0.05)
    s.tick(0.0)
    _, [p] = s.tick(0.033)
    assert p.t == pytest.approx(0.033) and p.index == 0 and p.interpolate


def test_paused_the_time_held_is_published_at_the_publish_rate_and_a_seek_at_once():
    s = ReplaySession(ELAPSED, 10.0, rate_factor=4.0, publish_rate=10.0, paused=True)
    assert s.tick_period == pytest.approx(0.0125)
    assert [p.t for p in s.tick(0.0)[1]] == [0.0]
    counts = [len(s.tick(k * 0.0125)[1]) for k in range(1, 17)]
    assert sum(counts) == 2                                     # 0.2 s at 10 Hz
    assert s.seek(-1.0, 0.21) == pytest.approx(9.0)
    [p] = s.tick(0.22)[1]
    assert p.jump and p.t == pytest.approx(9.0) and p.index == 180


def test_the_end_publishes_the_last_frames_then_holds():
    s = ReplaySession(ELAPSED, 10.0, start_time=-1.0, rate_factor=4.0, publish_rate=20.0)
    s.tick(0.0)
    step, got = s.tick(0.3)
    assert step.ended and [p.index for p in got] == list(range(181, 201))
    assert s.clock.state == 'finished'


def test_start_after_end_is_refused():
    with pytest.raises(ValueError, match='start_time 6 s is after end_time 3 s'):
        ReplaySession(ELAPSED, 10.0, start_time=6.0, end_time=3.0)


def test_a_loop_publishes_the_frames_before_the_end_then_jumps_to_the_start():
    s = ReplaySession(ELAPSED, 10.0, start_time=9.0, rate_factor=4.0, publish_rate=20.0,
                      loop=True)
    s.tick(0.0)
    _, got = s.tick(0.2)                                    # 9.8 s: frames 181..196
    _, got = s.tick(0.3)                                    # 10.2 s: past the end
    assert [p.index for p in got] == [197, 198, 199, 200, 180]
    assert [p.jump for p in got] == [False] * 4 + [True] and got[-1].t == pytest.approx(9.0)
    assert s.clock.loops == 1
