"""The CARLA replayer's replay state (SUPPLEMENT §5.5), ROS-free and driven by
:meth:`ReplaySession.tick` with the wall time: which recording times (and frames) to publish
now, on a :class:`~ros_sim_bridge.core.replay.ReplayClock` (pause, resume, seek, rate, loop).

Interpolating (``interpolate`` and a rate factor below 2, as CARLA's replayer), a tick
publishes the time reached, poses interpolated there.  Otherwise every recorded frame the
clock passes is published once, stamped with its own recorded time, in order: a tick (at
least every frame, at most every :data:`MIN_TICK_S`) publishes the frames it passed together
rather than leaving them out (at most
:attr:`ReplaySession.max_batch` of them, the newest: the older ones are counted in
:attr:`ReplaySession.skipped`).  Paused or
at the end, the time held is published again every ``1 / publish_rate`` s.  A start, a seek or
a loop publishes the time it lands on as a jump.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ros_sim_bridge.core.replay import ReplayClock, recording_time

#: a tick publishes at most the frames of this much wall time (the newest)
MAX_BATCH_S = 0.25
#: the shortest wall time between two ticks: a replay of more frames than this a second
#: publishes them a few at a time, converted together (a block costs less a frame than one
#: frame alone, and a tick's own cost is paid once for them)
MIN_TICK_S = 0.01


@dataclass
class Publish:
    """One publish: the world at frame ``index``, stamped ``t`` (recording s)."""
    t: float
    index: int
    jump: bool = False           # after a start, seek or loop: the world is rebuilt there
    interpolate: bool = False    # poses interpolated at ``t`` (else the previous frame's)


class ReplaySession:
    """The replay of a recording whose frames start at ``elapsed`` (s, ascending), lasting
    ``duration`` s; parameters as the node's (``start_time``/``end_time`` negative: from the
    end; ``end_time`` 0: the end)."""

    def __init__(self, elapsed: Sequence[float], duration: float, *, start_time: float = 0.0,
                 end_time: float = 0.0, rate_factor: float = 1.0, loop: bool = False,
                 paused: bool = False, interpolate: bool = True, publish_rate: float = 20.0):
        self.elapsed = np.asarray(elapsed, np.float64)
        start = recording_time(start_time, duration)
        end = duration if end_time == 0 else recording_time(end_time, duration)
        if start > end:
            raise ValueError(f'start_time {start_time:g} s is after end_time {end_time:g} s '
                             f'({start:.3f} > {end:.3f} s in a recording of {duration:.3f} s)')
        self.clock = ReplayClock(start, end, rate_factor, loop, paused)
        self.interpolate = interpolate and rate_factor < 2.0
        self.period = 1.0 / publish_rate
        steps = np.diff(self.elapsed)
        steps = steps[steps > 0]
        frame_period = float(np.median(steps)) if len(steps) else math.inf
        #: s between two ticks: the publish period, and when every frame is published, at
        #: most one frame's duration of wall time (each frame then goes out at its own time),
        #: but not less than MIN_TICK_S
        self.tick_period = self.period if self.interpolate else max(
            min(self.period, frame_period / rate_factor), MIN_TICK_S)
        #: the most frames a tick publishes: those of MAX_BATCH_S of wall time
        self.max_batch = max(8, int(math.ceil(MAX_BATCH_S * rate_factor / frame_period))
                             if math.isfinite(frame_period) else 8)
        self.last_index = -1         # the frame published last
        self.last_publish: Optional[float] = None   # wall time of the last publish
        self.skipped = 0             # frames passed and not published (a tick far too late)

    @property
    def t(self) -> float:
        return self.clock.t

    @property
    def start(self) -> float:
        return self.clock.start

    @property
    def end(self) -> float:
        return self.clock.end

    def frame_at(self, t: float) -> int:
        """Index of the frame with elapsed <= t (0 before the first)."""
        return max(int(np.searchsorted(self.elapsed, t, side='right')) - 1, 0)

    # --- controls (as the clock's) -------------------------------------------------------
    def pause(self) -> float:
        return self.clock.pause()

    def resume(self, now: float) -> float:
        return self.clock.resume(now)

    def seek(self, t: float, now: float) -> float:
        """``t`` negative: from the end (−1: 1 s before it); kept within start..end."""
        return self.clock.seek(self.clock.end + t if t < 0 else t, now)

    # --- time ----------------------------------------------------------------------------
    def tick(self, now: float) -> tuple:
        """``(step, publishes)``: the clock's :class:`~ros_sim_bridge.core.replay.Step` at
        wall time ``now`` and what to publish now (:class:`Publish`, in order)."""
        step = self.clock.tick(now)
        t, held = step.t, self.clock.paused or self.clock.finished
        out = []
        if step.looped and not self.interpolate:       # the last frames before the loop
            out = self._passed(self.frame_at(self.clock.end))
        if step.jumped:
            out.append(Publish(t, self.frame_at(t), True, self.interpolate))
        elif self.interpolate or (held and not step.ended):
            due = self.last_publish is None or held is False or \
                now - self.last_publish >= self.period - self.tick_period / 2
            out = [Publish(t, self.frame_at(t), False, self.interpolate)] if due else []
        else:                                    # every frame passed, at its own time
            out = self._passed(self.frame_at(t))
        if out:
            self.last_index = out[-1].index
            self.last_publish = now
        return step, out

    def _passed(self, target: int) -> list:
        """The frames after the last published up to ``target``, each at its own time (the
        newest :attr:`max_batch`; the others counted in :attr:`skipped`)."""
        first = self.last_index + 1
        if target - first + 1 > self.max_batch:
            self.skipped += target - first + 1 - self.max_batch
            first = target - self.max_batch + 1
        return [Publish(float(self.elapsed[i]), i) for i in range(first, target + 1)]
