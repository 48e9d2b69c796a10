"""ibeo LUX codec: golden bytes written from the spec tables (struct.pack at documented offsets
or hex literals, never via our encoders), round trips, and bad input through the framer."""
import math
import struct

import numpy as np
import pytest

from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.core.binary import (BAD_MAGIC, BAD_VALUE, OVERSIZED, TRUNCATED,
                                         UNKNOWN_LAYOUT, CodecError)
from ros_sim_bridge.ibeo.codec import commands as C
from ros_sim_bridge.ibeo.codec import errors_warnings as E
from ros_sim_bridge.ibeo.codec import objects as O
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.codec import vehicle_state as V
from ros_sim_bridge.ibeo.codec.framing import make_framer
from ros_sim_bridge.ibeo.codec.header import IbeoHeader, decode_header
from ros_sim_bridge.core.framer import Frame


def hx(text: str) -> bytes:
    return bytes.fromhex(text.replace(' ', '').replace('\n', ''))


def wire(data_type: int, body: bytes, device: int = 0, ntp: int = 0, prev: int = 0) -> bytes:
    """An Ibeo message written straight from §2.4 (big-endian header)."""
    head = bytearray(24)
    struct.pack_into('>I', head, 0, 0xAFFEC0C2)
    struct.pack_into('>I', head, 4, prev)
    struct.pack_into('>I', head, 8, len(body))
    head[12] = 0
    head[13] = device
    struct.pack_into('>H', head, 14, data_type)
    struct.pack_into('>Q', head, 16, ntp)
    return bytes(head) + body


def frames(events):
    return [e for e in events if isinstance(e, Frame)]


def errors(events):
    return [e for e in events if isinstance(e, CodecError)]


def decode_all(events):
    return [ibeo.decode_frame(f) for f in frames(events)]


# --- §2.4 header and §7.3 worked example -----------------------------------------------------

SPEC_7_3 = hx('AFFEC0C2 00000000 0000000A 00 07 2010 0000000000000000'
              '1000 0000 0010 C800A8C0')


def test_spec_7_3_example_encodes_byte_for_byte():
    body = C.encode_set_parameter('IP address', '192.168.0.200')
    assert ibeo.encode_message(0x2010, body, device_id=7) == SPEC_7_3
    assert len(SPEC_7_3) == 34


def test_spec_7_3_example_decodes():
    (frame,) = frames(make_framer().feed(SPEC_7_3))
    header, command = ibeo.decode_frame(frame)
    assert header == IbeoHeader(data_type=0x2010, size=10, device_id=7, ntp=0)
    assert isinstance(command, C.LuxCommand)
    assert command.command_id == C.SET_PARAMETER and command.name == 'set_parameter'
    assert command.parameter_index == 0x1000 and command.parameter_raw == 0xC0A800C8
    assert command.parameter.name == 'IP address'
    assert command.parameter.value == '192.168.0.200'


def test_header_fields_and_time():
    raw = hx('AFFEC0C2 00001234 00000010 00 05 2030') + struct.pack('>II', 3_900_000_000, 1 << 31)
    h = decode_header(raw)
    assert (h.previous_size, h.size, h.device_id, h.data_type) == (0x1234, 16, 5, 0x2030)
    assert h.ntp == (3_900_000_000 << 32) | (1 << 31)
    assert h.stamp_ns == (3_900_000_000 - 2_208_988_800) * 10**9 + 500_000_000
    assert h.ntp_seconds == pytest.approx(3_900_000_000.5)
    assert ibeo.encode_header(h) == raw


def test_header_bad_magic_and_short():
    with pytest.raises(CodecError) as e:
        decode_header(hx('AFFEC0C3') + bytes(20))
    assert e.value.kind == BAD_MAGIC
    with pytest.raises(CodecError) as e:
        decode_header(hx('AFFEC0C2') + bytes(19))
    assert e.value.kind == TRUNCATED


# --- §3 scan 0x2202 ----------------------------------------------------------------------------

START_NTP = (3_900_000_100 << 32) | 0x40000000
END_NTP = START_NTP + int(0.0222 * 2**32)


def golden_scan_body(points, count=None) -> bytes:
    """§3 scan header at its documented offsets, then 10-byte points."""
    b = bytearray(44)
    struct.pack_into('<H', b, 0, 0x1234)          # scan number
    struct.pack_into('<H', b, 2, 0x830B)          # status: ... + upside down
    struct.pack_into('<H', b, 4, 7)               # sync phase offset
    struct.pack_into('<Q', b, 6, START_NTP)
    struct.pack_into('<Q', b, 14, END_NTP)
    struct.pack_into('<H', b, 22, 11520)
    struct.pack_into('<h', b, 24, 1600)
    struct.pack_into('<h', b, 26, -1920)
    struct.pack_into('<H', b, 28, len(points) if count is None else count)
    struct.pack_into('<h', b, 30, -16)            # yaw ticks
    struct.pack_into('<h', b, 32, 8)              # pitch
    struct.pack_into('<h', b, 34, 0)              # roll
    struct.pack_into('<h', b, 36, 150)            # x cm
    struct.pack_into('<h', b, 38, -20)            # y cm
    struct.pack_into('<h', b, 40, 50)             # z cm
    struct.pack_into('<H', b, 42, 0x0402)         # dirt labeled + mirror side rear
    for layer, echo, flags, angle, dist, epw in points:
        p = bytearray(10)
        p[0] = layer | (echo << 4)
        p[1] = flags
        struct.pack_into('<h', p, 2, angle)
        struct.pack_into('<H', p, 4, dist)
        struct.pack_into('<H', p, 6, epw)
        struct.pack_into('<H', p, 8, 0)
        b += p
    return bytes(b)


GOLDEN_POINTS = [
    (3, 0, 0x00, 0, 1000, 150),          # straight ahead, top layer
    (0, 1, 0x42, 2880, 1000, 80),        # 90 deg left, reserved 0x40 + clutter: masked to 0x02
    (2, 2, 0x5D, -1920, 2345, 300),      # 0x5D -> 0x0D transparent+ground+dirt
    (1, 0, 0x04, 1600, 65535, 1),
]


def test_scan_golden_decode():
    scan = ibeo.decode_message(0x2202, golden_scan_body(GOLDEN_POINTS))
    assert isinstance(scan, S.LuxScan)
    assert scan.scan_number == 0x1234 and scan.scanner_status == 0x830B
    # the table's units: 409.6 ns counts, angle ticks, cm (SI: test_ibeo_units.py)
    assert scan.sync_phase_offset == 7
    assert scan.start_ntp == START_NTP and scan.end_ntp == END_NTP
    assert scan.duration_s == pytest.approx(0.0222, abs=1e-9)   # NTP 32.32 s fixed point
    assert scan.ticks_per_rotation == 11520
    assert (scan.start_angle_ticks, scan.end_angle_ticks) == (1600, -1920)
    assert (scan.mounting_yaw_ticks, scan.mounting_pitch_ticks, scan.mounting_roll_ticks) == \
        (-16, 8, 0)
    assert (scan.mounting_x_cm, scan.mounting_y_cm, scan.mounting_z_cm) == (150, -20, 50)
    for si_view in ('start_angle', 'end_angle', 'mounting_rpy_rad', 'mounting_position_m',
                    'sync_phase_offset_s', 'ticks_to_rad'):
        assert not hasattr(scan, si_view), si_view      # SI lives in units/geometry/conversions
    assert scan.mirror_side == 1 and scan.upside_down
    assert scan.flag_names == ['dirt_labeled', 'mirror_side_rear']
    assert 'upside_down' in scan.status_names and 'motor_on' in scan.status_names
    p = scan.points
    assert p.dtype == S.POINT_DTYPE
    assert p['layer'].tolist() == [3, 0, 2, 1]
    assert p['echo'].tolist() == [0, 1, 2, 0]
    assert p['flags'].tolist() == [0x00, 0x02, 0x0D, 0x04]
    assert p['angle_ticks'].tolist() == [0, 2880, -1920, 1600]
    assert p['distance_cm'].tolist() == [1000, 1000, 2345, 65535]
    assert p['echo_width_cm'].tolist() == [150, 80, 300, 1]


def test_scan_round_trip_is_byte_exact():
    pts = [(l, e, f & 0x0F, a, d, w) for l, e, f, a, d, w in GOLDEN_POINTS]
    body = golden_scan_body(pts)
    assert S.encode_scan(S.decode_scan(body)) == body
    assert ibeo.encode_record(S.decode_scan(body)) == (0x2202, body)


def test_scan_xyz_four_layers():
    scan = S.decode_scan(golden_scan_body(GOLDEN_POINTS))
    xyz, h = G.scan_xyz(scan)
    assert xyz.dtype == np.float32 and xyz.shape == (4, 3)
    e3, e0 = math.radians(1.2), math.radians(-1.2)
    assert xyz[0] == pytest.approx([10 * math.cos(e3), 0, 10 * math.sin(e3)], abs=1e-5)
    assert xyz[1] == pytest.approx([0, 10 * math.cos(e0), 10 * math.sin(e0)], abs=1e-5)
    assert h.tolist() == pytest.approx([0, math.pi / 2, math.radians(-60), math.radians(50)],
                                       abs=1e-6)
    # A custom table (astuff order) changes only z.
    xyz2, _ = G.scan_xyz(scan, layer_elevations_deg=(1.6, 0.8, -0.8, -1.6))
    assert xyz2[0, 2] == pytest.approx(10 * math.sin(math.radians(-1.6)), abs=1e-5)


def test_scan_xyz_eight_layer_mirror_tilt():
    tilt = math.radians(1.6)
    pts = np.zeros(2, S.POINT_DTYPE)
    pts['layer'] = 0
    pts['distance_cm'] = 10000
    pts['angle_ticks'] = [0, 2880]
    for side, sign in ((0, -1), (1, +1)):
        xyz, _ = G.points_xyz(pts, 11520, mirror_side=side, beam_tilt_rad=tilt)
        # h = 0: effective tilt = tilt/2·√2·sin(−π/4) = −tilt/2; offset 2·eff → ±tilt.
        assert math.degrees(math.asin(xyz[0, 2] / 100)) == pytest.approx(-1.2 + sign * 1.6,
                                                                         abs=1e-4)
        # h = 90°: sin(π/4 − π/4) = 0 → no tilt there.
        assert math.degrees(math.asin(xyz[1, 2] / 100)) == pytest.approx(-1.2, abs=1e-4)
    up, _ = G.points_xyz(pts, 11520, mirror_side=0, beam_tilt_rad=tilt, upside_down=True)
    assert math.degrees(math.asin(up[0, 2] / 100)) == pytest.approx(0.4, abs=1e-4)
    # scan_xyz: mirror side from the scan, eight_layer only by configuration.
    scan = S.decode_scan(golden_scan_body([(0, 0, 0, 0, 10000, 1)]))
    flat, _ = G.scan_xyz(scan)
    assert math.degrees(math.asin(flat[0, 2] / 100)) == pytest.approx(-1.2, abs=1e-4)
    tilted, _ = G.scan_xyz(scan, eight_layer=True, upside_down=False)
    assert math.degrees(math.asin(tilted[0, 2] / 100)) == pytest.approx(0.4, abs=1e-4)
    cloud = G.scan_cloud(scan, eight_layer=True, upside_down=False)
    assert cloud['layer'].tolist() == [4]
    assert math.hypot(cloud['x'][0], cloud['y'][0], cloud['z'][0]) == pytest.approx(100)


def test_scan_layer_outside_table_is_nan():
    pts = np.zeros(1, S.POINT_DTYPE)
    pts['layer'] = 7
    pts['distance_cm'] = 100
    xyz, _ = G.points_xyz(pts)
    assert np.isnan(xyz).all()


def test_scan_point_count_larger_than_payload():
    body = golden_scan_body(GOLDEN_POINTS[:3], count=5)
    with pytest.raises(CodecError) as e:
        S.decode_scan(body)
    assert e.value.kind == TRUNCATED and e.value.field == 'points'


def test_scan_truncated_header_and_zero_ticks():
    body = golden_scan_body(GOLDEN_POINTS)
    with pytest.raises(CodecError) as e:
        S.decode_scan(body[:43])
    assert e.value.kind == TRUNCATED
    bad = bytearray(body)
    struct.pack_into('<H', bad, 22, 0)
    with pytest.raises(CodecError) as e:
        S.decode_scan(bytes(bad))
    assert e.value.kind == BAD_VALUE


# --- §4 objects 0x2221 -------------------------------------------------------------------------

OBJ_FMT = '<HHHH hh hh hh hh HH hh HH h hh HH hh HHHH'.replace(' ', '')
assert struct.calcsize(OBJ_FMT) == 58


def golden_object(oid, contour, *, count=None, vel=(250, -100), orient=4500, cls=5):
    fixed = struct.pack(
        OBJ_FMT,
        oid, 12, 1, 33,              # id, age, prediction age, relative timestamp (ms)
        1234, -567,                  # reference point (cm)
        10, 20,                      # reference point sigma
        1100, -600,                  # closest point
        1200, -500,                  # bounding box center
        180, 450,                    # bounding box width (Y), length (X)
        1210, -510,                  # object box center
        440, 170,                    # object box size x, y
        orient,                      # 1/100 deg
        vel[0], vel[1],              # absolute velocity (cm/s)
        30, 40,                      # absolute velocity sigma
        -10, 5,                      # relative velocity
        cls, 7, 80,                  # classification, age, certainty
        len(contour) if count is None else count)
    return fixed + b''.join(struct.pack('<hh', x, y) for x, y in contour)


def golden_objects_body():
    return (struct.pack('<QH', START_NTP, 3)
            + golden_object(1, [(1000, -400), (1100, -500)])
            + golden_object(2, [(-300, 700)], count=0xFFFF, vel=(-0x8000, -0x8000), orient=-9000,
                            cls=12)
            + golden_object(3, [], vel=(0, 0), cls=99))


def test_objects_golden_decode_in_spec_units():
    """Values as the §4 table prints them: cm, cm/s, ms; the orientation's 1/100 deg → deg."""
    lst = ibeo.decode_message(0x2221, golden_objects_body())
    assert isinstance(lst, O.LuxObjectList) and len(lst) == 3
    assert lst.scan_start_ntp == START_NTP
    o = lst.objects
    assert o['id'].tolist() == [1, 2, 3]
    a = o[0]
    assert (a['age'], a['prediction_age']) == (12, 1)
    assert a['relative_time'] == 33                                       # ms
    assert (a['reference_x'], a['reference_y']) == (1234, -567)           # cm
    assert (a['reference_sigma_x'], a['reference_sigma_y']) == (10, 20)
    assert (a['closest_x'], a['closest_y']) == (1100, -600)
    assert (a['bbox_center_x'], a['bbox_center_y']) == (1200, -500)
    assert (a['bbox_size_x'], a['bbox_size_y']) == (450, 180)             # length X, width Y
    assert (a['box_center_x'], a['box_center_y']) == (1210, -510)
    assert (a['box_size_x'], a['box_size_y']) == (440, 170)
    assert a['box_orientation'] == pytest.approx(45.0)         # deg: 1/100 deg, not 1/32
    assert a['abs_velocity_valid'] and (a['abs_velocity_x'], a['abs_velocity_y']) == \
        (250, -100)                                                        # cm/s
    assert (a['abs_velocity_sigma_x'], a['abs_velocity_sigma_y']) == (30, 40)
    assert a['rel_velocity_valid'] and (a['rel_velocity_x'], a['rel_velocity_y']) == (-10, 5)
    assert (a['classification'], a['classification_age'], a['classification_certainty']) == \
        (5, 7, 80)
    b = o[1]
    assert not b['abs_velocity_valid']
    assert math.isnan(b['abs_velocity_x']) and math.isnan(b['abs_velocity_y'])
    assert b['abs_velocity_sigma_x'] == 30                    # sigmas pass through
    assert b['rel_velocity_valid']
    assert b['box_orientation'] == pytest.approx(-90.0)
    assert b['classification'] == 12 and O.classification_name(12) == 'bicycle'
    assert o[2]['classification'] == 99 and O.classification_name(99) == 'class_99'
    assert o['contour_count'].tolist() == [2, 1, 0]          # 0xFFFF means one point
    assert lst.contours[0].tolist() == [[1000, -400], [1100, -500]]       # cm
    assert lst.contours[1].tolist() == [[-300, 700]]
    assert lst.contours[2].shape == (0, 2)


def test_objects_round_trip():
    body = golden_objects_body()
    lst = O.decode_objects(body)
    again = O.encode_objects(lst, single_point_as_ffff=True)
    assert again == body
    plain = O.encode_objects(lst)
    assert O.decode_objects(plain).contours[1].tolist() == [[-300, 700]]
    assert plain[10 + 58 + 8 + 58 - 2:10 + 58 + 8 + 58] == b'\x01\x00'   # count 1, not 0xFFFF


def test_objects_empty_and_truncated():
    empty = O.decode_objects(struct.pack('<QH', 5, 0))
    assert len(empty) == 0 and empty.contours == []
    body = golden_objects_body()
    for cut in (9, 10 + 57, 10 + 58 + 7, len(body) - 1):
        with pytest.raises(CodecError) as e:
            O.decode_objects(body[:cut])
        assert e.value.kind == TRUNCATED, cut
    # An object count larger than the payload.
    more = bytearray(body)
    struct.pack_into('<H', more, 8, 4)
    with pytest.raises(CodecError) as e:
        O.decode_objects(bytes(more))
    assert e.value.kind == TRUNCATED


# --- §5 vehicle state 0x2805 ------------------------------------------------------------------

def golden_vehicle_state(flags=0x0100):
    b = bytearray(46)
    struct.pack_into('<Q', b, 0, START_NTP)
    struct.pack_into('<H', b, 8, 77)
    struct.pack_into('<H', b, 10, flags)
    struct.pack_into('<h', b, 12, 1234)        # 12.34 m/s
    struct.pack_into('<h', b, 14, -500)        # -0.5 rad
    struct.pack_into('<h', b, 16, 300)         # 0.03 rad
    struct.pack_into('<i', b, 20, 100000)      # 1000 m
    struct.pack_into('<i', b, 24, -250)        # -2.5 m
    struct.pack_into('<h', b, 28, 15708)       # 1.5708 rad
    struct.pack_into('<H', b, 30, 80)          # 0.08 s
    struct.pack_into('<h', b, 32, 987)         # 0.987 m
    struct.pack_into('<h', b, 34, -12)         # -0.012 m
    struct.pack_into('<h', b, 36, 5)           # 0.0005 rad
    struct.pack_into('<h', b, 40, -1234)       # -0.1234 rad/s
    return bytes(b)


def test_vehicle_state_golden():
    vs = ibeo.decode_message(0x2805, golden_vehicle_state())
    assert isinstance(vs, V.LuxVehicleState)
    assert vs.timestamp_ntp == START_NTP and vs.scan_number == 77
    assert vs.longitudinal_velocity == pytest.approx(12.34)
    assert vs.steering_wheel_angle == pytest.approx(-0.5)
    assert vs.front_wheel_angle == pytest.approx(0.03)
    assert (vs.x, vs.y) == pytest.approx((1000.0, -2.5))
    assert vs.course_angle == pytest.approx(1.5708)
    assert vs.time_difference == 80                       # ms, as the spec's table
    assert (vs.x_difference, vs.y_difference) == pytest.approx((0.987, -0.012))
    assert vs.heading_difference == pytest.approx(0.0005)
    assert vs.yaw_rate == pytest.approx(-0.1234)
    assert vs.valid and vs.error_names == ['steering_wheel_angle_stale']
    assert V.encode_vehicle_state(vs) == golden_vehicle_state()


@pytest.mark.parametrize('flags,valid', [(0, True), (0x0100, True), (0x0200, True),
                                         (0x0300, True), (0x0001, False), (0x0800, False),
                                         (0x0900, False), (0x0002, False)])
def test_vehicle_state_validity_rule(flags, valid):
    assert V.decode_vehicle_state(golden_vehicle_state(flags)).valid is valid


def test_vehicle_state_truncated():
    with pytest.raises(CodecError) as e:
        V.decode_vehicle_state(golden_vehicle_state()[:45])
    assert e.value.kind == TRUNCATED


# --- §6 errors and warnings 0x2030 ------------------------------------------------------------

SPEC_BIT_NAMES = {   # (register offset, bit): name — transcribed from §6.1–6.4
    (0, 0): 'E-SP', (0, 1): 'E-Motor_1', (0, 2): 'E-Buffer_1', (0, 3): 'E-Buffer_2',
    (0, 10): 'E-Motor_2', (0, 11): 'E-Motor_3', (0, 12): 'E-Motor_4', (0, 13): 'E-Motor_5',
    (2, 0): 'E-IF_internal_1', (2, 1): 'E-IF_internal_2', (2, 2): 'E-IF_internal_3',
    (2, 3): 'E-Configuration_1', (2, 4): 'E-Configuration_2', (2, 5): 'E-Configuration_3',
    (2, 6): 'E-Timeout_1', (2, 7): 'E-Timeout_2',
    (4, 0): 'W-CMD', (4, 3): 'W-low_temperature', (4, 4): 'W-high_temperature',
    (4, 5): 'W-Motor_1', (4, 7): 'W-Sync', (4, 12): 'W-SP_1', (4, 13): 'W-SP_2',
    (6, 0): 'W-IF_CAN', (6, 1): 'E-IF_ETH', (6, 2): 'W-CANdata', (6, 3): 'W-IF_internal_1',
    (6, 4): 'W-ETHdata', (6, 5): 'W-Command', (6, 6): 'W-Flash', (6, 7): 'W-Overflow_1',
    (6, 8): 'W-EgoMotion', (6, 9): 'W-Mounting Position', (6, 10): 'W-CalcFrequency',
}


@pytest.mark.parametrize('where', sorted(SPEC_BIT_NAMES))
def test_every_named_error_and_warning_bit(where):
    offset, bit = where
    body = bytearray(16)
    struct.pack_into('<H', body, offset, 1 << bit)
    m = ibeo.decode_message(0x2030, bytes(body))
    names = m.error_names + m.warning_names
    assert names == [SPEC_BIT_NAMES[where]]
    assert m.has_error == (offset < 4) and m.has_warning == (offset >= 4)


@pytest.mark.parametrize('bits,text', [(0x0100, 'APD under temperature'),
                                       (0x0200, 'APD over temperature'),
                                       (0x0300, 'APD temperature sensor defect')])
def test_e_temp_field(bits, text):
    m = E.decode_errors(struct.pack('<8H', bits, 0, 0, 0, 0, 0, 0, 0))
    assert m.errors == [('E-Temp', text)]


def test_errors_golden_multi_and_round_trip():
    body = hx('0103 1000 8020 0204 0000 0000 0000 0000')   # LE words 0x0301 0x0010 0x2080 0x0402
    m = E.decode_errors(body)
    assert (m.error_register_1, m.error_register_2, m.warning_register_1,
            m.warning_register_2) == (0x0301, 0x0010, 0x2080, 0x0402)
    assert m.error_names == ['E-Temp', 'E-SP', 'E-Configuration_2']
    assert m.warning_names == ['W-Sync', 'W-SP_2', 'E-IF_ETH', 'W-CalcFrequency']
    assert E.encode_errors(m) == body
    assert E.encode_errors(E.errors_from_names('W-Sync', 'E-SP')) == \
        hx('0100 0000 8000 0000 0000 0000 0000 0000')
    reserved = E.decode_errors(hx('0000 0000 0000 0080 0000 0000 0000 0000'))
    assert reserved.warning_names == ['warning_register_2.reserved_bit_15']
    with pytest.raises(CodecError) as e:
        E.decode_errors(body[:15])
    assert e.value.kind == TRUNCATED


def test_reserved_bits_are_named_by_their_register():
    """Bits 14 and 15 are reserved in all four registers (§6.1-6.4): each register's get its
    own names (one name for two registers' bits listed the name twice in the sensor-error log
    and added their counts in /diagnostics)."""
    m = E.decode_errors(hx('00C0 00C0 00C0 00C0 0000 0000 0000 0000'))
    assert m.error_names == ['error_register_1.reserved_bit_14',
                             'error_register_1.reserved_bit_15',
                             'error_register_2.reserved_bit_14',
                             'error_register_2.reserved_bit_15']
    assert m.warning_names == ['warning_register_1.reserved_bit_14',
                               'warning_register_1.reserved_bit_15',
                               'warning_register_2.reserved_bit_14',
                               'warning_register_2.reserved_bit_15']


# --- §7 commands 0x2010 and replies 0x2020 ------------------------------------------------------

@pytest.mark.parametrize('encoded,expected', [
    (C.encode_reset(), '0000 0000'),
    (C.encode_get_status(), '0100 0000'),
    (C.encode_save_config(), '0400 0000'),
    (C.encode_set_parameter('Scan frequency', 25.0), '1000 0000 0211 00190000'),
    (C.encode_set_parameter(0x1102, 6400, raw=True), '1000 0000 0211 00190000'),
    (C.encode_set_parameter('start angle', 45.0), '1000 0000 0011 A0050000'),   # deg
    (C.encode_set_parameter('SensorMounting_Y', -25), '1000 0000 0112 E7FF0000'),     # cm
    (C.encode_set_parameter('sync_angle_offset', -1.0), '1000 0000 0311 E03F0000'),   # i14
    (C.encode_set_parameter('SteerRatioPoly1', 0.5), '1000 0000 0D12 0000003F'),
    (C.encode_set_parameter('TCP Port', 12002), '1000 0000 0110 E22E0000'),
    (C.encode_get_parameter(0x1001), '1100 0000 0110'),
    (C.encode_get_parameter('Scan frequency'), '1100 0000 0211'),
    (C.encode_reset_defaults(), '1A00 0000'),
    (C.encode_start_measure(), '2000 0000'),
    (C.encode_stop_measure(), '2100 0000'),
    # SetNTPTimestampSync: fraction at offset 10 (SUPPLEMENT typo fix)
    (C.encode_set_ntp_time(0x01020304, 0xA0B0C0D0), '3400 0000 0000 04030201 D0C0B0A0'),
    (C.encode_ecu_set_filter(0x2202, 0x220F), '0005 0002 2202 220F'),
])
def test_command_encoders_golden(encoded, expected):
    assert encoded == hx(expected)


def test_set_ntp_from_unix_ns():
    body = C.encode_set_ntp_time_unix_ns(1_000_000_000 * 10 + 500_000_000)
    assert struct.unpack_from('<II', body, 6) == (2_208_988_810, 1 << 31)


@pytest.mark.parametrize('body,check', [
    ('0000 0000', lambda c: c.command_id == C.RESET and c.name == 'reset'),
    ('0100 0000', lambda c: c.command_id == C.GET_STATUS),
    ('0400 0000', lambda c: c.command_id == C.SAVE_CONFIG),
    ('1000 0000 0211 00190000', lambda c: (c.parameter_index, c.parameter.value) == (0x1102, 25.0)),
    ('1100 0000 0010', lambda c: c.parameter_index == 0x1000 and c.parameter is None),
    ('1A00 0000', lambda c: c.command_id == C.RESET_DEFAULTS),
    ('2000 0000', lambda c: c.command_id == C.START_MEASURE),
    ('2100 0000', lambda c: c.name == 'stop_measure'),
    ('3400 0000 0000 04030201 D0C0B0A0',
     lambda c: (c.ntp_seconds, c.ntp_fraction) == (0x01020304, 0xA0B0C0D0)),
    ('3000 0000 0000 04030201', lambda c: c.ntp_seconds == 0x01020304 and c.ntp_fraction is None),
    ('3100 0000 0000 04030201', lambda c: c.ntp_fraction == 0x01020304),
    ('0005 0002 2202 220F', lambda c: c.name == 'ecu_set_filter' and c.data == hx('2202220F')),
])
def test_command_decoders_golden(body, check):
    c = ibeo.decode_message(0x2010, hx(body))
    assert check(c)
    assert ibeo.encode_record(c) == (0x2010, hx(body))


@pytest.mark.parametrize('body', ['1000 0000 0211 0019', '1100 0000 00', '3400 0000 0000 04030201',
                                  '10'])
def test_command_truncated(body):
    with pytest.raises(CodecError) as e:
        C.decode_command(hx(body))
    assert e.value.kind == TRUNCATED


def golden_status_reply():
    b = bytearray(32)
    struct.pack_into('<H', b, 0, 0x0001)
    struct.pack_into('<H', b, 2, 0x123B)      # firmware 1.2.3b
    struct.pack_into('<H', b, 4, 0x9604)      # FPGA
    struct.pack_into('<H', b, 6, 0x030B)      # scanner status
    struct.pack_into('<I', b, 8, 0xDEADBEEF)  # reserved/internal
    struct.pack_into('<H', b, 12, 452)        # temperature raw
    struct.pack_into('<H', b, 14, 0x0740)     # serial 0: 2007 week 40
    struct.pack_into('<H', b, 16, 1234)       # serial 1
    struct.pack_into('<H', b, 18, 0)
    struct.pack_into('<3H', b, 20, 0x2012, 0x0921, 0x1530)
    struct.pack_into('<3H', b, 26, 0x2013, 0x0211, 0x0900)
    return bytes(b)


def test_get_status_reply_golden():
    r = ibeo.decode_message(0x2020, golden_status_reply())
    assert isinstance(r, C.LuxReply) and r.success and r.command_id == C.GET_STATUS
    s = r.status
    assert s.firmware_version_str == '1.2.3b' and C.version_string(0x1230) == '1.2.3'
    assert s.fpga_version == 0x9604 and s.scanner_status == 0x030B
    assert s.reserved_internal == 0xDEADBEEF
    assert s.temperature_c == pytest.approx(-(452 - 579.2364) / 3.63)
    assert s.serial_number == '0740-01234'
    assert s.fpga_date == '2012-09-21 15:30' and s.dsp_date == '2013-02-11 09:00'
    assert s.status_names[:2] == ['motor_on', 'laser_on']
    assert C.encode_reply(r) == golden_status_reply()
    with pytest.raises(CodecError) as e:
        C.decode_reply(golden_status_reply()[:31])
    assert e.value.kind == TRUNCATED


# §7.2 values as the table states them: 1/32 deg counts → deg, 1/256 Hz → Hz, cm stay cm,
# BeamTilt 1/10000 rad → rad (SUPPLEMENT §3.2); SI (the services' values) in test_ibeo_units.py.
@pytest.mark.parametrize('body,name,value,unit', [
    ('1100 0010 C800A8C0', 'IP address', '192.168.0.200', ''),
    ('1100 0110 E22E0000', 'TCP Port', 12002, ''),
    ('1100 0211 800C0000', 'Scan frequency', 12.5, 'Hz'),             # 3200 / 256
    ('1100 0111 80F80000', 'End angle', -60.0, 'deg'),                # -1920 / 32
    ('1100 0311 E0FF0000', 'Sync angle offset', -1.0, 'deg'),         # bits 14/15 ignored
    ('1100 0012 96000000', 'SensorMounting_X', 150.0, 'cm'),
    ('1100 0312 40FF0000', 'SensorMounting_Yaw', -6.0, 'deg'),         # -192 / 32
    ('1100 0912 B4000000', 'VehicleWidth', 180.0, 'cm'),
    ('1100 1110 F4010000', 'CAN Baud Rate', 500, 'kBd'),
    ('1100 0D12 0000003F', 'SteerRatioPoly1', 0.5, ''),
    ('1100 0133 18000000', 'DeviceType', 0x18, ''),
    ('1100 0233 17010000', 'BeamTilt', 0.0279, 'rad'),                # 279 / 10000
    ('1100 0599 78563412', '0x9905', 0x12345678, ''),                 # unknown index: raw u32
])
def test_get_parameter_reply_golden(body, name, value, unit):
    r = C.decode_reply(hx(body))
    assert r.success and r.command_id == C.GET_PARAMETER
    assert r.parameter.name == name and C.parameter(r.parameter.index).unit == unit
    assert type(r.parameter.value) is type(value)
    assert r.parameter.value == pytest.approx(value, rel=1e-12) if isinstance(value, float) \
        else r.parameter.value == value
    assert C.encode_reply(r) == hx(body)


@pytest.mark.parametrize('cid', [C.SAVE_CONFIG, C.SET_PARAMETER, C.RESET_DEFAULTS,
                                 C.START_MEASURE, C.STOP_MEASURE, C.SET_NTP_TIMESTAMP_SYNC])
def test_ack_replies_golden(cid):
    r = C.decode_reply(struct.pack('<H', cid))
    assert r.success and r.command_id == cid and r.data == b''
    assert C.encode_reply(C.ack(cid)) == struct.pack('<H', cid)


@pytest.mark.parametrize('cid', [C.GET_STATUS, C.GET_PARAMETER, C.SET_PARAMETER, C.STOP_MEASURE])
def test_failure_replies(cid):
    r = C.decode_reply(struct.pack('<H', cid | 0x8000))
    assert not r.success and r.command_id == cid and r.status is None and r.parameter is None
    assert C.encode_reply(C.failure(cid)) == struct.pack('<H', cid | 0x8000)


def test_parameter_lookup_and_bad_values():
    assert C.parameter('scan_frequency').index == 0x1102
    assert C.parameter('SENSORMOUNTING_YAW').index == 0x1203
    with pytest.raises(CodecError):
        C.parameter('no such parameter')
    with pytest.raises(CodecError):
        C.encode_set_parameter('Scan frequency', 1e6)
    with pytest.raises(CodecError):
        C.encode_set_parameter('IP address', '300.1.2.3')
    with pytest.raises(CodecError):
        C.encode_set_parameter('Start angle', 'left')


# --- registry -------------------------------------------------------------------------------

def test_registry_unknown_types():
    for t in (0x2209, 0x7100, 0x2850, 0x1234):      # 0x2205 is decoded since #11
        with pytest.raises(CodecError) as e:
            ibeo.decode_message(t, b'\x00' * 8)
        assert e.value.kind == UNKNOWN_LAYOUT
    assert ibeo.type_name(0x2205) == 'ecu_scan_2205'
    assert set(ibeo.registry.registered_types()) == {
        0x2010, 0x2020, 0x2030, 0x2202, 0x2221, 0x2805,
        # ECU / FUSION types (#11)
        0x1100, 0x2204, 0x2205, 0x2225, 0x2280, 0x2281, 0x2291, 0x2403, 0x2604, 0x2806, 0x2807,
        0x2808, 0x2821, 0x6120, 0x6400, 0x6410, 0x6420, 0x6430, 0x6700, 0x6701, 0x6705,
        0x9001, 0x9002, 0x1002, 0x4001, 0x6130, 0x6970, 0x7110, 0x7510, 0x9000}


def test_registry_encode_record_message():
    vs = V.decode_vehicle_state(golden_vehicle_state())
    msg = ibeo.encode_record_message(vs, device_id=3, ntp=42)
    assert msg == wire(0x2805, golden_vehicle_state(), device=3, ntp=42)


# --- stream: framer + decoders --------------------------------------------------------------

def sample_stream():
    return [wire(0x2202, golden_scan_body(GOLDEN_POINTS)), wire(0x2030, bytes(16)),
            wire(0x2221, golden_objects_body()), wire(0x2805, golden_vehicle_state()),
            wire(0x2020, golden_status_reply()), wire(0x2020, hx('2100'))]


def test_stream_of_every_type():
    records = decode_all(make_framer().feed(b''.join(sample_stream())))
    assert [type(r).__name__ for _, r in records] == [
        'LuxScan', 'LuxErrorsWarnings', 'LuxObjectList', 'LuxVehicleState', 'LuxReply',
        'LuxReply']


def test_garbage_between_messages():
    msgs = sample_stream()
    stream = b'\x00junk' + msgs[0] + b'\xaf\xfe\x13' + msgs[1] + b'\xaf' + msgs[2]
    f = make_framer()
    events = f.feed(stream)
    assert len(decode_all(events)) == 3
    assert [e.kind for e in errors(events)] == [BAD_MAGIC] * 3
    assert f.garbage_bytes == 5 + 3 + 1


def test_magic_word_inside_payload():
    # A point whose bytes read AF FE C0 C2: layer 0xF / echo 0xA, flags 0xFE, angle 0xC2C0.
    pts = [(0xF, 0xA, 0xFE, struct.unpack('<h', b'\xc0\xc2')[0], 500, 9)]
    scan_msg = wire(0x2202, golden_scan_body(pts))
    assert scan_msg[24:].find(hx('AFFEC0C2')) > 0
    # An unknown type whose payload holds a complete fake header announcing 5 bytes.
    fake = wire(0x7100, wire(0x2020, hx('2100')) + b'tail')
    events = make_framer().feed(scan_msg + fake + wire(0x2030, bytes(16)))
    assert not errors(events)
    fs = frames(events)
    assert len(fs) == 3
    scan = ibeo.decode_frame(fs[0])[1]
    assert (scan.points['layer'][0], scan.points['echo'][0], scan.points['flags'][0]) == \
        (0xF, 0xA, 0x0E)
    with pytest.raises(CodecError) as e:
        ibeo.decode_frame(fs[1])
    assert e.value.kind == UNKNOWN_LAYOUT
    assert isinstance(ibeo.decode_frame(fs[2])[1], E.LuxErrorsWarnings)


def test_resync_after_garbage_lands_on_payload_magic():
    # Garbage holding a magic word and an implausible header, then real messages.
    bogus = hx('AFFEC0C2') + bytes(4) + struct.pack('>I', 3) + b'\x00\x00\x20\x30' + bytes(8)
    events = make_framer().feed(bogus + b''.join(sample_stream()))
    assert len(frames(events)) == 6
    assert any(e.kind == BAD_VALUE and e.field == 'size' for e in errors(events))


def test_unknown_types_skipped_by_size():
    unknown = [wire(0x2209, bytes(range(256)) * 3), wire(0x7100, hx('AFFEC0C2') * 10),
               wire(0x2850, b'')]
    stream = unknown[0] + sample_stream()[1] + unknown[1] + unknown[2] + sample_stream()[3]
    decoded, skipped = [], []
    for f in frames(make_framer().feed(stream)):
        try:
            decoded.append(ibeo.decode_frame(f)[1])
        except CodecError as e:
            assert e.kind == UNKNOWN_LAYOUT
            skipped.append(decode_header(f.header).data_type)
    assert skipped == [0x2209, 0x7100, 0x2850]
    assert [type(r).__name__ for r in decoded] == ['LuxErrorsWarnings', 'LuxVehicleState']


def test_absurd_size_is_refused_and_stream_resyncs():
    absurd = hx('AFFEC0C2 00000000 FFFFFFF0 00 00 2202') + bytes(8)
    f = make_framer()
    events = f.feed(absurd + sample_stream()[1])
    assert len(frames(events)) == 1
    assert errors(events)[0].kind in (BAD_VALUE, OVERSIZED)
    assert f.buffered == 0
    # Over the framer limit but plausible otherwise (unknown type): OVERSIZED, not buffered.
    small = make_framer(max_body=1000)
    events = small.feed(wire(0x7100, bytes(2000))[:24] + sample_stream()[1])
    assert [e.kind for e in errors(events)][0] == OVERSIZED
    assert len(frames(events)) == 1 and small.buffered == 0


def test_large_messages_above_64k_pass():
    pts = [(i % 4, 0, 0, 1600 - (i % 3200), 100 + i % 1000, 50) for i in range(7000)]
    msg = wire(0x2202, golden_scan_body(pts))
    assert len(msg) > 65536
    f = make_framer()
    events = f.feed(msg[:30000]) + f.feed(msg[30000:])
    ((_, scan),) = decode_all(events)
    assert len(scan.points) == 7000


def test_implausible_type_and_wrong_size_for_known_type():
    for bad in (hx('AFFEC0C2 00000000 00000010 00 00 0042') + bytes(8),    # type outside range
                hx('AFFEC0C2 00000000 00000003 00 00 2030') + bytes(8),    # 0x2030 needs 16
                hx('AFFEC0C2 00000000 00000004 00 00 2202') + bytes(8)):   # 0x2202 needs >= 44
        events = make_framer().feed(bad + sample_stream()[3])
        assert [type(r).__name__ for _, r in decode_all(events)] == ['LuxVehicleState']
        assert errors(events)[0].kind == BAD_VALUE


def test_magic_split_across_every_feed_boundary():
    stream = b'xy' + b''.join(sample_stream()[:2]) + sample_stream()[5]
    expected = [type(r).__name__ for _, r in decode_all(make_framer().feed(stream))]
    assert expected == ['LuxScan', 'LuxErrorsWarnings', 'LuxReply']
    for cut in range(len(stream)):
        f = make_framer()
        got = decode_all(f.feed(stream[:cut]) + f.feed(stream[cut:]))
        assert [type(r).__name__ for _, r in got] == expected, cut


def test_byte_by_byte_feed():
    stream = b''.join(sample_stream())
    f = make_framer()
    events = []
    for i in range(len(stream)):
        events += f.feed(stream[i:i + 1])
    assert len(decode_all(events)) == 6 and not errors(events)


def test_stream_cut_mid_message():
    msgs = sample_stream()
    f = make_framer()
    events = f.feed(msgs[0] + msgs[2][:100])
    assert len(frames(events)) == 1
    assert f.buffered > 0
    f.reset()   # reconnect: the old tail is meaningless
    events = f.feed(msgs[3])
    ((_, vs),) = decode_all(events)
    assert isinstance(vs, V.LuxVehicleState)
    # Without a reset the framer waits; a frame cut mid-body decodes as truncated when forced.
    with pytest.raises(CodecError) as e:
        ibeo.decode_message(0x2221, golden_objects_body()[:50])
    assert e.value.kind == TRUNCATED


def test_split_messages_helper():
    got, errs = ibeo.split_messages(b'zz' + b''.join(sample_stream()))
    assert len(got) == 6 and len(errs) == 1


def test_set_parameter_request_to_wire_value():
    # §7.1.4: the value travels as 32 bits, 2-byte values in the low half; SensorMounting_X is
    # INT16 in cm (the codec's unit), so -125 cm = 0xFF83; an IP address is 4 bytes, first
    # octet highest.  The SI form of the same requests: test_ibeo_units.py.
    x = C.parameter('SensorMounting_X')
    assert C.raw_from_request(x, -125) == 0xFF83
    assert C.raw_from_request(x, 0.0, ' -125 ') == 0xFF83
    assert C.raw_from_request(C.parameter('Start angle'), 50.0) == 1600     # deg, 1/32 deg
    assert C.raw_from_request(C.parameter('End angle'), -60.0) == -1920 & 0xFFFF
    assert C.raw_from_request(C.parameter('Scan frequency'), 25.0) == 6400
    assert C.raw_from_request(x, 0x12345678, raw=True) == 0x12345678
    assert C.raw_from_request(x, -1, raw=True) == 0xFFFFFFFF
    ip = C.parameter(0x1000)
    assert ip.kind == 'ip'
    assert C.raw_from_request(ip, 0.0, '192.168.0.1') == 0xC0A80001
    with pytest.raises(CodecError):
        C.raw_from_request(ip, 3.0)                   # a number for an address
    with pytest.raises(ValueError):
        C.raw_from_request(x, 0.0, 'one metre')
