"""ibeo_lux under faults, through real TCP on 127.0.0.1 and real DDS (issue #10).

Only the node's public behaviour is used: its parameters, its topics (scan_info) and
/diagnostics; the sensor side is a plain TCP server sending messages made with the codec's
encoders (whose bytes the codec tests check against the spec's tables).
"""
from __future__ import annotations

import random
import socket
import time

import numpy as np
import pytest

from ros_sim_bridge.core.ntp import unix_ns_to_ntp64
from ros_sim_bridge.ibeo.codec import errors_warnings as E
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo.codec import vehicle_state as V
from ros_sim_bridge.ibeo.codec.header import MAGIC_BYTES, encode_message
from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode
from ros_sim_bridge.msg import LuxScanInfo

from conftest import free_tcp_port, wait_until

SENSOR_NS = 1_750_000_000_000_000_000
RAW = {'layers': 4, 'start_measure_on_connect': False, 'diagnostics_period': 0.2}


def scan(number: int) -> bytes:
    """A one-point 4-layer scan numbered ``number`` (0x2202)."""
    pts = np.zeros(1, S.POINT_DTYPE)
    pts[0] = (0, 0, 0, 0, 1000 + number, 50)
    start = unix_ns_to_ntp64(SENSOR_NS + number * 80_000_000)
    body = S.encode_scan(S.LuxScan(number, 0x030B, 0, start, start + (80 << 32) // 1000, 11520,
                                   1600, -1920, points=pts))
    return encode_message(registry.SCAN, body, ntp=start)


def invalid_vehicle_state() -> bytes:
    """0x2805 with error flag 0x0800 (no CAN data): the node logs a warning."""
    vs = V.LuxVehicleState(unix_ns_to_ntp64(SENSOR_NS), 42, 0x0800, 5.0, 0.1, 0.01, 12.0,
                           -3.0, 0.5, 40, 0.1, 0.0, 0.002, 0.0)
    return encode_message(registry.VEHICLE_STATE, V.encode_vehicle_state(vs))


def sensor_error() -> bytes:
    """0x2030 with a motor error set: the node logs an error."""
    return encode_message(registry.ERRORS_WARNINGS,
                          E.encode_errors(E.LuxErrorsWarnings(0x0002, 0, 0, 0)))


class Sensor:
    """A listening TCP socket on 127.0.0.1:``port`` standing in for the scanner."""

    def __init__(self, port: int):
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(('127.0.0.1', port))
        self.listener.listen(1)
        self.listener.settimeout(20)
        self.conn = None

    def accept(self) -> 'Sensor':
        self.conn, _ = self.listener.accept()
        return self

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def power_off(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.listener.close()


@pytest.fixture
def lux(ros):
    """ibeo_lux pointed at a free port nobody listens on yet → (port, scan_info collector)."""
    def start(**params):
        port = free_tcp_port()
        ros.start(IbeoLuxNode, {'port': port, **RAW, **params})
        infos = ros.collect(LuxScanInfo, 'ibeo/scan_info', 1000)
        return port, infos
    return start


def numbers(infos) -> list[int]:
    return sorted(m.scan_number for m in infos.messages)


def test_warnings_and_errors_from_the_sensor_keep_scans_flowing(ros, lux):
    """Defect 2 as a user met it: a LUX without CAN (invalid vehicle states, logged as a
    warning) with a 0x2030 error active (logged as an error): scans keep being published."""
    port, infos = lux()
    sensor = Sensor(port).accept()
    try:
        for k in range(10):
            sensor.send(invalid_vehicle_state() + sensor_error() + scan(k))
            time.sleep(0.01)
        assert wait_until(lambda: numbers(infos) == list(range(10)), 10), numbers(infos)
    finally:
        sensor.power_off()


def test_power_cycle_with_the_default_back_off_recovers(ros, lux):
    """The sensor goes away for 3 s and comes back: with the node's default reconnect
    settings it is served again (bench/bench_reconnect.py measures how soon)."""
    port, infos = lux(layers=4, start_measure_on_connect=False)
    sensor = Sensor(port).accept()
    sensor.send(scan(1))
    assert wait_until(lambda: numbers(infos) == [1], 10)
    sensor.power_off()
    time.sleep(3.0)
    sensor = Sensor(port)
    try:
        sensor.accept()
        sensor.send(scan(2))
        assert wait_until(lambda: numbers(infos) == [1, 2], 10), numbers(infos)
    finally:
        sensor.power_off()


def test_peer_closing_mid_message_loses_only_that_message(ros, lux):
    """The sensor closes the connection in the middle of a scan; after the reconnect the
    next scans arrive, and nothing is invented from the cut one."""
    port, infos = lux(min_backoff=0.05)
    listener = Sensor(port)
    try:
        listener.accept()
        cut = scan(2)
        listener.send(scan(1) + cut[:len(cut) // 2])
        time.sleep(0.2)
        listener.conn.close()
        listener.accept()
        listener.send(scan(3) + scan(4))
        assert wait_until(lambda: numbers(infos) == [1, 3, 4], 10), numbers(infos)
        time.sleep(0.3)
        assert numbers(infos) == [1, 3, 4]
    finally:
        listener.power_off()


def test_garbage_storm_with_valid_scans_interleaved_loses_none(ros, lux):
    """Random bytes (including stray magic-word prefixes) between 200 valid scans, sent in
    odd-sized pieces: every valid scan is published and the garbage is counted."""
    port, infos = lux()
    rng = random.Random(10)
    stream = bytearray()
    for k in range(200):
        garbage = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 300)))
        if k % 7 == 0:
            garbage += MAGIC_BYTES[:rng.randrange(1, 4)]
        stream += garbage + scan(k)
    sensor = Sensor(port).accept()
    try:
        for i in range(0, len(stream), 1021):
            sensor.send(bytes(stream[i:i + 1021]))
        assert wait_until(lambda: numbers(infos) == list(range(200)), 20), \
            sorted(set(range(200)) - set(numbers(infos)))
        values = ros.diagnostics('link tcp', lambda v: int(v.get('errors.bad_magic', 0)) > 0)
        assert int(values['errors.bad_magic']) > 0
    finally:
        sensor.power_off()


def test_reserved_error_bits_of_two_registers_are_logged_and_counted_apart(ros, closing):
    """A 0x2030 with bit 14 set in both error registers and bit 15 in both warning registers
    (§6: reserved in each): the installed ibeo_lux's sensor-error log line names each once, by
    its register, and /diagnostics counts each register's bit on its own (one name for both
    listed it twice and gave one count of 2)."""
    from test_ibeo_data_diagnostics import Diagnostics, connected, installed, serving
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_lux', port) as proc:
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(encode_message(registry.ERRORS_WARNINGS, E.encode_errors(
            E.LuxErrorsWarnings(0x4000, 0x4000, 0x8000, 0x8000))))
        _, errors = diag.wait('sensor errors', lambda st, v: 'age_s' in v)
        _, warnings = diag.wait('sensor warnings', lambda st, v: 'age_s' in v)
        proc.stop()
        log = [line for line in proc.last_lines(50) if 'sensor errors:' in line]
    assert proc.proc.returncode == 0
    assert {k: v for k, v in errors.items() if k.startswith('seen.')} == {
        'seen.error_register_1.reserved_bit_14': '1', 'seen.error_register_2.reserved_bit_14': '1'}
    assert {k: v for k, v in warnings.items() if k.startswith('seen.')} == {
        'seen.warning_register_1.reserved_bit_15': '1',
        'seen.warning_register_2.reserved_bit_15': '1'}
    assert len(log) == 1 and log[0].endswith(
        'sensor errors: error_register_1.reserved_bit_14, error_register_2.reserved_bit_14'), log
