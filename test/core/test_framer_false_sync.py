"""MagicFramer's false-sync checks (issue #10 defect 5), on a toy protocol:
magic (2 bytes) | body length (u16 big-endian) | body."""
import struct

from ros_sim_bridge.core.binary import BAD_VALUE, TRUNCATED, CodecError
from ros_sim_bridge.core.framer import Frame, MagicFramer, Rejected

MAGIC = b'\xca\xfe'


def size(header: bytes) -> int:
    return struct.unpack_from('>H', header, 2)[0]


def msg(body: bytes) -> bytes:
    return MAGIC + struct.pack('>H', len(body)) + body


def check(frame: Frame):
    if not frame.body.startswith(b'ok'):
        raise CodecError('toy', 'body must start with ok', kind=BAD_VALUE)
    return frame.body[2:]


def bodies(events):
    return [e.body for e in events if isinstance(e, Frame)]


def test_window_search_off_by_default_keeps_the_old_behaviour():
    cut = MAGIC + struct.pack('>H', 40) + b'okAB'
    events = MagicFramer('toy', MAGIC, 4, size, 100).feed(cut + msg(b'ok1') + msg(b'ok2'))
    assert bodies(events) == []                 # the window swallows both (waits for more)


def test_window_search_finds_the_messages_a_cut_message_swallowed():
    cut = MAGIC + struct.pack('>H', 40) + b'okAB'
    f = MagicFramer('toy', MAGIC, 4, size, 100, search_window=True)
    events = f.feed(cut + msg(b'ok1') + msg(b'ok2') + msg(b'ok' + b'3' * 40))
    assert bodies(events) == [b'ok1', b'ok2', b'ok' + b'3' * 40]
    assert [e.kind for e in events if isinstance(e, CodecError)][0] == TRUNCATED
    assert f.false_syncs == 1


def test_check_body_rejects_and_resumes_after_the_magic():
    inner = msg(b'ok1') + msg(b'ok2')
    bad = msg(b'no' + inner)                    # inner messages end exactly at its end
    f = MagicFramer('toy', MAGIC, 4, size, 100, check_body=check)
    events = f.feed(bad + msg(b'ok3'))
    assert [e.record for e in events if isinstance(e, Frame)] == [b'1', b'2', b'3']
    (rej,) = [e for e in events if isinstance(e, Rejected)]
    assert rej.frame.body.startswith(b'no') and rej.error.kind == BAD_VALUE


def test_body_size_may_return_a_parsed_header():
    class Parsed:
        def __init__(self, raw):
            self.size = size(raw)
    f = MagicFramer('toy', MAGIC, 4, Parsed, 100)
    (frame,) = f.feed(msg(b'xyz'))
    assert isinstance(frame.parsed, Parsed) and frame.parsed.size == 3 and frame.body == b'xyz'


def test_a_complete_message_followed_by_a_header_is_framed_whatever_its_body_holds():
    # issue #26: a plausible header in the body running past its end is payload when a
    # plausible header stands at that end (split at every byte); without one it is a cut
    phantom = MAGIC + struct.pack('>H', 60)
    stream = msg(b'ok' + phantom + b'xy') + msg(b'ok2')
    for cut in range(len(stream) + 1):
        f = MagicFramer('toy', MAGIC, 4, size, 100, check_body=check, search_window=True)
        events = f.feed(stream[:cut]) + f.feed(stream[cut:])
        assert bodies(events) == [b'ok' + phantom + b'xy', b'ok2'], cut
        assert len(events) == 2 and f.false_syncs == 0, cut
    f = MagicFramer('toy', MAGIC, 4, size, 100, check_body=check, search_window=True)
    events = f.feed(msg(b'ok' + phantom + b'xy') + b'garbage' + b'z' * 60)
    assert [e.kind for e in events if isinstance(e, CodecError)][0] == TRUNCATED
    assert f.false_syncs == 1


def test_a_body_followed_by_a_header_is_not_searched():
    # the common case costs O(1) per message: a complete message followed by a plausible
    # header is framed whatever its body holds, so the magic words in its body are not looked
    # at (each one looked at costs a header parse); only the header's own bytes are
    parsed = []

    def counting(header: bytes) -> int:
        parsed.append(header)
        return size(header)
    body = b'ok' + (MAGIC + b'\xff\xff') * 50      # 50 magic words, headers above max_body
    f = MagicFramer('toy', MAGIC, 4, counting, 1000, check_body=check, search_window=True)
    events = f.feed(msg(body) + msg(b'ok2'))
    assert bodies(events) == [body, b'ok2'] and f.false_syncs == 0
    assert len(parsed) == 2              # each header once (the second as the first's boundary)
    parsed.clear()                       # the next header not in yet: the body is searched
    events = f.feed(msg(body))
    assert bodies(events) == [body] and len(parsed) == 1 + 50


def test_finish_hands_on_a_message_waiting_for_the_bytes_after_it():
    f = MagicFramer('toy', MAGIC, 4, size, 100, search_window=True)
    whole = msg(b'ok' + MAGIC + struct.pack('>H', 60) + b'xy')
    assert f.feed(whole) == []
    assert bodies(f.finish()) == [whole[4:]] and f.buffered == 0
    assert f.finish() == []


def test_finish_frames_the_messages_inside_a_message_the_stream_ended_inside():
    """A header declaring more than ever arrives, then complete messages, then the link is
    lost: the cut message is one TRUNCATED error and the messages inside it are framed (they
    arrived whole; issue #26's rule: nothing valid that arrived is lost)."""
    f = MagicFramer('toy', MAGIC, 4, size, 100, search_window=True)
    cut = MAGIC + struct.pack('>H', 90) + b'q' * 5          # declares 90, 5 arrive
    ok1, ok2 = msg(b'one'), msg(b'two!')
    assert bodies(f.feed(msg(b'zero') + cut + ok1 + ok2)) == [msg(b'zero')[4:]]
    events = f.finish()
    assert [e.kind for e in events if isinstance(e, CodecError)] == [TRUNCATED]
    assert bodies(events) == [ok1[4:], ok2[4:]]
    assert f.cut_short() is None and f.finish() == []
    # a last message cut short as well: said once, by finish, not again by cut_short
    g = MagicFramer('toy', MAGIC, 4, size, 100, search_window=True)
    g.feed(cut + ok1 + MAGIC + struct.pack('>H', 50) + b'r')
    events = g.finish()
    assert bodies(events) == [ok1[4:]]
    assert [e.kind for e in events if isinstance(e, CodecError)] == [TRUNCATED, TRUNCATED]
    assert g.cut_short() is None
