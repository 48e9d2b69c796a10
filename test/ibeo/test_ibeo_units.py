"""The units rule for ibeo (docs/development.md, "Units rule"): the codec keeps the units of the spec's tables
(test_codec_ibeo.py checks those), ``ibeo/codec/units.py`` holds the factors to SI and the
conversion layer applies them.  Here: the SI side of the same golden vectors."""
from __future__ import annotations

import dataclasses
import math
import struct

import pytest

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.codec import commands as C
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.codec.header import IbeoHeader
from ros_sim_bridge.ibeo.ros import conversions as convert
from ros_sim_bridge.ibeo.ros import ecu_conversions as ec
from ros_sim_bridge.ibeo.ros import lux_cdr, lux_native

from ibeo_readback import readback


def hx(s: str) -> bytes:
    return bytes.fromhex(s.replace(' ', ''))


# --- command parameters (§7.2) -----------------------------------------------------------------

# GetParameter replies (the bodies of test_codec_ibeo.test_get_parameter_reply_golden): the
# services' value in SI, its text and unit.
@pytest.mark.parametrize('body,si,text,unit', [
    ('1100 0010 C800A8C0', math.nan, '192.168.0.200', ''),
    ('1100 0110 E22E0000', 12002.0, '12002', ''),
    ('1100 0211 800C0000', 12.5, '12.5', 'Hz'),
    ('1100 0111 80F80000', math.radians(-60), None, 'rad'),
    ('1100 0311 E0FF0000', math.radians(-1), None, 'rad'),
    ('1100 0012 96000000', 1.5, '1.5', 'm'),
    ('1100 0312 40FF0000', math.radians(-6), None, 'rad'),
    ('1100 0912 B4000000', 1.8, '1.8', 'm'),
    ('1100 1110 F4010000', 500.0, '500', 'kBd'),
    ('1100 0233 17010000', 0.0279, '0.0279', 'rad'),
])
def test_parameter_reply_in_si(body, si, text, unit):
    pv = C.decode_reply(hx(body)).parameter
    value, got_text, got_unit = convert.parameter_reply_value(C.parameter(pv.index), pv.value)
    assert got_unit == unit == units.parameter_si_unit(C.parameter(pv.index))
    if math.isnan(si):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(si, rel=1e-12)
    assert got_text == (text if text is not None else f'{si:g}')


def test_parameter_angle_si_equals_tick_formula():
    # 1/32 deg counts in SI are exactly the scan's 2π·ticks/11520 (spec §3), for every count
    p = C.parameter('Start angle')
    for raw in range(-1920, 1601):
        si = units.parameter_to_si(p, C.parameter_from_raw(p, raw & 0xFFFF))
        assert si == raw * (2.0 * math.pi / 11520)
        assert C.parameter_to_raw(p, units.parameter_from_si(p, si)) == raw & 0xFFFF


def test_set_parameter_request_in_si():
    # the SetParameter service takes SI: -1.25 m = -125 cm = 0xFF83 (test_codec_ibeo has the
    # same request in the codec's cm)
    x = C.parameter('SensorMounting_X')
    assert convert.parameter_request_raw(x, -1.25) == 0xFF83
    assert convert.parameter_request_raw(x, 0.0, ' -1.25 ') == 0xFF83
    assert convert.parameter_request_raw(x, 0.29) == 29           # rounded, not truncated
    assert convert.parameter_request_raw(x, 0x12345678, raw=True) == 0x12345678
    assert convert.parameter_request_raw(x, -1, raw=True) == 0xFFFFFFFF
    assert convert.parameter_request_raw(C.parameter('Start angle'), math.radians(45)) == 1440
    assert convert.parameter_request_raw(C.parameter('SensorMounting_Yaw'),
                                         math.radians(-6)) == -192 & 0xFFFF
    assert convert.parameter_request_raw(C.parameter('sync angle offset'),
                                         math.radians(-1)) == 0x3FE0
    assert convert.parameter_request_raw(C.parameter('Scan frequency'), 25.0) == 6400
    assert convert.parameter_request_raw(C.parameter('BeamTilt'), 0.0279) == 279
    assert convert.parameter_request_raw(C.parameter('TCP Port'), 12002.0) == 12002
    ip = C.parameter(0x1000)
    assert convert.parameter_request_raw(ip, 0.0, '192.168.0.1') == 0xC0A80001
    with pytest.raises(CodecError):
        convert.parameter_request_raw(ip, 3.0)                     # a number for an address
    with pytest.raises(ValueError):
        convert.parameter_request_raw(x, 0.0, 'one metre')
    with pytest.raises(CodecError):
        convert.parameter_request_raw(C.parameter('Start angle'), math.nan)
    with pytest.raises(CodecError):
        convert.parameter_request_raw(x, 400.0)                    # 40000 cm: not an INT16


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
    info = readback(lux_cdr.scan_info(scan, (1, 2), 'laser'))
    assert (info.header.frame_id, info.scan_number, info.scanner_status, info.device_id) == (
        'laser', 0x1234, 0x030B, 0)
    assert info.start_angle == pytest.approx(math.radians(50), rel=1e-12)
    assert info.end_angle == pytest.approx(math.radians(-60), rel=1e-12)
    assert (info.mounting_yaw, info.mounting_pitch, info.mounting_roll) == pytest.approx(
        (math.radians(-0.5), math.radians(0.25), 0.0), rel=1e-12)
    assert (info.mounting_x, info.mounting_y, info.mounting_z) == pytest.approx(
        (1.5, -0.2, 0.5), rel=1e-12)
    assert info.sync_phase_offset == pytest.approx(7 * 409.6e-9, rel=1e-12)
    assert info.scan_duration == pytest.approx(95_348_654 / 2 ** 32, rel=1e-12)


@pytest.mark.parametrize('start,end', [(100 << 32, 0), (0, 100 << 32),
                                       ((100 << 32) + 5, 100 << 32),
                                       (100 << 32, (1 << 64) - 1),
                                       ((1 << 64) - 1, (1 << 64) - 1)],
                         ids=['end 0', 'start 0', 'end before start', 'end all ones',
                              'both all ones'])
def test_scan_duration_of_a_missing_or_reversed_time_is_nan(start, end):
    """A §3 scan header whose end NTP (offset 14) or start NTP (offset 6) is 0 or all ones
    (never written), or whose end is before its start: scan_duration NaN (was −3.9e9 s for
    an end of 0, 3.9e8 s for an end of all ones); the times as sent."""
    b = bytearray(scan_body())
    struct.pack_into('<QQ', b, 6, start, end)
    info = readback(lux_cdr.scan_info(S.decode_scan(bytes(b)), (1, 2), 'laser'))
    assert math.isnan(info.scan_duration)
    assert info.scan_start_ntp == start and info.scan_end_ntp == end


def test_scan_info_of_scans_with_other_mountings_devices_and_counts():
    """The template keeps what a sensor keeps from scan to scan (device id, ticks per
    rotation, mounting): a scan that differs there, or in its per-scan numbers, gets its own
    values, in either order."""
    first = S.decode_scan(scan_body())
    other = dataclasses.replace(first, scan_number=7, mounting_yaw_ticks=32, mounting_x_cm=-250,
                                ticks_per_rotation=5760, start_ntp=200 << 32,
                                end_ntp=(200 << 32) + (1 << 31))
    moved = dataclasses.replace(first, mounting_yaw_ticks=-64, mounting_x_cm=300)
    for scan, device, tpr in ((first, 0, 11520), (other, 3, 5760), (first, 0, 11520),
                              (moved, 0, 11520), (other, 0, 5760), (first, 0, 11520)):
        info = readback(lux_cdr.scan_info(scan, (1, 2), 'laser', device_id=device,
                                          published_points=5))
        assert (info.device_id, info.angle_ticks_per_rotation, info.scan_number,
                info.published_points, info.scan_points) == (
            device, tpr, scan.scan_number, 5, 2)
        assert info.mounting_yaw == pytest.approx(2 * math.pi * scan.mounting_yaw_ticks / tpr,
                                                  rel=1e-12)
        assert info.mounting_x == pytest.approx(scan.mounting_x_cm / 100, rel=1e-12)
        assert info.start_angle == pytest.approx(2 * math.pi * 1600 / tpr, rel=1e-12)
        assert info.scan_start_ntp == scan.start_ntp
        assert info.scan_duration == pytest.approx((scan.end_ntp - scan.start_ntp) / 2 ** 32,
                                                   rel=1e-12)


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


# --- ECU types ------------------------------------------------------------------------------------

def test_ecu_vehicle_state_distance_in_si():
    body = bytearray(86)
    struct.pack_into('>Qii', body, 4, 555, 123456, -20000)     # 1/10 mm (§15)
    v = registry.decode_message(0x2806, bytes(body))
    assert (v.distance_x, v.distance_y) == (123456, -20000)    # the codec: the table's unit
    odom = readback(dict(ec.IbeoToRos().convert(IbeoHeader(0x2806, 0, 1, 5 << 32), v))[
        '/vehicle_state/odometry'])
    assert (odom.pose.pose.position.x, odom.pose.pose.position.y) == pytest.approx(
        (12.3456, -2.0), rel=1e-12)


def test_ecu_gps_rad_to_navsatfix_deg():
    body = bytearray(127)
    struct.pack_into('>IQB3d', body, 0, 1000, 77, 3, 0.84, 0.2, 500.0)   # rad, rad, m (§22)
    g = registry.decode_message(0x2604, bytes(body))
    assert (g.latitude, g.longitude) == (0.84, 0.2)
    fix = readback(dict(ec.IbeoToRos().convert(IbeoHeader(0x2604, 0, 1, 5 << 32), g))[
        '/gps/fix'])
    assert (fix.latitude, fix.longitude) == pytest.approx((math.degrees(0.84),
                                                           math.degrees(0.2)), rel=1e-12)
