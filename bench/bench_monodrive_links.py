"""monoDrive client links (issue #12): how fast every stream resumes after a simulator restart,
and how long command services take while every stream runs.

1. Restart: ``monodrive_client`` (its installed executable) against ``monodrive_sim`` (its own
   process, sensors configured by the client as with the real simulator).  The simulator is
   killed (SIGKILL), stays away 0.5–1.5 s, and starts again on the same ports; for each stream
   the figure is the time from its port listening again (the simulator's own log line) to
   the first message of that stream received here, and from the control port listening.
   Target: every stream back within 1 s of its port listening.
2. Services under load: GetVersion through ``~/get_version`` called back to back (one
   persistent client) while State, lidar, camera, depth, IMU, GPS, RPM, radar and collision
   stream at full rate; p50 / p99 / max and the calls slower than 1 s.

Usage: bench_monodrive_links.py [restart|services] [--restarts N] [--calls N] [--camera WxH]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from ros_sim_bridge.tools.ports import BENCH_DOMAINS, free_tcp_port
from ros_sim_bridge.tools.session import background_node, keep_dds_local, wait_until

RANDOM = random.Random(12)


class Sim:
    """monodrive_sim in its own process; the time each port started listening, from its log."""

    def __init__(self, port: int, rate: float, sensors_file: str = ''):
        cmd = [sys.executable, '-u', '-m', 'ros_sim_bridge.monodrive.emulator.cli', '--port',
               str(port), '--rate', str(rate)]
        if sensors_file:
            cmd += ['--sensors', sensors_file]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        self.listening: dict[int, float] = {}      # port → monotonic time of its log line
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            now = time.monotonic()
            for word in line.split():
                if word.startswith('127.0.0.1:'):
                    port = int(word.split(':')[1].rstrip(','))
                    self.listening.setdefault(port, now)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def sensor_list(kinds, camera=(640, 480)) -> list[dict]:
    out = []
    for kind in kinds:
        s = {'type': kind, 'listen_port': free_tcp_port(), 'description': kind.lower(),
             'location': {'x': 0.0, 'y': 0.0, 'z': 200.0}}
        if kind in ('Camera', 'DepthCamera', 'SemanticCamera'):
            s.update(stream_dimensions={'x': camera[0], 'y': camera[1]}, channels='bgra',
                     fov=90.0)
        if kind == 'Lidar':
            s.update(n_lasers=16, horizontal_resolution=0.4)
        out.append(s)
    return out


TOPIC = {'State': 'monodrive/state', 'IMU': 'monodrive/imu/imu', 'GPS': 'monodrive/gps/fix',
         'Lidar': 'monodrive/lidar/points', 'Camera': 'monodrive/camera/image',
         'DepthCamera': 'monodrive/depthcamera/depth', 'RPM': 'monodrive/rpm/rpm',
         'Radar': 'monodrive/radar/targets', 'Collision': 'monodrive/collision/collision'}


def msg_type(kind):
    from sensor_msgs.msg import Image, Imu, NavSatFix, PointCloud2
    from ros_sim_bridge.msg import (MonoDriveCollision, MonoDriveRadarTargets, MonoDriveRpm,
                                    MonoDriveState)
    return {'State': MonoDriveState, 'IMU': Imu, 'GPS': NavSatFix, 'Lidar': PointCloud2,
            'Camera': Image, 'DepthCamera': Image, 'RPM': MonoDriveRpm,
            'Radar': MonoDriveRadarTargets, 'Collision': MonoDriveCollision}[kind]


class Arrivals:
    """Receive times of every message of the watched topics."""

    def __init__(self, node, kinds):
        from ros_sim_bridge.ros.qos import DATA
        self.times: dict[str, list[float]] = {k: [] for k in kinds}
        self.subs = [node.create_subscription(msg_type(k), TOPIC[k], self._cb(k), DATA)
                     for k in kinds]

    def _cb(self, kind):
        times = self.times[kind]
        return lambda msg: times.append(time.monotonic())

    def first_after(self, kind: str, t: float):
        return next((x for x in self.times[kind] if x >= t), None)


NODE_ENV: dict = {}       # --node-pythonpath: the node from another source tree (before/after)


def client(port: int, sensors_path: str, **extra):
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file
    return NodeProcess('monodrive_client', params_file=config_file('monodrive.yaml'),
                       parameters={'port': port, 'sensors_config': sensors_path, **extra},
                       quiet=True, env=NODE_ENV)


def restart(node, restarts: int) -> None:
    kinds = ('State', 'IMU', 'GPS', 'Lidar', 'Camera')
    sensors = sensor_list(kinds)
    fd, path = tempfile.mkstemp(suffix='.json')
    with os.fdopen(fd, 'w') as f:
        json.dump(sensors, f)
    port = free_tcp_port()
    arrivals = Arrivals(node, kinds)
    per_kind: dict[str, list[float]] = {k: [] for k in kinds}
    from_control: list[float] = []
    missing = 0
    sim = Sim(port, 20.0)
    try:
        with client(port, path):
            assert wait_until(lambda: all(arrivals.times[k] for k in kinds), 30.0), \
                'streams did not start'
            for _ in range(restarts):
                sim.kill()
                time.sleep(RANDOM.uniform(0.5, 1.5))
                sim = Sim(port, 20.0)
                t0 = sim.started
                ok = wait_until(lambda: all(arrivals.first_after(k, t0) for k in kinds), 15.0)
                worst = 0.0
                for s in sensors:
                    k, p = s['type'], s['listen_port']
                    first = arrivals.first_after(k, t0)
                    listen = sim.listening.get(p)
                    if first is None or listen is None:
                        missing += 1
                        continue
                    per_kind[k].append(first - listen)
                    worst = max(worst, first - sim.listening.get(port, t0))
                if ok:
                    from_control.append(worst)
                time.sleep(0.5)
    finally:
        sim.kill()
        os.unlink(path)
    print(f'simulator restart ({restarts}×, killed, back after 0.5–1.5 s; sensors configured '
          'by the client): time from a port listening again to its first message here')
    allv = []
    for k in kinds:
        v = per_kind[k]
        allv += v
        if v:
            print(f'  {k:7s} median {statistics.median(v):.3f} s  max {max(v):.3f} s')
    if from_control:
        print(f'  all streams back, from the control port listening: median '
              f'{statistics.median(from_control):.3f} s  max {max(from_control):.3f} s')
    if allv:
        print(f'  worst stream: {max(allv):.3f} s after its port listened (target ≤ 1 s); '
              f'{missing} stream restarts not seen')


CONSUMER = '''
import sys, time
sys.path = [p for p in sys.path if p not in ('', '.')]    # the installed package, not ./
from ros_sim_bridge.tools.session import background_node
sys.path.insert(0, sys.argv[1])
from bench_monodrive_links import Arrivals
kinds = sys.argv[2].split(",")
with background_node("bench_monodrive_consumer") as node:
    a = Arrivals(node, kinds)
    t0 = time.monotonic()
    for line in sys.stdin:                       # runs until the bench closes stdin
        break
    dt = time.monotonic() - t0
    print(" ".join(f"{k}={len(a.times[k]) / dt:.1f}" for k in kinds), flush=True)
'''


def consumer(kinds) -> subprocess.Popen:
    """A subscriber to the big streams in its own process (as RViz would be), so that the
    service client's own process is not the one decoding images."""
    return subprocess.Popen([sys.executable, '-c', CONSUMER, os.path.dirname(__file__),
                             ','.join(kinds)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


def services(node, calls: int, camera, separate: bool = False) -> None:
    from ros_sim_bridge.srv import MonoDriveCommand
    kinds = ('State', 'Lidar', 'Camera', 'DepthCamera', 'IMU', 'GPS', 'RPM', 'Radar',
             'Collision')
    sensors = sensor_list(kinds, camera)
    fd, path = tempfile.mkstemp(suffix='.json')
    with os.fdopen(fd, 'w') as f:
        json.dump(sensors, f)
    port = free_tcp_port()
    watched = ('State', 'Camera', 'Lidar', 'DepthCamera')
    arrivals = Arrivals(node, ('State',) if separate else watched)
    other = consumer(watched) if separate else None
    from diagnostic_msgs.msg import DiagnosticArray
    inside = {}                   # the node's own account of its command durations

    def on_diag(msg):
        for st in msg.status:
            if 'control (tcp' in st.name:
                inside.update({kv.key: kv.value for kv in st.values})
    diag_sub = node.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 50)
    sim = Sim(port, 30.0)
    times, failed = [], []
    try:
        with client(port, path):
            assert wait_until(lambda: all(v for v in arrivals.times.values()), 30.0), \
                'streams did not start'
            cli = node.create_client(MonoDriveCommand, '/monodrive_client/get_version')
            assert cli.wait_for_service(timeout_sec=15.0)
            n0 = {k: len(v) for k, v in arrivals.times.items()}
            t_start = time.monotonic()
            for _ in range(calls):
                t0 = time.perf_counter()
                fut = cli.call_async(MonoDriveCommand.Request(json='{}'))
                if not wait_until(fut.done, 30.0, 0.0002):
                    failed.append('no response within 30 s')
                elif not fut.result().success:
                    failed.append(fut.result().message)
                times.append(time.perf_counter() - t0)
            elapsed = time.monotonic() - t_start
            rates = {k: (len(v) - n0[k]) / elapsed for k, v in arrivals.times.items()}
            node.destroy_client(cli)
            time.sleep(1.5)                     # one more /diagnostics from the node
    finally:
        sim.kill()
        os.unlink(path)
        if other is not None:
            out, _ = other.communicate('stop\n', timeout=30)
            rates = {k: float(v) for k, v in (w.split('=') for w in out.split())}
    s = sorted(times)
    slow = [t for t in s if t > 1.0]
    print(f'GetVersion service, {calls} calls back to back while {len(kinds)} streams run '
          f'(camera and depth {camera[0]}×{camera[1]} at 30 Hz; received '
          + ('by a subscriber process: ' if separate else 'here: ')
          + ', '.join(f'{k} {r:.1f}/s' for k, r in rates.items()) + ')')
    print(f'  p50 {s[len(s) // 2] * 1e3:.2f} ms  p99 {s[int(len(s) * 0.99)] * 1e3:.2f} ms  '
          f'max {s[-1] * 1e3:.1f} ms; {len(slow)} calls > 1 s '
          f'({", ".join(f"{t:.1f} s" for t in slow[-5:])}); {len(failed)} failed '
          f'{sorted(set(failed))[:2]}')
    node.destroy_subscription(diag_sub)
    if 'service_slowest_ms' in inside:
        print(f'  inside the node (its /diagnostics): {inside.get("service_calls")} calls, '
              f'slowest {inside["service_slowest_ms"]} ms')


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('what', nargs='*', default=['restart', 'services'])
    ap.add_argument('--restarts', type=int, default=6)
    ap.add_argument('--calls', type=int, default=900)
    ap.add_argument('--camera', default='640x480', help='camera and depth size WxH')
    ap.add_argument('--separate', action='store_true',
                    help='the big streams are subscribed by another process, not the caller')
    ap.add_argument('--node-pythonpath', default='',
                    help='run monodrive_client from this source tree (a before/after comparison)')
    ap.add_argument('--node-env', action='append', default=[], metavar='KEY=VALUE',
                    help='an environment variable for the node process only')
    args = ap.parse_args()
    NODE_ENV.update(kv.split('=', 1) for kv in args.node_env)
    if args.node_pythonpath:
        NODE_ENV['PYTHONPATH'] = args.node_pythonpath + os.pathsep + os.environ.get(
            'PYTHONPATH', '')
    keep_dds_local(BENCH_DOMAINS)
    camera = tuple(int(x) for x in args.camera.split('x'))
    with background_node('bench_monodrive_links') as node:
        if 'restart' in args.what:
            restart(node, args.restarts)
        if 'services' in args.what:
            services(node, args.calls, camera, args.separate)
    return 0


if __name__ == '__main__':
    sys.exit(main())
