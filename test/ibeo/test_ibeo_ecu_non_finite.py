"""ECU records with NaN / ±Inf: no non-finite value reaches a transform, an odometry, an IMU or
a twist; the rest of the record goes out (fixes NO_FIX, IbeoOdometry as sent, every point of
a cloud, is_dense false when a point's x, y or z is not finite, such points counted as
``non_finite_points``).  Through the installed ``ibeo_ecu`` over real TCP (counted
``bad_value`` on the type's /diagnostics status) and the
installed ``ibeo_idc to-bag`` (counted in its summary as left out, apart from skipped records;
the bag read back with rosbags).

Byte vectors by the spec's tables (ECU types big-endian): 0x2205 scan §9 (24-byte header,
148-byte scanner infos, 28-byte points), 0x2806 vehicle state §15, 0x2808 §17, 0x9001 GpsImu
§33, 0x9002 odometry §34 (both with the 42-byte Timestamp block).
"""
from __future__ import annotations

import math
import struct
import subprocess

import pytest

from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus, PointCloud2
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.ibeo.codec.header import encode_message
from ros_sim_bridge.ibeo.idc import IdcWriter
from ros_sim_bridge.msg import IbeoOdometry
from ros_sim_bridge.ros.qos import LATCHED
from ros_sim_bridge.tools.launcher import NodeProcess, executable

from conftest import free_tcp_port
from test_ibeo_data_diagnostics import FAST, Diagnostics, connected, serving

NTP = 3_900_000_000 << 32
NAN, INF = float('nan'), float('inf')
GOOD_MOUNT = (0.1, 0.0, 0.0, 1.5, 0.5, 0.3)       # yaw, pitch, roll [rad], x, y, z [m]


def scan_2205(mountings, xyz, number: int = 1) -> bytes:
    """§9: scan header, one scanner info per mounting (device ids 1, 2, …), one point per
    (x, y, z) of device 1; scan flag bit 11: vehicle coordinates."""
    body = struct.pack('>QIIHHB3x', NTP, 80_000, 0x800, number, len(xyz), len(mountings))
    for dev, mount in enumerate(mountings, 1):
        body += struct.pack('>BBH4xff4QffI6f16f', dev, 6, number, -1.0, 1.0, NTP, NTP, NTP, NTP,
                            12.5, 0.0, 0, *mount, *[0.0] * 16)
    for x, y, z in xyz:
        body += struct.pack('>4fBBBxIH2x', x, y, z, 0.5, 1, 0, 0, 0, 0)
    return body


def vehicle_2806(course: float, velocity: float, yaw_rate: float) -> bytes:
    """§15 (86 bytes): distances 1/10 mm, course angle, velocity, yaw rate, …"""
    return struct.pack('>4xQiiffff4xf2xf4xfff4xffff', NTP, 10_000, -20_000, course, velocity,
                       yaw_rate, 0.0, 0.0, 1.8, 0.9, 2.7, 1.0, 1.0, 0.0, 0.0, 0.0)


def vehicle_2808(latitude: float, velocity: float, yaw_rate: float) -> bytes:
    """§17 (204 bytes): latitude/longitude [deg], altitude (4 bytes), sigmas, …, velocity,
    yaw rate at 124 / 132."""
    return struct.pack('>4xQH2xd4xd4xf4x8xf8xf4x4xf4x4xffff16x10ff4xfff4xffff', NTP, 2,
                       latitude, 13.4, 34.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0,
                       velocity, 0.1, yaw_rate, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                       1.8, 0.9, 2.7, 1.0, 1.0, 0.0, 0.0, 0.0)


def gps_imu_9001(latitude_rad: float = 0.9, roll_rate: float = 0.02,
                 roll_sigma: float = 0.1) -> bytes:
    """§33 (413 bytes): 39 doubles (latitude, …, roll angle sigma at 104, …, roll rate at 256,
    …), satellites, 5 DOPs, Timestamp, source, INS quality."""
    d = [0.1] * 39
    d[0], d[2], d[4] = latitude_rad, 0.23, 34.0             # latitude, longitude, altitude
    d[13], d[32] = roll_sigma, roll_rate
    return struct.pack('>39dB5d5QBBBB16x', *d, 9, 1.0, 1.0, 1.0, 1.0, 1.0,
                       NTP, NTP, NTP, NTP, NTP, 0, 2, 1, 3)


def odometry_9002(velocity: float) -> bytes:
    """§34 (146 bytes): 11 doubles (…, vehicle velocity at 64, acceleration, yaw rate),
    Timestamp, 16 reserved bytes."""
    return struct.pack('>11d5QBB16x', 0.01, 0.2, 0.0, 5.0, 5.0, 5.0, 5.0, 1.9, velocity, 0.3,
                       0.05, NTP, NTP, NTP, NTP, NTP, 0, 2)


#: (data type, body) in order: each bad record with a good one of its type after it
RECORDS = [
    (0x2205, scan_2205([GOOD_MOUNT, (NAN, 0.0, 0.0, 1.0, 0.0, 0.0)],
                       [(1.0, 2.0, 0.5), (3.0, 1.0, NAN), (INF, 0.0, 0.0)], 1)),
    (0x2205, scan_2205([GOOD_MOUNT], [(1.0, 2.0, 0.5)], 2)),
    (0x2806, vehicle_2806(NAN, 5.0, 0.1)),
    (0x2806, vehicle_2806(0.5, 5.0, 0.1)),
    (0x2808, vehicle_2808(INF, INF, 0.1)),
    (0x2808, vehicle_2808(52.5, 5.0, 0.1)),
    (0x9001, gps_imu_9001(latitude_rad=NAN, roll_rate=NAN)),
    (0x9001, gps_imu_9001()),
    (0x9002, odometry_9002(NAN)),
    (0x9002, odometry_9002(4.0)),
]


def test_installed_ibeo_ecu_publishes_no_non_finite_pose_transform_or_twist(ros, closing):
    port = free_tcp_port()
    diag = Diagnostics(ros)
    # a RuntimeWarning would be an exception: counted as internal_error, the message lost
    with NodeProcess('ibeo_ecu', parameters={'port': port, 'data_types': '', 'layers': 4,
                                             'start_measure_on_connect': False,
                                             'stamp_source': 'receive', **FAST},
                     namespace='/nf', env={'PYTHONWARNINGS': 'error::RuntimeWarning'},
                     quiet=True) as proc:
        sensor = serving(closing, port)
        connected(diag)
        subs = {name: ros.collect(t, topic, 20) for name, t, topic in (
            ('points', PointCloud2, '/nf/points'), ('odom', Odometry, '/nf/vehicle_state/odometry'),
            ('vfix', NavSatFix, '/nf/vehicle_state/fix'),
            ('vtwist', TwistStamped, '/nf/vehicle_state/twist'),
            ('fix', NavSatFix, '/nf/gps_imu/fix'), ('imu', Imu, '/nf/imu/data'),
            ('ibeo_odom', IbeoOdometry, '/nf/odometry'),
            ('otwist', TwistStamped, '/nf/odometry/twist'))}
        tf = ros.collect(TFMessage, '/tf_static', LATCHED)
        for data_type, body in RECORDS:
            sensor.send(encode_message(data_type, body, ntp=NTP))
        statuses = {}
        for dt, published in ((0x2205, 5), (0x2806, 1), (0x2808, 3), (0x9001, 3),
                              (0x9002, 3)):
            _, statuses[dt] = diag.wait(f'(0x{dt:04X})', lambda st, v, n=published:
                                        v.get('published') == str(n))
        assert proc.running()
    assert proc.proc.returncode == 0
    for dt, field in ((0x2205, 'mounting_yaw'), (0x2806, 'course_angle'),
                      (0x2808, 'longitudinal_velocity'), (0x9001, 'roll_rate'),
                      (0x9002, 'velocity')):
        v = statuses[dt]
        assert v.get('errors.bad_value') == '1', (dt, v)
        assert field in v['last_error'], (dt, v['last_error'])
        assert 'errors.internal_error' not in v, (dt, v)
    clouds = subs['points'].wait_for(2)
    assert [(c.width, c.is_dense) for c in clouds] == [(3, False), (1, True)]  # no point dropped
    assert statuses[0x2205]['non_finite_points'] == '2'   # z NaN, x +Inf: the decoder's count
    transforms = [t for m in tf.wait_for(1) for t in m.transforms]
    assert {t.child_frame_id for t in transforms} == {'ibeo_scanner_1'}
    assert [round(m.pose.pose.orientation.z, 4) for m in subs['odom'].wait_for(1)] == \
        [round(math.sin(0.25), 4)]                               # only the finite one
    fixes = subs['vfix'].wait_for(2)
    assert [f.status.status for f in fixes] == [NavSatStatus.STATUS_NO_FIX,
                                                NavSatStatus.STATUS_FIX]
    assert all(map(math.isnan, (fixes[0].latitude, fixes[0].longitude, fixes[0].altitude)))
    assert (fixes[1].latitude, fixes[1].longitude) == (52.5, 13.4)
    assert [m.twist.linear.x for m in subs['vtwist'].wait_for(1)] == [5.0]
    fixes = subs['fix'].wait_for(2)
    assert [f.status.status for f in fixes] == [NavSatStatus.STATUS_NO_FIX,
                                                NavSatStatus.STATUS_GBAS_FIX]
    assert [m.angular_velocity.x for m in subs['imu'].wait_for(1)] == [0.02]
    odoms = subs['ibeo_odom'].wait_for(2)
    assert math.isnan(odoms[0].velocity) and odoms[1].velocity == 4.0   # the record as sent
    assert [m.twist.linear.x for m in subs['otwist'].wait_for(1)] == [4.0]
    for name, sub in subs.items():                 # nothing more came (all published counted)
        assert len(sub.messages) == {'points': 2, 'vfix': 2, 'fix': 2, 'ibeo_odom': 2}.get(
            name, 1), name


def scan_2204(xyz) -> bytes:
    """§8: scan header (as §9's), one 40-byte scanner info (device id 1, angles, mounting),
    one point per (x, y, z); vehicle coordinates."""
    body = struct.pack('>QIIHHB3x', NTP, 80_000, 0x800, 1, len(xyz), 1)
    body += struct.pack('>BBH4xff6f', 1, 6, 1, -1.0, 1.0, *GOOD_MOUNT)
    for x, y, z in xyz:
        body += struct.pack('>4fBBBxIH2x', x, y, z, 0.5, 1, 0, 0, 0, 0)
    return body


def test_installed_ibeo_ecu_counts_non_finite_points_per_scan_type(ros, closing):
    """A 0x2204 with one point of NaN y and a 0x2205 with two of non-finite x / z: each scan
    type's status counts its own (was the node's total on each)."""
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with NodeProcess('ibeo_ecu', parameters={'port': port, 'data_types': '', 'layers': 4,
                                             'start_measure_on_connect': False,
                                             'stamp_source': 'receive', **FAST},
                     namespace='/nfs', quiet=True) as proc:
        sensor = serving(closing, port)
        connected(diag)
        sensor.send(encode_message(0x2204, scan_2204([(1.0, NAN, 0.5), (2.0, 1.0, 0.5)]),
                                   ntp=NTP)
                    + encode_message(0x2205, RECORDS[0][1], ntp=NTP))
        got = {dt: diag.wait(f'(0x{dt:04X})', lambda st, v: 'non_finite_points' in v)[1]
               for dt in (0x2204, 0x2205)}
        assert proc.running()
    assert (got[0x2204]['non_finite_points'], got[0x2205]['non_finite_points']) == ('1', '2')


def test_installed_to_bag_leaves_out_non_finite_poses_and_counts_them(tmp_path):
    from rosbags.highlevel import AnyReader
    src = tmp_path / 'bad.idc'
    with IdcWriter(src) as w:
        for k, (data_type, body) in enumerate(RECORDS):
            w.write(data_type, body, device_id=1, ntp=NTP + (k << 28))
    out = subprocess.run([str(executable('ibeo_idc')), 'to-bag', str(src), str(tmp_path / 'bag'),
                          '--no-progress'], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'Warning' not in out.stderr, out.stderr
    # the messages left out counted apart from skipped records, as what happened: a scan, a
    # 0x2808, 0x9001 and 0x9002 written without their transform, twist, IMU or twist; the
    # 0x2806's only message (its odometry) left out
    left_out = '1 message left out of 1 × {} for a NaN or infinite value ({})'
    written, alone = "the record's other messages written", 'the record has no other: not written'
    for line in (left_out.format('0x2205 ecu_scan_2205', written),
                 left_out.format('0x2806 ecu_vehicle_state_2806', alone),
                 left_out.format('0x2808 ecu_vehicle_state_2808', written),
                 left_out.format('0x9001 gps_imu', written),
                 left_out.format('0x9002 odometry', written)):
        assert line in out.stdout, out.stdout
    assert 'skipped' not in out.stdout, out.stdout
    assert 'mounting_yaw: not a finite number: no transform for scanner 2' in out.stdout
    assert '2 point(s) of 1 scan(s) with a NaN or infinite x, y or z: written as sent' \
        in out.stdout
    assert [ln.strip() for ln in out.stdout.splitlines() if 'have no ROS form' in ln] == \
        ['1 × 0x6120 idc_trailer have no ROS form']      # a bad 0x2806 is no type without one
    with AnyReader([tmp_path / 'bag']) as reader:
        got = {}
        for c, _, raw in reader.messages():
            got.setdefault(c.topic, []).append(reader.deserialize(raw, c.msgtype))
    assert [(c.width, c.is_dense) for c in got['/ibeo/points']] == [(3, False), (1, True)]
    assert [t.child_frame_id for m in got['/tf_static'] for t in m.transforms] == \
        ['ibeo_scanner_1']
    assert len(got['/ibeo/vehicle_state/odometry']) == 1
    fixes = got['/ibeo/vehicle_state/fix']
    assert [f.status.status for f in fixes] == [NavSatStatus.STATUS_NO_FIX,
                                                NavSatStatus.STATUS_FIX]
    assert all(map(math.isnan, (fixes[0].latitude, fixes[0].longitude, fixes[0].altitude)))
    assert [m.twist.linear.x for m in got['/ibeo/vehicle_state/twist']] == [5.0]
    assert [f.status.status for f in got['/ibeo/gps_imu/fix']] == \
        [NavSatStatus.STATUS_NO_FIX, NavSatStatus.STATUS_GBAS_FIX]
    assert [m.angular_velocity.x for m in got['/ibeo/imu/data']] == [0.02]
    odoms = got['/ibeo/odometry']
    assert math.isnan(odoms[0].velocity) and odoms[1].velocity == 4.0
    assert [m.twist.linear.x for m in got['/ibeo/odometry/twist']] == [4.0]


def test_the_node_and_to_bag_converters_leave_out_the_same():
    """IbeoToRos (the node's and to-bag's conversion) gives messages that read back
    (test_ibeo_ecu_cdr.check) for these records and leaves out those of non-finite values,
    naming the fields."""
    from ros_sim_bridge.ibeo import codec as ibeo
    from ros_sim_bridge.ibeo.codec.header import IbeoHeader
    from ros_sim_bridge.ibeo.ros.ecu_conversions import IbeoToRos
    from test_ibeo_ecu_cdr import check
    conv = IbeoToRos()
    seen = []
    for data_type, body in RECORDS:
        header = IbeoHeader(data_type, len(body), 1, NTP)
        record = ibeo.decode_message(data_type, body)
        check(header, record, conv)
        seen.append(([t for t, _ in conv.convert(header, record)],
                     [(e.field, e.kind) for e in conv.refused]))
    assert [r for _, r in seen] == [
        [('mounting_yaw', 'bad_value')], [], [('course_angle', 'bad_value')], [],
        [('longitudinal_velocity', 'bad_value')], [], [('roll_rate', 'bad_value')], [],
        [('velocity', 'bad_value')], []]
    assert seen[2][0] == [] and seen[6][0] == ['/gps_imu/fix'] and seen[8][0] == ['/odometry']


def test_an_imu_sigma_not_finite_makes_its_covariance_unknown():
    from ros_sim_bridge.ibeo import codec as ibeo
    from ros_sim_bridge.ibeo.codec.header import IbeoHeader
    from ros_sim_bridge.ibeo.ros.ecu_conversions import IbeoToRos
    from ibeo_readback import readback
    from test_ibeo_ecu_cdr import check
    body = gps_imu_9001(roll_sigma=NAN)
    header, record = IbeoHeader(0x9001, len(body), 1, NTP), ibeo.decode_message(0x9001, body)
    conv = IbeoToRos()
    assert check(header, record, conv) == {'/gps_imu/fix', '/imu/data'}
    imu = readback(dict(conv.convert(header, record))['/imu/data'])
    assert list(imu.orientation_covariance) == [0.0] * 9                      # unknown
    assert imu.angular_velocity_covariance[0] == pytest.approx(0.01)         # the others kept


def gps_2604(sigma: float) -> bytes:
    """§22 (0x2604): latitude, longitude [rad], altitude, then their sigmas, all DOUBLE (a
    sigma of any size)."""
    return struct.pack('>IQB10d32xH', 1, NTP, 7, math.radians(50.0), math.radians(8.0), 34.0,
                       sigma, sigma, sigma, 0.0, 0.0, 0.0, 0.0, 1)


def test_a_sigma_too_large_to_square_makes_its_covariance_unknown():
    """A finite sigma whose square overflows (1e200: was OverflowError, the whole record lost
    live and to-bag ending with a traceback) is as a NaN one: that covariance unknown, the fix
    and the IMU published; both converters agree."""
    from ros_sim_bridge.ibeo import codec as ibeo
    from ros_sim_bridge.ibeo.codec.header import IbeoHeader
    from ros_sim_bridge.ibeo.ros.ecu_conversions import IbeoToRos
    from ibeo_readback import readback
    from test_ibeo_ecu_cdr import check
    for data_type, body, topics in ((0x2604, gps_2604(1e200), {'/gps/fix'}),
                                    (0x9001, gps_imu_9001(roll_sigma=1e200),
                                     {'/gps_imu/fix', '/imu/data'})):
        header = IbeoHeader(data_type, len(body), 1, NTP)
        record = ibeo.decode_message(data_type, body)
        conv = IbeoToRos()
        assert check(header, record, conv) == topics
        got = {t: readback(m) for t, m in conv.convert(header, record)}
        if data_type == 0x2604:
            fix = got['/gps/fix']
            assert fix.position_covariance_type == NavSatFix.COVARIANCE_TYPE_UNKNOWN
            assert list(fix.position_covariance) == [0.0] * 9
        else:
            assert list(got['/imu/data'].orientation_covariance) == [0.0] * 9


def test_installed_to_bag_converts_past_a_sigma_too_large_to_square(tmp_path):
    from rosbags.highlevel import AnyReader
    src = tmp_path / 'huge_sigma.idc'
    with IdcWriter(src) as w:
        for k, sigma in enumerate((0.5, 1e200, 0.5)):
            w.write(0x2604, gps_2604(sigma), device_id=1, ntp=NTP + (k << 28))
    out = subprocess.run([str(executable('ibeo_idc')), 'to-bag', str(src), str(tmp_path / 'bag'),
                          '--no-progress'], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and 'Traceback' not in out.stderr, out.stderr
    with AnyReader([tmp_path / 'bag']) as reader:
        fixes = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages()
                 if c.topic == '/ibeo/gps/fix']
    assert [f.position_covariance_type for f in fixes] == [
        NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN, NavSatFix.COVARIANCE_TYPE_UNKNOWN,
        NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN]
