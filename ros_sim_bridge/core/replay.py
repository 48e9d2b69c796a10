"""The one replay control of the suite (pause, resume, seek, rate, loop), ROS-free.

:class:`ReplayClock` is the recording time a replayer plays, driven by explicit
:meth:`ReplayClock.tick` calls with the wall time (no thread, no timer, no I/O): the CARLA
replayer's session ticks it from the node's timer.  :class:`Playback` hands the items of an
indexed recording (the Ibeo ``.idc`` file source) out on a supervised thread at their recorded
pace, timed and controlled by a ReplayClock.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from ros_sim_bridge.core.supervise import (RateLimitedLog, SupervisedLoop, SupervisedThread,
                                            ThreadHealth, report_failure)


def recording_time(t: float, duration: float) -> float:
    """A time parameter of a replay (s; negative: from the end) within ``0 .. duration``."""
    return max(0.0, min(duration + t if t < 0 else t, duration))


@dataclass
class Step:
    """What one :meth:`ReplayClock.tick` found."""
    t: float               # the recording time now, s
    jumped: bool = False   # first step after the start, a seek or a loop: discontinuous
    ended: bool = False    # reached the end in this step and stopped there (not looping)
    looped: bool = False   # passed the end in this step and went back to the start


class ReplayClock:
    """Recording time ``t`` in ``start .. end`` s, advanced by ``rate`` recording seconds per
    wall second while playing.  At ``end`` it goes back to ``start`` (``loop``) or stops
    (``finished``) until a seek or a resume.  Times are the caller's (any monotonic clock, s);
    the first :meth:`tick` is a jump to ``start``."""

    def __init__(self, start: float, end: float, rate: float = 1.0, loop: bool = False,
                 paused: bool = False):
        if not rate > 0:
            raise ValueError(f'rate must be > 0, not {rate}')
        if start > end:
            raise ValueError(f'start {start} is after end {end}')
        self.start, self.end, self.rate, self.loop = float(start), float(end), float(rate), loop
        self.t = self.start
        self.paused = paused
        self.finished = False
        self.loops = 0              # times play went back to the start
        self._jump = True
        self._last: Optional[float] = None

    @property
    def state(self) -> str:
        return 'finished' if self.finished else 'paused' if self.paused else 'playing'

    # --- controls ------------------------------------------------------------------------
    def pause(self) -> float:
        """Hold at the time reached; returns it."""
        self.paused = True
        return self.t

    def resume(self, now: float) -> float:
        """Play on from the time reached (after the end without loop: from ``start``, a
        jump); returns the time played from."""
        if self.finished:
            self.t, self._jump = self.start, True
        self.paused = self.finished = False
        self._last = now
        return self.t

    def seek(self, t: float, now: float) -> float:
        """Jump to ``t`` (kept within ``start .. end``); a finished clock plays again, a paused
        one stays paused.  Returns the time jumped to."""
        self.t = min(max(float(t), self.start), self.end)
        self._jump = True
        self.finished = False
        self._last = now
        return self.t

    def finish(self) -> None:
        """Stop where it is, finished (the items of an indexed recording ran out)."""
        self.finished = True

    # --- time ----------------------------------------------------------------------------
    def tick(self, now: float) -> Step:
        """Advance to wall time ``now``."""
        if self._last is not None and not self.paused and not self.finished:
            self.t += (now - self._last) * self.rate
        self._last = now
        step = Step(self.t)
        if self.t >= self.end and not self.finished:
            if self.loop and not self.paused and self.end > self.start:
                self.t, self._jump = self.start, True
                self.loops += 1
                step.looped = True
            else:
                self.t, self.finished = self.end, True
                step.ended = True
        step.t = self.t
        step.jumped, self._jump = self._jump, False
        return step


class Playback(SupervisedLoop):
    """Items ``0 .. count-1`` of an indexed recording handed out on a supervised thread at
    their recorded pace, with a replayer's controls: pause, resume, seek, loop, rate.

    ``stamp_ns(i) -> int | None`` is item ``i``'s recording time (None: hand it out at once);
    ``handle(i)`` hands it on (an exception is counted in ``health`` and reported to
    ``on_error(i, exc)``; playing goes on).  ``speed`` 1.0 is real time, 2.0 twice as fast,
    0 as fast as possible.  Pacing restarts (the next item goes out at once) after a seek, a
    resume, a loop, and a recording time more than ``max_gap_s`` from the previous one (a
    corrupt stamp or a clock reset is never waited out).

    Callbacks on the playback thread: ``on_jump()`` before the first item after a seek or a
    loop (the stream is discontinuous there), ``on_end(looping)`` when the last item was
    handed (``looping``: play goes on at ``start``; else the playback is finished until a
    seek or resume).  Thread-safe controls; :meth:`stop` ends the thread.
    """

    def __init__(self, count: int, stamp_ns: Callable[[int], Optional[int]],
                 handle: Callable[[int], None], *, speed: float = 1.0, loop: bool = False,
                 start: int = 0, paused: bool = False, max_gap_s: float = 5.0,
                 on_jump: Optional[Callable[[], None]] = None,
                 on_end: Optional[Callable[[bool], None]] = None,
                 on_error: Optional[Callable[[int, BaseException], None]] = None,
                 name: str = 'playback'):
        if speed < 0:
            raise ValueError(f'speed must be >= 0 (0: as fast as possible), not {speed}')
        self.count = count
        self.stamp_ns = stamp_ns
        self.handle = handle
        self.speed = float(speed)
        self.loop = loop
        self.start_index = min(max(int(start), 0), count)
        self.max_gap_ns = max_gap_s * 1e9
        self.on_jump, self.on_end, self.on_error = on_jump, on_end, on_error
        self.name = name
        self.health = ThreadHealth(name)
        self._fallback_log = RateLimitedLog()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self.position = self.start_index     # the next item to hand out
        #: the pace: seconds of recording since the anchor item's stamp, run at ``speed``
        #: while playing; its state is the playback's (paused, finished, loops)
        self.clock = ReplayClock(0.0, math.inf, self.speed or 1.0, paused=paused)
        self.handed = 0                      # items handed out in all
        self.last_index: Optional[int] = None
        self._anchor: Optional[int] = None   # recording ns of the item the clock's 0 is
        self._last_rec: Optional[int] = None
        self._jumped = False
        self._thread = SupervisedThread(name, self._run, self._stop, self.health)

    # --- life cycle ---------------------------------------------------------------------
    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._thread.join(timeout)

    # --- controls -----------------------------------------------------------------------
    @property
    def state(self) -> str:
        with self._cond:
            return self.clock.state

    @property
    def paused(self) -> bool:
        return self.clock.paused

    @property
    def finished(self) -> bool:
        return self.clock.finished

    @property
    def loops(self) -> int:
        """Times play went back to the start."""
        return self.clock.loops

    def pause(self) -> int:
        """Hold before the next item; returns its index."""
        with self._cond:
            self.clock.pause()
            self._cond.notify_all()
            return self.position

    def resume(self) -> int:
        """Play on from the next item (at once, pacing restarts there); after the end without
        loop: from the start.  Returns the index played next."""
        with self._cond:
            if self.clock.finished:
                self.position, self._jumped = self.start_index, True
            self.clock.resume(time.monotonic())
            self._anchor = None
            self._cond.notify_all()
            return self.position

    def seek(self, index: int) -> int:
        """Play item ``index`` next (clamped to the recording; pacing restarts there); a
        finished playback plays again, a paused one stays paused.  Returns the index."""
        with self._cond:
            self.position = min(max(int(index), 0), self.count)
            self.clock.seek(0.0, time.monotonic())
            self._anchor = None
            self._jumped = True
            self._cond.notify_all()
            return self.position

    # --- the thread ---------------------------------------------------------------------
    def _next(self) -> Optional[tuple[int, bool]]:
        """(index to hand out now, jumped) or None once stopped; waits for its time."""
        with self._cond:
            while not self._stop.is_set():
                if self.clock.paused or self.clock.finished:
                    self._cond.wait()
                    continue
                i = self.position
                if i >= self.count:
                    return -1, False                     # the end: handled outside the lock
                rec = self.stamp_ns(i) if self.speed > 0 else None
                if rec is not None:
                    now = time.monotonic()
                    if self._anchor is None or self._last_rec is None \
                            or abs(rec - self._last_rec) > self.max_gap_ns:
                        self._anchor = rec              # pacing (re)starts at this item
                        self.clock.seek(0.0, now)
                    ahead = (rec - self._anchor) / 1e9 - self.clock.tick(now).t
                    if ahead > 0:
                        self._cond.wait(ahead / self.speed)
                        continue                         # a control may have changed things
                    self._last_rec = rec
                self.position = i + 1
                jumped, self._jumped = self._jumped, False
                return i, jumped
            return None

    def _at_end(self) -> None:
        with self._cond:
            if self.position < self.count:               # a seek came in between
                return
            looping = self.loop and self.count > 0
            if looping:
                self.position, self._anchor, self._jumped = self.start_index, None, True
                self.clock.loops += 1
            else:
                self.clock.finish()
        if self.on_end is not None:
            self._call(self.on_end, -1, looping)

    def _run(self) -> None:
        while True:
            nxt = self._next()
            if nxt is None:
                return
            i, jumped = nxt
            if i < 0:
                self._at_end()
                continue
            if jumped and self.on_jump is not None:
                self._call(self.on_jump, i)
            self._call(self.handle, i, i)
            self.last_index = i
            self.handed += 1

    def _call(self, fn, i: int, *args) -> None:
        """A callback; an exception is counted and reported, and play goes on."""
        try:
            fn(*args)
        except Exception as exc:
            self.health.handler_failed(exc)
            report_failure(self.on_error, i, exc, self._fallback_log, self.name)
