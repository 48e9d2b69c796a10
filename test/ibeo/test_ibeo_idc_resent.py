"""A message re-sent right after a cut-short copy of it, in an ``.idc`` file: the copy (its
24-byte header and 6 of its 10 body bytes) declares a body that swallows the magic word of the
full message.  ``ibeo_idc to-bag`` and ``source:=file`` playback must keep the full message
once and count the cut copy, as the live framer does (spec §2.4 "to resync just search for the
magic word"; the bad-input rule: nothing valid that arrived is lost).

The bytes are built by hand from the spec tables: the §2.4 data header (big endian: magic
0xAFFEC0C2, size of previous message, size of this message, reserved, device id, data type,
NTP64) and a §10 0x2225 object list of no objects (mid-scan NTP64, UINT16 count 0: 10 bytes).
"""
import struct
import time

import pytest

from ros_sim_bridge.core.binary import BAD_MAGIC, TRUNCATED, CodecError
from ros_sim_bridge.ibeo.codec.framing import split_messages
from ros_sim_bridge.ibeo.idc import IdcReader

from conftest import run_installed

T0 = 3_900_000_000 << 32                      # 2023, a set clock
TIMES = (T0 + 0x1111, T0 + (1 << 31) + 0x2222, T0 + (1 << 32) + 0x3333)   # A, B (re-sent), C


def header(data_type: int, size: int, ntp: int, previous: int = 0, device: int = 3) -> bytes:
    """§2.4: magic, size of previous, size of this body, reserved, device id, type, NTP64."""
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, previous, size, 0, device, data_type, ntp)


def object_list(ntp: int, previous: int) -> bytes:
    """A 0x2225 message (§10): mid-scan time ``ntp`` (the header's too), 0 objects."""
    body = struct.pack('>QH', ntp, 0)
    assert len(body) == 10
    return header(0x2225, len(body), ntp, previous) + body


def resent_file(garbage: bytes, after: bytes = b'') -> tuple[bytes, list[bytes], bytes]:
    """(file bytes, the intact messages A B C, the cut copy of B): A, then B's header and 6 of
    its 10 body bytes (its previous size links it to A, as a writer's chain does), then
    ``garbage``, then B again in full (the writer restarted: previous size 0), ``after``, C."""
    a, b = object_list(TIMES[0], 0), object_list(TIMES[1], 10)
    cut = b[:24 + 6]
    b_again, c = object_list(TIMES[1], 0), object_list(TIMES[2], 10)
    return a + cut + garbage + b_again + after + c, [a, b_again, c], cut


# the cut copy's declared end (byte 34 of it) lies inside the garbage or the re-sent header
# (garbage between the cut copy and B, garbage between B and C)
CASES = {'cut then full': (b'', b''), 'cut, 1 byte garbage, full': (b'\x5a', b''),
         'cut, 2 bytes garbage, full': (b'\x00\x00', b''),
         'cut, 3 bytes garbage, full': (b'\x01\x02\x03', b''),
         'cut, full, garbage': (b'', b'\x01\x02\x03\x04\x05'),
         'cut, 2 bytes garbage, full, garbage': (b'\x00\x00', b'\x00' * 7)}


@pytest.mark.parametrize('garbage, after', CASES.values(), ids=CASES.keys())
def test_the_reader_keeps_the_resent_message_once_and_reports_the_cut_copy(tmp_path, garbage,
                                                                           after):
    data, intact, cut = resent_file(garbage, after)
    path = tmp_path / 'resent.idc'
    path.write_bytes(data)
    b_end = len(intact[0]) + len(cut) + len(garbage) + len(intact[1])
    with IdcReader(path) as r:
        assert [r.raw(e) for e in r] == intact
        assert [(d.offset, d.skipped) for d in r.damages] == \
            [(len(intact[0]), len(cut) + len(garbage))] + ([(b_end, len(after))] if after else [])
        assert 'cut short' in r.damages[0].reason
        assert [r.decode(e).mid_scan_ntp for e in r] == list(TIMES)
    # the live framer (TCP) frames the same messages and counts the cut copy once
    frames, errors = split_messages(data)
    assert [f.record.mid_scan_ntp for f in frames] == list(TIMES)
    assert [e.kind for e in errors] == [TRUNCATED] + ([BAD_MAGIC] if after else [])


@pytest.mark.parametrize('garbage', [b'', b'\x00\x00'], ids=['cut then full', 'with garbage'])
def test_to_bag_writes_the_resent_message_once_and_counts_the_cut_copy(tmp_path, garbage):
    """The installed ``ibeo_idc to-bag``, its bag read back with an independent reader."""
    from rosbags.highlevel import AnyReader
    data, intact, cut = resent_file(garbage)
    path = tmp_path / 'resent.idc'
    path.write_bytes(data)
    code, out = run_installed('ibeo_idc', 'to-bag', '--no-progress', str(path),
                              str(tmp_path / 'bag'), timeout=120)
    assert code == 0 and 'Traceback' not in out, out
    assert f'damage: 1 region(s), {len(cut) + len(garbage)} bytes skipped' in out, out
    assert 'skipped 1' not in out, out                 # no undecodable message either
    with AnyReader([tmp_path / 'bag']) as reader:
        lists = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages()
                 if c.topic.endswith('ecu/objects')]
    assert [(m.data_type, m.mid_scan_ntp, len(m.objects)) for m in lists] == \
        [(0x2225, t, 0) for t in TIMES]


@pytest.mark.parametrize('garbage', [b'', b'\x01\x02\x03'], ids=['cut then full', 'with garbage'])
def test_file_playback_publishes_the_resent_message_once_and_counts_the_cut_copy(
        ros, tmp_path, garbage):
    """``ibeo_ecu`` with ``source:=file`` on real DDS: A, B, C published, one damaged region."""
    from std_srvs.srv import Trigger
    from ros_sim_bridge.ibeo.ros.ecu_node import IbeoEcuNode
    from ros_sim_bridge.msg import IbeoObjectList
    from test_ibeo_idc_play import FAST, call, collect, file_status
    data, intact, cut = resent_file(garbage)
    path = tmp_path / 'resent.idc'
    path.write_bytes(data)
    ns = f'/resent{len(garbage)}'
    node = ros.start(IbeoEcuNode, {**FAST, 'source': 'file', 'file': str(path), 'rate': 0.0,
                                   'start_paused': True}, namespace=ns)
    lists = collect(ros, node, IbeoObjectList, 'ecu/objects')
    assert call(ros, Trigger, f'{ns}/ibeo_ecu/resume').success
    st = file_status(ros, lambda v: v.get('state') == 'finished')
    assert st['damaged_regions'] == '1' and st['damaged_bytes'] == str(len(cut) + len(garbage))
    assert st['errors.damaged_file'] == '1'
    got = lists.wait_for(3, timeout=10)
    assert [(m.data_type, m.mid_scan_ntp) for m in got] == [(0x2225, t) for t in TIMES]
    time.sleep(0.3)                                   # a fourth, if any, arrives too
    assert len(lists.messages) == 3


def test_garbage_past_the_cut_copys_declared_end_both_paths_keep_the_resent_message(tmp_path):
    """5 bytes of garbage: B's magic word lies past the copy's declared end, so nothing inside
    that body shows the cut (for either path); the copy, linked to A, is one message whose body
    does not decode (its object count is garbage): counted as such by to-bag and by the live
    framer (Rejected), and B is kept once by both."""
    from ros_sim_bridge.core.framer import Rejected
    data, intact, cut = resent_file(b'\x01' * 5)
    path = tmp_path / 'resent.idc'
    path.write_bytes(data)
    with IdcReader(path) as r:
        kept = [r.raw(e) for e in r]
        assert kept == [intact[0], cut + b'\x01' * 4, intact[1], intact[2]]
        with pytest.raises(CodecError) as exc:
            r.decode(r[1])
        assert exc.value.kind == TRUNCATED
        assert [(d.offset, d.skipped) for d in r.damages] == [(len(intact[0]) + 34, 1)]
    frames, errors = split_messages(data)
    assert [f.record.mid_scan_ntp for f in frames] == list(TIMES)
    assert [type(e) for e in errors] == [Rejected, CodecError]     # the copy, the 1 byte left


def test_a_cut_copy_at_the_start_of_the_file(tmp_path):
    """Nothing before the copy (no chain link): the copy then B, nothing else; B kept once."""
    b = object_list(TIMES[1], 0)
    (tmp_path / 'start.idc').write_bytes(b[:30] + b)
    with IdcReader(tmp_path / 'start.idc') as r:
        assert [r.raw(e) for e in r] == [b]
        assert [(d.offset, d.skipped) for d in r.damages] == [(0, 30)]
        assert 'cut short' in r.damages[0].reason


def test_a_header_cut_short_declaring_a_body_above_the_limit(tmp_path):
    """A copy of B's header cut after its data type (16 of 24 bytes; its NTP time is the first
    bytes of B re-sent after it) whose size field is corrupt, above any body limit.  The live
    framer takes it for an oversized message only after looking inside its own 24 bytes, as
    it does for any header: the plausible header there is B, so B is framed, fed whole or byte
    by byte; the reader keeps it too."""
    from ros_sim_bridge.ibeo.codec.framing import make_framer
    from ros_sim_bridge.ibeo.codec.header import DEFAULT_MAX_BODY
    _, (a, b, c), _ = resent_file(b'')
    copy = header(0x2225, 0xFFFFFF00, 0)[:16]
    data = copy + b + c
    assert struct.unpack_from('>I', data, 8)[0] > DEFAULT_MAX_BODY
    for reads in ([data], [data[k:k + 1] for k in range(len(data))]):
        framer = make_framer()
        events = [e for part in reads for e in framer.feed(part)] + framer.finish()
        assert [e.record.mid_scan_ntp for e in events if hasattr(e, 'record')] == \
            list(TIMES[1:])
        assert [e.kind for e in events if isinstance(e, CodecError)] == [TRUNCATED]
        assert framer.cut_short() is None
    (tmp_path / 'head.idc').write_bytes(data)
    with IdcReader(tmp_path / 'head.idc') as r:
        assert [r.raw(e) for e in r] == [b, c] and [(d.offset, d.skipped) for d in r.damages] \
            == [(0, 16)]
