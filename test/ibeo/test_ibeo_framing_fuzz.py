"""Property tests (hypothesis, seeded) for the Ibeo framer's false-sync handling and the
session on top of it: any byte stream, in any split, gives the same events, only the
project's decode error, and every complete scan that follows a message cut short."""
import struct

from hypothesis import HealthCheck, given, settings, strategies as st

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.framer import Frame, Rejected
from ros_sim_bridge.ibeo.codec.framing import make_framer
from ros_sim_bridge.ibeo.session import LuxSession

SETTINGS = settings(max_examples=150, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
MAGIC = b'\xaf\xfe\xc0\xc2'


def header(data_type, size):
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, 0, size, 0, 0, data_type, 0)


def scan(number, points=1):
    body = struct.pack('<HHHQQHhhHhhhhhhH', number, 0, 0, 0, 0, 11520, 0, 0, points,
                       0, 0, 0, 0, 0, 0, 0)
    body += struct.pack('<BBhHHH', 1, 0, 0, 500, 10, 0) * points
    return header(0x2202, len(body)) + body


junk = st.binary(max_size=60).filter(lambda b: MAGIC[:2] not in b and b[-1:] != MAGIC[:1])


def summary(events):
    out = []
    for e in events:
        if isinstance(e, Frame):
            out.append(('frame', e.header, e.body))
        elif isinstance(e, Rejected):
            out.append(('rejected', e.frame.header, e.frame.body))
        else:
            assert isinstance(e, CodecError)
            out.append(('error', e.kind))
    return out


@SETTINGS
@given(st.binary(max_size=600), st.lists(st.integers(1, 97), max_size=20))
def test_any_bytes_in_any_split_give_the_same_frames(data, cuts):
    # garbage with magic words sprinkled in, cut into arbitrary reads
    stream = data.replace(b'\x00\x00', MAGIC)
    whole = make_framer().feed(stream)
    f = make_framer()
    split, pos = [], 0
    for c in cuts:
        split += f.feed(stream[pos:pos + c])
        pos += c
    split += f.feed(stream[pos:])
    assert [s for s in summary(split) if s[0] != 'error'] == \
        [s for s in summary(whole) if s[0] != 'error']


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 6), junk,
                          st.integers(1, 400), st.integers(0, 100)), min_size=1, max_size=6),
       st.integers(1, 120))
def test_no_scan_after_a_message_cut_short_is_lost(parts, step):
    # each part: a scan, junk, then (kind 0) an object list declaring more bytes than it has,
    # cut after `keep` bytes; the stream ends with complete scans so every window closes
    stream, want, number = b'', [], 0
    for kind, points, noise, declared, keep in parts:
        number += 1
        stream += scan(number, points) + noise
        want.append(number)
        if kind == 0:
            body = struct.pack('<QH', 0, 3) + bytes(min(keep, declared))
            stream += header(0x2221, declared + 10) + body[:max(min(keep, declared), 0) + 10]
    tail = [scan(900 + k, 6) for k in range(8)]          # 8 × 112 bytes: past any window
    stream += b''.join(tail)
    want += [900 + k for k in range(8)]
    s = LuxSession(layers=4)
    events = []
    for k in range(0, len(stream), step):
        events += s.receive_data(stream[k:k + step], 0)
    got = [e.scan.scan_number for e in events if type(e).__name__ == 'Scan']
    assert got == want
