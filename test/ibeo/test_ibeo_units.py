"""The units rule for ibeo (README "Units rule"): the codec keeps the units of the spec's tables
(test_codec_ibeo.py checks those), ``ibeo/codec/units.py`` holds the factors to SI and the
conversion layer applies them.  Here: the SI side of the same golden vectors."""
from __future__ import annotations

import math
import struct

import pytest
from std_msgs.msg import Header

from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.ros import conversions as convert
from ros_sim_bridge.ibeo.ros import lux_native


# --- 0x2202 scan (§3) ---------------------------------------------------------------------------

def scan_body() -> bytes:
    """A §3 scan header at its documented offsets (the numbers of test_codec_ibeo's golden
    scan) and two points."""
    b = bytearray(44)
    struct.pack_into('<HHHQQHhhH', b, 0, 0x1234, 0x030B, 7, 100 << 32, (100 << 32) + 95_348_654,
                     11520, 1600, -1920, 2)
    struct.pack_into('<hhhhhhH', b, 30, -16, 8, 0, 150, -20, 50, 0)
    b += bytes([0x03, 0x00]) + struct.pack('<hHHH', 0, 1000, 150, 0)       # layer 3, ahead
    b += bytes([0x10, 0x42]) + struct.pack('<hHHH', 2880, 2345, 80, 0)     # 90° left, echo 1
    return bytes(b)


def test_scan_header_in_si():
    scan = S.decode_scan(scan_body())
    # the codec: the table's units (test_codec_ibeo); here the SI the conversion layer makes
    assert units.ticks_to_rad(scan.start_angle_ticks, scan.ticks_per_rotation) == \
        pytest.approx(math.radians(50), rel=1e-12)
    assert units.rad_per_tick(11520) == pytest.approx(math.radians(1 / 32), rel=1e-15)
    info = convert.scan_info(scan, Header(frame_id='laser'))
    assert info.start_angle == pytest.approx(math.radians(50), rel=1e-12)
    assert info.end_angle == pytest.approx(math.radians(-60), rel=1e-12)
    assert (info.mounting_yaw, info.mounting_pitch, info.mounting_roll) == pytest.approx(
        (math.radians(-0.5), math.radians(0.25), 0.0), rel=1e-12)
    assert (info.mounting_x, info.mounting_y, info.mounting_z) == pytest.approx(
        (1.5, -0.2, 0.5), rel=1e-12)
    assert info.sync_phase_offset == pytest.approx(7 * 409.6e-9, rel=1e-12)
    assert info.scan_duration == pytest.approx(95_348_654 / 2 ** 32, rel=1e-12)


@pytest.mark.parametrize('native', [True, False], ids=['kernel', 'numpy'])
def test_scan_points_in_si(native):
    if native and lux_native.KERNEL is None:
        pytest.skip('compiled kernel not installed')
    scan, wire = S.decode_scan_wire(scan_body())
    cloud = convert.CloudBuilder(native=native).build_wire(scan, wire)
    e3, e0 = math.radians(1.2), math.radians(-1.2)          # layers 3 and 0 (SUPPLEMENT §3.2)
    assert [cloud['x'][0], cloud['y'][0], cloud['z'][0]] == pytest.approx(
        [10 * math.cos(e3), 0.0, 10 * math.sin(e3)], abs=1e-5)
    assert [cloud['x'][1], cloud['y'][1], cloud['z'][1]] == pytest.approx(
        [0.0, 23.45 * math.cos(e0), 23.45 * math.sin(e0)], abs=1e-5)
    assert cloud['horizontal_angle'].tolist() == pytest.approx([0.0, math.pi / 2], abs=1e-6)
    assert cloud['echo_width'].tolist() == pytest.approx([1.5, 0.8], rel=1e-6)   # cm → m
    assert (cloud['layer'].tolist(), cloud['echo'].tolist(), cloud['flags'].tolist()) == \
        ([3, 0], [0, 1], [0, 2])
    # the float64 reference (ibeo/geometry.py) says the same
    ref = G.scan_cloud(S.decode_scan(scan_body()))
    for name in ('x', 'y', 'z', 'horizontal_angle', 'echo_width'):
        assert cloud[name] == pytest.approx(ref[name], abs=1e-5), name
