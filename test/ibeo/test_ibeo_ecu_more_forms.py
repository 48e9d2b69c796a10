"""ROS forms of the remaining ECU types (measurement list 0x2821, CAN message 0x1002, object
association 0x4001, time record 0x9000, meta information 0x7110, point cloud plane 0x7510):
golden bodies packed by hand from the spec tables (big-endian, documented offsets), decoded by
the codec, converted by ``IbeoToRos``; then the same records through ``ibeo_idc``'s to-bag and
read back with an independent reader (mcap + mcap-ros2-support)."""
import math
import struct

import numpy as np
import pytest

from ros_sim_bridge.core.ntp import NTP_UNIX_OFFSET
from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.ibeo.codec.header import IbeoHeader
from ros_sim_bridge.ibeo.idc import IdcReader, IdcWriter
from ros_sim_bridge.ibeo.ros.to_bag import convert
from ros_sim_bridge.ibeo.ros import ecu_conversions as ec
from ros_sim_bridge.ros.pointcloud import from_pointcloud2
from ros_sim_bridge.ros.stamps import stamp_to_ns

from ibeo_readback import readback

T0 = (NTP_UNIX_OFFSET + 1_700_000_000) << 32          # 2023-11-14, a set clock
T0_NS = 1_700_000_000 * 10**9


def put(buf, offset, fmt, *values):
    struct.pack_into('>' + fmt, buf, offset, *values)


# §21: DeviceSpecificTime (UINT32 µs, UINT32 NTP s, UINT32 NTP fraction), list name, group
# name (NUL-terminated), UINT16 count, then (UINT16 key, UINT8 type, value) per §12/§13.
MEASUREMENTS = struct.pack('>III', 5, NTP_UNIX_OFFSET + 1_700_000_001, 1 << 31) + b'CAN\0' \
    + b'grp\0' + struct.pack('>H', 3) + struct.pack('>HBf', 1, 1, 12.5) \
    + struct.pack('>HBh', 70, 5, -3) + struct.pack('>HB', 9, 12) + b'ok\0'
# §30: byte 0 = length 3 (high nibble) | version 0, 3 data bytes, message type, CAN id with
# bit 15 set, device time µs, receive time NTP64, device id.
CAN = bytes([0x30, 0xAA, 0xBB, 0xCC, 0x02]) + struct.pack('>HIQB', 0x8123, 500,
                                                          T0 + (1 << 31), 4)
# §31: 20-byte head (ids, types, versions, count, 8 reserved), 28-byte associations.
ASSOCIATION = bytes([1, 2]) + struct.pack('>H', 3) + bytes([4, 5]) + struct.pack('>HI', 6, 2) \
    + bytes(8) + struct.pack('>IIQQf', 10, 20, T0, T0 + (2 << 32), 0.5) \
    + struct.pack('>IIQQf', 11, 21, T0 + (1 << 32), T0 + (3 << 32), 1.0)
# §32: clock ids/names, UINT32 n, n external NTP64, n internal NTP64, n fix modes, 16 reserved.
TIME_RECORD = bytes([1, 5, 2, 2]) + struct.pack('>I', 2) \
    + struct.pack('>QQ', T0 + 18 * (1 << 32), T0 + 19 * (1 << 32)) \
    + struct.pack('>QQ', T0, T0 + (1 << 32)) + bytes([3, 2]) + bytes(16)
# §29: UINT32 count; per element UINT16 type, NTP64, UINT32 payload size, payload.
_VERSION = struct.pack('>HI', 2, 5_007_003) + struct.pack('>H', 3) + b'abc'
_ECU = struct.pack('>H', 4) + b'ECU1'
META = struct.pack('>I', 3) + struct.pack('>HQI', 1, 7, len(_VERSION)) + _VERSION \
    + struct.pack('>HQI', 4, 8, len(_ECU)) + _ECU + struct.pack('>HQI', 3, 9, 2) + b'\x00\x01'


def plane_body() -> bytes:
    """§28: kind 1 (scan), type 3 (x y z, echo pulse width, flags), reference lon/lat (rad,
    FLOAT64), altitude, plane yaw/pitch/roll (FLOAT32), 8 reserved, UINT32 count, points."""
    body = bytearray(48 + 2 * 20)
    put(body, 0, 'HHddf', 1, 3, math.radians(13.25), math.radians(52.5), 35.0)
    put(body, 24, 'fff', 0.5, 0.0, 0.0)
    put(body, 44, 'I', 2)
    put(body, 48, 'ffffI', 1.0, 2.0, 3.0, 0.5, 0x10)
    put(body, 68, 'ffffI', -1.0, -2.0, -3.0, 1.5, 0x20)
    return bytes(body)


def converted(data_type, body, *, ntp=T0, device_id=7, **kw):
    """(topic, message) of the body's record, the CDR read back (rclpy and rosbags)."""
    h = IbeoHeader(data_type=data_type, size=len(body), device_id=device_id, ntp=ntp)
    return [(t, readback(m)) for t, m in ec.IbeoToRos(namespace='/ibeo', **kw).convert(
        h, ibeo.decode_message(data_type, body, h))]


def test_measurement_list_typed_values_with_names():
    [(topic, m)] = converted(0x2821, MEASUREMENTS)
    assert topic == '/ibeo/measurements'
    assert stamp_to_ns(m.header.stamp) == T0_NS + 1_500_000_000      # the list's own time
    assert (m.device_id, m.device_time_us, m.list_name, m.group_name) == (7, 5, 'CAN', 'grp')
    assert list(m.names) == ['longitudinal_velocity', 'utc_hours', 'key_9']
    assert [(p.key, p.type_id) for p in m.measurements] == [(1, 1), (70, 5), (9, 12)]
    assert m.measurements[0].value == 12.5 and m.measurements[1].value == -3.0
    assert math.isnan(m.measurements[2].value) and m.measurements[2].text == 'ok'


def test_measurement_list_without_its_own_time_uses_the_header_time():
    body = bytearray(MEASUREMENTS)
    body[4:12] = bytes(8)
    [(_, m)] = converted(0x2821, bytes(body))
    assert stamp_to_ns(m.header.stamp) == T0_NS


def test_can_message():
    [(topic, m)] = converted(0x1002, CAN)
    assert topic == '/ibeo/can'
    assert stamp_to_ns(m.header.stamp) == T0_NS + 500_000_000       # receive time
    assert (m.can_id, m.message_type, m.version, m.device_id, m.source_device_id,
            m.device_time_us) == (0x123, 2, 0, 4, 7, 500)
    assert bytes(m.data) == b'\xaa\xbb\xcc'


def test_object_association_as_parallel_arrays():
    [(topic, m)] = converted(0x4001, ASSOCIATION)
    assert topic == '/ibeo/object_association' and m.header.frame_id == 'base_link'
    assert (m.reference_object_list_id, m.reference_device_type,
            m.reference_device_interface_version, m.dut_object_list_id, m.dut_device_type,
            m.dut_device_interface_version) == (1, 2, 3, 4, 5, 6)
    assert list(m.reference_object_id) == [10, 11] and list(m.dut_object_id) == [20, 21]
    assert [stamp_to_ns(t) for t in m.first_seen] == [T0_NS, T0_NS + 10**9]
    assert [stamp_to_ns(t) for t in m.last_seen] == [T0_NS + 2 * 10**9, T0_NS + 3 * 10**9]
    assert list(m.certainty) == [0.5, 1.0]


def test_time_record_one_time_reference_per_pair():
    out = converted(0x9000, TIME_RECORD)
    assert [t for t, _ in out] == ['/ibeo/time_reference'] * 2
    stamps = [stamp_to_ns(m.header.stamp) for _, m in out]
    refs = [stamp_to_ns(m.time_ref) for _, m in out]
    assert stamps == [T0_NS, T0_NS + 10**9]                     # internal clock
    assert refs == [T0_NS + 18 * 10**9, T0_NS + 19 * 10**9]     # external (GPS) clock
    assert out[0][1].source == 'ibeo clock 1/5 fix fix_3d'
    assert out[1][1].source.endswith('fix fix_2d')


def test_meta_information_on_diagnostics():
    [(topic, arr)] = converted(0x7110, META)
    assert topic == '/diagnostics'
    [st] = arr.status
    assert st.name == 'ibeo: meta information' and st.hardware_id == 'ibeo device 7'
    assert {kv.key: kv.value for kv in st.values} == {
        'version_number[0]': 'appbase 5.7.3 abc', 'ecu_id[1]': 'ECU1',
        'ab_sync_method[2]': '1'}


def test_point_cloud_plane_points_and_reference():
    out = converted(0x7510, plane_body())
    assert [t for t, _ in out] == ['/ibeo/plane_points', '/ibeo/plane_points/reference']
    cloud, ref = out[0][1], out[1][1]
    assert cloud.header.frame_id == 'ibeo_plane' and stamp_to_ns(cloud.header.stamp) == T0_NS
    pts = from_pointcloud2(cloud)
    assert pts.dtype.names == ('x', 'y', 'z', 'echo_pulse_width', 'flags')
    assert pts.tolist() == [(1, 2, 3, 0.5, 0x10), (-1, -2, -3, 1.5, 0x20)]
    assert (ref.latitude, ref.longitude, ref.altitude) == pytest.approx((52.5, 13.25, 35.0))


def test_frame_index_and_carriage_ways_have_no_ros_form_by_design():
    assert set(ec.NO_ROS_FORM) >= {ibeo.frame_index.FrameIndex,
                                   ibeo.carriage_way.CarriageWayList}


def test_to_bag_round_trip_read_back_with_mcap(tmp_path):
    path = tmp_path / 'more.idc'
    bodies = [(0x2821, MEASUREMENTS), (0x1002, CAN), (0x4001, ASSOCIATION),
              (0x9000, TIME_RECORD), (0x7110, META), (0x7510, plane_body())]
    with IdcWriter(path) as w:
        for k, (dt, body) in enumerate(bodies):
            w.write(dt, body, device_id=7, ntp=T0 + k * (1 << 30))
    with IdcReader(path) as r:
        report = convert(r, tmp_path / 'bag', namespace='/ibeo', progress=False)
    assert not report.undecodable and set(report.without_ros_form) == {0x6120}
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    with open(next((tmp_path / 'bag').glob('*.mcap')), 'rb') as f:
        got = {}
        for _, ch, msg, m in make_reader(f, decoder_factories=[DecoderFactory()]) \
                .iter_decoded_messages(log_time_order=False):
            got.setdefault(ch.topic, []).append((msg.log_time, m))
    assert sorted(got) == ['/diagnostics', '/ibeo/can', '/ibeo/measurements',
                           '/ibeo/object_association', '/ibeo/plane_points',
                           '/ibeo/plane_points/reference', '/ibeo/time_reference']
    [(t, m)] = got['/ibeo/measurements']
    assert t == T0_NS and list(m.names) == ['longitudinal_velocity', 'utc_hours', 'key_9']
    assert [(p.key, p.type_id, p.text) for p in m.measurements] == \
        [(1, 1, ''), (70, 5, ''), (9, 12, 'ok')]
    [(_, m)] = got['/ibeo/can']
    assert m.can_id == 0x123 and bytes(m.data) == b'\xaa\xbb\xcc'
    [(_, m)] = got['/ibeo/object_association']
    assert list(m.dut_object_id) == [20, 21] and list(m.certainty) == [0.5, 1.0]
    assert [m.last_seen[1].sec] == [1_700_000_003]
    refs = got['/ibeo/time_reference']
    assert [m.time_ref.sec for _, m in refs] == [1_700_000_018, 1_700_000_019]
    [(_, arr)] = got['/diagnostics']
    assert arr.status[0].values[1].value == 'ECU1'
    [(_, c)] = got['/ibeo/plane_points']
    pts = np.frombuffer(bytes(c.data), np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'),
                                                 ('echo_pulse_width', '<f4'),
                                                 ('flags', '<u4')]))
    assert (c.width, c.point_step, [f.name for f in c.fields]) == \
        (2, 20, ['x', 'y', 'z', 'echo_pulse_width', 'flags'])
    assert pts.tolist() == [(1, 2, 3, 0.5, 0x10), (-1, -2, -3, 1.5, 0x20)]
    [(_, ref)] = got['/ibeo/plane_points/reference']
    assert ref.latitude == pytest.approx(52.5)


def test_cdr_forms_of_diagnostics_and_transforms_are_the_rclpy_forms_bytes():
    # ibeo_idc to-bag (cdr=True) writes /diagnostics and /tf_static from value trees: the
    # bytes the node's rclpy messages serialise to, for every status kind and the mounts
    from ros_sim_bridge.ibeo.codec import errors_warnings as lux_ew
    from ros_sim_bridge.ibeo.codec import scan_ecu as se
    from ros_sim_bridge.ibeo.codec import system_monitoring as sm
    from ros_sim_bridge.ros.bag import type_name
    from ros_sim_bridge.ros.cdr_template import serialize
    scanners = se.make_scanners(3)
    scanners['device_id'] = [3, 1, 2]
    scanners['mounting_x'] = [1.5, -0.25, math.nan]               # the third: no transform
    scanners['mounting_yaw'] = [0.3, -2.0, 0.0]
    scanners['mounting_roll'] = [0.0, 0.1, 0.0]
    decoded = [(0x7110, ibeo.decode_message(0x7110, META)),
               (0x6701, sm.DeviceStatus(4, 1, 1, 3, 0x80, 9)),
                (0x6700, sm.SystemStatus(1, 2, 3, 4, 5, 6, 7, 8)),
                (0x6705, sm.CanStatus(1, 2, 3, 4, 5)),
                (0x6410, sm.TraceMessage(0x6410, 2, 'DSP warning: ü')),
                (0x2030, lux_ew.errors_from_names()),
                (0x2205, se.EcuScan(T0, 80, 0, 1, scanners, np.zeros(0, se.POINT_DTYPE)))]
    checked = set()
    for dt, record in decoded:
        h = IbeoHeader(data_type=dt, size=0, device_id=7, ntp=T0)
        node = ec.IbeoToRos(namespace='/ibeo').convert(h, record)
        bag = ec.IbeoToRos(namespace='/ibeo', cdr=True).convert(h, record)
        assert [t for t, _ in node] == [t for t, _ in bag]
        for (topic, msg), (_, cdr) in zip(node, bag):
            if topic in ('/diagnostics', '/tf_static'):
                assert cdr.type_name == type_name(msg)
                assert cdr.data == serialize(type_name(msg), msg), (dt, topic)
                checked.add((dt, topic))
    assert {t for _, t in checked} == {'/diagnostics', '/tf_static'}
    assert len(checked) >= 7
