"""LUX emulator: scene logic (pure) and the TCP server on 127.0.0.1 (plain socket client +
the ibeo framer and decoders), including replay of the real LD-MRS captures."""
import math
import socket
import time
from pathlib import Path

import numpy as np
import pytest

from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.ibeo.codec import commands as C
from ros_sim_bridge.ibeo.codec import errors_warnings as E
from ros_sim_bridge.ibeo.codec import objects as O
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.codec import vehicle_state as V
from ros_sim_bridge.ibeo.codec.framing import make_framer
from ros_sim_bridge.core.ntp import unix_ns_to_ntp
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.ibeo.emulator.cli import main
from ros_sim_bridge.ibeo.emulator.scene import LuxScene, OUT_SCAN, OUT_VEHICLE, STATUS_STOPPED
from ros_sim_bridge.ibeo.emulator.server import LuxServer, load_messages, replay_delays

SAMPLES = Path(__file__).resolve().parents[2].parent / 'shared' / 'samples' / 'ibeo' / \
    'raulexposito-ldmrs'


def decode(msgs):
    return [ibeo.decode_message(m.data_type, m.body) for m in msgs]


def of_type(records, cls):
    return [r for r in records if isinstance(r, cls)]


def seg_distance(xy, segs):
    """Distance of each point (N, 2) to the nearest segment (S, 4)."""
    p0, p1 = segs[:, :2], segs[:, 2:]
    d = p1 - p0
    rel = xy[:, None, :] - p0[None]
    t = np.clip((rel * d[None]).sum(-1) / (d * d).sum(-1)[None], 0, 1)
    nearest = p0[None] + t[..., None] * d[None]
    return np.linalg.norm(xy[:, None, :] - nearest, axis=-1).min(axis=1)


# --- scene ----------------------------------------------------------------------------------

def test_step_produces_scan_objects_vehicle_state():
    scene = LuxScene(seed=1)
    recs = decode(scene.step())
    assert [type(r) for r in recs] == [S.LuxScan, O.LuxObjectList, V.LuxVehicleState]
    scan = recs[0]
    assert scan.ticks_per_rotation == 11520
    assert (scan.start_angle_ticks, scan.end_angle_ticks) == (1600, -1920)
    assert scan.duration_s == pytest.approx(0.08 * 3520 / 11520, abs=1e-6)
    assert set(np.unique(scan.points['layer'])) == {0, 1, 2, 3}
    assert 1500 < len(scan.points) < 5280
    assert recs[2].valid and recs[2].scan_number == scan.scan_number


def test_scan_geometry_matches_the_scene():
    scene = LuxScene(seed=2, clutter_probability=0.0)
    for _ in range(5):
        scene.step()
    scan = decode(scene.step())[0]
    xyz, h = G.scan_xyz(scan)
    p = scan.points
    # Ground hits (lower layers beyond ~24 m) lie 0.5 m below the sensor (mounting z).
    ground = p['flags'] == S.POINT_FLAG_GROUND
    assert ground.any() and set(np.unique(p['layer'][ground])) <= {0, 1}
    assert np.abs(xyz[ground, 2] + 0.5).max() < 0.05
    # Everything else lies on a wall, the glass pane or a moving box.
    segs, _ = scene.segments(scene.last_scan_time)
    solid = ~ground
    assert seg_distance(xyz[solid, :2].astype(float), segs).max() < 0.1
    # Rays through the glass pane give two echoes: the pane (transparent) then the wall.
    glass = p['flags'] == S.POINT_FLAG_TRANSPARENT
    assert glass.any() and (p['echo'][glass] == 0).all()
    behind = (p['echo'] == 1) & np.isin(p['angle_ticks'], p['angle_ticks'][glass])
    assert behind.any()
    assert (np.hypot(xyz[glass, 0], xyz[glass, 1]).min() >= 11.9)


def test_points_in_sensor_order_and_echo_numbering():
    scene = LuxScene(seed=3, clutter_probability=0.05)
    p = decode(scene.step())[0].points
    assert (np.diff(p['angle_ticks'].astype(int)) <= 0).all()        # sweep from start to end
    assert p['echo'].max() >= 1 and p['echo'].max() <= 2
    assert (p['flags'] == S.POINT_FLAG_CLUTTER).any()
    key = p['angle_ticks'].astype(int) * 16 + p['layer']
    for k in np.unique(key[p['echo'] > 0])[:20]:
        sel = key == k
        assert sorted(p['echo'][sel].tolist()) == list(range(sel.sum()))
        assert (np.diff(p['distance_cm'][sel].astype(int)) >= 0).all()


def test_mirror_side_toggles_and_scan_numbers_count():
    scene = LuxScene()
    scans = [decode(scene.step())[0] for _ in range(4)]
    assert [s.mirror_side for s in scans] == [0, 1, 0, 1]
    assert [s.scan_number for s in scans] == [0, 1, 2, 3]
    assert (scans[1].start_ntp - scans[0].start_ntp) / 2**32 == pytest.approx(0.08, abs=1e-6)


def test_tracked_objects_follow_the_truth():
    scene = LuxScene(seed=4)
    lists = []
    for _ in range(6):
        recs = decode(scene.step())
        lists.append((scene.last_scan_time, of_type(recs, O.LuxObjectList)[0]))
    t, lst = lists[-1]
    truth = {m.name: m.state(t) for m in scene.movers}
    ids = [lst.objects['id'].tolist() for _, lst in lists[1:]]
    assert all(i == ids[0] for i in ids)                               # stable track ids
    assert len(lst) >= 3
    for o, contour in zip(lst.objects, lst.contours):
        # the record holds the spec's units (cm, cm/s, deg); the truth is SI
        name = min(truth, key=lambda n: np.hypot(*(truth[n][0] - (o['reference_x'] / 100,
                                                                  o['reference_y'] / 100))))
        center, velocity, heading = truth[name]
        mover = next(m for m in scene.movers if m.name == name)
        assert (o['reference_x'], o['reference_y']) == pytest.approx(tuple(center * 100),
                                                                     abs=1)
        assert math.radians(o['box_orientation']) == pytest.approx(heading, abs=0.01)
        assert (o['box_size_x'], o['box_size_y']) == pytest.approx(
            (mover.length * 100, mover.width * 100), abs=1)
        assert o['abs_velocity_valid']                                 # age >= 3 now
        assert (o['abs_velocity_x'], o['abs_velocity_y']) == pytest.approx(
            tuple(velocity * 100), abs=1)
        assert o['classification'] == mover.classification
        assert 1 <= len(contour) <= 16 and o['contour_count'] == len(contour)
        contour = contour / 100
        corners = mover.corners(t)
        edges = np.hstack([corners, np.roll(corners, -1, axis=0)])
        assert seg_distance(contour, edges).max() < 0.1
    first = lists[0][1]
    assert not first.objects['abs_velocity_valid'].any()               # too young
    assert np.isnan(first.objects['abs_velocity_x']).all()
    assert (first.objects['classification'] == 0).all()


def test_eight_layers_alternate_mirror_sides():
    scene = LuxScene(layers=8, seed=5, clutter_probability=0.0)
    assert scene.param('DeviceType') == 0x18
    assert scene.param('BeamTilt') == pytest.approx(math.radians(1.6), abs=1e-4)
    front, rear = (decode(scene.step())[0] for _ in range(2))
    assert (front.mirror_side, rear.mirror_side) == (0, 1)
    kwargs = dict(eight_layer=True, beam_tilt_rad=scene.param('BeamTilt'))
    elev = {}
    for scan in (front, rear):
        xyz, h = G.scan_xyz(scan, **kwargs)
        p = scan.points
        ground = p['flags'] == S.POINT_FLAG_GROUND
        if ground.any():                                               # front side only
            assert np.abs(xyz[ground, 2] + 0.5).max() < 0.05          # same model both ways
        ahead = (np.abs(p['angle_ticks']) < 32) & (p['layer'] == 3) & ~ground
        elev[scan.mirror_side] = np.degrees(np.arcsin(xyz[ahead, 2] /
                                                      np.linalg.norm(xyz[ahead], axis=1)))
    assert elev[0].mean() == pytest.approx(1.2 - 1.6, abs=0.1)
    assert elev[1].mean() == pytest.approx(1.2 + 1.6, abs=0.1)
    cloud = G.scan_cloud(rear, **kwargs)
    assert set(np.unique(cloud['layer'])) == {4, 5, 6, 7}


@pytest.mark.parametrize('rate,step_ticks', [(25.0, 16), (50.0, 32)])
def test_fast_rates_have_no_objects_and_warn(rate, step_ticks):
    scene = LuxScene(rate_hz=rate, warning_period_s=1.0)
    recs = []
    for _ in range(int(rate * 1.5)):
        recs += decode(scene.step())
    assert not of_type(recs, O.LuxObjectList)
    scans = of_type(recs, S.LuxScan)
    angles = np.unique(scans[0].points['angle_ticks'])
    assert (np.diff(angles) == step_ticks).all()
    warnings = of_type(recs, E.LuxErrorsWarnings)
    assert warnings and all('W-CalcFrequency' in w.warning_names for w in warnings)


def test_occasional_warning_lasts_three_scans():
    scene = LuxScene(warning_period_s=2.0)
    found = []
    for i in range(60):                       # 4.8 s at 12.5 Hz
        for r in decode(scene.step()):
            if isinstance(r, E.LuxErrorsWarnings):
                found.append((i, r.warning_names))
    assert [i for i, _ in found] == [25, 26, 27, 50, 51, 52]
    assert found[0][1] == ['W-high_temperature'] and found[3][1] == ['W-ETHdata']


# --- scene commands ---------------------------------------------------------------------------

def reply(scene, body):
    return scene.handle_command(C.decode_command(body))


def test_get_status_and_parameters():
    scene = LuxScene()
    r = reply(scene, C.encode_get_status())
    assert r.success and r.status.firmware_version_str == '2.7.5'
    assert 30 < r.status.temperature_c < 45 and r.status.status_names[:2] == ['motor_on',
                                                                              'laser_on']
    # values in the §7.2 table's units (deg, cm), and in SI through units.parameter_to_si
    for name, value, si in (('Scan frequency', 12.5, 12.5), ('angleTicksPerRotation', 11520, 11520),
                            ('IP address', '127.0.0.1', '127.0.0.1'),
                            ('Start angle', 50.0, math.radians(50)),
                            ('SensorMounting_Z', 50.0, 0.5), ('DeviceType', 0x10, 0x10)):
        r = reply(scene, C.encode_get_parameter(name))
        assert r.success and r.parameter.value == pytest.approx(value) \
            if isinstance(value, float) else r.parameter.value == value
        assert units.parameter_to_si(C.parameter(name), r.parameter.value) == pytest.approx(si) \
            if isinstance(si, float) else r.parameter.value == si
    assert not reply(scene, C.encode_get_parameter(0x7777)).success


def test_set_parameter_rules_and_effects():
    scene = LuxScene()
    assert reply(scene, C.encode_set_parameter('Scan frequency', 25.0)).success
    assert scene.rate_hz == 25.0
    assert reply(scene, C.encode_set_parameter('Start angle', 30.0)).success
    assert reply(scene, C.encode_set_parameter('End angle', -30.0)).success
    assert reply(scene, C.encode_set_parameter('SensorMounting_X', 200)).success
    scan = decode(scene.step())[0]
    assert (scan.start_angle_ticks, scan.end_angle_ticks, scan.mounting_x_cm) == (960, -960, 200)
    for key, value in (('Scan frequency', 20.0), ('Start angle', 51.0),
                       ('ContourPointDensity', 3), ('angleTicksPerRotation', 5760),
                       ('DeviceType', 0x18)):
        r = reply(scene, C.encode_set_parameter(key, value))
        assert not r.success and r.command_id == C.SET_PARAMETER, key
    assert not reply(scene, C.encode_set_parameter(0x7777, 1, raw=True)).success
    # A refused command raises W-Command in the next 0x2030.
    warnings = of_type(decode(scene.step()), E.LuxErrorsWarnings)
    assert warnings and 'W-Command' in warnings[0].warning_names


def test_save_reset_defaults_and_reset():
    scene = LuxScene()
    reply(scene, C.encode_set_parameter('Minimum Object Age', 4))
    assert reply(scene, C.encode_save_config()).success
    reply(scene, C.encode_set_parameter('Minimum Object Age', 9))
    assert reply(scene, C.encode_reset()) is None                     # no reply (§7.1.1)
    assert scene.param('Minimum Object Age') == 4                     # saved config back
    assert reply(scene, C.encode_reset_defaults()).success
    assert scene.param('Minimum Object Age') == 0
    assert not reply(scene, C.encode_command(0x0777)).success


def test_measure_and_output_flags():
    scene = LuxScene()
    assert reply(scene, C.encode_stop_measure()).success and not scene.measuring
    assert reply(scene, C.encode_get_status()).status.scanner_status == STATUS_STOPPED
    assert reply(scene, C.encode_start_measure()).success and scene.measuring
    reply(scene, C.encode_set_parameter('Data Output Flag', OUT_SCAN | OUT_VEHICLE))
    assert [type(r) for r in decode(scene.step())] == [O.LuxObjectList]


def test_set_ntp_time_sets_the_sensor_clock():
    scene = LuxScene()
    scene.step()
    sec, frac = unix_ns_to_ntp(1_800_000_000 * 10**9)
    assert reply(scene, C.encode_set_ntp_time(sec, frac)).success
    scan = decode(scene.step())[0]
    assert scan.start_ns == pytest.approx(1_800_000_000 * 10**9, abs=1e3)


# --- TCP server -----------------------------------------------------------------------------

class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=5)
        self.framer = make_framer()
        self.records = []       # (header, record)
        self.raw = []           # complete messages as received

    def send(self, body):
        self.sock.sendall(ibeo.encode_message(0x2010, body))

    def _read(self, wait):
        """One read of at most ``wait`` seconds; its frames are decoded and kept."""
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return
        assert data, 'server closed the connection'
        for ev in self.framer.feed(data):
            assert isinstance(ev, Frame), ev
            self.raw.append(ev.header + ev.body)
            self.records.append(ibeo.decode_frame(ev))

    def pump(self, until, timeout=5.0):
        deadline = time.monotonic() + timeout
        while not until(self):
            left = deadline - time.monotonic()
            assert left > 0, f'timeout; got {len(self.records)} records'
            self._read(min(left, 0.2))

    def count(self, cls):
        return sum(isinstance(r, cls) for _, r in self.records)

    def replies(self):
        return [r for _, r in self.records if isinstance(r, C.LuxReply)]

    def ask(self, body, timeout=5.0):
        n = len(self.replies())
        self.send(body)
        self.pump(lambda c: len(c.replies()) > n, timeout)
        return self.replies()[n]

    def drain(self, seconds):
        """Read whatever arrives for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self._read(min(left, 0.05))

    def close(self):
        self.sock.close()


@pytest.fixture
def server():
    srv = LuxServer(LuxScene(seed=9), port=0).start()
    yield srv
    srv.stop()


def test_tcp_streams_scans_and_answers_commands(server):
    assert server.port > 0 and server.host == '127.0.0.1'
    c = Client(server.port)
    try:
        c.pump(lambda c: c.count(S.LuxScan) >= 3)
        assert c.count(O.LuxObjectList) >= 2 and c.count(V.LuxVehicleState) >= 2
        status = c.ask(C.encode_get_status())
        assert status.success and status.status.fpga_version == 0x9604
        port = c.ask(C.encode_get_parameter('TCP Port'))
        assert port.parameter.value == server.port
        assert c.ask(C.encode_set_parameter('Start angle', 20.0)).success
        n = c.count(S.LuxScan)
        c.pump(lambda c: c.count(S.LuxScan) >= n + 2)
        assert [r for _, r in c.records if isinstance(r, S.LuxScan)][-1].start_angle_ticks == 640
        assert not c.ask(C.encode_set_parameter('Scan frequency', 3.0)).success
        assert not c.ask(C.encode_command(0x0555)).success
        # Stop measure really stops the stream; start measure resumes it.
        stop = c.ask(C.encode_stop_measure())
        assert stop.success and stop.command_id == C.STOP_MEASURE
        c.drain(0.2)                     # anything already in flight
        n = c.count(S.LuxScan)
        c.drain(0.4)
        assert c.count(S.LuxScan) == n
        assert c.ask(C.encode_start_measure()).success
        c.pump(lambda c: c.count(S.LuxScan) >= n + 2)
        assert c.ask(C.encode_set_ntp_time_unix_ns(1_900_000_000 * 10**9)).success
    finally:
        c.close()
    assert server.commands_received >= 8


def test_tcp_two_clients_get_the_same_stream(server):
    a, b = Client(server.port), Client(server.port)
    try:
        a.pump(lambda c: c.count(S.LuxScan) >= 3)
        b.pump(lambda c: c.count(S.LuxScan) >= 3)
        na = {r.scan_number for _, r in a.records if isinstance(r, S.LuxScan)}
        nb = {r.scan_number for _, r in b.records if isinstance(r, S.LuxScan)}
        assert na & nb
        # A reply goes only to the client that asked.
        assert a.ask(C.encode_get_status()).success
        assert not b.replies()
    finally:
        a.close()
        b.close()


def test_tcp_garbage_from_client_is_survived(server):
    c = Client(server.port)
    try:
        c.sock.sendall(b'hello\xaf\xfe' + ibeo.encode_message(0x2010, b'\x01'))
        r = c.ask(C.encode_get_status())
        assert r.success
        assert server.bad_input >= 1
    finally:
        c.close()


def test_replay_of_synthetic_messages_is_paced():
    scene = LuxScene()
    msgs = [m.to_bytes() for _ in range(6) for m in scene.step()]
    delays = replay_delays(msgs, speed=2.0)
    # Scans stamp their start, the other messages the scan end (+24.4 ms); speed 2 halves.
    assert delays[0] == 0 and sum(delays) == pytest.approx((5 * 0.08 + 0.08 * 3520 / 11520) / 2,
                                                           abs=1e-6)
    with LuxServer(port=0, replay=msgs, replay_speed=2.0) as srv:
        c = Client(srv.port)
        t0 = time.monotonic()
        c.pump(lambda c: len(c.raw) == len(msgs))
        assert time.monotonic() - t0 > 0.18
        assert c.raw == msgs
        c.close()


def test_replay_real_captures_end_to_end():
    paths = [SAMPLES / n for n in ('20120921-200352_record.hexlog',
                                   '20120921-200644_record.hexlog')]
    if not all(p.exists() for p in paths):
        pytest.skip('../shared LD-MRS samples not present')
    msgs = load_messages(paths[0]) + load_messages(paths[1])
    assert len(msgs) == 200
    with LuxServer(port=0, replay=msgs, replay_speed=0) as srv:
        c = Client(srv.port)
        c.pump(lambda c: len(c.raw) == 200, timeout=10)
        assert c.raw == msgs
        assert c.count(S.LuxScan) == 71 and c.count(E.LuxErrorsWarnings) == 129
        # Commands are still answered during a replay.
        assert c.ask(C.encode_get_parameter('Scan frequency')).parameter.value == 12.5
        c.close()


def test_unpaced_looping_replay_still_answers_commands_and_serves_every_client():
    """--replay-speed 0 --loop (docs/ibeo.md's example) streams without end: the server still
    reads commands and accepts a second client between its passes over the recording."""
    scene = LuxScene()
    msgs = [m.to_bytes() for _ in range(2) for m in scene.step()]
    with LuxServer(port=0, replay=msgs, replay_speed=0, replay_loop=True) as srv:
        a = Client(srv.port)
        a.pump(lambda c: len(c.raw) > len(msgs))          # looping
        assert a.ask(C.encode_start_measure()).success
        b = Client(srv.port)
        b.pump(lambda c: len(c.raw) > len(msgs))
        assert b.raw[:len(msgs)] == msgs
        a.close()
        b.close()


def test_replay_pauses_on_stop_measure():
    scene = LuxScene()
    msgs = [m.to_bytes() for _ in range(40) for m in scene.step()]
    with LuxServer(port=0, replay=msgs, replay_speed=1.0) as srv:
        c = Client(srv.port)
        c.pump(lambda c: c.count(S.LuxScan) >= 2)
        assert c.ask(C.encode_stop_measure()).success
        c.drain(0.2)
        n = len(c.raw)
        c.drain(0.3)
        assert len(c.raw) == n
        assert c.ask(C.encode_start_measure()).success
        c.pump(lambda c: len(c.raw) > n + 2)
        c.close()


def test_load_messages_binary_stream(tmp_path):
    scene = LuxScene()
    msgs = [m.to_bytes() for _ in range(3) for m in scene.step()]
    (tmp_path / 'x.idc').write_bytes(b'junk' + b''.join(msgs))
    assert load_messages(tmp_path / 'x.idc') == msgs
    (tmp_path / 'x.hexlog').write_text('\n'.join(m.hex().upper() for m in msgs) + '\n')
    assert load_messages(tmp_path / 'x.hexlog') == msgs


def test_cli_runs_for_a_duration(capsys):
    t0 = time.monotonic()
    assert main(['--port', '0', '--duration', '0.3', '--layers', '8', '--rate', '25']) == 0
    assert 0.25 < time.monotonic() - t0 < 3
    assert 'LUX emulator on 127.0.0.1:' in capsys.readouterr().out


def test_cli_ignores_the_ros_args_that_ros2_launch_appends(capsys):
    # launch/ibeo.launch.py (sim:=true) starts ibeo_lux_sim as a launch_ros Node
    assert main(['--port', '0', '--duration', '0.05',
                     '--ros-args', '-r', '__node:=ibeo_lux_sim']) == 0
    assert 'LUX emulator on 127.0.0.1:' in capsys.readouterr().out
