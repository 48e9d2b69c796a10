"""ibeo_ecu / ibeo_lux with ECU / FUSION data types, end to end: the emulator's ECU mode over
real TCP on 127.0.0.1 in, real DDS out (every ECU topic); what the node publishes equals what
the converter of ``ibeo_idc to-bag`` makes of the same bytes; the ECU Set Filter as a service
and as the ``data_types`` parameter, sent again after the ECU restarts; unknown types and a
record with an absurd count counted while the stream goes on.

As in test_lux_node.py the node starts first, pointed at a free port, the test subscribes and
waits for the match, and only then the ECU opens.
"""
from __future__ import annotations

import array
import math
import struct
import time

import numpy as np
import pytest
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from sensor_msgs.msg import CompressedImage, Imu, NavSatFix, PointCloud2
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from ros_sim_bridge.ibeo.emulator.scene import EcuScene
from ros_sim_bridge.ibeo.emulator.server import LuxServer
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec.header import encode_message
from ros_sim_bridge.ibeo.ecu_recording import FAKE_JPEG, mounting
from ros_sim_bridge.ibeo.ros import ecu_conversions as ecu
from ros_sim_bridge.ibeo.ros.ecu_node import IbeoEcuNode
from ros_sim_bridge.msg import IbeoObjectList, IbeoOdometry, IbeoScanInfo
from ros_sim_bridge.ros.pointcloud import from_pointcloud2
from ros_sim_bridge.ros.qos import LATCHED
from ros_sim_bridge.ros.stamps import stamp_to_ns
from ros_sim_bridge.srv import IbeoSetFilter

from ibeo_readback import readback

from conftest import free_tcp_port, wait_until
from test_ibeo_emulator import Client
from test_lux_node import Diag, call, collect, connected_sensor, level

FAST = {'diagnostics_period': 0.2, 'min_backoff': 0.05, 'max_backoff': 0.25}

#: every ECU output of the emulator's frames: topic → message type
TOPICS = {'points': PointCloud2, 'ecu/scan_info': IbeoScanInfo, 'ecu/objects': IbeoObjectList,
          'objects/markers': MarkerArray, 'vehicle_state/odometry': Odometry,
          'vehicle_state/fix': NavSatFix, 'vehicle_state/twist': TwistStamped,
          'gps/fix': NavSatFix, 'gps_imu/fix': NavSatFix, 'imu/data': Imu,
          'odometry': IbeoOdometry, 'odometry/twist': TwistStamped,
          'image/compressed': CompressedImage}


@pytest.fixture
def ecu_driver(ros):
    def start(node_class=IbeoEcuNode, **params):
        port = params.pop('port', None) or free_tcp_port()
        return ros.start(node_class, {'port': port, **FAST, **params}), port
    return start


def ecu_server(port, closing, **scene):
    args = {'scanners': 3, 'points': 6000, 'start_unix_ns': time.time_ns(), **scene}
    srv = LuxServer(EcuScene(args.pop('rate', 12.5), **args), port=port).start()
    closing.append(srv)
    return srv


def collect_all(ros, node):
    out = {t: collect(ros, node, m, t, 200) for t, m in TOPICS.items()}
    out['/tf_static'] = collect(ros, node, TFMessage, '/tf_static', LATCHED)
    return out


def test_every_ecu_topic_from_the_emulator(ros, ecu_driver, closing):
    node, port = ecu_driver()
    got = collect_all(ros, node)
    diag = Diag(ros)
    ecu_server(port, closing, points=60_000)
    for topic, c in got.items():
        c.wait_for(1, timeout=20)
    # one cloud per 0x2205, in the vehicle frame its flags say (bit 11), 60,000 points
    cloud = got['points'].wait_for(1)[0]
    pts = from_pointcloud2(cloud)
    assert cloud.header.frame_id == 'base_link' and len(pts) == 60_000
    assert set(np.unique(pts['device_id'])) == {10, 11, 12}
    assert {f.name for f in cloud.fields} >= {'x', 'y', 'z', 'echo_width', 'device_id',
                                               'layer', 'echo', 'time_offset_us', 'flags'}
    info = got['ecu/scan_info'].wait_for(1)[0]
    assert info.data_type == 0x2205 and info.scan_points == 60_000 and len(info.scanners) == 3
    # stamp_source sensor: the scan's NTP start time (the emulator's clock is the host's)
    assert stamp_to_ns(cloud.header.stamp) == ecu.ntp_to_ns(info.scan_start_ntp)
    assert abs(stamp_to_ns(cloud.header.stamp) - time.time_ns()) < 30e9
    # static TF vehicle → each scanner from its mounting pose
    tf = got['/tf_static'].wait_for(1)[0]
    mounts = {t.child_frame_id: t for t in tf.transforms}
    assert set(mounts) == {'ibeo_scanner_10', 'ibeo_scanner_11', 'ibeo_scanner_12'}
    for k in range(3):
        t = mounts[f'ibeo_scanner_{10 + k}']
        yaw, x, y = mounting(k, 3)
        assert t.header.frame_id == 'base_link'
        assert (t.transform.translation.x, t.transform.translation.y) == pytest.approx((x, y),
                                                                                      abs=1e-5)
        assert t.transform.rotation.z == pytest.approx(math.sin(yaw / 2), abs=1e-6)
    objs = got['ecu/objects'].wait_for(1)[0]
    assert objs.data_type == 0x2280 and [o.id for o in objs.objects] == [1, 2, 3]
    assert [o.classification for o in objs.objects] == [5, 3, 6]
    assert all(len(o.contour) == 3 for o in objs.objects)
    markers = got['objects/markers'].wait_for(1)[0]
    assert {m.ns for m in markers.markers} == {'ecu_objects', 'ecu_contours', 'ecu_labels'}
    fix = got['gps/fix'].wait_for(1)[0]
    assert fix.latitude == pytest.approx(52.52, abs=1e-3) and fix.header.frame_id == 'gps'
    assert got['gps_imu/fix'].wait_for(1)[0].longitude == pytest.approx(13.40, abs=1e-6)
    imu = got['imu/data'].wait_for(1)[0]
    assert imu.orientation.z == pytest.approx(math.sin(math.pi / 4), abs=0.02)   # north → ENU
    assert got['odometry'].wait_for(1)[0].velocity == pytest.approx(10.0)
    assert got['vehicle_state/odometry'].wait_for(1)[0].twist.twist.linear.x == \
        pytest.approx(10.0)
    assert got['vehicle_state/fix'].wait_for(1)[0].altitude == pytest.approx(34.0)
    img = got['image/compressed'].wait_for(1)[0]
    assert img.format == 'jpeg' and bytes(img.data) == FAKE_JPEG
    # device status (0x6701) on /diagnostics; the filter the driver sent: all types
    st, values = diag.wait('ibeo_ecu: device 10', lambda st, v: True)
    assert level(st) == 0 and 'age_s' in values
    _, link = diag.wait('link tcp', lambda st, v: v.get('set_filter', '').startswith(
        'accepted'))
    assert link['set_filter'] == 'accepted: 0x0000-0xFFFF'
    assert [f.ranges for f in closing[0].filters] == [((0, 0xFFFF),)]
    _, scans = diag.wait('ecu_scan_2205 (0x2205)', lambda st, v: int(v['published']) >= 2)
    assert scans['decode_errors'] == '0'


def same(a, b) -> bool:
    """Message equality with NaN equal to NaN (unset ECU object fields are NaN)."""
    if hasattr(a, 'get_fields_and_field_types'):
        return type(a) is type(b) and all(same(getattr(a, n), getattr(b, n))
                                          for n in a.get_fields_and_field_types())
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, array.array)):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=np.asarray(a).dtype.kind
                              == 'f')
    return a == b


def _by_stamp(messages):
    return {(type(m).__name__, _stamp(m)): m for m in messages}


def _stamp(m):
    if hasattr(m, 'header'):
        return stamp_to_ns(m.header.stamp)
    inner = getattr(m, 'markers', None) or getattr(m, 'transforms', None)
    return stamp_to_ns(inner[0].header.stamp) if inner else None


def test_published_messages_equal_the_to_bag_conversion(ros, ecu_driver, closing):
    """A second client of the same emulator records the raw messages; the converter of
    ibeo_idc to-bag turns them into what a converted .idc holds; the node's messages with
    the same stamps are equal, field by field (point bytes included)."""
    node, port = ecu_driver()
    got = collect_all(ros, node)
    ecu_server(port, closing, points=2000)
    got['points'].wait_for(1, timeout=20)
    client = Client(port)
    client.send(struct.pack('>HHHH', 5, 2, 0, 0xFFFF))
    try:
        client.pump(lambda c: sum(h.data_type == 0x2808 for h, _ in c.records) >= 2,
                    timeout=20)                      # two seconds of frames
    finally:
        client.close()
    time.sleep(0.5)
    conv = ecu.IbeoToRos(namespace='')
    expected: dict = {}
    for header, record in client.records:
        for topic, msg in conv.convert(header, record):
            expected.setdefault(topic.lstrip('/') if topic not in ('/tf_static', '/diagnostics')
                                else topic, []).append(msg)
    compared = 0
    for topic, c in got.items():
        if topic == '/tf_static':        # sent once per connection: compare all but stamps
            def mounts(m):
                return sorted((t.header.frame_id, t.child_frame_id, t.transform.translation.x,
                               t.transform.translation.y, t.transform.translation.z,
                               t.transform.rotation.x, t.transform.rotation.y,
                               t.transform.rotation.z, t.transform.rotation.w)
                              for t in m.transforms)
            assert mounts(c.messages[-1]) == mounts(expected['/tf_static'][0])
            compared += 1
            continue
        mine = _by_stamp(c.messages)
        # as a bag holds them: serialised (float32 fields at float32 precision)
        theirs = _by_stamp(readback(m) for m in expected[topic])
        common = set(mine) & set(theirs)
        assert common, f'{topic}: no message in common'
        for key in common:
            assert same(mine[key], theirs[key]), f'{topic} {key} differs'
        compared += len(common)
    assert compared > 40


def test_set_filter_service_and_resent_after_the_ecu_restarts(ros, ecu_driver, closing):
    node, port = ecu_driver(data_types='')
    points = collect(ros, node, PointCloud2, 'points', 200)
    gps = collect(ros, node, NavSatFix, 'gps/fix', 200)
    diag = Diag(ros)
    server = ecu_server(port, closing)
    diag.wait('link tcp', lambda st, v: v.get('connected') == 'true')
    time.sleep(0.5)
    assert points.messages == [] and server.filters == []        # no filter: the ECU is silent
    # bad requests are refused before anything is sent
    bad = IbeoSetFilter.Request(range_starts=[0x2205], range_ends=[])
    res = call(ros, IbeoSetFilter, '/ibeo_ecu/set_filter', bad)
    assert not res.success and 'range_ends' in res.message
    bad = IbeoSetFilter.Request(data_types='0x2205-0x2200')
    assert not call(ros, IbeoSetFilter, '/ibeo_ecu/set_filter', bad).success
    req = IbeoSetFilter.Request(range_starts=[0x2205], range_ends=[0x2205])
    res = call(ros, IbeoSetFilter, '/ibeo_ecu/set_filter', req)
    assert res.success and res.reply_id == 0x0005 and res.data_types == '0x2205', res.message
    points.wait_for(2, timeout=10)
    assert gps.messages == []                                    # only scans were asked for
    assert [f.ranges for f in server.filters] == [((0x2205, 0x2205),)]
    # the ECU restarts: the service's filter is sent again on the new connection
    server.stop()
    diag.wait('link tcp', lambda st, v: v.get('connected') == 'false')
    points.clear()
    server2 = ecu_server(port, closing)
    points.wait_for(2, timeout=15)
    assert [f.ranges for f in server2.filters] == [((0x2205, 0x2205),)]
    assert gps.messages == []
    # text form, all types
    res = call(ros, IbeoSetFilter, '/ibeo_ecu/set_filter',
               IbeoSetFilter.Request(data_types='all'))
    assert res.success and res.data_types == '0x0000-0xFFFF'
    gps.wait_for(1, timeout=10)


def test_data_types_parameter_sent_after_every_connect(ros, ecu_driver, closing):
    node, port = ecu_driver(data_types='0x2280, 0x9001')
    objects = collect(ros, node, IbeoObjectList, 'ecu/objects', 200)
    imu = collect(ros, node, Imu, 'imu/data', 200)
    points = collect(ros, node, PointCloud2, 'points', 200)
    diag = Diag(ros)
    server = ecu_server(port, closing)
    objects.wait_for(2, timeout=15)
    imu.wait_for(2, timeout=10)
    assert points.messages == []
    assert [f.ranges for f in server.filters] == [((0x2280, 0x2280), (0x9001, 0x9001))]
    server.stop()
    diag.wait('link tcp', lambda st, v: v.get('connected') == 'false')
    objects.clear()
    server2 = ecu_server(port, closing)
    objects.wait_for(2, timeout=15)
    assert [f.ranges for f in server2.filters] == [((0x2280, 0x2280), (0x9001, 0x9001))]
    _, link = diag.wait('link tcp', lambda st, v: v.get('set_filters_sent') == '2')
    assert link['set_filter'] == 'accepted: 0x2280, 0x9001' and link['connects'] == '2'
    assert points.messages == []
    # changed at run time: sent at once; a bad value is refused and changes nothing
    assert not node.set_parameters([Parameter('data_types', value='0x22x5')])[0].successful
    assert node.set_parameters([Parameter('data_types', value='0x2205')])[0].successful
    points.wait_for(2, timeout=10)
    assert server2.filters[-1].ranges == ((0x2205, 0x2205),) and len(server2.filters) == 2


def test_each_filter_asked_for_is_logged_with_its_answer(ros, ecu_driver, closing):
    """A data_types set at run time and a set_filter call each log the device's answer, even
    right after the (rate-limited) line of the filter sent on connect."""
    from rcl_interfaces.msg import Log
    from rclpy.qos import DurabilityPolicy, QoSProfile
    # /rosout keeps its last lines for late joiners: none is lost to a slow discovery; the
    # lines of the nodes before this one (the same process's logger) are told by their time
    logs = ros.collect(Log, '/rosout', QoSProfile(
        depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL), matched=False)
    start_ns = time.time_ns()
    node, port = ecu_driver(data_types='0x2280')
    diag = Diag(ros)
    ecu_server(port, closing)
    diag.wait('link tcp', lambda st, v: v.get('set_filter') == 'accepted: 0x2280')
    assert node.set_parameters([Parameter('data_types', value='0x2205')])[0].successful
    res = call(ros, IbeoSetFilter, '/ibeo_ecu/set_filter',
               IbeoSetFilter.Request(data_types='0x9001'))
    assert res.success, res.message

    def answers():
        return [m.msg for m in list(logs.messages)
                if m.name == 'ibeo_ecu' and m.msg.startswith('set filter 0x')
                and stamp_to_ns(m.stamp) >= start_ns]
    assert wait_until(lambda: len(answers()) == 3, 10), answers()
    # the parameter's filter is sent by a thread of its own, the service's by its callback:
    # the two may be answered in either order
    assert sorted(answers()) == [f'set filter 0x{t}: accepted by the device'
                                 for t in ('2205', '2280', '9001')]


def test_refused_or_unanswered_filter_is_reported(ros, ecu_driver, closing):
    node, port = ecu_driver(data_types='0x2205', command_timeout=0.5)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)           # answers nothing
    _, link = diag.wait('link tcp', lambda st, v: v.get('set_filter', '').startswith('failed'))
    assert 'no reply' in link['set_filter']
    # 0x2010 as sent: header, then 00 05 00 02 2205 2205 (big-endian)
    assert bytes(sensor.received[24:32]) == bytes.fromhex('0005000222052205')


GPS_NTP = 3_900_000_000 << 32


def gps(k: int) -> bytes:
    """0x2604 by the §22 table, latitude 50 + ``k`` degrees."""
    body = struct.pack('>IQB10d32xH', k, GPS_NTP + k, 7, math.radians(50.0 + k), 0.2, 34.0,
                       0.5, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1)
    return encode_message(0x2604, body, ntp=GPS_NTP + k)


def test_bad_ecu_records_and_unknown_types_are_counted_stream_goes_on(ros, ecu_driver,
                                                                     closing):
    """No Set Filter sent (data_types empty), receive-time stamps (ibeo_lux's defaults; it
    decodes ECU types too, but makes their topics on first use: test_ibeo_node_topics.py)."""
    node, port = ecu_driver(data_types='', stamp_source='receive')
    fixes = collect(ros, node, NavSatFix, 'gps/fix', 100)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    ntp = GPS_NTP
    # 0x2205: header (24 B) says 65,535 points and 1 scanner info; 10 points follow
    scan = struct.pack('>QIIHHB3x', ntp, 80_000, 0x800, 1, 65_535, 1) + bytes(148 + 10 * 28)
    # 0x2280: mid-scan time, 0xFFFF objects, then a few bytes
    objects = struct.pack('>QH', ntp, 0xFFFF) + bytes(64)
    stream = (gps(1) + encode_message(0x2205, scan) + gps(2) + encode_message(0x2280, objects)
              + gps(3) + encode_message(0x2850, b'\x00' * 40) + encode_message(0x7100, b'x')
              + gps(4))
    sensor.send(stream)
    got = fixes.wait_for(4, timeout=10)
    assert [round(f.latitude) for f in got] == [51, 52, 53, 54]        # nothing valid lost
    # stamp_source receive: the receive time, not the messages' 2023 NTP times
    assert all(abs(stamp_to_ns(f.header.stamp) - time.time_ns()) < 30e9 for f in got)
    _, link = diag.wait('link tcp', lambda st, v: v.get('skipped_messages') == '2')
    assert link['skipped.0x2850 ecu_2850'] == '1' and link['skipped.0x7100 sensor_info'] == '1'
    _, scans = diag.wait('(0x2205)', lambda st, v: v.get('errors.truncated') == '1')
    assert 'points' in scans['last_error']
    _, objs = diag.wait('(0x2280)', lambda st, v: v.get('errors.truncated') == '1')
    assert '65535 objects' in objs['last_error']
    _, g = diag.wait('(0x2604)', lambda st, v: v.get('published') == '4')
    assert g['decode_errors'] == '0'


def test_installed_ibeo_ecu_with_its_params_file_and_the_emulator_executable(ros):
    """The installed executables as a user starts them: ibeo_ecu with config/ibeo_ecu.yaml
    (Set Filter 'all' from the file) against ibeo_lux_sim --ecu."""
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file
    port = free_tcp_port()
    clouds = ros.collect(PointCloud2, '/ibeo_ecu/points', 100, matched=False)
    fixes = ros.collect(NavSatFix, '/ibeo_ecu/gps_imu/fix', 100, matched=False)
    with NodeProcess('ibeo_ecu', params_file=config_file('ibeo_ecu.yaml'),
                     parameters={'port': port, 'min_backoff': 0.05, 'max_backoff': 0.25},
                     quiet=True) as proc, \
            NodeProcess('ibeo_lux_sim', args=['--ecu', '--port', str(port), '--points', '3000',
                                              '--rate', '10'], quiet=True) as emulator:
        assert wait_until(lambda: len(clouds.messages) >= 3 and fixes.messages, timeout=30,
                          interval=0.05)
        assert proc.running() and emulator.running()
        assert clouds.messages[-1].width == 3000
    assert proc.proc.returncode == 0 and emulator.proc.returncode == 0


@pytest.mark.parametrize('big', ['0x2280', '0x2205'])
def test_installed_ibeo_ecu_skips_a_message_over_max_message_bytes_by_its_size(ros, closing,
                                                                              big):
    """The installed ibeo_ecu, max_message_bytes 1 MiB, and a sensor sending a 0x2604, a big
    message and a 0x2604: both fixes published, the big one counted once as oversized on the
    link and logged with type, size and limit, no byte of it taken for garbage.  The big one:
    a legal 0x2280 of 65,535 objects (11 MB, magic words inside), or a 0x2205 of 2 MB, above
    its type's bound too (not a false sync for that)."""
    from ros_sim_bridge.tools.launcher import NodeProcess
    from test_ibeo_false_sync import header, objects_2280_body, scan_2205_over_its_bound
    port = free_tcp_port()
    fixes = ros.collect(NavSatFix, '/ibeo_ecu/gps/fix', 100, matched=False)
    diag = Diag(ros)
    if big == '0x2280':
        body = objects_2280_body(65_535, magic_every=367)
        message = header(0x2280, len(body)) + body
    else:
        message = scan_2205_over_its_bound()
    with NodeProcess('ibeo_ecu', parameters={'port': port, 'max_message_bytes': 1 << 20,
                                             'data_types': '', 'stamp_source': 'receive',
                                             **FAST}, quiet=True) as proc:
        sensor = connected_sensor(port, closing)

        def latitudes():
            return [round(f.latitude) for f in fixes.messages]
        # gps/fix is made on the first 0x2604: sent again until discovery has matched it
        assert wait_until(lambda: sensor.send(gps(1)) or latitudes(), timeout=20, interval=0.2)
        sensor.send(message + gps(2))
        assert wait_until(lambda: 52 in latitudes(), timeout=20), latitudes()
        assert set(latitudes()) == {51, 52}
        _, link = diag.wait('link tcp', lambda st, v: v.get('errors.oversized') == '1')
        assert 'errors.bad_magic' not in link and link['garbage_bytes'] == '0', link
        assert link['false_syncs'] == '0' and 'errors.bad_value' not in link, link
        assert proc.running()
        proc.stop()
        log = proc.last_lines(50)
    assert proc.proc.returncode == 0
    line = next(line for line in log if 'oversized' in line)
    assert big in line and str(len(message) - 24) in line and str(1 << 20) in line, line


def test_types_the_emulator_does_not_send_scanner_frames_2204_2225_2281_2806_6705(
        ros, ecu_driver, closing):
    """Records of the codec (their decoders have golden vectors in test_ibeo_ecu_codec.py)
    sent by a raw ECU: a 0x2204 in scanner coordinates → one cloud per scanner in its frame,
    0x2225 / 0x2281 → ecu/objects, 0x2806 → vehicle_state/odometry, 0x6705 → /diagnostics."""
    from ros_sim_bridge.ibeo.codec import objects_ecu as oe
    from ros_sim_bridge.ibeo.codec import scan_ecu as se
    from ros_sim_bridge.ibeo.codec import system_monitoring as sm
    from ros_sim_bridge.ibeo.codec import vehicle_state_ecu as ve
    node, port = ecu_driver(data_types='')
    clouds = collect(ros, node, PointCloud2, 'points', 100)
    objects = collect(ros, node, IbeoObjectList, 'ecu/objects', 100)
    odom = collect(ros, node, Odometry, 'vehicle_state/odometry', 100)
    tf = collect(ros, node, TFMessage, '/tf_static', LATCHED)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    ntp = 3_900_000_000 << 32
    infos = se.make_scanners(2, se.SCAN_2204)
    infos['device_id'] = [1, 2]
    infos['mounting_x'] = [3.5, -1.0]
    pts = np.zeros(5, se.POINT_DTYPE)
    pts['device_id'] = [1, 2, 1, 2, 2]
    pts['x'] = [1.0, 2.0, 3.0, 4.0, 5.0]
    scan = se.EcuScan2204(ntp, 40_000, 0, 9, infos, pts)               # flag bit 11 clear
    o = oe.make_objects(2, oe.OBJECTS_2225)
    o['id'] = [4, 5]
    o25 = oe.EcuObjectList2225(ntp, o, [np.zeros((0, 2), np.float32)] * 2)
    o = oe.make_objects(1, oe.OBJECTS_2281)
    o['id'] = 70000
    o81 = oe.EcuObjectList2281(ntp, o, [np.zeros((0, 2), np.float32)], [[]], list_flags=0x10)
    vs = ve.EcuVehicleState2806(ntp, 12_000, -5_000, 0.1, 7.5)
    status = sm.SystemStatus(0, 3, 0, 55, 60, 70, 80, 90)                # state 3: error
    sensor.send(b''.join(registry.encode_record_message(r, device_id=9, ntp=ntp)
                         for r in (scan, o25, o81, vs, status)))
    got = clouds.wait_for(2, timeout=10)
    assert sorted((c.header.frame_id, c.width) for c in got) == [('ibeo_scanner_1', 2),
                                                                  ('ibeo_scanner_2', 3)]
    mounts = {t.child_frame_id: t.transform.translation.x for t in tf.wait_for(1)[0].transforms}
    assert mounts == {'ibeo_scanner_1': 3.5, 'ibeo_scanner_2': -1.0}
    lists = objects.wait_for(2, timeout=10)
    assert [(m.data_type, [x.id for x in m.objects]) for m in lists] == [(0x2225, [4, 5]),
                                                                       (0x2281, [70000])]
    assert lists[1].post_processed and lists[0].header.frame_id == 'base_link'
    od = odom.wait_for(1)[0]
    assert (od.pose.pose.position.x, od.pose.pose.position.y) == pytest.approx((1.2, -0.5))
    assert od.header.frame_id == 'odom' and od.twist.twist.linear.x == pytest.approx(7.5)
    st, values = diag.wait('ibeo_ecu: system', lambda st, v: True)
    assert level(st) == 2 and values['cpu_usage'] == '55'


def test_sensor_stamps_fall_back_to_receive_time_while_the_ecu_clock_is_unset(
        ros, ecu_driver, closing):
    node, port = ecu_driver(data_types='')                       # ibeo_ecu: stamp_source sensor
    fixes = collect(ros, node, NavSatFix, 'gps/fix', 100)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    powered_up = 1234 << 32                                      # 1234 s since power-up
    body = struct.pack('>IQB10d32xH', 1, powered_up, 7, 0.9, 0.2, 34.0, 0.5, 0.5, 1.0, 0.0,
                       0.0, 0.0, 0.0, 1)
    sensor.send(encode_message(0x2604, body, ntp=powered_up))
    (fix,) = fixes.wait_for(1, timeout=10)
    assert abs(stamp_to_ns(fix.header.stamp) - time.time_ns()) < 30e9
    _, link = diag.wait('link tcp', lambda st, v: v.get('stamp_fallbacks') == '1')
    assert link['sensor_clock'].startswith('unset')


def test_objects_without_a_finite_centre_are_counted_and_get_no_box(ros, ecu_driver, closing):
    """Objects 11 (no finite centre), 12 (all finite), 13 (box length +Inf), 14 (course angle
    NaN), 15 (absolute velocity −Inf): all in the list as sent; no box for 11, finite boxes
    for 13–15; 11 counted as without centre, 13–15 as with non-finite values, per list."""
    from ros_sim_bridge.ibeo.codec import objects_ecu as oe
    node, port = ecu_driver(data_types='', stamp_source='receive')
    lists = collect(ros, node, IbeoObjectList, 'ecu/objects', 10)
    markers = collect(ros, node, MarkerArray, 'objects/markers', 10)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    o = oe.make_objects(5, oe.OBJECTS_2280)
    o['id'] = [11, 12, 13, 14, 15]
    o['box_center_x'], o['box_center_y'] = [np.nan, 4.0, 5.0, 6.0, 7.0], [1.0, -2.0, 0, 0, 0]
    o['box_size_x'], o['box_size_y'] = [4.0, 4.0, np.inf, 4.0, 4.0], 2.0
    o['course_angle'] = [0.0, 0.0, 0.0, np.nan, 0.0]
    o['absolute_velocity_x'] = [0.0, 0.0, 0.0, 0.0, -np.inf]
    body = oe.encode_objects(oe.EcuObjectList2280(3_900_000_000 << 32, o,
                                                  [np.zeros((0, 2), np.float32)] * 5))
    sensor.send(encode_message(0x2280, body) + encode_message(0x2280, body))
    (first, _) = lists.wait_for(2, timeout=10)
    assert [ob.id for ob in first.objects] == [11, 12, 13, 14, 15]      # the list as sent
    assert math.isnan(first.objects[0].box_center_x)
    assert math.isinf(first.objects[2].box_size_x) and math.isnan(first.objects[3].course_angle)
    boxes = [m for m in markers.wait_for(1, timeout=10)[0].markers if m.ns == 'ecu_objects']
    assert [(m.id, m.pose.position.x) for m in boxes] == [(12, 4.0), (13, 5.0), (14, 6.0),
                                                          (15, 7.0)]   # none at the origin
    for m in boxes:
        assert all(map(math.isfinite, (m.scale.x, m.scale.y, m.pose.orientation.z,
                                       m.pose.orientation.w))), m
    diag.wait('(0x2280)', lambda st, v: v.get('objects_without_centre') == '2'
              and v.get('objects_with_non_finite_values') == '6')


@pytest.mark.parametrize('stamp_source', ['receive', 'sensor'])
def test_a_record_time_no_stamp_holds_is_an_invalid_record_time(ros, ecu_driver, closing,
                                                                stamp_source):
    """A fix whose own NTP time is 2**31 + 5 s since power-up (no int32 stamp holds it; a
    time no ECU reaches, so a corrupt one) beside a valid header time of 2093: an invalid
    record time, whatever the stamp source (counted on the link, not as bad input); the fix
    is published, stamped with its header time (stamp_source sensor) or its receive time."""
    node, port = ecu_driver(data_types='', stamp_source=stamp_source)
    fixes = collect(ros, node, NavSatFix, 'gps/fix', 100)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    good, bad = 3_900_000_000 << 32, (2**31 + 5) << 32

    def gps(k, t):   # 0x2604 by the §22 table
        body = struct.pack('>IQB10d32xH', k, t, 7, math.radians(50.0 + k), 0.2, 34.0,
                           0.5, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1)
        return encode_message(0x2604, body, ntp=good + k)
    start_ns = time.time_ns()
    sensor.send(gps(1, good) + gps(2, bad) + gps(3, good))
    got = fixes.wait_for(3, timeout=10)
    assert [round(f.latitude) for f in got] == [51, 52, 53]
    stamp = stamp_to_ns(got[1].header.stamp)
    if stamp_source == 'sensor':
        assert stamp == ntp64_to_unix_ns(good + 2)
    else:
        assert start_ns <= stamp <= time.time_ns()
    _, link = diag.wait('link tcp', lambda st, v: v.get('invalid_record_times') == '1')
    assert link['last_invalid_record_time'] == \
        '0x2604 gps_wgs84 from device 0: -1.75e+09 s from its header time', link
    _, g = diag.wait('(0x2604)', lambda st, v: v.get('published') == '3')
    assert 'errors.bad_value' not in g, g
