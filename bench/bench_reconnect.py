"""TCP reconnect after a peer outage (issue #10, defect 6): how soon a peer that listens again is
served, and how often the client knocked while the peer was down.

1. ``client``: the shared TcpClient alone, with ibeo_lux's configured back-off and the default
   ``reconnect_within`` cap.  For each outage length the peer (a real listening socket on
   127.0.0.1) goes away, stays away (the outage plus a random 0–1 s, so its return falls at any
   phase of the client's attempts), listens again; the figure is the time from ``listen()`` to
   the accepted connection, as the peer sees it.
2. ``nodes``: the installed ``ibeo_lux``, ``ibeo_ecu`` and ``monodrive_client`` against their
   emulators (``ibeo_lux_sim``, ``ibeo_lux_sim --ecu``, ``monodrive_sim``), each in its own
   process with the package's parameter file.  The emulator is killed (SIGKILL), stays away
   3 s plus a random 0–1 s, and starts again on the same port; per restart: the emulator's own
   start (spawn → its "listening" line), listening → the node's "connected" log line (the
   retry schedule and the connect), connected → the node's first published message here
   (handshake, first data, publish), and listening → first message, the project's figure.

Target (both): ≤ 1 s from the peer listening again; aim ≤ 0.5 s typical.

Usage: bench_reconnect.py [client|nodes|all] [--restarts N]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

from ros_sim_bridge.core.framer import MagicFramer
from ros_sim_bridge.core.tcp import TcpClient
from ros_sim_bridge.tools.ports import BENCH_DOMAINS, free_tcp_port
from ros_sim_bridge.tools.session import background_node, keep_dds_local, wait_until

OUTAGES_S = (0.5, 2.0, 6.0)
REPEATS = 4
RANDOM = random.Random(10)    # the peer returns at a random phase of the client's attempts


# --- 1. the client alone ------------------------------------------------------------------------
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


def client_alone() -> None:
    port = free_tcp_port()
    framer = MagicFramer('bench', b'MSG!', 8, lambda h: struct.unpack_from('>I', h, 4)[0], 1 << 20)
    client = TcpClient('127.0.0.1', port, framer, lambda e, t: None, name='bench-reconnect',
                       min_backoff=0.25, max_backoff=8.0)
    client.start()
    print(f'TcpClient alone (back-off {client.min_backoff:g} s doubling to '
          f'{client.max_backoff:g} s, reconnect_within {client.reconnect_within:g} s; time from '
          'listen() to accept):')
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


# --- 2. the installed nodes and their emulators --------------------------------------------------
class Lines:
    """A child process's output lines, each with the monotonic time it was read."""

    def __init__(self, cmd: list[str], *, stream: str, env=None):
        self.started = time.monotonic()
        pipes = {'stdout': subprocess.PIPE, 'stderr': subprocess.DEVNULL}
        if stream == 'stderr':
            pipes = {'stdout': subprocess.DEVNULL, 'stderr': subprocess.PIPE}
        self.proc = subprocess.Popen(cmd, text=True, env=env, **pipes)
        self.lines: list[tuple[float, str]] = []
        source = self.proc.stdout if stream == 'stdout' else self.proc.stderr
        threading.Thread(target=self._read, args=(source,), daemon=True).start()

    def _read(self, source) -> None:
        for line in source:
            self.lines.append((time.monotonic(), line))

    def first(self, text: str, after: float = 0.0):
        """The time of the first line holding ``text`` read at or after ``after``."""
        return next((t for t, line in list(self.lines) if t >= after and text in line), None)

    def kill(self, sig=signal.SIGKILL) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(10)


class Setup:
    """One node, its emulator and the topic whose first message counts."""

    def __init__(self, node: str, params: str, topic: str, msg_type, connected: str):
        self.node, self.params, self.topic, self.msg_type = node, params, topic, msg_type
        self.connected = connected        # the node's log line on (re)connecting
        self.extra: dict = {}
        self.sensors_path = ''

    def emulator(self, port: int) -> list[str]:
        from ros_sim_bridge.tools.launcher import executable
        if self.node == 'monodrive_client':
            return [str(executable('monodrive_sim')), '--port', str(port), '--rate', '20']
        cmd = [str(executable('ibeo_lux_sim')), '--port', str(port)]
        return cmd + ['--ecu', '--points', '10000'] if self.node == 'ibeo_ecu' else cmd


def setups() -> list[Setup]:
    from ros_sim_bridge.msg import IbeoScanInfo, LuxScanInfo, MonoDriveState
    mono = Setup('monodrive_client', 'monodrive.yaml', 'monodrive/state', MonoDriveState,
                 'State stream connected')
    return [Setup('ibeo_lux', 'ibeo.yaml', 'ibeo/scan_info', LuxScanInfo, 'connected to'),
            Setup('ibeo_ecu', 'ibeo_ecu.yaml', 'ibeo_ecu/ecu/scan_info',
                  IbeoScanInfo, 'connected to'),
            mono]


def node_process(setup: Setup, port: int) -> Lines:
    from ros_sim_bridge.tools.launcher import config_file, executable, ros_args
    params = {'port': port}
    if setup.node == 'monodrive_client':     # one State sensor on a port of its own
        fd, setup.sensors_path = tempfile.mkstemp(suffix='.json')
        with os.fdopen(fd, 'w') as f:
            json.dump([{'type': 'State', 'listen_port': free_tcp_port(), 'description': 'state',
                        'desired_tags': ['vehicle']}], f)
        params['sensors_config'] = setup.sensors_path
    cmd = [str(executable(setup.node)),
           *ros_args(config_file(setup.params), params)]
    env = dict(os.environ, RCUTILS_LOGGING_BUFFERED_STREAM='0', PYTHONUNBUFFERED='1')
    return Lines(cmd, stream='stderr', env=env)


def one_node(probe, setup: Setup, restarts: int) -> dict[str, list[float]]:
    from ros_sim_bridge.ros.qos import DATA
    arrivals: list[float] = []
    sub = probe.create_subscription(setup.msg_type, setup.topic,
                                    lambda msg: arrivals.append(time.monotonic()), DATA)
    port = free_tcp_port()
    listening = f'127.0.0.1:{port}'
    figures: dict[str, list[float]] = {'start': [], 'connect': [], 'first': [], 'total': []}
    peer = Lines(setup.emulator(port), stream='stdout')
    node = node_process(setup, port)
    try:
        if not wait_until(lambda: arrivals, 30.0):
            print(f'  {setup.node}: nothing published within 30 s')
            restarts = 0
        for _ in range(restarts):
            peer.kill()
            time.sleep(3.0 + RANDOM.uniform(0.0, 1.0))
            peer = Lines(setup.emulator(port), stream='stdout')
            if not wait_until(lambda: peer.first(listening) and any(
                    t > peer.started for t in arrivals), 15.0):
                print(f'  {setup.node}: not back within 15 s')
                continue
            listened = peer.first(listening)
            connected = node.first(setup.connected, peer.started)
            first = next(t for t in arrivals if t > peer.started)
            figures['start'].append(listened - peer.started)
            figures['total'].append(first - listened)
            if connected is not None:
                figures['connect'].append(connected - listened)
                figures['first'].append(first - connected)
            time.sleep(0.3)
    finally:
        peer.kill()
        node.kill(signal.SIGINT)
        probe.destroy_subscription(sub)
        if setup.sensors_path:
            os.unlink(setup.sensors_path)
    return figures


def nodes(restarts: int) -> None:
    keep_dds_local(BENCH_DOMAINS)
    print(f'installed nodes against their emulators ({restarts} restarts each; emulator killed, '
          'away 3–4 s, started again): median / max in s')
    print(f'  {"node":17s} {"emulator start":>15s} {"listen→connected":>17s} '
          f'{"connected→first":>16s} {"listen→first msg":>17s}')
    with background_node('bench_reconnect') as probe:
        for setup in setups():
            f = one_node(probe, setup, restarts)
            cells = [f'{statistics.median(v):.3f} / {max(v):.3f}' if v else 'n/a'
                     for v in (f['start'], f['connect'], f['first'], f['total'])]
            print(f'  {setup.node:17s} {cells[0]:>15s} {cells[1]:>17s} {cells[2]:>16s} '
                  f'{cells[3]:>17s}', flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('what', nargs='?', default='all', choices=('client', 'nodes', 'all'))
    ap.add_argument('--restarts', type=int, default=6)
    args = ap.parse_args()
    if args.what in ('client', 'all'):
        client_alone()
    if args.what in ('nodes', 'all'):
        nodes(args.restarts)
    return 0


if __name__ == '__main__':
    sys.exit(main())
