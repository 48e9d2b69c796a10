"""The emulator's ECU mode (spec §20 Set Filter, ECU data types) over real TCP on 127.0.0.1:
nothing before a Set Filter, then only the data types asked for; the Set Filter answer written
by hand from §20 (``00 05``)."""
import struct
import time

import numpy as np
import pytest

from ros_sim_bridge.ibeo.emulator.cli import main
from ros_sim_bridge.ibeo.emulator.scene import EcuScene
from ros_sim_bridge.ibeo.emulator.server import LuxServer
from ros_sim_bridge.ibeo.codec import scan_ecu as se

from test_ibeo_emulator import Client

# §20: header type 0x2010, payload 00 05, 2·n, ranges (big-endian)
FILTER_SCANS_GPSIMU = struct.pack('>HHHHHH', 0x0005, 4, 0x2205, 0x2205, 0x9001, 0x9001)


def types(client):
    return [h.data_type for h, _ in client.records]


@pytest.fixture
def ecu():
    srv = LuxServer(EcuScene(20.0, scanners=3, points=60_000), port=0).start()
    yield srv
    srv.stop()


def test_scene_frame_has_every_ecu_type_and_60000_points():
    scene = EcuScene(12.5, scanners=4, points=60_000)
    first = scene.step()
    kinds = [m.data_type for m in first]
    for dt in (0x2205, 0x2280, 0x2807, 0x2604, 0x9001, 0x9002, 0x2808, 0x6701, 0x2403, 0x1100):
        assert dt in kinds, hex(dt)
    scan = se.decode_scan_2205(first[0].body)
    assert len(scan.points) == 60_000 and len(scan.scanners) == 4
    assert set(np.unique(scan.points['device_id'])) == {10, 11, 12, 13}
    assert len(first[0].body) > 60_000 * 28                  # far beyond 64 KiB
    second = [m.data_type for m in scene.step()]
    assert 0x2808 not in second and 0x2205 in second        # 0x2808/status/image once a second


def test_nothing_before_set_filter_then_only_the_filtered_types(ecu):
    c = Client(ecu.port)
    try:
        c.drain(0.4)
        assert c.records == [], 'an ECU sends nothing before the Set Filter (§20)'
        c.send(FILTER_SCANS_GPSIMU)
        c.pump(lambda c: types(c).count(0x2205) >= 2 and 0x9001 in types(c), timeout=10)
        assert c.raw[0][24:] == b'\x00\x05' and types(c)[0] == 0x2020      # the answer first
        assert set(types(c)[1:]) == {0x2205, 0x9001}
        scans = [r for h, r in c.records if h.data_type == 0x2205]
        assert len(scans[0].points) == 60_000
        assert ecu.filters[-1].ranges == ((0x2205, 0x2205), (0x9001, 0x9001))
        # a new filter replaces it: objects only
        c.send(struct.pack('>HHHH', 5, 2, 0x2280, 0x2280))
        n = len(c.records)
        c.pump(lambda c: types(c)[n:].count(0x2280) >= 2, timeout=10)
        after = types(c)[types(c).index(0x2020, n) + 1:]
        assert after and set(after) == {0x2280}
    finally:
        c.close()


def test_malformed_set_filter_is_refused_and_lux_commands_fail(ecu):
    c = Client(ecu.port)
    try:
        c.send(bytes.fromhex('0005000322052205'))            # odd entry count
        c.pump(lambda c: len(c.raw) >= 1)
        assert c.raw[0][24:] == b'\x80\x05' and ecu.bad_input == 1
        c.send(struct.pack('<HH', 0x0020, 0))               # LUX Start Measure
        c.pump(lambda c: len(c.raw) >= 2)
        assert c.raw[1][24:26] == struct.pack('<H', 0x8020)
        c.drain(0.3)
        assert types(c) == [0x2020, 0x2020]                  # still no data without a filter
    finally:
        c.close()


def test_cli_ecu_mode(capsys):
    t0 = time.monotonic()
    assert main(['--ecu', '--port', '0', '--duration', '0.3', '--points', '1000',
                     '--rate', '5']) == 0
    assert time.monotonic() - t0 < 5
    assert 'ECU emulator on 127.0.0.1:' in capsys.readouterr().out
