"""UDP endpoints and one receive thread for all of a node's sockets.

The receive thread waits on every endpoint with one selector, drains each ready socket until it
would block, and hands every datagram with its receive time to the endpoint's handler.  The ROS
executor is never blocked by socket reads.  On Linux the kernel's count of datagrams dropped
because the receive buffer was full (SO_RXQ_OVFL) is read with every datagram.
"""
from __future__ import annotations

import errno
import ipaddress
import selectors
import socket
import struct
import sys
import threading
import time
from typing import Callable, Optional

from ros_sim_bridge.core.supervise import (RateLimitedLog, SupervisedLoop, SupervisedThread,
                                            ThreadHealth, report_failure)

Handler = Callable[[bytes, int], None]  # (datagram, receive time in ns since the Unix epoch)
ErrorHandler = Callable[['UdpEndpoint', BaseException], None]

MAX_DATAGRAM = 65535
_SO_RXQ_OVFL = getattr(socket, 'SO_RXQ_OVFL', 40) if sys.platform.startswith('linux') else None
_OVFL = struct.Struct('=I')


def is_loopback(host: str) -> bool:
    """True for a loopback address (127.0.0.0/8, ::1) or the name ``localhost``."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == 'localhost'


class UdpEndpoint:
    """One bound, non-blocking UDP socket with a large receive buffer."""

    def __init__(self, bind_address: str, port: int, *, name: str = '',
                 receive_buffer: int = 4 << 20):
        self.name = name or f'udp:{port}'
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            self.sock.bind((bind_address, port))
        except OSError as exc:
            self.sock.close()
            raise OSError(exc.errno, f'cannot bind UDP {bind_address}:{port} ({self.name}): '
                          f'{exc.strerror}') from None
        self.sock.setblocking(False)
        self.receive_buffer = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self._ovfl = False
        if _SO_RXQ_OVFL is not None:
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, _SO_RXQ_OVFL, 1)
                self._ovfl = True
            except OSError:
                pass
        self.kernel_drops = 0          # datagrams the kernel dropped (receive buffer full)
        self.address = self.sock.getsockname()

    @property
    def port(self) -> int:
        return self.address[1]

    def send(self, data: bytes, address: tuple[str, int]) -> int:
        return self.sock.sendto(data, address)

    def drain(self, limit: int = 1024) -> list[tuple[bytes, int]]:
        """Every datagram waiting now (at most ``limit``), each with its receive time in ns."""
        out = []
        recvmsg = self.sock.recvmsg
        anc = socket.CMSG_SPACE(_OVFL.size) if self._ovfl else 0
        for _ in range(limit):
            try:
                data, ancdata, _flags, _addr = recvmsg(MAX_DATAGRAM, anc)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    break
                if exc.errno == errno.ECONNREFUSED:  # ICMP from an earlier send: ignore
                    continue
                raise
            now = time.time_ns()
            for level, kind, value in ancdata:
                if level == socket.SOL_SOCKET and kind == _SO_RXQ_OVFL and len(value) >= 4:
                    self.kernel_drops = _OVFL.unpack_from(value)[0]
            out.append((data, now))
        return out

    def close(self) -> None:
        self.sock.close()


class UdpReceiver(SupervisedLoop):
    """A daemon thread that serves many UdpEndpoints with one selector.

    No exception ends the loop: a handler that raises is counted in ``health`` and reported to
    ``on_error`` (rate-limited to the log when there is none), a failing read or select too;
    if the thread ends anyway it is recorded in ``health`` and rebuilt with a fresh selector
    (core.supervise).
    """

    def __init__(self, name: str = 'udp-receiver', on_error: Optional[ErrorHandler] = None):
        self.name = name
        self.on_error = on_error
        self.health = ThreadHealth(name)
        self._fallback_log = RateLimitedLog()
        self._endpoints: list[tuple[UdpEndpoint, Handler]] = []
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector = self._new_selector()
        self._stop = threading.Event()
        self._thread = SupervisedThread(name, self._run, self._stop, self.health,
                                        rebuild=self._rebuild)

    def _new_selector(self) -> selectors.BaseSelector:
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ, None)
        for endpoint, handler in self._endpoints:
            selector.register(endpoint.sock, selectors.EVENT_READ, (endpoint, handler))
        return selector

    def _rebuild(self) -> None:
        old, self._selector = self._selector, self._new_selector()
        try:
            old.close()
        except Exception:
            pass

    def add(self, endpoint: UdpEndpoint, handler: Handler) -> UdpEndpoint:
        self._endpoints.append((endpoint, handler))
        self._selector.register(endpoint.sock, selectors.EVENT_READ, (endpoint, handler))
        return endpoint

    @property
    def endpoints(self) -> list[UdpEndpoint]:
        return [endpoint for endpoint, _ in self._endpoints]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ready = self._selector.select(timeout=0.5)
            except Exception as exc:  # a broken selector: report, rebuild, go on
                self._report(None, exc)
                if self._stop.wait(0.1):
                    return
                self._rebuild()
                continue
            for key, _ in ready:
                if key.data is None:
                    self._drain_wake()
                    continue
                endpoint, handler = key.data
                try:
                    batch = endpoint.drain()
                except Exception as exc:
                    self._report(endpoint, exc)
                    continue
                for data, stamp in batch:
                    try:
                        handler(data, stamp)
                    except Exception as exc:  # a handler bug must not stop the receiver
                        self.health.handler_failed(exc)
                        self._report(endpoint, exc)

    def _drain_wake(self) -> None:
        try:
            self._wake_r.recv(64)
        except OSError:
            pass

    def _report(self, endpoint: Optional[UdpEndpoint], exc: BaseException) -> None:
        """Hand an error to ``on_error``; a reporter that raises is never allowed to end the
        loop either."""
        where = endpoint.name if endpoint is not None else self.name
        report_failure(self.on_error if endpoint is not None else None, endpoint, exc,
                       self._fallback_log, where, 'receive failed',
                       key=f'{where}:{type(exc).__name__}')

    def stop(self) -> None:
        self._stop.set()
        try:
            self._wake_w.send(b'x')
        except OSError:
            pass
        self._thread.join(timeout=2.0)
        for endpoint, _ in self._endpoints:
            try:
                self._selector.unregister(endpoint.sock)
            except (KeyError, ValueError):
                pass
            endpoint.close()
        self._endpoints.clear()
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
