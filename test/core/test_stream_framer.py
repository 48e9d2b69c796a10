"""MagicFramer: resync after garbage, false magic inside bodies, split reads, absurd sizes."""
import struct

from ros_sim_bridge.core.binary import BAD_MAGIC, OVERSIZED, CodecError
from ros_sim_bridge.core.framer import Frame, MagicFramer

MAGIC = b'\xaf\xfe\xc0\xc2'


def body_size(header: bytes) -> int:
    (size,) = struct.unpack_from('>I', header, 4)
    if header[8] != 0x42:
        raise CodecError('test', 'implausible type byte', kind=BAD_MAGIC)
    return size


def framer(max_body=1000):
    return MagicFramer('test', MAGIC, 9, body_size, max_body)


def msg(body: bytes) -> bytes:
    return MAGIC + struct.pack('>I', len(body)) + b'\x42' + body


def frames(events):
    return [e.body for e in events if isinstance(e, Frame)]


def errors(events):
    return [e for e in events if isinstance(e, CodecError)]


def test_back_to_back_messages():
    assert frames(framer().feed(msg(b'one') + msg(b'') + msg(b'three'))) == [b'one', b'', b'three']


def test_garbage_before_and_between():
    f = framer()
    events = f.feed(b'\x00junk' + msg(b'a') + b'\xaf\xfe' + msg(b'b'))
    assert frames(events) == [b'a', b'b']
    assert [e.kind for e in errors(events)] == [BAD_MAGIC, BAD_MAGIC]
    assert f.garbage_bytes == 7


def test_every_split_point_survives():
    stream = b'zz' + msg(b'hello') + msg(MAGIC + b'inside') + b'q' + msg(b'x' * 50)
    for cut in range(len(stream)):
        f = framer()
        events = f.feed(stream[:cut]) + f.feed(stream[cut:])
        assert frames(events) == [b'hello', MAGIC + b'inside', b'x' * 50], cut


def test_a_run_of_garbage_is_one_error_in_any_read_size():
    """Garbage arriving over many reads is one BAD_MAGIC (its bytes all counted); a second run
    after a message is another."""
    junk = bytes(range(256)).replace(b'\xaf', b'') * 3          # no magic word, no prefix
    stream = junk + msg(b'a') + b'zz' + msg(b'b')
    for step in (1, 2, 7, 100, 700, len(stream)):
        f = framer()
        events = [e for k in range(0, len(stream), step) for e in f.feed(stream[k:k + step])]
        assert frames(events) == [b'a', b'b'], step
        assert [e.kind for e in errors(events)] == [BAD_MAGIC, BAD_MAGIC], step
        assert f.garbage_bytes == len(junk) + 2, step


def test_false_sync_resumes_at_next_byte():
    # A magic word followed by an implausible header, then a real message starting inside it.
    fake = MAGIC + b'\x00\x00'
    events = framer().feed(fake + msg(b'real'))
    assert frames(events) == [b'real']


def test_absurd_size_is_refused_not_buffered():
    f = framer(max_body=100)
    events = f.feed(MAGIC + struct.pack('>I', 4_000_000_000) + b'\x42' + msg(b'ok'))
    assert frames(events) == [b'ok']
    assert OVERSIZED in [e.kind for e in errors(events)]
    assert f.buffered == 0


def test_truncated_message_waits_then_reset_drops_it():
    f = framer()
    assert frames(f.feed(msg(b'complete')[:-2])) == []
    f.reset()  # e.g. the link dropped mid-message
    assert frames(f.feed(msg(b'next'))) == [b'next']


def test_awaiting_names_the_body_being_collected_or_skipped():
    f = framer(max_body=100)
    f.skip_oversized = True
    assert f.awaiting == ''
    f.feed(msg(b'x' * 50)[:30])
    assert f.awaiting == 'a message: 50 body bytes, 21 arrived'
    assert frames(f.feed(msg(b'x' * 50)[30:])) == [b'x' * 50] and f.awaiting == ''
    f.feed(msg(b'y' * 300)[:100])
    assert f.awaiting == "the oversized message's last 209 body bytes (skipped)"
    f.feed(msg(b'y' * 300)[100:])
    assert f.awaiting == ''


def test_a_message_framed_whole_ends_a_garbage_run():
    """whole() (a recording's indexed message) ends a run of garbage like a framed message:
    the garbage after it is a new run, reported."""
    f = framer()
    junk = b'\x01\x02\x03'
    events = f.feed(junk) + f.whole(msg(b'a')) + f.feed(junk) + f.feed(msg(b'b'))
    assert frames(events) == [b'a', b'b']
    assert [e.kind for e in errors(events)] == [BAD_MAGIC, BAD_MAGIC]


def test_whole_messages_in_one_read_are_framed_in_place_and_with_views_not_copied():
    # a read of bytes holding whole messages: framed where they lie (the loop's buffer holds
    # only what follows); with views each body is a read-only view of that read, and every
    # split of the stream gives the same frames and errors as the framer without views
    def searching(views):
        f = MagicFramer('test', MAGIC, 9, body_size, 1000, search_window=True, views=views)
        f.VIEW_MIN = 8                          # a body collected over reads: a view too
        return f
    stream = (msg(b'one') + msg(b'x' * 40) + b'junk' + msg(b'a' + MAGIC + b'b') + msg(b'') +
              msg(b'three'))
    f = searching(True)
    events = f.feed(stream)
    first = events[0].body
    assert isinstance(first, memoryview) and first.readonly and first.obj is stream
    assert f.buffered == 0
    assert isinstance(searching(True).feed(bytearray(stream))[0].body, bytes)  # may change
    split = searching(True)
    collected = (split.feed(stream[:20]) + split.feed(stream[20:40]) +
                 split.feed(stream[40:70]))[1].body
    assert bytes(collected) == b'x' * 40 and isinstance(collected.obj, bytearray)
    want = [(type(e).__name__, bytes(e.body) if isinstance(e, Frame) else e.kind)
            for e in searching(False).feed(stream)]
    for views in (False, True):
        for cut in range(len(stream) + 1):
            for second_cut in (cut, min(len(stream), cut + 13)):
                g = searching(views)
                got = (g.feed(stream[:cut]) + g.feed(stream[cut:second_cut]) +
                       g.feed(stream[second_cut:]) + g.finish())
                assert [(type(e).__name__, bytes(e.body) if isinstance(e, Frame) else e.kind)
                        for e in got] == want, (views, cut, second_cut)
    assert [w[1] for w in want if w[0] == 'Frame'] == [b'one', b'x' * 40,
                                                       b'a' + MAGIC + b'b', b'', b'three']


def test_views_frame_refused_and_false_sync_bodies_as_copies_do():
    # with views (bodies collected over reads handed on in their buffer), a body check_body
    # refuses, one holding a plausible header, garbage between: every split of the stream
    # gives the events the framer without views gives
    from ros_sim_bridge.core.framer import Rejected

    def check(frame):
        if bytes(frame.body[:3]) == b'bad':
            raise CodecError('test', 'refused', kind=BAD_MAGIC)
        return len(frame.body)

    def framer_of(views):
        f = MagicFramer('test', MAGIC, 9, body_size, 1000, search_window=True, views=views,
                        check_body=check)
        f.VIEW_MIN = 8
        return f
    stream = (msg(b'ok' + b'y' * 30) + msg(b'bad' + msg(b'inner-message') + b'zz') + b'??' +
              msg(b'bad' + b'q' * 20) + msg(b'ok' + b'w' * 12) + msg(b'tail'))

    def seen(events):
        return [(type(e).__name__, bytes((e.frame if isinstance(e, Rejected) else e).body)
                 if not isinstance(e, CodecError) else e.kind) for e in events]
    plain = framer_of(False)
    want = seen(plain.feed(stream) + plain.finish())
    assert ('Rejected', b'bad' + b'q' * 20) in want and ('Frame', b'inner-message') in want
    for cut in range(len(stream) + 1):
        for views in (False, True):
            f = framer_of(views)
            got = seen(f.feed(stream[:cut]) + f.feed(stream[cut:]) + f.finish())
            assert got == want, (views, cut)
