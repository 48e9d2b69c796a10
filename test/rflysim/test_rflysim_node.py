"""rflysim_truth end to end: real UDP on 127.0.0.1 in, real DDS out."""
import math
import signal
import socket
import struct

import pytest
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.rflysim import codec
from ros_sim_bridge.core import frames
from ros_sim_bridge.rflysim.emulator.scene import Scene
from ros_sim_bridge.rflysim.emulator.server import Sender
from ros_sim_bridge.rflysim.ros import conversions
from ros_sim_bridge.msg import RflySimCollision, RflySimTruth
from ros_sim_bridge.rflysim.ros.node import RflySimTruthNode
from ros_sim_bridge.ros.qos import LATCHED
from ros_sim_bridge.tools.launcher import NodeProcess, config_file

from conftest import UdpSender, free_udp_ports, wait_until


def sout2simulator(copter_id=1, *, pos=(10.0, 20.0, -5.0), vel=(1.0, 2.0, -0.5),
                   euler=(0.0, 0.0, 0.0), quat=(1.0, 0.0, 0.0, 0.0), acc=(0.1, 0.2, -9.8),
                   rate=(0.01, 0.02, 0.03), gps=(40.1, 116.2, 55.5), t=12.5):
    """A 168-byte SOut2Simulator built field by field at the SUPPLEMENT §2.2 offsets."""
    b = bytearray(168)
    struct.pack_into('<4i', b, 0, 123456789, copter_id, 3, 0)
    struct.pack_into('<3f', b, 16, *vel)
    struct.pack_into('<3f', b, 28, *euler)
    struct.pack_into('<4f', b, 40, *quat)
    struct.pack_into('<8f', b, 56, *[1000.0 + i for i in range(8)])
    struct.pack_into('<3f', b, 88, *acc)
    struct.pack_into('<3f', b, 100, *rate)
    struct.pack_into('<d', b, 112, t)
    struct.pack_into('<3d', b, 120, *pos)
    struct.pack_into('<3d', b, 144, *gps)
    return bytes(b)


@pytest.fixture
def node_ports(ros):
    def start(ids=(1,), **params):
        base = free_udp_ports(max(ids), step=2)
        node = ros.start(RflySimTruthNode, {'copter_ids': list(ids), 'base_port': base,
                                            'diagnostics_period': 0.2, **params})
        ports = {i: codec.truth_port(i, base) for i in ids}
        return node, base, ports
    return start


def test_known_pose_in_every_view(ros, node_ports):
    node, base, ports = node_ports((1,))
    odom = ros.collect(Odometry, 'rflysim/vehicle_1/odom')
    imu = ros.collect(Imu, 'rflysim/vehicle_1/imu')
    fix = ros.collect(NavSatFix, 'rflysim/vehicle_1/fix')
    truth = ros.collect(RflySimTruth, 'rflysim/vehicle_1/truth')
    tf = ros.collect(TFMessage, '/tf')
    # Heading east (yaw_ned = 90°), level: ENU yaw 0, i.e. identity attitude.
    q_east = (math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))
    UdpSender().send_to(ports[1], sout2simulator(euler=(0.0, 0.0, math.pi / 2), quat=q_east))

    o = odom.wait_for(1)[0]
    assert o.header.frame_id == 'map' and o.child_frame_id == 'vehicle_1/base_link'
    p = o.pose.pose.position
    assert (p.x, p.y, p.z) == pytest.approx((20.0, 10.0, 5.0))        # (e, n, -d)
    q = o.pose.pose.orientation
    assert (q.w, q.x, q.y, q.z) == pytest.approx((1.0, 0.0, 0.0, 0.0), abs=1e-6)
    v = o.twist.twist.linear  # NED (1, 2, -0.5) heading east: forward = east = 2, left = north = 1
    assert (v.x, v.y, v.z) == pytest.approx((2.0, 1.0, 0.5), abs=1e-6)
    w = o.twist.twist.angular
    assert (w.x, w.y, w.z) == pytest.approx((0.01, -0.02, -0.03), abs=1e-6)

    i = imu.wait_for(1)[0]
    a = i.linear_acceleration
    assert (a.x, a.y, a.z) == pytest.approx((0.1, -0.2, 9.8), abs=1e-5)
    assert i.header.frame_id == 'vehicle_1/base_link'

    f = fix.wait_for(1)[0]
    assert (f.latitude, f.longitude, f.altitude) == (40.1, 116.2, 55.5)

    t = truth.wait_for(1)[0]
    assert list(t.pos_ned) == [10.0, 20.0, -5.0] and t.runned_time == 12.5
    assert t.form == RflySimTruth.FORM_SOUT2SIMULATOR and t.has_quaternion
    assert list(t.motor_rpm) == [1000.0 + k for k in range(8)]
    assert not t.collided and t.collision_target == -1

    tr = tf.wait_for(1)[0].transforms[0]
    assert (tr.header.frame_id, tr.child_frame_id) == ('map', 'vehicle_1/base_link')
    assert tr.transform.translation.x == pytest.approx(20.0)


def test_several_vehicles_all_packets_arrive_and_match_the_scene(ros, node_ports):
    ids = (1, 2, 3)
    node, base, ports = node_ports(ids)
    truths = {i: ros.collect(RflySimTruth, f'rflysim/vehicle_{i}/truth', 1000) for i in ids}
    odoms = {i: ros.collect(Odometry, f'rflysim/vehicle_{i}/odom', 1000) for i in ids}
    scene = Scene(ids)
    with Sender(scene, base_port=base, rate=200.0, crash_notices=False) as sender:
        sender.send_packets(100)
    for i in ids:
        got = truths[i].wait_for(100, timeout=10)
        assert len(got) == 100 and all(m.copter_id == i for m in got)
        odom = odoms[i].wait_for(100, timeout=10)
        # position of a scene time in ENU equals the sender's NED converted
        for m in (got[0], got[57], got[99]):
            state = scene.state(i, m.runned_time)
            assert list(m.pos_ned) == pytest.approx(state.pos_ned)
        last = odom[-1].pose.pose.position
        expect = frames.ned_to_enu(scene.state(i, got[-1].runned_time).pos_ned)
        assert (last.x, last.y, last.z) == pytest.approx(tuple(expect))


def test_bad_packets_are_counted_and_valid_ones_around_them_all_arrive(ros, node_ports):
    node, base, ports = node_ports((1, 2))
    truth = ros.collect(RflySimTruth, 'rflysim/vehicle_1/truth', 100)
    tx = UdpSender()
    good = [sout2simulator(t=float(k)) for k in range(10)]
    bad_checksum = bytearray(good[0])
    struct.pack_into('<i', bad_checksum, 0, 987654321)
    bad = [good[0][:100],                                   # short: unknown size
           good[0] + b'\x00' * 200,                         # long
           bytes(bad_checksum),                             # wrong checksum
           sout2simulator(copter_id=2),                     # another vehicle's packet
           bytes(range(256))[:168],                         # garbage of a valid size
           b'\x00' * 5]                                     # tiny
    for k in range(10):
        tx.send_to(ports[1], good[k])
        if k < len(bad):
            tx.send_to(ports[1], bad[k])
    got = truth.wait_for(10)
    assert sorted(m.runned_time for m in got) == [float(k) for k in range(10)]
    values = ros.diagnostics('vehicle 1', lambda v: v.get('decode_errors') == '6')
    assert values['packets'] == '16'
    assert values['errors.bad_checksum'] == '2'      # wrong checksum + garbage
    assert values['errors.wrong_source'] == '1'
    assert values['errors.unknown_layout'] == '1'
    assert values['errors.oversized'] == '1' and values['errors.truncated'] == '1'
    assert 'CopterID' in values['last_error'] or values['last_error']
    # the other vehicle's port was untouched
    other = ros.diagnostics('vehicle 2', lambda v: True)
    assert other['decode_errors'] == '0'


def test_other_forms_crash_notice_and_map_origin(ros, node_ports):
    node, base, ports = node_ports((1,))
    coll = ros.collect(RflySimCollision, 'rflysim/vehicle_1/collision')
    imu = ros.collect(Imu, 'rflysim/vehicle_1/imu')
    odom = ros.collect(Odometry, 'rflysim/vehicle_1/odom')
    truth = ros.collect(RflySimTruth, 'rflysim/vehicle_1/truth')
    tx = UdpSender()
    # legacy netDataShort: tg = 7 (collided with vehicle 7), len 152, payload without checksum
    legacy = bytearray(200)
    struct.pack_into('<2i', legacy, 0, 7, 152)
    struct.pack_into('<2i', legacy, 8, 1, 3)
    struct.pack_into('<d', legacy, 16, 3.25)
    struct.pack_into('<3f', legacy, 36, 1.0, 2.0, -3.0)   # PosE (float on this wire)
    struct.pack_into('<4f', legacy, 60, 1.0, 0.0, 0.0, 0.0)
    struct.pack_into('<3d', legacy, 136, 40.0, 116.0, 50.0)
    tx.send_to(ports[1], bytes(legacy))
    c = coll.wait_for(1)[0]
    assert (c.copter_id, c.target_id) == (1, 7)
    t = truth.wait_for(1)[0]
    assert t.form == RflySimTruth.FORM_NETDATASHORT_LEGACY and t.collided and t.collision_target == 7
    assert list(t.pos_ned) == [1.0, 2.0, -3.0] and t.runned_time == 3.25

    # SimpleTime: no rates/acceleration → the Imu says so (covariance[0] = -1)
    simple = bytearray(112)
    struct.pack_into('<6i', simple, 0, 1234567891, 1, 3, 401234567, 1161234567, 55500)
    struct.pack_into('<3f', simple, 68, 0.0, 0.0, 0.0)
    struct.pack_into('<3d', simple, 80, 0.0, 0.0, -1.0)
    struct.pack_into('<d', simple, 104, 9.0)
    tx.send_to(ports[1], bytes(simple))
    i = imu.wait_for(2)[1]
    assert i.angular_velocity_covariance[0] == -1.0 and i.linear_acceleration_covariance[0] == -1.0
    # ... and the Odometry: its angular twist is unknown (huge variance on the angular diagonal,
    # 6×6 row-major: elements 21, 28, 35), not an exact zero; the rest stays exact (zero)
    legacy_odom, simple_odom = odom.wait_for(2)[:2]
    assert list(legacy_odom.twist.covariance) == [0.0] * 36        # the legacy form has rates
    cov = list(simple_odom.twist.covariance)
    assert [cov[k] for k in (21, 28, 35)] == [conversions.UNKNOWN_VARIANCE] * 3
    assert conversions.UNKNOWN_VARIANCE >= 1e6
    assert [v for k, v in enumerate(cov) if k not in (21, 28, 35)] == [0.0] * 33
    assert list(simple_odom.pose.covariance) == [0.0] * 36
    t = truth.wait_for(1, where=lambda m: m.form == RflySimTruth.FORM_SIMPLE_TIME)[-1]
    assert t.pos_gps[0] == pytest.approx(40.1234567) and t.pos_gps[2] == pytest.approx(55.5)
    assert not t.has_body_motion

    # crash notice (12 bytes) and the map's GPS origin (32 bytes, latched)
    tx.send_to(ports[1], struct.pack('<3i', 1234567890, 1, 4))
    assert coll.wait_for(2)[1].target_id == 4
    tx.send_to(ports[1], struct.pack('<2i3d', 1234567890, 1, 39.9, 116.3, 40.0))
    late = ros.collect(NavSatFix, 'rflysim/map_origin', LATCHED)  # subscribes after the fact
    o = late.wait_for(1)[0]
    assert (o.latitude, o.longitude, o.altitude) == (39.9, 116.3, 40.0)


def test_installed_executable_with_params_file(ros):
    """The node as `ros2 run` starts it: its own process, config/rflysim.yaml plus overrides."""
    base = free_udp_ports(2, step=2)
    odom = ros.collect(Odometry, 'rflysim/vehicle_2/odom', 100, matched=False)
    with NodeProcess('rflysim_truth', params_file=config_file('rflysim.yaml'),
                     parameters={'copter_ids': [1, 2], 'base_port': base}, quiet=True) as proc:
        with Sender(Scene([1, 2]), base_port=base, rate=50.0) as sender:
            def sent_and_arrived():
                sender.send_packets(1)
                return len(odom.messages) >= 5
            assert wait_until(sent_and_arrived, timeout=20, interval=0.05)
        assert proc.running()
    assert proc.proc.returncode == 0


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize('sig, preexec', [
    (signal.SIGINT, None),             # Ctrl-C, and the first thing ros2 launch sends
    (signal.SIGTERM, None),            # ros2 launch after its SIGINT timeout, docker stop
    (signal.SIGINT, _ignore_sigint),   # a background job of a script inherits SIGINT ignored
], ids=['sigint', 'sigterm', 'sigint-from-background-job'])
def test_node_stops_cleanly_on_sigint_and_sigterm(ros, sig, preexec):
    """The runner closes the node and exits 0 on either signal, as rclpy's own handler would
    (a default SIGTERM would kill it mid-publish; an inherited SIG_IGN would ignore Ctrl-C)."""
    import subprocess

    from ros_sim_bridge.tools.launcher import executable, ros_args
    base = free_udp_ports(1)
    odom = ros.collect(Odometry, 'rflysim/vehicle_1/odom', 100, matched=False)
    proc = subprocess.Popen([str(executable('rflysim_truth')),
                             *ros_args(parameters={'base_port': base})],
                            preexec_fn=preexec, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        with Sender(Scene([1]), base_port=base, rate=50.0) as sender:
            def running():
                sender.send_packets(1)
                return len(odom.messages) >= 2
            assert wait_until(running, timeout=20, interval=0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and 'Traceback' not in err, err


@pytest.mark.parametrize('name, value', [('receive_buffer_bytes', -5),
                                         ('receive_buffer_bytes', 0), ('base_port', 70000)])
def test_bad_value_is_one_fatal_line_and_exit_code_1(name, value):
    """The installed rflysim_truth: receive_buffer_bytes -5 was accepted silently."""
    import subprocess

    from ros_sim_bridge.tools.launcher import executable, ros_args
    out = subprocess.run([str(executable('rflysim_truth')),
                          *ros_args(parameters={name: value})],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    lines = [line for line in out.stderr.splitlines() if 'cannot start' in line]
    assert len(lines) == 1 and 'FATAL' in lines[0] and str(value) in lines[0], out.stderr
    assert 'Traceback' not in out.stderr


def test_port_in_use_is_one_clear_error_and_exit_code_1():
    import subprocess

    from ros_sim_bridge.tools.launcher import executable, ros_args
    base = free_udp_ports(1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(('127.0.0.1', base))
        out = subprocess.run([str(executable('rflysim_truth')),
                              *ros_args(parameters={'base_port': base})],
                             capture_output=True, text=True, timeout=30)
    assert out.returncode == 1
    assert f'cannot bind UDP 127.0.0.1:{base}' in out.stderr and 'Traceback' not in out.stderr
