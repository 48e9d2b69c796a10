"""A TCP client with reconnect and exponential back-off that frames its stream.

The client runs one daemon thread.  Each received chunk is fed to a sans-IO framer (anything
with ``feed(bytes) -> list[event]`` and ``reset()``, e.g. codec.stream.MagicFramer); every event
(a complete frame or a CodecError) goes to ``on_event`` in stream order.  On connect the
framer is reset and ``on_connect`` runs (a driver sends its start command there); when the peer
vanishes, ``on_disconnect`` is told why and the client tries again after a back-off that doubles
up to ``max_backoff`` and resets on success.
"""
from __future__ import annotations

import socket
import threading
import time
from typing import Any, Callable, Optional

EventHandler = Callable[[Any, int], None]  # (event, receive time ns)


class TcpClient:
    def __init__(self, host: str, port: int, framer, on_event: EventHandler, *,
                 name: str = 'tcp-client',
                 on_connect: Optional[Callable[[], None]] = None,
                 on_disconnect: Optional[Callable[[str], None]] = None,
                 connect_timeout: float = 2.0, min_backoff: float = 0.25,
                 max_backoff: float = 8.0, read_size: int = 1 << 16):
        self.host, self.port = host, port
        self.framer = framer
        self.on_event = on_event
        self.on_connect = on_connect
        self.on_disconnect = on_disconnect
        self.name = name
        self.connect_timeout = connect_timeout
        self.min_backoff, self.max_backoff = min_backoff, max_backoff
        self.read_size = read_size
        self.connects = 0            # successful connections so far
        self.failures = 0            # failed connection attempts and dropped links
        self.bytes_received = 0
        self.last_failure = ''
        self._sock: Optional[socket.socket] = None
        self._send_lock = threading.Lock()
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._thread: Optional[threading.Thread] = None

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=3.0)

    def send(self, data: bytes) -> bool:
        """Send all of ``data``; False (never an exception) when not connected or it fails."""
        sock = self._sock
        if sock is None or not self.connected:
            return False
        try:
            with self._send_lock:
                sock.sendall(data)
            return True
        except OSError as exc:
            self.last_failure = f'send: {exc}'
            return False

    def _run(self) -> None:
        backoff = self.min_backoff
        while not self._stop.is_set():
            try:
                sock = socket.create_connection((self.host, self.port), self.connect_timeout)
            except OSError as exc:
                self.failures += 1
                self.last_failure = f'connect to {self.host}:{self.port}: {exc.strerror or exc}'
                if self._stop.wait(backoff):
                    break
                backoff = min(backoff * 2, self.max_backoff)
                continue
            backoff = self.min_backoff
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(0.5)
            self._sock = sock
            self.framer.reset()
            self.connects += 1
            self._connected.set()
            reason = self._serve(sock)
            self._connected.clear()
            self._sock = None
            try:
                sock.close()
            except OSError:
                pass
            if self._stop.is_set():
                break
            self.failures += 1
            self.last_failure = reason
            if self.on_disconnect is not None:
                self.on_disconnect(reason)
            if self._stop.wait(backoff):
                break

    def _serve(self, sock: socket.socket) -> str:
        if self.on_connect is not None:
            try:
                self.on_connect()
            except Exception as exc:  # the link stays up; the node reports it
                self.last_failure = f'on_connect: {exc}'
        while not self._stop.is_set():
            try:
                chunk = sock.recv(self.read_size)
            except socket.timeout:
                continue
            except OSError as exc:
                return f'receive failed: {exc.strerror or exc}'
            if not chunk:
                return 'peer closed the connection'
            now = time.time_ns()
            self.bytes_received += len(chunk)
            for event in self.framer.feed(chunk):
                self.on_event(event, now)
        return 'stopped'
