"""Fuzz: the ibeo ``.idc`` reader (ibeo/idc.py) on random and mutated files.

Seeds: a small synthetic ECU recording (ibeo/ecu_recording.py, written by the project's
IdcWriter) and files of the fuzz suite's hand-written LUX messages.  Whatever the file holds,
the reader gives records and damage reports only: indexing never raises, the index and the
damage reports tile the file exactly (every byte is either in a message or reported as
skipped), every entry decodes to a record or raises CodecError, stepping back along the
previous-size chain and seeking by time never raise, and nothing hangs.
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from pathlib import Path

from hypothesis import example, given, strategies as st

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo import ecu_recording
from ros_sim_bridge.ibeo.codec.header import HEADER_SIZE, MAGIC_BYTES
from ros_sim_bridge.core.damage import Damage
from ros_sim_bridge.ibeo.idc import IdcReader, IdcWriter

import fuzz_support as fz
import ibeo_seeds

#: Seconds one whole pass over a (small) fuzzed file may take before it counts as a hang.
PASS_SECONDS = 5.0
_DIR = Path(tempfile.mkdtemp(prefix='fuzz_idc_'))
atexit.register(shutil.rmtree, _DIR, True)


def _recording() -> bytes:
    path = _DIR / 'ecu.idc'
    ecu_recording.write_recording(path, seconds=0.08, scanners=2, points=12)
    return path.read_bytes()


def _lux_file() -> bytes:
    path = _DIR / 'lux.idc'
    with IdcWriter(path) as w:
        for data_type, group in ibeo_seeds.hand_bodies().items():
            for body in group:
                w.write(data_type, body, device_id=3, ntp=(5 << 32) + len(body))
    return path.read_bytes()


RECORDING = _recording()
SEEDS = [RECORDING, _lux_file()]


def _messages(data: bytes) -> list[bytes]:
    """The messages of an intact file (header + body each)."""
    out, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], 'big')
        out.append(data[pos:pos + HEADER_SIZE + size])
        pos += HEADER_SIZE + size
    return out


MESSAGES = _messages(RECORDING) + _messages(SEEDS[1])


def _read_all(data: bytes) -> IdcReader:
    """Write ``data`` as a file and go through everything the reader offers; returns the
    (closed) reader with its index."""
    path = _DIR / 'fuzz.idc'
    path.write_bytes(data)
    t0 = time.perf_counter()
    with IdcReader(path, max_body=1 << 16) as reader:
        entries = reader.entries
        # index and damage reports tile the file: every byte is accounted for, in order
        spans = sorted([(e.offset, e.end) for e in entries]
                       + [(d.offset, d.offset + d.skipped) for d in reader.damages])
        pos = 0
        for start, end in spans:
            assert start == pos and end > start, (spans, len(data))
            pos = end
        assert pos == len(data)
        for d in reader.damages:
            assert isinstance(d, Damage) and d.reason
        for i, e in enumerate(entries):
            assert bytes(reader.raw(e))[:4] == MAGIC_BYTES
            try:
                reader.decode(e)
            except CodecError as err:
                fz.check_codec_error(err)
            back = reader.previous(e)
            assert back is None or back.end == e.offset
            # (files are searched by time as recorded; a fuzzed file is not in time order)
            assert 0 <= reader.index_at_time(e.ntp) <= len(entries)
        summary = reader.summary()
        assert summary.messages == len(entries)
        assert summary.bytes_skipped == sum(d.skipped for d in reader.damages)
    assert time.perf_counter() - t0 < PASS_SECONDS
    return reader


@given(st.binary(max_size=3000) | fz.mutated(SEEDS, max_mutations=8)
       | st.lists(st.sampled_from(MESSAGES) | fz.mutated(MESSAGES) | st.binary(max_size=40),
                  min_size=1, max_size=8).map(b''.join))
@example(b'')
@example(MAGIC_BYTES)
@example(MAGIC_BYTES + bytes(20))
@example(MAGIC_BYTES + b'\0\0\0\0\xff\xff\xff\xff' + bytes(12))
@example(RECORDING[:-1])
def test_idc_reader(data):
    """Any file: records plus damage reports, never another exception, never a hang."""
    fz.tried('ibeo.idc.IdcReader')
    _read_all(data)


@given(st.lists(st.sampled_from(MESSAGES), min_size=1, max_size=6),
       st.lists(st.binary(max_size=60).map(lambda b: b.replace(MAGIC_BYTES[:2], b'')),
                min_size=1, max_size=7))
def test_idc_reader_keeps_intact_messages(msgs, garbage):
    """Intact messages with magic-free garbage before, between and after them: every one is
    in the index, and exactly the garbage is reported as damage."""
    fz.tried('ibeo.idc.IdcReader(intact)')
    data = b''
    for k, m in enumerate(msgs):
        data += garbage[k % len(garbage)] + m
    data += garbage[-1]
    reader = _read_all(data)
    got = [data[e.offset:e.end] for e in reader.entries]
    assert got == msgs
    assert sum(d.skipped for d in reader.damages) == len(data) - sum(map(len, msgs))


@given(st.lists(st.sampled_from(MESSAGES), min_size=2, max_size=6), st.data())
def test_a_message_resent_after_a_cut_copy_is_kept_as_the_live_framer_keeps_it(msgs, data):
    """Intact messages, one of them written first cut short (its first ``k`` bytes, the magic
    word included, fewer than all) and then re-sent whole, with magic-free garbage between
    the copy and the re-sent message, which starts inside the copy's declared body (else the
    garbage completes the copy, and nothing tells it from a message): every intact message
    is in the index, once, and the live framer frames each of them too."""
    from ros_sim_bridge.ibeo.codec.framing import split_messages
    fz.tried('ibeo.idc.IdcReader(resent)')
    i = data.draw(st.integers(0, len(msgs) - 1))
    m = msgs[i]
    k = data.draw(st.integers(4, len(m) - 1))
    garbage = data.draw(st.binary(max_size=len(m) - k - 1)       # B starts inside the copy
                        .map(lambda b: b.replace(MAGIC_BYTES[:2], b'')))
    blob = b''.join(msgs[:i]) + m[:k] + garbage + b''.join(msgs[i:])
    reader = _read_all(blob)
    got = [blob[e.offset:e.end] for e in reader.entries]
    assert [g for g in got if g in msgs] == msgs, (i, k, garbage)
    frames, _ = split_messages(blob, max_body=1 << 16)
    assert [f.header + bytes(f.body) for f in frames if f.header + bytes(f.body) in msgs] == \
        msgs
