"""Fuzz: the stream framers (core.framer.MagicFramer with the ibeo factory, core.file_source).

Valid messages placed after garbage are never lost, whatever the garbage (random bytes, a lone
magic word, messages whose header is implausible: bad magic, data type outside the Ibeo range,
an impossible size for a registered type, a body above ``max_body``) and wherever the stream is
split into reads.
"""
from __future__ import annotations

import struct
import time

from hypothesis import assume, example, given, strategies as st

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.file_source import FileSource
from ros_sim_bridge.core.framer import Frame, Rejected
from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.ibeo.codec import framing, registry

import fuzz_support as fz
import ibeo_seeds

MESSAGES = ibeo_seeds.messages()
MAX_BODY = 4096
MAGIC = ibeo.header.MAGIC_BYTES


def _implausible(msg: bytes, how: int, value: int) -> bytes:
    """``msg`` with a header no peer sends (the framer must refuse it and search on)."""
    buf = bytearray(msg)
    if how == 0:                                   # magic word broken
        buf[value % 4] ^= 1 << (value % 8)
    elif how == 1:                                 # data type outside 0x1000..0x9FFF
        struct.pack_into('>H', buf, 14, [0, 0x0FFF, 0xA000, 0xFFFF][value % 4])
    elif how == 2:                                 # body above max_body
        struct.pack_into('>I', buf, 8, MAX_BODY + 1 + value)
    else:                                          # a scan shorter than its 44-byte header
        struct.pack_into('>HI', buf, 14, registry.SCAN, 0)
        struct.pack_into('>I', buf, 8, value % 44)
    return bytes(buf)


_GARBAGE = st.one_of(
    st.binary(max_size=80).map(lambda b: b.replace(MAGIC, b'')),
    st.just(MAGIC), st.just(MAGIC[:3]), st.just(MAGIC + MAGIC[:2]),
    st.builds(_implausible, st.sampled_from(MESSAGES), st.integers(0, 3), st.integers(0, 1000)),
    # cut short after its (complete, implausible) header; a header itself cut short before
    # a valid message is defect 5's case (test_framer_truncated_message_loses_nothing_after_it)
    st.builds(lambda m, k: m[:k], st.builds(_implausible, st.sampled_from(MESSAGES),
                                            st.integers(0, 3), st.integers(0, 1000)),
              st.integers(ibeo.HEADER_SIZE, 60)),
    st.builds(lambda m, k: m[:k], st.builds(_implausible, st.sampled_from(MESSAGES),
                                            st.just(0), st.integers(0, 1000)),
              st.integers(0, 60)))


def _frames(events) -> list[bytes]:
    out = []
    for e in events:
        assert isinstance(e, (Frame, CodecError)), e
        if isinstance(e, CodecError):
            fz.check_codec_error(e)
        else:
            out.append(e.header + e.body)
    return out


def _feed(stream: bytes, cuts) -> list[bytes]:
    framer = ibeo.make_framer(MAX_BODY)
    bounds = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    events = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        events += framer.feed(stream[a:b])
        assert framer.buffered <= len(stream)
    return _frames(events)


@given(st.lists(st.tuples(_GARBAGE, st.sampled_from(MESSAGES)), min_size=1, max_size=4),
       _GARBAGE, st.lists(st.integers(0, 1 << 16), max_size=6))
def test_framer_resynchronises(pairs, tail, cuts):
    fz.tried('core.framer.MagicFramer(ibeo)')
    stream = b''.join(g + m for g, m in pairs) + tail
    assert _feed(stream, cuts) == [m for _, m in pairs]


def test_framer_every_split_point():
    """One stream with every kind of garbage, split at every byte."""
    garbage = [b'\x00\xaf\xfe', MAGIC, _implausible(MESSAGES[0], 0, 3),
               _implausible(MESSAGES[1], 1, 2), _implausible(MESSAGES[2], 2, 7),
               _implausible(MESSAGES[0], 3, 10), MAGIC + MAGIC[:2]]
    valid = MESSAGES[:len(garbage)]
    stream = b''.join(g + m for g, m in zip(garbage, valid))
    for cut in range(len(stream) + 1):
        assert _feed(stream, [cut]) == valid, cut


@given(st.binary(max_size=2000) | fz.mutated(MESSAGES, max_mutations=6),
       st.lists(st.integers(0, 1 << 16), max_size=8))
@example(MAGIC + struct.pack('>IIBBHQ', 0, 0xFFFFFFFF, 0, 0, registry.SCAN, 0), [])
def test_framer_never_raises(stream, cuts):
    """Any bytes in any reads: only Frames, Rejected frames (a body its decoder refused, e.g. a
    0x2202 of 0 ticks per rotation) and CodecErrors come out, and nothing above max_body is
    ever buffered."""
    fz.tried('core.framer.MagicFramer(random)')
    framer = ibeo.make_framer(MAX_BODY)
    t0 = time.perf_counter()
    bounds = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    for a, b in zip(bounds[:-1], bounds[1:]):
        for e in framer.feed(stream[a:b]):
            assert isinstance(e, (Frame, Rejected, CodecError))
            if isinstance(e, (Frame, Rejected)):
                assert len((e if isinstance(e, Frame) else e.frame).body) <= MAX_BODY
        assert framer.buffered <= ibeo.HEADER_SIZE + MAX_BODY
    assert time.perf_counter() - t0 < fz.DECODE_SECONDS


def _nested(cut: bytes, first: bytes) -> bool:
    """The cut message's header is complete and plausible and the first valid message lies
    wholly inside its declared body: nothing in the stream tells that message from payload (no
    header in the window runs past the body's end), so the framer rightly waits for the body."""
    if len(cut) < ibeo.HEADER_SIZE:
        return False
    try:
        header = ibeo.decode_header(cut)
        framing.check_plausible(header)
    except CodecError:
        return False
    return len(cut) + len(first) <= ibeo.HEADER_SIZE + header.size


@given(st.sampled_from(MESSAGES), st.integers(5, 60),
       st.lists(st.sampled_from(MESSAGES), min_size=1, max_size=3))
@example(MESSAGES[0], 30, MESSAGES[:3])
@example(_implausible(MESSAGES[0], 3, 0), 15, MESSAGES[:1])   # header cut inside its type
def test_framer_truncated_message_loses_nothing_after_it(cut_msg, keep, valid):
    """A message cut short (its header plausible or cut itself, its body not all there)
    followed by valid messages: the framer must find them (the cut message's header or body
    holds the next message's magic word / a plausible next header running past its end).
    A first valid message wholly inside the declared body of a complete, plausible header is
    indistinguishable from payload (:func:`_nested`) and is not asked for."""
    fz.tried('core.framer.MagicFramer(truncated)')
    keep = min(keep, len(cut_msg) - 1)
    assume(not _nested(cut_msg[:keep], valid[0]))
    stream = cut_msg[:keep] + b''.join(valid)
    got = _feed(stream, [])
    assert got[-len(valid):] == valid


# --- file source -------------------------------------------------------------------------------

@given(st.lists(st.tuples(_GARBAGE, st.sampled_from(MESSAGES)), min_size=1, max_size=4),
       st.integers(1, 300))
def test_file_source_events(tmp_path_factory, pairs, chunk):
    """A recording read in chunks of any size gives the frames of the whole stream."""
    fz.tried('core.file_source.FileSource')
    stream = b''.join(g + m for g, m in pairs)
    path = tmp_path_factory.mktemp('rec') / 'stream.idc'
    path.write_bytes(stream)
    src = FileSource(path, ibeo.make_framer(MAX_BODY), chunk_size=chunk)
    assert _frames(src.events()) == [m for _, m in pairs]
    assert src.play(lambda e, t: None, speed=0) == len(list(src.events()))


_VS = ibeo_seeds.hand_bodies()[registry.VEHICLE_STATE][0]


def _stamp(event):
    return ibeo.decode_header(event.header).stamp_ns if isinstance(event, Frame) else None


@given(st.lists(st.integers(0, 20_000_000)                     # 0..20 ms apart
                | st.sampled_from([10**12, 10**15, -10**12, -10**15, 2**62]),  # a broken clock
                min_size=1, max_size=8))
@example([2**62])
@example([10**15, -10**15])
def test_file_source_play_never_waits_out_a_clock_jump(tmp_path_factory, deltas):
    """Paced playback with recording times that jump (corrupt NTP, clock reset): playback
    follows the small gaps and does not sleep through a jump of hours or years."""
    fz.tried('core.file_source.FileSource.play')
    ntp_s, stream, wait = 1_000_000, b'', 0
    stream += ibeo_seeds.hand_header(registry.VEHICLE_STATE, len(_VS), ntp_s << 32) + _VS
    ns = 0
    for d in deltas:
        ns = max(0, ns + d)
        ntp = ((ntp_s << 32) + (ns << 32) // 10**9) & (2**64 - 1)
        stream += ibeo_seeds.hand_header(registry.VEHICLE_STATE, len(_VS), ntp) + _VS
        wait += d if 0 <= d <= 20_000_000 else 0
    path = tmp_path_factory.mktemp('rec') / 'paced.idc'
    path.write_bytes(stream)
    src = FileSource(path, ibeo.make_framer(MAX_BODY), chunk_size=64)
    t0 = time.monotonic()
    n = src.play(lambda e, t: None, speed=1.0, stamp_ns=_stamp)
    assert n == len(deltas) + 1
    assert time.monotonic() - t0 < wait / 1e9 + 1.0
