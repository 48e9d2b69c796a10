"""The shared binary toolkit: bounds checks name message, field and offset; strings; NTP64."""
import struct

import numpy as np
import pytest

from ros_sim_bridge.core import ntp
from ros_sim_bridge.core.binary import (BAD_VALUE, OVERSIZED, TRUNCATED, CodecError,
                                         check_range, encode_fixed_string,
                                         encode_prefixed_string, fixed_string, pack,
                                         prefixed_string, records, require_length, unpack_from)

U16 = struct.Struct('<H')


def test_unpack_past_the_end_names_message_field_offset():
    with pytest.raises(CodecError) as e:
        unpack_from(struct.Struct('<I'), b'\x01\x02\x03', 0, 'EgoStatus', 'velocity')
    err = e.value
    assert (err.message, err.field, err.offset, err.kind) == ('EgoStatus', 'velocity', 0, TRUNCATED)
    assert str(err).startswith('EgoStatus.velocity @0:')


def test_require_length():
    require_length(b'x' * 8, 'M', exact=8)
    with pytest.raises(CodecError) as e:
        require_length(b'x' * 7, 'M', exact=8)
    assert e.value.kind == TRUNCATED
    with pytest.raises(CodecError) as e:
        require_length(b'x' * 9, 'M', exact=8)
    assert e.value.kind == OVERSIZED and e.value.offset == 8
    with pytest.raises(CodecError):
        require_length(b'', 'M', minimum=1)


def test_records_are_zero_copy_and_bounds_checked():
    dt = np.dtype([('a', '<u2'), ('b', '<f4')])
    data = struct.pack('<Hf', 7, 1.5) + struct.pack('<Hf', 9, -2.0)
    arr = records(dt, data, 0, 2, 'Scan', 'points')
    assert arr['a'].tolist() == [7, 9] and arr['b'].tolist() == [1.5, -2.0]
    with pytest.raises(CodecError) as e:
        records(dt, data, 0, 3, 'Scan', 'points')  # a count larger than the payload
    assert e.value.kind == TRUNCATED and e.value.field == 'points'


def test_fixed_strings():
    assert fixed_string(b'abc\0\0xyz', 0, 8, 'M', 'name') == 'abc'
    assert encode_fixed_string('abc', 5, 'M', 'name') == b'abc\0\0'
    assert encode_fixed_string('x' * 30, 30, 'M', 'name') == b'x' * 30
    with pytest.raises(CodecError) as e:
        encode_fixed_string('x' * 31, 30, 'ScenarioLoad', 'file_name')
    assert e.value.kind == BAD_VALUE and '31 bytes' in str(e.value) and 'file_name' in str(e.value)
    with pytest.raises(CodecError):
        fixed_string(b'\xff\xfe', 0, 2, 'M', 'name')
    with pytest.raises(CodecError):
        fixed_string(b'ab', 0, 3, 'M', 'name')


def test_prefixed_strings():
    data = encode_prefixed_string('héllo', U16, 'M', 'text') + b'tail'
    assert data[:2] == b'\x06\x00'
    assert prefixed_string(data, 0, U16, 'M', 'text') == ('héllo', 8)
    with pytest.raises(CodecError):
        prefixed_string(b'\x09\x00abc', 0, U16, 'M', 'text')
    with pytest.raises(CodecError):
        encode_prefixed_string('x' * 300, struct.Struct('<B'), 'M', 'text')


def test_pack_and_range():
    with pytest.raises(CodecError) as e:
        pack(struct.Struct('<b'), [300], 'CtrlCmd', ['gear'])
    assert 'gear' in str(e.value)
    check_range(3, 0, 4, 'CtrlCmd', 'gear')
    with pytest.raises(CodecError):
        check_range(5, 0, 4, 'CtrlCmd', 'gear')


def test_ntp64():
    assert ntp.ntp_to_unix_ns(2_208_988_800, 0) == 0
    assert ntp.ntp_to_unix_ns(2_208_988_801, 0x8000_0000) == 1_500_000_000
    assert ntp.unix_ns_to_ntp(1_500_000_000) == (2_208_988_801, 0x8000_0000)
    value = (3_900_000_000 << 32) | 0x4000_0000
    assert ntp.ntp64_to_unix_ns(value) == (3_900_000_000 - 2_208_988_800) * 10**9 + 250_000_000
    for ns in (0, 1, 999_999_999, 1_700_000_000_123_456_789):
        assert abs(ntp.ntp64_to_unix_ns(ntp.unix_ns_to_ntp64(ns)) - ns) <= 1
    # an unset sensor clock (seconds since power-up) lands before 1970: negative, not a crash
    assert ntp.ntp_to_unix_ns(141, 0) < 0
