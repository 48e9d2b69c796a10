"""The installed ibeo_ecu / ibeo_lux over real TCP on 127.0.0.1, read on real /diagnostics:
a data type whose data stopped (link up or down) is not reported OK, and one bad ECU message
is counted once (not again as garbage on the link) while the messages after it are framed.

Byte vectors by the spec's tables: the 24-byte big-endian data header (§2.4: magic
0xAFFEC0C2, size of previous, body size, reserved, device id, data type, NTP64), 0x2604 GPS
(§22) and 0x2205 scan / 0x2280 object list headers (ECU types are big-endian).
"""
from __future__ import annotations

import contextlib
import math
import struct

import pytest
from diagnostic_msgs.msg import DiagnosticArray

from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import vehicle_state as V
from ros_sim_bridge.ibeo.codec.header import encode_message
from ros_sim_bridge.msg import LuxScanInfo
from ros_sim_bridge.tools.launcher import NodeProcess

from conftest import free_tcp_port, wait_until
from test_lux_node import ERROR, OK, WARN, RawSensor, level, numbered_scan

NTP = 3_900_000_000 << 32
# data_timeout off: these sensors fall silent on purpose for longer than it (a type's data
# stopping on a live link); the test of a silent sensor sets its own
#: topic_prefix '': the node's namespace alone names its topics, as the launch files have it
#: (the default prefix is test_ibeo_node_topics.py's and test_lux_node.py's)
FAST = {'diagnostics_period': 0.2, 'min_backoff': 0.05, 'max_backoff': 0.25,
        'stale_after': 2.0, 'data_timeout': 0.0, 'topic_prefix': ''}


def header(data_type: int, size: int, ntp: int = NTP) -> bytes:
    """§2.4 data header."""
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, 0, size, 0, 0, data_type, ntp)


def gps(k: int) -> bytes:
    """0x2604 GPS (§22) at latitude 50 + k degrees."""
    body = struct.pack('>IQB10d32xH', k, NTP + k, 7, math.radians(50.0 + k), 0.2, 34.0, 0.5,
                       0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1)
    return header(0x2604, len(body), NTP + k) + body


def vehicle_state(k: int) -> bytes:
    """A valid 0x2805 LUX vehicle state (the codec's encoder; test_codec_ibeo.py checks it)."""
    vs = V.LuxVehicleState(NTP + k, k, 0, 5.0, 0.1, 0.01, 12.0, -3.0, 0.5, 40, 0.1, 0.0, 0.002,
                           0.0)
    return encode_message(registry.VEHICLE_STATE, V.encode_vehicle_state(vs), ntp=NTP + k)


def bad_scan_2205() -> bytes:
    """0x2205 whose scan header announces 65,535 points of which 10 are there (§10: 24-byte
    header, then scanner infos of 148 bytes, then 28-byte points)."""
    body = struct.pack('>QIIHHB3x', NTP, 80_000, 0x800, 1, 65_535, 1) + bytes(148 + 10 * 28)
    return header(0x2205, len(body)) + body


def bad_objects_2280() -> bytes:
    """0x2280 announcing 65,535 objects in a 64-byte remainder."""
    body = struct.pack('>QH', NTP, 0xFFFF) + bytes(64)
    return header(0x2280, len(body)) + body


class Diagnostics:
    """/diagnostics as it arrives; ``wait`` looks at the latest status of a name only."""

    def __init__(self, ros):
        self.c = ros.collect(DiagnosticArray, '/diagnostics', 100, matched=False)

    def latest(self, name_part: str):
        for arr in reversed(list(self.c.messages)):
            for st in arr.status:
                if name_part in st.name:
                    return st, {kv.key: kv.value for kv in st.values}
        return None

    def wait(self, name_part: str, predicate, timeout: float = 15.0):
        found = []

        def check():
            got = self.latest(name_part)
            if got is not None and predicate(*got):
                found[:] = got
                return True
            return False
        assert wait_until(check, timeout), f'no status {name_part!r} matched: ' \
            f'{self.latest(name_part)}'
        return found[0], found[1]


def installed(exe: str, port: int, *, namespace=None, **params) -> NodeProcess:
    return NodeProcess(exe, parameters={'port': port, 'data_types': '', 'layers': 4,
                                        'start_measure_on_connect': False, **FAST, **params},
                       namespace=namespace, quiet=True)


def receiving(st, values) -> bool:
    return level(st) == OK and st.message == 'receiving'


DEVICES = pytest.mark.parametrize('exe, message, status', [
    ('ibeo_ecu', gps, 'gps_wgs84 (0x2604)'),
    ('ibeo_lux', vehicle_state, 'vehicle state (0x2805)'),
])


def serving(closing: list, port: int) -> RawSensor:
    """A RawSensor on ``port`` (closed after the test) once the node has connected."""
    sensor = RawSensor(port)
    closing.append(sensor)
    sensor.wait_client(20)
    return sensor


def connected(diag: Diagnostics) -> None:
    """The node's /diagnostics reach the test and say it is connected (so that the short
    'receiving' window of a message sent next is seen)."""
    diag.wait('link tcp', lambda st, v: v['connected'] == 'true')


@contextlib.contextmanager
def first_message_received(ros, closing, exe, message, status, ready=None):
    """The installed ``exe`` connected to a RawSensor that sent ``message(1)``, its
    ``status`` receiving (or ``ready``): (process, sensor, diagnostics, port); the node must
    exit 0."""
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed(exe, port) as proc:
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(message(1))
        diag.wait(status, ready or receiving)
        yield proc, sensor, diag, port
        assert proc.running()
    assert proc.proc.returncode == 0


@DEVICES
def test_a_type_whose_data_stopped_over_a_live_link_is_warn_then_ok_again(
        ros, closing, exe, message, status):
    with first_message_received(ros, closing, exe, message, status) as (_, sensor, diag, _):
        st, _ = diag.wait(status, lambda st, v: 'no data for' in st.message)
        assert level(st) == WARN                       # overdue after stale_after
        sensor.send(message(2))
        _, v = diag.wait(status, receiving)
        assert v['packets'] == '2'


@DEVICES
def test_a_type_is_not_ok_while_the_link_is_down_and_ok_when_data_flows_again(
        ros, closing, exe, message, status):
    with first_message_received(ros, closing, exe, message, status) as (_, sensor, diag,
                                                                         port):
        sensor.close()                                 # the device goes away
        closing.remove(sensor)
        diag.wait('link tcp', lambda st, v: level(st) == ERROR)
        st, v = diag.wait(status, lambda st, v: 'reconnecting' in st.message)
        assert level(st) == WARN and v['connected'] == 'false'
        st, _ = diag.wait(status, lambda st, v: level(st) == ERROR)
        assert st.message.startswith('down for')       # after link_error_after (5 s)
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(message(2))
        _, v = diag.wait(status, receiving)
        assert v['connected'] == 'true' and v['packets'] == '2'


def test_one_bad_ecu_message_is_counted_once_and_the_next_one_is_framed(ros, closing):
    """A well-framed 0x2205 / 0x2280 whose counts overrun its body: one truncated on its type,
    no garbage on the link, no false sync; every GPS message around them is published."""
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_ecu', port, stamp_source='receive') as proc:
        sensor = serving(closing, port)
        stream = gps(1) + bad_scan_2205() + gps(2) + bad_objects_2280() + gps(3)
        sensor.send(stream)
        sensor.send(bad_scan_2205())             # the last one: nothing follows it yet
        sensor.send(gps(4))
        _, fixes = diag.wait('(0x2604)', lambda st, v: v['published'] == '4')
        assert fixes['decode_errors'] == '0'
        _, scans = diag.wait('(0x2205)', lambda st, v: v['packets'] == '2')
        assert (scans['errors.truncated'], scans['decode_errors']) == ('2', '2')
        _, objs = diag.wait('(0x2280)', lambda st, v: v['packets'] == '1')
        assert (objs['errors.truncated'], objs['decode_errors']) == ('1', '1')
        _, link = diag.wait('link tcp', lambda st, v: v['bytes_received'] == str(
            len(stream) + len(bad_scan_2205()) + len(gps(4))))
        assert (link['garbage_bytes'], link['decode_errors'], link['false_syncs']) == \
            ('0', '0', '0'), link
        assert 'errors.bad_magic' not in link
        assert proc.running()
    assert proc.proc.returncode == 0


def test_an_ecu_has_no_lux_scan_status_and_is_all_ok_when_its_data_flows(ros, closing):
    """ibeo_ecu made the LUX 'scan (0x2202)' status at start, expected: an ECU never sends
    0x2202, so it stayed WARN 'no data yet' while the ECU's data flowed."""
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_ecu', port) as proc:
        sensor = serving(closing, port)
        connected(diag)
        for k in range(1, 4):
            sensor.send(gps(k))
        diag.wait('gps_wgs84 (0x2604)', receiving)
        arr = diag.c.messages[-1]
        names = [st.name for st in arr.status]
        assert not any('(0x2202)' in n for n in names), names
        assert all(level(st) == OK for st in arr.status if 'ibeo_ecu' in st.name or
                   '(0x' in st.name), [(st.name, st.message) for st in arr.status]
        assert proc.running()
    assert proc.proc.returncode == 0


def device_status(device_id: int) -> bytes:
    """0x6701 device status (§36): device id, device type 1 (scanner), type information,
    state 1 (ok), state information 0, last update (ms)."""
    body = bytes([device_id, 1, 0, 1]) + struct.pack('>HQ', 0, 1700)
    return header(0x6701, len(body)) + body


def test_an_ecu_device_status_is_not_ok_while_the_link_is_down(ros, closing):
    """The last 0x6701 of a scanner stayed OK 'ok' for the whole of an outage shorter than its
    STALE age (5 × stale_after): it is WARN 'link down' now, and OK again once reconnected."""
    with first_message_received(ros, closing, 'ibeo_ecu', device_status, 'device 1 (scanner)',
                                lambda st, v: level(st) == OK) as (_, sensor, diag, port):
        sensor.close()
        closing.remove(sensor)
        st, v = diag.wait('device 1 (scanner)', lambda st, v: level(st) != OK)
        assert level(st) == WARN and st.message.startswith('link down, last heard'), st
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(device_status(1))
        st, _ = diag.wait('device 1 (scanner)', lambda st, v: level(st) == OK)
        assert st.message == 'ok'


def test_a_silent_sensor_is_error_its_link_rebuilt_and_served_again_when_it_sends(ros, closing):
    """A LUX that keeps the connection open but sends nothing more (power cut without FIN/RST
    reaching us, a frozen unit): after ``data_timeout`` /diagnostics says ERROR with the
    timeouts counted and the node connects again; once the sensor streams scans again they
    are published and the link is OK."""
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_lux', port, data_timeout=1.0) as proc:
        infos = ros.collect(LuxScanInfo, 'scan_info', 100)
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(numbered_scan(1))                   # then silence, the link left open
        st, v = diag.wait('link tcp', lambda st, v: level(st) == ERROR
                          and int(v.get('data_timeouts', 0)) >= 1)
        assert 'no data for 1 s (data_timeout)' in st.message, st.message
        assert v['data_timeout_s'] == '1' and v['last_failure'] == \
            'no data for 1 s (data_timeout)'
        assert wait_until(lambda: sensor.clients >= 2, 10)   # the node connected again
        numbers = iter(range(2, 1000))

        def streaming() -> bool:
            """One scan at the LUX's slowest rate (12.5 Hz) on the current connection."""
            try:
                sensor.send(numbered_scan(next(numbers)))
            except OSError:                             # the node was rebuilding the link
                pass
            return any(m.scan_number >= 2 for m in infos.messages)
        assert wait_until(streaming, 15, interval=0.08), 'no scan published after the silence'
        st, v = diag.wait('link tcp', lambda st, v: level(st) == OK)
        assert int(v['connects']) >= 2
        assert proc.running()
    assert proc.proc.returncode == 0
