"""ros.stamps: every conversion refuses what builtin_interfaces/Time cannot hold."""
import math

import pytest

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError
from ros_sim_bridge.ros.stamps import MAX_SEC, ns_to_stamp, seconds_to_stamp, stamp_to_ns


def test_valid_values_convert_exactly():
    assert (seconds_to_stamp(12.5).sec, seconds_to_stamp(12.5).nanosec) == (12, 500_000_000)
    assert stamp_to_ns(ns_to_stamp(1_700_000_000_123_456_789)) == 1_700_000_000_123_456_789
    assert seconds_to_stamp(0.0).sec == 0 and seconds_to_stamp(float(MAX_SEC)).sec == MAX_SEC


@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf, -1e-9, -1.0, 9.3e18, 1e300,
                                 float(MAX_SEC + 1), 'x', None])
def test_seconds_outside_a_stamp_raise_codec_error(bad):
    with pytest.raises(CodecError) as err:
        seconds_to_stamp(bad, source='RflySim', field='runnedTime')
    assert err.value.kind == BAD_VALUE and err.value.field == 'runnedTime'


@pytest.mark.parametrize('bad', [-1, (MAX_SEC + 1) * 10**9, 2**64])
def test_ns_outside_a_stamp_raise_codec_error(bad):
    with pytest.raises(CodecError):
        ns_to_stamp(bad)
