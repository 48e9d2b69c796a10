"""core.replay.Playback: an indexed recording handed out at its recorded pace, with
pause, resume, seek, loop and a rate factor (real threads, real clocks; generous bounds)."""
import threading
import time

import pytest

from ros_sim_bridge.core.replay import Playback

from conftest import wait_until

MS = 1_000_000


class Log:
    def __init__(self):
        self.items: list[tuple[int, float]] = []
        self.events: list = []
        self.lock = threading.Lock()

    def handle(self, i):
        with self.lock:
            self.items.append((i, time.monotonic()))

    def indices(self):
        with self.lock:
            return [i for i, _ in self.items]


def make(stamps, log, **kw):
    pb = Playback(len(stamps), lambda i: stamps[i], log.handle,
                  on_jump=lambda: log.events.append(('jump', len(log.items))),
                  on_end=lambda looping: log.events.append(('end', looping)), **kw)
    return pb


def test_paced_by_the_stamps_and_the_rate_factor():
    stamps = [i * 100 * MS for i in range(11)]          # 1 s of recording
    for speed, expected in ((1.0, 1.0), (4.0, 0.25)):
        log = Log()
        pb = make(stamps, log, speed=speed)
        pb.start()
        try:
            assert wait_until(lambda: pb.state == 'finished', 10.0)
        finally:
            pb.stop()
        assert log.indices() == list(range(11))
        span = log.items[-1][1] - log.items[0][1]
        assert expected * 0.9 <= span <= expected + 0.5, (speed, span)
        gaps = [b[1] - a[1] for a, b in zip(log.items, log.items[1:])]
        assert min(gaps) >= 0.1 / speed * 0.5               # spread out, not a burst
        assert log.events == [('end', False)]


def test_speed_0_and_missing_stamps_go_at_once_and_clock_jumps_are_not_waited_out():
    log = Log()
    pb = make([None, 5 * MS, 10**15, None, 10**15 + 1 * MS], log, speed=1.0, max_gap_s=1.0)
    t = time.monotonic()
    pb.start()
    try:
        assert wait_until(lambda: pb.state == 'finished', 5.0)
    finally:
        pb.stop()
    assert log.indices() == [0, 1, 2, 3, 4] and time.monotonic() - t < 2.0
    log = Log()
    pb = make([i * 1000 * MS for i in range(5)], log, speed=0.0)   # 4 s recorded
    t = time.monotonic()
    pb.start()
    try:
        assert wait_until(lambda: pb.state == 'finished', 5.0)
    finally:
        pb.stop()
    assert log.indices() == [0, 1, 2, 3, 4] and time.monotonic() - t < 2.0


def test_pause_resume_and_seek_back_and_forth():
    stamps = [i * 50 * MS for i in range(100)]          # 5 s at 20 Hz
    log = Log()
    pb = make(stamps, log, speed=1.0, paused=True)
    pb.start()
    try:
        time.sleep(0.3)
        assert log.indices() == [] and pb.state == 'paused'
        assert pb.resume() == 0
        assert wait_until(lambda: len(log.items) >= 5, 5.0)
        at = pb.pause()
        time.sleep(0.3)
        n = len(log.items)
        assert pb.state == 'paused' and log.indices()[-1] == at - 1
        time.sleep(0.3)
        assert len(log.items) == n                      # nothing while paused
        assert pb.seek(80) == 80                        # forwards, still paused
        time.sleep(0.2)
        assert len(log.items) == n
        pb.resume()
        assert wait_until(lambda: len(log.items) >= n + 3, 5.0)
        assert log.indices()[n:n + 3] == [80, 81, 82]
        assert ('jump', n) in log.events                # before the first item after it
        t_seek = time.monotonic()
        pb.seek(10)                                     # backwards while playing
        assert wait_until(lambda: 10 in log.indices()[n + 3:], 5.0)
        i10 = log.indices().index(10, n + 3)
        assert log.items[i10][1] - t_seek < 0.5         # at once, not after a pause
        assert wait_until(lambda: len(log.items) >= i10 + 3, 5.0)
        assert log.indices()[i10:i10 + 3] == [10, 11, 12]
    finally:
        pb.stop()


def test_loop_starts_again_at_start_and_seek_after_the_end_plays_again():
    stamps = [i * 10 * MS for i in range(10)]
    log = Log()
    pb = make(stamps, log, speed=1.0, loop=True, start=5)
    pb.start()
    try:
        assert wait_until(lambda: pb.loops >= 2, 5.0)
    finally:
        pb.stop()
    idx = log.indices()
    assert idx[:10] == [5, 6, 7, 8, 9, 5, 6, 7, 8, 9]
    assert ('end', True) in log.events and ('jump', 5) in log.events
    log = Log()
    pb = make(stamps, log, speed=0.0)
    pb.start()
    try:
        assert wait_until(lambda: pb.state == 'finished', 5.0)
        pb.seek(7)
        assert wait_until(lambda: len(log.items) == 13 and pb.state == 'finished', 5.0)
        pb.resume()                                     # after the end: from the start
        assert wait_until(lambda: len(log.items) == 23, 5.0)
    finally:
        pb.stop()
    assert log.indices() == list(range(10)) + [7, 8, 9] + list(range(10))


def test_a_raising_handler_is_counted_and_play_goes_on():
    errors = []

    def handle(i):
        if i == 2:
            raise RuntimeError('boom')
        seen.append(i)
    seen = []
    pb = Playback(5, lambda i: None, handle, on_error=lambda i, exc: errors.append((i, exc)))
    pb.start()
    try:
        assert wait_until(lambda: pb.state == 'finished', 5.0)
    finally:
        pb.stop()
    assert seen == [0, 1, 3, 4] and pb.health.handler_errors == 1
    assert errors[0][0] == 2 and 'boom' in repr(errors[0][1])
    assert pb.ensure_running()


def test_negative_speed_refused():
    with pytest.raises(ValueError):
        Playback(1, lambda i: None, lambda i: None, speed=-1.0)
