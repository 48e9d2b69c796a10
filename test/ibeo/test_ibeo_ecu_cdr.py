"""ibeo/ros/ecu_cdr.py: the CDR that the node publishes and ``ibeo_idc to-bag`` writes reads
back with rclpy and with rosbags to the same values (every field, floats bit for bit), is as
long as rclpy's serialisation of the decoded message and differs from it in padding only — on
a whole generated recording and on the records that take the other branches (no fix, unknown
covariance, 0x2204 scanner infos, scanner-frame clouds, NTP times past 2^63); object lists read
back with every number, name, contour point and property of the record."""
import dataclasses
import math

import numpy as np
import pytest
from ibeo_readback import readback

from ros_sim_bridge.ibeo.codec import gps_imu as gi
from ros_sim_bridge.ibeo.codec import objects_ecu as oe
from ros_sim_bridge.ibeo.codec import odometry as od
from ros_sim_bridge.ibeo.codec import scan_ecu as se
from ros_sim_bridge.ibeo.codec import typed_values as tv
from ros_sim_bridge.ibeo.codec import vehicle_state_ecu as ve
from ros_sim_bridge.ibeo.codec.header import IbeoHeader
from ros_sim_bridge.ibeo.ecu_recording import write_recording
from ros_sim_bridge.ibeo.idc import IdcReader
from ros_sim_bridge.ibeo.ros import ecu_conversions as ec
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage

from cdr_fillers import both_fillers  # noqa: E402,F401  (the fixture)

NTP = (3_900_000_000 << 32) | 0x8000_0000          # > 2^63: the top bit set


def check(header, record, conv) -> set:
    """Converts ``record`` and reads every message back (:func:`ibeo_readback.readback`).
    Returns the topics that came as CDR, but the clouds (tested in test/ros)."""
    templated = set()
    for topic, msg in conv.convert(header, record):
        readback(msg)
        if isinstance(msg, CdrMessage) and msg.type_name != 'sensor_msgs/msg/PointCloud2':
            templated.add(topic)
    return templated


def test_every_message_of_a_recording(tmp_path):
    path = tmp_path / 'drive.idc'
    write_recording(path, seconds=1.2, scanners=3, points=500)
    conv = ec.IbeoToRos(namespace='/i')
    templated = set()
    with IdcReader(path) as r:
        for e in r.entries:
            templated |= check(r.header(e), r.decode(e), conv)
    assert templated == {'/i/ecu/scan_info', '/i/vehicle_state/odometry', '/i/gps/fix',
                         '/i/gps_imu/fix', '/i/imu/data', '/i/odometry', '/i/odometry/twist',
                         '/i/ecu/objects', '/i/objects/markers', '/i/vehicle_state/fix',
                         '/i/vehicle_state/twist', '/i/image/compressed'}


def header(data_type: int) -> IbeoHeader:
    return IbeoHeader(data_type=data_type, size=0, device_id=7, ntp=NTP)


@pytest.mark.parametrize('record', [
    gi.PositionWgs84(latitude=math.nan, longitude=0.1, altitude=3.0, latitude_sigma=1.0,
                     longitude_sigma=1.0, altitude_sigma=1.0),            # no fix
    gi.PositionWgs84(latitude=2.0, longitude=0.1, altitude=3.0, source_type=4),  # |lat| > 90°
    gi.PositionWgs84(latitude=0.9, longitude=0.1, altitude=3.0, latitude_sigma=0.0,
                     longitude_sigma=2.0, altitude_sigma=1.0, source_type=7,
                     timestamp_ntp=NTP),                                   # unknown covariance
    gi.GpsImu(latitude=0.9, longitude=0.2, altitude=5.0, ins_quality=3, roll_angle=0.1,
              yaw_angle=-2.0, yaw_rate=0.3, latitude_sigma=0.5, longitude_sigma=0.5,
              altitude_sigma=0.7, roll_rate_sigma=0.01, measurement_time_ecu_ntp=NTP),
    od.EcuOdometry(steering_angle=-0.2, velocity=13.5, yaw_rate=0.05, clock_id=3, clock_name=5,
                   measurement_time_ecu_ntp=NTP, received_time_ntp=NTP + 1),
    ve.EcuVehicleState2807(timestamp_ntp=NTP, distance_x=-12345, distance_y=678,
                           course_angle=3.0, longitudinal_velocity=-1.25, yaw_rate=0.5),
    ve.EcuVehicleState2808(timestamp_ntp=NTP, latitude_deg=48.1, longitude_deg=11.6,
                           altitude=519.0, sigma_x=0.4, sigma_y=0.3,
                           longitudinal_velocity=7.5, yaw_rate=-0.2),
    ve.EcuVehicleState2808(timestamp_ntp=NTP, latitude_deg=95.0, longitude_deg=11.6),
], ids=['nan-no-fix', 'lat-out-of-range', 'unknown-covariance', 'gps-imu', 'odometry',
        'vehicle-state', 'vehicle-state-2808', 'vehicle-state-2808-no-fix'])
def test_other_branches(record):
    kind = getattr(record, 'DATA_TYPE', 0x2604)
    assert check(header(kind), record, ec.IbeoToRos())


def scan(cls, infos_dtype, flags: int) -> se.EcuScan:
    infos = np.zeros(2, infos_dtype)
    infos['device_id'] = [3, 9]
    infos['scanner_type'] = 6
    infos['start_angle'], infos['end_angle'] = 0.8, -0.8
    infos['mounting_yaw'], infos['mounting_x'] = [0.5, -0.5], [3.5, -1.0]
    if 'resolutions' in infos.dtype.names:
        infos['start_ntp'], infos['device_end_ntp'] = NTP, NTP + 5
        infos['frequency'], infos['beam_tilt'], infos['scan_flags'] = 12.5, 0.01, 0x400
        infos['resolutions']['start_angle'] = np.linspace(-0.8, 0.8, 8)
        infos['resolutions']['resolution'][:, :3] = 0.002
    pts = np.zeros(4, se.POINT_DTYPE)
    pts['device_id'] = [3, 9, 3, 9]
    pts['x'] = [1.0, 2.0, 3.0, 4.0]
    return cls(start_ntp=NTP, end_offset_us=40_000, flags=flags, scan_number=65535,
               scanners=infos, points=pts)


@pytest.mark.parametrize('cls,infos,flags', [
    (se.EcuScan, se.INFO_2205_DTYPE, se.SCAN_FLAG_VEHICLE_COORDINATES),
    (se.EcuScan, se.INFO_2205_DTYPE, 0),                            # a cloud per scanner
    (se.EcuScan2204, se.INFO_2204_DTYPE, se.SCAN_FLAG_VEHICLE_COORDINATES),
], ids=['2205-vehicle', '2205-scanner-frames', '2204'])
def test_scan_info_of_each_layout(cls, infos, flags):
    record = scan(cls, infos, flags)
    assert check(header(record.DATA_TYPE), record, ec.IbeoToRos()) == {'/ecu/scan_info'}
    info = readback(dict(ec.IbeoToRos().convert(header(record.DATA_TYPE), record))[
        '/ecu/scan_info'])
    assert (info.data_type, info.device_id, info.scan_start_ntp, info.scan_end_offset_us,
            info.flags, info.scan_number, info.scan_points) == (
        record.DATA_TYPE, 7, NTP, 40_000, flags, 65535, 4)
    for got, row in zip(info.scanners, record.scanners, strict=True):
        assert (got.device_id, got.scanner_type) == (row['device_id'], 6)
        assert (got.mounting_yaw, got.mounting_x) == pytest.approx(
            (row['mounting_yaw'], row['mounting_x']))
        if 'resolutions' in record.scanners.dtype.names:
            assert (got.start_ntp, got.device_end_ntp, got.scan_flags) == (NTP, NTP + 5, 0x400)
            assert (got.frequency, got.beam_tilt) == pytest.approx((12.5, 0.01))
            assert list(got.resolution_start_angles) == pytest.approx(
                np.linspace(-0.8, 0.8, 8))
            assert list(got.resolutions) == pytest.approx([0.002] * 3 + [0.0] * 5)
    alone = dataclasses.replace(record, scanners=record.scanners[:0])   # no scanner info
    assert check(header(record.DATA_TYPE), alone, ec.IbeoToRos()) == {'/ecu/scan_info'}


def object_list(kind: str, n: int):
    """An object list of each ECU type with contours of 0 (a plain empty list), 1 and more
    points, a NaN box, ids past 2^31, every class, and (0x2281) properties of each value
    type."""
    rng = np.random.default_rng(n)
    o = oe.make_objects(n, int(kind, 16))
    for name in o.dtype.names:
        if o[name].dtype.kind == 'f':
            o[name] = rng.normal(0, 10, n)
        elif o[name].dtype.kind == 'u':
            o[name] = rng.integers(0, np.iinfo(o[name].dtype).max, n, o[name].dtype, endpoint=True)
    o['classification'] = np.arange(n) % 14
    if n:
        o[o.dtype.names[-1]][0] = np.nan if o.dtype[o.dtype.names[-1]].kind == 'f' else 0
        for name in ('box_size_x', 'course_angle', 'box_center_x'):
            if name in o.dtype.names:
                o[name][0] = np.nan
    contours = [rng.normal(0, 5, (i % 4, 2)).astype(np.float32) if i % 4 else []   # as built
                for i in range(n)]                                             # by a user
    if kind == '2225':
        return oe.EcuObjectList2225(NTP, o, contours)
    if kind == '2280':
        return oe.EcuObjectList2280(NTP, o, contours)
    props = [[(300 + i, tv.UINT32, 32), (7, tv.DOUBLE, 2.5), (8, tv.STRING, 'text ü'),
              (9, tv.VOID, None)][:i % 5] for i in range(n)]
    return oe.EcuObjectList2281(NTP, o, contours, props, object_list_id=3, device_type=2,
                                device_interface_version=513, list_flags=0x10)


#: message field ← the record field it comes from when the layout has no field of its name
_RENAMED = {'classification_quality': 'classification_certainty',
            'classification_age': 'classification_age_ms'}


def same_number(got, want) -> bool:
    """An object field as sent: float32 bit for bit (NaN as NaN), integers equal."""
    if isinstance(got, float):
        w = np.float32(want)
        return bool(np.isnan(w)) and math.isnan(got) or np.float32(got) == w
    return got == int(want)


def expect_objects(msg, lst, device_id: int) -> None:
    """The decoded IbeoObjectList ``msg`` holds every object of the record ``lst``: each
    number field of the record's layout as sent (renamed, cast to the message's type), NaN /
    0 for the fields the layout lacks, 0x2281 box centres from the reference point
    (``box_centers``), class names, contour points (z = 0) and properties."""
    o = lst.objects
    assert (msg.data_type, msg.device_id, msg.mid_scan_ntp) == (lst.DATA_TYPE, device_id,
                                                                lst.mid_scan_ntp)
    assert len(msg.objects) == len(o)
    centers = lst.box_centers() if len(o) else None
    for i, obj in enumerate(msg.objects):
        for name, kind in ec.OBJECT_NUMBERS.items():
            source = name if name in o.dtype.names else _RENAMED.get(name)
            got = getattr(obj, name)
            if name in ('box_center_x', 'box_center_y'):
                want = centers[i, 0 if name.endswith('x') else 1]
            elif source in o.dtype.names:
                want = o[source][i]
            else:
                want = math.nan if kind == 'float' else 0
            assert same_number(got, want), (i, name, got, want)
        assert obj.classification_name == oe.classification_name(int(o['classification'][i]))
        want_contour = np.asarray(lst.contours[i], np.float32).reshape(-1, 2).tolist()
        got_contour = [(p.x, p.y) for p in obj.contour]
        assert len(got_contour) == len(want_contour) and all(
            same_number(a, b) for gp, wp in zip(got_contour, want_contour)
            for a, b in zip(gp, wp)), i
        assert all(p.z == 0.0 for p in obj.contour)
        props = list(lst.properties[i]) if len(lst.properties) else []
        assert [(p.key, p.type_id) for p in obj.properties] == [(k, t) for k, t, _ in props]
        for p, (_, t, v) in zip(obj.properties, props):
            if t == tv.STRING:
                assert p.text == v and math.isnan(p.value)
            else:
                assert same_number(p.value, math.nan if v is None else v) and p.text == ''


def expect_markers(markers, lst) -> None:
    """Boxes and labels of the objects with a finite centre, contours of those with a finite
    contour point, ids the tracking ids (31 bits), labels 'id class'."""
    o = lst.objects
    by_ns: dict = {}
    for m in markers.markers:
        by_ns.setdefault(m.ns, []).append(m)
    centers = lst.box_centers() if len(o) else np.zeros((0, 2))
    ids = (o['id'].astype(np.int64) & 0x7FFFFFFF).tolist()
    placed = [i for i in range(len(o)) if np.isfinite(centers[i]).all()]
    assert [m.id for m in by_ns.get('ecu_objects', [])] == [ids[i] for i in placed]
    assert [v for m in by_ns.get('ecu_objects', []) for v in (m.pose.position.x,
                                                                m.pose.position.y)] == \
        pytest.approx([float(v) for i in placed for v in centers[i]])
    assert [m.text for m in by_ns.get('ecu_labels', [])] == [
        f"{int(o['id'][i])} {oe.classification_name(int(o['classification'][i]))}"
        for i in placed]
    outlined = [i for i in range(len(o)) if np.isfinite(
        np.asarray(lst.contours[i], np.float64).reshape(-1, 2)).all(axis=1).any()]
    assert [m.id for m in by_ns.get('ecu_contours', [])] == [ids[i] for i in outlined]
    assert all(m.header.frame_id == 'base_link' for m in markers.markers)


@pytest.mark.parametrize('kind', ['2225', '2280', '2281'])
@pytest.mark.parametrize('n', [0, 1, 9])
def test_object_lists_and_markers(kind, n, both_fillers):
    lst = object_list(kind, n)
    conv = ec.IbeoToRos()
    for _ in range(2):                                   # the second time from cached templates
        assert check(header(lst.DATA_TYPE), lst, conv) == {'/ecu/objects', '/objects/markers'}
        got = {t: readback(m) for t, m in conv.convert(header(lst.DATA_TYPE), lst)}
        expect_objects(got['/ecu/objects'], lst, 7)
        expect_markers(got['/objects/markers'], lst)


@pytest.mark.parametrize('kind', ['2225', '2280', '2281'])
def test_contour_points_not_finite_stay_in_the_object_but_are_not_drawn(kind):
    """A contour point with a NaN or ±Inf coordinate stays in the object (data as sent) and is
    left out of the object's ``ecu_contours`` line strip (RViz refuses a marker holding one); a
    contour without a finite point gets no strip.  Both converters give the same."""
    lst = object_list(kind, 8)                   # contours of 0, 1, 2, 3, 0, 1, 2, 3 points
    contours = [np.array(c, np.float32).reshape(-1, 2) for c in lst.contours]
    contours[1][0, 1] = np.nan                   # its only point: no strip
    contours[2][0, 0] = np.inf                   # one of two drawn (doubled: a segment)
    contours[3][1, 1], contours[3][2, 0] = np.nan, -np.inf      # one of three drawn
    lst = dataclasses.replace(lst, contours=contours)
    conv = ec.IbeoToRos()
    assert check(header(lst.DATA_TYPE), lst, conv) == {'/ecu/objects', '/objects/markers'}
    got = {t: readback(m) for t, m in conv.convert(header(lst.DATA_TYPE), lst)}
    objs = got['/ecu/objects'].objects
    assert [len(o.contour) for o in objs] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert math.isnan(objs[1].contour[0].y) and math.isinf(objs[2].contour[0].x)
    strips = {m.id: [(p.x, p.y) for p in m.points] for m in got['/objects/markers'].markers
              if m.ns == 'ecu_contours'}
    ids = [o.id & 0x7FFFFFFF for o in objs]
    want = {2: [tuple(contours[2][1])] * 2, 3: [tuple(contours[3][0])] * 2,
            5: [tuple(contours[5][0])] * 2, 6: [tuple(p) for p in contours[6]],
            7: [tuple(p) for p in contours[7]]}
    assert strips == {ids[i]: [(float(x), float(y)) for x, y in pts]
                      for i, pts in want.items()}


@pytest.mark.parametrize('kind', ['2225', '2280', '2281'])
def test_object_lists_converted_together_equal_one_at_a_time(kind, both_fillers):
    """``convert_many`` makes the object lists of one type at once (one table, one buffer,
    the elements of a template filled together across lists): each list's messages equal the
    messages of it alone (byte for byte), with lists of 0, 1 and 9 objects, their own stamps and
    devices, and one whose record time is invalid among them."""
    lists = [object_list(kind, n) for n in (9, 0, 1, 9, 3)]
    lists[2] = dataclasses.replace(lists[2], mid_scan_ntp=0)              # unset: header time
    headers = [IbeoHeader(data_type=lst.DATA_TYPE, size=0, device_id=3 + k,
                          ntp=NTP + (k << 30)) for k, lst in enumerate(lists)]
    fast, slow = ec.IbeoToRos(), ec.IbeoToRos()
    fast.convert = None                         # not one at a time: an error if it falls back
    made = fast.convert_many(list(zip(headers, lists)))
    assert [c.invalid_time is not None for c in made] == [False, False, True, False, False]
    for h, lst, c in zip(headers, lists, made):
        assert c.error is None and c.refused == []
        want = slow.convert(h, lst)
        assert [t for t, _ in c.pairs] == [t for t, _ in want] == ['/ecu/objects',
                                                                  '/objects/markers']
        for (_, a), (_, b) in zip(c.pairs, want):
            assert a.data == b.data
            readback(a)
        expect_objects(readback(c.pairs[0][1]), lst, h.device_id)


def test_navsat_constants_are_sensor_msgs():
    # the ECU conversions name NavSatStatus / NavSatFix constants without importing
    # sensor_msgs (start-up of to-bag)
    from sensor_msgs.msg import NavSatFix, NavSatStatus

    from ros_sim_bridge.ibeo.ros import ecu_cdr, ecu_conversions as conv
    for name in ('STATUS_NO_FIX', 'STATUS_FIX', 'STATUS_SBAS_FIX', 'STATUS_GBAS_FIX'):
        assert getattr(conv, name) == getattr(NavSatStatus, name), name
    for name in ('UNKNOWN', 'APPROXIMATED', 'DIAGONAL_KNOWN', 'KNOWN'):
        assert getattr(conv, f'COVARIANCE_TYPE_{name}') == \
            getattr(NavSatFix, f'COVARIANCE_TYPE_{name}'), name
    assert ecu_cdr.SERVICE_GPS == NavSatStatus.SERVICE_GPS


@pytest.mark.parametrize('cls,infos', [(se.EcuScan, se.INFO_2205_DTYPE),
                                       (se.EcuScan2204, se.INFO_2204_DTYPE)])
def test_scan_info_scanners_by_their_bytes_as_by_their_values(cls, infos, monkeypatch):
    # the scanner slots filled by one byte gather from the infos (_scanner_bytes) give the
    # bytes of the slots filled value by value (the path without a plan)
    from ros_sim_bridge.ibeo.ros import ecu_cdr
    record = scan(cls, infos, se.SCAN_FLAG_VEHICLE_COORDINATES)
    assert record.scanners['mounting_yaw'].any()
    gathered = bytes(ecu_cdr.EcuCdr().scan_info(record, (5, 7), 'base_link', 3).data)
    monkeypatch.setattr(ecu_cdr.EcuCdr, '_scan_info_plans', {})
    monkeypatch.setattr(ecu_cdr, '_scanner_bytes', lambda *args: None)
    assert bytes(ecu_cdr.EcuCdr().scan_info(record, (5, 7), 'base_link', 3).data) == gathered


def test_object_marker_rows_boxes_and_label_positions():
    """object_marker_rows: box centres at half the box height, sizes (5 cm where not given),
    yaw, and label positions 0.4 m above the box top at the centre plus 0.0 (a -0.0 centre
    labelled at 0.0), bit for bit as the arithmetic of those numbers gives them; an object
    without a finite centre gets no box and no label."""
    from ros_sim_bridge.ibeo.ros.ecu_cdr import object_marker_rows
    geo = np.array([[1.25, -0.0, 4.0, 2.0, 0.5],
                    [-0.0, 3.5, np.nan, 1.0, np.nan],
                    [np.nan, 1.0, 2.0, 2.0, 0.0],
                    [1e300, -7.125, 0.25, np.inf, -1.0]])
    r = object_marker_rows([5, 2 ** 31 + 6, 7, 8], geo, [5, 3, 0, 12], box_height=1.5)
    assert r['placed'].tolist() == [0, 1, 3]
    assert r['ids'].tolist() == [5, 6, 7, 8]
    given = np.where(np.isfinite(geo), geo, [0.0, 0.0, 0.05, 0.05, 0.0])[[0, 1, 3]]
    centres = np.column_stack([given[:, 0], given[:, 1], np.full(3, 0.75)])
    assert r['centers'].tobytes() == np.ascontiguousarray(centres).tobytes()
    sizes = np.column_stack([given[:, 2], given[:, 3], np.full(3, 1.5)])
    assert r['sizes'].tobytes() == np.ascontiguousarray(sizes).tobytes()
    assert r['yaw'].tobytes() == given[:, 4].tobytes()
    want = centres + [0.0, 0.0, 0.75 + 0.4]
    assert r['label_positions'].tobytes() == want.tobytes()
    assert np.signbit(r['centers'][0, 1]) and not np.signbit(r['label_positions'][0, 1])
    assert r['box_rgba'][:, 3].tolist() == [0.5] * 3 and r['contour_rgba'][:, 3].tolist() == [1.0] * 4
