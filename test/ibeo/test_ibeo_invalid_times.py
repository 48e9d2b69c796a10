"""Invalid ibeo header NTP times (0, all ones, a jump of years: core.ntp's rule): the
installed ``ibeo_ecu`` / ``ibeo_lux`` publish such a message stamped with its receive time and
count it on /diagnostics.

Byte vectors by the spec's tables: the 24-byte big-endian data header (§2.4: magic
0xAFFEC0C2, size of previous, body size, reserved, device id, data type, NTP64), 0x2604 GPS
(§22: version, NTP64 timestamp, source, 10 doubles, 32 reserved bytes, UINT16), 0x2805 LUX
vehicle state (the codec's encoder).
"""
from __future__ import annotations

import math
import struct
import time

import pytest

from sensor_msgs.msg import NavSatFix

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns, unix_ns_to_ntp64
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import vehicle_state as V
from ros_sim_bridge.msg import LuxVehicleState
from ros_sim_bridge.tools.launcher import NodeProcess

from conftest import free_tcp_port
from test_ibeo_data_diagnostics import FAST, Diagnostics, connected, serving

ALL_ONES = (1 << 64) - 1
YEARS = 5 * 365 * 86_400 << 32


def header(data_type: int, size: int, ntp: int) -> bytes:
    """§2.4 data header."""
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, 0, size, 0, 1, data_type, ntp)


def gps(header_ntp: int, record_ntp: int) -> bytes:
    """0x2604 GPS (§22) whose own time is ``record_ntp`` (0: the header's is used)."""
    body = struct.pack('>IQB10d32xH', 1, record_ntp, 7, math.radians(50.0), 0.2, 34.0, 0.5,
                       0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1)
    return header(0x2604, len(body), header_ntp) + body


def lux_vehicle_state(header_ntp: int, record_ntp: int) -> bytes:
    vs = V.LuxVehicleState(record_ntp, 1, 0, 5.0, 0.1, 0.01, 12.0, -3.0, 0.5, 40, 0.1, 0.0,
                           0.002, 0.0)
    body = V.encode_vehicle_state(vs)
    return header(registry.VEHICLE_STATE, len(body), header_ntp) + body


def test_all_ones_gives_no_receive_time_spacing():
    """sent_ns (core.receive_times' sender time of a framed message): None for 0 and all
    ones, as for no time at all."""
    from ros_sim_bridge.ibeo.session import LuxSession, sent_ns
    frames = LuxSession().framer.feed(gps(0, 0) + gps(ALL_ONES, 0) + gps(1 << 32, 0))
    assert [sent_ns(f) for f in frames] == [None, None, ntp64_to_unix_ns(1 << 32)]


# --- the live driver ---------------------------------------------------------------------

LIVE = pytest.mark.parametrize('exe, message, msg_type, topic', [
    ('ibeo_ecu', gps, NavSatFix, 'gps/fix'),
    ('ibeo_lux', lux_vehicle_state, LuxVehicleState, 'vehicle_state'),
])


@LIVE
def test_installed_node_stamps_invalid_header_times_with_the_receive_time(
        ros, closing, exe, message, msg_type, topic):
    """stamp_source sensor, the sensor clock set 1000 s behind the host: valid messages carry
    their sensor time; 0, all ones and a jump of years in the header (with the record's own
    time as bad) carry the receive time, and /diagnostics counts the three."""
    sensor_ns = time.time_ns() - 1000 * 10**9
    t = unix_ns_to_ntp64(sensor_ns)
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with NodeProcess(exe, parameters={'port': port, 'data_types': '', 'layers': 4,
                                      'start_measure_on_connect': False,
                                      'stamp_source': 'sensor', **FAST},
                     namespace='/badtime', quiet=True) as proc:
        sensor = serving(closing, port)
        connected(diag)
        got = ros.collect(msg_type, f'/badtime/{topic}', 20)
        sent = [(t, t), (0, 0), (ALL_ONES, 0), (t + YEARS, t + YEARS), (t + (1 << 32),) * 2]
        start_ns = time.time_ns()
        for header_ntp, record_ntp in sent:
            sensor.send(message(header_ntp, record_ntp))
        msgs = got.wait_for(len(sent), timeout=15.0)
        end_ns = time.time_ns()
        stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs]
        assert stamps[0] == ntp64_to_unix_ns(t)
        assert stamps[4] == ntp64_to_unix_ns(t + (1 << 32))
        for ns in stamps[1:4]:
            assert start_ns <= ns <= end_ns, (stamps, start_ns, end_ns)
        _, link = diag.wait('link tcp', lambda st, v: v.get('invalid_header_times') == '3')
        assert proc.running()
    assert proc.proc.returncode == 0
    assert 's from the last valid time' in link['last_invalid_header_time'], link
