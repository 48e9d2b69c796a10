"""The time a LUX record carries in its body (0x2202 scan: its scan start time; 0x2221 object
list: the scan start timestamp; 0x2805 vehicle state: its timestamp) follows the rule of the
ECU record times (test_ibeo_record_times): it stamps its messages only when valid beside its
message's checked header time (not 0, not all ones, within ``max_time_jump``); else the header
time stamps them and the record time is counted: by the installed ``ibeo_lux`` over real TCP
and playing a file (/diagnostics ``invalid_record_times``, one rate-limited log line), by the
installed ``ibeo_idc to-bag`` (its summary; the bag read back with rosbags) and ``info``.

Byte vectors by the spec's tables: the 24-byte big-endian data header (§2.4); the LUX bodies are
little endian: 0x2202 §3 (44-byte scan header: scan number, scanner status, sync phase offset,
scan start time NTP64 at 6, scan end time at 14, angle ticks per rotation, start / end angle,
scan points, mounting yaw / pitch / roll / x / y / z, flags; then 10-byte points: layer and
echo nibbles, flags, horizontal angle, radial distance, echo pulse width, reserved); 0x2221 §4
(scan start timestamp NTP64 at 0, number of objects, then 58-byte objects with their contour
points); 0x2805 §5 (46 bytes, timestamp NTP64 at 0).
"""
from __future__ import annotations

import struct

from sensor_msgs.msg import PointCloud2
from std_srvs.srv import Trigger

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.ibeo.codec.header import decode_header
from ros_sim_bridge.msg import LuxObjectList, LuxVehicleState
from ros_sim_bridge.tools.launcher import NodeProcess

from conftest import free_tcp_port
from test_ibeo_data_diagnostics import FAST, Diagnostics, connected, serving
from test_ibeo_idc_play import call
from test_ibeo_record_times import (S, check_stamps, check_to_bag_and_info, collect_topics,
                                   message, recording, sent, stamp_ns)


def scan_2202(t: int) -> bytes:
    """§3: scan 1, motor and laser on, scan start and end time ``t``, 11520 ticks per
    rotation, 50° to -60°, 2 points, mounted at the origin, no flags; two points of layer 0 and
    1 at 10 m and 15 m."""
    return (struct.pack('<HHHQQHhhHhhhhhhH', 1, 0x0003, 0, t, t, 11520, 1600, -1920, 2,
                        0, 0, 0, 0, 0, 0, 0)
            + struct.pack('<BBhHHH', 0x00, 0, 0, 1000, 50, 0)
            + struct.pack('<BBhHHH', 0x01, 0, 320, 1500, 50, 0))


def objects_2221(t: int) -> bytes:
    """§4: scan start timestamp ``t``, 1 object (id 7, age 10, reference point (1200, -150)
    cm, box 450 × 180 cm, a car, one contour point)."""
    obj = struct.pack('<4H8h2H2h2H3h2H2h4H', 7, 10, 0, 0, 1200, -150, 10, 10, 1000, -150,
                      1200, -150, 180, 450, 1200, -150, 180, 450, 0, 500, 0, 20, 20, 0, 0,
                      5, 10, 80, 1)
    return struct.pack('<QH', t, 1) + obj + struct.pack('<hh', 1000, -150)


def vehicle_2805(t: int) -> bytes:
    """§5: timestamp ``t``, scan 1, no error flag, 5 m/s, steering 0.1 rad, front wheel angle
    0.001 rad, at (12, -3) m, course 0.5 rad, 40 ms since the last, yaw rate 0.01 rad/s."""
    return struct.pack('<QHHhhhHiihHhhhHhI', t, 1, 0, 500, 100, 10, 0, 1200, -300, 5000, 40,
                       100, 0, 20, 0, 100, 0)


#: data type, body maker, topic, message type, a valid record time and an invalid one as
#: offsets from the header time (None: all ones; 'zero': 0)
TYPES = [
    (0x2202, scan_2202, 'points', PointCloud2, -S // 10, 'zero'),
    (0x2221, objects_2221, 'objects', LuxObjectList, S // 20, 2 * 3600 * S),
    (0x2805, vehicle_2805, 'vehicle_state', LuxVehicleState, 59 * S, None),
]
WHYS = ['time 0 (clock not set)', '+7.2e+03 s from its header time',
        'all ones (never written)']


def test_the_converter_stamps_lux_records_with_the_header_time_and_says_why():
    """IbeoToRos (to-bag's converter): each LUX vector's messages (cloud and scan info, object
    list and markers, vehicle state and twist) carry its valid record time, or its header time
    when the record time is not valid (``invalid_time`` says why)."""
    from ibeo_readback import readback
    from ros_sim_bridge.ibeo.ros.ecu_conversions import IbeoToRos
    conv = IbeoToRos()
    whys = []
    for dt, h, t, stamp in sent(TYPES):
        raw = message(dt, h, t, TYPES)
        pairs = [(topic, readback(m)) for topic, m in conv.convert(
            decode_header(raw), ibeo.decode_message(dt, raw[24:]))]
        stamped = [m for _, msg in pairs for m in getattr(msg, 'markers', None) or [msg]]
        assert len(pairs) >= 2 and all(stamp_ns(m) == ntp64_to_unix_ns(stamp)
                                       for m in stamped), hex(dt)
        whys.append(conv.invalid_time)
    assert whys == [None, WHYS[0], None, WHYS[1], None, WHYS[2]]


def test_installed_lux_node_stamps_an_invalid_record_time_with_the_header_time(ros, closing):
    """ibeo_lux over TCP, stamp_source sensor: a valid record time (up to 59 s off its header
    time) stamps its messages; 0, 2 h on or all ones does not, the header time does, and
    /diagnostics counts the three (the last one named), logged once (rate-limited)."""
    port = free_tcp_port()
    diag = Diagnostics(ros)
    items = sent(TYPES)
    with NodeProcess('ibeo_lux', parameters={'port': port, 'data_types': '', 'layers': 4,
                                             'start_measure_on_connect': False,
                                             'stamp_source': 'sensor', **FAST},
                     namespace='/lrt', quiet=True) as proc:
        sensor = serving(closing, port)
        connected(diag)
        subs = collect_topics(ros, '/lrt', TYPES)
        sensor.send(b''.join(message(dt, h, t, TYPES) for dt, h, t, _ in items))
        check_stamps(subs, items, TYPES)
        _, link = diag.wait('link tcp', lambda st, v: v.get('invalid_record_times') == '3')
        assert link['invalid_header_times'] == '0', link
        assert link['last_invalid_record_time'] == \
            f'0x2805 lux_vehicle_state from device 1: {WHYS[2]}', link
        assert proc.running()
        proc.stop()
        log = [line for line in proc.last_lines(80) if 'invalid record time' in line]
    assert proc.proc.returncode == 0
    assert len(log) == 1 and log[0].endswith(
        f'0x2202 lux_scan from device 1: invalid record time ({WHYS[0]}): its header time '
        'used instead'), log


def test_installed_lux_node_playing_a_file_counts_as_to_bag_does(ros, tmp_path):
    """ibeo_lux, source:=file, as fast as possible: the same stamps as live, and the record
    times of messages whose header time is invalid judged by its replacement (a valid one
    stamps its messages, as to-bag stamps them; all ones is counted too): 4 record times, 2
    header times."""
    items = recording(tmp_path / 'lux_times.idc', TYPES, valid_type=0x2202, ones_type=0x2805)
    diag = Diagnostics(ros)
    with NodeProcess('ibeo_lux', parameters={'source': 'file', 'layers': 4,
                                             'file': str(tmp_path / 'lux_times.idc'),
                                             'rate': 0.0, 'start_paused': True,
                                             'stamp_source': 'sensor', **FAST},
                     namespace='/lrtf', quiet=True) as proc:
        subs = collect_topics(ros, '/lrtf', TYPES)
        assert call(ros, Trigger, '/lrtf/ibeo_lux/resume').success
        check_stamps(subs, items, TYPES)
        _, link = diag.wait('link file', lambda st, v: v.get('state') == 'finished')
        assert (link['invalid_record_times'], link['invalid_header_times']) == ('4', '2'), link
        assert link['last_invalid_record_time'] == \
            f'0x2805 lux_vehicle_state from device 1: {WHYS[2]}', link
        assert proc.running()
    assert proc.proc.returncode == 0


def test_installed_to_bag_and_info_count_invalid_lux_record_times(tmp_path):
    """ibeo_idc to-bag and info on the LUX vectors: 4 invalid record times."""
    items = recording(tmp_path / 'times.idc', TYPES, valid_type=0x2202, ones_type=0x2805)
    assert sum(1 for _, _, t, stamp in items if stamp != t) == 4
    check_to_bag_and_info(tmp_path / 'times.idc', items, TYPES, f'0x2202 lux_scan: {WHYS[0]}')
