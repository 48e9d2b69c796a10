"""monoDrive: control request/reply round trip (p50/p99) next to a bare socket echo, and the
lidar and camera (1920×1080 bgra, 30 Hz) streams into ROS next to a raw socket read of the
same stream (target: ≥ 50 % of the raw read, no dropped camera frames).

The client node runs as its installed executable (own process); the streams come from
monodrive_sim's scene in this process; what reached ROS is counted by a subscriber here and
checked against the node's own /diagnostics (frames received and published).
"""
from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
import time

from ros_sim_bridge.monodrive import session as sess
from ros_sim_bridge.monodrive.codec import control, sensor
from ros_sim_bridge.monodrive.emulator import MonoDriveSim
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


def raw_read(port: int, seconds: float) -> tuple[float, int, int]:
    """MB/s, messages, sample_count gaps of a plain socket read of one sensor stream."""
    c = socket.create_connection(('127.0.0.1', port))
    c.settimeout(2.0)
    framer, det = sensor.SensorFramer(), sensor.HeaderDetector(16)
    nbytes = msgs = gaps = 0
    last = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        data = c.recv(1 << 22)
        nbytes += len(data)
        for m in framer.feed(data):
            h, _ = det.split(m)
            msgs += 1
            if last is not None and h.sample_count != last + 1:
                gaps += 1
            last = h.sample_count
    c.close()
    return nbytes / seconds / 1e6, msgs, gaps


def streams(node) -> None:
    from sensor_msgs.msg import Image, PointCloud2
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file
    from ros_sim_bridge.tools.listener import Listener

    cam_port, lidar_port, raw_cam, raw_lidar = (free_tcp_port() for _ in range(4))
    cam = {'type': 'Camera', 'listen_port': cam_port, 'description': 'camera',
           'stream_dimensions': {'x': 1920, 'y': 1080}, 'channels': 'bgra', 'fov': 90.0}
    lid = {'type': 'Lidar', 'listen_port': lidar_port, 'description': 'lidar', 'n_lasers': 16,
           'horizontal_resolution': 0.2, 'location': {'z': 200}}
    with MonoDriveSim('127.0.0.1', 0, rate=30.0) as sim:
        # raw socket reads of the same streams first
        sim.configure_sensor(dict(cam, listen_port=raw_cam))
        mb, msgs, gaps = raw_read(raw_cam, SECONDS)
        print(f'camera 1920×1080 bgra @30 Hz, raw socket read: {mb:7.1f} MB/s, '
              f'{msgs / SECONDS:5.1f} frames/s, {gaps} sample gaps')
        sim.sensors.pop(raw_cam).close()
        sim.configure_sensor(dict(lid, listen_port=raw_lidar))
        mb_l, msgs_l, _ = raw_read(raw_lidar, SECONDS)
        print(f'lidar VLP-16 0.2°, raw socket read:        {mb_l:7.1f} MB/s, '
              f'{msgs_l / SECONDS:7.1f} packets/s')
        sim.sensors.pop(raw_lidar).close()

        fd, path = tempfile.mkstemp(suffix='.json')
        with os.fdopen(fd, 'w') as f:
            json.dump([cam, lid], f)
        listener = Listener(node)
        listener.listen(Image, 'monodrive/camera/image', 5)
        listener.listen(PointCloud2, 'monodrive/lidar/points', 5)
        try:
            with NodeProcess('monodrive_client', params_file=config_file('monodrive.yaml'),
                             parameters={'port': sim.port, 'sensors_config': path,
                                         'simulator_config': "''", 'weather_config': "''",
                                         'vehicle_config': "''"}):
                listener.wait_matched(15.0)
                listener.wait_for('monodrive/camera/image', 1, 15.0)
                c0 = listener.count['monodrive/camera/image']
                l0 = listener.count['monodrive/lidar/points']
                s0 = sim.sensors[cam_port].sample_count
                time.sleep(SECONDS)
                frames = listener.count['monodrive/camera/image'] - c0
                sent = sim.sensors[cam_port].sample_count - s0
                clouds = listener.count['monodrive/lidar/points'] - l0
                last = listener.last.get('monodrive/lidar/points')
                service = service_round_trip(node)
        finally:
            os.unlink(path)
    size = 1920 * 1080 * 4
    print(f'camera into ROS (Image received here):    {frames * size / SECONDS / 1e6:7.1f} MB/s, '
          f'{frames / SECONDS:5.1f} frames/s of {sent / SECONDS:5.1f} sent '
          f'({frames / max(1, sent) * 100:.0f} %; {max(0, sent - frames)} not received)')
    pts = last.width if last is not None else 0
    print(f'lidar into ROS: {clouds / SECONDS:5.1f} clouds/s of {pts} points '
          f'({clouds * pts * 18 / SECONDS / 1e6:.1f} MB/s of points)')
    print(f'GetVersion through the ROS service (while streaming): p50 {service[0]:6.3f} ms  '
          f'p99 {service[1]:6.3f} ms; {service[2]} responses not received within 10 s, '
          f'{len(service[3])} unsuccessful {sorted(set(service[3]))[:2]}')


def main() -> int:
    keep_dds_local(BENCH_DOMAINS)
    with MonoDriveSim('127.0.0.1', 0) as sim:
        req = control.encode_request('GetVersion', 1, {})
        e50, e99 = echo_round_trip(req)
        s50, s99 = session_round_trip(sim)
    print(f'request/reply over loopback ({N_REQUESTS} GetVersion):')
    print(f'  bare socket echo ({len(req)} B)        p50 {e50:6.3f} ms  p99 {e99:6.3f} ms')
    print(f'  ClientSession ↔ monodrive_sim      p50 {s50:6.3f} ms  p99 {s99:6.3f} ms')
    with background_node('bench_monodrive') as node:
        streams(node)
    return 0


if __name__ == '__main__':
    sys.exit(main())
