"""core.binary.to_host_order: equal, byte for byte in every named field, to numpy's astype for
the codecs' record layouts and for awkward ones (unaligned and 8-byte fields sharing words with
bytes, nested and sub-array fields, little-endian sources, views with a stride)."""
import numpy as np
import pytest

from ros_sim_bridge.core.binary import to_host_order
from ros_sim_bridge.ibeo.codec import object_association as oa
from ros_sim_bridge.ibeo.codec import scan_ecu as se


def layout(fields, itemsize, order):
    return np.dtype({'names': [f[0] for f in fields],
                     'formats': [np.dtype(f[1]).newbyteorder(order) for f in fields],
                     'offsets': [f[2] for f in fields], 'itemsize': itemsize})


#: padding at bytes 2-3, 9-10, 13, 15, 20-23, 30-31; 2-byte numbers in every position of a word
GAPPY = [('a', 'u2', 0), ('b', 'u1', 4), ('c', 'u2', 5), ('d', 'u1', 7), ('e', 'u1', 8),
         ('f', 'u1', 11), ('g', 'u1', 12), ('h', 'u1', 14), ('i', 'u2', 16), ('j', 'u2', 18),
         ('k', 'f8', 24)]
AWKWARD = [('a', 'u1', 0), ('b', 'i2', 1), ('c', 'f4', 3), ('d', 'u1', 7), ('e', 'f8', 8),
           ('f', 'u2', 16), ('g', 'i8', 20), ('h', 'u1', 28), ('i', 'u1', 29)]
NESTED = np.dtype([('id', '>u2'), ('pose', [('x', '>f4'), ('y', '>f4')]), ('v', '>f8', (3,)),
                   ('flags', 'u1', (4,)), ('t', '>u2')])      # 40 B: the fast path


def same(a, b, padding_zero=True):
    assert a.dtype == b.dtype and len(a) == len(b)
    for name in a.dtype.names:
        x, y = a[name], b[name]
        if x.dtype.names:
            same(x.reshape(-1), y.reshape(-1))
        else:
            assert x.tobytes() == y.tobytes(), name
    if padding_zero and a.dtype.names:
        assert not padding(a).any(), 'padding bytes are not zero'


def padding(a):
    """The bytes of ``a``'s records that no field covers."""
    used = np.zeros(a.dtype.itemsize, bool)

    def mark(dtype, base):
        if dtype.names is None:
            used[base:base + dtype.itemsize] = True
            return
        for name in dtype.names:
            sub, off = dtype.fields[name][:2]
            mark(sub, base + off)
    mark(a.dtype, 0)
    return np.ascontiguousarray(a).view(np.uint8).reshape(len(a), a.dtype.itemsize)[:, ~used]


def host(dtype):
    return dtype.newbyteorder('=') if dtype.names is None else np.dtype(
        {'names': dtype.names, 'formats': [host(dtype.fields[n][0]) for n in dtype.names],
         'offsets': [dtype.fields[n][1] for n in dtype.names], 'itemsize': dtype.itemsize})


@pytest.mark.parametrize('wire,dest', [
    (se.WIRE_POINT_DTYPE, se.POINT_DTYPE),
    (oa.WIRE_ASSOCIATION_DTYPE, oa.ASSOCIATION_DTYPE),
    (layout(AWKWARD, 32, '>'), layout(AWKWARD, 32, '=')),
    (layout(AWKWARD, 32, '<'), layout(AWKWARD, 32, '=')),
    (layout(GAPPY, 32, '>'), layout(GAPPY, 32, '=')),
    (layout(GAPPY, 32, '<'), layout(GAPPY, 32, '=')),
    (layout(GAPPY + [('l', 'u2', 22)], 32, '>'), layout(GAPPY + [('l', 'u2', 22)], 32, '=')),
    (NESTED, None),
], ids=['ecu points', 'association', 'awkward BE', 'awkward LE', 'gappy BE', 'gappy LE',
        'gappy shl16', 'nested'])
@pytest.mark.parametrize('n', [0, 1, 7, 1000])
def test_equals_astype(wire, dest, n):
    dest = dest if dest is not None else host(wire)
    raw = np.random.default_rng(n).integers(0, 256, n * wire.itemsize + 3, np.uint8).tobytes()
    src = np.frombuffer(raw, wire, n, 3)                     # unaligned, as in a message body
    same(to_host_order(src, dest), src.astype(dest))
    assert to_host_order(src, dest).tobytes() == to_host_order(src.copy(), dest).tobytes()
    strided = np.frombuffer(raw[3:] * 2, wire, 2 * n)[::2]   # a view with a stride
    same(to_host_order(strided, dest), strided.astype(dest))


def test_falls_back_for_strings_and_odd_sizes():
    wire = np.dtype([('name', 'S3'), ('v', '>u2')])
    src = np.frombuffer(b'abc\x01\x02xyz\x03\x04', wire)
    out = to_host_order(src, np.dtype([('name', 'S3'), ('v', '=u2')]))
    assert out['name'].tolist() == [b'abc', b'xyz'] and out['v'].tolist() == [0x0102, 0x0304]
