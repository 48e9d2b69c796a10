"""The time an ECU record carries in its body (0x2807 / 0x2808 vehicle state, 0x2604 GPS,
0x2403 image: their timestamp; 0x9001 GpsImu, 0x9002 odometry: measurementTimeECU; 0x2205
scan: its start time; 0x2280 objects: the mid-scan time; 0x2821 measurement list: its time;
0x1002 CAN: its receive time) stamps its
messages only when valid beside its message's checked header time (core.ntp's
``why_invalid_beside``: not 0, not all ones, within ``max_time_jump`` of the header time);
else the header time stamps them and the record time is counted: by the installed
``ibeo_ecu`` over real TCP and playing a file (/diagnostics ``invalid_record_times``), by the
installed ``ibeo_idc to-bag`` (its summary; the bag read back with rosbags) and ``info``.

Byte vectors by the spec's tables (big-endian): the 24-byte data header (§2.4: magic
0xAFFEC0C2, size of previous, body size, reserved, device id, data type, NTP64); 0x2807 §16
(90 bytes: 4 reserved, NTP64 timestamp at 4, distances x/y INT32, …, longitudinal
acceleration at 86); 0x2808 §17 (204 bytes, timestamp at 4); 0x2604 §22 (127 bytes: µs since
start-up, NTP64 timestamp at 4, device id, 10 doubles, 32 reserved, source UINT16); 0x2403
§14 (63-byte header: format, µs since power-on, NTP64 timestamp at 6, device id, mounting as 6
floats, 2 opening angles, width, height, compressed size; then the image bytes); 0x9001 §33
(413 bytes, the Timestamp block at 353, measurementTimeECU first); 0x9002 §34 (146 bytes, the
Timestamp block at 88); 0x2205 §9 (scan start NTP64 first); 0x2280 §11 (mid-scan NTP64
first); 0x2821 §21 (µs, NTP seconds, fraction, names); 0x1002 §30 (receive NTP64 in the tail).
"""
from __future__ import annotations

import math
import struct
import subprocess

import pytest

from nav_msgs.msg import Odometry
from sensor_msgs.msg import CompressedImage, Imu, NavSatFix, PointCloud2
from std_srvs.srv import Trigger

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns, why_invalid_beside
from ros_sim_bridge.ibeo.idc import IdcWriter
from ros_sim_bridge.msg import (IbeoCanMessage, IbeoMeasurementList, IbeoObjectList,
                                IbeoOdometry)
from ros_sim_bridge.tools.launcher import NodeProcess, executable

from conftest import free_tcp_port
from test_ibeo_data_diagnostics import FAST, Diagnostics, connected, serving
from test_ibeo_idc_play import call

S = 1 << 32                                     # one second in NTP64
NTP = 3_900_000_000 * S                         # 2023-08-03: a set clock
ALL_ONES = (1 << 64) - 1
YEARS = 5 * 365 * 86_400 * S


def header(data_type: int, size: int, ntp: int) -> bytes:
    """§2.4 data header, device id 1."""
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, 0, size, 0, 1, data_type, ntp)


def vehicle_2807(t: int) -> bytes:
    """§16: timestamp, distances [1/10 mm], course angle, velocity, yaw rate, steering wheel
    and front wheel angles, width, axle distances, steer ratio s0..s3, acceleration."""
    return struct.pack('>4xQiiffff4xf2xf4xfff4xfffff', t, 10_000, -20_000, 0.5, 5.0, 0.1,
                       0.0, 0.0, 1.8, 0.9, 2.7, 1.0, 1.0, 0.0, 0.0, 0.0, 0.2)


def vehicle_2808(t: int) -> bytes:
    """§17: timestamp, sources, latitude/longitude [deg], altitude (4 bytes), sigmas, …,
    velocity and yaw rate at 124 / 132."""
    return struct.pack('>4xQH2xd4xd4xf4x8xf8xf4x4xf4x4xffff16x10ff4xfff4xffff', t, 2,
                       52.5, 13.4, 34.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0,
                       5.0, 0.1, 0.1, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                       1.8, 0.9, 2.7, 1.0, 1.0, 0.0, 0.0, 0.0)


def gps_2604(t: int) -> bytes:
    """§22: µs since start-up, timestamp, device id, latitude/longitude [rad], altitude,
    their sigmas, course and yaw angles with sigmas, 32 reserved, source."""
    return struct.pack('>IQB10d32xH', 1_000, t, 7, math.radians(50.0), math.radians(8.0),
                       34.0, 0.5, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1)


def image_2403(t: int) -> bytes:
    """§14: JPEG, µs since power-on, timestamp, device id, mounting, opening angles, 640 ×
    480, then 4 image bytes."""
    jpeg = b'\xff\xd8\xff\xd9'
    return struct.pack('>HIQB6fddHHI', 0, 1_000, t, 30, 0.0, 0.0, 0.0, 1.8, 0.0, 1.3, 1.0,
                       0.6, 640, 480, len(jpeg)) + jpeg


def gps_imu_9001(t: int) -> bytes:
    """§33: 39 doubles (latitude, …, pitch rate sigma, GPS status), satellites, 5 DOPs, the
    Timestamp block (measurementTimeECU ``t``), source, INS quality, 16 reserved."""
    d = [0.1] * 39
    d[0], d[2], d[4] = 0.9, 0.23, 34.0              # latitude, longitude [rad], altitude
    return struct.pack('>39dB5d5QBBBB16x', *d, 9, 1.0, 1.0, 1.0, 1.0, 1.0,
                       t, NTP, NTP, NTP, NTP, 0, 2, 1, 3)


def odometry_9002(t: int) -> bytes:
    """§34: 11 doubles (steering, wheel speeds, circumference, velocity, acceleration, yaw
    rate), the Timestamp block (measurementTimeECU ``t``), 16 reserved."""
    return struct.pack('>11d5QBB16x', 0.01, 0.2, 0.0, 5.0, 5.0, 5.0, 5.0, 1.9, 4.0, 0.3,
                       0.05, t, NTP, NTP, NTP, NTP, 0, 2)


def scan_2205(t: int) -> bytes:
    """§9: the scan header (start time ``t``, end offset, flags: vehicle coordinates, number,
    1 point, 1 scanner info), a scanner info (§9 table: device id, type, number, angles,
    start/end times, frequency, tilt, flags, mounting, resolutions), a point."""
    return (struct.pack('>QIIHHB3x', t, 80_000, 0x800, 1, 1, 1)
            + struct.pack('>BBH4xff4QffI6f16f', 1, 6, 1, -1.0, 1.0, t, t, t, t, 12.5, 0.0, 0,
                          0.0, 0.0, 0.0, 1.5, 0.0, 0.3, *[0.0] * 16)
            + struct.pack('>4fBBBxIH2x', 10.0, 2.0, 0.5, 0.5, 1, 0, 0, 0, 0))


def objects_2280(t: int) -> bytes:
    """§11: mid-scan time ``t``, 1 object (170 bytes: id 7, class car at 18, box centre at 40,
    box size at 56; no contour point)."""
    obj = bytearray(170)
    struct.pack_into('>H', obj, 0, 7)
    obj[18] = 5
    struct.pack_into('>ff', obj, 40, 12.0, -1.5)
    struct.pack_into('>ff', obj, 56, 4.5, 1.8)
    return struct.pack('>QH', t, 1) + bytes(obj)


def measurements_2821(t: int) -> bytes:
    """§21: µs since power-on, the list's NTP64 time ``t`` (seconds, fraction), list and group
    names (NUL-terminated), 0 measurements."""
    return struct.pack('>III', 1_000, t >> 32, t & 0xFFFFFFFF) + b'ecu\0status\0' + b'\0\0'


def can_1002(t: int) -> bytes:
    """§30: version and length (high nibble), 2 data bytes, message type, identifier (bit 15
    set: standard), device time [µs], receive time ``t`` (NTP64), device id."""
    return bytes([0x21, 0xAB, 0xCD]) + struct.pack('>BHIQB', 0, 0x8123, 1_000, t, 4)


#: data type, body maker, topic, message type, a valid record time and an invalid one as
#: offsets from the header time (None: all ones; 'zero': 0)
TYPES = [
    (0x2807, vehicle_2807, 'vehicle_state/odometry', Odometry, S // 4, None),
    (0x2808, vehicle_2808, 'vehicle_state/fix', NavSatFix, -S // 4, YEARS),
    (0x2604, gps_2604, 'gps/fix', NavSatFix, 59 * S, 'zero'),
    (0x2403, image_2403, 'image/compressed', CompressedImage, S // 2, -2 * 3600 * S),
    (0x9001, gps_imu_9001, 'imu/data', Imu, -59 * S, 61 * S),
    (0x9002, odometry_9002, 'odometry', IbeoOdometry, S // 8, -YEARS),
    (0x2205, scan_2205, 'points', PointCloud2, -S // 10, 'zero'),
    (0x2280, objects_2280, 'ecu/objects', IbeoObjectList, S // 20, 2 * 3600 * S),
    (0x2821, measurements_2821, 'measurements', IbeoMeasurementList, S // 5, 'zero'),
    (0x1002, can_1002, 'can', IbeoCanMessage, -S // 5, -61 * S),
]
#: the types whose topics the node makes at start (a measurement list's and a CAN message's
#: publisher is made on first use, which a subscriber would miss): the live and playback
#: checks take these, the converter and to-bag all
LIVE_TYPES = [t for t in TYPES if t[0] not in (0x2821, 0x1002)]


def record_time(header_ntp: int, offset) -> int:
    """The record time an offset of :data:`TYPES` stands for."""
    if offset is None:
        return ALL_ONES
    return 0 if offset == 'zero' else header_ntp + offset


def sent(types=TYPES) -> list:
    """(data type, header time, record time, the stamp expected) of a valid and an invalid
    record time per type, the header times 0.1 s apart."""
    out = []
    for k, (dt, _, _, _, good, bad) in enumerate(types):
        for j, offset in enumerate((good, bad)):
            h = NTP + (2 * k + j) * S // 10
            t = record_time(h, offset)
            out.append((dt, h, t, t if j == 0 else h))
    return out


def message(dt: int, header_ntp: int, t: int, types=TYPES) -> bytes:
    body = dict((d, make) for d, make, *_ in types)[dt](t)
    return header(dt, len(body), header_ntp) + body


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec


def expected_stamps(items, types=TYPES) -> dict:
    """topic → the stamps (ns) expected on it, in order."""
    topic = {dt: t for dt, _, t, *_ in types}
    out: dict = {}
    for dt, _, _, stamp in items:
        out.setdefault(topic[dt], []).append(ntp64_to_unix_ns(stamp))
    return out


# --- the rule ------------------------------------------------------------------------------

def test_a_record_time_is_valid_within_the_bound_of_its_header_time():
    assert why_invalid_beside(NTP + 60 * S, NTP) is None           # the bound itself
    assert why_invalid_beside(NTP - 60 * S, NTP) is None
    assert why_invalid_beside(NTP + 60 * S + 1, NTP) == '+60 s from its header time'
    assert why_invalid_beside(NTP - 2 * S, NTP, 1.0) == '-2 s from its header time'
    assert 'time 0' in why_invalid_beside(0, NTP)
    assert 'all ones' in why_invalid_beside(ALL_ONES, NTP)
    assert why_invalid_beside(12 * S, 11 * S) is None               # a power-up clock: a time
    with pytest.raises(ValueError):
        why_invalid_beside(NTP, NTP, 0.0)


def test_the_converter_stamps_with_the_header_time_and_says_why():
    """IbeoToRos: each vector's messages carry its valid record time, or its header time when
    the record time is not valid (``invalid_time`` says why); every message reads back
    (test_ibeo_ecu_cdr.check)."""
    from ros_sim_bridge.ibeo import codec as ibeo
    from ros_sim_bridge.ibeo.codec.header import decode_header
    from ros_sim_bridge.ibeo.ros.ecu_conversions import IbeoToRos
    from ibeo_readback import readback
    from test_ibeo_ecu_cdr import check
    conv = IbeoToRos()
    whys = []
    for dt, h, t, stamp in sent():
        raw = message(dt, h, t)
        head, record = decode_header(raw), ibeo.decode_message(dt, raw[24:])
        check(head, record, conv)
        pairs = [(t, readback(m)) for t, m in conv.convert(head, record)]
        stamped = [m for _, msg in pairs for m in getattr(msg, 'markers', None)
                   or getattr(msg, 'transforms', None) or [msg]]   # markers, transforms alike
        assert pairs and all(stamp_ns(m) == ntp64_to_unix_ns(stamp) for m in stamped), hex(dt)
        whys.append(conv.invalid_time)
    assert whys[0::2] == [None] * len(TYPES)
    assert whys[1::2] == ['all ones (never written)', '+1.58e+08 s from its header time',
                          'time 0 (clock not set)', '-7.2e+03 s from its header time',
                          '+61 s from its header time', '-1.58e+08 s from its header time',
                          'time 0 (clock not set)', '+7.2e+03 s from its header time',
                          'time 0 (clock not set)', '-61 s from its header time']


# --- the installed driver and ibeo_idc ---------------------------------------------------------

def collect_topics(ros, ns: str, types=LIVE_TYPES) -> dict:
    return {topic: ros.collect(msg_type, f'{ns}/{topic}', 20) for _, _, topic, msg_type, *_
            in types}


def check_stamps(subs: dict, items, types=TYPES) -> None:
    for topic, stamps in expected_stamps(items, types).items():
        got = subs[topic].wait_for(len(stamps), timeout=15.0)
        assert [stamp_ns(m) for m in got] == stamps, topic


def test_installed_node_stamps_an_invalid_record_time_with_the_header_time(ros, closing):
    """ibeo_ecu over TCP, stamp_source sensor: a valid record time (up to 59 s off its header
    time) stamps its messages; all ones, 0, a jump of years, 2 h back or 61 s on does not, the
    header time does, and /diagnostics counts the eight (the last one named); no header time is
    invalid."""
    port = free_tcp_port()
    diag = Diagnostics(ros)
    items = sent(LIVE_TYPES)
    with NodeProcess('ibeo_ecu', parameters={'port': port, 'data_types': '',
                                             'stamp_source': 'sensor', **FAST},
                     namespace='/rt', quiet=True) as proc:
        sensor = serving(closing, port)
        connected(diag)
        subs = collect_topics(ros, '/rt')
        sensor.send(b''.join(message(dt, h, t) for dt, h, t, _ in items))
        check_stamps(subs, items)
        _, link = diag.wait('link tcp', lambda st, v: v.get('invalid_record_times') == '8')
        assert link['invalid_header_times'] == '0', link
        assert link['last_invalid_record_time'] == \
            '0x2280 ecu_objects_2280 from device 1: +7.2e+03 s from its header time', link
        assert proc.running()
        proc.stop()
        log = proc.last_lines(50)
    assert proc.proc.returncode == 0
    assert any('invalid record time' in line and 'header time used instead' in line
               for line in log), log


def recording(path, types=TYPES, valid_type: int = 0x2807, ones_type: int = 0x2604) -> list:
    """The vectors of :func:`sent` and, last, two whose header time is 0, written to
    ``path``: a ``valid_type`` whose record time is valid beside the header time's replacement
    (the last valid one; the stamp) and a ``ones_type`` whose record time is all ones (the
    replacement the stamp); (data type, header time, record time, the stamp expected) of
    each."""
    last = sent(types)[-1][1]
    items = sent(types) + [(valid_type, 0, last + S // 4, last + S // 4),
                           (ones_type, 0, ALL_ONES, last)]
    with IdcWriter(path) as w:
        for dt, h, t, _ in items:
            w.write(dt, message(dt, h, t, types)[24:], device_id=1, ntp=h)
    return items


def test_installed_node_playing_a_file_counts_as_to_bag_does(ros, tmp_path):
    """ibeo_ecu, source:=file, as fast as possible: the same stamps as live, and the record
    times of messages whose header time is invalid judged by its replacement (a valid one
    stamps its messages, as to-bag stamps them; all ones is counted too): 9 record times, 2
    header times."""
    items = recording(tmp_path / 'times.idc', LIVE_TYPES)
    diag = Diagnostics(ros)
    with NodeProcess('ibeo_ecu', parameters={'source': 'file',
                                             'file': str(tmp_path / 'times.idc'),
                                             'rate': 0.0, 'start_paused': True,
                                             'stamp_source': 'sensor', **FAST},
                     namespace='/rtf', quiet=True) as proc:
        subs = collect_topics(ros, '/rtf')
        assert call(ros, Trigger, '/rtf/ibeo_ecu/resume').success
        check_stamps(subs, items)
        _, link = diag.wait('link file', lambda st, v: v.get('state') == 'finished')
        assert (link['invalid_record_times'], link['invalid_header_times']) == ('9', '2'), link
        assert link['last_invalid_record_time'] == \
            '0x2604 gps_wgs84 from device 1: all ones (never written)', link
        assert proc.running()
    assert proc.proc.returncode == 0


def info_and_to_bag(src) -> dict:
    """The standard output of the installed ``ibeo_idc info`` and ``to-bag`` (into a ``bag``
    folder beside it) on ``src``, by command; each exits 0 without a traceback."""
    out = {}
    for command, args in (('info', []), ('to-bag', [str(src.parent / 'bag'), '--no-progress'])):
        done = subprocess.run([str(executable('ibeo_idc')), command, str(src), *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and 'Traceback' not in done.stderr, (command, done.stderr)
        out[command] = done.stdout
    return out


def check_to_bag_and_info(src, items, types, first: str) -> None:
    """The installed ``to-bag`` and ``info`` on ``src``, the file of ``items``
    (:func:`recording`, two of its header times 0): each message stamped as the node stamps it
    (the bag read back with rosbags), the record times not used counted and ``first`` named
    first; ``info`` counts alike."""
    from rosbags.highlevel import AnyReader
    out = info_and_to_bag(src)
    with AnyReader([src.parent / 'bag']) as reader:
        got: dict = {}
        for c, _, raw in reader.messages():
            got.setdefault(c.topic, []).append(reader.deserialize(raw, c.msgtype))
    for topic, stamps in expected_stamps(items, types).items():
        assert [stamp_ns(m) for m in got[f'/ibeo/{topic}']] == stamps, topic
    lines = [line.strip() for line in out['to-bag'].splitlines()]
    invalid = sum(1 for _, _, t, stamp in items if stamp != t)     # record times not used
    count = (f'{invalid} messages with an invalid record time (0, all ones or more than 60 s '
             'from its header time): stamped with their header time')
    assert count in lines, out['to-bag']
    assert '2 messages with an invalid header time' in out['to-bag'], out['to-bag']
    at = len(message(*items[0][:3], types))             # the second message: after the first
    assert lines[lines.index(count) + 1] == f'at byte {at}: {first}', out['to-bag']
    assert count in out['info'] and '2 messages with an invalid header time' in out['info'], \
        out['info']


def test_installed_to_bag_and_info_count_invalid_record_times(tmp_path):
    """ibeo_idc to-bag and info on the ECU vectors: 11 invalid record times."""
    items = recording(tmp_path / 'times.idc')
    assert sum(1 for _, _, t, stamp in items if stamp != t) == 11
    check_to_bag_and_info(tmp_path / 'times.idc', items, TYPES,
                          '0x2807 ecu_vehicle_state_2807: all ones (never written)')


def test_info_and_to_bag_count_a_damaged_scan_alike(tmp_path):
    """A 0x2205 whose start time is 0 but whose point count needs more bytes than its body has
    is undecodable: to-bag counts it as such, not its record time, and info (which reads a
    scan's start time without decoding its points) leaves its time out too; the whole scan
    after it, start time 0 as well, is counted by both."""
    src = tmp_path / 'damaged.idc'
    cut = bytearray(scan_2205(0))
    cut[18:20] = struct.pack('>H', 500)                 # 500 points declared, 1 sent
    with IdcWriter(src) as w:
        w.write(0x2205, bytes(cut), device_id=1, ntp=NTP)
        w.write(0x2205, scan_2205(0), device_id=1, ntp=NTP + S // 10)
    lines = {command: [ln.strip() for ln in text.splitlines() if 'invalid record time' in ln]
             for command, text in info_and_to_bag(src).items()}
    assert lines['info'] == lines['to-bag'] and lines['info'][0].startswith(
        '1 message with an invalid record time'), lines


def test_a_record_time_is_counted_even_when_no_stamp_can_be_made(tmp_path):
    """A clock past 2^31 s since power-up holds no ROS stamp: its scans are refused as
    bad_value; one whose start time is 0 beside such a header time is an invalid record time
    as well, counted by to-bag as by info (which judges it without converting)."""
    bad = (2**31 + 5) * S
    src = tmp_path / 'clock.idc'
    with IdcWriter(src) as w:
        for start, ntp in ((bad, bad), (0, bad + S // 4), (bad + S // 2, bad + S // 2)):
            w.write(0x2205, scan_2205(start), device_id=1, ntp=ntp)
    out = info_and_to_bag(src)
    assert 'skipped 3 × 0x2205 ecu_scan_2205 (bad_value)' in out['to-bag'], out['to-bag']
    for command, text in out.items():
        assert '1 message with an invalid record time' in text, (command, text)
