"""Free loopback ports for demos, benchmarks and tests (only 127.0.0.1 is ever bound)."""
from __future__ import annotations

import random
import socket


def free_udp_ports(count: int, step: int = 1) -> int:
    """A base port such that base, base+step, … (``count`` ports) are free on 127.0.0.1 now."""
    for _ in range(200):
        base = random.randint(20000, 60000 - count * step)
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
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]
