"""Receive threads that never go silent: handler faults counted, a dead thread rebuilt.

Every transport (``udp.UdpReceiver``, ``tcp.TcpClient``) runs its loop in a
:class:`SupervisedThread` and keeps a :class:`ThreadHealth`.  A handler that raises is counted
and reported (``on_error``), and the loop goes on.  If the loop ends anyway (an exception no
guard caught, a ``SystemExit`` raised into the thread), the death is recorded with its reason
and time, the link is rebuilt and a new thread started; ``ros.diagnostics`` shows the link as
ERROR for a while after a death.  Issue #10, defect 3.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

LOG = logging.getLogger('ros_sim_bridge.core')


@dataclass
class ThreadHealth:
    """What a transport's loop has survived; read by diagnostics, written by the loop."""
    name: str
    handler_errors: int = 0          # exceptions escaping a handler, caught and counted
    last_handler_error: str = ''
    deaths: int = 0                  # times the loop ended without being stopped
    last_death: str = ''
    died_ns: int = 0                 # time.time_ns() of the last death (0: never)
    restarts: int = 0                # threads started after a death

    def handler_failed(self, exc: BaseException) -> None:
        self.handler_errors += 1
        self.last_handler_error = repr(exc)


class RateLimitedLog:
    """The fallback reporter when a transport has no ``on_error``: one log line per
    ``interval`` per key, with the count of the lines held back."""

    def __init__(self, interval: float = 5.0):
        self.interval = interval
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, key: str, text: str) -> None:
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.interval:
                self._held[key] = self._held.get(key, 0) + 1
                return
            self._last[key] = now
            held = self._held.pop(key, 0)
        if held:
            text += f' (+{held} more like it)'
        try:
            LOG.error(text)
        except Exception:
            pass


class SupervisedThread:
    """A daemon thread running ``loop()`` until ``stop`` is set, restarted when it dies.

    ``rebuild()`` runs before each restart (fresh selector, closed socket …).  The restart
    happens in the dying thread after ``restart_delay`` s, and :meth:`ensure_running` (called
    by the diagnostics timer) catches a thread that died without getting that far.
    """

    def __init__(self, name: str, loop: Callable[[], None], stop: threading.Event,
                 health: ThreadHealth, *, rebuild: Optional[Callable[[], None]] = None,
                 restart_delay: float = 0.2):
        self.name = name
        self.loop = loop
        self.stop_event = stop
        self.health = health
        self.rebuild = rebuild
        self.restart_delay = restart_delay
        self.thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            self.thread = threading.Thread(target=self._main, name=self.name, daemon=True)
            self.thread.start()

    def is_alive(self) -> bool:
        thread = self.thread
        return thread is not None and thread.is_alive()

    def join(self, timeout: float) -> None:
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _main(self) -> None:
        try:
            self.loop()
            reason = 'the receive loop returned'
        except BaseException as exc:  # noqa: B902 — whatever ended the loop, record it
            reason = f'the receive loop ended: {exc!r}'
        if self.stop_event.is_set():
            return
        self._died(reason)
        if not self.stop_event.wait(self.restart_delay):
            self._restart()

    def _died(self, reason: str) -> None:
        self.health.deaths += 1
        self.health.last_death = reason
        self.health.died_ns = time.time_ns()
        try:
            LOG.error('%s: %s; rebuilding the link', self.name, reason)
        except Exception:
            pass

    def _restart(self) -> None:
        if self.stop_event.is_set():
            return
        if self.rebuild is not None:
            try:
                self.rebuild()
            except Exception as exc:
                self.health.last_death += f'; rebuild failed: {exc!r}'
        self.health.restarts += 1
        self.start()

    def ensure_running(self) -> bool:
        """True when the thread runs (or was stopped on purpose); a thread found dead without a
        restart under way is recorded as a death and restarted."""
        if self.stop_event.is_set() or self.thread is None or self.is_alive():
            return True
        if self.health.died_ns == 0 or self.health.restarts >= self.health.deaths:
            self._died('the receive thread ended')
        self._restart()
        return False


class SupervisedLoop:
    """The life cycle of an object whose work runs in one :class:`SupervisedThread`
    (``self._thread``): the transports (TCP client, UDP receiver, file playback)."""

    _thread: SupervisedThread

    def start(self) -> None:
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def ensure_running(self) -> bool:
        return self._thread.ensure_running()


def report_failure(on_error: Optional[Callable[[Any, BaseException], None]], subject: Any,
                   exc: BaseException, fallback_log: 'RateLimitedLog', where: str,
                   what: str = 'handler failed', key: Optional[str] = None) -> None:
    """Hand ``exc`` to ``on_error(subject, exc)``; with no reporter, or one that raises itself,
    one rate-limited log line instead: a failure is never raised into the loop that saw it."""
    try:
        if on_error is not None:
            on_error(subject, exc)
            return
    except Exception as report_exc:
        exc = report_exc
    fallback_log(key or type(exc).__name__, f'{where}: {what}: {exc!r}')
