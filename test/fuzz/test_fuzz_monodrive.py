"""Fuzz: the monoDrive codec (ROS-free): control framing and envelope, JSON parsing and the known
message bodies, the sensor framer and header detector, and every sensor payload decoder.

Seeds are the hand-written vectors of SUPPLEMENT §4.1–§4.4 (as in
test/monodrive/test_monodrive_codec.py) and frames made by the project's encoders.  Every
entry point returns or raises CodecError (fields set, byte-level errors with an offset), in
bounded time and memory; the framers never raise and never buffer more than their cap.
"""
from __future__ import annotations

import json
import struct
import time

import numpy as np
from hypothesis import example, given, strategies as st

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.monodrive import lidar_geometry, sensors
from ros_sim_bridge.monodrive import session as sess
from ros_sim_bridge.monodrive.codec import control, lidar, messages, payloads, sensor

import fuzz_support as fz

# --- seeds (SUPPLEMENT §4) -----------------------------------------------------------------
GET_VERSION_JSON = b'{"type":"GetVersion","reference":7,"message":{}}'
REPLY_JSON = (b'{"type":"GetVersion","reference":7,"success":true,'
              b'"message":"simulator_version: 1.14, api_version: 5.0"}')
CONTROL_FRAMES = [bytes.fromhex('6d6f6e6f 00000038') + GET_VERSION_JSON,
                  bytes.fromhex('6f6e6f6d 00000070') + REPLY_JSON,      # May-2020 reply magic
                  bytes.fromhex('6d6f6e6f 00000070') + REPLY_JSON,
                  control.encode_request('EgoControl', 3, {'forward_amount': 0.5,
                                                           'right_amount': -0.1,
                                                           'brake_amount': 0.0,
                                                           'drive_mode': 1}),
                  control.encode_frame("{'type': 'Step', 'reference': '9', 'message': "
                                       "{'amount': 1}}\0", control.LEGACY_REPLY_MAGIC),
                  control.encode_frame(b'{"type":"GetVersion","reference":"\xc2\xb2",'
                                       b'"message":"\\ud800"}'),
                  control.encode_frame(b'{"type":"GetVersion","reference":1,"message":'
                                       b'{"x":%s}}' % (b'9' * 400))]   # (cap 4096 here)
IMU_PAYLOAD = bytes.fromhex('c2 3f800000 c0000000 411cf5c3 3e800000 00000000 bf000000'
                            '000003e8 1234 0001e240')
GPS_PAYLOAD = bytes.fromhex('55 020a 0001 22 403e400000000000 c058600000000000'
                            '4062c00000000000 42c80000 c2480000 3f800000 00000000 00000000'
                            '42b40000 41480000 0002 0003 0c 01 abcd')
RPM_PAYLOAD = bytes.fromhex('00000002 43480000')
RADAR_JSON = (b'{"target_list":[{"range":1500,"aoa":-3.5,"velocity":2,"rcs":10,'
              b'"target_ids":["car_1"]}],"gt_targets":[{"range":10,"aoa":0,"velocity":0,'
              b'"rcs":1}]}')
_VEHICLE = ('{"state":{"name":"ego","tags":["ego"],"odometry":{"pose":{"position":'
            '{"x":100,"y":-200,"z":30},"orientation":{"x":0,"y":0,"z":0,"w":1}},'
            '"linear_velocity":{"x":1000,"y":0,"z":0},"angular_velocity":{"x":0,"y":0,'
            '"z":0.1}}}}')
STATE_JSON = ('{"time":1,"game_time":2.5,"sample_count":3,"frame":{"vehicles":[' + _VEHICLE
              + ',' + _VEHICLE.replace('"x":100,', '"x":null,') + '],"objects":['
              + _VEHICLE.replace('"ego"', '"cone"') + ']}}').encode()


def _velodyne_packet() -> bytes:
    """Block 0 at 90.00°: channel 0 at 10 m (refl 100), channel 17 at 2 m (refl 7); blocks
    1..11 at 90.40°, empty; timestamp 0x01020304, factory bytes 0x37 0x22 (§4.4)."""
    block0 = bytes.fromhex('ffee 2823' '881364' + '000000' * 16 + 'e80307' + '000000' * 14)
    empty = bytes.fromhex('ffee 5023') + b'\0' * 96
    return block0 + empty * 11 + bytes.fromhex('04030201 3722')


VELODYNE = [_velodyne_packet(),
            lidar.encode_packet([35990 + 10 * i for i in range(12)], np.full((12, 32), 5000),
                                np.full((12, 32), 9), 77)]
# issue 26: integers over 4,300 digits or beyond float range, lone surrogates, odd digits
HUGE, WIDE = b'1' * 4301, b'9' * 400
ODD_JSON = [b'{"type":"GetVersion","reference":7,"message":{"x":%s}}' % HUGE,
            b'{"type":"GetVersion","reference":"\xc2\xb2","message":"\\ud800"}',
            b'{"type":"GetVersion","reference":-%s,"success":%s,"message":"\\udc00\\ud83d"}'
            % (WIDE, WIDE),
            b'{"forward_amount":1%s,"right_amount":0,"brake_amount":0,"drive_mode":1}'
            % (b'0' * 400),
            b'{"target_list":[{"range":%s,"aoa":1e400,"velocity":0,"rcs":1e300,'
            b'"target_ids":["\\ud800"]}]}' % WIDE,
            b'{"name":"\\ud800","distance":%s,"targets":[{"range":-%s,"name":"\\udfff"}]}'
            % (WIDE, HUGE)]
JSON_PAYLOADS = [RADAR_JSON, STATE_JSON, GET_VERSION_JSON, REPLY_JSON, b'[1, 2.5, null]',
                 b"{'single': 'quoted'}\0", *ODD_JSON]
SENSOR_MESSAGES = [sensor.encode_header(len(IMU_PAYLOAD), 0x5F5E1000, 1.5) + IMU_PAYLOAD,
                   sensor.encode_header(len(GPS_PAYLOAD), 1, 2.0, 7) + GPS_PAYLOAD,
                   sensor.encode_header(len(STATE_JSON), 2, 3.0, 1) + STATE_JSON,
                   sensor.encode_header(len(RADAR_JSON), 3, 4.0) + RADAR_JSON,
                   sensor.encode_header(lidar.PACKET_SIZE, 4, 5.0, 2) + VELODYNE[0]]
BINARY_PAYLOADS = [IMU_PAYLOAD, GPS_PAYLOAD, RPM_PAYLOAD, *VELODYNE, bytes(range(48))]

#: JSON values (what a simulator could send in ``message``), nested a few levels.
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64) | st.floats(allow_nan=False)
    | st.sampled_from([float('nan'), float('inf'), -float('inf'), 1e308, 0.0])
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(['type', 'reference', 'message', 'success', 'x', 'y', 'z', 'w', 'name',
                         'range', 'aoa', 'velocity', 'rcs', 'frame', 'vehicles', 'objects',
                         'state', 'odometry', 'pose', 'position', 'orientation']) | st.text(
            max_size=6), inner, max_size=5),
    max_leaves=12)


def _odd_examples(*names):
    """Hypothesis examples: every ODD_JSON seed as is (after ``names``, for a test taking a
    decoder name first), so each run tries them."""
    def wrap(test):
        for body in ODD_JSON:
            for args in ([(n, body) for n in names] or [(body,)]):
                test = example(*args)(test)
        return test
    return wrap


# --- control channel -----------------------------------------------------------------------

def _control_events(stream: bytes, cuts, max_message: int) -> list:
    framer = control.ControlFramer(max_message)
    bounds = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    out = []
    t0 = time.perf_counter()
    for a, b in zip(bounds[:-1], bounds[1:]):
        for e in framer.feed(stream[a:b]):
            assert isinstance(e, (Frame, CodecError)), e
            if isinstance(e, CodecError):
                fz.check_codec_error(e)
            else:
                assert len(e.body) <= max_message
            out.append(e)
        assert framer.buffered <= control.HEADER_SIZE + max_message
    assert time.perf_counter() - t0 < fz.DECODE_SECONDS
    return out


@given(st.binary(max_size=1500) | fz.mutated(CONTROL_FRAMES, max_mutations=6)
       | st.lists(fz.mutated(CONTROL_FRAMES), min_size=2, max_size=4).map(b''.join),
       st.lists(st.integers(0, 1 << 16), max_size=6))
@example(bytes.fromhex('6d6f6e6f ffffffff') + GET_VERSION_JSON, [])
@example(bytes.fromhex('6d6f6e6f 00000007') + CONTROL_FRAMES[0], [3])
def test_control_framer(stream, cuts):
    """Any bytes in any reads: Frames (each decoded to a ControlMessage or a CodecError) and
    CodecErrors only; nothing above max_message is buffered."""
    fz.tried('monodrive.codec.control.ControlFramer')
    for e in _control_events(stream, cuts, 4096):
        if isinstance(e, Frame):
            msg = fz.check_decoder(lambda _: control.decode_frame(e), e.body)
            assert msg is None or isinstance(msg, control.ControlMessage)


@given(st.lists(st.sampled_from(CONTROL_FRAMES), min_size=1, max_size=4),
       st.binary(max_size=40).map(lambda b: b.replace(b'mono', b'').replace(b'onom', b'')),
       st.lists(st.integers(0, 1 << 12), max_size=6))
def test_control_framer_keeps_valid_frames(frames, garbage, cuts):
    """Garbage without a magic word, then valid frames, in any reads: every frame comes out."""
    fz.tried('monodrive.codec.control.ControlFramer(valid)')
    got = [e for e in _control_events(garbage + b''.join(frames), cuts, 4096)
           if isinstance(e, Frame)]
    assert [f.header + f.body for f in got] == frames


@given(fz.inputs(JSON_PAYLOADS + [f[8:] for f in CONTROL_FRAMES], max_random=300)
       | st.text(max_size=200).map(lambda s: s.encode('utf-8')))
@_odd_examples()
@example(b'\xff\xfe')
@example(b'[' * 5000)             # deep nesting: refused as bad JSON, not a RecursionError
def test_parse_json(data):
    """Any bytes: a value whose every string is UTF-8 encodable (a lone surrogate escape
    is U+FFFD) and whose numbers are floats or ints within float range, or CodecError."""
    fz.tried('monodrive.codec.control.parse_json')
    _check_parsed(fz.check_decoder(control.parse_json, data))


def _check_parsed(value) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            v.encode('utf-8')
        elif isinstance(v, int) and not isinstance(v, bool):
            assert abs(v) <= 1.8e308
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


@given(fz.mutated([f[8:] for f in CONTROL_FRAMES], max_mutations=6)
       | _JSON.map(lambda v: json.dumps(v).encode())
       | st.fixed_dictionaries({'type': st.sampled_from(sorted(messages.VALIDATORS)) | _JSON,
                                'reference': _JSON, 'success': _JSON, 'message': _JSON})
       .map(lambda v: json.dumps(v).encode()))
@_odd_examples()
def test_decode_message(body):
    """The envelope decoder, then the known-body validator on what it accepted."""
    fz.tried('monodrive.codec.control.decode_message')
    msg = fz.check_decoder(control.decode_message, body)
    if msg is not None:
        assert isinstance(msg.type, str) and isinstance(msg.success, bool)
        assert msg.reference is None or isinstance(msg.reference, int)
        fz.check_decoder(lambda _: messages.validate(msg.type, msg.message), body)
        msg.text.encode('utf-8')
        _check_parsed(msg.raw)


@given(st.sampled_from(sorted(messages.VALIDATORS)), _JSON)
def test_validate(msg_type, body):
    fz.tried('monodrive.codec.messages.validate')
    fz.check_decoder(lambda _: messages.validate(msg_type, body), json.dumps(body).encode())


# --- sensor channel ------------------------------------------------------------------------

@given(st.binary(max_size=1500) | fz.mutated(SENSOR_MESSAGES, max_mutations=6)
       | st.lists(fz.mutated(SENSOR_MESSAGES), min_size=2, max_size=3).map(b''.join),
       st.lists(st.integers(0, 1 << 16), max_size=6), st.sampled_from(['big', 'little']))
@example(b'\x7f\xff\xff\xff' + SENSOR_MESSAGES[0], [], 'big')
def test_sensor_framer(stream, cuts, byte_order):
    """Any bytes in any reads: whole messages (length field honoured) and CodecErrors only."""
    fz.tried('monodrive.codec.sensor.SensorFramer')
    cap = 4096
    framer = sensor.SensorFramer(max_sample=cap, byte_order=byte_order)
    bounds = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    t0 = time.perf_counter()
    for a, b in zip(bounds[:-1], bounds[1:]):
        for e in framer.feed(stream[a:b]):
            if isinstance(e, CodecError):
                fz.check_codec_error(e)
                fz.check_error_has_offset(e)
                continue
            assert isinstance(e, bytes) and 12 <= len(e) <= cap
            n = struct.unpack_from('>I' if byte_order == 'big' else '<I', e)[0]
            assert n == len(e)
        # at most one message and the header after it (a resync waits for the header that
        # confirms a candidate; its length is at most cap)
        assert framer.buffered < cap + 12
    assert time.perf_counter() - t0 < fz.DECODE_SECONDS


_KINDS = st.sampled_from(['IMU', 'GPS', 'RPM', 'State', 'Radar', 'Lidar', 'Camera',
                           'DepthCamera', 'SemanticCamera', 'Collision', 'Waypoint',
                           'Ultrasonic', 'LidarArray'])


@given(st.binary(max_size=1500) | fz.mutated(SENSOR_MESSAGES, max_mutations=6)
       | st.lists(fz.mutated(SENSOR_MESSAGES), min_size=2, max_size=4).map(b''.join),
       _KINDS, st.sampled_from(['auto', 12, 16]))
def test_sensor_session(stream, kind, header_size):
    """monodrive/session.SensorSession (and sensors.decode_sample) of any sensor type on any
    bytes: sample gaps, the type's records and BadInput events only, never an exception."""
    fz.tried('monodrive.session.SensorSession')
    cfg = sensors.sensor_config({'type': kind, 'listen_port': 9000,
                                 'stream_dimensions': {'x': 2, 'y': 2}})
    session = sess.SensorSession(cfg, header_size=header_size, max_sample=4096,
                                 lidar_max_packets=4)
    t0 = time.perf_counter()
    for ev in session.receive_data(stream):
        if isinstance(ev, sess.BadInput):
            fz.check_codec_error(ev.error)
        else:
            assert isinstance(ev, (sess.SampleGap, sensors.Sample)), ev
            assert not isinstance(ev, sensors.LidarPacket)     # joined into revolutions
    assert time.perf_counter() - t0 < fz.DECODE_SECONDS


_EXPECTED = st.sampled_from([(), (payloads.IMU_SIZE,), (payloads.GPS_SIZE,),
                             (lidar.PACKET_SIZE,), (8,)])


@given(fz.inputs(SENSOR_MESSAGES, max_random=200), st.sampled_from(['auto', 12, 16]),
       st.sampled_from(['big', 'little']), _EXPECTED, st.booleans())
def test_sensor_header_split(message, size, byte_order, expected, json_payload):
    fz.tried('monodrive.codec.sensor.HeaderDetector.split')
    det = sensor.HeaderDetector(size, byte_order)
    got = fz.check_decoder(lambda m: det.split(m, expected, json_payload), message)
    if got is not None:
        header, payload = got
        assert header.size in (12, 16) and header.length == len(message)
        assert len(payload) == len(message) - header.size


# --- sensor payloads -----------------------------------------------------------------------

_BINARY_DECODERS = {
    'imu': payloads.decode_imu,
    'gps': payloads.decode_gps,
    'rpm': payloads.decode_rpm,
    'lidar.decode_points(16)': lambda b: lidar_geometry.decode_points(
        b, lidar_geometry.LidarGeometry(16, 0.4)),
    'lidar.decode_points(32)': lambda b: lidar_geometry.decode_points(
        b, lidar_geometry.LidarGeometry(32, 0.2)),
    'lidar.count_points': lidar_geometry.count_points,
    'lidar.first_last_azimuth': lidar.first_last_azimuth,
}


@given(st.sampled_from(sorted(_BINARY_DECODERS)),
       fz.inputs(BINARY_PAYLOADS, max_random=2600)
       | st.lists(fz.mutated(VELODYNE), min_size=1, max_size=3).map(b''.join))
@example('lidar.decode_points(16)', VELODYNE[0] * 3)
@example('lidar.first_last_azimuth', b'')
def test_binary_payloads(name, data):
    fz.tried(f'monodrive.codec.payloads.{name}')
    fz.check_decoder(_BINARY_DECODERS[name], data)


@given(fz.inputs(VELODYNE, max_random=1300), st.floats(allow_nan=True))
def test_revolution_assembler(packet, game_time):
    """Packets of any content (also a wrong size) into the assembler: a revolution, None or
    CodecError; it never holds more than max_packets packets."""
    fz.tried('monodrive.codec.lidar.RevolutionAssembler.add')
    asm = lidar.RevolutionAssembler(max_packets=4)
    for p in (VELODYNE[1], packet, VELODYNE[0], packet, VELODYNE[1]):
        out = fz.check_decoder(lambda b: asm.add(b, game_time), p)
        if out is not None:
            data, _ = out
            assert len(data) % lidar.PACKET_SIZE == 0
            assert len(data) <= 4 * lidar.PACKET_SIZE


_IMAGES = st.tuples(st.sampled_from(sorted(payloads.CHANNELS)), st.integers(0, 40),
                    st.integers(0, 40))


@given(_IMAGES, st.binary(max_size=6400), st.sampled_from(['<', '>']))
@example(('bgra', 2, 2), bytes(16), '<')
@example(('bgra', 1 << 20, 1 << 20), bytes(16), '<')     # a huge size against a few bytes
def test_image_payloads(shape, data, byte_order):
    """Width and height come from the sensor's configuration (not from the wire): any payload
    against them decodes or raises CodecError, without allocating for the declared size."""
    fz.tried('monodrive.codec.payloads.decode_image/depth/semantic')
    channels, width, height = shape
    fz.check_decoder(lambda b: payloads.decode_image(b, width, height, channels), data)
    fz.check_decoder(lambda b: payloads.decode_depth(b, width, height, byte_order), data)
    fz.check_decoder(lambda b: payloads.decode_semantic(b, width, height), data)


_JSON_DECODERS = {
    'decode_radar': payloads.decode_radar,
    'decode_state': payloads.decode_state,
    'decode_json_sensor': lambda b: payloads.decode_json_sensor(b, 'fuzz'),
}


@_odd_examples(*_JSON_DECODERS)
@given(st.sampled_from(sorted(_JSON_DECODERS)),
       fz.mutated(JSON_PAYLOADS, max_mutations=6) | _JSON.map(lambda v: json.dumps(v).encode())
       | st.binary(max_size=200))
def test_json_payloads(name, data):
    fz.tried(f'monodrive.codec.payloads.{name}')
    fz.check_decoder(_JSON_DECODERS[name], data)
