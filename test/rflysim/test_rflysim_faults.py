"""rflysim_truth under faults, through real UDP sockets and DDS (issue #10).

Datagrams are built field by field at the SUPPLEMENT §2.2 offsets (SOut2Simulator, 168 bytes).
"""
import ctypes
import math
import struct
import random
import threading
import time

import pytest

from ros_sim_bridge.msg import RflySimTruth
from ros_sim_bridge.rflysim import codec
from ros_sim_bridge.rflysim.ros import conversions
from ros_sim_bridge.rflysim.ros.node import RflySimTruthNode

from conftest import UdpSender, free_udp_ports, wait_until


def truth_168(copter_id=1, t=1.0, pos=(1.0, 2.0, -3.0)):
    """SOut2Simulator: checksum 123456789 @0, copterID @4, vehicleType @8, reserv @12, VelE @16,
    AngEuler @28, AngQuatern @40, MotorRPMS @56, AccB @88, RateB @100, runnedTime f64 @112,
    PosE f64×3 @120, PosGPS f64×3 @144."""
    b = bytearray(168)
    struct.pack_into('<4i', b, 0, 123456789, copter_id, 3, 0)
    struct.pack_into('<4f', b, 40, 1.0, 0.0, 0.0, 0.0)
    struct.pack_into('<d', b, 112, t)
    struct.pack_into('<3d', b, 120, *pos)
    struct.pack_into('<3d', b, 144, 40.0, 116.0, 50.0)
    return bytes(b)


@pytest.fixture
def truth_node(ros):
    def start(**params):
        base = free_udp_ports(1, step=2)
        node = ros.start(RflySimTruthNode, {'copter_ids': [1], 'base_port': base,
                                            'diagnostics_period': 0.2, **params})
        truth = ros.collect(RflySimTruth, 'rflysim/vehicle_1/truth', 1000)
        return node, UdpSender(codec.truth_port(1, base)), truth
    return start


def _raise_once(monkeypatch, module, name):
    """Make ``module.name`` raise RuntimeError on its next call only (a handler bug)."""
    real = getattr(module, name)
    fired = threading.Event()

    def broken(*args, **kwargs):
        if not fired.is_set():
            fired.set()
            raise RuntimeError('injected handler fault')
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, broken)
    return fired


def test_warning_then_error_from_the_shared_log_path_keeps_the_node_publishing(
        ros, truth_node, monkeypatch):
    """Defect 2: bad input logs a warning, a handler fault then logs an error through the same
    helper; the receive thread must survive both and later truth must still be published."""
    node, tx, truth = truth_node()
    tx.send(b'\x00' * 7)                                   # bad input: warning
    assert wait_until(lambda: node.vehicles[1].stats.error_count == 1, 5)
    fired = _raise_once(monkeypatch, conversions.VehicleCdr, 'odometry')
    tx.send(truth_168(t=1.0))                              # handler fault: error
    assert wait_until(fired.is_set, 5)
    for k in range(2, 6):
        tx.send(truth_168(t=float(k)))
    got = truth.wait_for(5, timeout=10)                    # the faulty one was published too
    assert {m.runned_time for m in got} >= {2.0, 3.0, 4.0, 5.0}


def kill_thread(name: str) -> None:
    """Raise SystemExit inside the running thread called ``name`` (no guard catches it)."""
    [thread] = [t for t in threading.enumerate() if t.name == name and t.is_alive()]
    assert ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                                      ctypes.py_object(SystemExit)) == 1
    thread.join(5)
    assert not thread.is_alive()


def test_killed_receive_thread_shows_error_on_diagnostics_and_is_rebuilt(ros, truth_node):
    """Defect 3: a receive thread that ends anyway turns /diagnostics ERROR, and the link is
    rebuilt: truth sent afterwards is published again."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    node, tx, truth = truth_node()
    tx.send(truth_168(t=1.0))
    truth.wait_for(1)
    diag = ros.collect(DiagnosticArray, '/diagnostics', 100)
    kill_thread('rflysim-udp')

    def thread_error():
        return any(st.level == DiagnosticStatus.ERROR and 'rflysim_truth' in st.name
                   and 'thread' in st.name for arr in list(diag.messages) for st in arr.status)
    assert wait_until(thread_error, 10), 'no ERROR status for the dead receive thread'
    for k in range(2, 5):
        tx.send(truth_168(t=float(k)))
    got = truth.wait_for(4, timeout=10)
    assert {m.runned_time for m in got} == {1.0, 2.0, 3.0, 4.0}
    values = ros.diagnostics('thread', lambda v: v.get('thread_deaths') == '1')
    assert 'SystemExit' in values['last_death']


BAD_TIMES = [math.nan, math.inf, -math.inf, 9.3e18, 1e300, -1.0, float(2**31)]


def test_sim_stamps_that_no_ros_time_holds_are_counted_not_published(ros, truth_node):
    """Defect 4: stamp_source sim with runnedTime NaN, ±Inf, > int32 seconds or negative is bad
    input: counted as bad_value, nothing published for it; the valid packets around it are."""
    node, tx, truth = truth_node(stamp_source='sim')
    for k, bad in enumerate(BAD_TIMES):
        tx.send(truth_168(t=float(k)))
        tx.send(truth_168(t=bad))
    tx.send(truth_168(t=100.25))
    got = truth.wait_for(len(BAD_TIMES) + 1, timeout=10)
    assert sorted(m.runned_time for m in got) == [float(k) for k in range(len(BAD_TIMES))] + [100.25]
    assert (got[-1].header.stamp.sec, got[-1].header.stamp.nanosec) == (100, 250_000_000)
    values = ros.diagnostics('vehicle 1', lambda v: v.get('errors.bad_value') == str(len(BAD_TIMES)))
    assert 'runnedTime' in values['last_error']
    assert node.receiver.health.handler_errors == 0     # rejected, not a handler fault


def legacy_200(copter_id=1, t=1.0):
    """Legacy netDataShort: tg @0 (-1: no collision), len 152 @4, copterID @8, vehicleType @12,
    runnedTime f64 @16, VelE f32×3 @24, PosE f32×3 @36, AngEuler @48, AngQuatern @60,
    PosGPS f64×3 @136 (SUPPLEMENT §2.2)."""
    b = bytearray(200)
    struct.pack_into('<4i', b, 0, -1, 152, copter_id, 3)
    struct.pack_into('<d', b, 16, t)
    struct.pack_into('<3f', b, 36, 1.0, 2.0, -3.0)
    struct.pack_into('<4f', b, 60, 1.0, 0.0, 0.0, 0.0)
    struct.pack_into('<3d', b, 136, 40.0, 116.0, 50.0)
    return bytes(b)


def overwrite(datagram: bytes, offset: int, fmt: str, value: float) -> bytes:
    b = bytearray(datagram)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


# (what, datagram with one float NaN or ±Inf at its SUPPLEMENT §2.2 offset)
NON_FINITE = [
    ('PosE north', lambda t: overwrite(truth_168(t=t), 120, '<d', math.nan)),
    ('PosE down', lambda t: overwrite(truth_168(t=t), 136, '<d', -math.inf)),
    ('VelE east', lambda t: overwrite(truth_168(t=t), 20, '<f', math.inf)),
    ('AngEuler yaw', lambda t: overwrite(truth_168(t=t), 36, '<f', math.nan)),
    ('AngQuatern w', lambda t: overwrite(truth_168(t=t), 40, '<f', math.inf)),
    ('legacy PosE (f32)', lambda t: overwrite(legacy_200(t=t), 40, '<f', -math.inf)),
]


def test_nan_or_inf_in_a_truth_record_is_bad_input_not_published(ros):
    """A truth record with a NaN or ±Inf position, velocity or attitude would reach /tf,
    odometry and the IMU: counted as bad_value, nothing published for it; the valid records
    around it (same port, and another vehicle's) are.  The same for a GPS origin."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import NavSatFix
    from tf2_msgs.msg import TFMessage
    from ros_sim_bridge.ros.qos import LATCHED
    base = free_udp_ports(2, step=2)
    node = ros.start(RflySimTruthNode, {'copter_ids': [1, 2], 'base_port': base,
                                        'diagnostics_period': 0.2})
    truth1 = ros.collect(RflySimTruth, 'rflysim/vehicle_1/truth', 100)
    truth2 = ros.collect(RflySimTruth, 'rflysim/vehicle_2/truth', 100)
    odom1 = ros.collect(Odometry, 'rflysim/vehicle_1/odom', 100)
    tf = ros.collect(TFMessage, '/tf', 100)
    tx1, tx2 = UdpSender(codec.truth_port(1, base)), UdpSender(codec.truth_port(2, base))
    for k, (_, bad) in enumerate(NON_FINITE):
        tx1.send(truth_168(t=float(k)))
        tx1.send(bad(100.0 + k))
        tx2.send(truth_168(copter_id=2, t=float(k)))
    n = len(NON_FINITE)
    assert [m.runned_time for m in truth1.wait_for(n)] == [float(k) for k in range(n)]
    assert [m.runned_time for m in truth2.wait_for(n)] == [float(k) for k in range(n)]
    poses = [o.pose.pose for o in odom1.wait_for(n)]
    assert all(math.isfinite(v) for p in poses for v in (p.position.x, p.position.y,
                                                          p.position.z, p.orientation.w))
    transforms = [t for m in tf.wait_for(2 * n) for t in m.transforms]
    assert all(math.isfinite(v) for t in transforms for v in (
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z,
        t.transform.rotation.w, t.transform.rotation.x))
    values = ros.diagnostics('vehicle 1', lambda v: v.get('errors.bad_value') == str(n))
    assert 'not a finite number' in values['last_error']
    # the map's GPS origin (Ue4CMDGPS, ii3d): a NaN latitude is not latched, the next one is
    tx1.send(struct.pack('<2i3d', 1234567890, 1, math.nan, 116.3, 40.0))
    ros.diagnostics('vehicle 1', lambda v: v.get('errors.bad_value') == str(n + 1))
    tx1.send(struct.pack('<2i3d', 1234567890, 1, 39.9, 116.3, 40.0))
    origin = ros.collect(NavSatFix, 'rflysim/map_origin', LATCHED).wait_for(1)
    assert [(o.latitude, o.longitude) for o in origin] == [(39.9, 116.3)]
    assert len(truth1.messages) == n                              # nothing came late
    assert node.receiver.health.handler_errors == 0


def test_truncated_datagrams_are_counted_and_the_valid_ones_published(ros, truth_node):
    """UDP has no mid-message close: its equivalent is a datagram cut short, at every length."""
    node, tx, truth = truth_node()
    whole = truth_168(t=0.5)
    for n, cut in enumerate(range(0, 168, 7)):
        tx.send(whole[:cut])
        tx.send(truth_168(t=float(n)))
    count = len(range(0, 168, 7))
    got = truth.wait_for(count, timeout=10)
    assert sorted(m.runned_time for m in got) == [float(n) for n in range(count)]
    values = ros.diagnostics('vehicle 1', lambda v: v.get('decode_errors') == str(count))
    assert values['published'] != '0'


def test_garbage_storm_with_valid_datagrams_interleaved_loses_none(ros, truth_node):
    """2000 random datagrams (random sizes, including the 168 and 12 the forms use) with 200
    valid truth packets among them: every valid one is published, the garbage counted."""
    node, tx, truth = truth_node()
    rng = random.Random(9)
    sent = 0
    for k in range(200):
        for _ in range(10):
            size = rng.choice([rng.randrange(0, 400), 168, 12, 200, 112])
            tx.send(bytes(rng.getrandbits(8) for _ in range(size)))
        tx.send(truth_168(t=float(k)))
        sent += 11
        if k % 20 == 0:
            time.sleep(0.01)          # stay under the socket buffer: losses here are the test's
    got = truth.wait_for(200, timeout=20)
    assert sorted(m.runned_time for m in got) == [float(k) for k in range(200)]
    values = ros.diagnostics('vehicle 1', lambda v: v.get('packets') == str(sent))
    assert int(values['decode_errors']) == 2000 and values['drops'] == '0'


def test_sender_power_cycle_goes_stale_then_recovers(ros, truth_node):
    """CopterSim stops (the vehicle goes stale on /diagnostics) and starts again: the next
    packets are published at once."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    node, tx, truth = truth_node(stale_after=0.5)
    tx.send(truth_168(t=1.0))
    truth.wait_for(1)
    diag = ros.collect(DiagnosticArray, '/diagnostics', 100)

    def stale():
        return any(st.level == DiagnosticStatus.WARN and 'no data for' in st.message
                   and 'vehicle 1' in st.name for arr in list(diag.messages) for st in arr.status)
    assert wait_until(stale, 10)
    tx = UdpSender(tx.port)                         # a new sender process: a new source port
    tx.send(truth_168(t=2.0))
    got = truth.wait_for(2, timeout=10)
    assert [m.runned_time for m in got] == [1.0, 2.0]
    ros.diagnostics('vehicle 1', lambda v: v.get('published') == '10')   # 5 topics × 2
