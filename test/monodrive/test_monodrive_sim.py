"""monodrive_sim over real TCP on 127.0.0.1: every command type answered, the configured
sensors streamed and decodable by our codec, SIGINT/SIGTERM exit 0."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import free_tcp_port, wait_until
from monodrive_support import BODIES, connects, sim  # noqa: F401 (sim: fixture)
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.monodrive import session as sess_mod
from ros_sim_bridge.monodrive.emulator import scene as sim_scene, server as sim_server
from ros_sim_bridge.monodrive import lidar_geometry
from ros_sim_bridge.monodrive.codec import control, lidar, messages, payloads, sensor

REPO = Path(__file__).resolve().parents[2]

class Link:
    """A plain client socket speaking the framing, with our session for bookkeeping."""

    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port), 2.0)
        self.sock.settimeout(5.0)
        self.session = sess_mod.ClientSession()
        self.session.connection_made(0.0)

    def call(self, msg_type, body):
        req = self.session.request(msg_type, body, 0.0, 5.0)
        self.sock.sendall(self.session.data_to_send())
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            for ev in self.session.receive_data(self.sock.recv(65536)):
                if isinstance(ev, sess_mod.Reply) and ev.request is req:
                    return ev.message
        raise AssertionError(f'no reply to {msg_type}')


def test_every_message_type_is_answered(sim):
    link = Link(sim.port)
    for msg_type in messages.MESSAGE_TYPES:
        body = BODIES.get(msg_type, {})
        reply = link.call(msg_type, body)
        assert reply.type == msg_type and reply.success, (msg_type, reply)
        assert reply.magic == control.CLIENT_MAGIC
    assert link.call('GetVersion', {}).message == sim_scene.VERSION
    assert link.call('SimulatorConfig_ID', {'simulation_mode': 2}).message == \
        'simulator configuration mode = 2'
    bad = link.call('SimulatorConfig_ID', {'map': ''})
    assert not bad.success and bad.message == 'invalid map specified'
    assert link.call('ClosedLoopStepCommand_ID', {'time_step': 0.01}).message is True
    assert link.call('NotAType_ID', {}).success is False
    assert sim.scene.throttle == 0.5


def test_legacy_magic_and_no_reference():
    with sim_server.MonoDriveSim('127.0.0.1', 0, reply_magic=control.LEGACY_REPLY_MAGIC,
                               echo_reference=False) as s:
        reply = Link(s.port).call('GetVersion', {})
        assert reply.magic == control.LEGACY_REPLY_MAGIC and reply.reference is None


def read_samples(port, n, expected=(), json_payload=False, timeout=10.0):
    sock = socket.create_connection(('127.0.0.1', port), 2.0)
    sock.settimeout(timeout)
    framer, det, out = sensor.SensorFramer(), sensor.HeaderDetector(), []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < n and time.monotonic() < deadline:
            for msg in framer.feed(sock.recv(1 << 20)):
                assert isinstance(msg, bytes), msg
                out.append(det.split(msg, expected, json_payload))
    finally:
        sock.close()
    assert len(out) >= n
    return out, det.size


def test_sensor_streams_decode(sim):
    ports = {k: free_tcp_port() for k in ('State', 'Lidar', 'Camera', 'IMU', 'GPS')}
    link = Link(sim.port)
    for kind, port in ports.items():
        cfg = {'type': kind, 'listen_port': port, 'location': {'x': 0, 'y': 0, 'z': 200}}
        if kind == 'Camera':
            cfg['stream_dimensions'] = {'x': 32, 'y': 24}
            cfg['channels'] = 'bgra'
        assert link.call('REPLAY_ConfigureSensorsCommand_ID', cfg).success
    (hdr, payload), *_ = read_samples(ports['State'], 2, json_payload=True)[0]
    frame = payloads.decode_state(payload)
    assert [v.name for v in frame.vehicles] == ['ego', 'Sedan2D_01_1'] and hdr.sample_count
    samples, size = read_samples(ports['IMU'], 2, (payloads.IMU_SIZE,))
    assert size == 16 and payloads.decode_imu(samples[0][1]).acceleration[2] == \
        pytest.approx(9.81, abs=1e-5)
    samples, _ = read_samples(ports['GPS'], 1, (payloads.GPS_SIZE,))
    assert payloads.decode_gps(samples[0][1]).latitude == pytest.approx(30.2672, abs=0.01)
    samples, _ = read_samples(ports['Camera'], 1, (32 * 24 * 4,))
    assert payloads.decode_image(samples[0][1], 32, 24, 'bgra').shape == (24, 32, 4)
    samples, _ = read_samples(ports['Lidar'], 60, (lidar.PACKET_SIZE,))
    asm = lidar.RevolutionAssembler()
    revs = [r for r in (asm.add(bytes(p), h.game_time) for h, p in samples) if r]
    assert revs, 'no whole revolution'
    pts = lidar_geometry.decode_points(revs[0][0], lidar_geometry.LidarGeometry(16, 0.4))
    r = np.sqrt(pts['x'] ** 2 + pts['y'] ** 2 + pts['z'] ** 2)
    assert len(pts) > 1000 and r.max() <= 31.0 and set(np.unique(pts['ring'])) == set(range(16))


def test_twelve_byte_headers():
    with sim_server.MonoDriveSim('127.0.0.1', 0, header_size=12, rate=20) as s:
        port = free_tcp_port()
        s.configure_sensor({'type': 'IMU', 'listen_port': port})
        samples, size = read_samples(port, 1, (payloads.IMU_SIZE,))
        assert size == 12 and samples[0][0].sample_count is None


def test_garbage_on_control_does_not_stop_the_server(sim):
    sock = socket.create_connection(('127.0.0.1', sim.port), 2.0)
    sock.sendall(b'\x00\x01garbage' + control.encode_frame(b'{not json') +
                 bytes.fromhex('6d6f6e6f 7fffffff'))
    sock.close()
    assert wait_until(lambda: sim.errors > 0, 5.0)
    assert Link(sim.port).call('GetVersion', {}).success


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_executable_exits_zero_on_signal(sig):
    port = free_tcp_port()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, '-m', 'ros_sim_bridge.monodrive.emulator.cli',
                             '--port', str(port), '--ros-args', '-r', '__node:=x'],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: connects(port), 15.0)
        proc.send_signal(sig)
        assert proc.wait(10.0) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_json_config_body_round_trip():
    assert json.loads(control.encode_request('GetVersion', 1, {})[8:])['reference'] == 1
    assert isinstance(control.ControlFramer().feed(control.encode_request('X', 1, {}))[0], Frame)


def test_camera_frames_scroll_and_keep_their_header(sim):
    """Each camera sample is the picture scrolled up by whole rows (the moving element),
    sent after its own 16-byte header; consecutive samples are numbered 1, 2, 3 …"""
    port = free_tcp_port()
    assert Link(sim.port).call('REPLAY_ConfigureSensorsCommand_ID', {
        'type': 'Camera', 'listen_port': port, 'stream_dimensions': {'x': 32, 'y': 24},
        'channels': 'bgra'}).success
    samples, size = read_samples(port, 3, (32 * 24 * 4,))
    assert size == 16
    counts = [h.sample_count for h, _ in samples]
    assert counts == list(range(counts[0], counts[0] + 3))
    first, second = (payloads.decode_image(p, 32, 24, 'bgra') for _, p in samples[:2])
    assert (first[..., 3] == 255).all()
    shifts = [k for k in range(1, 24) if np.array_equal(np.roll(first, -k, axis=0), second)]
    # 20 Hz, CAMERA_SCROLL rows/s: the second frame is the first moved up by 6 rows
    assert shifts == [int(sim_scene.CAMERA_SCROLL / 20) % 24]


def test_send_buffers_survives_partial_sends():
    """Gathered sends of a header, a large memoryview and small bytes through a socket whose
    buffer is much smaller than the data: every byte arrives, in order."""
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    big = np.arange(3 << 20, dtype=np.uint32).view(np.uint8)      # 12 MiB
    buffers = [b'head', memoryview(big)[5:], b'', b'tail' * 3]
    expected = b'head' + big[5:].tobytes() + b'tail' * 3
    got = bytearray()

    def reader():
        while len(got) < len(expected):
            chunk = b.recv(1 << 16)
            if not chunk:
                return
            got.extend(chunk)
    import threading
    t = threading.Thread(target=reader)
    t.start()
    sim_server.send_buffers(a, buffers)
    t.join(30.0)
    a.close()
    b.close()
    assert bytes(got) == expected
