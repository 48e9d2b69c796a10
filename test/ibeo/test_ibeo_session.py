"""LuxSession without ROS or sockets: bytes in, events out, bytes to send.

Messages are written by hand from the spec's tables: the 24-byte big-endian data header
(§2.4), little-endian bodies (0x2202 §3, 0x2010/0x2020 §7).
"""
import struct

import pytest

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo.codec import commands as C
from ros_sim_bridge.ibeo.session import (NTP_2000, LuxSession, Message, Reply, Scan,
                                         UnpairedHalf)

SENSOR_NTP = (NTP_2000 + 800_000_000) << 32        # a set sensor clock (2025)
NOW = 1_750_000_000_000_000_000


def header(data_type, size, ntp=0):
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, 0, size, 0, 3, data_type, ntp)


def scan(number, mirror_side=0, ntp=SENSOR_NTP):
    """0x2202 with one point; scan flags bit 0x0400 = mirror side (rear)."""
    body = struct.pack('<HHHQQHhhHhhhhhhH', number, 0x0008, 0, ntp, ntp + (1 << 28), 11520,
                       100, -100, 1, 0, 0, 0, 0, 0, 0, 0x0400 if mirror_side else 0)
    body += struct.pack('<BBhHHH', 0x01, 0, 0, 1234, 40, 0)
    return header(0x2202, len(body), ntp) + body


def reply(body):
    return header(0x2020, len(body)) + body


def kinds(events):
    return [type(e).__name__ for e in events]


def messages(events):
    """Kinds of the events about messages (not the framer's skipped-bytes reports)."""
    return [k for k in kinds(events) if k != 'CodecError']


def test_send_command_bytes_by_the_spec_table():
    s = LuxSession(layers=4)
    out = s.send_command(C.START_MEASURE)
    # header: magic, 0, size 4, 0, device 0, type 0x2010; body: command id 0x0020, reserved 0
    assert out == bytes.fromhex('AFFEC0C2 00000000 00000004 00 00 2010 0000000000000000'
                                '2000 0000')
    assert s.pending_command == C.START_MEASURE and s.commands_sent == 1
    get = s.send_command(C.GET_PARAMETER, C.encode_get_parameter(C.DEVICE_TYPE))
    assert get[24:] == bytes.fromhex('1100 0000 0133')        # id, reserved, index 0x3301
    s.send_command(C.RESET, expect_reply=False)
    assert s.pending_command is None


def test_reply_pairing_solicited_unsolicited_and_malformed():
    s = LuxSession(layers=4)
    s.send_command(C.GET_PARAMETER, C.encode_get_parameter(C.DEVICE_TYPE))
    # GetParameter reply: id 0x0011, index 0x3301, value 0x00000018 (LUX4 8 lines)
    (ev,) = s.receive_data(reply(bytes.fromhex('1100 0133 18000000')), NOW)
    assert isinstance(ev, Reply) and ev.solicited
    assert ev.reply.parameter.index == 0x3301 and ev.reply.parameter.value == 0x18
    (other,) = s.receive_data(reply(bytes.fromhex('2000')), NOW)   # start measure: not asked
    assert not other.solicited and s.unsolicited_replies == 1
    # a GetParameter reply too short for its index and value: bad input and a failed command
    events = s.receive_data(reply(bytes.fromhex('1100 01')), NOW)
    assert messages(events) == ['BadMessage', 'ReplyFailed']
    assert events[1].command_id == C.GET_PARAMETER
    s.command_done()
    assert messages(s.receive_data(reply(bytes.fromhex('1100 01')), NOW)) == ['BadMessage']
    # a failed reply (id | 0x8000) answers the pending command too
    s.send_command(C.SAVE_CONFIG)
    (failed,) = s.receive_data(reply(bytes.fromhex('0480')), NOW)
    assert failed.solicited and not failed.reply.success


def test_layer_probe():
    s = LuxSession()
    assert not s.eight_layer and s.detected_eight is None
    assert s.apply_device_type(None) is None and not s.eight_layer
    eight = C.LuxReply(C.GET_PARAMETER, parameter=C.ParameterValue.from_raw(C.DEVICE_TYPE, 0x18))
    assert s.apply_device_type(eight) is True and s.eight_layer and s.device_type == 0x18
    tilt = C.LuxReply(C.GET_PARAMETER, parameter=C.ParameterValue.from_raw(C.BEAM_TILT, 160))
    s.apply_beam_tilt(tilt)
    assert s.beam_tilt == pytest.approx(0.016)             # 1e-4 rad per count
    s.apply_beam_tilt(C.failure(C.GET_PARAMETER))
    assert s.beam_tilt == pytest.approx(0.016)
    four = C.LuxReply(C.GET_PARAMETER, parameter=C.ParameterValue.from_raw(C.DEVICE_TYPE, 0x10))
    assert s.apply_device_type(four) is False and not s.eight_layer
    assert LuxSession(layers=8).eight_layer and not LuxSession(layers=4).eight_layer
    with pytest.raises(ValueError):
        LuxSession(layers=6)


def test_mirror_sides_pair_across_the_scan_number_wrap():
    s = LuxSession(layers=8)
    stream = scan(0xFFFE, 0) + scan(0xFFFF, 1) + scan(0x0000, 0) + scan(0x0001, 1)
    events = s.receive_data(stream, NOW)
    assert [(e.scan.scan_number, e.pairing) for e in events] == [
        (0xFFFE, 'first'), (0xFFFF, 'second'), (0x0000, 'first'), (0x0001, 'second')]
    assert all(e.eight_layer for e in events) and s.unpaired_halves == 0


def test_unpaired_halves_are_reported_and_counted():
    s = LuxSession(layers=8)
    events = s.receive_data(scan(10, 0) + scan(12, 1) + scan(13, 1) + scan(14, 0), NOW)
    assert kinds(events) == ['Scan', 'UnpairedHalf', 'Scan', 'UnpairedHalf', 'Scan', 'Scan']
    assert [e.scan.scan_number for e in events if isinstance(e, UnpairedHalf)] == [10, 12]
    assert events[-1].pairing == 'second' and s.unpaired_halves == 2
    s.receive_data(scan(20, 0), NOW)
    (lost,) = s.connection_lost()
    assert isinstance(lost, UnpairedHalf) and lost.scan.scan_number == 20
    assert s.connection_lost() == []


def test_four_layers_or_no_merging_gives_single_scans():
    for s in (LuxSession(layers=4), LuxSession(layers=8, merge_mirror_sides=False)):
        events = s.receive_data(scan(1, 0) + scan(2, 1), NOW)
        assert [e.pairing for e in events] == ['single', 'single']
        assert events[0].wire['distance'][0] == 1234


def test_sensor_clock_rule_and_stamps():
    s = LuxSession(layers=4)
    s.receive_data(scan(1, ntp=SENSOR_NTP), NOW)
    assert s.sensor_clock_set is True
    assert s.time_offset_s == pytest.approx((800_000_000 + 946_684_800) - NOW / 1e9, abs=1e-3)
    assert s.stamp_ns(SENSOR_NTP, NOW, 'sensor') == ((800_000_000 + 946_684_800) * 10**9, False)
    powered_up = 1234 << 32                                   # 1234 s since power-up
    # the clock reset: scans 0.25 s apart, by their times and received so
    events = [e for k in (2, 3, 4)
              for e in s.receive_data(scan(k, ntp=powered_up + k * (1 << 30)),
                                      NOW + k * 250_000_000)]
    assert kinds(events) == ['InvalidTime', 'Scan', 'InvalidTime', 'Scan', 'Scan']
    assert [e.time_valid for e in events if isinstance(e, Scan)] == [False, False, True]
    assert s.invalid_times == 2       # a step of the clock: taken once 3 times span 0.5 s
    assert s.sensor_clock_set is False
    assert s.stamp_ns(powered_up, NOW, 'sensor') == (NOW, True)
    assert s.stamp_ns(SENSOR_NTP, NOW, 'receive') == (NOW, False)


def test_a_set_clock_command_takes_the_next_step_at_once():
    """After SetNTPTimestampSync the first time of the new base is valid (no InvalidTime);
    without it, a step of years is invalid."""
    s = LuxSession(layers=4)
    s.receive_data(scan(1, ntp=1234 << 32), NOW)
    assert kinds(s.receive_data(scan(2, ntp=SENSOR_NTP), NOW)) == ['InvalidTime', 'Scan']
    s.connection_made()
    s.receive_data(scan(3, ntp=1234 << 32), NOW)
    s.send_command(C.SET_NTP_TIMESTAMP_SYNC, C.encode_set_ntp_time(SENSOR_NTP >> 32, 0))
    assert kinds(s.receive_data(set_ntp_reply() + scan(4, ntp=SENSOR_NTP), NOW)) == \
        ['Reply', 'Scan']
    assert s.sensor_clock_set is True and s.invalid_times == 1


def set_ntp_reply(refused: bool = False) -> bytes:
    """0x2020 answering SetNTPTimestampSync (§7.1: the command id, bit 15 set when refused)."""
    return reply(struct.pack('<H', 0x0034 | (0x8000 if refused else 0)))


def test_a_clock_set_to_its_own_time_expects_no_step_after_its_next_time():
    """The normal sync: the clock set to about the time it had.  The next time is within the
    bound and ends the expected step, so a corrupt time hours later is invalid and the good
    times after it are valid (not the corrupt one taken as a new time base)."""
    s = LuxSession(layers=4)
    s.receive_data(scan(1), NOW)
    s.send_command(C.SET_NTP_TIMESTAMP_SYNC, C.encode_set_ntp_time(SENSOR_NTP >> 32, 0))
    assert kinds(s.receive_data(set_ntp_reply() + scan(2, ntp=SENSOR_NTP + (1 << 28)),
                                NOW)) == ['Reply', 'Scan']
    later = NOW + 10**9
    events = s.receive_data(scan(3, ntp=SENSOR_NTP + (5 * 3600 << 32))
                            + scan(4, ntp=SENSOR_NTP + (1 << 32))
                            + scan(5, ntp=SENSOR_NTP + (5 << 29)), later)
    assert kinds(events) == ['InvalidTime', 'Scan', 'Scan', 'Scan']
    assert [e.time_valid for e in events if isinstance(e, Scan)] == [False, True, True]
    assert s.invalid_times == 1


def test_a_refused_clock_set_expects_no_step():
    """The sensor refused SetNTPTimestampSync: its clock did not change, so a time of a new
    base is a jump as without the command."""
    s = LuxSession(layers=4)
    s.receive_data(scan(1, ntp=1234 << 32), NOW)
    s.send_command(C.SET_NTP_TIMESTAMP_SYNC, C.encode_set_ntp_time(SENSOR_NTP >> 32, 0))
    assert kinds(s.receive_data(set_ntp_reply(refused=True) + scan(2, ntp=SENSOR_NTP), NOW)) \
        == ['Reply', 'InvalidTime', 'Scan']


def device_scan(number: int, device_id: int, ntp: int) -> bytes:
    """:func:`scan` from header device ``device_id`` (§2.4: the u8 after the reserved byte)."""
    raw = bytearray(scan(number, ntp=ntp))
    raw[13] = device_id
    return bytes(raw)


def test_each_device_has_its_own_clock():
    """An ECU forwarding two scanners whose clocks are hours apart, interleaved: every time
    valid; a corrupt time of either is still caught."""
    s = LuxSession(layers=4)
    other = SENSOR_NTP + (3 * 3600 << 32)
    stream = [(1, SENSOR_NTP + k * (1 << 28)) for k in range(6)]
    stream = [m for k, (d, t) in enumerate(stream) for m in ((1, t), (2, other + k * (1 << 28)))]
    stream[5] = (2, 0)                               # device 2: no time
    stream[8] = (1, SENSOR_NTP + (900 << 32))        # device 1: a quarter of an hour on
    raw = b''.join(device_scan(k, d, t) for k, (d, t) in enumerate(stream))
    scans = [e for e in s.receive_data(raw, NOW) if isinstance(e, Scan)]
    assert [k for k, e in enumerate(scans) if not e.time_valid] == [5, 8]
    assert s.invalid_times == 2


def test_unhandled_types_are_skipped_and_counted_bad_bodies_reported():
    s = LuxSession(layers=4)
    events = s.receive_data(header(0x2209, 3) + b'abc' + header(0x7100, 0), NOW)
    assert kinds(events) == ['Skipped', 'Skipped']
    assert s.skipped == {'0x2209 ecu_scan_2209': 1, '0x7100 sensor_info': 1}
    # a 0x2202 announcing 5 points with 1 present, then a good scan: both seen, in order
    bad = bytearray(scan(7))
    struct.pack_into('<H', bad, 24 + 28, 5)
    events = s.receive_data(bytes(bad) + scan(8), NOW)
    assert kinds(events) == ['BadMessage', 'Scan']      # skipped whole: its bytes no garbage
    assert events[0].header.data_type == 0x2202 and events[1].scan.scan_number == 8
    assert s.framer.garbage_bytes == 0
    garbage = s.receive_data(b'junk' + scan(9), NOW)
    assert isinstance(garbage[0], CodecError) and garbage[1].scan.scan_number == 9


def test_other_data_messages_come_as_records():
    s = LuxSession(layers=4)
    ew = header(0x2030, 16, SENSOR_NTP) + bytes(16)
    (ev,) = s.receive_data(ew, NOW)
    assert isinstance(ev, Message) and type(ev.record).__name__ == 'LuxErrorsWarnings'
    assert s.sensor_clock_set is True


def test_connection_made_forgets_the_old_stream():
    s = LuxSession(layers=8)
    s.send_command(C.GET_STATUS)
    s.receive_data(scan(1, 0) + scan(2, 1)[:30], NOW)
    s.connection_made()
    assert s.pending_command is None and s.framer.buffered == 0
    (ev,) = s.receive_data(scan(2, 1), NOW)
    assert ev.pairing == 'first'                     # the half before the reconnect is gone


# --- ECU / FUSION (spec §20, §22) ------------------------------------------------------------

def test_set_filter_bytes_are_the_documents_example():
    from ros_sim_bridge.ibeo.codec.set_filter import SetFilter
    s = LuxSession(layers=4)
    out = s.send_set_filter(SetFilter(((0x2202, 0x220F),)))
    # §20 example 2: the Ibeo header, then 00 05 00 02 2202 220f (big-endian)
    assert out == bytes.fromhex('affec0c2 00000000 00000008 00 00 2010 0000000000000000'
                                '0005 0002 2202 220f')
    assert s.pending_command == 0x0005 and s.commands_sent == 1


def test_set_filter_answer_is_paired_big_endian():
    from ros_sim_bridge.ibeo.codec.set_filter import SetFilter
    s = LuxSession(layers=4)
    s.send_set_filter(SetFilter())
    (ev,) = s.receive_data(reply(bytes.fromhex('0005')), NOW)      # §20: "reply data 0x0005"
    assert isinstance(ev, Reply) and ev.solicited
    assert ev.reply.command_id == 0x0005 and ev.reply.success
    s.send_set_filter(SetFilter())
    (ev,) = s.receive_data(reply(bytes.fromhex('8005')), NOW)      # refused (failure bit)
    assert ev.solicited and ev.reply.command_id == 0x0005 and not ev.reply.success
    s.command_done()
    (ev,) = s.receive_data(reply(bytes.fromhex('0005')), NOW)      # nothing asked: unsolicited
    assert not ev.solicited and s.unsolicited_replies == 1


def test_ecu_types_come_as_records_unknown_ones_skipped():
    # 0x2604 by the §22 table: u32 µs, NTP64, u8 device, 10 × f64, 32 reserved, u16 source
    body = struct.pack('>IQB10d32xH', 5_000_000, SENSOR_NTP, 7, 0.9, 0.2, 34.0, 0.5, 0.6, 1.0,
                       0.1, 0.01, 0.2, 0.02, 8)
    assert len(body) == 127
    s = LuxSession(layers=4)
    events = s.receive_data(header(0x2604, len(body), SENSOR_NTP) + body
                            + header(0x2850, 4) + b'\x00\x01\x02\x03', NOW)
    assert kinds(events) == ['Message', 'Skipped']
    gps = events[0].record
    assert type(gps).__name__ == 'PositionWgs84'
    assert (gps.device_id, gps.latitude, gps.longitude, gps.source_type) == (7, 0.9, 0.2, 8)
    assert s.skipped == {'0x2850 ecu_2850': 1}
