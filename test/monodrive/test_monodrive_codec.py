"""monoDrive codec against byte vectors written by hand from SUPPLEMENT §4.1–§4.4.

Every golden frame below is spelled out byte by byte (hex), not produced by our encoder."""
import math
import struct

import numpy as np
import pytest

from ros_sim_bridge.core.binary import BAD_MAGIC, OVERSIZED, TRUNCATED, CodecError
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.monodrive import lidar_geometry
from ros_sim_bridge.monodrive.codec import control, lidar, messages, payloads, sensor

GET_VERSION_JSON = b'{"type":"GetVersion","reference":7,"message":{}}'
# §4.1: magic 0x6d6f6e6f big-endian, total length 8 + 48 = 56 = 0x38 big-endian, then JSON
GOLDEN_REQUEST = bytes.fromhex('6d6f6e6f 00000038') + GET_VERSION_JSON
REPLY_JSON = (b'{"type":"GetVersion","reference":7,"success":true,'
              b'"message":"simulator_version: 1.14, api_version: 5.0"}')   # 104 bytes
GOLDEN_REPLY_OLD = bytes.fromhex('6f6e6f6d 00000070') + REPLY_JSON         # May-2020 magic
GOLDEN_REPLY_NEW = bytes.fromhex('6d6f6e6f 00000070') + REPLY_JSON         # later magic


def test_golden_request_bytes():
    assert len(GET_VERSION_JSON) == 48 and len(REPLY_JSON) == 104
    assert control.encode_request('GetVersion', 7, {}) == GOLDEN_REQUEST


@pytest.mark.parametrize('frame,magic', [(GOLDEN_REPLY_OLD, 0x6F6E6F6D),
                                         (GOLDEN_REPLY_NEW, 0x6D6F6E6F)])
def test_both_reply_magics_decode(frame, magic):
    events = control.ControlFramer().feed(frame)
    assert len(events) == 1 and isinstance(events[0], Frame)
    msg = control.decode_frame(events[0])
    assert (msg.type, msg.reference, msg.success, msg.magic) == ('GetVersion', 7, True, magic)
    assert msg.message == 'simulator_version: 1.14, api_version: 5.0'


def test_request_framed_back_by_the_server_side():
    events = control.ControlFramer().feed(GOLDEN_REQUEST)
    msg = control.decode_frame(events[0])
    assert (msg.type, msg.reference, msg.message, msg.success) == ('GetVersion', 7, {}, True)


def test_split_reads_and_garbage_resync():
    f = control.ControlFramer()
    stream = b'\x00garbage' + GOLDEN_REPLY_OLD + GOLDEN_REPLY_NEW
    events = []
    for i in range(0, len(stream), 5):
        events += f.feed(stream[i:i + 5])
    frames = [e for e in events if isinstance(e, Frame)]
    errs = [e for e in events if isinstance(e, CodecError)]
    assert len(frames) == 2 and errs and errs[0].kind == BAD_MAGIC


def test_over_cap_length_is_refused_without_buffering_and_resyncs():
    f = control.ControlFramer(max_message=1000)
    huge = bytes.fromhex('6d6f6e6f 7fffffff') + b'x' * 50
    events = f.feed(huge + GOLDEN_REPLY_NEW)
    errs = [e for e in events if isinstance(e, CodecError)]
    assert errs[0].kind == OVERSIZED
    assert [control.decode_frame(e).reference for e in events if isinstance(e, Frame)] == [7]
    assert f.buffered == 0


def test_total_length_below_header_is_a_false_sync():
    events = control.ControlFramer().feed(bytes.fromhex('6d6f6e6f 00000004') + GOLDEN_REPLY_NEW)
    assert any(isinstance(e, CodecError) for e in events)
    assert sum(isinstance(e, Frame) for e in events) == 1


def test_single_quoted_json_and_nul_terminated():
    msg = control.decode_message(b"{'type': 'EgoControl_ID', 'reference': 3, "
                                 b"'message': 'complete'}\x00")
    assert (msg.type, msg.reference, msg.message) == ('EgoControl_ID', 3, 'complete')


def test_invalid_utf8_names_the_byte():
    with pytest.raises(CodecError) as err:
        control.decode_message(b'{"type":"\xff"}')
    assert err.value.kind == control.BAD_JSON and 'byte 9' in str(err.value)


def test_invalid_json_names_line_and_column():
    with pytest.raises(CodecError) as err:
        control.decode_message(b'{"type":\n "x",, }')
    assert 'line 2' in str(err.value) and err.value.kind == control.BAD_JSON


@pytest.mark.parametrize('body,field', [
    (b'{"reference": 1}', 'type'), (b'{"type": 5}', 'type'),
    (b'{"type": "X", "reference": "abc"}', 'reference'),
    (b'{"type": "X", "success": "maybe"}', 'success')])
def test_envelope_fields_checked(body, field):
    with pytest.raises(CodecError) as err:
        control.decode_message(body)
    assert err.value.field == field


def test_success_defaults_to_true_and_reference_optional():
    msg = control.decode_message(b'{"type":"Status_ID","message":{"a":1}}')
    assert msg.success is True and msg.reference is None and msg.text == '{"a":1}'


# --- known bodies (§4.3) --------------------------------------------------------------------
@pytest.mark.parametrize('msg_type,body,field', [
    ('EgoControl_ID', {'right_amount': 0, 'brake_amount': 0, 'drive_mode': 1}, 'forward_amount'),
    ('EgoControl_ID', {'forward_amount': None, 'right_amount': 0, 'brake_amount': 0,
                       'drive_mode': 1}, 'forward_amount'),
    ('EgoControl_ID', {'forward_amount': 1.5, 'right_amount': 0, 'brake_amount': 0,
                       'drive_mode': 1}, 'forward_amount'),
    ('EgoControl_ID', {'forward_amount': 0.5, 'right_amount': 0, 'brake_amount': 0,
                       'drive_mode': 2}, 'drive_mode'),
    ('EgoControl_ID', {'forward_amount': 0.5, 'right_amount': '0', 'brake_amount': 0,
                       'drive_mode': 1}, 'right_amount'),
    ('REPLAY_StepSimulationCommand_ID', {'amount': 1.5}, 'amount'),
    ('REPLAY_StepSimulationCommand_ID', {}, 'amount'),
    ('SimulatorConfig_ID', {'simulation_mode': 7}, 'simulation_mode'),
    ('REPLAY_ConfigureSensorsCommand_ID', [{'type': 'Lidar'}], '[0].listen_port'),
    ('REPLAY_ReConfigureSensorCommand_ID', {'listen_port': 8200}, 'type'),
    ('GetMap', {'format': 'kml'}, 'format'),
    ('ClosedLoopStepCommand_ID', {'time_step': None}, 'time_step'),
    ('SampleSensorListCommand_ID', {'ports': [8000, 'x']}, 'ports[1]'),
    ('WeatherConfig', {'set_profile': 'a', 'profiles': [{'SunPolarAngle': 3}]}, 'profiles[0].id'),
    ('REPLAY_StateStepSimulationCommand_ID', {'frame': {'vehicles': [{'state': {
        'name': 'ego', 'odometry': {'pose': {'position': {'x': None, 'y': 0, 'z': 0},
                                             'orientation': [0, 0, 0, 1]}}}}]}},
     'frame.vehicles[0].state.odometry.pose.position.x'),
])
def test_known_bodies_name_the_bad_field(msg_type, body, field):
    with pytest.raises(CodecError) as err:
        messages.validate(msg_type, body)
    assert err.value.field == field and err.value.message == msg_type


def test_valid_bodies_pass_and_unknown_types_pass_through():
    messages.validate('EgoControl_ID', {'forward_amount': 0.3, 'right_amount': -1,
                                        'brake_amount': 0, 'drive_mode': -1})
    messages.validate('REPLAY_StepSimulationCommand_ID', {'amount': -3})
    messages.validate('SpawnActorCommand_ID', {'anything': [1, None]})
    assert len(set(messages.MESSAGE_TYPES)) == 32


# --- sensor headers (§4.1) ------------------------------------------------------------------
IMU_PAYLOAD = bytes.fromhex(
    'c2'                          # start byte
    '3f800000 c0000000 411cf5c3'  # acceleration 1.0, -2.0, 9.81
    '3e800000 00000000 bf000000'  # angular velocity 0.25, 0.0, -0.5
    '000003e8'                    # timer 1000
    '1234'                        # checksum
    '0001e240')                   # time of week 123456
HEADER_12 = bytes.fromhex('0000002f 5f5e1000 3fc00000')           # 47 B, time, 1.5 s
HEADER_16 = bytes.fromhex('00000033 5f5e1000 3fc00000 00000007')  # 51 B, time, 1.5 s, #7


def test_imu_golden_record():
    assert len(IMU_PAYLOAD) == 35
    imu = payloads.decode_imu(IMU_PAYLOAD)
    assert imu.acceleration == pytest.approx((1.0, -2.0, 9.81), abs=1e-6)
    assert imu.angular_velocity == (0.25, 0.0, -0.5)
    assert (imu.timer, imu.checksum, imu.time_of_week) == (1000, 0x1234, 123456)


def test_imu_bad_start_byte():
    with pytest.raises(CodecError) as err:
        payloads.decode_imu(b'\xc3' + IMU_PAYLOAD[1:])
    assert err.value.kind == BAD_MAGIC


@pytest.mark.parametrize('head,size,count', [(HEADER_12, 12, None), (HEADER_16, 16, 7)])
def test_both_header_generations_detected(head, size, count):
    message = head + IMU_PAYLOAD
    framer = sensor.SensorFramer()
    (framed,) = framer.feed(message)
    det = sensor.HeaderDetector()
    header, payload = det.split(framed, expected=(payloads.IMU_SIZE,))
    assert det.size == size
    assert (header.length, header.time, header.game_time, header.sample_count) == \
        (len(message), 0x5F5E1000, 1.5, count)
    assert bytes(payload) == IMU_PAYLOAD


def test_json_sensor_header_generation_detected():
    body = b'{"frame": {"vehicles": []}}'
    for head in (struct.pack('>IIf', 12 + len(body), 1, 2.0),
                 struct.pack('>IIfI', 16 + len(body), 1, 2.0, 9)):
        det = sensor.HeaderDetector()
        header, payload = det.split(head + body, json_payload=True)
        assert bytes(payload) == body and det.size == len(head)


def test_sensor_framer_refuses_over_cap_and_resyncs():
    f = sensor.SensorFramer(max_sample=1000)
    good = HEADER_16 + IMU_PAYLOAD
    events = f.feed(bytes.fromhex('7fffffff') + good)
    assert isinstance(events[0], CodecError) and events[0].kind == OVERSIZED
    assert events[-1] == good and f.buffered == 0


def test_sensor_framer_truncated_waits():
    f = sensor.SensorFramer()
    good = HEADER_12 + IMU_PAYLOAD
    assert f.feed(good[:20]) == []
    assert f.feed(good[20:]) == [good]


# a camera sample of 70 000 pixel bytes: length 16 + 70000 = 70016 = 0x11180, time, 2.0 s, #8
CAMERA_HEADER = bytes.fromhex('00011180 5f5e1000 40000000 00000008')
CAMERA_PIXELS = bytes(range(256)) * 273 + bytes(range(112))        # 70 000 bytes


def read_in_steps(framer, stream, steps):
    """What a recv_into reader does: write at most ``step`` bytes into get_buffer() each time
    (cycling through ``steps``), then buffer_updated(n).  Returns the events and, for every
    read, the object its buffer belonged to."""
    events, owners, at, i = [], [], 0, 0
    while at < len(stream):
        with framer.get_buffer() as buf:
            n = min(len(buf), steps[i % len(steps)], len(stream) - at)
            buf[:n] = stream[at:at + n]
            owners.append(buf.obj)
        at += n
        i += 1
        events += framer.buffer_updated(n)
    return events, owners


@pytest.mark.parametrize('steps', [[1], [3, 5], [15, 16, 17], [4096], [70015, 1, 3], [1 << 20]])
def test_sensor_framer_reads_a_large_message_in_place(steps):
    """A message of direct_from bytes or more is read straight into its own bytearray,
    whatever the read boundaries (inside the length field, the header, the pixels)."""
    imu = HEADER_16 + IMU_PAYLOAD
    camera = CAMERA_HEADER + CAMERA_PIXELS
    assert len(camera) == 70016
    framer = sensor.SensorFramer(read_size=64, direct_from=1024)
    events, owners = read_in_steps(framer, imu + camera + imu + imu, steps)
    assert events == [imu, camera, imu, imu]
    assert isinstance(events[1], bytearray) and isinstance(events[0], bytes)
    # the reads after the first 64-byte chunk of the camera message went into the event itself
    assert sum(o is events[1] for o in owners) >= 1
    assert framer.buffered == 0
    header, payload = sensor.HeaderDetector(16).split(events[1], (70000,))
    assert (header.length, header.game_time, header.sample_count) == (70016, 2.0, 8)
    assert bytes(payload) == CAMERA_PIXELS


def test_sensor_framer_feed_and_buffered_reads_agree():
    imu = HEADER_12 + IMU_PAYLOAD
    camera = CAMERA_HEADER + CAMERA_PIXELS
    stream = imu + camera + imu
    fed = sensor.SensorFramer(direct_from=1024)
    got = []
    for a in range(0, len(stream), 999):
        got += fed.feed(stream[a:a + 999])
    assert got == read_in_steps(sensor.SensorFramer(direct_from=1024), stream, [999])[0] == \
        [imu, camera, imu]


def test_sensor_framer_reset_drops_a_partial_large_message():
    camera = CAMERA_HEADER + CAMERA_PIXELS
    f = sensor.SensorFramer(direct_from=1024)
    assert f.feed(camera[:5000]) == [] and f.buffered == 5000
    f.reset()
    assert f.buffered == 0
    imu = HEADER_16 + IMU_PAYLOAD
    assert f.feed(imu + camera) == [imu, camera]


def test_sensor_framer_one_error_per_run_of_refused_lengths():
    """Garbage spread over several reads is reported once, then the next message framed."""
    f = sensor.SensorFramer(max_sample=1000)
    good = HEADER_16 + IMU_PAYLOAD
    events = f.feed(b'\xff' * 10) + f.feed(b'\xff' * 7) + f.feed(b'\xff\xff' + good)
    assert len([e for e in events if isinstance(e, CodecError)]) == 1
    assert events[-1] == good and f.garbage_bytes == 19
    events = f.feed(b'\xee' * 5 + good)             # a new run: reported again
    assert isinstance(events[0], CodecError) and events[-1] == good


def _camera_sample(count: int, game_time: float) -> bytes:
    """A 4×2 bgra sample (16-byte header), its pixels all 0xe0 + count."""
    return struct.pack('>IIfI', 48, 1, game_time, count) + bytes([0xe0 + count]) * 32


# an oversized length (sample 2), 200 bytes of garbage, a phantom header (length 64, game time
# 1e9 s, sample count 0x80000000) whose 64 bytes reach 40 bytes into the next sample
PHANTOM_GARBAGE = (bytes.fromhex('7fffffff 00000001 3f19999a 00000002') + b'\xab' * 200
                   + bytes.fromhex('00000040 00000001 4e6e6b28 80000000') + b'\xab' * 8)


@pytest.mark.parametrize('step', [1, 7, 48, 100, 1 << 16])
def test_sensor_framer_resync_skips_a_phantom_header(step):
    """After an oversized length, garbage holding plausible lengths (the phantom, and words
    like 00 00 01 3f at offset 5) is skipped whatever the read boundaries: every valid sample
    after it is framed, the 240 garbage bytes counted, one error reported."""
    samples = [_camera_sample(c, 0.5 + 0.1 * c) for c in (1, 3, 4, 5)]
    stream = samples[0] + PHANTOM_GARBAGE + b''.join(samples[1:])
    f = sensor.SensorFramer()
    events = []
    for a in range(0, len(stream), step):
        events += f.feed(stream[a:a + step])
    assert [e for e in events if not isinstance(e, CodecError)] == samples
    assert [e.kind for e in events if isinstance(e, CodecError)] == [OVERSIZED]
    assert f.garbage_bytes == len(PHANTOM_GARBAGE) and f.buffered == 0


def test_sensor_framer_resync_waits_for_the_headers_that_confirm():
    """A candidate after garbage whose message does not end where the bytes end and whose
    game time is implausible (before the last sample's) is framed once the samples after it
    confirm it: the next one whole up to the end of the bytes, or a third header; a candidate
    followed by garbage is skipped."""
    f = sensor.SensorFramer()
    first = _camera_sample(1, 5.0)
    later = [_camera_sample(c, 1.0 + 0.1 * c) for c in (2, 3, 4)]  # the game time restarted
    assert f.feed(first) == [first]
    events = f.feed(b'\xff' * 9 + later[0] + later[1][:47])
    assert isinstance(events[0], CodecError) and events[1:] == [] and f.buffered == 48 + 47
    assert f.feed(later[1][47:]) == later[:2]                 # two samples up to the end
    again = [_camera_sample(c, 0.1 * c - 0.3) for c in (5, 6, 7)]  # and again
    events = f.feed(b'\xff' * 9 + again[0] + again[1][:12])
    assert events[1:] == [] and f.buffered == 48 + 12
    assert f.feed(again[1][12:15]) == []
    assert f.feed(again[1][15:] + again[2][:12]) == again[:2]   # three headers in a row
    assert f.feed(again[2][12:]) == again[2:]
    # a plausible header followed by bytes that are no header: garbage
    fake = struct.pack('>IIfI', 48, 1, 1.2, 4) + b'\xab' * 32
    good = _camera_sample(5, 1.3)
    events = f.feed(b'\xff' * 4 + fake + b'\xab' * 20 + good)
    assert events[1:] == [good] and f.garbage_bytes == 18 + 4 + 48 + 20


def test_sample_gaps_counts_missing_samples():
    g = sensor.SampleGaps()
    # counts 1, 2, 2 (a second message of sample 2), 5 (3 and 4 missing), 6, 9 (7, 8 missing)
    assert [g.update(c) for c in (1, 2, 2, 5, 6, 9)] == [0, 0, 0, 2, 0, 2]
    assert (g.missing, g.gaps, g.restarts) == (4, 2, 0)
    assert g.update(1) == 0 and g.restarts == 1          # the simulator started again
    assert g.update(2) == 0 and g.missing == 4
    assert g.update(None) == 0                            # 12-byte header: no count
    g.reset()
    assert g.update(40) == 0 and g.missing == 4           # nothing counted across a reconnect


def test_header_length_mismatch_is_an_error():
    det = sensor.HeaderDetector(12)
    with pytest.raises(CodecError):
        det.split(HEADER_12 + IMU_PAYLOAD + b'\0')


# --- GPS (§4.4: 66 B big-endian >chhcdddfffffffhhcch) ---------------------------------------
GPS_PAYLOAD = bytes.fromhex(
    '55' '020a' '0001' '22'                                   # preamble, msg id, id, size 34
    '403e400000000000' 'c058600000000000' '4062c00000000000'  # lat 30.25, lon -97.5, 150 m
    '42c80000' 'c2480000'                                     # world x 100 cm, y -50 cm
    '3f800000 00000000 00000000'                              # forward (1, 0, 0)
    '42b40000' '41480000'                                     # yaw 90°, speed 12.5 m/s
    '0002' '0003' '0c' '01' 'abcd')                           # h/v acc, 12 sats, fix, crc


def test_gps_golden_record():
    assert len(GPS_PAYLOAD) == 66
    g = payloads.decode_gps(GPS_PAYLOAD)
    assert (g.msg_id, g.id, g.payload_size) == (0x020A, 1, 34)
    assert (g.latitude, g.longitude, g.elevation) == (30.25, -97.5, 150.0)
    assert (g.world_x, g.world_y, g.forward, g.yaw, g.speed) == \
        (100.0, -50.0, (1.0, 0.0, 0.0), 90.0, 12.5)
    assert (g.h_accuracy, g.v_accuracy, g.satellites, g.fix, g.crc) == (2, 3, 12, 1, 0xABCD)


def test_gps_wrong_preamble_and_truncated():
    with pytest.raises(CodecError) as err:
        payloads.decode_gps(b'\x54' + GPS_PAYLOAD[1:])
    assert err.value.kind == BAD_MAGIC
    with pytest.raises(CodecError) as err:
        payloads.decode_gps(GPS_PAYLOAD[:-1])
    assert err.value.kind == TRUNCATED


# --- Velodyne packet (§4.4) -----------------------------------------------------------------
def velodyne_packet() -> bytes:
    """Block 0 at azimuth 90.00° (0x2328): channel 0 at 10 m (5000 × 2 mm = 0x1388, refl 100),
    channel 17 at 2 m (1000 = 0x03e8, refl 7); blocks 1..11 at 90.40° (0x2350), empty;
    timestamp 0x01020304, factory 0x37 0x22."""
    block0 = bytes.fromhex('ffee 2823' '881364' + '000000' * 16 + 'e80307' + '000000' * 14)
    empty = bytes.fromhex('ffee 5023') + b'\0' * 96
    return block0 + empty * 11 + bytes.fromhex('04030201 3722')


def test_velodyne_vlp16_points():
    pkt = velodyne_packet()
    assert len(pkt) == 1206
    pts = lidar_geometry.decode_points(pkt, lidar_geometry.LidarGeometry(16, 0.4))
    assert len(pts) == 2
    d, w = 10.0, math.radians(-10.0)           # laser 0: -10°
    assert pts[0]['x'] == pytest.approx(0.0, abs=1e-5)
    assert pts[0]['y'] == pytest.approx(-d * math.cos(w), abs=1e-5)   # 90° = to the right
    assert pts[0]['z'] == pytest.approx(d * math.sin(w), abs=1e-5)
    assert (pts[0]['intensity'], pts[0]['ring']) == (100, 0)      # −10°: the lowest ring
    # channel 17 = laser 1 (+0.67°) of the second firing, at 90.00° + 0.4°
    a, w = math.radians(90.4), math.radians(0.67)
    assert pts[1]['x'] == pytest.approx(2 * math.cos(w) * math.cos(a), abs=1e-5)
    assert pts[1]['y'] == pytest.approx(-2 * math.cos(w) * math.sin(a), abs=1e-5)
    assert pts[1]['z'] == pytest.approx(2 * math.sin(w), abs=1e-5)
    assert (pts[1]['intensity'], pts[1]['ring']) == (7, 8)   # 8 lasers below +0.67°


@pytest.mark.parametrize('n_lasers, elevations', [
    (16, [-10.0, -8.67, -7.33, -6.0, -4.67, -3.33, -2.0, -0.67,
          0.67, 2.0, 3.33, 4.67, 6.0, 7.33, 8.67, 10.0]),
    (32, [-30.67, -29.33, -28.0, -26.67, -25.33, -24.0, -22.67, -21.33, -20.0, -18.67, -17.33,
          -16.0, -14.67, -13.33, -12.0, -10.67, -9.33, -8.0, -6.67, -5.33, -4.0, -2.67, -1.33,
          0.0, 1.33, 2.67, 4.0, 5.33, 6.67, 8.0, 9.33, 10.67])])
def test_velodyne_ring_counts_up_from_the_lowest_laser(n_lasers, elevations):
    """velodyne_pointcloud's ring: 0 = the lowest elevation, one up per laser (the VLP-16
    datasheet's angles sorted by hand), whatever the firing order on the wire."""
    returns = b''.join(struct.pack('<HB', 5000, ch) for ch in range(32))   # 10 m each
    block = bytes.fromhex('ffee 2823') + returns
    pkt = block * 12 + bytes.fromhex('04030201 3722')
    pts = lidar_geometry.decode_points(pkt, lidar_geometry.LidarGeometry(n_lasers, 0.4))[:32]
    seen = {}
    for p in pts:
        elevation = math.degrees(math.asin(p['z'] / 10.0))
        seen.setdefault(int(p['ring']), set()).add(round(elevation, 2))
    assert seen == {ring: {e} for ring, e in enumerate(elevations)}


def test_velodyne_hdl32_points():
    pts = lidar_geometry.decode_points(velodyne_packet(), lidar_geometry.LidarGeometry(32, 0.4))
    w = math.radians(1.33)                      # channel 17 = laser 17 (+1.33°), no offset
    assert pts[1]['x'] == pytest.approx(0.0, abs=1e-5)
    assert pts[1]['z'] == pytest.approx(2 * math.sin(w), abs=1e-5)
    assert pts[1]['ring'] == 24     # 24 of the 32 lasers are below +1.33°
    assert lidar.first_last_azimuth(velodyne_packet()) == (9000, 9040)
    assert np.frombuffer(velodyne_packet(), lidar.PACKET)['timestamp'][0] == 0x01020304


def test_velodyne_bad_flag_and_size():
    pkt = bytearray(velodyne_packet())
    pkt[300] = 0                                # block 3's flag
    with pytest.raises(CodecError) as err:
        lidar_geometry.decode_points(bytes(pkt), lidar_geometry.LidarGeometry())
    assert err.value.kind == BAD_MAGIC and err.value.field == 'block[3].flag'
    with pytest.raises(CodecError):
        lidar_geometry.decode_points(velodyne_packet()[:-1], lidar_geometry.LidarGeometry())


def test_revolution_assembler_cuts_on_wrap():
    asm = lidar.RevolutionAssembler()
    mk = lambda az: lidar.encode_packet([az + 10 * i for i in range(12)],  # noqa: E731
                                        np.full((12, 32), 100), 1)
    assert asm.add(mk(100), 1.0) is None
    assert asm.add(mk(20000), 1.1) is None
    data, t = asm.add(mk(50), 1.2)
    assert len(data) == 2 * 1206 and t == 1.0


# --- other payloads -------------------------------------------------------------------------
def test_rpm_camera_depth_semantic():
    assert payloads.decode_rpm(bytes.fromhex('00000002 43480000')) == (2, 200.0)
    img = payloads.decode_image(bytes(range(16)), 2, 2, 'bgra')
    assert img.shape == (2, 2, 4) and img[1, 0, 0] == 8
    depth = payloads.decode_depth(struct.pack('<4f', 100, 250, 0, 1e4), 2, 2)
    assert depth.ravel().tolist() == pytest.approx([1.0, 2.5, 0.0, 100.0])
    assert payloads.decode_semantic(bytes([1, 2, 3, 4]), 2, 2)[1, 1] == 4
    with pytest.raises(CodecError):
        payloads.decode_image(bytes(15), 2, 2, 'bgra')


def test_radar_targets_and_nulls():
    r = payloads.decode_radar(b'{"target_list":[{"range":1500,"aoa":-3.5,"velocity":2,'
                              b'"rcs":10,"target_ids":["car_1"]}],"gt_targets":[]}')
    assert r.targets['range'][0] == 1500 and r.target_ids == [['car_1']]
    r = payloads.decode_radar(b'{"target_list":[{"range":null,"aoa":0,"velocity":0,"rcs":0}]}')
    assert len(r.targets) == 0 and r.problems[0].field == 'target_list[0].range'


def test_state_frame_keeps_good_vehicles_when_one_has_null():
    good = ('{"state":{"name":"ego","tags":["ego"],"odometry":{"pose":{"position":'
            '{"x":100,"y":-200,"z":30},"orientation":{"x":0,"y":0,"z":0,"w":1}},'
            '"linear_velocity":{"x":1000,"y":0,"z":0},"angular_velocity":{"x":0,"y":0,"z":0.1}}}}')
    bad = good.replace('"x":100,', '"x":null,').replace('"ego"', '"other"', 1)
    frame = payloads.decode_state(('{"time":1,"game_time":2.5,"sample_count":3,'
                                   f'"frame":{{"vehicles":[{good},{bad}],"objects":[]}}}}'
                                   ).encode())
    assert [v.name for v in frame.vehicles] == ['ego'] and frame.game_time == 2.5
    assert frame.vehicles[0].position == (100.0, -200.0, 30.0)
    assert frame.problems[0].field == 'frame.vehicles[1].state.odometry.pose.position.x'


# --- non-standard JSON constants (issue #12: NaN/Infinity were accepted silently) -----------
@pytest.mark.parametrize('text,name', [(b'{"type": "GetVersion", "message": NaN}', 'NaN'),
                                       (b'{"type": "X", "message": [1, Infinity]}', 'Infinity'),
                                       (b"{'type': 'X', 'message': -Infinity}", '-Infinity')])
def test_nan_and_infinity_refused_in_replies(text, name):
    with pytest.raises(CodecError) as err:
        control.decode_message(text)
    assert err.value.kind == control.NON_STANDARD_JSON and name in str(err.value)
    assert control.parse_json(b'{"NaN": "Infinity"}') == {'NaN': 'Infinity'}   # strings: fine


def test_nan_and_infinity_never_sent():
    with pytest.raises(CodecError) as err:
        control.encode_request('EgoControl_ID', 3, {'forward_amount': float('nan')})
    assert err.value.kind == control.NON_STANDARD_JSON
    assert err.value.field == 'message.forward_amount'
    with pytest.raises(CodecError) as err:
        control.encode_frame([1.0, {'a': [0, float('-inf')]}])
    assert err.value.field == '[1].a[1]'
    assert b'1e+300' in control.encode_frame({'a': 1e300})              # finite: sent as is


# --- camera annotation message (layout of monoDrive's public clients) ---------------------
ANNOTATION = (b'[{"name": "vehicle_1", "tags": ["vehicle", "dynamic"],'
              b' "2d_bounding_boxes": [{"name": "body", "2d_bounding_box": [10, 50.5, 20, 44]}],'
              b' "oriented_bounding_boxes": [{"name": "body",'
              b' "center": {"x": 1000.0, "y": -200.0, "z": 75.0},'
              b' "extents": [230, 95, 75], "orientation": {"x": 0, "y": 0, "z": 0, "w": 1},'
              b' "scale": {"x": 1, "y": 1, "z": 1}}]},'
              b' {"name": "sign_3", "tags": ["traffic_sign"],'
              b' "2d_bounding_boxes": [{"name": "a", "2d_bounding_box": [1, 2, null, 4]},'
              b'                       {"name": "b", "2d_bounding_box": [5, 6, 7, 8]}]}]')


def test_camera_annotation_decodes_boxes_in_the_clients_order():
    from ros_sim_bridge.monodrive.codec import annotation
    ann = annotation.decode_annotation(ANNOTATION)
    assert ann.actors == ['vehicle_1', 'sign_3'] and ann.tags[1] == ['traffic_sign']
    b = ann.boxes_2d          # [xmin, xmax, ymin, ymax]: the x pair first
    assert b.tolist() == [(0, 10.0, 50.5, 20.0, 44.0), (1, 5.0, 6.0, 7.0, 8.0)]
    assert ann.names_2d == ['body', 'b']
    o = ann.boxes_3d[0]
    assert o['actor'] == 0 and o['center'].tolist() == [1000.0, -200.0, 75.0]
    assert o['extents'].tolist() == [230.0, 95.0, 75.0]
    assert o['orientation'].tolist() == [0.0, 0.0, 0.0, 1.0] and len(ann.boxes_3d) == 1
    # the box with a null is reported, its neighbours kept
    assert len(ann.problems) == 1 and '[1].2d_bounding_boxes[0]' in str(ann.problems[0])
    assert annotation.decode_annotation(b'[]').actors == []


@pytest.mark.parametrize('payload,kind', [(b'{"targets": []}', 'unknown_layout'),
                                          (b'[{"name": "x"}]', 'unknown_layout'),
                                          (b'[{"2d_bounding_boxes": [NaN]}]', 'non_standard_json'),
                                          (b'[{"2d_bounding', 'bad_json')])
def test_camera_annotation_other_json_refused(payload, kind):
    from ros_sim_bridge.monodrive.codec import annotation
    with pytest.raises(CodecError) as err:
        annotation.decode_annotation(payload)
    assert err.value.kind == kind


def test_camera_annotation_overflowing_numbers_and_box_cap():
    """1e400 (json gives inf) is refused like NaN, naming the box; a message with more boxes
    than the cap decodes the first ``max_boxes`` of each kind and says how many it left out."""
    from ros_sim_bridge.monodrive.codec import annotation
    ann = annotation.decode_annotation(
        b'[{"name": "v", "2d_bounding_boxes": [{"2d_bounding_box": [0, 1e400, 0, 1]},'
        b' {"2d_bounding_box": [0, 2, 0, 1]}]}]')
    assert len(ann.boxes_2d) == 1 and ann.boxes_2d[0]['xmax'] == 2.0
    assert len(ann.problems) == 1 and '2d_bounding_boxes[0]' in str(ann.problems[0])
    box = {'2d_bounding_box': [0, 1, 0, 1]}
    obb = {'center': [0, 0, 0], 'extents': [1, 1, 1], 'orientation': [0, 0, 0, 1]}
    value = [{'name': f'a{i}', '2d_bounding_boxes': [box] * 3, 'oriented_bounding_boxes': [obb]}
             for i in range(10)]
    ann = annotation.annotation_from_value(value, max_boxes=7)
    assert (len(ann.boxes_2d), len(ann.boxes_3d)) == (7, 7)
    assert [e.kind for e in ann.problems] == ['oversized']
    assert '26 boxes' in str(ann.problems[0])        # 30 − 7 two-d, 10 − 7 oriented


# --- one rule for numbers and text from the wire (issue 26) ------------------------------
HUGE = '1' * 4301                       # over Python's 4,300-digit int-string limit
WIDE = '9' * 400                        # beyond float range


@pytest.mark.parametrize('number', [HUGE, '-' + HUGE, WIDE, '-' + WIDE, '1e400'])
def test_numbers_beyond_float_range_parse_as_infinity(number):
    value = control.parse_json(b'{"x": [%s]}' % number.encode())['x'][0]
    assert math.isinf(value) and (value < 0) == number.startswith('-')


def test_integers_within_float_range_stay_exact():
    assert control.parse_json('[%s]' % ('7' * 300))[0] == int('7' * 300)
    assert control.json_float(10 ** 400) == math.inf and control.json_float(-10 ** 400) == -math.inf


def test_lone_surrogates_replaced_pairs_and_escaped_backslashes_kept():
    value = control.parse_json(b'{"\\ud800k": "a\\udfffb\\ud83d\\ude00\\\\ud800", '
                               b'"t": "\\uD800\\uD800"}')
    assert value == {'\ufffdk': 'a\ufffdb\U0001f600\\ud800', 't': '\ufffd\ufffd'}
    for s in list(value) + list(value.values()):
        s.encode('utf-8')
    single = control.parse_json("{'n': '\\ud800'}")               # single-quoted build
    assert single == {'n': '\ufffd'}


def test_standard_json_writes_non_finite_as_null():
    assert control.standard_json({'a': [math.inf, 1.5], 'b': -math.inf}) == \
        '{"a":[null,1.5],"b":null}'
    msg = control.decode_message(b'{"type":"GetVersion","reference":1,"message":{"x":1e400}}')
    assert msg.text == '{"x":null}'


@pytest.mark.parametrize('reference', ['"\xb2"', '"\xd9\xa3"', '"123456789012345678901"',
                                       '"1 2"', '""', '1e400', '%s' % HUGE])
def test_reference_must_be_ascii_digits(reference):
    body = ('{"type": "GetVersion", "reference": %s}' % reference).encode()
    with pytest.raises(CodecError) as err:
        control.decode_message(body)
    assert err.value.field == 'reference'


def test_reference_as_ascii_digit_string_accepted():
    assert control.decode_message(b'{"type": "a", "reference": " -42 "}').reference == -42


@pytest.mark.parametrize('value', [10 ** 400, -10 ** 400, math.inf])
def test_checked_body_number_beyond_range_refused(value):
    body = dict(forward_amount=value, right_amount=0.0, brake_amount=0.0, drive_mode=1)
    with pytest.raises(CodecError) as err:
        messages.validate('EgoControl_ID', body)
    assert err.value.field == 'forward_amount'
    with pytest.raises(CodecError) as err:
        messages.validate('SampleSensorListCommand_ID', {'ports': [value]})
    assert err.value.field == 'ports[0]'


def test_radar_target_with_a_bad_value_left_out_the_rest_kept():
    body = (b'{"target_list": [{"range": 100, "aoa": 1e400, "velocity": 0, "rcs": 1},'
            b' {"range": %s, "aoa": 0, "velocity": 0, "rcs": 1},'
            b' {"range": 1e300, "aoa": 0, "velocity": 0, "rcs": 1},'
            b' {"range": 250, "aoa": -5, "velocity": 2, "rcs": 3, "target_ids": ["\\ud800x"]}],'
            b' "gt_targets": [{"range": 1, "aoa": 2, "velocity": 3, "rcs": %s}]}'
            % (WIDE.encode(), HUGE.encode()))
    r = payloads.decode_radar(body)
    assert r.targets.tolist() == [(250.0, -5.0, 2.0, 3.0)] and r.target_ids == [['\ufffdx']]
    assert len(r.gt_targets) == 0
    assert [e.field for e in r.problems] == ['target_list[0].aoa', 'target_list[1].range',
                                             'target_list[2].range', 'gt_targets[0].rcs']


def test_state_numbers_beyond_range_refused_with_the_field():
    body = (b'{"frame": {"vehicles": [{"state": {"name": "a", "odometry": {"pose": '
            b'{"position": {"x": %s, "y": 0, "z": 0}, "orientation": [0, 0, 0, 1]}}}}]},'
            b' "game_time": %s, "time": 1e400, "sample_count": %s}'
            % (WIDE.encode(), HUGE.encode(), ('9' * 30).encode()))
    frame = payloads.decode_state(body)
    assert frame.vehicles == [] and frame.problems[0].field.endswith('pose.position.x')
    assert math.isnan(frame.game_time) and math.isnan(frame.time)
    assert frame.sample_count is None


def test_optional_report_numbers_beyond_range_are_nan():
    value = control.parse_json(b'{"distance": %s, "d": 10}' % WIDE.encode())
    assert math.isnan(payloads.number_or_nan(value, 'distance'))
    assert payloads.number_or_nan(value, 'd') == 10.0
    assert math.isnan(payloads.number_or_nan({'x': 10 ** 400}, 'x'))


def test_annotation_numbers_beyond_range_refused_with_the_field():
    from ros_sim_bridge.monodrive.codec import annotation
    body = (b'[{"name": "\\ud800car", "2d_bounding_boxes": [{"2d_bounding_box": [0, %s, 0, 1]},'
            b' {"2d_bounding_box": [0, 2, 0, 1]}], "oriented_bounding_boxes": [{"center": '
            b'[%s, 0, 0], "extents": [1, 1, 1], "orientation": [0, 0, 0, 1]}]}]'
            % (WIDE.encode(), HUGE.encode()))
    ann = annotation.decode_annotation(body)
    assert ann.actors == ['\ufffdcar'] and len(ann.boxes_2d) == 1 and len(ann.boxes_3d) == 0
    assert [e.field for e in ann.problems] == [
        '[0].2d_bounding_boxes[0].2d_bounding_box', '[0].oriented_bounding_boxes[0].center']
    with pytest.raises(CodecError):
        annotation._numbers([10 ** 400, 0, 0, 0], 4, 'w')


def test_radar_values_at_the_float32_bound_rclpy_checks():
    """rclpy refuses a float32 field above 3.402823466e+38 (slightly below float32's max)."""
    from ros_sim_bridge.monodrive.ros import conversions
    r = payloads.decode_radar(b'{"target_list": [{"range": 1, "aoa": 0, "velocity": 0, '
                              b'"rcs": 3.4028234663e38}, {"range": 1, "aoa": 0, "velocity": '
                              b'-3.402823466e38, "rcs": 3.402823466e38}]}')
    assert len(r.targets) == 1 and r.problems[0].field == 'target_list[0].rcs'
    from rclpy.serialization import deserialize_message
    from ros_sim_bridge.msg import MonoDriveCollision, MonoDriveRadarTargets
    msg = deserialize_message(conversions.radar(r, (0, 0), 'radar'), MonoDriveRadarTargets)
    # float32's largest value, 3.4028234664e38, is what a float32 field holds of 3.402823466e38
    assert msg.targets[0].rcs == pytest.approx(3.402823466e38, rel=1e-8)
    assert msg.targets[0].velocity == pytest.approx(-3.402823466e38, rel=1e-8)
    c = deserialize_message(conversions.collision(
        {'distance': 3.4028234663e38, 'time_to_collision': 1e39,
         'forward_velocity': 3.402823466e38}, '', (0, 0), 'c'), MonoDriveCollision)
    assert math.isnan(c.distance) and math.isnan(c.time_to_collision)
    assert c.forward_velocity == pytest.approx(3.402823466e38, rel=1e-8)


def test_refused_reply_envelope_read_despite_huge_integers():
    """A reply refused for NaN still names its request when it also holds a 4,301-digit
    integer (json.loads raised ValueError: the caller waited out its timeout)."""
    body = b'{"type": "GetVersion", "reference": 7, "x": NaN, "y": %s}' % HUGE.encode()
    assert control.peek_envelope(body) == ('GetVersion', 7)
