"""core.replay.ReplayClock: the recording time a replayer plays, driven by tick(now)."""
import pytest

from ros_sim_bridge.core.replay import ReplayClock


def test_time_runs_at_the_rate_and_stops_at_the_end():
    c = ReplayClock(1.0, 3.0, rate=2.0)
    s = c.tick(10.0)
    assert s.t == 1.0 and s.jumped and not s.ended          # the start is a jump
    assert c.tick(10.5).t == pytest.approx(2.0) and c.state == 'playing'
    s = c.tick(11.0)
    assert s.t == 3.0 and s.ended and c.state == 'finished'
    s = c.tick(20.0)
    assert s.t == 3.0 and not s.ended and not s.jumped     # ended once


def test_pause_holds_and_resume_goes_on_from_there():
    c = ReplayClock(0.0, 10.0)
    c.tick(0.0)
    c.tick(1.0)
    assert c.pause() == pytest.approx(1.0)
    assert c.tick(5.0).t == pytest.approx(1.0)
    assert c.resume(6.0) == pytest.approx(1.0)
    assert c.tick(6.5).t == pytest.approx(1.5)               # the pause is not counted


def test_resume_after_the_end_plays_again_from_the_start():
    c = ReplayClock(2.0, 4.0)
    c.tick(0.0)
    assert c.tick(5.0).ended
    assert c.resume(6.0) == 2.0
    s = c.tick(6.0)
    assert s.jumped and s.t == 2.0 and c.state == 'playing'


def test_seek_is_kept_within_start_and_end_and_is_a_jump():
    c = ReplayClock(2.0, 4.0, paused=True)
    c.tick(0.0)
    assert c.seek(9.0, 1.0) == 4.0 and c.seek(-1.0, 1.0) == 2.0
    assert c.seek(3.0, 1.0) == 3.0
    s = c.tick(2.0)
    assert s.jumped and s.t == 3.0 and c.state == 'paused'   # a paused clock stays paused


def test_loop_goes_back_to_the_start():
    c = ReplayClock(0.0, 1.0, loop=True)
    c.tick(0.0)
    s = c.tick(1.5)
    assert s.looped and s.jumped and s.t == 0.0 and c.loops == 1 and not s.ended


@pytest.mark.parametrize('kwargs', [dict(rate=0.0), dict(rate=-1.0), dict(start=2.0)])
def test_bad_arguments_are_refused(kwargs):
    args = dict(start=0.0, end=1.0, rate=1.0) | kwargs
    with pytest.raises(ValueError):
        ReplayClock(**args)


def test_recording_time_counts_negative_values_from_the_end_and_stays_within_the_recording():
    from ros_sim_bridge.core.replay import recording_time
    assert recording_time(2.5, 10.0) == 2.5
    assert recording_time(-1.0, 10.0) == 9.0
    assert recording_time(-20.0, 10.0) == 0.0
    assert recording_time(12.0, 10.0) == 10.0
