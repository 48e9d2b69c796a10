"""The compiled walk of object lists (ibeo/codec/object_walk.c) against the Python walk, on
bodies written here from the spec tables: LUX 0x2221 (§4: 10-byte list header, 58-byte
objects little endian, contour count u16 at 56 with 0xFFFF meaning one point, points int16
x, y) and ECU 0x2280 (§11: 10-byte header, 170-byte objects big endian, contour count u8 at
130, points float32 x, y).  Every cut of the body and every damaged count gives the same
record or the same CodecError (message, field, offset, kind) either way."""
import struct

import numpy as np
import pytest

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo.codec import object_walk
from ros_sim_bridge.ibeo.codec import objects as lux
from ros_sim_bridge.ibeo.codec import objects_ecu as ecu

pytestmark = pytest.mark.skipif(not object_walk.NATIVE, reason='the walk kernel is not built')


def lux_body(contours, counts=None) -> bytes:
    body = bytearray(struct.pack('<QH', 0x0102030405060708, len(contours)))
    for i, points in enumerate(contours):
        obj = bytearray(58)
        struct.pack_into('<H', obj, 0, 100 + i)                        # id
        struct.pack_into('<H', obj, 56, len(points) if counts is None else counts[i])
        body += obj + b''.join(struct.pack('<hh', x, y) for x, y in points)
    return bytes(body)


def ecu_body(contours, size=170) -> bytes:
    """0x2280 objects (170 bytes); ``size`` 132: 0x2225 (§10, the count at 130 as well)."""
    body = bytearray(struct.pack('>QH', 0x1122334455667788, len(contours)))
    for i, points in enumerate(contours):
        obj = bytearray(size)
        struct.pack_into('>H', obj, 0, 500 + i)                        # id
        obj[130] = len(points)
        body += obj + b''.join(struct.pack('>ff', x, y) for x, y in points)
    return bytes(body)


def outcome(decode, body, native: bool, monkeypatch):
    monkeypatch.setattr(object_walk, 'NATIVE', native)
    try:
        lst = decode(body)
    except CodecError as e:
        return ('error', str(e), e.field, e.offset, e.kind)
    objects = {n: lst.objects[n].tolist() for n in lst.objects.dtype.names}
    return ('list', objects, [c.tolist() for c in lst.contours], len(lst.contours))


LUX = lux_body([[(1000, -400), (1100, -500)], [(-300, 700)], [], [(1, 2)] * 5],
               counts=[2, 0xFFFF, 0, 5])
ECU = ecu_body([[(11.0, -2.0), (13.0, -4.0)], [], [(0.5, 0.25)] * 7])
ECU_2225 = ecu_body([[(1.0, 2.0)], [(3.0, 4.0)] * 3, []], size=132)


def test_golden_lists_decode_the_same_either_way(monkeypatch):
    got = outcome(lux.decode_objects, LUX, True, monkeypatch)
    assert got == outcome(lux.decode_objects, LUX, False, monkeypatch)
    assert got[1]['id'] == [100, 101, 102, 103]
    assert got[2][:3] == [[[1000, -400], [1100, -500]], [[-300, 700]], []]   # 0xFFFF: one
    got = outcome(ecu.decode_objects_2280, ECU, True, monkeypatch)
    assert got == outcome(ecu.decode_objects_2280, ECU, False, monkeypatch)
    assert got[1]['id'] == [500, 501, 502]
    assert got[2][0] == [[11.0, -2.0], [13.0, -4.0]] and got[2][2] == [[0.5, 0.25]] * 7


@pytest.mark.parametrize('decode, body', [(lux.decode_objects, LUX),
                                          (ecu.decode_objects_2280, ECU),
                                          (ecu.decode_objects_2225, ECU_2225)])
def test_every_cut_and_damaged_count_the_same_either_way(decode, body, monkeypatch):
    errors = set()
    for cut in range(len(body) + 1):
        native = outcome(decode, body[:cut], True, monkeypatch)
        assert native == outcome(decode, body[:cut], False, monkeypatch), cut
        errors.add(native[2] if native[0] == 'error' else 'list')
    # a count raised past the end, on each object
    at = (10 + 56, 2, '<H') if decode is lux.decode_objects else (10 + 130, 1, '>B')  # 1st
    for value in (3, 40, 255):
        damaged = bytearray(body)
        struct.pack_into(at[2], damaged, at[0], value)
        native = outcome(decode, bytes(damaged), True, monkeypatch)
        assert native == outcome(decode, bytes(damaged), False, monkeypatch), value
        errors.add(native[2] if native[0] == 'error' else 'list')
    # every outcome was met: the list, a cut contour, a cut object
    assert 'list' in errors and any(str(e).endswith('.contour') for e in errors)
    assert any(str(e).startswith('objects[') and str(e).endswith(']') for e in errors)


def test_a_thousand_objects_of_varied_contours_the_same_either_way(monkeypatch):
    rng = np.random.default_rng(7)
    shapes = rng.integers(0, 12, 1000)
    body = lux_body([[(int(x), -int(x))] * int(k) for x, k in zip(range(1000), shapes)])
    assert outcome(lux.decode_objects, body, True, monkeypatch) == \
        outcome(lux.decode_objects, body, False, monkeypatch)
