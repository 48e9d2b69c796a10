"""Invalid ibeo header NTP times (0, all ones, a jump of years: core.ntp's rule) are counted
and replaced, the messages kept: the installed ``ibeo_idc to-bag`` writes them at the last
valid time (the first valid one before any), so the bag's log times stay in the recording's
span and its metadata duration is the valid one (read back with rosbags and mcap); ``info``
reports the valid span and the count; the installed ``ibeo_ecu`` / ``ibeo_lux`` stamp such a
message with its receive time and count it on /diagnostics; playing a file, they use the
file's verdict (checked times, one count per invalid time) at any rate; each header device
id has its clock checked on its own.

Byte vectors by the spec's tables: the 24-byte big-endian data header (§2.4: magic
0xAFFEC0C2, size of previous, body size, reserved, device id, data type, NTP64), 0x2604 GPS
(§22: version, NTP64 timestamp, source, 10 doubles, 32 reserved bytes, UINT16), 0x2805 LUX
vehicle state (the codec's encoder).
"""
from __future__ import annotations

import math
import struct
import subprocess
import time

import pytest
import yaml

from sensor_msgs.msg import NavSatFix
from std_srvs.srv import Trigger

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns, unix_ns_to_ntp64
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import vehicle_state as V
from ros_sim_bridge.ibeo.ecu_recording import write_recording
from ros_sim_bridge.ibeo.idc import IdcReader, IdcWriter
from ros_sim_bridge.msg import LuxVehicleState
from ros_sim_bridge.tools.launcher import NodeProcess, executable

from conftest import free_tcp_port
from test_ibeo_data_diagnostics import FAST, Diagnostics, connected, serving
from test_ibeo_idc_play import call

ALL_ONES = (1 << 64) - 1
YEARS = 5 * 365 * 86_400 << 32


def header(data_type: int, size: int, ntp: int) -> bytes:
    """§2.4 data header."""
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, 0, size, 0, 1, data_type, ntp)


def gps_body(record_ntp: int) -> bytes:
    """0x2604 GPS (§22) body whose own time is ``record_ntp`` (0: the header's is used)."""
    return struct.pack('>IQB10d32xH', 1, record_ntp, 7, math.radians(50.0), 0.2, 34.0, 0.5,
                       0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1)


def gps(header_ntp: int, record_ntp: int) -> bytes:
    body = gps_body(record_ntp)
    return header(0x2604, len(body), header_ntp) + body


def lux_vehicle_state(header_ntp: int, record_ntp: int) -> bytes:
    vs = V.LuxVehicleState(record_ntp, 1, 0, 5.0, 0.1, 0.01, 12.0, -3.0, 0.5, 40, 0.1, 0.0,
                           0.002, 0.0)
    body = V.encode_vehicle_state(vs)
    return header(registry.VEHICLE_STATE, len(body), header_ntp) + body


# --- ibeo_idc to-bag / info ------------------------------------------------------------------

def with_bad_times(src, dst) -> tuple[dict, list]:
    """``src`` copied with four header times made invalid: the first message's 0, the first
    device status's all ones, a GPS's 5 years on, the last object list's 0.  Returns
    {index: bad time} and the original entries."""
    with IdcReader(src) as r:
        entries = list(r.entries)
        first = {dt: next(k for k, e in enumerate(entries) if e.data_type == dt)
                 for dt in (0x6701, 0x2604)}
        last_objects = max(k for k, e in enumerate(entries) if e.data_type == 0x2280)
        gps_k = [k for k, e in enumerate(entries) if e.data_type == 0x2604][3]
        bad = {0: 0, first[0x6701]: ALL_ONES, gps_k: entries[gps_k].ntp + YEARS,
               last_objects: 0}
        with IdcWriter(dst, trailer=False) as w:        # the source's trailer is copied
            for k, e in enumerate(entries):
                w.write(e.data_type, r.body(e), device_id=e.device_id, ntp=bad.get(k, e.ntp))
    return bad, entries


def to_bag(src, out) -> subprocess.CompletedProcess:
    done = subprocess.run([str(executable('ibeo_idc')), 'to-bag', str(src), str(out),
                           '--no-progress'], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert 'Traceback' not in done.stderr, done.stderr
    return done


def bag_messages(bag) -> list:
    """(topic, log time, message) in the MCAP's order (mcap reader with the stored schemas)."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    with open(next(bag.glob('*.mcap')), 'rb') as f:
        return [(ch.topic, m.log_time, d) for _, ch, m, d in
                make_reader(f, decoder_factories=[DecoderFactory()])
                .iter_decoded_messages(log_time_order=False)]


def test_installed_to_bag_and_info_replace_invalid_header_times(tmp_path):
    clean, dirty = tmp_path / 'clean.idc', tmp_path / 'dirty.idc'
    write_recording(clean, seconds=1.0, scanners=2, points=200)
    bad, entries = with_bad_times(clean, dirty)
    valid = [ntp64_to_unix_ns(e.ntp) for k, e in enumerate(entries)
             if e.data_type != 0x6120 and k not in bad]
    first_ns, last_ns = min(valid), max(valid)

    done = to_bag(dirty, tmp_path / 'bag')
    to_bag(clean, tmp_path / 'clean_bag')

    from rosbags.highlevel import AnyReader
    counts = []
    for bag in (tmp_path / 'bag', tmp_path / 'clean_bag'):
        with AnyReader([bag]) as reader:
            counts.append({c.topic: c.msgcount for c in reader.connections})
    assert counts[0] == counts[1]                        # nothing dropped

    got = bag_messages(tmp_path / 'bag')
    assert len(got) == sum(counts[0].values())
    log_times = [t for _, t, _ in got]
    assert log_times == sorted(log_times)                # monotonic in file order
    assert first_ns <= min(log_times) and max(log_times) <= last_ns
    for topic, _, msg in got:                            # stamps from a header time as well
        if hasattr(msg, 'header'):
            ns = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            assert first_ns <= ns <= last_ns, (topic, ns)

    meta = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())
    info = meta['rosbag2_bagfile_information']
    assert info['starting_time']['nanoseconds_since_epoch'] == min(log_times)
    assert info['duration']['nanoseconds'] == max(log_times) - min(log_times)
    assert info['duration']['nanoseconds'] < 2 * 10**9
    assert '4 messages with an invalid header time' in done.stdout, done.stdout
    assert f'at byte {entries[0].offset}: 0x{entries[0].data_type:04X}' in done.stdout

    text = subprocess.run([str(executable('ibeo_idc')), 'info', str(dirty)],
                          capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    span = (last_ns - first_ns) / 1e9
    assert f'duration:  {span:.3f} s' in text.stdout, text.stdout
    assert '4 messages with an invalid header time' in text.stdout, text.stdout


# --- file playback ---------------------------------------------------------------------

def test_playback_span_and_seek_skip_invalid_times(tmp_path):
    """IdcPlayer (source:=file): a recording of 0.1 s steps with all ones first, a jump of
    years inside and 0 last has the valid span, every message at a time inside it, seeks by
    it, and only the valid messages are paced."""
    from ros_sim_bridge.ibeo.idc_playback import IdcPlayer
    t0 = 3_900_000_000 << 32
    times = [ALL_ONES] + [t0 + k * (1 << 32) // 10 for k in range(6)] + [0]
    times[3] += YEARS
    with IdcWriter(tmp_path / 'play.idc') as w:
        for t in times:
            w.write(0x2605, b'', ntp=t)                  # a type without layout: size only
    player = IdcPlayer(tmp_path / 'play.idc', lambda raw, entry, checked: None, paused=True)
    try:
        assert player.duration_s == pytest.approx(0.5)
        assert [round(player.time_of(i), 3) for i in range(len(times))] == \
            [0.0, 0.0, 0.1, 0.1, 0.3, 0.4, 0.5, 0.5]
        assert player.index_at(0.35) == 5 and player.index_at(-0.05) == 6
        assert [player._stamp_ns(i) is None for i in range(len(times))] == \
            [True, False, False, True, False, False, False, True]
    finally:
        player.close()


def test_a_recording_of_two_devices_hours_apart_checks_each_clock(tmp_path):
    """An ECU recording of two devices whose clocks are 3 h apart, interleaved: every time
    valid (info, to-bag and playback read the whole file so); the all ones of one and the
    jump of years of the other are invalid, each replaced by its own device's last valid
    time."""
    t0 = 3_900_000_000 << 32
    bases = {1: t0, 2: t0 + (3 * 3600 << 32)}
    bad = {(2, 3): ALL_ONES, (1, 5): t0 + YEARS}
    with IdcWriter(tmp_path / 'two.idc') as w:
        for k in range(8):
            for dev, base in bases.items():
                w.write(0x2605, b'', device_id=dev,
                        ntp=bad.get((dev, k), base + k * (1 << 32) // 10))
    with IdcReader(tmp_path / 'two.idc') as r:
        checked = r.checked_times()
        summary = r.summary()
    assert checked.invalid == [7, 10]                   # (device 2, 3), (device 1, 5)
    assert checked.times[7] == bases[2] + 2 * (1 << 32) // 10
    assert checked.times[10] == bases[1] + 4 * (1 << 32) // 10
    assert summary.invalid_times == 2


def write_clock_behind(path, t0: int) -> list:
    """0x2604s of two devices interleaved, device 1 first, device 2's clock 3 h behind device
    1's (every time valid: each device's clock is checked on its own); their times."""
    times = [t0 - dev * (3 * 3600 << 32) + k * (1 << 32) // 10 for k in range(8)
             for dev in (0, 1)]
    with IdcWriter(path) as w:
        for k, t in enumerate(times):
            w.write(0x2604, gps_body(t), device_id=1 + k % 2, ntp=t)
    return times


def test_playback_of_a_clock_behind_plays_from_the_first_message(tmp_path):
    """IdcPlayer: a recording whose times do not rise (a second device's clock 3 h behind the
    first's) plays from its first message (not from wherever a search of unsorted times
    ended: the third of 16), every message once; a time is sought as the first message in file
    order at or after it, the span runs to the latest time."""
    import threading
    from ros_sim_bridge.ibeo.idc_playback import IdcPlayer
    t0 = 3_900_000_000 << 32
    times = write_clock_behind(tmp_path / 'behind.idc', t0)
    played, ended = [], threading.Event()
    player = IdcPlayer(tmp_path / 'behind.idc', lambda raw, entry, checked:
                       played.append(entry.ntp), rate=0.0,
                       on_end=lambda looping: ended.set())
    try:
        assert player.start_index == 0
        assert player.duration_s == pytest.approx(0.7)
        assert player.index_at(0.0) == 0 and player.index_at(0.25) == 6
        assert player.index_at(-0.05) == 14
        player.start()
        assert ended.wait(10.0)
        assert played == times
    finally:
        player.close()


def test_one_clock_moves_only_a_device_whose_clock_is_another():
    """one_clock: a device whose first time is hours off the latest time before it is moved
    onto the first device's clock; a device that joins later on the same clock, and a clock
    step within a device, are not."""
    from ros_sim_bridge.ibeo.idc_playback import one_clock
    s, h = 10**9, 3600 * 10**9
    times = [0, -3 * h, s, -3 * h + s, 30 * s, 2 * h, 2 * h + s]
    devices = [1, 2, 1, 2, 3, 1, 3]
    assert one_clock(times, devices) == [0, 0, s, s, 30 * s, 2 * h, 2 * h + s]


def test_playback_of_a_clock_behind_is_paced_on_one_clock(tmp_path):
    """IdcPlayer at rate 2: the 0.7 s of two devices whose second clock is 3 h behind take
    about 0.35 s, not a burst (each switch between the clocks was a jump re-anchoring the
    pacing, so nothing was waited for)."""
    import threading
    from ros_sim_bridge.ibeo.idc_playback import IdcPlayer
    write_clock_behind(tmp_path / 'behind.idc', 3_900_000_000 << 32)
    played, ended = [], threading.Event()
    player = IdcPlayer(tmp_path / 'behind.idc', lambda raw, entry, checked:
                       played.append(time.monotonic()), rate=2.0,
                       on_end=lambda looping: ended.set())
    try:
        player.start()
        assert ended.wait(10.0)
    finally:
        player.close()
    assert len(played) == 16 and 0.25 < played[-1] - played[0] < 5.0, played[-1] - played[0]


def test_installed_node_plays_every_message_of_a_clock_behind(ros, tmp_path):
    """ibeo_ecu, source:=file: the recording of two devices whose second clock is 3 h behind
    the first is played whole (16 fixes, 16 played on /diagnostics), each stamped with its
    own device's time."""
    t0 = unix_ns_to_ntp64(time.time_ns() - 86_400 * 10**9)
    times = write_clock_behind(tmp_path / 'behind.idc', t0)
    diag = Diagnostics(ros)
    with NodeProcess('ibeo_ecu', parameters={'source': 'file',
                                             'file': str(tmp_path / 'behind.idc'),
                                             'rate': 0.0, 'start_paused': True,
                                             'stamp_source': 'sensor', **FAST},
                     namespace='/behind', quiet=True) as proc:
        got = ros.collect(NavSatFix, '/behind/gps/fix', 100)
        assert call(ros, Trigger, '/behind/ibeo_ecu/resume').success
        _, link = diag.wait('link file', lambda st, v: v.get('state') == 'finished')
        assert link['messages_played'] == '16', link
        msgs = got.wait_for(len(times), timeout=30.0)
        assert [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs] == \
            [ntp64_to_unix_ns(t) for t in times]
        assert proc.running()
    assert proc.proc.returncode == 0


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


def test_installed_node_plays_the_files_checked_times_at_any_rate(ros, tmp_path):
    """ibeo_ecu, source:=file, as fast as possible, stamp_source sensor: a recording with a
    gap of 2 minutes and one header time of 0 is stamped with its checked times (the
    recorded ones; the invalid one: the last valid time before it), and /diagnostics counts
    the one invalid time only (the file's verdict, not a second check of the gap against the
    wall clock)."""
    t0 = unix_ns_to_ntp64(time.time_ns() - 86_400 * 10**9)        # recorded yesterday
    times = [t0 + k * (1 << 32) // 10 for k in range(10)]
    times += [t0 + (120 << 32) + k * (1 << 32) // 10 for k in range(10)]
    times[14] = 0
    with IdcWriter(tmp_path / 'gap.idc') as w:
        for t in times:
            w.write(0x2604, gps_body(t), device_id=1, ntp=t)
    expected = [ntp64_to_unix_ns(t or times[13]) for t in times]
    diag = Diagnostics(ros)
    with NodeProcess('ibeo_ecu', parameters={'source': 'file', 'file': str(tmp_path / 'gap.idc'),
                                             'rate': 0.0, 'start_paused': True,
                                             'stamp_source': 'sensor', **FAST},
                     namespace='/gap', quiet=True) as proc:
        got = ros.collect(NavSatFix, '/gap/gps/fix', 100)
        assert call(ros, Trigger, '/gap/ibeo_ecu/resume').success
        msgs = got.wait_for(len(times), timeout=30.0)
        assert [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs] == expected
        _, link = diag.wait('link file', lambda st, v: v.get('state') == 'finished')
        assert link['invalid_header_times'] == '1', link
        assert 'time 0' in link['last_invalid_header_time'], link
        assert proc.running()
    assert proc.proc.returncode == 0
