"""Free loopback ports and DDS domains for demos, benchmarks and tests (127.0.0.1 only).

DDS (RTPS) derives its UDP ports from the domain: 7400 + 250·domain + 10 + 2·participant …
A socket that takes a port DDS is about to need can break discovery for a whole run, so the
domains used here (25–100: ports 13650–32650) stay below both the kernel's ephemeral range
(32768–60999, where every unbound sender and every port-0 bind lands) and the range ports are
handed out from (61000–65000).  That range is above the ephemeral one: a port found free here
cannot be given to some unbound sender before the node that is to listen on it binds it.
"""
from __future__ import annotations

import random
import socket

TEST_DOMAINS = (70, 100)
DEMO_DOMAINS = (45, 64)
BENCH_DOMAINS = (25, 44)
PORT_RANGE = (61000, 65000)


def free_udp_ports(count: int, step: int = 1) -> int:
    """A base port such that base, base+step, … (``count`` ports) are free on 127.0.0.1 now."""
    for _ in range(200):
        base = random.randint(PORT_RANGE[0], PORT_RANGE[1] - count * step)
        socks = []
        try:
            for i in range(count):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(s)
                s.bind(('127.0.0.1', base + i * step))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError('no free UDP ports on 127.0.0.1')


def free_tcp_port() -> int:
    """A TCP port free on 127.0.0.1 now, from PORT_RANGE (not the kernel's ephemeral range, where
    an outgoing connection could take it before the server that is to listen on it binds)."""
    for _ in range(200):
        port = random.randint(*PORT_RANGE)
        with socket.socket() as s:
            try:
                s.bind(('127.0.0.1', port))
            except OSError:
                continue
            return port
    raise OSError(f'no free TCP port in {PORT_RANGE[0]}-{PORT_RANGE[1]} on 127.0.0.1')
