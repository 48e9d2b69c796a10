"""Golden tests of the RflySim truth codec.

The expected bytes are written here from the tables of the spec and SUPPLEMENT §2.2, field by
field at the documented byte offsets (``struct.pack_into`` per field, or hex literals), never with
the codec's own layouts.  Every field gets a distinctive non-zero value, so a swapped or shifted
field fails.  Floats are exact in float32 (multiples of powers of two) where the wire is f32.
"""
from __future__ import annotations

import random
import struct

import pytest

from ros_sim_bridge.core import binary, frames
from ros_sim_bridge.rflysim import codec as r
from ros_sim_bridge.core.binary import CodecError

# --- distinctive values -----------------------------------------------------------------------

VEL = (1.25, -2.5, 0.375)
EULER = (0.0625, -0.125, 2.75)
QUAT = (0.5, -0.25, 0.75, 0.125)
RPM = (1000.5, 1100.25, 1200.75, 1300.125, 1400.0, 1500.5, 1600.25, 1700.75)
ACC = (-0.5, 0.875, -9.75)
RATE = (0.015625, -0.03125, 0.046875)
RUNNED = 123.456789012345
POS = (10.123456789012, -20.987654321098, -30.5555555555)
GPS = (40.1234567890123, 116.3974712345678, 52.123456789)


def i32(buf, off, v):
    struct.pack_into('<i', buf, off, v)


def f32s(buf, off, vals):
    for k, v in enumerate(vals):
        struct.pack_into('<f', buf, off + 4 * k, v)


def f64s(buf, off, vals):
    for k, v in enumerate(vals):
        struct.pack_into('<d', buf, off + 8 * k, v)


def golden_sout(buf=None, base=0, *, checksum=123456789, copter_id=7, vehicle_type=3,
                reserv=42):
    """SOut2Simulator at ``base`` (document table / SUPPLEMENT §2.2 offsets)."""
    if buf is None:
        buf = bytearray(168)
    i32(buf, base + 0, checksum)
    i32(buf, base + 4, copter_id)
    i32(buf, base + 8, vehicle_type)
    i32(buf, base + 12, reserv)
    f32s(buf, base + 16, VEL)
    f32s(buf, base + 28, EULER)
    f32s(buf, base + 40, QUAT)
    f32s(buf, base + 56, RPM)
    f32s(buf, base + 88, ACC)
    f32s(buf, base + 100, RATE)
    f64s(buf, base + 112, (RUNNED,))
    f64s(buf, base + 120, POS)
    f64s(buf, base + 144, GPS)
    return buf


POS32 = (10.5, -20.25, -30.125)  # legacy PosE is float32


def golden_legacy(*, tg=5, length=152, copter_id=7, vehicle_type=3):
    """Legacy netDataShort, 200 B (SUPPLEMENT §2.2 offsets)."""
    buf = bytearray(200)
    i32(buf, 0, tg)
    i32(buf, 4, length)
    i32(buf, 8, copter_id)
    i32(buf, 12, vehicle_type)
    f64s(buf, 16, (RUNNED,))
    f32s(buf, 24, VEL)
    f32s(buf, 36, POS32)
    f32s(buf, 48, EULER)
    f32s(buf, 60, QUAT)
    f32s(buf, 76, RPM)
    f32s(buf, 108, ACC)
    f32s(buf, 120, RATE)
    # 132..135 padding
    f64s(buf, 136, GPS)
    # 160..199 unused
    return buf


def golden_doc(*, tg=30101, length=200, checksum=123456789, copter_id=7):
    buf = bytearray(200)
    i32(buf, 0, tg)
    i32(buf, 4, length)
    golden_sout(buf, 8, checksum=checksum, copter_id=copter_id)
    return buf


GPS_INT = (401234567, 1163974712, 52123)
RPM_S = (2000.5, 2100.25, 2200.75, 2300.125, 2400.0, 2500.5, 2600.25, 2700.75)


def golden_simple(*, checksum=1234567891, copter_id=7, vehicle_type=3):
    """SOut2SimulatorSimpleTime, 112 B (``6i14f4d``)."""
    buf = bytearray(112)
    i32(buf, 0, checksum)
    i32(buf, 4, copter_id)
    i32(buf, 8, vehicle_type)
    for k, v in enumerate(GPS_INT):
        i32(buf, 12 + 4 * k, v)
    f32s(buf, 24, RPM_S)
    f32s(buf, 56, VEL)
    f32s(buf, 68, EULER)
    f64s(buf, 80, POS)
    f64s(buf, 104, (RUNNED,))
    return buf


def golden_gps_origin(*, checksum=1234567890, copter_id=7):
    buf = bytearray(32)
    i32(buf, 0, checksum)
    i32(buf, 4, copter_id)
    f64s(buf, 8, GPS)
    return buf


OUT_VALUES = tuple(1.5 * k - 7.125 + k / 1024 for k in range(32))


def golden_out_copter(*, checksum=1234567890, copter_id=7):
    buf = bytearray(264)
    i32(buf, 0, checksum)
    i32(buf, 4, copter_id)
    f64s(buf, 8, OUT_VALUES)
    return buf


# Crash notice as a hex literal: 1234567890 = 0x499602D2, CopterID 7, target 5.
CRASH_HEX = 'd2029649' '07000000' '05000000'


def approx(vals):
    return pytest.approx(tuple(vals), rel=0, abs=0)


# --- sizes and constants ----------------------------------------------------------------------

def test_sizes_match_the_tables():
    assert r.KNOWN_SIZES == (12, 32, 112, 168, 200, 264)
    assert struct.calcsize('<4i24f7d') == r.SIZE_SOUT2SIMULATOR == 168
    assert r.SIZE_NETDATASHORT == 200 and r.SIZE_SIMPLE_TIME == 112
    assert (r.SIZE_CRASH_NOTICE, r.SIZE_GPS_ORIGIN, r.SIZE_OUT_COPTER) == (12, 32, 264)
    assert (r.CHECKSUM_SOUT2SIMULATOR, r.CHECKSUM_SIMPLE_TIME, r.CHECKSUM_SMALL) == (
        123456789, 1234567891, 1234567890)
    assert len(golden_sout()) == 168 and len(golden_legacy()) == 200
    assert len(golden_doc()) == 200 and len(golden_simple()) == 112


def test_checksum_bytes_as_hex():
    assert bytes(golden_sout()[:4]).hex() == '15cd5b07'    # 123456789
    assert bytes(golden_simple()[:4]).hex() == 'd3029649'  # 1234567891
    assert bytes(golden_gps_origin()[:4]).hex() == 'd2029649'


# --- SOut2Simulator (168) ---------------------------------------------------------------------

def f32(v):
    return struct.unpack('<f', struct.pack('<f', v))[0]


def test_sout2simulator_decode_every_field():
    s = r.decode(bytes(golden_sout()), expected_copter_id=7)
    assert isinstance(s, r.TruthState)
    assert s.form == r.FORM_SOUT2SIMULATOR == 'sout2simulator'
    assert (s.copter_id, s.vehicle_type, s.reserved) == (7, 3, 42)
    assert s.vel_ned == VEL and s.euler == EULER and s.quat_wxyz == QUAT
    assert s.motor_rpm == RPM and s.acc_frd == ACC and s.rate_frd == RATE
    assert s.runned_time == RUNNED           # f64: full precision
    assert s.pos_ned == POS and s.pos_gps == GPS
    assert s.collision_target is None
    assert s.has_quaternion and s.has_body_motion


def test_sout2simulator_form_record_and_encoder():
    golden = bytes(golden_sout())
    rec = r.decode_form(golden)
    assert isinstance(rec, r.SOut2Simulator)
    assert rec.checksum == 123456789 and rec.reserved == 42
    assert r.encode_sout2simulator(rec) == golden
    assert r.encode(rec) == golden
    assert r.encode_truth(r.decode(golden)) == golden


def test_decode_accepts_bytearray_and_memoryview():
    g = golden_sout()
    assert r.decode(g).pos_ned == POS
    assert r.decode(memoryview(bytes(g))).pos_gps == GPS


# --- legacy netDataShort (200, len 152) --------------------------------------------------------

def test_legacy_decode_every_field():
    s = r.decode(bytes(golden_legacy()), expected_copter_id=7)
    assert s.form == r.FORM_NETDATASHORT_LEGACY
    assert (s.copter_id, s.vehicle_type, s.reserved) == (7, 3, 0)
    assert s.runned_time == RUNNED
    assert s.vel_ned == VEL and s.pos_ned == POS32 and s.euler == EULER
    assert s.quat_wxyz == QUAT and s.motor_rpm == RPM
    assert s.acc_frd == ACC and s.rate_frd == RATE and s.pos_gps == GPS
    assert s.collision_target == 5


@pytest.mark.parametrize('tg', [-1, -12345])
def test_legacy_negative_tg_is_no_collision(tg):
    s = r.decode(bytes(golden_legacy(tg=tg)))
    assert s.collision_target is None
    rec = r.decode_form(bytes(golden_legacy(tg=tg)))
    assert rec.tg == tg and rec.length == 152


def test_legacy_tg_zero_is_a_collision_with_id_0():
    assert r.decode(bytes(golden_legacy(tg=0))).collision_target == 0


def test_legacy_padding_and_tail_are_ignored():
    g = golden_legacy()
    g[132:136] = b'\xAA' * 4
    g[160:200] = b'\x55' * 40
    assert r.decode(bytes(g)).pos_gps == GPS


def test_legacy_encoder_matches_golden():
    golden = bytes(golden_legacy())
    rec = r.decode_form(golden)
    assert isinstance(rec, r.NetDataShortLegacy)
    assert r.encode_netdatashort_legacy(rec) == golden
    assert r.encode_truth(r.decode(golden)) == golden  # tg from collision_target


# --- document's netDataShort (200, len 200/168, checksum @8) ----------------------------------

@pytest.mark.parametrize('length', [200, 168])
def test_doc_form_decode_every_field(length):
    golden = bytes(golden_doc(length=length))
    s = r.decode(golden, expected_copter_id=7)
    assert s.form == r.FORM_NETDATASHORT_DOC
    assert (s.copter_id, s.vehicle_type, s.reserved) == (7, 3, 42)
    assert s.vel_ned == VEL and s.euler == EULER and s.quat_wxyz == QUAT
    assert s.motor_rpm == RPM and s.acc_frd == ACC and s.rate_frd == RATE
    assert s.runned_time == RUNNED and s.pos_ned == POS and s.pos_gps == GPS
    assert s.collision_target is None
    rec = r.decode_form(golden)
    assert isinstance(rec, r.NetDataShortDoc)
    assert (rec.tg, rec.length) == (30101, length)
    assert r.encode_netdatashort_doc(rec) == golden


def test_doc_form_encoder_defaults():
    s = r.decode(bytes(golden_doc()))
    assert r.encode_truth(s) == bytes(golden_doc(tg=0))


def test_doc_form_bad_checksum():
    with pytest.raises(CodecError) as e:
        r.decode(bytes(golden_doc(checksum=123456788)))
    assert e.value.kind == binary.BAD_CHECKSUM and e.value.offset == 8


def test_netdatashort_unknown_len():
    with pytest.raises(CodecError) as e:
        r.decode(bytes(golden_legacy(length=160)))
    assert e.value.kind == binary.UNKNOWN_LAYOUT and '160' in str(e.value)


# --- SimpleTime (112) -------------------------------------------------------------------------

def test_simple_time_decode_every_field():
    s = r.decode(bytes(golden_simple()), expected_copter_id=7)
    assert s.form == r.FORM_SIMPLE_TIME
    assert (s.copter_id, s.vehicle_type) == (7, 3)
    assert s.motor_rpm == RPM_S and s.vel_ned == VEL and s.euler == EULER
    assert s.pos_ned == POS and s.runned_time == RUNNED
    assert s.pos_gps == pytest.approx((40.1234567, 116.3974712, 52.123), abs=1e-12)
    assert s.quat_wxyz is None and s.acc_frd is None and s.rate_frd is None
    assert not s.has_quaternion and not s.has_body_motion
    rec = r.decode_form(bytes(golden_simple()))
    assert isinstance(rec, r.SOut2SimulatorSimpleTime)
    assert rec.pos_gps_int == GPS_INT


def test_simple_time_encoder_matches_golden():
    golden = bytes(golden_simple())
    assert r.encode_simple_time(r.decode_form(golden)) == golden
    assert r.encode_truth(r.decode(golden)) == golden  # GPS re-scaled to the same ints


def test_simple_time_bad_checksum_is_not_the_small_one():
    with pytest.raises(CodecError) as e:
        r.decode(bytes(golden_simple(checksum=1234567890)))
    assert e.value.kind == binary.BAD_CHECKSUM


# --- crash notice, GPS origin, outCopterStruct -----------------------------------------------

def test_crash_notice_hex():
    c = r.decode(bytes.fromhex(CRASH_HEX), expected_copter_id=7)
    assert isinstance(c, r.CrashNotice)
    assert (c.copter_id, c.target_id, c.collided) == (7, 5, True)
    assert r.encode_crash_notice(r.CrashNotice(7, 5)).hex() == CRASH_HEX


def test_crash_notice_negative_target():
    raw = bytes.fromhex('d2029649' '07000000' 'ffffffff')
    c = r.decode(raw)
    assert c.target_id is None and not c.collided
    assert r.encode_crash_notice(c) == raw


def test_gps_origin():
    golden = bytes(golden_gps_origin())
    g = r.decode(golden)
    assert isinstance(g, r.GpsOrigin)
    assert g.copter_id == 7 and g.pos_gps == GPS
    assert r.encode_gps_origin(g) == golden
    # map-wide: another vehicle's ID is not a wrong source
    assert r.decode(golden, expected_copter_id=2).pos_gps == GPS


def test_out_copter_struct():
    golden = bytes(golden_out_copter())
    o = r.decode(golden, expected_copter_id=7)
    assert isinstance(o, r.OutCopterStruct) and not isinstance(o, r.TruthState)
    assert o.copter_id == 7 and o.values == OUT_VALUES and len(o.values) == 32
    assert r.encode_out_copter_struct(o) == golden


# --- bad input --------------------------------------------------------------------------------

GOLDENS = {
    'sout': golden_sout, 'legacy': golden_legacy, 'doc': golden_doc, 'simple': golden_simple,
    'gps': golden_gps_origin, 'out': golden_out_copter,
    'crash': lambda **kw: bytearray(bytes.fromhex(CRASH_HEX)),
}


@pytest.mark.parametrize('size', [0, 1, 11])
def test_shorter_than_any_form_is_truncated(size):
    with pytest.raises(CodecError) as e:
        r.decode(bytes(golden_sout())[:size])
    assert e.value.kind == binary.TRUNCATED


@pytest.mark.parametrize('size', [265, 1500, 65507])
def test_longer_than_any_form_is_oversized(size):
    with pytest.raises(CodecError) as e:
        r.decode(bytes(size))
    assert e.value.kind == binary.OVERSIZED


@pytest.mark.parametrize('size', [13, 31, 100, 111, 113, 152, 167, 169, 199, 201, 263])
def test_sizes_between_forms_are_unknown_layouts(size):
    data = (bytes(golden_legacy()) + bytes(100))[:size]
    with pytest.raises(CodecError) as e:
        r.decode(data)
    assert e.value.kind == binary.UNKNOWN_LAYOUT
    assert f'{size} bytes' in str(e.value)


@pytest.mark.parametrize('name', ['sout', 'simple', 'gps', 'out'])
def test_bad_checksum(name):
    with pytest.raises(CodecError) as e:
        r.decode(bytes(GOLDENS[name](checksum=987654321)))
    assert e.value.kind == binary.BAD_CHECKSUM and e.value.field == 'checksum'


def test_crash_notice_bad_checksum():
    raw = bytearray(bytes.fromhex(CRASH_HEX))
    raw[0] ^= 1
    with pytest.raises(CodecError) as e:
        r.decode(bytes(raw))
    assert e.value.kind == binary.BAD_CHECKSUM


@pytest.mark.parametrize('name', ['sout', 'legacy', 'doc', 'simple', 'out', 'crash'])
def test_wrong_copter_id(name):
    data = bytes(GOLDENS[name]())
    assert r.decode(data, expected_copter_id=7) is not None
    with pytest.raises(CodecError) as e:
        r.decode(data, expected_copter_id=8)
    assert e.value.kind == binary.WRONG_SOURCE
    assert '7' in str(e.value) and '8' in str(e.value)


def test_bad_checksum_is_reported_before_wrong_source():
    with pytest.raises(CodecError) as e:
        r.decode(bytes(golden_sout(checksum=1)), expected_copter_id=99)
    assert e.value.kind == binary.BAD_CHECKSUM


@pytest.mark.parametrize('size', r.KNOWN_SIZES)
def test_garbage_of_every_known_size_raises_codec_error(size):
    rng = random.Random(size)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(size))
        try:
            r.decode(data, expected_copter_id=1)
        except CodecError as e:
            assert e.kind in (binary.BAD_CHECKSUM, binary.UNKNOWN_LAYOUT, binary.WRONG_SOURCE)


def test_zeros_are_rejected():
    """The document's 'all zeros' symptom: checksum 0 is never accepted."""
    for size in (12, 32, 112, 168, 200, 264):
        with pytest.raises(CodecError):
            r.decode(bytes(size))


# --- encoders: range and shape errors ---------------------------------------------------------

def test_encoder_value_out_of_range():
    rec = r.decode_form(bytes(golden_sout()))
    rec.copter_id = 2 ** 31
    with pytest.raises(CodecError) as e:
        r.encode_sout2simulator(rec)
    assert 'SOut2Simulator' in str(e.value)


def test_encoder_wrong_vector_length():
    rec = r.decode_form(bytes(golden_sout()))
    rec.quat_wxyz = (1.0, 0.0, 0.0)
    with pytest.raises(CodecError) as e:
        r.encode_sout2simulator(rec)
    assert e.value.field == 'AngQuatern'


def test_encode_truth_fills_missing_fields():
    s = r.decode(bytes(golden_simple()))
    data = r.encode_truth(s, r.FORM_SOUT2SIMULATOR)
    back = r.decode(data)
    assert back.acc_frd == (0.0, 0.0, 0.0) and back.rate_frd == (0.0, 0.0, 0.0)
    assert back.quat_wxyz == pytest.approx(tuple(frames.quat_from_euler(*EULER)), abs=1e-7)
    assert not hasattr(r, 'quat_from_euler')      # one implementation: core.frames
    with pytest.raises(CodecError):
        r.encode_truth(s, 'nope')


def test_round_trip_every_form_keeps_the_fields():
    s = r.decode(bytes(golden_sout()))
    for form in r.TRUTH_FORMS:
        back = r.decode(r.encode_truth(s, form), expected_copter_id=7)
        assert back.form == form
        assert back.vel_ned == VEL and back.euler == EULER
        assert back.runned_time == RUNNED
        assert back.pos_ned == pytest.approx(POS, abs=1e-5 if form.endswith('legacy') else 0)
        if form == 'simple_time':  # wire resolution: 1e-7 deg, 1 mm
            assert back.pos_gps[:2] == pytest.approx(GPS[:2], abs=0.51e-7)
            assert back.pos_gps[2] == pytest.approx(GPS[2], abs=0.51e-3)
        else:
            assert back.pos_gps == GPS


# --- ports ------------------------------------------------------------------------------------

@pytest.mark.parametrize('copter_id, port', [(1, 30101), (2, 30103), (3, 30105), (255, 30609)])
def test_truth_port(copter_id, port):
    assert r.truth_port(copter_id) == port
    assert r.TRUTH_BASE_PORT == 30101


def test_truth_port_base_override():
    assert r.truth_port(3, 40000) == 40004


@pytest.mark.parametrize('bad', [0, -1, 256, 1.0, True, '1'])
def test_truth_port_range(bad):
    with pytest.raises(CodecError):
        r.truth_port(bad)


def test_truth_port_beyond_65535():
    with pytest.raises(CodecError):
        r.truth_port(255, 65500)


def test_codec_is_sans_io():
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(r))
    names = {a.name.split('.')[0] for n in ast.walk(tree)
             if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    modules = {n.module.split('.')[0] for n in ast.walk(tree)
               if isinstance(n, ast.ImportFrom) and n.module}
    assert not ({'socket', 'rclpy', 'select', 'asyncio'} & (names | modules))
    assert 'open(' not in inspect.getsource(r)
