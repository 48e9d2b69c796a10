"""Fuzz: the shared ROS conversions, ros/stamps.py and ros/pointcloud.py.

Stamps: any number becomes a ``builtin_interfaces/Time`` that serialises (sec within int32,
nanosec below 1e9), or is refused (None, or ValueError / CodecError) — never another
exception, never a message that fails in ``publish`` (#10 defect 4).
Point clouds: any structured dtype of PointField types, any values, any byte order: a
PointCloud2 that serialises and reads back byte for byte.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from builtin_interfaces.msg import Time
from std_msgs.msg import Header
from ros_sim_bridge.ros import stamps
from ros_sim_bridge.ros.pointcloud import CloudBuffer, from_pointcloud2, to_pointcloud2

import fuzz_support as fz

INT32 = (-2**31, 2**31 - 1)


def _check_stamp(convert, value) -> None:
    try:
        t = convert(value)
    except ValueError:          # includes CodecError: refused as bad input
        return
    if t is None:               # refused as bad input
        return
    assert isinstance(t, Time)
    assert INT32[0] <= t.sec <= INT32[1] and 0 <= t.nanosec < 1_000_000_000, (value, t)
    fz.serialize(t, Header(stamp=t))
    if isinstance(value, int):
        assert stamps.stamp_to_ns(t) == value


_SECONDS = st.floats() | st.sampled_from(fz.BOUNDARY_FLOATS + (2**31 - 1.0, 2**31, -2**31 - 1.0,
                                                                9.2e18, 9.3e18))


@given(_SECONDS)
@example(math.nan)
@example(math.inf)
@example(9.3e18)
def test_seconds_to_stamp(seconds):
    fz.tried('ros.stamps.seconds_to_stamp')
    _check_stamp(stamps.seconds_to_stamp, seconds)


@given(st.floats(-2**31, 2**31 - 1) | st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2**31 - 1.0,
                                                         2**31 - 1e-6, -1e-9, -1.0]))
@example(-1.0)
@example(2**31 - 1.0)
def test_seconds_to_stamp_in_range(seconds):
    """Every finite time in the stamp's documented range (0 … int32 seconds, ros/stamps.py)
    converts exactly; a time inside int32 but before 0 is refused with StampError
    (a CodecError of kind bad_value), nothing else."""
    fz.tried('ros.stamps.seconds_to_stamp(in range)')
    if seconds < 0:
        with pytest.raises(stamps.StampError) as err:
            stamps.seconds_to_stamp(seconds)
        fz.check_codec_error(err.value)
        assert err.value.kind == 'bad_value'
        return
    t = stamps.seconds_to_stamp(seconds)
    assert 0 <= t.sec <= INT32[1] and 0 <= t.nanosec < 1_000_000_000, (seconds, t)
    fz.serialize(t)
    assert abs(stamps.stamp_to_ns(t) - seconds * 1e9) <= max(1.0, abs(seconds) * 1e9 * 1e-15)


@given(st.integers(-2**70, 2**70) | st.sampled_from([2**63 - 1, -2**63, 2**31 * 10**9]))
@example(2**63 - 1)
def test_ns_to_stamp(ns):
    fz.tried('ros.stamps.ns_to_stamp')
    _check_stamp(stamps.ns_to_stamp, ns)


_FIELD_TYPES = ['i1', 'u1', 'i2', 'u2', 'i4', 'u4', 'f4', 'f8']


@st.composite
def _dtypes(draw) -> np.dtype:
    n = draw(st.integers(1, 6))
    names = draw(st.lists(st.text('xyzabc_', min_size=1, max_size=6), min_size=n, max_size=n,
                          unique=True))
    formats = []
    for _ in names:
        base = draw(st.sampled_from(_FIELD_TYPES))
        order = draw(st.sampled_from(['<', '>'])) if base[1] != '1' else '|'
        count = draw(st.sampled_from([1, 1, 1, 3]))
        formats.append((order + base, (count,)) if count > 1 else order + base)
    offsets, at = [], 0
    for fmt in formats:
        at += draw(st.integers(0, 3))                    # padding between fields
        offsets.append(at)
        at += np.dtype(fmt).itemsize
    return np.dtype({'names': names, 'formats': formats, 'offsets': offsets,
                     'itemsize': at + draw(st.integers(0, 4))})


@given(_dtypes(), st.integers(0, 50), st.binary(min_size=0, max_size=4096), st.booleans())
def test_to_pointcloud2(dtype, n, fill, dense):
    """Random layouts and raw values (NaN, Inf, extremes come from the random bytes)."""
    fz.tried('ros.pointcloud.to_pointcloud2')
    raw = (fill * (1 + n * dtype.itemsize // max(1, len(fill))))[:n * dtype.itemsize] \
        if fill else bytes(n * dtype.itemsize)
    points = np.frombuffer(raw, dtype=dtype, count=n) if n else np.zeros(0, dtype)
    msg = fz.timed(to_pointcloud2, points, Header(frame_id='f'), is_dense=dense)
    fz.serialize(msg)
    assert msg.width == n and msg.point_step == dtype.itemsize
    back = from_pointcloud2(msg)
    host = points.astype(points.dtype.newbyteorder('=')) if n else points
    for name in dtype.names:
        np.testing.assert_array_equal(back[name], host[name], err_msg=name)   # NaN == NaN


@given(st.lists(st.integers(0, 3000), min_size=1, max_size=6))
def test_cloud_buffer(sizes):
    """A reused buffer through a run of cloud sizes (growing, shrinking, empty)."""
    fz.tried('ros.pointcloud.CloudBuffer')
    dtype = np.dtype([('x', '<f4'), ('y', '<f4'), ('i', 'u1')])
    buf = CloudBuffer(dtype)
    for n in sizes:
        pts = buf.points(n)
        if n:
            pts['x'] = np.arange(n)
            pts['y'] = np.nan
        msg = buf.message(pts, Header(frame_id='f'), is_dense=False)
        fz.serialize(msg)
        back = from_pointcloud2(msg)
        assert len(back) == n and (not n or back['x'][-1] == n - 1)
        del pts
