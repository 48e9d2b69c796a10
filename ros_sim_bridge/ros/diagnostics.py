"""Per-stream counters published on /diagnostics, and rate-limited logging of bad input.

A node makes one :class:`Diagnostics` and asks it for a :class:`StreamStats` per stream (a
vehicle, a message type, a link).  Receive threads record packets, errors and drops; a timer
publishes one ``diagnostic_msgs/DiagnosticStatus`` per stream with its rate, packet and byte
counts, errors by kind, drops and last error.  A bad packet is logged at most once per
``log_interval`` per stream and kind, with the number suppressed in between.
"""
from __future__ import annotations

import collections
import math
import threading
import time
from typing import Callable, Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ros.clocks import STEADY
from ros_sim_bridge.ros.stamps import ns_to_stamp

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


def log(logger, level: str, text: str) -> None:
    """Log ``text`` at ``level`` ('debug' … 'fatal'; anything else is 'error') and never raise.

    rclpy keys each logging call site by file and line and raises ValueError when one site logs
    at another severity ('Logger severity cannot be changed between calls.'); a helper that
    takes the level as an argument must therefore call each severity from its own line.
    """
    try:
        if level == 'debug':
            logger.debug(text)
        elif level == 'info':
            logger.info(text)
        elif level in ('warning', 'warn'):
            logger.warning(text)
        elif level == 'fatal':
            logger.fatal(text)
        else:
            logger.error(text)
    except Exception:   # a log line must never end the thread that writes it
        pass


class StreamStats:
    """Counters of one stream. Thread-safe; cheap enough to call per packet."""

    RATE_WINDOW_S = 2.0

    def __init__(self, name: str, hardware_id: str, *, stale_after: float = 2.0,
                 expected: bool = True, periodic: bool = False, outbound: bool = False):
        self.name = name
        self.hardware_id = hardware_id
        self.stale_after = stale_after
        self.expected = expected        # silent streams are WARN only when data is expected
        self.periodic = periodic        # ... or, once data came, when it stopped coming
        # commands this node sends: counted with packet() when sent, error() when refused or
        # failed; their status says so and leaves out what only received data has
        self.outbound = outbound
        self.packets = 0
        self.bytes = 0
        self.published = 0
        self.drops = 0
        self.errors: collections.Counter[str] = collections.Counter()
        self.last_error = ''
        self.last_error_ns = 0
        self.last_packet_ns = 0
        self.extra: dict[str, str] = {}     # text values (a layout, flags); numbers below
        self.counters: collections.Counter[str] = collections.Counter()   # see count()
        self.maxima: dict[str, float] = {}                                # see highest()
        # link state of a connection-oriented stream (None: not a link); see link_down()
        self.link_error_after = 5.0
        self._link_down_ns: Optional[int] = None
        self._link_reason = ''
        self._times: collections.deque[int] = collections.deque()
        self._lock = threading.Lock()

    def link_down(self, reason: str, now_ns: Optional[int] = None) -> None:
        """The stream's connection is down (or not up yet) and being retried: its status is
        WARN 'reconnecting', ERROR once down longer than ``link_error_after`` s.  The first
        call of an outage keeps its start time."""
        with self._lock:
            if self._link_down_ns is None:
                self._link_down_ns = now_ns or time.time_ns()
            self._link_reason = reason
            self.extra['connected'] = 'false'

    def link_up(self) -> None:
        with self._lock:
            self._link_down_ns = None
            self._link_reason = ''
            self.extra['connected'] = 'true'

    def packet(self, nbytes: int, now_ns: Optional[int] = None) -> None:
        now = now_ns or time.time_ns()
        with self._lock:
            self.packets += 1
            self.bytes += nbytes
            self.last_packet_ns = now
            self._times.append(now)

    def publish(self, n: int = 1) -> None:
        with self._lock:
            self.published += n

    def error(self, kind: str, text: str, now_ns: Optional[int] = None) -> None:
        with self._lock:
            self.errors[kind] += 1
            self.last_error = text
            self.last_error_ns = now_ns or time.time_ns()

    def count(self, key: str, n: int = 1) -> None:
        """A node's own event counter, shown as ``key`` among the status values."""
        with self._lock:
            self.counters[key] += n

    def set_count(self, key: str, total: int) -> None:
        """A counter whose total another part keeps (a session's), shown as ``key``."""
        with self._lock:
            self.counters[key] = total

    def highest(self, key: str, value: float) -> None:
        """The largest ``value`` given so far, shown as ``key`` with one decimal."""
        with self._lock:
            if value > self.maxima.get(key, -math.inf):
                self.maxima[key] = value

    def set_drops(self, total: int) -> None:
        with self._lock:
            self.drops = total

    def rate(self, now_ns: Optional[int] = None) -> float:
        now = now_ns or time.time_ns()
        window = int(self.RATE_WINDOW_S * 1e9)
        with self._lock:
            while self._times and self._times[0] < now - window:
                self._times.popleft()
            return len(self._times) / self.RATE_WINDOW_S

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def status(self, now_ns: Optional[int] = None) -> DiagnosticStatus:
        now = now_ns or time.time_ns()
        rate = self.rate(now)
        out = self.outbound
        level, text = OK, 'sending' if out else 'receiving'
        age = (now - self.last_packet_ns) / 1e9 if self.last_packet_ns else None
        silent = 'nothing sent' if out else 'no data'
        if age is None:
            level, text = (WARN if self.expected else OK), f'{silent} yet'
        elif age > self.stale_after:
            level, text = (WARN if self.expected or self.periodic else OK), \
                f'{silent} for {age:.1f} s'
        if self.last_error_ns and now - self.last_error_ns < self.stale_after * 1e9:
            level, text = max(level, WARN), \
                f'{"not sent" if out else "bad input"}: {self.last_error}'
        down_ns, reason = self._link_down_ns, self._link_reason
        if down_ns is not None:
            down = max(0.0, (now - down_ns) / 1e9)
            if down > self.link_error_after:
                level, text = ERROR, f'down for {down:.1f} s ({reason}); reconnecting'
            else:
                level, text = max(level, WARN), f'reconnecting ({reason})'
        if out:                         # what was sent and refused: the node's extra keys
            values = [('rate_hz', f'{rate:.2f}'), ('bytes', str(self.bytes)),
                      ('last_error', self.last_error)]
        else:
            values = [
                ('rate_hz', f'{rate:.2f}'),
                ('packets', str(self.packets)),
                ('bytes', str(self.bytes)),
                ('published', str(self.published)),
                ('decode_errors', str(self.error_count)),
                ('drops', str(self.drops)),
                ('last_error', self.last_error),
            ]
        values += [(f'errors.{k}', str(v)) for k, v in sorted(self.errors.items())]
        if down_ns is not None:
            values.append(('down_s', f'{max(0.0, (now - down_ns) / 1e9):.1f}'))
        with self._lock:            # numbers become text here, once per status
            numbers = [*((k, str(v)) for k, v in self.counters.items()),
                       *((k, f'{v:.1f}') for k, v in self.maxima.items())]
        values += sorted([*self.extra.items(), *numbers])
        return DiagnosticStatus(level=level, name=self.name, message=text,
                                hardware_id=self.hardware_id,
                                values=[KeyValue(key=k, value=v) for k, v in values])


class Diagnostics:
    """Publishes every registered stream (and extra status sources) on /diagnostics."""

    def __init__(self, node, *, period: float = 1.0, log_interval: float = 5.0):
        self.node = node
        self.prefix = node.get_name()
        self.log_interval = log_interval
        self.streams: list[StreamStats] = []
        self.sources: list[Callable[[], list[DiagnosticStatus]]] = []
        self._last_log: dict[tuple[str, str], float] = {}
        self._suppressed: collections.Counter[tuple[str, str]] = collections.Counter()
        self._log_lock = threading.Lock()
        self.death_hold_s = max(5.0, 3 * period)    # a dead thread shows as ERROR this long
        self.watched: list = []                     # transports whose threads are supervised
        self._discovered = False
        self.pub = node.create_publisher(DiagnosticArray, '/diagnostics', 10)
        # on the steady clock: /diagnostics goes on under use_sim_time while no /clock runs
        self.timer = node.create_timer(period, self.publish, clock=STEADY)

    def stream(self, name: str, hardware_id: str = '', **kwargs) -> StreamStats:
        stats = StreamStats(f'{self.prefix}: {name}', hardware_id or self.prefix, **kwargs)
        self.streams.append(stats)
        return stats

    def add_source(self, source: Callable[[], list[DiagnosticStatus]]) -> None:
        self.sources.append(source)

    def watch(self, transport, name: str = '') -> None:
        """Supervise ``transport`` (anything with ``health`` and ``ensure_running()``, e.g.
        core.udp.UdpReceiver, core.tcp.TcpClient): its handler faults are logged here when it
        has no ``on_error``, a dead receive thread is restarted by the diagnostics timer, and
        its status on /diagnostics is ERROR for ``death_hold_s`` after a death."""
        if any(t is transport for t, _ in self.watched):
            return
        if getattr(transport, 'on_error', 'absent') is None:
            transport.on_error = self._transport_failed
        self.watched.append((transport, name or transport.health.name))

    def _discover(self) -> None:
        """Watch every transport the node holds as an attribute (a node need not call watch)."""
        self._discovered = True
        for value in list(vars(self.node).values()):
            if hasattr(value, 'health') and hasattr(value, 'ensure_running'):
                self.watch(value)

    def _transport_failed(self, transport, exc: BaseException) -> None:
        name = getattr(transport, 'name', type(transport).__name__)
        self.log_limited(name, type(exc).__name__, f'{name}: handler failed: {exc!r}', 'error')

    def thread_status(self, transport, name: str, now_ns: int) -> DiagnosticStatus:
        """OK while the receive thread runs; ERROR when it died in the last ``death_hold_s``
        (it has been rebuilt by then) or is not running."""
        h = transport.health
        alive = transport.ensure_running()
        level, text = OK, 'receive thread running'
        if h.died_ns and now_ns - h.died_ns < self.death_hold_s * 1e9:
            level, text = ERROR, f'receive thread died ({h.last_death}); link rebuilt'
        if not alive:
            level, text = ERROR, f'receive thread not running ({h.last_death}); rebuilding'
        values = [('handler_errors', str(h.handler_errors)),
                  ('last_handler_error', h.last_handler_error),
                  ('thread_deaths', str(h.deaths)), ('thread_restarts', str(h.restarts)),
                  ('last_death', h.last_death)]
        return DiagnosticStatus(level=level, name=f'{self.prefix}: {name} thread',
                                message=text, hardware_id=self.prefix,
                                values=[KeyValue(key=k, value=v) for k, v in values])

    def bad_input(self, stats: StreamStats, err: BaseException, now_ns: Optional[int] = None) -> None:
        """Count a bad packet on ``stats`` and log it, rate-limited per stream and kind."""
        kind = err.kind if isinstance(err, CodecError) else type(err).__name__
        stats.error(kind, str(err), now_ns)
        self.log_limited(stats.name, kind, f'{stats.name}: dropped bad input ({kind}): {err}')

    def receive_failed(self, endpoint, exc: BaseException) -> None:
        """A receiver's error handler: log a failed socket read, rate-limited per endpoint."""
        self.log_limited(endpoint.name, type(exc).__name__,
                         f'{endpoint.name}: receive failed: {exc!r}', 'error')

    def log_limited(self, key: str, kind: str, text: str, level: str = 'warning') -> bool:
        """Log ``text`` unless a line of this (key, kind) was logged in the last
        :attr:`log_interval` s (then it is counted, and named with the next one logged);
        whether it was logged."""
        now = time.monotonic()
        with self._log_lock:
            last = self._last_log.get((key, kind))
            if last is not None and now - last < self.log_interval:
                self._suppressed[(key, kind)] += 1
                return False
            self._last_log[(key, kind)] = now
            suppressed = self._suppressed.pop((key, kind), 0)
        if suppressed:
            text += f' (+{suppressed} more like it in the last {self.log_interval:.0f} s)'
        log(self.node.get_logger(), level, text)
        return True

    def publish(self) -> None:
        now = time.time_ns()
        msg = DiagnosticArray()
        msg.header.stamp = ns_to_stamp(now)
        if not self._discovered:
            self._discover()
        msg.status = [s.status(now) for s in self.streams]
        msg.status.extend(self.thread_status(t, name, now) for t, name in self.watched)
        for source in self.sources:
            try:
                msg.status.extend(source())
            except Exception as exc:   # one faulty status source must not end the timer
                self.log_limited('diagnostics', type(exc).__name__,
                                 f'a diagnostics source failed: {exc!r}', 'error')
        self.pub.publish(msg)
