"""TCP reconnect after a peer outage (issue #10, defect 6): how long after the peer listens again
the shared TcpClient is back, and how often it knocked while the peer was down.

The client runs with ibeo_lux's configured back-off (min 0.25 s, doubling to max 8 s) and the
default ``reconnect_within`` cap of 1 s.  For each outage length the peer (a real listening
socket on 127.0.0.1) goes away, stays away (the outage plus a random 0–1 s, so its return falls
at any phase of the client's attempts), listens again; the figure is the time from
``listen()`` to the accepted connection, as the peer sees it.  Target: ≤ 1 s.
"""
from __future__ import annotations

import random
import socket
import statistics
import struct
import sys
import time

from ros_sim_bridge.core.framer import MagicFramer
from ros_sim_bridge.core.tcp import TcpClient
from ros_sim_bridge.tools.ports import free_tcp_port

OUTAGES_S = (0.5, 2.0, 6.0)
REPEATS = 4
RANDOM = random.Random(10)    # the peer returns at a random phase of the client's attempts


def listen(port: int) -> socket.socket:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(('127.0.0.1', port))
    server.listen()
    server.settimeout(15)
    return server


def one_outage(port: int, client: TcpClient, outage: float) -> tuple[float, int]:
    server = listen(port)
    conn, _ = server.accept()
    while not client.connected:
        time.sleep(0.005)
    conn.close()                       # the peer powers off
    server.close()
    failures = client.failures
    time.sleep(outage + RANDOM.uniform(0.0, 1.0))
    attempts = client.failures - failures
    server = listen(port)              # and listens again
    t0 = time.monotonic()
    conn, _ = server.accept()
    back = time.monotonic() - t0
    conn.close()
    server.close()
    return back, attempts


def main() -> int:
    port = free_tcp_port()
    framer = MagicFramer('bench', b'MSG!', 8, lambda h: struct.unpack_from('>I', h, 4)[0], 1 << 20)
    client = TcpClient('127.0.0.1', port, framer, lambda e, t: None, name='bench-reconnect',
                       min_backoff=0.25, max_backoff=8.0)
    client.start()
    print(f'TCP reconnect after a peer outage (back-off 0.25 s doubling to 8 s, '
          f'reconnect_within {client.reconnect_within:g} s; time from listen() to accept):')
    worst = 0.0
    try:
        for outage in OUTAGES_S:
            times, knocks = [], []
            for _ in range(REPEATS):
                back, attempts = one_outage(port, client, outage)
                times.append(back)
                knocks.append(attempts)
            worst = max(worst, max(times))
            print(f'  outage {outage:5.1f} s: back after median {statistics.median(times):.3f} s, '
                  f'max {max(times):.3f} s; {statistics.mean(knocks) / (outage + 0.5):.2f} connection '
                  f'attempts per second while down')
    finally:
        client.stop()
    print(f'  worst: {worst:.3f} s (target ≤ 1 s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
