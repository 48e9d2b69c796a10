"""ibeo/ros/ecu_conversions.py: what the ROS messages mean (units, frames, conventions),
checked against hand-computed values, not only that they survive a bag."""
import math

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from sensor_msgs.msg import NavSatFix, NavSatStatus

from ros_sim_bridge.core import frames
from ros_sim_bridge.core.ntp import NTP_UNIX_OFFSET
from ros_sim_bridge.ibeo.codec import gps_imu as gi
from ros_sim_bridge.ibeo.codec import image as im
from ros_sim_bridge.ibeo.codec import objects_ecu as oe
from ros_sim_bridge.ibeo.codec import scan_ecu as se
from ros_sim_bridge.ibeo.codec import system_monitoring as sm
from ros_sim_bridge.ibeo.codec import vehicle_state_ecu as ve
from ros_sim_bridge.ibeo.codec.header import IbeoHeader
from ros_sim_bridge.ibeo.ros import ecu_conversions as ec
from ros_sim_bridge.ros.pointcloud import from_pointcloud2

from ibeo_readback import one, readback

STAMP = (1_700_000_000, 5)


def via(record, topic: str, device_id: int = 1):
    """The decoded message ``topic`` of ``record`` through the converter (its CDR read back,
    stamped STAMP)."""
    kind = getattr(record, 'DATA_TYPE', 0x2604)
    return one(ec.IbeoToRos(), IbeoHeader(kind, 0, device_id, 5 << 32), record, STAMP)[topic]


def yaw_of(q) -> float:
    return float(frames.quat_to_euler(np.array([q.w, q.x, q.y, q.z]))[2])


def test_time_policy_unset_clock_gives_time_since_power_up():
    assert ec.ntp_to_ns((NTP_UNIX_OFFSET + 10) << 32 | (1 << 31)) == 10_500_000_000
    assert ec.ntp_to_ns(141 << 32) == 141_000_000_000          # the LD-MRS's unset clock


def test_gps_fix_degrees_status_and_covariance():
    g = gi.PositionWgs84(latitude=math.radians(52.5), longitude=math.radians(-13.25),
                         altitude=40.0, latitude_sigma=2.0, longitude_sigma=1.0,
                         altitude_sigma=3.0, source_type=8)
    fix = via(g, '/gps/fix')
    assert fix.header.frame_id == 'gps'
    assert (fix.latitude, fix.longitude, fix.altitude) == pytest.approx((52.5, -13.25, 40.0))
    assert fix.status.status == NavSatStatus.STATUS_GBAS_FIX          # RTK integer
    assert list(fix.position_covariance) == [1.0, 0, 0, 0, 4.0, 0, 0, 0, 9.0]   # E, N, U
    assert fix.position_covariance_type == NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    unknown = via(gi.PositionWgs84(), '/gps/fix')
    assert unknown.position_covariance_type == NavSatFix.COVARIANCE_TYPE_UNKNOWN


def test_gps_imu_orientation_is_enu_and_rates_flu():
    g = gi.GpsImu(yaw_angle=0.0, roll_angle=0.1, pitch_angle=-0.05, yaw_rate=0.2,
                  roll_rate=0.01, longitudinal_acceleration=1.5, cross_acceleration=-0.5,
                  vertical_acceleration=9.81, yaw_angle_sigma=0.1)
    imu = via(g, '/imu/data')
    assert imu.header.frame_id == 'imu'
    assert yaw_of(imu.orientation) == pytest.approx(math.pi / 2)      # heading north = ENU +y
    west = via(gi.GpsImu(yaw_angle=math.pi / 2), '/imu/data')
    assert abs(yaw_of(west.orientation)) == pytest.approx(math.pi)     # π/2 = west (§33)
    assert (imu.angular_velocity.z, imu.angular_velocity.x) == (0.2, 0.01)
    assert (imu.linear_acceleration.x, imu.linear_acceleration.y,
            imu.linear_acceleration.z) == (1.5, -0.5, 9.81)
    assert imu.orientation_covariance[8] == pytest.approx(0.01)


def test_objects_2281_fields_missing_in_the_type_are_nan_and_centre_from_reference():
    o = oe.make_objects(1, oe.OBJECTS_2281)
    o['id'] = 70000
    o['reference_point_location'] = 3                                 # rear/right
    o['reference_point_x'], o['reference_point_y'] = 10.0, 2.0
    o['box_size_x'], o['box_size_y'] = 4.0, 2.0
    o['classification'], o['classification_quality'], o['classification_age_ms'] = 12, 55, 900
    lst = oe.EcuObjectList2281(1, o, [np.zeros((0, 2), np.float32)], [[(300, 4, 32)]])
    msg = via(lst, '/ecu/objects', device_id=5)
    assert (msg.header.frame_id, msg.device_id) == ('base_link', 5)
    (obj,) = msg.objects
    assert (obj.id, obj.classification_name, obj.classification_quality,
            obj.classification_age) == (70000, 'underdrivable', 55, 900)
    assert (obj.box_center_x, obj.box_center_y) == (12.0, 3.0)       # 2 m ahead, 1 m left
    assert math.isnan(obj.bounding_box_center_x) and math.isnan(obj.box_center_sigma_x)
    assert [(p.key, p.type_id, p.value) for p in obj.properties] == [(300, 4, 32.0)]
    markers = via(lst, '/objects/markers').markers
    assert markers[0].pose.position.x == 12.0 and markers[0].scale.x == 4.0


def test_scan_frames_follow_the_coordinate_flag():
    pts = np.zeros(3, se.POINT_DTYPE)
    pts['device_id'] = [1, 2, 1]
    conv = ec.IbeoToRos(namespace='/e')
    out = conv.convert(IbeoHeader(0x2205, 0, 1, 5 << 32),
                       se.EcuScan(5 << 32, 0, se.SCAN_FLAG_VEHICLE_COORDINATES, 1,
                                  se.make_scanners(2), pts))
    topics = [t for t, _ in out]
    assert topics == ['/e/points', '/e/ecu/scan_info', '/tf_static']
    cloud = readback(out[0][1])
    assert cloud.header.frame_id == 'base_link' and cloud.width == 3
    # the same mounting again: no second /tf_static
    again = conv.convert(IbeoHeader(0x2205, 0, 1, 6 << 32),
                         se.EcuScan(6 << 32, 0, 0, 2, se.make_scanners(2), pts))
    assert [t for t, _ in again] == ['/e/points', '/e/points', '/e/ecu/scan_info']
    clouds = [readback(m) for _, m in again[:2]]
    assert [m.header.frame_id for m in clouds] == ['ibeo_scanner_1', 'ibeo_scanner_2']
    assert from_pointcloud2(clouds[0])['device_id'].tolist() == [1, 1]


def test_scanner_transforms_only_for_new_or_moved_scanners_and_each_bad_mounting_named():
    # /tf_static carries a scanner when first seen or moved; a mounting that is not finite is
    # named (refused) on every scan that has it and left out; back to a mounting already
    # sent: nothing new
    conv = ec.IbeoToRos(cdr=True)
    pts = np.zeros(1, se.POINT_DTYPE)

    def scan(yaw2, x1=1.0):
        infos = se.make_scanners(2)
        infos['device_id'] = [1, 2]
        infos['mounting_x'] = [x1, 2.0]
        infos['mounting_yaw'] = [0.0, yaw2]
        out = conv.convert(IbeoHeader(0x2205, 0, 1, 5 << 32), se.EcuScan(
            5 << 32, 0, se.SCAN_FLAG_VEHICLE_COORDINATES, 1, infos, pts))
        sent = [readback(m) for t, m in out if t == '/tf_static']
        return ([[(t.child_frame_id, round(t.transform.translation.x, 3)) for t in m.transforms]
                 for m in sent], [e.field for e in conv.refused])

    both = [('ibeo_scanner_1', 1.0), ('ibeo_scanner_2', 2.0)]
    assert scan(0.5) == ([both], [])
    assert scan(0.5) == ([], [])                            # the same: nothing
    assert scan(0.25) == ([[('ibeo_scanner_2', 2.0)]], [])  # scanner 2 turned
    assert scan(0.25) == ([], [])
    assert scan(float('nan')) == ([], ['mounting_yaw'])     # named, left out …
    assert scan(float('nan')) == ([], ['mounting_yaw'])     # … on each scan
    assert scan(0.25) == ([], [])                           # as sent before: nothing
    assert scan(0.25, x1=1.5) == ([[('ibeo_scanner_1', 1.5)]], [])


@pytest.mark.parametrize('flags', [se.SCAN_FLAG_VEHICLE_COORDINATES, 0])
def test_scan_decoded_into_its_message_converts_to_the_same_bytes(flags):
    # the node decodes an ECU scan in vehicle coordinates into the message that publishes it
    # (framer's points_out = CloudCdr.points): the converter hands that message on, the same
    # bytes as a scan decoded as usual; one in scanner coordinates is decoded as usual
    from ros_sim_bridge.ibeo.codec import framing
    from ros_sim_bridge.ibeo.codec.registry import encode_record_message
    from ros_sim_bridge.ros.pointcloud_cdr import CloudCdr
    rng = np.random.default_rng(5)
    pts = np.zeros(200, se.POINT_DTYPE)
    pts['x'], pts['y'], pts['z'] = rng.normal(0, 20, (3, 200))
    pts['x'][7] = np.nan                          # not dense
    pts['device_id'] = rng.integers(10, 13, 200)
    infos = se.make_scanners(3)
    infos['device_id'] = [10, 11, 12]
    wire = encode_record_message(se.EcuScan(5 << 32, 40_000, flags, 1, infos, pts), ntp=5 << 32)
    plain = framing.make_framer().feed(wire)[0]
    clouds = CloudCdr(se.POINT_DTYPE, 'base_link')
    into = framing.make_framer(points_out=clouds.points).feed(wire)[0]
    assert clouds.holds(into.record.points) == bool(flags)
    assert into.record.non_finite == plain.record.non_finite == 1
    conv = ec.IbeoToRos()
    want = [(t, m.data) for t, m in conv.convert(plain.parsed, plain.record, STAMP)
            if 'points' in t]
    conv.cloud_cdr = clouds
    got = [(t, m.data) for t, m in conv.convert(into.parsed, into.record, STAMP)
           if 'points' in t]
    assert got == want and len(got) == (1 if flags else 3)
    assert not clouds.holds(into.record.points)


def test_vehicle_state_odometry_units():
    s = ve.EcuVehicleState2807(distance_x=123456, distance_y=-5000, course_angle=0.5,
                               longitudinal_velocity=3.0, yaw_rate=0.1)
    odom = via(s, '/vehicle_state/odometry')
    assert (odom.header.frame_id, odom.child_frame_id) == ('odom', 'base_link')
    assert (odom.pose.pose.position.x, odom.pose.pose.position.y) == \
        pytest.approx((12.3456, -0.5))
    assert yaw_of(odom.pose.pose.orientation) == pytest.approx(0.5)
    assert (odom.twist.twist.linear.x, odom.twist.twist.angular.z) == (3.0, 0.1)


def test_image_and_status():
    jpeg = readback(ec.image(im.EcuImage(im.JPEG, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2,
                                         b'\xff\xd8'), STAMP, 'camera'))
    assert jpeg.format == 'jpeg' and bytes(jpeg.data) == b'\xff\xd8'
    assert (jpeg.header.frame_id, jpeg.header.stamp.sec) == ('camera', STAMP[0])
    gray = readback(ec.image(im.EcuImage(im.GRAY8, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2,
                                         b'abcd'), STAMP, 'camera'))
    assert (gray.encoding, gray.width, gray.height, gray.step) == ('mono8', 2, 2, 2)
    assert bytes(gray.data) == b'abcd' and not gray.is_bigendian
    assert ec.image(im.EcuImage(im.YUV422, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, b''),
                    STAMP, 'camera') is None
    st = ec.status(sm.DeviceStatus(4, 1, 1, 3, 0x80, 0))
    assert st.level == DiagnosticStatus.ERROR and 'timeout' in st.message
    assert 'device 4 (scanner)' in st.name
    assert ec.status(sm.SystemStatus(state=1)).level == DiagnosticStatus.OK
    assert ec.status(sm.TraceMessage(0x6410, 2, 'x')).level == DiagnosticStatus.WARN


@pytest.mark.parametrize('lat,lon', [(math.nan, 0.0), (0.0, math.inf), (-math.inf, 0.0),
                                     (7.0, 0.0), (0.5, 3.2)])
def test_gps_fix_no_receiver_position_is_no_fix(lat, lon):
    """A non-finite position, or latitude beyond ±90° / longitude beyond ±180° (7 rad, 3.2 rad
    here), is published as STATUS_NO_FIX without a covariance, never as a fix, its latitude,
    longitude and altitude NaN (no ±Inf, no place off the globe)."""
    g = gi.PositionWgs84(latitude=lat, longitude=lon, altitude=34.0, latitude_sigma=1.0,
                         longitude_sigma=1.0, altitude_sigma=1.0, source_type=8)
    fix = via(g, '/gps/fix')
    assert fix.status.status == NavSatStatus.STATUS_NO_FIX
    assert fix.position_covariance_type == NavSatFix.COVARIANCE_TYPE_UNKNOWN
    assert all(map(math.isnan, (fix.latitude, fix.longitude, fix.altitude)))


@pytest.mark.parametrize('alt', [math.nan, math.inf, -math.inf])
def test_gps_fix_without_a_finite_altitude_is_a_fix_of_nan_altitude(alt):
    """Latitude and longitude valid, the altitude NaN or ±Inf: still the receiver's fix (RTK
    integer: GBAS), its altitude NaN as NavSatFix.msg has it when none is available."""
    g = gi.PositionWgs84(latitude=0.9, longitude=0.2, altitude=alt, latitude_sigma=1.0,
                         longitude_sigma=1.0, altitude_sigma=1.0, source_type=8)
    fix = via(g, '/gps/fix')
    assert fix.status.status == NavSatStatus.STATUS_GBAS_FIX
    assert (fix.latitude, fix.longitude) == (math.degrees(0.9), math.degrees(0.2))
    assert math.isnan(fix.altitude)


def test_object_without_a_finite_centre_gets_no_box_or_label_at_the_origin():
    o = oe.make_objects(2, oe.OBJECTS_2280)
    o['id'] = [5, 6]
    o['box_center_x'] = [np.nan, 3.0]
    o['box_size_x'], o['box_size_y'], o['course_angle'] = [4.0, np.nan], [2.0, np.nan], np.nan
    contours = [np.array([[1.0, 1.0], [2.0, 1.0]], np.float32), np.zeros((0, 2), np.float32)]
    lst = oe.EcuObjectList2280(0, o, contours)
    markers = via(lst, '/objects/markers').markers
    by_ns = {}
    for m in markers:
        by_ns.setdefault(m.ns, []).append(m)
    assert [m.id for m in by_ns['ecu_objects']] == [6] == [m.id for m in by_ns['ecu_labels']]
    box = by_ns['ecu_objects'][0]
    assert (box.pose.position.x, box.scale.x, box.scale.y) == (3.0, 0.05, 0.05)
    assert by_ns['ecu_labels'][0].text.startswith('6 ')
    assert [m.id for m in by_ns['ecu_contours']] == [5]          # its outline is still drawn
