"""``.idc`` reader/writer on real files: index, seek, backward chain, and damage of every kind
(garbage, corrupt magic, declared size past the end, wrong size, broken previous-size chain,
absurd counts, unknown types): each reported where and how big, nothing intact lost."""
import struct

import numpy as np
import pytest

from ros_sim_bridge.core.binary import TRUNCATED, UNKNOWN_LAYOUT, CodecError
from ros_sim_bridge.ibeo.codec import frame_end as FE
from ros_sim_bridge.ibeo.codec import gps_imu as G
from ros_sim_bridge.ibeo.codec import objects_ecu as O
from ros_sim_bridge.ibeo.codec import scan_ecu as S
from ros_sim_bridge.ibeo.idc import IdcReader, IdcWriter

from conftest import run_installed
from test_ibeo_false_sync import header, scan_body

MAGIC = bytes.fromhex('affec0c2')


def scan(n: int, seed: int) -> S.EcuScan:
    pts = np.zeros(n, S.POINT_DTYPE)
    pts['x'] = np.arange(n) + seed
    pts['device_id'] = np.arange(n) % 3
    infos = S.make_scanners(3)
    infos['device_id'] = [0, 1, 2]
    return S.EcuScan(seed << 32, 1000, 0x800, seed, infos, pts)


def messages():
    """(data type, body, device, ntp) of a small mixed recording, NTP times increasing."""
    out = []
    for k in range(6):
        t = (3_900_000_000 + k) << 32
        out.append((0x2205, S.encode_scan(scan(50 + k, k)), 10, t))
        o = O.make_objects(2, 0x2280)
        o['id'] = [k, k + 1]
        out.append((0x2280, O.encode_objects(O.EcuObjectList2280(t, o, [np.ones((2, 2))] * 2)),
                    10, t + 1))
        out.append((0x2604, G.LAYOUT_2604.encode(G.PositionWgs84(latitude=0.8 + k)), 20, t + 2))
        out.append((0x2209, b'\x01\x02\x03' * 10, 10, t + 3))          # undocumented type
        out.append((0x1100, FE.LAYOUT_1100.encode(FE.FrameEndSeparator(frame_id=k)), 10, t + 4))
    return out


def write(path, msgs, trailer=True) -> list[bytes]:
    with IdcWriter(path, trailer=trailer) as w:
        for dt, body, dev, ntp in msgs:
            w.write(dt, body, device_id=dev, ntp=ntp)
    data = path.read_bytes()
    raws, pos = [], 0
    while pos < len(data):
        size = struct.unpack_from('>I', data, pos + 8)[0]
        raws.append(data[pos:pos + 24 + size])
        pos += 24 + size
    return raws


def test_seek_by_time_on_a_file_whose_times_go_back(tmp_path):
    """Times of two devices, the second's clock behind: a seek by time finds the first message
    by which the recording's times reached it (here the second), not a later one."""
    path = tmp_path / 'back.idc'
    s = 1 << 32
    write(path, [(0x1100, FE.LAYOUT_1100.encode(FE.FrameEndSeparator(frame_id=k)), dev, t * s)
                 for k, (dev, t) in enumerate(((1, 10), (1, 20), (2, 5), (1, 30)))],
          trailer=False)
    with IdcReader(path) as r:
        assert len(r) == 4 and not r.damages
        assert [r.index_at_time(t * s) for t in (0, 10, 15, 20, 25, 31)] == [0, 0, 1, 1, 3, 4]


def test_write_index_decode_and_seek(tmp_path):
    path = tmp_path / 'a.idc'
    msgs = messages()
    raws = write(path, msgs)
    with IdcReader(path) as r:
        assert len(r) == len(msgs) + 1 and r[-1].data_type == 0x6120   # trailer
        assert not r.damages and not r.chain_breaks
        for e, (dt, body, dev, ntp), raw in zip(r, msgs, raws):
            assert (e.data_type, e.device_id, e.ntp, e.size) == (dt, dev, ntp, len(body))
            assert bytes(r.body(e)) == body and r.raw(e) == raw
        # previous-size field: body size of the previous message (Ibeo SDK sizeOfPrevMessage)
        assert [e.previous_size for e in r][1:] == [len(m[1]) for m in msgs]
        assert np.array_equal(r.decode(r[0]).points, scan(50, 0).points)
        assert list(r.decode(r[1]).objects['id']) == [0, 1]
        with pytest.raises(CodecError) as e:
            r.decode(r[3])
        assert e.value.kind == UNKNOWN_LAYOUT
        # seek by time and by offset; walk backwards along the chain from the end
        i = r.index_at_time((3_900_000_003 << 32) + 2)
        assert (r[i].data_type, r[i].ntp) == (0x2604, (3_900_000_003 << 32) + 2)
        assert r.index_of_offset(r[7].offset) == 7
        back, e = [], r[-1]
        while e is not None:
            back.append(e)
            e = r.previous(e)
        assert back[::-1] == r.entries
        s = r.summary()
        assert s.types[0x2205] == 6 and s.types[0x2209] == 6 and s.devices[20] == 6
        assert s.first_ntp == 3_900_000_000 << 32 and s.duration_s == pytest.approx(5.0, abs=1e-6)


def test_info_span_of_a_file_whose_clock_is_set_while_recording(tmp_path, capsys):
    """Three messages on the power-up clock (12 s after power-up), then the clock set (a
    date): the span is the dated part's (2 s, not 3.9e9 s), the others are named."""
    from ros_sim_bridge.ibeo.cli import main
    path = tmp_path / 'clock.idc'
    with IdcWriter(path) as w:
        for t in [12 << 32, 13 << 32, 14 << 32] + [(3_900_000_000 + k) << 32 for k in range(3)]:
            w.write(0x2209, b'\0' * 8, ntp=t)
    with IdcReader(path) as r:
        s = r.summary()
    assert (s.first_ntp, s.last_ntp) == (3_900_000_000 << 32, 3_900_000_002 << 32)
    assert s.duration_s == 2.0 and s.unset_clock_messages == 3
    assert main(['info', str(path)]) == 0
    out = capsys.readouterr().out
    assert 'duration:  2.000 s' in out and '3 messages before the clock was set' in out


def intact(r, raws, lost=()):
    """Every message not in ``lost`` comes back byte for byte, in order."""
    want = [raw for k, raw in enumerate(raws) if k not in lost]
    assert [r.raw(e) for e in r] == want


def test_garbage_between_messages(tmp_path):
    raws = write(tmp_path / 'a.idc', messages())
    junk = b'\x00garbage\xff' * 7 + MAGIC + b'\x00' * 5          # includes a false magic word
    data = b''.join(raws[:4]) + junk + b''.join(raws[4:])
    (tmp_path / 'b.idc').write_bytes(data)
    with IdcReader(tmp_path / 'b.idc') as r:
        intact(r, raws)
        assert len(r.damages) == 1
        d = r.damages[0]
        assert d.offset == sum(map(len, raws[:4])) and d.skipped == len(junk)
        assert 'magic' in d.reason


def test_corrupt_magic_loses_only_that_message(tmp_path):
    raws = write(tmp_path / 'a.idc', messages())
    bad = bytearray(raws[7])
    bad[1] ^= 0xFF
    data = b''.join(raws[:7]) + bytes(bad) + b''.join(raws[8:])
    (tmp_path / 'b.idc').write_bytes(data)
    with IdcReader(tmp_path / 'b.idc') as r:
        intact(r, raws, lost={7})
        assert [(d.offset, d.skipped) for d in r.damages] == [(sum(map(len, raws[:7])),
                                                               len(raws[7]))]


def test_declared_size_past_the_end_and_truncated_tail(tmp_path):
    raws = write(tmp_path / 'a.idc', messages(), trailer=False)
    cut = b''.join(raws)[:-17]                              # file cut inside the last message
    (tmp_path / 'cut.idc').write_bytes(cut)
    with IdcReader(tmp_path / 'cut.idc') as r:
        intact(r, raws, lost={len(raws) - 1})
        d = r.damages[-1]
        assert d.offset == len(cut) - (len(raws[-1]) - 17) and d.offset + d.skipped == len(cut)
        assert 'past the end' in d.reason
    # a size field in the middle that points beyond the end of the file
    bad = bytearray(raws[5])
    struct.pack_into('>I', bad, 8, 10_000_000 - 24)
    (tmp_path / 'mid.idc').write_bytes(b''.join(raws[:5]) + bytes(bad) + b''.join(raws[6:]))
    with IdcReader(tmp_path / 'mid.idc', max_body=16 << 20) as r:
        intact(r, raws, lost={5})
        assert r.damages[0].offset == sum(map(len, raws[:5]))
        assert r.damages[0].skipped == len(raws[5])


def test_wrong_size_inside_the_file_is_not_trusted(tmp_path):
    raws = write(tmp_path / 'a.idc', messages())
    bad = bytearray(raws[0])                                 # a scan whose size swallows two
    struct.pack_into('>I', bad, 8, len(raws[0]) - 24 + len(raws[1]) + 10)
    (tmp_path / 'b.idc').write_bytes(bytes(bad) + b''.join(raws[1:]))
    with IdcReader(tmp_path / 'b.idc') as r:
        intact(r, raws, lost={0})
        assert [(d.offset, d.skipped) for d in r.damages] == [(0, len(raws[0]))]


def test_next_magic_damaged_message_before_it_kept_by_the_chain(tmp_path):
    raws = write(tmp_path / 'a.idc', messages())
    bad = bytearray(raws[3])
    bad[0:4] = b'XXXX'
    (tmp_path / 'b.idc').write_bytes(b''.join(raws[:3]) + bytes(bad) + b''.join(raws[4:]))
    with IdcReader(tmp_path / 'b.idc') as r:
        intact(r, raws, lost={3})                           # 0x2209 before it: unknown type


def test_broken_previous_size_chain_reported_nothing_lost(tmp_path):
    raws = write(tmp_path / 'a.idc', messages())
    bad = bytearray(raws[9])
    struct.pack_into('>I', bad, 4, 12345)
    (tmp_path / 'b.idc').write_bytes(b''.join(raws[:9]) + bytes(bad) + b''.join(raws[10:]))
    with IdcReader(tmp_path / 'b.idc') as r:
        assert [r.raw(e) for e in r] == raws[:9] + [bytes(bad)] + raws[10:]
        assert not r.damages
        assert [(c.offset, c.expected, c.found) for c in r.chain_breaks] == \
            [(sum(map(len, raws[:9])), len(raws[8]) - 24, 12345)]
        assert r.previous(r[9]) is None and r.previous(r[10]) == r[9]


def test_absurd_counts_inside_messages_fail_only_their_decode(tmp_path):
    msgs = messages()
    body = bytearray(msgs[0][1])
    struct.pack_into('>H', body, 18, 60_000)                 # scan point count
    msgs[0] = (0x2205, bytes(body), 10, msgs[0][3])
    body = bytearray(msgs[1][1])
    struct.pack_into('>H', body, 8, 65_000)                  # object count
    msgs[1] = (0x2280, bytes(body), 10, msgs[1][3])
    raws = write(tmp_path / 'a.idc', msgs)
    with IdcReader(tmp_path / 'a.idc') as r:
        intact(r, raws)
        assert not r.damages
        for e in r.entries[:2]:
            with pytest.raises(CodecError) as exc:
                r.decode(e)
            assert exc.value.kind == TRUNCATED
        assert r.decode(r[5]).scan_number == 1


def test_empty_and_all_garbage_files(tmp_path):
    (tmp_path / 'e.idc').write_bytes(b'')
    with IdcReader(tmp_path / 'e.idc') as r:
        assert len(r) == 0 and not r.damages and r.summary().messages == 0
    (tmp_path / 'g.idc').write_bytes(b'\x11' * 1000 + MAGIC + b'\x22' * 30)
    with IdcReader(tmp_path / 'g.idc') as r:
        assert len(r) == 0 and [(d.offset, d.skipped) for d in r.damages] == [(0, 1034)]


def test_magic_word_inside_a_payload_does_not_split_a_message(tmp_path):
    s = scan(20, 1)
    s.points['x'][3] = np.frombuffer(MAGIC, '>f4')[0]       # the magic word inside the points
    msgs = [(0x2205, S.encode_scan(s), 1, 5), (0x1100, bytes(32), 1, 6)]
    assert MAGIC in msgs[0][1]
    raws = write(tmp_path / 'a.idc', msgs)
    junk = b'\x01' * 13
    (tmp_path / 'b.idc').write_bytes(junk + b''.join(raws))
    with IdcReader(tmp_path / 'b.idc') as r:
        intact(r, raws)
        assert [(d.offset, d.skipped) for d in r.damages] == [(0, 13)]


def chained(items, previous: int = 0) -> list[bytes]:
    """Messages by the §2.4 table, each header's "size of previous message" the body size of
    the one before (``previous`` for the first)."""
    out = []
    for data_type, body in items:
        out.append(header(data_type, len(body), previous=previous) + body)
        previous = len(body)
    return out


def interrupted_recording() -> tuple[list[bytes], bytes, list[bytes]]:
    """(scans 1-3, scan 4 declaring 3,044 body bytes of which 500 are written, scans 5-44):
    the writer was interrupted inside scan 4 and restarted (its chain starts again at 0).
    Scan 4's declared end lies inside scan 33, and its previous size links it to scan 3."""
    before = chained([(0x2202, scan_body(n)) for n in (1, 2, 3)])
    body = scan_body(4, count=300)
    cut = header(0x2202, len(body), previous=len(scan_body(3))) + body[:500]
    after = chained([(0x2202, scan_body(n)) for n in range(5, 45)])
    start = len(b''.join(before))
    declared_end = start + 24 + len(body)
    assert start + len(cut) + 28 * 88 < declared_end < start + len(cut) + 29 * 88
    return before, cut, after


def test_message_cut_short_by_an_interrupted_writer_loses_nothing_after_it(tmp_path):
    """The issue: decode up to the damage, resynchronise on the next magic word, report where
    and how many bytes were skipped; nothing valid before or after the damage is lost."""
    before, cut, after = interrupted_recording()
    (tmp_path / 'cut.idc').write_bytes(b''.join(before) + cut + b''.join(after))
    with IdcReader(tmp_path / 'cut.idc') as r:
        assert [r.raw(e) for e in r] == before + after
        assert [(d.offset, d.skipped) for d in r.damages] == [(len(b''.join(before)),
                                                               len(cut))]
        assert 'cut short' in r.damages[0].reason and not r.chain_breaks
        assert [r.decode(e).scan_number for e in r] == [1, 2, 3, *range(5, 45)]
    # no evidence: a body holding a complete message (payload) stays one message even when
    # nothing confirms its end (the message after it has a broken magic word and size chain)
    payload = b'head' + b''.join(chained([(0x2202, scan_body(7))])) + b'tail'
    bad = bytearray(b''.join(chained([(0x2202, scan_body(8))])))
    bad[0] ^= 0xFF
    raws = before + chained([(0x7100, payload)], previous=64) + [bytes(bad)] + after
    (tmp_path / 'nested.idc').write_bytes(b''.join(raws))
    with IdcReader(tmp_path / 'nested.idc') as r:
        assert [r.raw(e) for e in r] == raws[:4] + raws[5:]
        assert [(d.offset, d.skipped) for d in r.damages] == [(len(b''.join(raws[:4])),
                                                               len(bad))]


def test_info_cli_reports_the_cut_and_counts_every_valid_message(tmp_path):
    """The installed ``ibeo_idc info`` on the interrupted recording."""
    before, cut, after = interrupted_recording()
    path = tmp_path / 'cut.idc'
    path.write_bytes(b''.join(before) + cut + b''.join(after))
    code, out = run_installed('ibeo_idc', 'info', str(path))
    assert code == 0 and 'Traceback' not in out, out
    assert 'messages:  43' in out
    assert f'damage:    1 region(s), {len(cut)} bytes skipped' in out
    lines = out.splitlines()
    line = lines[lines.index(f'damage:    1 region(s), {len(cut)} bytes skipped') + 1]
    assert line.startswith(f'  at byte {len(b"".join(before))}: {len(cut)} bytes skipped')
    assert 'cut short' in line


LDMRS = ('20120921-200352_record.hexlog', '20120921-200644_record.hexlog')


def real_messages():
    from conftest import shared_path
    out = []
    for name in LDMRS:
        path = shared_path('samples', 'ibeo', 'raulexposito-ldmrs', name)
        out += [bytes.fromhex(line.strip()) for line in path.read_text().splitlines()
                if line.strip()]
    return out


def test_real_ldmrs_capture_as_an_idc_file(tmp_path):
    """The real LD-MRS messages (SUPPLEMENT §3.1) back to back as a raw capture file: every
    message indexed and decoded; previous size 0 (live data) is not a chain break; damage in
    the middle and a torn end lose only the damaged messages."""
    msgs = real_messages()
    assert len(msgs) == 200
    (tmp_path / 'ldmrs.idc').write_bytes(b''.join(msgs))
    with IdcReader(tmp_path / 'ldmrs.idc') as r:
        assert [r.raw(e) for e in r] == msgs
        assert not r.damages and not r.chain_breaks
        s = r.summary()
        assert (s.types[0x2202], s.types[0x2030]) == (71, 129)
        scans = [r.decode(e) for e in r if e.data_type == 0x2202]
        assert all(740 <= len(sc.points) <= 780 for sc in scans)
    bad = bytearray(b''.join(msgs[:50]) + b'\x00' * 33 + b''.join(msgs[50:]))
    start = len(b''.join(msgs[:120])) + 33
    bad[start + 8:start + 12] = b'\x7f\xff\xff\xff'          # message 120: absurd size
    (tmp_path / 'bad.idc').write_bytes(bytes(bad) + msgs[0][:100])
    with IdcReader(tmp_path / 'bad.idc') as r:
        assert [r.raw(e) for e in r] == msgs[:120] + msgs[121:]
        assert [(d.offset, d.skipped) for d in r.damages] == [
            (len(b''.join(msgs[:50])), 33), (start, len(msgs[120])),
            (len(bad), 100)]


def test_hex_text_is_named_as_such(tmp_path):
    """A hex log (text "AFFEC0C2 …") is no .idc: the damage report names the magic word it
    wanted, the bytes it found, and where such a file plays."""
    path = tmp_path / 'capture.hexlog'
    path.write_bytes(b'AFFEC0C200000000 0000002C 00002202\n' * 4)
    with IdcReader(path) as r:
        assert len(r) == 0 and len(r.damages) == 1
        reason = r.damages[0].reason
    assert '0xAFFEC0C2' in reason and '41 46 46 45' in reason and 'hex text' in reason
