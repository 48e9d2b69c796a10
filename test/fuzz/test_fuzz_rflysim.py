"""Fuzz: RflySim truth decoder and its ROS conversions (random, mutated and boundary datagrams).

Seeds: every wire form from the project's encoders, and the same forms packed here by hand from
SUPPLEMENT §2.2 (checksum, CopterID, … at their documented offsets).
"""
from __future__ import annotations

import struct

import numpy as np

from hypothesis import example, given, strategies as st

from builtin_interfaces.msg import Time
from ros_sim_bridge.core import frames
from ros_sim_bridge.rflysim import codec as rfly
from ros_sim_bridge.rflysim.ros import conversions as convert

import fuzz_support as fz


def _state(form: str, t: float = 12.5) -> rfly.TruthState:
    return rfly.TruthState(form, 3, 2, t, (1.0, -2.0, -3.5), (0.5, 0.25, -0.125),
                           (0.1, -0.2, 1.3), None if form == 'simple_time' else
                           tuple(frames.quat_from_euler(0.1, -0.2, 1.3)), (1000.0,) * 8,
                           None if form == 'simple_time' else (0.1, 0.2, -9.8),
                           None if form == 'simple_time' else (0.01, 0.02, 0.03),
                           (40.0, 116.0, 50.0), 0, None)


def _hand_seeds() -> list[bytes]:
    """The forms packed at the documented offsets (SUPPLEMENT §2.2), not via the codec."""
    sout = bytearray(168)
    struct.pack_into('<4i', sout, 0, 123456789, 3, 2, 0)
    struct.pack_into('<3f', sout, 16, 0.5, 0.25, -0.125)        # VelE
    struct.pack_into('<4f', sout, 40, 1.0, 0.0, 0.0, 0.0)       # AngQuatern
    struct.pack_into('<d', sout, 112, 12.5)                     # runnedTime
    struct.pack_into('<3d', sout, 120, 1.0, -2.0, -3.5)         # PosE
    struct.pack_into('<3d', sout, 144, 40.0, 116.0, 50.0)       # PosGPS
    legacy = bytearray(200)
    struct.pack_into('<iiii d', legacy, 0, -1, 152, 3, 2, 12.5)
    struct.pack_into('<4f', legacy, 60, 1.0, 0.0, 0.0, 0.0)
    struct.pack_into('<3d', legacy, 136, 40.0, 116.0, 50.0)
    doc = bytearray(200)
    struct.pack_into('<ii', doc, 0, 0, 200)
    doc[8:176] = sout
    simple = bytearray(112)
    struct.pack_into('<6i', simple, 0, 1234567891, 3, 2, 400000000, 1160000000, 50000)
    struct.pack_into('<d', simple, 104, 12.5)
    crash = struct.pack('<3i', 1234567890, 3, 7)
    gps = struct.pack('<2i3d', 1234567890, 3, 40.0, 116.0, 50.0)
    out = struct.pack('<2i32d', 1234567890, 3, *range(32))
    return [bytes(b) for b in (sout, legacy, doc, simple, crash, gps, out)]


def _encoder_seeds() -> list[bytes]:
    seeds = [rfly.encode_truth(_state(form), form) for form in rfly.TRUTH_FORMS]
    seeds.append(rfly.encode_crash_notice(rfly.CrashNotice(3, None)))
    seeds.append(rfly.encode_gps_origin(rfly.GpsOrigin(3, (40.0, 116.0, 50.0))))
    seeds.append(rfly.encode_out_copter_struct(rfly.OutCopterStruct(3)))
    return seeds


SEEDS = _hand_seeds() + _encoder_seeds()
STAMP = Time(sec=1, nanosec=2)


def test_seeds_decode():
    """The seeds are valid: the fuzzing starts from real messages."""
    for seed in SEEDS:
        assert rfly.decode(seed, 3) is not None


@given(fz.inputs(SEEDS, max_random=300), st.sampled_from([None, 3, 1, 255]))
@example(b'', None)
@example(b'\x00' * 168, 3)
def test_decode(data, expected):
    fz.tried('rflysim.codec.decode')
    fz.check_decoder(lambda d: rfly.decode(d, expected), data)
    fz.check_decoder(lambda d: rfly.decode_form(d, expected), data)


def _convert(record) -> None:
    """Every conversion the node applies to a decoded record; the bytes read back."""
    from rclpy.serialization import deserialize_message
    from ros_sim_bridge.ros.cdr_template import message_class
    out = []
    if isinstance(record, rfly.TruthState):
        e = convert.EnuState.from_truth(record)
        for order in convert.GPS_ORDERS:
            cdr = convert.VehicleCdr('map', 'base_link', order)
            out += [(cdr._truth, cdr.truth(record, STAMP)),
                    (cdr._fix, cdr.nav_sat_fix(record, STAMP))]
        out += [(cdr._odom[True], cdr.odometry(e, STAMP)), (cdr._imu[True], cdr.imu(e, STAMP)),
                (cdr._tf, cdr.transform(e, STAMP))]
    elif isinstance(record, rfly.CrashNotice):
        cdr = convert.VehicleCdr('map', 'base_link', 'lat_lon_alt')
        out.append((cdr._collision, cdr.collision(record, STAMP)))
    elif isinstance(record, rfly.GpsOrigin):
        tmpl = convert.fix_template('map')
        out.append((tmpl, convert.fix_cdr(tmpl, record.pos_gps, STAMP, 'lat_lon_alt')))
    for tmpl, data in out:
        assert len(data) == len(tmpl)
        deserialize_message(data, message_class(tmpl.type_name))


def _floats(n: int):
    return st.lists(st.sampled_from(fz.BOUNDARY_FLOATS) | st.floats(width=32), min_size=n,
                    max_size=n)


@st.composite
def _boundary_datagram(draw) -> bytes:
    """A valid form whose every float field is a boundary value (NaN, ±Inf, ±3.4e38, …) and
    whose ints are extreme: the conversions must take what the wire can carry."""
    form = draw(st.sampled_from(rfly.TRUTH_FORMS))
    i32 = st.sampled_from([0, 1, -1, 2**31 - 1, -2**31])
    with np.errstate(over='ignore'):             # beyond float32: ±Inf, as a sender would
        f = [float(np.float32(v)) for v in draw(_floats(35))]
    d = draw(st.lists(st.sampled_from(fz.BOUNDARY_FLOATS) | st.floats(), min_size=7, max_size=7))
    if form == 'sout2simulator':
        return struct.pack('<4i24f7d', 123456789, 3, draw(i32), draw(i32), *f[:24], *d)
    if form == 'netdatashort_doc':
        return struct.pack('<2i4i24f7d24x', draw(i32), 200, 123456789, 3, draw(i32), draw(i32),
                           *f[:24], *d)
    if form == 'netdatashort_legacy':
        return struct.pack('<2i2id27f4x3d40x', draw(i32), 152, 3, draw(i32), d[0], *f[:27],
                           *d[1:4])
    return struct.pack('<6i14f4d', 1234567891, 3, draw(i32), draw(i32), draw(i32), draw(i32),
                       *f[:14], *d[:4])


@given(fz.inputs(SEEDS, max_random=300) | _boundary_datagram())
def test_conversions(data):
    fz.tried('rflysim.ros.conversions')
    record = fz.check_decoder(rfly.decode, data)
    if record is not None:
        fz.timed(_convert, record)
