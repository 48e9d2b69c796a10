"""A file source: a recorded stream read in chunks through a framer, optionally paced.

``FileSource`` yields the same events a live TCP link would (frames and CodecErrors in file
order), so a driver consumes recordings and live data with one code path.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from ros_sim_bridge.core.supervise import (RateLimitedLog, SupervisedLoop, SupervisedThread,
                                            ThreadHealth, report_failure)


def read_chunks(path: str | Path, chunk_size: int = 1 << 20) -> Iterator[bytes]:
    with open(path, 'rb') as handle:
        while True:
            chunk = handle.read(chunk_size)
            if not chunk:
                return
            yield chunk


class FileSource:
    """Events of a recorded stream; ``play`` paces them by their own time stamps.

    ``stamp_ns(event) -> int | None`` gives an event's recording time for pacing (None: send at
    once). ``speed`` 1.0 is real time, 0 is as fast as possible.  A handler that raises is
    counted in ``health`` and reported to ``on_error``; playing goes on.
    """

    def __init__(self, path: str | Path, framer, *, chunk_size: int = 1 << 20,
                 on_error: Optional[Callable[[Any, BaseException], None]] = None):
        self.path = Path(path)
        self.framer = framer
        self.chunk_size = chunk_size
        self.on_error = on_error       # (event, exception) of a handler that raised
        self.health = ThreadHealth(f'file {self.path.name}')
        self._fallback_log = RateLimitedLog()

    def events(self) -> Iterator[Any]:
        self.framer.reset()
        for chunk in read_chunks(self.path, self.chunk_size):
            yield from self.framer.feed(chunk)
        yield from getattr(self.framer, 'finish', list)()   # the file's end ends its stream

    def play(self, on_event: Callable[[Any, int], None], *, speed: float = 1.0,
             stamp_ns: Optional[Callable[[Any], Optional[int]]] = None,
             stop: Optional[threading.Event] = None, max_gap_s: float = 5.0) -> int:
        """Hand every event to ``on_event(event, now_ns)``; returns how many were handed.

        A recording time more than ``max_gap_s`` away from the previous one (a corrupt stamp, a
        clock reset, years of NTP garbage) restarts the pacing at that event instead of being
        waited out."""
        first_rec = first_wall = last_rec = None
        max_gap_ns = max_gap_s * 1e9
        count = 0
        for event in self.events():
            if stop is not None and stop.is_set():
                break
            rec = stamp_ns(event) if (stamp_ns and speed > 0) else None
            if rec is not None:
                if first_rec is None or abs(rec - last_rec) > max_gap_ns:
                    first_rec, first_wall = rec, time.monotonic_ns()
                last_rec = rec
                due = first_wall + (rec - first_rec) / speed
                delay = (due - time.monotonic_ns()) / 1e9
                if delay > 0:
                    if stop is not None:
                        if stop.wait(delay):
                            break
                    else:
                        time.sleep(delay)
            self._hand(on_event, event)
            count += 1
        return count

    def _hand(self, on_event, event) -> None:
        """One event to the handler; an exception is counted and reported, and play goes on."""
        try:
            on_event(event, time.time_ns())
        except Exception as exc:
            self.health.handler_failed(exc)
            report_failure(self.on_error, event, exc, self._fallback_log, str(self.path))


def pacing_gaps(stamps_ns, speed: float = 1.0, max_gap_s: Optional[float] = None
                ) -> list[float]:
    """Seconds to wait before each recorded event so that they go out at their recorded
    pace: the gap to the previous stamp / ``speed`` (0 for the first, for a missing stamp,
    for a stamp earlier than the previous one, and for all when ``speed`` <= 0), capped at
    ``max_gap_s``.  For a server that schedules sends itself (e.g. one per client)."""
    stamps = list(stamps_ns)
    if speed <= 0:
        return [0.0] * len(stamps)
    out, prev = [], None
    for stamp in stamps:
        gap = 0.0 if prev is None or stamp is None else (stamp - prev) / 1e9 / speed
        gap = max(gap, 0.0)
        out.append(gap if max_gap_s is None else min(gap, max_gap_s))
        if stamp is not None:
            prev = stamp
    return out


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
        self.paused = paused
        self.finished = False
        self.loops = 0                       # times play went back to the start
        self.handed = 0                      # items handed out in all
        self.last_index: Optional[int] = None
        self._anchor: Optional[tuple[int, int]] = None   # (recording ns, monotonic ns)
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
            return 'finished' if self.finished else 'paused' if self.paused else 'playing'

    def pause(self) -> int:
        """Hold before the next item; returns its index."""
        with self._cond:
            self.paused = True
            self._cond.notify_all()
            return self.position

    def resume(self) -> int:
        """Play on from the next item (at once, pacing restarts there); after the end without
        loop: from the start.  Returns the index played next."""
        with self._cond:
            if self.finished:
                self.position, self._jumped = self.start_index, True
            self.paused = self.finished = False
            self._anchor = None
            self._cond.notify_all()
            return self.position

    def seek(self, index: int) -> int:
        """Play item ``index`` next (clamped to the recording; pacing restarts there); a
        finished playback plays again, a paused one stays paused.  Returns the index."""
        with self._cond:
            self.position = min(max(int(index), 0), self.count)
            self.finished = False
            self._anchor = None
            self._jumped = True
            self._cond.notify_all()
            return self.position

    # --- the thread ---------------------------------------------------------------------
    def _next(self) -> Optional[tuple[int, bool]]:
        """(index to hand out now, jumped) or None once stopped; waits for its time."""
        with self._cond:
            while not self._stop.is_set():
                if self.paused or self.finished:
                    self._cond.wait()
                    continue
                i = self.position
                if i >= self.count:
                    return -1, False                     # the end: handled outside the lock
                rec = self.stamp_ns(i) if self.speed > 0 else None
                if rec is not None:
                    now = time.monotonic_ns()
                    if self._anchor is None or self._last_rec is None \
                            or abs(rec - self._last_rec) > self.max_gap_ns:
                        self._anchor = (rec, now)
                    due = self._anchor[1] + (rec - self._anchor[0]) / self.speed
                    if due > now:
                        self._cond.wait((due - now) / 1e9)
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
                self.loops += 1
            else:
                self.finished = True
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
