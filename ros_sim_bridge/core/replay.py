"""A replayer's clock: the recording time it plays and its controls (pause, resume, seek,
rate, loop), ROS-free and driven by explicit :meth:`ReplayClock.tick` calls with the wall time
(no thread, no timer, no I/O): the caller's timer or thread says when, this says what time it is
in the recording.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


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
