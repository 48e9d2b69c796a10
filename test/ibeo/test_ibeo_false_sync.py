"""A message cut short by its sender must not take the valid messages after it along
(issue #10 defect 5; spec §2.4 "to resync just search for the magic word", SUPPLEMENT §3.3).

The streams are built by hand from the spec's tables: the 24-byte big-endian data header
(§2.4) in front of little-endian (LUX) or big-endian (ECU) bodies.  The framer alone, and the
installed ``ibeo_ecu`` over real TCP, read on real /diagnostics.
"""
import struct

import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, OVERSIZED, TRUNCATED, CodecError
from ros_sim_bridge.core.framer import Frame, Rejected
from ros_sim_bridge.ibeo.codec import objects as O
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo.codec.framing import make_framer

from conftest import free_tcp_port, wait_until
from test_ibeo_data_diagnostics import NTP, Diagnostics, connected, gps, installed, serving


def header(data_type: int, size: int, ntp: int = 0, previous: int = 0) -> bytes:
    """§2.4: magic, size of previous, size of this body, reserved, device id, type, NTP64."""
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, previous, size, 0, 0, data_type, ntp)


def scan_body(number: int, count: int = 2) -> bytes:
    """A 0x2202 body (§3) with ``count`` points, by the table: 44-byte scan header, 10-byte
    points."""
    head = struct.pack('<HHHQQHhhHhhhhhhH', number, 0x0008, 0, 0, 0, 11520, 100, -100, count,
                       0, 0, 0, 0, 0, 0, 0)
    assert len(head) == 44
    points = struct.pack('<BBhHHH', 0x01, 0, 0, 1000 + number, 40, 0) * count
    return head + points


def scan_msg(number: int) -> bytes:
    """A complete 0x2202 message: 24 + 64 = 88 bytes."""
    return header(0x2202, 64) + scan_body(number)


def objects_body_544() -> bytes:
    """A real 0x2221 body of exactly 544 bytes: 10 + 5 objects × 58 + 61 contour points × 4."""
    counts = [13, 12, 12, 12, 12]
    lst = O.LuxObjectList(0, O.make_objects(5), [np.full((k, 2), 0.5) for k in counts])
    body = O.encode_objects(lst)
    assert len(body) == 544
    return body


def issue_stream() -> tuple[bytes, list[int]]:
    """The issue's reproducer: an 0x2221 declaring 544 bytes of which 200 arrive, then three
    complete scans (all inside the declared window) and a fourth after it."""
    cut = header(0x2221, 544) + objects_body_544()[:200]
    scans = [scan_msg(n) for n in (1, 2, 3, 4)]
    assert sum(map(len, scans[:3])) < 344 < sum(map(len, scans))   # 3 inside, the 4th across
    return cut + b''.join(scans), [1, 2, 3, 4]


def scan_numbers(events):
    return [e.record[0].scan_number for e in events
            if isinstance(e, Frame) and e.parsed.data_type == 0x2202]


def test_issue_reproducer_every_scan_in_the_window_is_framed():
    stream, want = issue_stream()
    events = make_framer().feed(stream)
    assert scan_numbers(events) == want
    cut = [e for e in events if isinstance(e, CodecError) and e.kind == TRUNCATED]
    assert len(cut) == 1 and 'cut short' in cut[0].detail


def test_issue_reproducer_dribbled_byte_by_byte_and_in_odd_reads():
    stream, want = issue_stream()
    for step in (1, 7, 97, 333):
        f = make_framer()
        events = []
        for k in range(0, len(stream), step):
            events += f.feed(stream[k:k + step])
        assert scan_numbers(events) == want, step
        assert f.false_syncs == 1


def test_scans_in_a_cut_window_are_held_until_its_declared_end_shows_no_header():
    # a header running past the declared end may be payload (issue #26): the bytes at that end
    # decide, so the scans wait for its first byte (not for a header there, nor any longer)
    stream, _ = issue_stream()
    end = 24 + 544
    assert stream[end] != 0xAF                      # scan 4's body bytes: no magic word
    f = make_framer()
    assert scan_numbers(f.feed(stream[:end])) == []
    events = f.feed(stream[end:end + 1])
    assert scan_numbers(events) == [1, 2, 3]
    assert [e.kind for e in events if isinstance(e, CodecError)] == [TRUNCATED]


def lux_object(contour: bytes, number: int = 1) -> bytes:
    """A §4 object by its table (58 bytes, little-endian): id, age, prediction age, relative
    time, reference point, its sigma, closest point, bounding box centre, width, length, object
    box centre, size, orientation, absolute velocity, its sigma, relative velocity,
    classification, its age and certainty, contour count; then the contour (Point2D, cm)."""
    assert len(contour) % 4 == 0
    fixed = struct.pack('<4H8h2H2h2Hh2h2H2h4H', number, 10, 0, 5, 1000, -200, 10, 10,
                        900, -250, 1000, -200, 150, 400, 1000, -200, 400, 150, 0, 100, 0, 5, 5,
                        0, 0, 5, 3, 50, len(contour) // 4)
    assert len(fixed) == 58
    return fixed + contour


def phantom_objects_msg() -> bytes:
    """A 0x2221 (§4) of one object whose contour bytes hold the magic word and a plausible
    0x2202 header (a phantom) declaring 304 body bytes: that message would run 296 bytes past
    the object list's end."""
    phantom = header(0x2202, 44 + 10 * 26)
    contour = struct.pack('<4h', 100, -50, 110, -40) + phantom + struct.pack('<2h', 120, -30)
    body = struct.pack('<QH', NTP, 1) + lux_object(contour)
    at = 24 + 10 + 58 + 8
    assert at + 24 + 304 > 24 + len(body)
    return header(0x2221, len(body), NTP) + body


def test_a_complete_object_list_holding_a_phantom_header_is_framed():
    """Issue #26: the object list arrived whole and a valid header follows it, so the phantom
    in its contour is payload: the list is framed (was dropped as cut short), its contour
    decoded as sent, and the stream after it stays in step, split at every byte and in odd
    reads."""
    objects = phantom_objects_msg()
    stream = scan_msg(1) + objects + scan_msg(2) + scan_msg(3)
    for how, events in feeds(stream, 1 << 20):
        assert [e.parsed.data_type for e in events] == [0x2202, 0x2221, 0x2202, 0x2202], how
        assert all(isinstance(e, Frame) for e in events), how
        assert scan_numbers(events) == [1, 2, 3], how
        lst = events[1].record
        assert events[1].body == objects[24:], how
        contour = lst.contours[0]
        assert len(contour) == 9 and tuple(contour[0]) == (100, -50), how
        assert tuple(contour[-1]) == (120, -30), how


def test_the_stream_ending_right_after_a_message_holding_a_phantom_hands_it_on():
    """The stream's end is the message's boundary: finish() hands on the object list that
    waited for the bytes after it; cut_short() then has nothing to report."""
    stream = scan_msg(1) + phantom_objects_msg()
    for step in (1, 7, len(stream)):
        f = make_framer()
        events = [e for k in range(0, len(stream), step) for e in f.feed(stream[k:k + step])]
        assert [e.parsed.data_type for e in events] == [0x2202], step
        (last,) = f.finish()
        assert isinstance(last, Frame) and last.parsed.data_type == 0x2221, step
        assert f.cut_short() is None and f.buffered == 0 and f.false_syncs == 0, step


def test_body_that_fails_to_decode_is_a_false_sync():
    # the window ends exactly where the three scans end (nothing crosses it), but the object
    # list announces 5 objects it does not hold: decoding fails, the search resumes after the
    # failed message's magic and finds the scans
    scans = b''.join(scan_msg(n) for n in (1, 2, 3))
    body = objects_body_544()[:200] + scans
    stream = header(0x2221, len(body)) + body + scan_msg(4)
    f = make_framer()
    events = f.feed(stream)
    assert scan_numbers(events) == [1, 2, 3, 4]
    (rejected,) = [e for e in events if isinstance(e, Rejected)]
    assert rejected.frame.parsed.data_type == 0x2221 and rejected.error.kind == TRUNCATED
    assert f.false_syncs == 1


def test_a_nested_complete_header_inside_a_valid_body_stays_payload():
    # a plausible header wholly inside a body (its message ends inside it) is not a cut
    inner = header(0x2020, 2) + b'\x21\x00'
    unknown = header(0x7100, len(inner) + 4) + inner + b'tail'
    stream = unknown + scan_msg(9)
    events = make_framer().feed(stream)
    fs = [e for e in events if isinstance(e, Frame)]
    assert [e.parsed.data_type for e in fs] == [0x7100, 0x2202]
    assert not [e for e in events if not isinstance(e, Frame)]


def test_header_decoded_once_and_body_decoded_once():
    stream, _ = issue_stream()
    for e in make_framer().feed(stream):
        if isinstance(e, Frame):
            assert e.parsed.size == len(e.body)
            scan, wire = e.record
            assert isinstance(scan, S.LuxScan) and wire.dtype == S.WIRE_POINT_DTYPE


def test_a_well_framed_bad_message_is_skipped_whole_and_counted_once():
    # a 0x2202 by the tables whose scan header announces 5 points with 2 present: no
    # plausible header inside it, so it is one Rejected and the next scan starts where it ends
    body = bytearray(scan_body(2))
    struct.pack_into('<H', body, 28, 5)                 # §3: number of scan points at 28
    stream = scan_msg(1) + header(0x2202, len(body)) + bytes(body) + scan_msg(3)
    for step in (1, 5, 88, len(stream)):
        f = make_framer()
        events = []
        for k in range(0, len(stream), step):
            events += f.feed(stream[k:k + step])
        assert scan_numbers(events) == [1, 3], step
        assert [type(e).__name__ for e in events] == ['Frame', 'Rejected', 'Frame'], step
        assert (f.garbage_bytes, f.false_syncs, f.buffered) == (0, 0, 0), step


# --- a well-framed message above the framer's limit (max_message_bytes) -----------------------

def objects_2280_body(count: int, magic_every: int = 0) -> bytes:
    """A 0x2280 body by the §11 tables: mid-scan NTP64 and object count, then ``count`` objects
    of 170 bytes without contour points (65,535 of them: 11,140,960 bytes, which the spec
    allows).  With ``magic_every``, each such object's existence measurement (FLOAT32 at 164)
    holds the bytes of the magic word (a tiny negative float)."""
    obj = bytearray(170)
    objs = []
    for k in range(count):
        struct.pack_into('>H', obj, 0, k)                          # object id
        struct.pack_into('>I', obj, 164, 0xAFFEC0C2 if magic_every and k % magic_every == 0
                         else 0)
        objs.append(bytes(obj))
    return struct.pack('>QH', 0, count) + b''.join(objs)


def oversized_stream(count: int = 100) -> tuple[bytes, int]:
    """(scan 1, a 0x2280 of ``count`` objects with magic words inside, scan 2; its body size)."""
    body = objects_2280_body(count, magic_every=7)
    return scan_msg(1) + header(0x2280, len(body)) + body + scan_msg(2), len(body)


def test_oversized_well_framed_message_is_skipped_whole_and_counted_once():
    stream, size = oversized_stream()
    f = make_framer(max_body=4096)
    events = f.feed(stream)
    assert scan_numbers(events) == [1, 2]
    (err,) = [e for e in events if isinstance(e, CodecError)]
    assert err.kind == OVERSIZED
    assert '0x2280' in err.detail and str(size) in err.detail and '4096' in err.detail
    assert (f.garbage_bytes, f.false_syncs, f.buffered) == (0, 0, 0)


def test_oversized_message_split_at_every_byte_and_in_odd_reads():
    stream, _ = oversized_stream(30)
    for cut in range(len(stream) + 1):
        f = make_framer(max_body=1024)
        events = f.feed(stream[:cut]) + f.feed(stream[cut:])
        assert scan_numbers(events) == [1, 2], cut
        assert [e.kind for e in events if isinstance(e, CodecError)] == [OVERSIZED], cut
        assert f.buffered == 0, cut
    for step in (1, 3, 23, 24, 25, 97, 1000):
        f = make_framer(max_body=1024)
        events = []
        for k in range(0, len(stream), step):
            events += f.feed(stream[k:k + step])
            assert f.buffered <= 24 + 1024, step        # the body is never collected
        assert scan_numbers(events) == [1, 2], step
        assert [e.kind for e in events if isinstance(e, CodecError)] == [OVERSIZED], step


def test_oversized_message_cut_short_ends_the_skip_at_the_first_confirmed_message():
    # the 0x2280's header is in sync but only 500 of its body bytes arrive: the scans after
    # them (inside its declared span) decode, so the skip ends at the first one
    body = objects_2280_body(100)
    stream = scan_msg(1) + header(0x2280, len(body)) + body[:500] + b''.join(
        scan_msg(n) for n in range(2, 12))
    for step in (1, 50, len(stream)):
        f = make_framer(max_body=4096)
        events = []
        for k in range(0, len(stream), step):
            events += f.feed(stream[k:k + step])
        assert scan_numbers(events) == list(range(1, 12)), step
        assert [e.kind for e in events if isinstance(e, CodecError)] == [OVERSIZED, TRUNCATED]


def scan_2205_over_its_bound() -> bytes:
    """A 0x2205 (§9: 24-byte scan header, 148-byte scanner infos, 28-byte points) of 65,535
    points and 2,000,000 body bytes: more than the most a 0x2205 can hold (255 scanner infos
    and 65,535 points: 1,872,744 bytes) and more than a 1 MiB limit."""
    body = struct.pack('>QIIHHB3x', 0, 80_000, 0x800, 1, 65_535, 1).ljust(2_000_000, b'\0')
    return header(0x2205, len(body)) + body


def test_a_2205_over_the_limit_and_its_types_bound_is_oversized_not_a_false_sync():
    # the type's bound is not checked first: the limit's OVERSIZED, skipped by its size
    stream = scan_msg(1) + scan_2205_over_its_bound() + scan_msg(2)
    for step in (len(stream), 4096, 65_537):
        f = make_framer(max_body=1 << 20)
        events = [e for k in range(0, len(stream), step) for e in f.feed(stream[k:k + step])]
        assert scan_numbers(events) == [1, 2], step
        (err,) = [e for e in events if isinstance(e, CodecError)]
        assert err.kind == OVERSIZED and '0x2205' in err.detail and '2000000' in err.detail
        assert (f.garbage_bytes, f.false_syncs, f.buffered) == (0, 0, 0), step


def test_oversized_header_out_of_sync_is_a_false_sync_not_skipped():
    # after garbage the header may be a magic word inside a payload: searched on from the
    # next byte, so the scan right after it survives
    stream = b'junk' + header(0x2280, 1 << 20) + scan_msg(5)
    events = make_framer(max_body=4096).feed(stream)
    assert scan_numbers(events) == [5]


def feeds(stream: bytes, max_body: int):
    """The events of ``stream`` fed whole, split at every byte position and in odd read sizes
    (each with a fresh framer): (how it was fed, events)."""
    for cut in range(len(stream) + 1):
        f = make_framer(max_body=max_body)
        yield f'cut {cut}', f.feed(stream[:cut]) + f.feed(stream[cut:])
    for step in (1, 3, 23, 25, 97, 1001):
        f = make_framer(max_body=max_body)
        yield f'step {step}', [e for k in range(0, len(stream), step)
                               for e in f.feed(stream[k:k + step])]


def test_oversized_body_holding_a_header_that_runs_past_its_end_is_skipped_whole():
    # a 0x2280 of 17 objects (2,900 bytes, limit 1,000) whose payload holds, in object 15, the
    # bytes of a plausible 0x2202 header declaring 900 bytes: it would end 584 bytes past the
    # 0x2280's declared end and swallow the three scans there.  The 0x2280's end is a real
    # boundary (a plausible header stands there), so that header is payload
    body = bytearray(objects_2280_body(17))
    inner = 10 + 15 * 170
    body[inner:inner + 24] = header(0x2202, 900)
    assert inner + 24 + 900 > len(body) + 3 * 88       # runs past all three scans
    stream = header(0x2280, len(body)) + bytes(body) + b''.join(scan_msg(n) for n in (1, 2, 3))
    for how, events in feeds(stream, 1000):
        assert scan_numbers(events) == [1, 2, 3], how
        assert [e.kind for e in events if isinstance(e, CodecError)] == [OVERSIZED], how


def test_oversized_message_cut_short_inside_a_message_that_runs_past_its_end():
    # the 0x2280 declares 2,900 bytes, 2,850 arrive; scan 2 starts there and runs past the
    # declared end (no plausible header at that end), and scan 3's header follows it: scan 2 is
    # confirmed, the skip ends there
    body = objects_2280_body(17)
    stream = header(0x2280, len(body)) + body[:2850] + b''.join(
        scan_msg(n) for n in (2, 3, 4))
    for how, events in feeds(stream, 1000):
        assert scan_numbers(events) == [2, 3, 4], how
        assert [e.kind for e in events if isinstance(e, CodecError)] == [OVERSIZED, TRUNCATED], how


def test_a_header_of_a_type_outside_the_ibeo_range_is_one_false_sync():
    # docs/ibeo.md: a false sync, one error (not a bad value and bad magic too); the bytes skipped
    # to the next magic word are part of it
    stream = scan_msg(1) + header(0x0042, 16) + bytes(16) + scan_msg(2)
    for step in (1, 7, len(stream)):
        f = make_framer()
        events = [e for k in range(0, len(stream), step) for e in f.feed(stream[k:k + step])]
        assert scan_numbers(events) == [1, 2], step
        (err,) = [e for e in events if isinstance(e, CodecError)]
        assert err.kind == BAD_VALUE and 'outside the Ibeo range' in err.detail, step
        assert (f.false_syncs, f.garbage_bytes) == (1, 40), step


# --- the installed ibeo_ecu over TCP ----------------------------------------------------------

def test_installed_ecu_counts_a_header_outside_the_ibeo_range_once_as_a_false_sync(ros,
                                                                                closing):
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_ecu', port, stamp_source='receive') as proc:
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(gps(1) + header(0x0042, 16) + bytes(16) + gps(2))
        diag.wait('(0x2604)', lambda st, v: v['published'] == '2')
        _, link = diag.wait('link tcp', lambda st, v: v['false_syncs'] != '0')
        assert (link['errors.bad_value'], link['decode_errors'], link['false_syncs'],
                link['garbage_bytes']) == ('1', '1', '1', '40'), link
        assert 'outside the Ibeo range' in link['last_error'], link
        assert proc.running()
    assert proc.proc.returncode == 0


def test_installed_ecu_frames_the_message_after_one_cut_short_in_separate_sends(ros, closing):
    """The reproducer over TCP: a 0x2205 cut 10 bytes short, the next GPS's first 10 bytes
    (the scan's declared end: the node's read ends there), then the rest of it and one more:
    every GPS is published, the cut counted once as truncated, nothing as garbage."""
    import time
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_ecu', port, stamp_source='receive') as proc:
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(gps(1))
        diag.wait('(0x2604)', lambda st, v: v['published'] == '1')
        for part in (scan_2205_msg(100)[:-10], gps(2)[:10], gps(2)[10:] + gps(3)):
            sensor.send(part)
            time.sleep(0.3)
        diag.wait('(0x2604)', lambda st, v: v['published'] == '3')
        _, link = diag.wait('link tcp', lambda st, v: v.get('errors.truncated') == '1')
        assert 'errors.bad_magic' not in link, link      # (reads merged: the window's way)
        assert proc.running()
    assert proc.proc.returncode == 0


def test_installed_lux_publishes_an_object_list_holding_a_phantom_header(ros, closing):
    """Issue #26 over TCP: the installed ibeo_lux publishes the object list whose contour
    holds a phantom header, sent in one piece and byte by byte, and every scan around it; the
    link counts no false sync."""
    import time
    from ros_sim_bridge.msg import LuxObjectList, LuxScanInfo
    port = free_tcp_port()
    diag = Diagnostics(ros)
    lists = ros.collect(LuxObjectList, 'objects', 100, matched=False)
    infos = ros.collect(LuxScanInfo, 'scan_info', 100, matched=False)
    with installed('ibeo_lux', port, stamp_source='receive') as proc:
        sensor = serving(closing, port)
        connected(diag)
        # a volatile subscriber misses what is published before discovery has matched it
        assert wait_until(lambda: lists.sub.get_publisher_count() > 0
                          and infos.sub.get_publisher_count() > 0, 10)
        sensor.send(scan_msg(1) + phantom_objects_msg() + scan_msg(2) + scan_msg(3))
        assert wait_until(lambda: len(lists.messages) == 1 and len(infos.messages) == 3, 15)
        for b in scan_msg(4) + phantom_objects_msg() + scan_msg(5) + scan_msg(6):
            sensor.send(bytes([b]))
            time.sleep(0.0005)
        assert wait_until(lambda: len(lists.messages) == 2 and len(infos.messages) == 6, 15)
        assert sorted(i.scan_number for i in infos.messages) == [1, 2, 3, 4, 5, 6]
        for lst in lists.messages:
            (obj,) = lst.objects
            assert [(round(p.x, 2), round(p.y, 2)) for p in obj.contour[:2]] == [
                (1.0, -0.5), (1.1, -0.4)]
            assert (round(obj.contour[-1].x, 2), round(obj.contour[-1].y, 2)) == (1.2, -0.3)
            assert len(obj.contour) == 9
        _, link = diag.wait('link tcp', lambda st, v: v['connected'] == 'true')
        assert (link['false_syncs'], link['garbage_bytes']) == ('0', '0'), link
        assert not [k for k in link if k.startswith('errors.')], link
        assert proc.running()
    assert proc.proc.returncode == 0


def test_a_real_scan_holding_a_whole_decodable_message_is_not_cut():
    """A 60,000-point 0x2205 whose points hold a complete 0x2604 (it decodes) is one scan, in
    one read, in 64 KiB reads and in 1460-byte reads: a live stream cannot tell payload from a
    cut-short message before the declared end, so it waits for it (a reverted change cut
    such a scan there and published the GPS fix inside it)."""
    from ros_sim_bridge.ibeo.codec import scan_ecu as E
    n = 60_000
    rng = np.random.default_rng(4)
    pts = np.zeros(n, E.POINT_DTYPE)
    pts['x'], pts['y'] = rng.normal(0, 30, n), rng.normal(0, 30, n)
    scanners = E.make_scanners(1)
    body = bytearray(E.encode_scan(E.EcuScan(NTP, 0, E.SCAN_FLAG_VEHICLE_COORDINATES, 1,
                                             scanners, pts)))
    inner = gps(1)
    body[len(body) // 2:len(body) // 2 + len(inner)] = inner
    stream = header(0x2205, len(body), NTP) + bytes(body) + gps(2)
    for step in (len(stream), 1 << 16, 1460):
        f = make_framer()
        events = [e for i in range(0, len(stream), step) for e in f.feed(stream[i:i + step])]
        assert [(type(e).__name__, getattr(getattr(e, 'parsed', None), 'data_type', None))
                for e in events] == [('Frame', 0x2205), ('Frame', 0x2604)], step
        assert len(events[0].body) == len(body) and f.false_syncs == 0


def scan_2205_msg(count: int) -> bytes:
    """A 0x2205 (§9) by the table: 24-byte scan header (start NTP, end offset, flags, number,
    point count, info count), no scanner info, 28-byte big-endian points."""
    body = struct.pack('>QIIHHB3x', NTP, 80_000, 0x800, 1, count, 0) + b''.join(
        struct.pack('>ffffBBBxIH2x', k * 0.01, -k * 0.01, 0.5, 0.3, 1, 0, 0, 0, 0)
        for k in range(count))
    return header(0x2205, len(body), NTP) + body


def gps_latitudes(events):
    return [round(float(np.degrees(e.record.latitude))) for e in events
            if isinstance(e, Frame) and e.parsed.data_type == 0x2604]


def test_a_message_cut_short_then_a_read_ending_at_its_declared_end_loses_nothing_after_it():
    """A 0x2205 cut 1 to 23 bytes short: its declared size takes the first bytes of the next
    header.  When a read ends exactly there the scan comes out whole; the next bytes are no
    magic word, and the header begun in the scan's last bytes is found there (one TRUNCATED
    'cut short by its sender'), so both GPS messages after it are framed (the first was lost,
    counted as bad_magic).  In any other read size the window search finds it as before."""
    full = scan_2205_msg(100)
    for k in (1, 2, 3, 4, 5, 12, 20, 23):
        stream = full[:-k] + gps(1) + gps(2)
        f = make_framer()
        events = f.feed(stream[:len(full)]) + f.feed(stream[len(full):])
        assert gps_latitudes(events) == [51, 52], k
        errors = [e for e in events if isinstance(e, CodecError)]
        assert [e.kind for e in errors] == [TRUNCATED], (k, errors)
        assert 'cut short by its sender' in errors[0].detail
        assert f.garbage_bytes == 0
        for step in (1, 2, 5, 24, 61, 97, 1000):
            f = make_framer()
            events = [e for at in range(0, len(stream), step)
                      for e in f.feed(stream[at:at + step])]
            assert gps_latitudes(events) == [51, 52], (k, step)


def test_a_whole_message_followed_by_garbage_is_not_taken_for_a_cut_one():
    """The look back into a message's last bytes finds nothing in a whole scan followed by
    garbage (nor by a byte of 0xAF): the garbage is one bad_magic, the next message framed."""
    full = scan_2205_msg(3)
    for junk in (b'\x01\x02\x03', b'\xaf', b'\xaf\xfe', b'\x00' * 40):
        f = make_framer()
        events = f.feed(full) + f.feed(junk) + f.feed(gps(1))
        frames = [e.parsed.data_type for e in events if isinstance(e, Frame)]
        assert frames == [0x2205, 0x2604], junk
        assert [e.kind for e in events if isinstance(e, CodecError)] == ['bad_magic'], junk
        assert f.garbage_bytes == len(junk)


def test_the_stream_ending_while_a_header_begun_in_a_message_is_awaited_is_reported():
    """Cut short, then the peer closes after 5 more bytes of the next header: cut_short()
    names the header cut by the close (was None: the bytes dropped unreported)."""
    full = scan_2205_msg(100)
    stream = full[:-10] + gps(1)
    f = make_framer()
    f.feed(stream[:len(full)])
    assert f.feed(stream[len(full):len(full) + 5]) == []
    cut = f.cut_short()
    assert cut is not None and cut.kind == TRUNCATED and 'header' in cut.field
