"""monodrive/sensors.py and session.SensorSession: a sensor's configuration and its samples as
records, from byte vectors written from SUPPLEMENT §4.1 and §4.4 (no ROS, no sockets)."""
import math
import struct

import pytest

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.monodrive import sensors
from ros_sim_bridge.monodrive import session as sess
from ros_sim_bridge.monodrive.codec.sensor import SensorHeader

HEADER = SensorHeader(0, 1, 0.5, 7, 16)


def header16(payload: bytes, game_time: float, count: int) -> bytes:
    """§4.1: u32 length (header included), u32 time, f32 game_time, u32 sample_count; BE."""
    return struct.pack('>IIfI', 16 + len(payload), 1, game_time, count) + payload


def config(**kw) -> sensors.SensorConfig:
    return sensors.sensor_config({'listen_port': 9000, **kw})


# -- configuration -----------------------------------------------------------------------------

@pytest.mark.parametrize('fov', [0, 0.0, -10.0, 180.0, 200.0, math.nan, 'wide', True])
def test_a_camera_fov_outside_0_to_180_degrees_is_refused_naming_the_field(fov):
    with pytest.raises(CodecError) as err:
        config(type='Camera', fov=fov)
    assert err.value.field == 'fov' and '180' in str(err.value)


def test_a_camera_without_fov_has_60_degrees_and_other_sensors_ignore_it():
    assert config(type='Camera').fov == 60.0
    assert config(type='SemanticCamera', fov=179.5).fov == 179.5
    assert config(type='IMU', fov=0).kind == 'IMU'          # no field of view: not checked


def test_payload_sizes_names_and_lidar_lasers_from_the_configuration():
    cam = config(type='Camera', stream_dimensions={'x': 4.0, 'y': 2.0}, channels='RGB',
                 description='front cam')
    assert (cam.name, cam.width, cam.height, cam.channels, cam.expected) == \
        ('front_cam', 4, 2, 'rgb', (24,))
    assert config(type='Camera', channels='yuv').channels == 'bgra'
    assert config(type='DepthCamera', stream_dimensions={'x': 4, 'y': 2}).expected == (32,)
    assert config(type='SemanticCamera', stream_dimensions={'x': 4, 'y': 2}).expected == (8,)
    assert config(type='IMU', id=3).expected == (35, 168)
    assert config(type='IMU', id=3).name == 'imu_9000'       # a numeric id names nothing
    assert config(type='GPS').expected == (66,) and config(type='RPM').expected == (8,)
    assert config(type='Lidar', n_lasers=32).n_lasers == 32
    assert config(type='Lidar', n_lasers=24).n_lasers == 16
    assert config(type='State').json and not config(type='Camera').json
    with pytest.raises(CodecError) as err:
        sensors.sensor_config({'type': 'GPS', 'listen_port': 'x'})
    assert err.value.field == 'listen_port'


# -- samples -----------------------------------------------------------------------------------

def test_imu_gps_rpm_samples_are_typed_records():
    imu = struct.pack('>B3f3fIHI', 0xC2, 1.0, 2.0, 9.81, 0.1, 0.2, 0.3, 1234, 0, 0)
    rec = sensors.decode_sample(config(type='IMU'), HEADER, memoryview(imu))
    assert isinstance(rec, sensors.Imu) and rec.header is HEADER
    assert rec.value.acceleration == pytest.approx((1.0, 2.0, 9.81))
    longer = sensors.decode_sample(config(type='IMU'), HEADER, memoryview(bytes(168)))
    assert isinstance(longer, sensors.Unconverted) and len(longer.data) == 168
    rpm = sensors.decode_sample(config(type='RPM'), HEADER, memoryview(struct.pack('>if', 2, 600.0)))
    assert (rpm.wheel, rpm.speed) == (2, 600.0)
    with pytest.raises(CodecError):
        sensors.decode_sample(config(type='RPM'), HEADER,
                              memoryview(struct.pack('>if', 2, math.inf)))


def test_camera_pixels_annotation_and_json_companion():
    cam = config(type='Camera', stream_dimensions={'x': 2, 'y': 1})     # 8 bytes of bgra
    pixels = memoryview(b'{' + bytes(7))           # its own size: pixels, whatever byte 0
    rec = sensors.decode_sample(cam, HEADER, pixels)
    assert isinstance(rec, sensors.Pixels) and (rec.what, bytes(rec.data)) == ('image', bytes(pixels))
    ann = b'[{"name": "car", "2d_bounding_boxes": [{"2d_bounding_box": [1, 2, 3, 4]}]}]'
    rec = sensors.decode_sample(cam, HEADER, memoryview(ann))
    assert isinstance(rec, sensors.Annotation) and len(rec.value.boxes_2d) == 1
    rec = sensors.decode_sample(cam, HEADER, memoryview(b'{"boxes":[]}'))
    assert isinstance(rec, sensors.Companion) and bytes(rec.data) == b'{"boxes":[]}'
    depth = config(type='DepthCamera', stream_dimensions={'x': 2, 'y': 1})
    assert sensors.decode_sample(depth, HEADER, memoryview(bytes(8))).what == 'depth'
    with pytest.raises(CodecError):                  # an annotation that is not JSON
        sensors.decode_sample(cam, HEADER, memoryview(b'{"a": '))


def test_json_sensors_radar_cube_and_binary_ultrasonic():
    radar = config(type='Radar')
    cube = sensors.decode_sample(radar, HEADER, memoryview(bytes(64)))
    assert isinstance(cube, sensors.RadarCube)
    rec = sensors.decode_sample(radar, HEADER, memoryview(
        b'{"target_list": [{"range": 1000, "aoa": 1, "velocity": 2, "rcs": 3}]}'))
    assert isinstance(rec, sensors.Radar) and rec.value.targets['range'][0] == 1000
    us = sensors.decode_sample(config(type='Ultrasonic'), HEADER,
                               memoryview(struct.pack('<2f', 1.5, 2.5) + b'\x00'))
    assert us.value is None and list(us.ranges) == [1.5, 2.5]
    us = sensors.decode_sample(config(type='Ultrasonic'), HEADER, memoryview(b'[1]'))
    assert (us.value, us.text, us.ranges) == ([1], '[1]', ())
    col = sensors.decode_sample(config(type='Collision'), HEADER, memoryview(b'{"collision": true}'))
    assert col.value == {'collision': True} and col.text == '{"collision": true}'
    with pytest.raises(CodecError):
        sensors.decode_sample(config(type='Waypoint'), HEADER, memoryview(b'{"x": NaN}'))


def test_lidar_packets_of_the_wrong_size_are_refused():
    with pytest.raises(CodecError) as err:
        sensors.decode_sample(config(type='Lidar'), HEADER, memoryview(bytes(1200)))
    assert '1206' in str(err.value)


# -- the session of one stream -----------------------------------------------------------------

def packet(first_cdeg: int) -> bytes:
    """A Velodyne packet (1206 bytes): 12 blocks FF EE, azimuth (0.01°, LE), 32 returns."""
    out = b''
    for b in range(12):
        out += b'\xff\xee' + struct.pack('<H', (first_cdeg + 40 * b) % 36000) + bytes(96)
    return out + bytes(6)


def test_session_counts_gaps_assembles_revolutions_and_reports_bad_input():
    s = sess.SensorSession(config(type='Lidar'), lidar_max_packets=100)
    data = (header16(packet(35000), 1.0, 1) + header16(packet(35500), 1.1, 2)
            + header16(packet(100), 1.2, 5)                  # wrapped; 3 and 4 never sent
            + header16(bytes(10), 1.3, 6))
    events = s.receive_data(data)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ['SampleGap', 'Revolution', 'BadInput'], kinds
    gap, rev, bad = events
    assert (gap.sample_count, gap.missing, gap.total_missing, gap.total_gaps) == (5, 2, 2, 1)
    assert len(rev.data) == 2 * 1206 and rev.game_time == pytest.approx(1.0)
    assert isinstance(bad.error, CodecError) and s.header_size == 16
    s.connection_made()                  # a new connection: counts and revolution start again
    assert s.receive_data(header16(packet(0), 0.1, 1)) == [] and s.header_size == 16


def test_session_of_a_camera_gives_records_and_detects_a_12_byte_header():
    s = sess.SensorSession(config(type='Camera', stream_dimensions={'x': 2, 'y': 1}))
    frame = struct.pack('>IIf', 12 + 8, 1, 0.25) + bytes(range(8))
    (rec,) = s.receive_data(frame)
    assert isinstance(rec, sensors.Pixels) and bytes(rec.data) == bytes(range(8))
    assert s.header_size == 12 and rec.header.sample_count is None
    (bad,) = s.receive_data(struct.pack('>IIf', 12 + 2, 1, math.nan) + b'{}')
    assert isinstance(bad, sess.BadInput) and bad.error.field == 'game_time'


@pytest.mark.parametrize('entry, field', [
    ({'type': 'Camera', 'stream_dimensions': {'x': 'wide', 'y': 2}}, 'stream_dimensions.x'),
    ({'type': 'Camera', 'stream_dimensions': [640, 480]}, 'stream_dimensions'),
    ({'type': 'Lidar', 'n_lasers': 'sixteen'}, 'n_lasers'),
    ({'type': 'Lidar', 'horizontal_resolution': None}, 'horizontal_resolution')])
def test_configuration_values_that_are_no_numbers_are_refused_naming_the_field(entry, field):
    with pytest.raises(CodecError) as err:
        config(**entry)
    assert err.value.field == field
    assert config(type='Camera', n_lasers='x').n_lasers == 16   # not a lidar: not read
