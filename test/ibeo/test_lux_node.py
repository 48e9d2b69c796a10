"""ibeo_lux end to end: the LUX protocol over real TCP on 127.0.0.1 in, real DDS out.

Two kinds of sensor: the built-in emulator (LuxServer) for realistic streams and every command,
and a raw TCP server of this file (RawSensor) that sends hand-made bytes for exact values and
bad input.  The node is always started first, pointed at a port nobody listens on yet; the
test subscribes, waits for the match, and only then opens the sensor (so nothing published
before DDS discovery is lost).
"""
from __future__ import annotations

import math
import signal
import socket
import struct
import subprocess
import threading
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import TwistStamped
from sensor_msgs.msg import PointCloud2
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.ibeo.codec import commands as C
from ros_sim_bridge.ibeo.codec import errors_warnings as E
from ros_sim_bridge.ibeo.codec import objects as O
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.codec import vehicle_state as V
from ros_sim_bridge.ibeo.codec.header import MAGIC_BYTES, encode_message
from ros_sim_bridge.core.ntp import unix_ns_to_ntp64
from ros_sim_bridge.ibeo.ros.conversions import CLOUD_DTYPE
from ros_sim_bridge.ros.pointcloud import from_pointcloud2
from ros_sim_bridge.ros.stamps import stamp_to_ns
from ros_sim_bridge.ibeo.emulator.scene import LuxScene
from ros_sim_bridge.ibeo.emulator.server import LuxServer, load_messages
from ros_sim_bridge.msg import LuxObjectList, LuxScanInfo, LuxVehicleState
from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode
from ros_sim_bridge.ibeo.session import handled
from ros_sim_bridge.srv import (LuxCommand, LuxGetParameter, LuxGetStatus, LuxSetNtpTime,
                                LuxSetParameter)
from ros_sim_bridge.tools.launcher import NodeProcess, config_file, executable, ros_args

from conftest import LOCAL_ENV, free_tcp_port, shared_path, wait_until

FAST = {'diagnostics_period': 0.2, 'min_backoff': 0.05, 'max_backoff': 0.25}
RAW = {**FAST, 'layers': 4, 'start_measure_on_connect': False}
SENSOR_NS = 1_750_000_000_123_456_789            # a set sensor clock (2025)


# --- a raw sensor: bytes of our choosing ----------------------------------------------------

class RawSensor:
    """A TCP server on 127.0.0.1 that sends what the test says; ``answer`` replies to
    commands (None: never reply).  One client at a time; ``drop`` closes it."""

    def __init__(self, port: int = 0, answer=None):
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(('127.0.0.1', port))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.answer = answer
        self.conn = None
        self.clients = 0
        self.connected = threading.Event()
        self.received = bytearray()
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        from ros_sim_bridge.ibeo.codec.framing import make_framer
        from ros_sim_bridge.core.framer import Frame
        self.listener.settimeout(0.1)
        while not self._stop:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            self.conn, self.clients = conn, self.clients + 1
            self.connected.set()
            framer = make_framer()
            conn.settimeout(0.1)
            while not self._stop and self.conn is conn:
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    continue
                except OSError:
                    break
                if not data:
                    break
                self.received += data
                for ev in framer.feed(data):
                    if isinstance(ev, Frame) and self.answer is not None:
                        reply = self.answer(C.decode_command(ev.body))
                        if reply is not None:
                            self.send(encode_message(registry.REPLY, C.encode_reply(reply)))

    def wait_client(self, timeout: float = 10.0) -> None:
        assert self.connected.wait(timeout), 'the driver did not connect'

    def send(self, data: bytes, timeout: float = 60.0) -> None:
        """All of ``data``, however long the driver takes to read it (the socket's 0.1 s
        timeout is for the receiving loop: a big message may fill the send buffer for longer)."""
        conn, view = self.conn, memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            try:
                view = view[conn.send(view):]
            except socket.timeout:          # nothing sent; the driver is still reading
                assert time.monotonic() < deadline, f'the driver read nothing for {timeout} s'

    def drop(self) -> None:
        conn, self.conn = self.conn, None
        self.connected.clear()
        conn.close()

    def close(self) -> None:
        self._stop = True
        if self.conn is not None:
            self.conn.close()
        self.thread.join(2.0)
        self.listener.close()


def connected_sensor(port: int, closing: list) -> RawSensor:
    """A RawSensor on ``port`` (closed after the test), once the driver has connected to it."""
    sensor = RawSensor(port)
    closing.append(sensor)
    sensor.wait_client()
    return sensor


def points(rows) -> np.ndarray:
    """POINT_DTYPE from (layer, echo, flags, angle_ticks, distance_cm, echo_width_cm)."""
    p = np.zeros(len(rows), S.POINT_DTYPE)
    for i, row in enumerate(rows):
        p[i] = row
    return p


def scan_msg(pts, number=1, *, mirror=0, ntp=None, status=0x030B, device_id=3, **kw) -> bytes:
    start = unix_ns_to_ntp64(SENSOR_NS) if ntp is None else ntp
    scan = S.LuxScan(number, status, 0, start, start + (80 << 32) // 1000, 11520, 1600, -1920,
                     flags=S.SCAN_FLAG_MIRROR_SIDE * mirror, points=pts, **kw)
    return encode_message(registry.SCAN, S.encode_scan(scan), device_id=device_id, ntp=start)


def numbered_scan(number: int) -> bytes:
    return scan_msg(points([(0, 0, 0, 0, 1000 + number, 50)]), number)


def expected_xyz(pts, **kw):
    scan = S.LuxScan(0, 0, 0, 0, 0, 11520, 0, 0, points=pts)
    return G.scan_xyz(scan, **kw)


# --- fixtures --------------------------------------------------------------------------------

@pytest.fixture
def driver(ros):
    """Start IbeoLuxNode on a free port (nothing listening yet) → (node, port)."""
    def start(namespace: str = '', **params):
        port = params.pop('port', None) or free_tcp_port()
        node = ros.start(IbeoLuxNode, {'port': port, **params},
                         **({'namespace': namespace} if namespace else {}))
        return node, port
    return start


def node_topic(node, name: str) -> str:
    """The full name of the node's relative topic ``name``: under its namespace and its
    ``topic_prefix`` parameter (default ``ibeo``, ``ibeo_ecu``; '' none)."""
    prefix = node.get_parameter('topic_prefix').value.strip('/')
    return '/' + '/'.join(p for p in (node.get_namespace().strip('/'), prefix, name) if p)


def collect(ros, node, msg_type, topic, qos=10):
    """ros.collect, and also wait until the node's publisher has matched the subscription
    (discovery runs both ways: data sent before the writer knows the reader is lost)."""
    name = topic if topic.startswith('/') else node_topic(node, topic)
    c = ros.collect(msg_type, name, qos)
    pub = next(p for p in node.publishers if p.topic_name == name)
    assert wait_until(lambda: pub.get_subscription_count() > 0, 10.0), f'{name} not matched'
    return c


def call(ros, srv_type, name, request=None, timeout=10.0):
    client = ros.probe.create_client(srv_type, name)
    try:
        assert client.wait_for_service(timeout_sec=10.0), f'{name} not available'
        return client.call(request or srv_type.Request(), timeout_sec=timeout)
    finally:
        ros.probe.destroy_client(client)


class Diag:
    """/diagnostics statuses as they arrive."""

    def __init__(self, ros):
        self.c = ros.collect(DiagnosticArray, '/diagnostics', 100, matched=False)

    def wait(self, name_part, predicate=lambda st, v: True, timeout=10.0):
        found = []

        def check():
            for arr in list(self.c.messages):
                for st in arr.status:
                    if name_part in st.name:
                        values = {kv.key: kv.value for kv in st.values}
                        if predicate(st, values):
                            found[:] = [st, values]
                            return True
            return False
        assert wait_until(check, timeout), f'no diagnostics for {name_part!r} matched'
        return found[0], found[1]


OK, WARN, ERROR = 0, 1, 2


def level(st) -> int:
    return st.level[0] if isinstance(st.level, (bytes, bytearray)) else int(st.level)


# --- points -----------------------------------------------------------------------------------

def test_points_exact_values_4_layers_and_scan_info(ros, driver, closing):
    node, port = driver(**RAW)
    clouds = collect(ros, node, PointCloud2, 'points')
    infos = collect(ros, node, LuxScanInfo, 'scan_info')
    sensor = connected_sensor(port, closing)
    pts = points([(3, 0, 0, 0, 1000, 150),            # straight ahead, top layer, 10 m
                  (0, 1, S.POINT_FLAG_GROUND | 0x40, 2880, 2000, 30),   # 90° left, reserved bit
                  (1, 2, S.POINT_FLAG_DIRT, -1440, 550, 400),
                  (2, 0, 0, 1600, 12345, 1)])
    sensor.send(scan_msg(pts, 7, mounting_yaw_ticks=320, mounting_x_cm=150, mounting_z_cm=-20))
    msg = clouds.wait_for(1)[0]
    assert msg.header.frame_id == 'laser' and msg.width == 4 and msg.height == 1
    assert [(f.name, f.offset) for f in msg.fields] == [
        ('x', 0), ('y', 4), ('z', 8), ('horizontal_angle', 12), ('echo_width', 16),
        ('layer', 20), ('echo', 21), ('flags', 22)]
    assert msg.point_step == 24 and not msg.is_bigendian and msg.is_dense
    cloud = from_pointcloud2(msg)
    xyz, h = expected_xyz(pts)
    np.testing.assert_allclose(np.stack([cloud['x'], cloud['y'], cloud['z']], 1), xyz,
                               atol=1e-4)
    assert cloud['x'][0] == pytest.approx(10 * math.cos(math.radians(1.2)), abs=1e-5)
    assert cloud['z'][0] == pytest.approx(10 * math.sin(math.radians(1.2)), abs=1e-5)
    assert cloud['y'][1] == pytest.approx(20 * math.cos(math.radians(1.2)), abs=1e-4)
    np.testing.assert_allclose(cloud['horizontal_angle'], h, atol=1e-6)
    assert list(cloud['layer']) == [3, 0, 1, 2] and list(cloud['echo']) == [0, 1, 2, 0]
    assert list(cloud['flags']) == [0, S.POINT_FLAG_GROUND, S.POINT_FLAG_DIRT, 0]  # 0x40 masked
    np.testing.assert_allclose(cloud['echo_width'], [1.5, 0.3, 4.0, 0.01], rtol=1e-6)

    info = infos.wait_for(1)[0]
    assert info.scan_number == 7 and info.device_id == 3 and info.scan_points == 4
    assert info.published_points == 4 and not info.eight_layer
    assert info.angle_ticks_per_rotation == 11520
    assert info.start_angle == pytest.approx(math.radians(50))
    assert info.end_angle == pytest.approx(math.radians(-60))
    assert info.mounting_yaw == pytest.approx(math.radians(10))
    assert (info.mounting_x, info.mounting_z) == pytest.approx((1.5, -0.2))
    assert 'motor_on' in info.scanner_status_names and 'laser_on' in info.scanner_status_names
    assert info.scan_duration == pytest.approx(0.08, abs=1e-6)
    assert info.mirror_side == 0 and info.scan_start_ntp == unix_ns_to_ntp64(SENSOR_NS)
    assert stamp_to_ns(info.header.stamp) == stamp_to_ns(msg.header.stamp)


def test_points_8_layers_two_mirror_sides_merged_with_tilt(ros, driver, closing):
    node, port = driver(**{**RAW, 'layers': 8})
    clouds = collect(ros, node, PointCloud2, 'points')
    infos = collect(ros, node, LuxScanInfo, 'scan_info')
    sensor = connected_sensor(port, closing)
    front = points([(0, 0, 0, 0, 1000, 10), (3, 0, 0, 1000, 2000, 10)])
    rear = points([(0, 0, 0, 0, 1000, 10), (2, 0, 0, -500, 3000, 10)])
    sensor.send(scan_msg(front, 20, mirror=0) + scan_msg(rear, 21, mirror=1))
    msg = clouds.wait_for(1)[0]
    cloud = from_pointcloud2(msg)
    assert msg.width == 4
    assert list(cloud['layer']) == [0, 3, 4, 6]                 # rear side: layer + 4
    tilt = S.DEFAULT_8_LAYER_BEAM_TILT_RAD
    xyz_f, _ = expected_xyz(front, eight_layer=True, beam_tilt_rad=tilt)
    scan_r = S.LuxScan(0, 0, 0, 0, 0, 11520, 0, 0, flags=S.SCAN_FLAG_MIRROR_SIDE, points=rear)
    xyz_r, _ = G.scan_xyz(scan_r, eight_layer=True, beam_tilt_rad=tilt)
    np.testing.assert_allclose(np.stack([cloud['x'], cloud['y'], cloud['z']], 1),
                               np.vstack([xyz_f, xyz_r]), atol=1e-4)
    # at h = 0 the front side looks 1.6° down, the rear side 1.6° up
    assert math.degrees(math.atan2(cloud['z'][0], cloud['x'][0])) == pytest.approx(-2.8, abs=1e-3)
    assert math.degrees(math.atan2(cloud['z'][2], cloud['x'][2])) == pytest.approx(0.4, abs=1e-3)
    got = infos.wait_for(2)
    assert [i.mirror_side for i in got] == [0, 1] and all(i.eight_layer for i in got)
    assert got[0].beam_tilt == pytest.approx(tilt)


def test_filters_and_first_echo(ros, driver, closing):
    node_a, port_a = driver('filtered', **RAW, drop_ground=True, drop_dirt=True, drop_clutter=True)
    node_b, port_b = driver('first_echo', **RAW, first_echo_only=True)
    a = collect(ros, node_a, PointCloud2, 'points')
    b = collect(ros, node_b, PointCloud2, 'points')
    info_a = collect(ros, node_a, LuxScanInfo, 'scan_info')
    pts = points([(0, 0, 0, 0, 1000, 10), (0, 1, S.POINT_FLAG_GROUND, 0, 1100, 10),
                  (1, 0, S.POINT_FLAG_DIRT, 8, 1200, 10), (1, 2, S.POINT_FLAG_CLUTTER, 8, 300, 10),
                  (2, 1, S.POINT_FLAG_TRANSPARENT, 16, 900, 10), (3, 0, 0x50, 16, 1500, 10)])
    for port in (port_a, port_b):
        sensor = connected_sensor(port, closing)
        sensor.send(scan_msg(pts, 1))
    kept = from_pointcloud2(a.wait_for(1)[0])
    assert list(kept['layer']) == [0, 2, 3] and list(kept['flags']) == [0, 1, 0]
    assert info_a.wait_for(1)[0].published_points == 3
    first = from_pointcloud2(b.wait_for(1)[0])
    assert list(first['echo']) == [0, 0, 0] and list(first['layer']) == [0, 1, 3]


def test_time_policy_sensor_and_receive(ros, driver, closing):
    node_s, port_s = driver('sensor_time', **RAW, stamp_source='sensor')
    node_r, port_r = driver('receive_time', **RAW)
    s_info = collect(ros, node_s, LuxScanInfo, 'scan_info')
    r_info = collect(ros, node_r, LuxScanInfo, 'scan_info')
    diag = Diag(ros)
    sensors = {}
    for port in (port_s, port_r):
        sensors[port] = RawSensor(port)
        closing.append(sensors[port])
        sensors[port].wait_client()
        sensors[port].send(scan_msg(points([(0, 0, 0, 0, 100, 1)]), 1))
    before = time.time_ns()
    got = s_info.wait_for(1)[0]
    assert stamp_to_ns(got.header.stamp) == pytest.approx(SENSOR_NS, abs=1)   # scan start
    assert got.sensor_time_offset == pytest.approx((SENSOR_NS - before) / 1e9, abs=30)
    recv = r_info.wait_for(1)[0]
    assert abs(stamp_to_ns(recv.header.stamp) - time.time_ns()) < 30e9
    # an unset sensor clock (seconds since power-up): sensor policy falls back to receive time;
    # the clock's step back is taken at its third time, 0.5 s after the first by its times
    # and its receive times (the first two: invalid header times)
    for k in (2, 3, 4):
        if k > 2:
            time.sleep(0.3)
        sensors[port_s].send(scan_msg(points([(0, 0, 0, 0, 100, 1)]), k,
                                      ntp=(141 << 32) + k * (1 << 30)))
    unset = s_info.wait_for(4)[1:]
    for msg in unset:
        assert abs(stamp_to_ns(msg.header.stamp) - time.time_ns()) < 30e9
    assert unset[0].scan_start_sensor_time == pytest.approx(141.5)
    _, values = diag.wait(f'link tcp 127.0.0.1:{port_s}',
                          lambda st, v: v.get('stamp_fallbacks') == '1'
                          and v.get('invalid_header_times') == '2')
    assert values['sensor_clock'].startswith('unset') and values['stamp_source'] == 'sensor'
    assert float(values['time_offset_s']) < -1e9


# --- emulator: 4 and 8 layers, objects, vehicle state, warnings ------------------------------

def test_emulator_4_layers_every_data_type(ros, driver, closing):
    node, port = driver(**FAST)
    clouds = collect(ros, node, PointCloud2, 'points', 50)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 50)
    objects = collect(ros, node, LuxObjectList, 'objects', 50)
    markers = collect(ros, node, MarkerArray, 'objects/markers', 50)
    vehicle = collect(ros, node, LuxVehicleState, 'vehicle_state', 50)
    twist = collect(ros, node, TwistStamped, 'vehicle_state/twist', 50)
    diag = Diag(ros)
    scene = LuxScene(layers=4, seed=3, warning_period_s=0.4)
    closing.append(LuxServer(scene, port=port).start())
    got = clouds.wait_for(6, timeout=15)
    info = infos.wait_for(6, timeout=15)
    for msg in got[2:]:
        c = from_pointcloud2(msg)
        assert msg.width > 500 and set(np.unique(c['layer'])) <= {0, 1, 2, 3}
        assert np.all(np.abs(c['y']) < 9.3) and np.all(c['x'] > -6) and np.all(c['x'] < 71)
        assert np.all(c['echo'] < 3) and np.all(c['flags'] < 16)
    by_number = {i.scan_number: i for i in info}
    assert all(not i.eight_layer for i in info)
    assert by_number and all(i.published_points == i.scan_points for i in info)
    lst = objects.wait_for(5, timeout=15)[-1]
    assert len(lst.objects) >= 2
    cls = {o.classification_name for o in lst.objects}
    assert cls & {'car', 'pedestrian', 'bike', 'bicycle', 'unclassified'}
    car = [o for o in lst.objects if o.classification == 5]
    if car:
        assert car[0].box_size_x == pytest.approx(4.5, abs=0.01)
        assert car[0].box_size_y == pytest.approx(1.8, abs=0.01)
    assert all(len(o.contour) >= 1 for o in lst.objects)
    m = markers.wait_for(5, timeout=15)[-1]
    assert {mk.ns for mk in m.markers if mk.action == Marker.ADD} >= {'boxes', 'contours',
                                                                        'labels'}
    vs = vehicle.wait_for(3)[-1]
    assert vs.valid and vs.time_difference == pytest.approx(0.08)
    assert vs.header.frame_id == 'base_link'
    tw = twist.wait_for(3)[-1]
    assert tw.twist.linear.x == 0.0
    st, values = diag.wait('sensor warnings', lambda st, v: level(st) == WARN)
    assert set(values) & {'W-Sync', 'W-high_temperature', 'W-ETHdata'}
    st, values = diag.wait('scan (0x2202)', lambda st, v: int(v['packets']) >= 5)
    assert values['decode_errors'] == '0' and float(values['rate_hz']) > 0
    # 'unknown' = no data message yet (a status between the DeviceType reply and the first
    # scan); once data flowed the clock must read 'set'
    st, values = diag.wait('link tcp', lambda st, v: v.get('layers') == '4 (from DeviceType)'
                           and v.get('sensor_clock') != 'unknown')
    assert values['connected'] == 'true' and values['sensor_clock'] == 'set'
    assert values['point_builder'] == 'compiled kernel'      # installed by the build


def test_emulator_8_layers_detected_from_device_type(ros, driver, closing):
    node, port = driver(**FAST)
    clouds = collect(ros, node, PointCloud2, 'points', 50)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 50)
    closing.append(LuxServer(LuxScene(layers=8, seed=4), port=port).start())
    info = infos.wait_for(4, timeout=15, where=lambda i: i.eight_layer)
    assert {i.mirror_side for i in info} == {0, 1}
    assert info[0].beam_tilt == pytest.approx(S.DEFAULT_8_LAYER_BEAM_TILT_RAD, abs=1e-4)
    msgs = clouds.wait_for(3, timeout=15)
    layers = set()
    for msg in msgs[1:]:
        layers |= set(np.unique(from_pointcloud2(msg)['layer']).tolist())
    assert layers == set(range(8))
    # a merged cloud holds the points of two consecutive scans
    counts = {i.scan_number: i.scan_points for i in infos.messages}
    widths = {m.width for m in msgs[1:]}
    pairs = {counts[n] + counts[n + 1] for n in counts if n + 1 in counts}
    assert widths & pairs


# --- objects and markers from exact bytes -------------------------------------------------------

def object_list_msg(specs) -> bytes:
    """specs: (id, class, center xy, size xy, yaw, abs velocity xy or None, contour) in m, rad,
    m/s; the record takes the spec's cm, deg, cm/s."""
    o = O.make_objects(len(specs))
    contours = []
    for i, (oid, cls, c, size, yaw, vel, contour) in enumerate(specs):
        o['id'][i], o['classification'][i], o['age'][i] = oid, cls, 10
        o['box_center_x'][i], o['box_center_y'][i] = np.multiply(c, 100)
        o['reference_x'][i], o['reference_y'][i] = np.multiply(c, 100)
        o['box_size_x'][i], o['box_size_y'][i] = np.multiply(size, 100)
        o['box_orientation'][i] = math.degrees(yaw)
        if vel is None:
            o['abs_velocity_valid'][i] = False
        else:
            o['abs_velocity_x'][i], o['abs_velocity_y'][i] = np.multiply(vel, 100)
        o['rel_velocity_valid'][i] = False
        contours.append(np.asarray(contour, float) * 100)
    lst = O.LuxObjectList(unix_ns_to_ntp64(SENSOR_NS), o, contours)
    return encode_message(registry.OBJECTS, O.encode_objects(lst, single_point_as_ffff=True))


def test_objects_and_markers_cleared_when_objects_vanish(ros, driver, closing):
    node, port = driver(**RAW)
    objects = collect(ros, node, LuxObjectList, 'objects')
    markers = collect(ros, node, MarkerArray, 'objects/markers')
    sensor = connected_sensor(port, closing)
    sensor.send(object_list_msg([
        (5, 5, (10.0, -2.0), (4.5, 1.8), math.radians(30.25), (3.0, -1.5),
         [(8.0, -1.0), (9.0, -3.0), (11.0, -3.0)]),
        (9, 12, (4.0, 3.0), (1.2, 0.6), 0.0, None, [(3.5, 2.75)])]))
    lst = objects.wait_for(1)[0]
    a, b = lst.objects
    assert (a.id, a.classification_name, b.classification_name) == (5, 'car', 'bicycle')
    assert a.box_orientation == pytest.approx(math.radians(30.25), abs=1e-6)
    assert (a.box_center_x, a.box_size_x, a.box_size_y) == pytest.approx((10.0, 4.5, 1.8))
    assert a.absolute_velocity_valid and a.absolute_velocity_x == pytest.approx(3.0)
    assert not b.absolute_velocity_valid and math.isnan(b.absolute_velocity_x)
    assert not a.relative_velocity_valid and math.isnan(a.relative_velocity_y)
    assert [(p.x, p.y) for p in b.contour] == [(3.5, 2.75)]           # 0xFFFF = one point
    assert len(a.contour) == 3 and lst.header.frame_id == 'laser'
    first = markers.wait_for(1)[0].markers
    shown = {(m.ns, m.id) for m in first if m.action == Marker.ADD}
    assert shown == {('boxes', 5), ('contours', 5), ('labels', 5), ('velocities', 5),
                     ('boxes', 9), ('contours', 9), ('labels', 9)}
    box = [m for m in first if (m.ns, m.id) == ('boxes', 5)][0]
    assert box.pose.orientation.z == pytest.approx(math.sin(math.radians(30.25) / 2), abs=1e-6)
    assert [m.text for m in first if m.ns == 'labels'] == ['5 car', '9 bicycle']
    # object 9 vanishes, object 5 loses its velocity
    sensor.send(object_list_msg([(5, 5, (11.0, -2.0), (4.5, 1.8), 0.5, None, [(9.0, -1.0)])]))
    second = markers.wait_for(2)[1].markers
    deleted = {(m.ns, m.id) for m in second if m.action == Marker.DELETE}
    assert deleted == {('boxes', 9), ('contours', 9), ('labels', 9), ('velocities', 5)}
    assert {(m.ns, m.id) for m in second if m.action == Marker.ADD} == {
        ('boxes', 5), ('contours', 5), ('labels', 5)}
    sensor.send(object_list_msg([]))
    third = markers.wait_for(3)[2].markers
    assert all(m.action == Marker.DELETE for m in third) and len(third) == 3
    assert len(objects.wait_for(3)[2].objects) == 0


def vehicle_msg(flags=0, velocity=0.0, yaw_rate=0.0) -> bytes:
    vs = V.LuxVehicleState(unix_ns_to_ntp64(SENSOR_NS), 42, flags, velocity, 0.1, 0.01, 12.0,
                           -3.0, 0.5, 40, 0.1, 0.0, 0.002, yaw_rate)
    return encode_message(registry.VEHICLE_STATE, V.encode_vehicle_state(vs))


def test_vehicle_state_valid_and_invalid(ros, driver, closing):
    node, port = driver(**RAW)
    states = collect(ros, node, LuxVehicleState, 'vehicle_state')
    twist = collect(ros, node, TwistStamped, 'vehicle_state/twist')
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    sensor.send(vehicle_msg(0, 12.34, 0.25))
    sensor.send(vehicle_msg(0x0800, 5.0))          # no CAN data: invalid
    sensor.send(vehicle_msg(0x0100, 7.5, -0.1))    # steering wheel angle stale: still valid
    got = states.wait_for(3)
    assert [s.valid for s in got] == [True, False, True]
    assert got[1].error_names == ['no_can_data'] and got[1].error_flags == 0x0800
    assert got[2].error_names == ['steering_wheel_angle_stale']
    assert got[0].longitudinal_velocity == pytest.approx(12.34)
    assert (got[0].x, got[0].y, got[0].course_angle) == pytest.approx((12.0, -3.0, 0.5))
    assert got[0].yaw_rate == pytest.approx(0.25)
    tw = twist.wait_for(2)
    assert [t.twist.linear.x for t in tw] == pytest.approx([12.34, 7.5])
    assert [t.twist.angular.z for t in tw] == pytest.approx([0.25, -0.1])
    time.sleep(0.3)
    assert len(twist.messages) == 2                # the invalid state was not used
    _, values = diag.wait('vehicle state (0x2805)', lambda st, v: v.get('invalid') == '1')
    assert values['last_invalid_flags'] == 'no_can_data'


def test_errors_and_warnings_on_diagnostics(ros, driver, closing):
    node, port = driver(**RAW, errors_hold=30.0)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    ew = E.LuxErrorsWarnings(0x0002 | 0x0200, 0x0040, 0x0080, 0x0020 | 0x0400)
    sensor.send(encode_message(registry.ERRORS_WARNINGS, E.encode_errors(ew)))
    st, values = diag.wait('sensor errors', lambda st, v: level(st) == ERROR)
    assert values['E-Motor_1'] == 'motor fault'
    assert values['E-Temp'] == 'APD over temperature'
    assert values['E-Timeout_1'] == 'data processing timeout'
    assert values['error_register_1'] == '0x0202' and 'E-Motor_1' in st.message
    st, values = diag.wait('sensor warnings', lambda st, v: level(st) == WARN)
    assert set(values) >= {'W-Sync', 'W-Command', 'W-CalcFrequency'}
    assert values['W-Sync'] == 'synchronisation error'
    # only warnings now: the error status clears
    sensor.send(encode_message(registry.ERRORS_WARNINGS,
                               E.encode_errors(E.errors_from_names('W-low_temperature'))))
    st, values = diag.wait('sensor errors', lambda st, v: level(st) == OK
                           and v.get('seen.E-Motor_1') == '1')
    st, values = diag.wait('sensor warnings', lambda st, v: 'W-low_temperature' in v)
    assert level(st) == WARN and 'W-Sync' not in values


# --- commands ---------------------------------------------------------------------------------

def test_every_command_against_the_emulator(ros, driver, closing):
    node, port = driver(**FAST)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 200)
    server = LuxServer(LuxScene(layers=4, seed=5), port=port).start()
    closing.append(server)
    infos.wait_for(2, timeout=15)
    ns = '/ibeo_lux/'
    st = call(ros, LuxGetStatus, ns + 'get_status')
    assert st.success and st.firmware_version == '2.7.5' and st.fpga_version == '9.6.04'
    assert st.temperature == pytest.approx(38.0, abs=2.5) and st.serial_number == '1240-01234'
    assert 'motor_on' in st.scanner_status_names and st.fpga_date == '2012-09-21 15:30'

    by_name = call(ros, LuxGetParameter, ns + 'get_parameter',
                   LuxGetParameter.Request(name='scan_frequency'))
    assert by_name.success and by_name.index == 0x1102 and by_name.value == 12.5
    assert by_name.unit == 'Hz' and by_name.raw == 3200
    ip = call(ros, LuxGetParameter, ns + 'get_parameter', LuxGetParameter.Request(index=0x1000))
    assert ip.success and ip.value_text == '127.0.0.1' and math.isnan(ip.value)
    angle = call(ros, LuxGetParameter, ns + 'get_parameter',
                 LuxGetParameter.Request(name='End angle'))
    assert angle.value == pytest.approx(math.radians(-60)) and angle.unit == 'rad'
    unknown = call(ros, LuxGetParameter, ns + 'get_parameter',
                   LuxGetParameter.Request(name='warp drive'))
    assert not unknown.success and 'unknown parameter' in unknown.message
    refused = call(ros, LuxGetParameter, ns + 'get_parameter',
                   LuxGetParameter.Request(index=0x7777))
    assert not refused.success and '0x8011' in refused.message

    ok = call(ros, LuxSetParameter, ns + 'set_parameter',
              LuxSetParameter.Request(name='SensorMounting_X', value=1.25))
    assert ok.success and ok.raw == 125, ok.message
    mx = call(ros, LuxGetParameter, ns + 'get_parameter', LuxGetParameter.Request(index=0x1200))
    assert mx.value == pytest.approx(1.25) and mx.unit == 'm' and mx.raw == 125
    # SI in, the table's 1/32 deg on the wire: -6 deg = -192 counts
    yaw = call(ros, LuxSetParameter, ns + 'set_parameter',
               LuxSetParameter.Request(name='SensorMounting_Yaw', value=math.radians(-6)))
    assert yaw.success and yaw.raw == -192 & 0xFFFF and server.scene.params[0x1203] == yaw.raw
    bad = call(ros, LuxSetParameter, ns + 'set_parameter',
               LuxSetParameter.Request(name='Scan frequency', value=20.0))   # not 12.5/25/50
    assert not bad.success and 'reply 0x8010' in bad.message
    ip_set = call(ros, LuxSetParameter, ns + 'set_parameter',
                  LuxSetParameter.Request(name='Standard gateway', value_text='127.0.0.2'))
    assert ip_set.success and ip_set.raw == 0x7F000002
    raw_set = call(ros, LuxSetParameter, ns + 'set_parameter',
                   LuxSetParameter.Request(index=0x1013, value=40.0, raw=True))
    assert raw_set.success and server.scene.params[0x1013] == 40
    assert not call(ros, LuxSetParameter, ns + 'set_parameter',
                    LuxSetParameter.Request(name='Start angle', value=float('nan'))).success

    for name in ('save_config', 'reset_defaults'):
        res = call(ros, LuxCommand, ns + name)
        assert res.success and res.reply_id == res.command_id, (name, res.message)
    assert server.scene.saved_params[0x1200] == 125 and server.scene.params[0x1200] == 150

    stop = call(ros, LuxCommand, ns + 'stop_measure')
    assert stop.success and stop.reply_id == C.STOP_MEASURE
    time.sleep(0.3)
    n = len(infos.messages)
    time.sleep(0.5)
    assert len(infos.messages) == n                  # the stream really stopped
    start = call(ros, LuxCommand, ns + 'start_measure')
    assert start.success
    infos.wait_for(n + 2, timeout=10)

    target = 1_800_000_000_000_000_000
    ntp = call(ros, LuxSetNtpTime, ns + 'set_ntp_time',
               LuxSetNtpTime.Request(time=Time(sec=1_800_000_000)))
    assert ntp.success and ntp.seconds == 1_800_000_000 + 2_208_988_800 and ntp.fraction == 0
    infos.wait_for(1, timeout=10, where=lambda i: i.scan_start_sensor_time
                   >= (target // 10**9 + 2_208_988_800))          # the sensor clock moved
    host = call(ros, LuxSetNtpTime, ns + 'set_ntp_time', LuxSetNtpTime.Request(use_host_time=True))
    assert host.success and abs(host.seconds - (time.time() + 2_208_988_800)) < 30

    reset = call(ros, LuxCommand, ns + 'reset')
    assert reset.success and reset.reply_id == 0 and 'does not reply' in reset.message
    assert wait_until(lambda: server.commands_received >= 14, 5)


def test_command_timeout_and_not_connected(ros, driver, closing):
    node, port = driver(**RAW, command_timeout=0.5)
    res = call(ros, LuxGetStatus, '/ibeo_lux/get_status')
    assert not res.success and 'not connected' in res.message
    sensor = connected_sensor(port, closing)   # connects, never answers
    assert wait_until(lambda: node.client.connected, 5)
    t0 = time.monotonic()
    res = call(ros, LuxGetStatus, '/ibeo_lux/get_status')
    assert not res.success and 'no reply within 0.5 s' in res.message
    assert 0.4 < time.monotonic() - t0 < 5
    res = call(ros, LuxCommand, '/ibeo_lux/stop_measure')
    assert not res.success and res.reply_id == 0
    assert wait_until(lambda: len(sensor.received) >= 2 * 28, 2)   # both commands went out
    # a sensor that answers with the failure bit
    sensor.answer = lambda c: C.failure(c.command_id)
    res = call(ros, LuxCommand, '/ibeo_lux/start_measure')
    assert not res.success and res.reply_id == 0x8020 and 'refused' in res.message


def test_set_parameter_values_without_a_wire_form_are_refused(ros, driver, closing):
    """A SetParameter request whose value has no 32-bit wire form (a raw ±Inf, a raw value
    that is no whole number or beyond 32 bits, which was cut to one; a float32 parameter NaN or
    beyond the float32 range) is answered as refused, nothing is sent, and the node goes on
    serving commands (the service callback raised OverflowError: the node died)."""
    node, port = driver(**RAW, command_timeout=1.0)
    sensor = RawSensor(port, answer=lambda c: C.ack(c.command_id))
    closing.append(sensor)
    sensor.wait_client()
    assert wait_until(lambda: node.client.connected, 5)
    for name, value, raw, why in (('scan frequency', math.inf, True, 'not a 32-bit wire value'),
                                  ('scan frequency', -math.inf, True, 'not a 32-bit wire value'),
                                  ('SteerRatioPoly0', 1e40, False, 'outside the float32 range'),
                                  ('SteerRatioPoly1', -1e300, False,
                                   'outside the float32 range'),
                                  ('scan frequency', 5e9, True, 'not a 32-bit wire value'),
                                  ('scan frequency', 2.0**32, True, 'not a 32-bit wire value'),
                                  ('scan frequency', -2.0**31 - 1, True,
                                   'not a 32-bit wire value'),
                                  ('scan frequency', 1.7, True, 'not a 32-bit wire value'),
                                  ('SteerRatioPoly0', math.nan, False, 'not a finite number'),
                                  ('SteerRatioPoly0', -math.inf, False, 'not a finite number')):
        res = call(ros, LuxSetParameter, '/ibeo_lux/set_parameter',
                   LuxSetParameter.Request(name=name, value=value, raw=raw))
        assert res is not None, f'{name} = {value}: no answer'
        assert not res.success and why in res.message, res.message
    assert node.session.commands_sent == 0
    res = call(ros, LuxSetParameter, '/ibeo_lux/set_parameter',
               LuxSetParameter.Request(name='SteerRatioPoly0', value=1.5))
    assert res.success and res.raw == 0x3FC00000, res.message
    res = call(ros, LuxSetParameter, '/ibeo_lux/set_parameter',      # the signed limit
               LuxSetParameter.Request(name='SteerRatioPoly0', value=-2.0**31, raw=True))
    assert res.success and res.raw == 0x80000000, res.message


def probe_answers(case: str):
    """A sensor's answers to the layer probe: DeviceType answered with another parameter's
    value (an IP address), or 8 layers and BeamTilt answered with a float32 NaN."""
    def answer(c):
        if c.command_id != C.GET_PARAMETER:
            return C.ack(c.command_id)
        if c.parameter_index == C.DEVICE_TYPE:
            return (C.parameter_reply(0x1000, 0x0A000001) if case == 'device type'
                    else C.parameter_reply(C.DEVICE_TYPE, 0x18))
        return C.parameter_reply(0x120C, 0x7FC00000)           # SteerRatioPoly0 = NaN
    return answer


@pytest.mark.parametrize('case', ['device type', 'beam tilt'])
def test_layer_probe_takes_only_the_asked_parameters_value(ros, driver, closing, case):
    """The probe on connect believes only a reply for the parameter it asked: another one's
    value (an IP address for DeviceType: the probe's thread died with a traceback; a float32
    NaN for BeamTilt: every 8-layer point was NaN) leaves 4 layers, resp. the configured beam
    tilt, in force; the scans after it are published with finite points."""
    node, port = driver(**{**RAW, 'layers': 0})
    clouds = collect(ros, node, PointCloud2, 'points', 20)
    sensor = RawSensor(port, answer=probe_answers(case))
    closing.append(sensor)
    sensor.wait_client()

    def probing():
        return any(t.name == 'ibeo-lux-connect' for t in threading.enumerate())
    assert wait_until(lambda: node.session.commands_sent >= 1 and not probing(), 10)
    assert node.session.detected_eight is (case == 'beam tilt')
    assert node.session.beam_tilt == pytest.approx(S.DEFAULT_8_LAYER_BEAM_TILT_RAD)
    pts = points([(0, 0, 0, 0, 1000, 50), (3, 0, 0, 800, 1500, 50)])
    sensor.send(scan_msg(pts, 1, mirror=0) + scan_msg(pts, 2, mirror=1))
    cloud = clouds.wait_for(1)[0]
    xyz = from_pointcloud2(cloud)
    assert cloud.is_dense and np.isfinite(xyz['z']).all()
    assert len(xyz) == (4 if case == 'beam tilt' else 2)


# --- link: reconnect, bad input, vanishing mid-message ------------------------------------------

def test_reconnects_when_the_sensor_restarts(ros, driver, closing):
    """The sensor goes away (link ERROR on /diagnostics) and comes back: scans are published
    again and the link is OK, connected for the second time."""
    node, port = driver(**FAST, reconnect_within=0.3)
    assert node.client.reconnect_within == 0.3          # the parameter reaches the client
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 200)
    diag = Diag(ros)
    server = LuxServer(LuxScene(seed=6), port=port).start()
    infos.wait_for(2, timeout=15)
    server.stop()
    diag.wait('link tcp', lambda st, v: v['connected'] == 'false'
              and level(st) == ERROR)
    n = len(infos.messages)
    server2 = LuxServer(LuxScene(seed=7), port=port).start()
    closing.append(server2)
    infos.wait_for(n + 2, timeout=15)
    st, values = diag.wait('link tcp', lambda st, v: v['connects'] == '2'
                           and v['connected'] == 'true' and level(st) == OK)
    assert int(values['failures']) >= 1 and values['last_failure']


def test_a_sensor_that_hangs_up_at_once_is_not_logged_on_every_attempt(closing, tmp_path):
    """A peer that accepts and closes at once (a sensor whose service crashes, a forwarder
    without its target) is connected about twice a second for as long as it does that: the
    installed node logs the connect, the lost link and the failed Start Measure rate-limited
    (with the count held back), not on every attempt (six lines a second before), and exits 0."""
    listener = socket.create_server(('127.0.0.1', 0))
    closing.append(listener)
    accepts = []

    def hang_up():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.close()
            accepts.append(conn)
    threading.Thread(target=hang_up, daemon=True).start()
    log = tmp_path / 'ibeo_lux.log'
    with open(log, 'w') as out:
        proc = subprocess.Popen([str(executable('ibeo_lux')), *ros_args(parameters={
            'port': listener.getsockname()[1], 'layers': 4})], env=LOCAL_ENV, stdout=out,
            stderr=subprocess.STDOUT)
        try:
            assert wait_until(lambda: len(accepts) >= 16, 30)
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(10) == 0
    text = log.read_text()
    assert 'Traceback' not in text and 'more like it' in text
    for line in ('connected to 127.0.0.1', 'lost: peer closed the connection', 'start measure:'):
        assert 1 <= text.count(line) < len(accepts) / 2, (line, len(accepts), text)


def test_a_link_back_soon_after_its_loss_is_logged(closing, tmp_path):
    """A sensor that drops the link 0.3 s after the connect and takes the next one: the
    reconnect is logged although it comes within the connect line's rate limit, so the log's
    last word on the link is not that it was lost."""
    listener = socket.create_server(('127.0.0.1', 0))
    closing.append(listener)
    accepted = []

    def serve():
        for hold in (0.3, 30.0):
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)
            time.sleep(hold)
            conn.close()
    threading.Thread(target=serve, daemon=True).start()
    log = tmp_path / 'ibeo_lux.log'
    with open(log, 'w') as out:
        proc = subprocess.Popen([str(executable('ibeo_lux')), *ros_args(parameters={
            'port': listener.getsockname()[1], 'layers': 4, 'start_measure_on_connect': False,
            'data_timeout': 0.0})], env=LOCAL_ENV, stdout=out, stderr=subprocess.STDOUT)
        try:
            assert wait_until(lambda: len(accepted) == 2, 15)
            assert wait_until(lambda: '(connection 2)' in log.read_text(), 5), log.read_text()
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(10) == 0
    link = [line for line in log.read_text().splitlines()
            if 'connected to' in line or ' lost: ' in line]
    assert len(link) == 3 and link[1].endswith('lost: peer closed the connection; '
                                               'reconnecting'), link
    assert link[2].endswith('(connection 2)'), link


def test_a_sensor_told_to_stop_measuring_is_not_taken_for_a_silent_one(ros, driver, closing):
    """Stop Measure silences a LUX on purpose: the data timeout waits until Start Measure
    (a reconnect would send Start Measure again on its own), then watches again."""
    node, port = driver(**FAST, data_timeout=0.5)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 200)
    server = LuxServer(LuxScene(layers=4, seed=5), port=port).start()
    closing.append(server)
    infos.wait_for(2, timeout=15)
    link = (node.client.connects, node.client.data_timeouts)    # scans flow on this link
    assert call(ros, LuxCommand, '/ibeo_lux/stop_measure').success
    time.sleep(2.0)                                   # four data timeouts of silence
    assert not server.scene.measuring
    assert (node.client.connects, node.client.data_timeouts) == link
    assert call(ros, LuxCommand, '/ibeo_lux/start_measure').success
    assert node.client.data_timeout == 0.5
    n = len(infos.messages)
    infos.wait_for(n + 2, timeout=10)


def test_bad_input_is_counted_and_no_complete_message_is_lost(ros, driver, closing):
    node, port = driver(**RAW)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 100)
    states = collect(ros, node, LuxVehicleState, 'vehicle_state', 100)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    good = [numbered_scan(k) for k in range(12)]
    # a scan whose payload holds the magic word and a plausible-looking header
    trap = points([(0, 0, 0, 0, 0, 0)] * 6)
    payload = MAGIC_BYTES + struct.pack('>IIBBH', 0, 40, 0, 0, 0x2202) + b'\x00' * 8
    scan_bytes = bytearray(S.encode_scan(S.LuxScan(100, 0, 0, 0, 0, 11520, 0, 0, points=trap)))
    scan_bytes[44:44 + len(payload)] = payload
    magic_inside = encode_message(registry.SCAN, bytes(scan_bytes))
    too_many = bytearray(S.encode_scan(S.LuxScan(200, 0, 0, 0, 0, 11520, 0, 0,
                                                 points=points([(0, 0, 0, 0, 1, 1)] * 3))))
    struct.pack_into('<H', too_many, 28, 50)          # 50 points announced, 3 present
    truncated_objects = O.encode_objects(O.LuxObjectList(0, O.make_objects(2),
                                                         [np.zeros((2, 2))] * 2))[:-30]
    unknown = encode_message(0x2209, b'\x01' * 300) + encode_message(0x7100, b'\x02' * 20)
    absurd = MAGIC_BYTES + struct.pack('>IIBBHQ', 0, 0x7FFFFFF0, 0, 0, 0x7100, 0)
    absurd_scan = MAGIC_BYTES + struct.pack('>IIBBHQ', 0, 0x40000000, 0, 0, 0x2202, 0)
    stream = (b'garbage!' + good[0] + MAGIC_BYTES[:3] + good[1] + magic_inside + good[2]
              + encode_message(registry.SCAN, bytes(too_many)) + good[3]
              + encode_message(registry.OBJECTS, truncated_objects) + good[4]
              + unknown + good[5] + absurd + good[6] + absurd_scan + good[7]
              + vehicle_msg() + b'\xAF\xFE' + good[8])
    for k in range(0, len(stream), 97):                # dribbled in odd-sized reads
        sensor.send(stream[k:k + 97])
    # the sensor vanishes in the middle of a message and comes back
    sensor.send(good[9][:30])
    time.sleep(0.2)
    sensor.drop()
    sensor.wait_client()
    sensor.send(good[10] + good[11])
    got = infos.wait_for(12, timeout=10)
    numbers = sorted(i.scan_number for i in got)
    assert numbers == sorted(list(range(9)) + [10, 11, 100])     # 9: cut by the drop
    assert states.wait_for(1)[0].scan_number == 42
    _, link = diag.wait('link tcp', lambda st, v: v.get('connects') == '2'
                        and int(v.get('skipped_messages', 0)) == 2)
    assert link['skipped.0x2209 ecu_scan_2209'] == '1'
    assert link['skipped.0x7100 sensor_info'] == '1'
    assert int(link['errors.bad_magic']) >= 3                   # garbage, stray prefixes
    assert int(link.get('errors.oversized', 0)) + int(link.get('errors.bad_value', 0)) >= 2
    _, scan = diag.wait('scan (0x2202)', lambda st, v: v.get('errors.truncated') == '1')
    assert 'point' in scan['last_error'] or scan['last_error']
    _, objs = diag.wait('objects (0x2221)', lambda st, v: v.get('errors.truncated') == '1')


def test_every_unknown_data_type_does_not_grow_the_link_status_without_bound(ros, driver,
                                                                            closing):
    """A sensor sending each of the 36,864 data types of the Ibeo range no decoder knows (a
    bare header each, 0.9 MB) made 36,864 ``skipped.<type>`` values on every /diagnostics
    message: the first types are named, the rest counted together; the scan after them is
    published and every skipped message counted."""
    node, port = driver(**RAW)
    infos = collect(ros, node, LuxScanInfo, 'scan_info')
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    unknown = [t for t in range(0x1000, 0xA000) if not handled(t)]
    sensor.send(b''.join(encode_message(t, b'') for t in unknown) + numbered_scan(7))
    assert infos.wait_for(1, timeout=20)[0].scan_number == 7
    _, link = diag.wait('link tcp', lambda st, v: v.get('skipped_messages') == str(len(unknown)),
                        timeout=20)
    named = [k for k in link if k.startswith('skipped.')]
    assert len(named) <= 65 and link['skipped.other types'] == str(len(unknown) - 64)


# --- real captures and the installed executable ---------------------------------------------------

def test_real_ldmrs_capture_replayed_end_to_end(ros, driver, closing):
    path = shared_path('samples', 'ibeo', 'raulexposito-ldmrs', '20120921-200644_record.hexlog')
    messages = load_messages(path)
    scans = sum(1 for m in messages if int.from_bytes(m[14:16], 'big') == registry.SCAN)
    node, port = driver(**FAST)
    clouds = collect(ros, node, PointCloud2, 'points', 200)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 200)
    diag = Diag(ros)
    closing.append(LuxServer(port=port, replay=messages, replay_speed=0).start())
    got = infos.wait_for(scans, timeout=20)
    assert len(got) == scans == 20
    assert all(i.scan_points == 740 and i.published_points == 740 for i in got)
    assert all(i.start_angle == pytest.approx(math.radians(50)) for i in got)
    assert {i.mirror_side for i in got} == {0, 1}
    msgs = clouds.wait_for(scans, timeout=20)
    c = from_pointcloud2(msgs[-1])
    assert c.dtype.names == CLOUD_DTYPE.names and set(np.unique(c['layer'])) == {0, 1, 2, 3}
    assert set(np.unique(c['flags'])) <= {0, 1, 2, 4, 8}            # reserved bits masked
    _, values = diag.wait('link tcp', lambda st, v: v.get('sensor_clock', '').startswith('unset'))
    assert float(values['time_offset_s']) < -1e9
    _, values = diag.wait('errors and warnings (0x2030)', lambda st, v: v['packets'] == '80')
    assert values['decode_errors'] == '0'


def test_installed_executable_with_params_file(ros, closing):
    port = free_tcp_port()
    infos = ros.collect(LuxScanInfo, '/ibeo/scan_info', 100, matched=False)
    with NodeProcess('ibeo_lux', params_file=config_file('ibeo.yaml'),
                     parameters={'host': '127.0.0.1', 'port': port, 'min_backoff': 0.05,
                                 'max_backoff': 0.25}, quiet=True) as proc:
        closing.append(LuxServer(LuxScene(seed=8), port=port).start())
        assert wait_until(lambda: len(infos.messages) >= 3, timeout=30, interval=0.05)
        assert proc.running()
    assert proc.proc.returncode == 0


def test_cut_object_list_does_not_swallow_the_scans_after_it(ros, driver, closing):
    # issue #10 defect 5: an 0x2221 declares 544 bytes but only 200 arrive before the next
    # message; the three complete scans inside the declared window (and the one across its
    # end) must all be published, the cut message counted
    node, port = driver(**RAW)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 100)
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    counts = [13, 12, 12, 12, 12]
    full = O.encode_objects(O.LuxObjectList(0, O.make_objects(5),
                                            [np.full((k, 2), 0.5) for k in counts]))
    assert len(full) == 544
    scans = [scan_msg(points([(0, 0, 0, 0, 1000 + n, 50)] * 2), n) for n in (1, 2, 3, 4)]
    assert sum(map(len, scans[:3])) < 344 < sum(map(len, scans))
    cut = encode_message(registry.OBJECTS, full)[:24 + 200]
    stream = cut + b''.join(scans)
    for k in range(0, len(stream), 61):                # in odd-sized reads
        sensor.send(stream[k:k + 61])
    got = infos.wait_for(4, timeout=10)
    assert sorted(i.scan_number for i in got) == [1, 2, 3, 4]
    _, link = diag.wait('link tcp', lambda st, v: v.get('errors.truncated') == '1')
    assert int(link['garbage_bytes']) == 24 + 200 - 1 + 1   # the cut message, nothing more


def test_object_list_over_the_caps_is_truncated_counted_and_published(ros, driver, closing):
    # issue #10 defect 7: caps as parameters; beyond them the list is cut, counted, warned
    node, port = driver(**RAW, max_objects=5, max_contour_points=2)
    objs = collect(ros, node, LuxObjectList, 'objects')
    marks = collect(ros, node, MarkerArray, 'objects/markers')
    diag = Diag(ros)
    sensor = connected_sensor(port, closing)
    o = O.make_objects(8)
    o['id'] = np.arange(10, 18)
    lst = O.LuxObjectList(0, o, [np.full((3, 2), 1.0)] * 8)
    sensor.send(encode_message(registry.OBJECTS, O.encode_objects(lst)))
    (msg,) = objs.wait_for(1)
    assert [ob.id for ob in msg.objects] == [10, 11, 12, 13, 14]
    assert all(len(ob.contour) == 2 for ob in msg.objects)
    (arr,) = marks.wait_for(1)
    assert sorted({m.id for m in arr.markers}) == [10, 11, 12, 13, 14]
    _, v = diag.wait('objects (0x2221)', lambda st, v: v.get('dropped_objects') == '3')
    assert v['truncated_lists'] == '1' and v['dropped_contour_points'] == '5'
