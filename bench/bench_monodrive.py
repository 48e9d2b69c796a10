"""monoDrive: control request/reply round trip (p50/p99) next to a bare socket echo, and the
lidar and camera (1920×1080 bgra, 30 Hz) streams into ROS next to a raw socket read of the
same stream (target: ≥ 50 % of the raw read, no dropped camera frames).

Each run (``--runs``, default 3; the machine is shared, so figures vary) first reads both
streams of a fresh monodrive_sim with a plain socket (recv_into, framed by length), then
through monodrive_client (its installed executable, own process) into a subscriber in this
process.  Into ROS counts what that subscriber received through DDS (serialised Images, as a
recorder takes them; ``--typed`` deserialises them into Python).  Dropped frames: the node
stamps with the simulator's game time (30 Hz steps), so a stamp step of k frames here means
k − 1 frames lost between the simulator and this subscriber; the node's own /diagnostics add
its frames published and its sample-count gaps (frames the simulator numbered but never sent).
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import socket
import struct
import sys
import tempfile
import threading
import time

from ros_sim_bridge.monodrive import session as sess
from ros_sim_bridge.monodrive.codec import control, sensor
from ros_sim_bridge.monodrive.emulator.server import MonoDriveSim
from ros_sim_bridge.tools.ports import BENCH_DOMAINS, free_tcp_port
from ros_sim_bridge.tools.session import background_node, keep_dds_local, wait_until

N_REQUESTS = 2000
SECONDS = 4.0


def percentiles(samples):
    s = sorted(samples)
    return s[len(s) // 2] * 1e3, s[min(len(s) - 1, int(len(s) * 0.99))] * 1e3


def echo_round_trip(payload: bytes) -> tuple[float, float]:
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(1)

    def echo():
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            data = conn.recv(65536)
            if not data:
                return
            conn.sendall(data)
    threading.Thread(target=echo, daemon=True).start()
    c = socket.create_connection(srv.getsockname())
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for _ in range(N_REQUESTS):
        t0 = time.perf_counter()
        c.sendall(payload)
        got = 0
        while got < len(payload):
            got += len(c.recv(65536))
        times.append(time.perf_counter() - t0)
    c.close()
    srv.close()
    return percentiles(times)


def session_round_trip(sim: MonoDriveSim) -> tuple[float, float]:
    c = socket.create_connection(('127.0.0.1', sim.port))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s = sess.ClientSession()
    s.connection_made(0.0)
    times = []
    for _ in range(N_REQUESTS):
        t0 = time.perf_counter()
        req = s.request('GetVersion', {}, 0.0, 5.0)
        c.sendall(s.data_to_send())
        done = False
        while not done:
            for ev in s.receive_data(c.recv(65536)):
                done = done or (isinstance(ev, sess.Reply) and ev.request is req)
        times.append(time.perf_counter() - t0)
    c.close()
    return percentiles(times)


def service_round_trip(node, n: int = 300) -> tuple[float, float]:
    from ros_sim_bridge.srv import MonoDriveCommand
    client = node.create_client(MonoDriveCommand, '/monodrive_client/get_version')
    client.wait_for_service(timeout_sec=15.0)
    times, refused, unanswered = [], [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        fut = client.call_async(MonoDriveCommand.Request(json='{}'))
        if not wait_until(fut.done, 10.0, 0.0002):
            unanswered += 1               # no service response reached this process
        elif not fut.result().success:
            refused.append(fut.result().message)   # the node answered: no simulator reply
        times.append(time.perf_counter() - t0)
    node.destroy_client(client)
    p50, p99 = percentiles(times)
    return p50, p99, unanswered, refused


CAMERA = (1920, 1080, 4)
FRAME_BYTES = CAMERA[0] * CAMERA[1] * CAMERA[2]
RATE = 30.0


class RawRead(threading.Thread):
    """A plain socket read of one sensor stream: recv_into a buffer, framed by the length
    field (the SensorFramer's buffered protocol, so a frame is read once, in place)."""

    def __init__(self, port: int, seconds: float):
        super().__init__(daemon=True)
        self.port, self.seconds = port, seconds
        self.bytes = self.messages = self.samples = self.missing = 0

    def run(self) -> None:
        c = socket.create_connection(('127.0.0.1', self.port))
        c.settimeout(2.0)
        framer, gaps = sensor.SensorFramer(), sensor.SampleGaps()
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            with framer.get_buffer() as buf:
                n = c.recv_into(buf)
            self.bytes += n
            for m in framer.buffer_updated(n):
                self.messages += 1
                count = sensor.decode_header(m, 16).sample_count
                self.samples += count != gaps.last
                gaps.update(count)
        c.close()
        self.missing = gaps.missing


def image_cdr_fields(cdr: bytes) -> tuple[float, int]:
    """(stamp in s, pixel bytes) of a serialised sensor_msgs/Image (CDR little-endian:
    4-byte encapsulation, stamp i32 + u32, frame_id, height, width, encoding, is_bigendian,
    step, data)."""
    sec, nanosec, n = struct.unpack_from('<iII', cdr, 4)
    at = 16 + n
    at += -(at - 4) % 4
    at += 8                                               # height, width
    (n,) = struct.unpack_from('<I', cdr, at)
    at += 4 + n + 1                                       # encoding, is_bigendian
    at += -(at - 4) % 4
    (data_len,) = struct.unpack_from('<I', cdr, at + 4)   # after step
    return sec + nanosec * 1e-9, data_len


class Received:
    """What reached this process through DDS: frames and their game-time stamps (the node
    runs with stamp_source 'sim', so a stamp step of k/30 s means k − 1 frames lost on the
    way: in the node, DDS or this subscriber).  ``typed``: Image messages deserialised into
    Python (rclpy's conversion costs this process two more copies of each frame); else the
    serialised messages, as ``ros2 bag record`` takes them."""

    def __init__(self, node, typed: bool = False):
        from sensor_msgs.msg import Image, PointCloud2
        self.frames = self.frame_bytes = self.missing = 0
        self.clouds = self.cloud_points = 0
        self.last_stamp = None
        self.counting = False
        self.typed = typed
        self.subs = [node.create_subscription(Image, 'monodrive/camera/image', self._image, 10,
                                              raw=not typed),
                     node.create_subscription(PointCloud2, 'monodrive/lidar/points',
                                              self._cloud, 10)]

    def _image(self, msg) -> None:
        if self.typed:
            t, size = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, len(msg.data)
        else:
            t, size = image_cdr_fields(msg)
        if self.counting:
            self.frames += 1
            self.frame_bytes += size
            if self.last_stamp is not None:
                self.missing += max(0, round((t - self.last_stamp) * RATE) - 1)
        self.last_stamp = t

    def _cloud(self, msg) -> None:
        if self.counting:
            self.clouds += 1
            self.cloud_points += msg.width * msg.height

    def matched(self) -> bool:
        return all(s.get_publisher_count() > 0 for s in self.subs)


def one_run(node, run: int, typed: bool) -> dict:
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file

    cam_port, lidar_port, raw_cam, raw_lidar = (free_tcp_port() for _ in range(4))
    cam = {'type': 'Camera', 'listen_port': cam_port, 'description': 'camera',
           'stream_dimensions': {'x': CAMERA[0], 'y': CAMERA[1]}, 'channels': 'bgra',
           'fov': 90.0}
    lid = {'type': 'Lidar', 'listen_port': lidar_port, 'description': 'lidar', 'n_lasers': 16,
           'horizontal_resolution': 0.2, 'location': {'z': 200}}
    out = {}
    with MonoDriveSim('127.0.0.1', 0, rate=RATE) as sim:
        # 1. a raw socket read of both streams at once
        sim.configure_sensor(dict(cam, listen_port=raw_cam))
        sim.configure_sensor(dict(lid, listen_port=raw_lidar))
        readers = [RawRead(raw_cam, SECONDS), RawRead(raw_lidar, SECONDS)]
        for r in readers:
            r.start()
        for r in readers:
            r.join()
        out['raw_cam'], out['raw_lidar'] = readers
        packets_per_rev = readers[1].messages / max(1, readers[1].samples)
        for port in (raw_cam, raw_lidar):
            sim.sensors.pop(port).close()

        # 2. the same streams through monodrive_client (own process) into ROS, received here
        fd, path = tempfile.mkstemp(suffix='.json')
        with os.fdopen(fd, 'w') as f:
            json.dump([cam, lid], f)
        got = Received(node, typed)
        try:
            with NodeProcess('monodrive_client', params_file=config_file('monodrive.yaml'),
                             parameters={'port': sim.port, 'sensors_config': path,
                                         'stamp_source': 'sim', 'publish_tf': False,
                                         'diagnostics_period': 0.2,
                                         'simulator_config': "''", 'weather_config': "''",
                                         'vehicle_config': "''"}, quiet=True):
                wait_until(got.matched, 30.0, 0.05)
                wait_until(lambda: got.last_stamp is not None, 30.0, 0.05)
                time.sleep(1.0)                    # let the first frames drain
                d0 = node_diagnostics(node)
                got.counting = True
                s0 = sim.sensors[cam_port].sample_count
                time.sleep(SECONDS)
                got.counting = False
                out['sent'] = sim.sensors[cam_port].sample_count - s0
                out['diag'] = d1 = node_diagnostics(node)
                out['published'] = int(d1.get('published', 0)) - int(d0.get('published', 0))
        finally:
            os.unlink(path)
            for sub in got.subs:
                node.destroy_subscription(sub)
        out['ros'] = got
        out['packets_per_rev'] = packets_per_rev
    return out


def node_diagnostics(node, timeout: float = 3.0) -> dict:
    """The camera link's /diagnostics values from the node (drops = sample-count gaps)."""
    from diagnostic_msgs.msg import DiagnosticArray
    found: dict = {}

    def on(arr):
        for st in arr.status:
            if 'Camera (tcp' in st.name:
                found.update({kv.key: kv.value for kv in st.values})
    sub = node.create_subscription(DiagnosticArray, '/diagnostics', on, 10)
    wait_until(lambda: bool(found), timeout, 0.05)
    node.destroy_subscription(sub)
    return found


def report(run: int, r: dict) -> tuple[float, float]:
    raw_c, raw_l, got = r['raw_cam'], r['raw_lidar'], r['ros']
    raw_mb = raw_c.bytes / SECONDS / 1e6
    ros_mb = got.frame_bytes / SECONDS / 1e6
    lidar_raw_mb = raw_l.bytes / SECONDS / 1e6
    # lidar into ROS counted as the stream bytes the published clouds were made of
    lidar_ros_mb = got.clouds * r['packets_per_rev'] * (16 + 1206) / SECONDS / 1e6
    diag = r['diag']
    print(f'run {run}:')
    print(f'  camera 1920×1080 bgra @30 Hz  raw socket read {raw_mb:6.1f} MB/s '
          f'({raw_c.messages / SECONDS:4.1f} frames/s, {raw_c.missing} missing)  |  into ROS '
          f'{ros_mb:6.1f} MB/s ({got.frames / SECONDS:4.1f} frames/s of '
          f'{r["sent"] / SECONDS:4.1f} sent) = {ros_mb / max(raw_mb, 1e-9) * 100:3.0f} % of raw; '
          f'dropped {got.missing} (stamp gaps here), node: {r["published"] / SECONDS:4.1f} '
          f'published/s, {diag.get("drops", "?")} sample gaps')
    print(f'  lidar VLP-16 0.2° @30 Hz      raw socket read {lidar_raw_mb:6.1f} MB/s '
          f'({raw_l.messages / SECONDS:6.0f} packets/s)  |  into ROS {lidar_ros_mb:6.1f} MB/s '
          f'of packets ({got.clouds / SECONDS:4.1f} clouds/s of '
          f'{got.cloud_points / max(1, got.clouds):.0f} points) = '
          f'{lidar_ros_mb / max(lidar_raw_mb, 1e-9) * 100:3.0f} % of raw')
    return ros_mb / max(raw_mb, 1e-9), got.missing


def streams(node, runs: int, typed: bool = False) -> None:
    print(f'sensor streams: {runs} runs of {SECONDS:g} s; each run reads both streams raw, '
          'then through monodrive_client (own process) into a subscriber here '
          f'({"Image deserialised into Python" if typed else "serialised Image"})')
    results = []
    for run in range(1, runs + 1):
        results.append(report(run, one_run(node, run, typed)))
    pct = sorted(p * 100 for p, _ in results)
    print(f'camera into ROS / raw read: min {pct[0]:.0f} %, median {pct[len(pct) // 2]:.0f} %, '
          f'max {pct[-1]:.0f} % (target ≥ 50 %); dropped frames per run: '
          f'{[d for _, d in results]} (target 0)')


def service_figures(node) -> None:
    """GetVersion through the node's ROS service while the camera streams."""
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file
    port = free_tcp_port()
    cam = {'type': 'Camera', 'listen_port': port, 'description': 'camera',
           'stream_dimensions': {'x': CAMERA[0], 'y': CAMERA[1]}, 'channels': 'bgra'}
    fd, path = tempfile.mkstemp(suffix='.json')
    with os.fdopen(fd, 'w') as f:
        json.dump([cam], f)
    try:
        with MonoDriveSim('127.0.0.1', 0, rate=RATE) as sim, \
                NodeProcess('monodrive_client', params_file=config_file('monodrive.yaml'),
                            parameters={'port': sim.port, 'sensors_config': path,
                                        'simulator_config': "''", 'weather_config': "''",
                                        'vehicle_config': "''"}, quiet=True):
            service = service_round_trip(node)
    finally:
        os.unlink(path)
    print(f'GetVersion through the ROS service (while streaming): p50 {service[0]:6.3f} ms  '
          f'p99 {service[1]:6.3f} ms; {service[2]} responses not received within 10 s, '
          f'{len(service[3])} unsuccessful {sorted(set(service[3]))[:2]}')


SHM_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <transport_descriptors>
    <transport_descriptor>
      <transport_id>shm_large</transport_id>
      <type>SHM</type>
      <segment_size>{size}</segment_size>
      <maxMessageSize>{size}</maxMessageSize>
    </transport_descriptor>
    <transport_descriptor>
      <transport_id>udp</transport_id>
      <type>UDPv4</type>
    </transport_descriptor>
  </transport_descriptors>
  <participant profile_name="large_shm" is_default_profile="true">
    <rtps>
      <userTransports>
        <transport_id>shm_large</transport_id>
        <transport_id>udp</transport_id>
      </userTransports>
      <useBuiltinTransports>false</useBuiltinTransports>
    </rtps>
  </participant>
</profiles>
"""


def use_shm_segment(megabytes: int) -> str:
    """Fast DDS for this process and the node: a shared-memory segment of ``megabytes``
    (the default 0.5 MB makes an 8 MB frame cross in fragments that a busy reader loses;
    see the README).  Returns what is in use, for the printout."""
    if not megabytes or os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE'):
        return os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE') or 'Fast DDS default transports'
    fd, path = tempfile.mkstemp(suffix='.xml', prefix='bench_monodrive_shm_')
    with os.fdopen(fd, 'w') as f:
        f.write(SHM_PROFILE.format(size=megabytes << 20))
    os.environ['FASTDDS_DEFAULT_PROFILES_FILE'] = path
    atexit.register(os.unlink, path)
    return f'Fast DDS shared-memory segment of {megabytes} MiB ({path})'


def main() -> int:
    global SECONDS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--runs', type=int, default=3, help='stream runs (3)')
    ap.add_argument('--seconds', type=float, default=SECONDS, help='seconds per window')
    ap.add_argument('--streams-only', action='store_true', help='skip the round trips')
    ap.add_argument('--typed', action='store_true',
                    help='receive camera Images deserialised into Python (not serialised)')
    ap.add_argument('--no-service', action='store_true', help='skip the ROS service figure')
    ap.add_argument('--shm-segment', type=int, default=64, metavar='MIB',
                    help='Fast DDS shared-memory segment for the streams, MiB (64; 0 = the '
                         'Fast DDS default of 0.5 MB)')
    args = ap.parse_args()
    SECONDS = args.seconds
    keep_dds_local(BENCH_DOMAINS)
    print(f'DDS: {use_shm_segment(args.shm_segment)}')
    if args.streams_only:
        with background_node('bench_monodrive') as node:
            streams(node, args.runs, args.typed)
        return 0
    with MonoDriveSim('127.0.0.1', 0) as sim:
        req = control.encode_request('GetVersion', 1, {})
        e50, e99 = echo_round_trip(req)
        s50, s99 = session_round_trip(sim)
    print(f'request/reply over loopback ({N_REQUESTS} GetVersion):')
    print(f'  bare socket echo ({len(req)} B)        p50 {e50:6.3f} ms  p99 {e99:6.3f} ms')
    print(f'  ClientSession ↔ monodrive_sim      p50 {s50:6.3f} ms  p99 {s99:6.3f} ms')
    with background_node('bench_monodrive') as node:
        streams(node, args.runs, args.typed)
        if not args.no_service:
            service_figures(node)
    return 0


if __name__ == '__main__':
    sys.exit(main())
