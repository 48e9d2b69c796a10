"""A TCP client with reconnect and exponential back-off that frames its stream.

The client runs one daemon thread.  Each received chunk is fed to a sans-IO framer (anything
with ``feed(bytes) -> list[event]`` and ``reset()``, e.g. core.framer.MagicFramer); a framer
that also has ``get_buffer(sizehint) -> memoryview`` and ``buffer_updated(n) -> list[event]``
(the buffered protocol of asyncio) is read into with ``recv_into`` instead, so it decides where
the bytes land and how many are read at once.  Every event (a complete frame or a CodecError)
goes to ``on_event`` in stream order, with its receive time: the time the read returned, or
per event what ``receive_times(events, read_ns)`` says (e.g.
:class:`~ros_sim_bridge.core.receive_times.ReadTimes`: several messages in one read spaced by
their sender's clock).  On connect the framer is reset and ``on_connect`` runs
(a driver sends its start command there); when the peer vanishes, ``on_disconnect`` is told why
and the client tries again on the schedule of :class:`RetryWaits`.

A peer can also die without saying so: power cut before a FIN or RST reached us, a half-open
link after a switch rebooted, a frozen device.  Two things find it: ``data_timeout`` (a
connected link on which no byte came for that long is closed and rebuilt, for peers that
stream continuously) and TCP keepalive on every socket (:data:`KEEPALIVE`: the kernel probes
an idle link and fails the read when the peer's host no longer answers).
"""
from __future__ import annotations

import socket
import threading
import time
from typing import Any, Callable, Optional

from ros_sim_bridge.core.supervise import (RateLimitedLog, SupervisedLoop, SupervisedThread,
                                            ThreadHealth, report_failure)

EventHandler = Callable[[Any, int], None]  # (event, receive time ns)
ErrorHandler = Callable[['TcpClient', BaseException], None]


#: s a link must have lasted to count as settled: after it drops the client retries at once
SETTLED_LINK_S = 1.0
#: s a blocking read waits before the loop looks at stop() and the data timeout again
POLL_S = 0.5
#: TCP keepalive timing set on every link where the platform has the option: first probe
#: after 5 s idle, then every 1 s, the link failed after 3 unanswered probes (about 8 s)
KEEPALIVE = {name: value for name, value in (('TCP_KEEPIDLE', 5), ('TCP_KEEPINTVL', 1),
                                              ('TCP_KEEPCNT', 3)) if hasattr(socket, name)}


class RetryWaits:
    """The waits between connection attempts (sans-IO).

    After a failed attempt: ``min_backoff``, doubling up to ``max_backoff``, each wait capped
    at ``reconnect_within`` (0: no cap), so a peer that listens again is served within about
    that long and a peer that is down sees at most one attempt per ``reconnect_within``.
    After a settled link (up for :data:`SETTLED_LINK_S` or more) drops: at once, and the
    back-off starts again (the peer may still listen: a reset link, a quick restart).  After a
    shorter link the back-off goes on, so a peer that accepts and hangs up at once is knocked
    on no more often than a dead one.
    """

    def __init__(self, min_backoff: float, max_backoff: float, reconnect_within: float):
        self.min_backoff, self.max_backoff = min_backoff, max_backoff
        self.reconnect_within = reconnect_within
        self._backoff = min_backoff

    def after_failure(self) -> float:
        """The wait after a refused or failed connection attempt."""
        wait = self._backoff
        self._backoff = min(self._backoff * 2, self.max_backoff)
        if self.reconnect_within > 0:
            return min(wait, self.reconnect_within)
        return wait

    def after_link(self, lasted: float) -> float:
        """The wait after a link that was up ``lasted`` s dropped."""
        if lasted >= SETTLED_LINK_S:
            self._backoff = self.min_backoff
            return 0.0
        return self.after_failure()


class TcpClient(SupervisedLoop):
    """Connects, frames, hands events over, reconnects; no exception ends its thread.

    A handler (``on_event``, ``on_connect``, ``on_disconnect``) that raises is counted in
    ``health`` and reported to ``on_error`` (rate-limited to the log when there is none); the
    stream goes on.  Should the thread end anyway, it is recorded and rebuilt
    (core.supervise).

    Reconnecting (:class:`RetryWaits`): after a failure the next attempt waits ``min_backoff``,
    doubling up to ``max_backoff``, but never longer than ``reconnect_within`` (0.5 s): a peer
    that listens again is served within about half a second of it, and a peer that is down sees
    at most two connection attempts a second (issue #10, defect 6); ``reconnect_within`` 0 lifts
    the cap.  A settled link that drops is retried at once.  :meth:`retry_now` cuts the current
    wait short (a driver that learns the peer is back, e.g. from another link, connects at once
    instead of at its next attempt).

    ``data_timeout`` > 0: a connected link on which no byte arrived for that many seconds is
    taken for dead (a peer that stopped sending without closing), counted in
    ``data_timeouts``, closed and rebuilt like a dropped one; ``silent`` is true from then
    until a byte arrives or the link is lost for another reason.  0 (the default) suits links
    that are idle by design (request / reply).  It may be changed while the client runs (a
    driver that told its peer to stop sending sets it to 0).
    """

    def __init__(self, host: str, port: int, framer, on_event: EventHandler, *,
                 name: str = 'tcp-client',
                 on_connect: Optional[Callable[[], None]] = None,
                 on_disconnect: Optional[Callable[[str], None]] = None,
                 on_connect_failed: Optional[Callable[[str], None]] = None,
                 on_error: Optional[ErrorHandler] = None,
                 receive_times: Optional[Callable[[list, int], list[int]]] = None,
                 connect_timeout: float = 2.0, min_backoff: float = 0.25,
                 max_backoff: float = 8.0, reconnect_within: float = 0.5,
                 data_timeout: float = 0.0, read_size: int = 1 << 16):
        self.host, self.port = host, port
        self.framer = framer
        self.on_event = on_event
        self.on_connect = on_connect
        self.on_disconnect = on_disconnect
        self.on_connect_failed = on_connect_failed   # (why) after each refused attempt
        self.on_error = on_error
        self.receive_times = receive_times   # (events of one read, read ns) → ns per event
        self.name = name
        self.connect_timeout = connect_timeout
        self.min_backoff, self.max_backoff = min_backoff, max_backoff
        self.reconnect_within = reconnect_within
        self.data_timeout = data_timeout
        self.read_size = read_size
        self.connects = 0            # successful connections so far
        self.failures = 0            # failed connection attempts and dropped links
        self.bytes_received = 0
        self.data_timeouts = 0       # links closed because no byte came for data_timeout s
        self.silent = False          # since the last data timeout, no byte has come
        self.last_failure = ''
        self.health = ThreadHealth(name)
        self._fallback_log = RateLimitedLog()
        self._sock: Optional[socket.socket] = None
        self._send_lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()      # set by stop() and retry_now(): end the wait
        self._connected = threading.Event()
        self._thread = SupervisedThread(name, self._run, self._stop, self.health,
                                        rebuild=self._drop_link)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def retry_now(self) -> None:
        """When waiting to reconnect: try at once (no effect while connected)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=3.0)

    def send(self, data: bytes) -> bool:
        """Send all of ``data``; False (never an exception) when not connected or it fails
        (``last_failure`` says why: 'send: the link was lost' when the receive thread closed
        the socket meanwhile, the peer having dropped)."""
        sock = self._sock
        if sock is None or not self.connected:
            return False
        try:
            with self._send_lock:
                sock.sendall(data)
            return True
        except OSError as exc:
            lost = self._sock is not sock           # closed by _drop_link: not the send's fault
            self.last_failure = ('send: the link was lost' if lost
                                 else f'send: {exc.strerror or exc}')
            return False

    def _drop_link(self) -> None:
        """Forget the current connection (before a rebuilt thread connects again)."""
        self._connected.clear()
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def _call(self, fn, *args) -> None:
        """Run a handler; an exception is counted and reported, never raised."""
        try:
            fn(*args)
        except Exception as exc:
            self.health.handler_failed(exc)
            report_failure(self.on_error, self, exc, self._fallback_log, self.name)

    def _run(self) -> None:
        waits = RetryWaits(self.min_backoff, self.max_backoff, self.reconnect_within)
        while not self._stop.is_set():
            try:
                sock = socket.create_connection((self.host, self.port), self.connect_timeout)
            except OSError as exc:
                self.failures += 1
                self.last_failure = f'connect to {self.host}:{self.port}: {exc.strerror or exc}'
                if self.on_connect_failed is not None:
                    self._call(self.on_connect_failed, self.last_failure)
                if self._pause(waits.after_failure()):
                    break
                continue
            connected_at = time.monotonic()
            self._wake.clear()              # a retry_now() that came while connecting
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
                for name, value in KEEPALIVE.items():
                    sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
                sock.settimeout(POLL_S)
                self._sock = sock
                self.framer.reset()
                self.connects += 1
                self._connected.set()
                reason = self._serve(sock)
            finally:
                self._drop_link()
            if self._stop.is_set():
                break
            self.failures += 1
            self.last_failure = reason
            # the stream ended: a message held for the bytes after it is complete
            for event in getattr(self.framer, 'finish', list)():
                self._call(self.on_event, event, time.time_ns())
            cut_short = getattr(self.framer, 'cut_short', None)
            cut = cut_short() if cut_short is not None else None
            if cut is not None:     # the stream ended inside a message: a decode error too
                self._call(self.on_event, cut, time.time_ns())
            if self.on_disconnect is not None:
                self._call(self.on_disconnect, reason)
            if self._pause(waits.after_link(time.monotonic() - connected_at)):
                break

    def _receive_times(self, events: list, read_ns: int) -> list[int]:
        """The receive time of each event of one read (the read time without a
        ``receive_times``, or when it fails: counted and reported like a handler)."""
        if self.receive_times is not None and events:
            try:
                times = self.receive_times(events, read_ns)
                if len(times) == len(events):
                    return times
                raise ValueError(f'receive_times gave {len(times)} times for {len(events)} '
                                 'events')
            except Exception as exc:
                self._call(_reraise, exc)
        return [read_ns] * len(events)

    def _pause(self, seconds: float) -> bool:
        """Wait ``seconds`` or until retry_now()/stop(); True when stopping."""
        self._wake.wait(seconds)
        self._wake.clear()
        return self._stop.is_set()

    def _serve(self, sock: socket.socket) -> str:
        if self.on_connect is not None:
            self._call(self.on_connect)   # the link stays up; the node reports it
        # a framer with the buffered protocol (get_buffer / buffer_updated) is read into
        # directly: no chunk object, and a large message lands in its own buffer
        buffered = callable(getattr(self.framer, 'get_buffer', None))
        last_byte = time.monotonic()
        while not self._stop.is_set():
            try:
                if buffered:
                    with self.framer.get_buffer(self.read_size) as buf:
                        n = sock.recv_into(buf)
                else:
                    chunk = sock.recv(self.read_size)
                    n = len(chunk)
            except socket.timeout:
                limit = self.data_timeout
                if limit > 0 and time.monotonic() - last_byte >= limit:
                    self.data_timeouts += 1
                    self.silent = True
                    return f'no data for {limit:g} s (data_timeout)'
                continue
            except OSError as exc:
                self.silent = False          # lost for another reason than silence
                return f'receive failed: {exc.strerror or exc}'
            if not n:
                self.silent = False
                return 'peer closed the connection'
            now = time.time_ns()
            last_byte = time.monotonic()
            self.silent = False
            self.bytes_received += n
            try:
                events = self.framer.buffer_updated(n) if buffered else self.framer.feed(chunk)
            except Exception as exc:  # a framer bug: count it, start the stream afresh
                self._call(_reraise, exc)
                self.framer.reset()
                continue
            times = self._receive_times(events, now)
            for event, t in zip(events, times):
                self._call(self.on_event, event, t)
        return 'stopped'


def _reraise(exc: BaseException) -> None:
    raise exc
