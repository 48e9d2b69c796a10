"""core.native: the addresses handed to kernels, and bytes written in place before anyone
sees them (what cdr_template's compiled filler publishes)."""
import ctypes

import numpy as np
import pytest

from ros_sim_bridge.core.native import address, new_bytes, rewrite_bytes


@pytest.mark.parametrize('make', [
    lambda: np.arange(12, dtype=np.int64),                      # writable, contiguous
    lambda: np.arange(24, dtype=np.int64).reshape(4, 6)[:, 2:4],  # a strided view
    lambda: np.frombuffer(bytes(range(16)), np.uint8)[3:],       # read-only
    lambda: np.broadcast_to(np.arange(3.0), (5, 3)),             # stride 0
    lambda: np.zeros(0),                                         # no bytes
])
def test_address_is_the_first_byte(make):
    a = make()
    assert address(a) == a.__array_interface__['data'][0]
    if a.size:                       # the value read there is the array's first element
        first = (ctypes.c_char * a.itemsize).from_address(address(a)).raw
        assert first == a.reshape(-1)[:1].tobytes()


def test_new_bytes_are_written_in_place():
    made, at = new_bytes(100)
    assert type(made) is bytes and len(made) == 100
    ctypes.memmove(at, b'published as written' + bytes(80), 100)
    assert made == b'published as written' + bytes(80)
    other, elsewhere = new_bytes(100)           # a new object each time, not shared
    assert other is not made and elsewhere != at
    with pytest.raises(ValueError):
        new_bytes(0)


def test_rewritten_bytes_forget_their_hash():
    made, at = new_bytes(20)
    ctypes.memmove(at, b'the first message...', 20)
    first = hash(made)                          # cached in the object
    assert rewrite_bytes(made) == at            # CPython: the same bytes, written again
    ctypes.memmove(at, b'the second message..', 20)
    assert made == b'the second message..'
    assert hash(made) == hash(b'the second message..'[:]) != first
    assert made in {b'the second message..'}
