"""UDP sockets around a :class:`~.scene.MoraiScene`: status datagrams out at ``rate`` Hz,
commands in, dispatched by identifier (loopback unless told otherwise)."""
from __future__ import annotations

import math
import select
import socket
import threading
import time
from typing import Dict, List, Optional

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.cli import stop_requested
from ros_sim_bridge.core.udp import is_loopback
from ros_sim_bridge.morai import codec as morai

from .scene import LOG, MoraiScene

LOOPBACK = '127.0.0.1'
#: Simulator → client messages the emulator sends, with MORAI's example destination ports.
SEND_PORTS = {n: m.port for n, m in morai.MESSAGE_TYPES.items()
              if m.direction == morai.FROM_SIM}
#: Client → simulator messages the emulator accepts, with MORAI's example listen ports.
RECV_PORTS = {n: m.port for n, m in morai.MESSAGE_TYPES.items() if m.direction == morai.TO_SIM}


class MoraiEmulator:
    """UDP front end of a :class:`MoraiScene`.

    ``send_ports``: message name → destination port on ``dest_host`` (names of SEND_PORTS,
    plus optionally 'multi_ego_setting').  ``recv_ports``: message name → port to listen on
    (0 = any free port; see :attr:`bound_ports`).  Messages left out are not sent / received.
    Datagrams are dispatched by identifier, so several names may share one port.
    """

    def __init__(self, scene: MoraiScene, *, dest_host: str = LOOPBACK,
                 bind_host: str = LOOPBACK, send_ports: Optional[Dict[str, int]] = None,
                 recv_ports: Optional[Dict[str, int]] = None, rate: float = 20.0):
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(f'rate must be a finite number > 0, not {rate}')
        if not is_loopback(dest_host):
            LOG.warning('sending to non-loopback host %s (explicitly requested)', dest_host)
        self.scene = scene
        self.dest_host = dest_host
        self.rate = rate
        self.send_ports = dict(SEND_PORTS if send_ports is None else send_ports)
        for name, port in self.send_ports.items():
            if name not in SEND_PORTS and name != 'multi_ego_setting':
                raise ValueError(f'{name!r} is not a simulator → client message')
            if not 0 < port < 65536:
                raise ValueError(f'bad destination port {port} for {name}')
        recv_ports = dict(RECV_PORTS if recv_ports is None else recv_ports)
        self._stop = threading.Event()
        self.send_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.send_sock.bind((bind_host, 0))
        except OSError as exc:
            self.send_sock.close()
            raise OSError(exc.errno, f'cannot bind UDP {bind_host} (--bind): '
                          f'{exc.strerror or exc}') from None
        self.recv_socks: List[socket.socket] = []
        self.bound_ports: Dict[str, int] = {}
        by_port: Dict[int, socket.socket] = {}
        try:
            for name, port in recv_ports.items():
                if name not in RECV_PORTS:
                    raise ValueError(f'{name!r} is not a client → simulator message')
                if not 0 <= port < 65536:
                    raise ValueError(f'bad listen port {port} for {name}')
                if port and port in by_port:
                    sock = by_port[port]
                else:
                    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    try:
                        sock.bind((bind_host, port))
                    except OSError as exc:     # name the port: which one is busy?
                        sock.close()
                        option = f'--{name.replace("_", "-")}-listen-port'
                        raise OSError(exc.errno, f'cannot bind UDP {bind_host}:{port} ({name} '
                                      f'listen port, {option}): {exc.strerror}') from None
                    sock.setblocking(False)
                    self.recv_socks.append(sock)
                    by_port[sock.getsockname()[1]] = sock
                self.bound_ports[name] = sock.getsockname()[1]
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        for sock in [self.send_sock, *self.recv_socks]:
            sock.close()
        self.recv_socks = []

    def stop(self) -> None:
        self._stop.set()

    def send_outputs(self) -> None:
        out = self.scene.outputs()
        if 'multi_ego_setting' in self.send_ports:
            out['multi_ego_setting'] = self.scene.multi_ego_output()
        for name, port in self.send_ports.items():
            try:
                self.send_sock.sendto(out[name], (self.dest_host, port))
            except OSError as exc:      # e.g. ICMP port unreachable reported late
                self.scene.stats['send_errors'] += 1
                LOG.debug('send %s to %s:%d failed: %s', name, self.dest_host, port, exc)

    def poll(self, timeout: float) -> int:
        """Receive and apply pending commands, waiting up to ``timeout`` s; returns how many."""
        if not self.recv_socks:
            self._stop.wait(timeout)
            return 0
        ready, _, _ = select.select(self.recv_socks, [], [], max(timeout, 0.0))
        count = 0
        for sock in ready:
            while True:
                try:
                    data, peer = sock.recvfrom(65535)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    break
                try:
                    self.scene.handle_datagram(data)
                    count += 1
                except CodecError as exc:
                    LOG.warning('bad datagram from %s:%d (%d B): %s', *peer, len(data), exc)
        return count

    def serve(self, duration: Optional[float] = None) -> None:
        """Run until ``duration`` seconds have passed (None/0 = until :meth:`stop`)."""
        period = 1.0 / self.rate
        start = time.monotonic()
        next_tick = start
        while not self._stop.is_set() and not stop_requested():
            now = time.monotonic()
            if duration and now - start >= duration:
                break
            if now >= next_tick:
                self.scene.step(period)
                self.send_outputs()
                next_tick += period
                if now - next_tick > 1.0:           # fell far behind: do not burst
                    next_tick = now + period
                continue
            self.poll(min(next_tick - now, 0.1))
