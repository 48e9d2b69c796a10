"""A clock step needs agreement over time (core.ntp): one ECU frame whose header time is 5 years
off carries 7 messages microseconds apart that agree with each other; they are invalid header
times, not a new time base.  Live through the installed ``ibeo_ecu`` over TCP (stamped with
their receive time, counted; the frames after them on the sensor time), and in a file through
the installed ``ibeo_idc info`` / ``to-bag`` (counted, no 5-year span in the summary or the
bag's metadata.yaml); an excursion the recording's clock comes back from is invalid.

Byte vectors: the ECU records of test_ibeo_record_times (0x2807 §16, 0x9002 §34, 0x2604 §22,
0x2808 §17, big-endian, after the 24-byte §2.4 data header of device 1), each record's own
time equal to its header time.
"""
from __future__ import annotations

import time

import yaml

from nav_msgs.msg import Odometry
from sensor_msgs.msg import NavSatFix

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns, unix_ns_to_ntp64
from ros_sim_bridge.ibeo.idc import IdcWriter
from ros_sim_bridge.msg import IbeoOdometry
from ros_sim_bridge.tools.launcher import NodeProcess

from conftest import free_tcp_port
from test_ibeo_data_diagnostics import FAST, Diagnostics, connected, serving
from test_ibeo_record_times import NTP, S, YEARS, info_and_to_bag, message, stamp_ns

US = S // 1_000_000                             # one microsecond in NTP64
#: the records of one ECU frame, their header times a microsecond apart
FRAME = (0x2807, 0x9002, 0x2604, 0x2808, 0x2807, 0x9002, 0x2604)
#: a topic per record type of FRAME and its message type
TOPICS = {0x2807: ('vehicle_state/odometry', Odometry), 0x9002: ('odometry', IbeoOdometry),
          0x2604: ('gps/fix', NavSatFix), 0x2808: ('vehicle_state/fix', NavSatFix)}


def frame_times(ntp: int) -> list:
    """(data type, header time = record time) of a frame at ``ntp``."""
    return [(dt, ntp + k * US) for k, dt in enumerate(FRAME)]


def frame(ntp: int) -> bytes:
    return b''.join(message(dt, t, t) for dt, t in frame_times(ntp))


def test_installed_node_takes_one_frame_years_off_as_invalid_times(ros, closing):
    """ibeo_ecu, stamp_source sensor, the sensor clock 1000 s behind the host: frames at t,
    t + 5 years (one bad frame), t + 0.1 s and t + 0.2 s in one send: the bad frame's 7
    messages carry their receive time (host time) and are counted as invalid header times;
    the frames after it carry their sensor times (the clock was not re-based)."""
    t = unix_ns_to_ntp64(time.time_ns() - 1000 * 10**9)
    frames = [t, t + YEARS, t + S // 10, t + S // 5]
    port = free_tcp_port()
    diag = Diagnostics(ros)
    before_ns = time.time_ns()          # a receive time is not before the connection
    with NodeProcess('ibeo_ecu', parameters={'port': port, 'data_types': '',
                                             'stamp_source': 'sensor', **FAST},
                     namespace='/step', quiet=True) as proc:
        sensor = serving(closing, port)
        connected(diag)
        subs = {dt: ros.collect(msg_type, f'/step/{topic}', 20)
                for dt, (topic, msg_type) in TOPICS.items()}
        sensor.send(b''.join(frame(f) for f in frames))
        for dt, sub in subs.items():
            want = [(f, ntp) for f in frames for d, ntp in frame_times(f) if d == dt]
            got = [stamp_ns(m) for m in sub.wait_for(len(want), timeout=15.0)]
            end_ns = time.time_ns()
            for (f, ntp), ns in zip(want, got):
                if f == t + YEARS:
                    assert before_ns <= ns <= end_ns, (hex(dt), got)
                else:
                    assert ns == ntp64_to_unix_ns(ntp), (hex(dt), got)
        _, link = diag.wait('link tcp', lambda st, v: v.get('invalid_header_times') == '7')
        assert '+1.58e+08 s from the last valid time' in link['last_invalid_header_time'], link
        assert proc.running()
    assert proc.proc.returncode == 0


def write_frames(path, frames) -> None:
    with IdcWriter(path) as w:
        for f in frames:
            for dt, ntp in frame_times(f):
                w.write(dt, message(dt, ntp, ntp)[24:], device_id=1, ntp=ntp)


def info_and_bag_duration(src) -> tuple:
    """The installed ``info``'s and ``to-bag``'s output on ``src`` (:func:`info_and_to_bag`)
    and the duration (s) in the bag's metadata.yaml."""
    out = info_and_to_bag(src)
    meta = yaml.safe_load((src.parent / 'bag' / 'metadata.yaml').read_text())
    return out, meta['rosbag2_bagfile_information']['duration']['nanoseconds'] / 1e9


def test_installed_info_and_to_bag_count_one_frame_years_off(tmp_path):
    """A second of frames at 25 Hz, the 13th 5 years off: its 7 messages are invalid header
    times (counted by info and to-bag), the span is the frames' 0.96 s, not 5 years."""
    frames = [NTP + k * S // 25 for k in range(25)]
    frames[12] += YEARS
    write_frames(tmp_path / 'frame.idc', frames)
    out, bag_s = info_and_bag_duration(tmp_path / 'frame.idc')
    for command, text in out.items():
        assert '7 messages with an invalid header time' in text, (command, text)
    assert 'duration:  0.960 s' in out['info'], out['info']
    assert 0.95 < bag_s < 0.97, bag_s


def test_installed_info_and_to_bag_count_an_excursion_the_clock_came_back_from(tmp_path):
    """Frames at 10 Hz: a second on the clock, a second 5 years off (long enough to be a
    step), then the clock back where it would be: the 10 frames away are invalid (70
    messages), the span is the 2.9 s of the clock."""
    frames = [NTP + k * S // 10 + (YEARS if 10 <= k < 20 else 0) for k in range(30)]
    write_frames(tmp_path / 'away.idc', frames)
    out, bag_s = info_and_bag_duration(tmp_path / 'away.idc')
    for command, text in out.items():
        assert '70 messages with an invalid header time' in text, (command, text)
        assert 'its clock came back to that' in text, (command, text)
    assert 'duration:  2.900 s' in out['info'], out['info']
    assert 2.89 < bag_s < 2.91, bag_s
