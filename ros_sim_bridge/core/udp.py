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


class UdpReceiver:
    """A daemon thread that serves many UdpEndpoints with one selector."""

    def __init__(self, name: str = 'udp-receiver', on_error: Optional[ErrorHandler] = None):
        self.name = name
        self.on_error = on_error
        self._selector = selectors.DefaultSelector()
        self._endpoints: list[UdpEndpoint] = []
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()

    def add(self, endpoint: UdpEndpoint, handler: Handler) -> UdpEndpoint:
        self._endpoints.append(endpoint)
        self._selector.register(endpoint.sock, selectors.EVENT_READ, (endpoint, handler))
        return endpoint

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        select = self._selector.select
        while not self._stop.is_set():
            for key, _ in select(timeout=0.5):
                if key.data is None:
                    continue
                endpoint, handler = key.data
                try:
                    batch = endpoint.drain()
                except OSError as exc:
                    self._report(endpoint, exc)
                    continue
                for data, stamp in batch:
                    try:
                        handler(data, stamp)
                    except Exception as exc:  # a handler bug must not stop the receiver
                        self._report(endpoint, exc)

    def _report(self, endpoint: UdpEndpoint, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(endpoint, exc)

    def stop(self) -> None:
        self._stop.set()
        try:
            self._wake_w.send(b'x')
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        for endpoint in self._endpoints:
            try:
                self._selector.unregister(endpoint.sock)
            except (KeyError, ValueError):
                pass
            endpoint.close()
        self._endpoints.clear()
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
