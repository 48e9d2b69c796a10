"""The built-in RflySim sender: a consistent scene, and real UDP on 127.0.0.1."""
from __future__ import annotations

import math
import socket
import time

import pytest

from ros_sim_bridge.rflysim import codec
from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.rflysim.emulator import cli, scene as sim_scene, server

from conftest import free_udp_ports

G = 9.80665
IDS = [1, 2, 3]
TIMES = [0.0, 0.37, 3.3, 7.77, 12.5, 19.9, 41.0]


@pytest.fixture
def scene():
    return sim_scene.Scene(IDS, gps_origin=(31.25, 121.5, 12.0))


def quat_to_matrix(q):
    w, x, y, z = q
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
            (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
            (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))


def euler_matrix(roll, pitch, yaw):
    """Z-Y-X: R = Rz(yaw)·Ry(pitch)·Rx(roll), written out independently of the codec."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                              math.cos(yaw), math.sin(yaw))
    return ((cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr),
            (sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr),
            (-sp, cp * sr, cp * cr))


def diff(f, t, h=1e-4):
    a, b = f(t + h), f(t - h)
    return tuple((x - y) / (2 * h) for x, y in zip(a, b))


@pytest.mark.parametrize('t', TIMES)
@pytest.mark.parametrize('cid', IDS)
def test_quaternion_matches_euler(scene, cid, t):
    s = scene.state(cid, t)
    assert math.isclose(math.sqrt(sum(v * v for v in s.quat_wxyz)), 1.0, abs_tol=1e-12)
    m1, m2 = quat_to_matrix(s.quat_wxyz), euler_matrix(*s.euler)
    for i in range(3):
        for j in range(3):
            assert m1[i][j] == pytest.approx(m2[i][j], abs=1e-9)


@pytest.mark.parametrize('t', TIMES)
@pytest.mark.parametrize('cid', IDS)
def test_velocity_is_the_derivative_of_position(scene, cid, t):
    s = scene.state(cid, t)
    v = diff(lambda tt: scene.state(cid, tt).pos_ned, t)
    assert s.vel_ned == pytest.approx(v, abs=1e-6)
    assert math.hypot(*s.vel_ned[:2]) > 1.0   # really flying


@pytest.mark.parametrize('t', TIMES)
@pytest.mark.parametrize('cid', IDS)
def test_body_acceleration_is_specific_force(scene, cid, t):
    """R·acc_frd + g = dv/dt (accelerometer reading, FRD body)."""
    s = scene.state(cid, t)
    a = diff(lambda tt: scene.state(cid, tt).vel_ned, t)
    r = quat_to_matrix(s.quat_wxyz)
    world = tuple(sum(r[i][j] * s.acc_frd[j] for j in range(3)) for i in range(3))
    assert (world[0], world[1], world[2] + G) == pytest.approx(a, abs=1e-5)
    # a multicopter: the force is along body −z only
    assert abs(s.acc_frd[0]) < 1e-9 and abs(s.acc_frd[1]) < 1e-9 and s.acc_frd[2] < -5


@pytest.mark.parametrize('t', TIMES)
@pytest.mark.parametrize('cid', IDS)
def test_body_rates_match_euler_rates(scene, cid, t):
    s = scene.state(cid, t)

    def euler(tt):  # unwrap yaw around the current value
        e = scene.state(cid, tt).euler
        return (e[0], e[1], s.euler[2] + math.remainder(e[2] - s.euler[2], 2 * math.pi))
    droll, dpitch, dyaw = diff(euler, t, 1e-5)
    roll, pitch, _ = s.euler
    p = droll - dyaw * math.sin(pitch)
    q = dpitch * math.cos(roll) + dyaw * math.sin(roll) * math.cos(pitch)
    r = -dpitch * math.sin(roll) + dyaw * math.cos(roll) * math.cos(pitch)
    assert s.rate_frd == pytest.approx((p, q, r), abs=1e-5)


@pytest.mark.parametrize('t', TIMES)
def test_gps_follows_ned(scene, t):
    origin = scene.gps_origin
    for cid in IDS:
        s = scene.state(cid, t)
        lat, lon, alt = s.pos_gps
        assert alt == pytest.approx(origin[2] - s.pos_ned[2], abs=1e-9)
        # independent: spherical-earth distance to the origin vs the NED distance (0.5 %)
        p1, p2 = math.radians(origin[0]), math.radians(lat)
        dl = math.radians(lon - origin[1])
        hav = (math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2)
        d = 2 * 6371008.8 * math.asin(math.sqrt(hav))
        assert d == pytest.approx(math.hypot(*s.pos_ned[:2]), rel=5e-3)
        # north → latitude, east → longitude
        assert math.copysign(1, lat - origin[0]) == math.copysign(1, s.pos_ned[0])
        assert math.copysign(1, lon - origin[1]) == math.copysign(1, s.pos_ned[1])
        back = sim_scene.gps_to_ned(origin, s.pos_gps)
        assert back == pytest.approx(s.pos_ned, abs=1e-6)


def test_gps_order_parameter():
    a = sim_scene.Scene([1], gps_order='lat_lon_alt').state(1, 2.0).pos_gps
    b = sim_scene.Scene([1], gps_order='lon_lat_alt').state(1, 2.0).pos_gps
    assert (b[0], b[1], b[2]) == (a[1], a[0], a[2])


def test_vehicles_differ(scene):
    states = scene.states(4.0)
    alts = sorted(-s.pos_ned[2] for s in states)
    assert alts[1] - alts[0] > 3 and alts[2] - alts[1] > 3
    assert {scene.paths[c].shape for c in IDS} == {'circle', 'figure8'}
    for s in states:
        assert s.runned_time == 4.0 and s.vehicle_type == 3
        assert all(3000 < v < 9000 for v in s.motor_rpm[:4]) and s.motor_rpm[4:] == (0.0,) * 4


def test_scene_is_pure(scene):
    assert scene.state(2, 5.5) == sim_scene.Scene(IDS, gps_origin=(31.25, 121.5, 12.0)).state(2, 5.5)


def test_collisions_are_symmetric_and_occasional(scene):
    seen = []
    for k in range(0, 4000):
        t = k * 0.01
        for cid in IDS:
            target = scene.collision_target(cid, t)
            if target is not None:
                assert scene.collision_target(target, t) == cid
                seen.append((t, cid, target))
    assert 0 < len(seen) < 0.1 * 4000 * len(IDS)
    assert {(c, tg) for _, c, tg in seen} >= {(1, 2), (2, 1), (2, 3), (3, 1)}
    assert sim_scene.Scene([1]).collision_target(1, 5.1) is None
    assert sim_scene.Scene(IDS, collision_period=0).collision_target(1, 5.1) is None


@pytest.mark.parametrize('form', sorted(server.FORMS))
def test_datagrams_decode_in_every_form(scene, form):
    sender = server.Sender(scene, form=form, rate=100.0)
    try:
        kinds = {}
        for step in range(0, 700):
            for cid, port, kind, data in sender.datagrams(step):
                assert port == codec.truth_port(cid)
                rec = codec.decode(data, expected_copter_id=cid)
                kinds[kind] = kinds.get(kind, 0) + 1
                if kind == 'truth':
                    assert rec.form == server.FORMS[form]
                    want = scene.state(cid, step / 100.0)
                    assert rec.pos_ned == pytest.approx(want.pos_ned, abs=1e-4)
                    assert rec.pos_gps[2] == pytest.approx(want.pos_gps[2], abs=1e-3)
                    if form == 'legacy200':
                        assert rec.collision_target == want.collision_target
                elif kind == 'crash':
                    assert isinstance(rec, codec.CrashNotice) and rec.collided
                    assert rec.target_id == scene.collision_target(cid, step / 100.0)
                else:
                    assert isinstance(rec, codec.GpsOrigin)
                    assert rec.pos_gps == (31.25, 121.5, 12.0)
        assert kinds['truth'] == 700 * 3
        assert kinds['gps_origin'] == 7 * 3          # t = 0, 1, …, 6 s
        assert kinds['crash'] == 2                   # event at 5 s: vehicles 1 and 2
    finally:
        sender.close()


def test_sender_rejects_bad_arguments(scene):
    with pytest.raises(ValueError):
        server.Sender(scene, form='nope')
    with pytest.raises(ValueError):
        server.Sender(scene, rate=0)
    with pytest.raises(CodecError):
        sim_scene.Scene([0])


# --- real UDP on 127.0.0.1 --------------------------------------------------------------------

class Receivers:
    """Plain sockets on base + 2·(i − 1) for CopterIDs 1..3."""

    def __init__(self, base):
        self.socks = {}
        for cid in IDS:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            s.bind(('127.0.0.1', base + 2 * (cid - 1)))
            s.settimeout(2.0)
            self.socks[cid] = s

    def drain(self, cid, count):
        """Decoded records until ``count`` truth states arrived on CopterID's port."""
        records = []
        truth = 0
        while truth < count:
            data = self.socks[cid].recv(2048)
            rec = codec.decode(data, expected_copter_id=cid)
            records.append(rec)
            truth += isinstance(rec, codec.TruthState)
        return records

    def close(self):
        for s in self.socks.values():
            s.close()


@pytest.fixture
def udp():
    base = free_udp_ports(3, step=2)
    rx = Receivers(base)
    yield base, rx
    rx.close()


@pytest.mark.parametrize('form', sorted(server.FORMS))
def test_udp_three_vehicles(udp, form):
    base, rx = udp
    scene = sim_scene.Scene(IDS)
    with server.Sender(scene, base_port=base, form=form, rate=200.0) as sender:
        sent = sender.send_packets(20)
        assert sender.sent == {1: 20, 2: 20, 3: 20}
        assert sender.extras['gps_origin'] == 3 and sender.errors == 0
        assert sent == 60 + 3
        assert sender.bytes_sent > 0
    for cid in IDS:
        records = rx.drain(cid, 20)
        origin = [r for r in records if isinstance(r, codec.GpsOrigin)]
        truth = [r for r in records if isinstance(r, codec.TruthState)]
        assert len(origin) == 1 and origin[0].pos_gps == sim_scene.DEFAULT_GPS_ORIGIN
        assert [round(s.runned_time * 200) for s in truth] == list(range(20))
        assert all(s.copter_id == cid and s.form == server.FORMS[form] for s in truth)
        want = scene.state(cid, truth[-1].runned_time)
        assert truth[-1].pos_ned == pytest.approx(want.pos_ned, abs=1e-4)


def test_udp_unpaced_prepared(udp):
    base, rx = udp
    with server.Sender(sim_scene.Scene(IDS), base_port=base, rate=100.0, origin_period=0) as sender:
        sender.prepare(50)
        sender.send_packets(50, paced=False)
        assert sender.total_truth == 150
    for cid in IDS:
        assert len(rx.drain(cid, 50)) == 51  # + the GPS origin at step 0


def test_udp_run_for_a_duration(udp):
    base, rx = udp
    with server.Sender(sim_scene.Scene(IDS), base_port=base, rate=50.0) as sender:
        t0 = time.monotonic()
        sender.run(0.3)
        elapsed = time.monotonic() - t0
        assert sender.sent == {1: 15, 2: 15, 3: 15}
    assert 0.2 < elapsed < 2.0
    for cid in IDS:
        rx.drain(cid, 15)


def test_cli_main(udp, capsys):
    base, rx = udp
    rc = cli.main(['--ids', '1,2,3', '--rate', '100', '--duration', '0.1', '--base-port',
                   str(base), '--form', 'legacy200', '--gps-origin', '47.5,8.25,400'])
    assert rc == 0
    out = capsys.readouterr().out
    assert 'sent 30 truth packets' in out
    for cid in IDS:
        records = rx.drain(cid, 10)
        assert isinstance(records[0], codec.GpsOrigin)
        assert records[0].pos_gps == (47.5, 8.25, 400.0)
        assert all(r.form == codec.FORM_NETDATASHORT_LEGACY for r in records[1:])


def test_cli_vehicles_and_errors(udp, capsys):
    base, rx = udp
    assert cli.main(['--vehicles', '3', '--rate', '100', '--duration', '0.05', '--quiet',
                     '--base-port', str(base), '--form', 'simple112']) == 0
    assert capsys.readouterr().out == ''
    for cid in IDS:
        assert rx.drain(cid, 5)[-1].form == codec.FORM_SIMPLE_TIME
    with pytest.raises(SystemExit):
        cli.main(['--ids', '1,x'])
    with pytest.raises(SystemExit):
        cli.main(['--gps-origin', '1,2'])
    for bad in (['--vehicles', '0'], ['--rate', '-1']):
        with pytest.raises(SystemExit) as stop:
            cli.main([*bad, '--duration', '0.01'])
        assert stop.value.code == 2


def test_cli_ignores_the_ros_args_that_ros2_launch_appends():
    from ros_sim_bridge.core.cli import strip_ros_args
    assert strip_ros_args(['--ids', '1,2', '--ros-args', '-r', '__node:=x', '--params-file', 'f']) \
        == ['--ids', '1,2']
    assert strip_ros_args(['--ros-args', '-p', 'a:=1', '--', '--rate', '5']) == ['--rate', '5']
    assert cli.main(['--ids', '[1]', '--duration', '0.05', '--rate', '20', '--quiet',
                             '--ros-args', '-r', '__node:=rflysim_sim']) == 0


@pytest.mark.parametrize('args, option', [
    (['--duration', '-1'], '--duration'),          # ran for ever (as 0 does) before
    (['--duration', 'nan'], '--duration'),
    (['--rate', 'nan'], '--rate'), (['--rate', '0'], '--rate'),
    (['--origin-period', '-1'], '--origin-period'),
    (['--collision-period', 'inf'], '--collision-period'),
    (['--vehicles', '300'], '--vehicles')])
def test_installed_sender_bad_argument_is_one_line_and_exit_2(args, option):
    """The installed rflysim_sim, as a user runs it: one line naming the argument, exit 2."""
    import os
    import subprocess
    from ros_sim_bridge.tools.launcher import executable
    proc = subprocess.run([str(executable('rflysim_sim')), *args], capture_output=True,
                          text=True, timeout=30, env={**os.environ, 'PYTHONUNBUFFERED': '1'})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert 'Traceback' not in out
    assert [line for line in out.splitlines() if line.strip()] == [
        line for line in out.splitlines() if line.startswith(f'rflysim_sim: {option} ')], out
