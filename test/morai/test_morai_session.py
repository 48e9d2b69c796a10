"""MORAI session (ROS-free): the sim-time base, and the data_length an unknown layout carries."""
from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from ros_sim_bridge.core import binary
from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.codec.framing import UnknownLayout
from ros_sim_bridge.morai.session import SimTime

S = 1_000_000_000
MAX_NS = (2**31 - 1) * S + S - 1       # int32 seconds, as a ROS stamp holds


def test_receive_time_until_a_first_sim_time_then_its_offset():
    clock = SimTime(MAX_NS)
    assert clock.now(5 * S) == 5 * S
    assert clock.on_status(100, 250, 7 * S) == 100 * S + 250     # its own time
    assert clock.offset_ns == 93 * S + 250
    assert clock.now(8 * S) == 101 * S + 250                      # receive time + offset
    assert clock.on_status(50, 0, 9 * S) == 50 * S                # the newest sets the base
    assert clock.now(10 * S) == 51 * S


def test_now_is_held_within_what_a_stamp_holds():
    clock = SimTime(MAX_NS)
    clock.on_status(0, 0, 100 * S)
    assert clock.now(10 * S) == 0                                 # before sim time 0: 0
    clock.on_status(2**31 - 1, 0, 0)
    assert clock.now(5 * S) == MAX_NS                             # past int32 s: the last


@pytest.mark.parametrize('sec, nsec, field', [(-1, 0, 'sec'), (2**31, 0, 'sec'),
                                              (5, -1, 'nsec'), (5, S, 'nsec')])
def test_a_sim_time_no_stamp_holds_is_bad_value_and_keeps_the_base(sec, nsec, field):
    clock = SimTime(MAX_NS)
    clock.on_status(10, 0, 4 * S)
    with pytest.raises(CodecError) as err:
        clock.on_status(sec, nsec, 5 * S)
    assert err.value.kind == binary.BAD_VALUE and err.value.field == field
    assert err.value.message == 'MORAI'
    assert clock.now(6 * S) == 12 * S


def test_stamp_ns_uses_the_values_sim_time_where_its_layout_has_one():
    clock = SimTime(MAX_NS)
    assert clock.stamp_ns(SimpleNamespace(sec=None, nsec=None), 3 * S) == 3 * S
    assert clock.stamp_ns(SimpleNamespace(sec=20, nsec=5), 3 * S) == 20 * S + 5
    assert clock.stamp_ns(SimpleNamespace(), 4 * S) == 21 * S + 5     # no sec/nsec at all


def _frame(identifier: bytes, data_length: int, total: int) -> bytes:
    buf = bytearray(total)
    buf[:len(identifier)] = identifier
    struct.pack_into('<i', buf, len(identifier), data_length)
    buf[-2:] = b'\r\n'
    return bytes(buf)


def test_an_unknown_layout_carries_the_data_length_read():
    with pytest.raises(UnknownLayout) as err:
        morai.decode('ego_status', _frame(b'#MoraiInfo$', 77, 11 + 16 + 77 + 2))
    assert err.value.kind == binary.UNKNOWN_LAYOUT and err.value.data_length == 77
    with pytest.raises(UnknownLayout) as err:
        morai.identify(_frame(b'#TrafficLight$', 8, 40))
    assert err.value.data_length == 8
