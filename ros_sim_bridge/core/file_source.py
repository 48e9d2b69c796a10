"""A file source: a recorded stream read in chunks through a framer, optionally paced.

``FileSource`` yields the same events a live TCP link would (frames and CodecErrors in file
order), so a driver consumes recordings and live data with one code path.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from ros_sim_bridge.core.supervise import RateLimitedLog, ThreadHealth, report_failure


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
