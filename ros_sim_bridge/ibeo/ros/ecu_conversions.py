"""Ibeo ECU / FUSION SYSTEM records → ROS messages as CDR bytes, and :class:`IbeoToRos`, the
dispatcher from (Ibeo header, record) to (topic, message) pairs that the ibeo node publishes
and ``ibeo_idc to-bag`` writes: the numbers of each message here (``*_rows``, ``*_values``),
the bytes from the templates of :mod:`.ecu_cdr` (LUX types: :mod:`.lux_cdr`).  Only the
latched ``/tf_static`` mounts and the ``/diagnostics`` statuses are rclpy messages (the node
keeps and merges them); ``to-bag`` gets their CDR from value trees instead.

Frames (REP-103): ECU positions are ISO 8855 (x forward, y left, z up) = FLU, so they pass
through unchanged.  A scan in vehicle coordinates (scan flag bit 11) goes out in
``vehicle_frame``; one in scanner coordinates in ``scanner_frame`` formatted with the device id
(one cloud per scanner).  Scanner mounting poses become static transforms
vehicle → scanner.  GPS headings (north = 0, counter-clockwise, π/2 = west) become ENU yaw
(east = 0) by adding π/2.

Non-finite values (NaN, ±Inf): ECU records carry NaN for "not available" in some fields, so a
record is not refused for one; but none reaches a pose, a transform or a twist.  A scanner whose
mounting is not finite gets no transform, a vehicle state / GpsImu / odometry record whose
values a pose, IMU or twist is made of are not finite gets no such message (the fixes go out:
NO_FIX with NaN latitude, longitude and altitude when the position is not finite, a NaN
altitude when only that is not); :meth:`IbeoToRos.convert` names each one left out in
:attr:`IbeoToRos.refused` (counted as ``bad_value``).  Clouds keep every point, ``is_dense``
false when a point's x, y or z is not finite.
"""
from __future__ import annotations

import importlib
import math
import sys
from dataclasses import replace
from functools import lru_cache
from typing import NamedTuple, Optional

import numpy as np

from ros_sim_bridge.core import frames
from ros_sim_bridge.core.binary import BAD_VALUE, CodecError
from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S
from ros_sim_bridge.ibeo.codec import objects_ecu as oe
from ros_sim_bridge.ibeo.codec import scan_ecu as se
from ros_sim_bridge.ibeo.codec import registry, units
from ros_sim_bridge.ibeo.codec.contours import Contours
from ros_sim_bridge.ibeo.record_times import checked_record_time
from ros_sim_bridge.ibeo.ros import lux_cdr
from ros_sim_bridge.ibeo.ros.ecu_cdr import (  # noqa: F401  (the object table is ecu_cdr's)
    BOX_HEIGHT, MARKER_LIFETIME_S, OBJECT_FIELDS_BY_DTYPE, OBJECT_MARKER_NS, OBJECT_NUMBERS,
    ODOMETRY_FIELDS, EcuCdr, ObjectTable, list_fields, ntp_to_ns, object_marker_rows,
    object_property, object_table, stamp_of)
from ros_sim_bridge.ros.cdr_template import serialize
from ros_sim_bridge.ros.pointcloud_cdr import (TYPE_NAME, CdrMessage, CloudCdr,
                                              pointcloud2_cdr)
from ros_sim_bridge.ros.stamps import ns_to_sec_nanosec


class _Codec:
    """An ibeo codec module imported when one of its names is first used (a recording holds a
    few of the types: the others cost no start-up).  :meth:`made` tells whether a record is of
    one of its classes without importing it: a module not imported yet has made no record."""

    def __init__(self, name: str):
        self._module = f'ros_sim_bridge.ibeo.codec.{name}'
        self._classes: dict = {}        # names → (the module, its classes of those names)

    def __getattr__(self, attr: str):
        value = getattr(importlib.import_module(self._module), attr)
        setattr(self, attr, value)
        return value

    def made(self, record, *names: str) -> bool:
        """Whether ``record`` is an instance of one of the module's classes ``names``."""
        module = sys.modules.get(self._module)
        if module is None:
            return False
        known = self._classes.get(names)
        if known is None or known[0] is not module:     # looked up once per module
            known = self._classes[names] = (module, tuple(getattr(module, n) for n in names))
        return isinstance(record, known[1])


cm, fe, fi = _Codec('can_message'), _Codec('frame_end'), _Codec('frame_index')
ml, mi = _Codec('measurement_list'), _Codec('meta_information')
oa, pcp = _Codec('object_association'), _Codec('point_cloud_plane')
cw, tr, gi = _Codec('carriage_way'), _Codec('time_record'), _Codec('gps_imu')
im, od, sm = _Codec('image'), _Codec('odometry'), _Codec('system_monitoring')
ve = _Codec('vehicle_state_ecu')

NAN = float('nan')
#: Published ECU point layout: the codec's POINT_DTYPE as is (28 bytes: x, y, z, echo_width
#: [m], device_id, layer, echo, time_offset_us [µs after the scan start], flags (UINT16)).
CLOUD_DTYPE = se.POINT_DTYPE


def _time(stamp):
    """A builtin_interfaces/Time (rclpy's message packages are imported where a message is
    made: ``ibeo_idc to-bag`` writes CDR without them, 0.01 s of its start-up)."""
    from builtin_interfaces.msg import Time
    return Time(sec=int(stamp[0]), nanosec=int(stamp[1]))


def _tree_header(stamp, frame_id: str) -> dict:
    """A std_msgs/Header value tree (:mod:`ros_sim_bridge.ros.cdr_template`)."""
    return {'stamp': {'sec': int(stamp[0]), 'nanosec': int(stamp[1])}, 'frame_id': frame_id}


#: the record fields each pose, transform, IMU and twist is made of (all must be finite)
MOUNTING_FIELDS = ('mounting_yaw', 'mounting_pitch', 'mounting_roll', 'mounting_x',
                   'mounting_y', 'mounting_z')
VEHICLE_ODOMETRY_FIELDS = ('course_angle', 'longitudinal_velocity', 'yaw_rate')  # 0x2806/7
VEHICLE_TWIST_FIELDS = ('longitudinal_velocity', 'yaw_rate')                      # 0x2808
IMU_FIELDS = ('roll_angle', 'pitch_angle', 'yaw_angle', 'roll_rate', 'pitch_rate', 'yaw_rate',
              'longitudinal_acceleration', 'cross_acceleration', 'vertical_acceleration')
ODOMETRY_TWIST_FIELDS = ('velocity', 'yaw_rate')                                  # 0x9002


def non_finite_field(values, names):
    """The first of ``names`` whose value in ``values`` (a record, or a numpy row) is NaN or
    ±Inf; None when all are finite."""
    if hasattr(values, '__getitem__'):
        return next((n for n in names if not math.isfinite(values[n])), None)
    return next((n for n in names if not math.isfinite(getattr(values, n))), None)


def is_dense(points: np.ndarray) -> bool:
    """No point with a non-finite x, y or z (one test per coordinate column: about 1 ns a
    point)."""
    return all(np.isfinite(points[name]).all() for name in ('x', 'y', 'z'))


# --- scans ---------------------------------------------------------------------------------

@lru_cache(maxsize=8)
def _mounting_view(info: np.dtype) -> np.dtype:
    """Scanner infos of ``info`` seen as their device id and mounting fields only (at their
    offsets: a view, no copy)."""
    names = ('device_id', *MOUNTING_FIELDS)
    return np.dtype({'names': list(names), 'formats': [info.fields[n][0] for n in names],
                     'offsets': [info.fields[n][1] for n in names],
                     'itemsize': info.itemsize})


def _mounting_rows(scanners: np.ndarray) -> list:
    """[(device id, yaw, pitch, roll, x, y, z)] of the scanner infos."""
    return np.frombuffer(np.ascontiguousarray(scanners),
                         _mounting_view(scanners.dtype)).tolist()


def scan_clouds(scan: se.EcuScan, *, stamp, vehicle_frame: str = 'base_link',
                scanner_frame: str = 'ibeo_scanner_{device_id}',
                cloud_cdr: Optional[CloudCdr] = None) -> list:
    """[(frame, PointCloud2 CDR)]: one cloud in ``vehicle_frame`` for a scan in vehicle
    coordinates, else one per device id in its scanner frame, stamped ``stamp`` ((sec,
    nanosec)).  Fields: :data:`CLOUD_DTYPE`; the bytes straight from the points
    (:func:`~ros_sim_bridge.ros.pointcloud_cdr.pointcloud2_cdr`), or the message of
    ``cloud_cdr`` (in ``vehicle_frame``) when the points were decoded into it
    (:meth:`~ros_sim_bridge.ros.pointcloud_cdr.CloudCdr.holds`): the same bytes in one buffer."""
    pts = scan.points
    if scan.vehicle_coordinates and cloud_cdr is not None and cloud_cdr.holds(pts) and \
            cloud_cdr.frame_id == vehicle_frame:
        dense = bool(scan.dense) or is_dense(pts)
        sec_nanosec = ns_to_sec_nanosec(int(stamp[0]) * 1_000_000_000 + int(stamp[1]),
                                        source='PointCloud2', field='stamp')
        return [(vehicle_frame, CdrMessage(TYPE_NAME, (cloud_cdr.message(
            pts, sec_nanosec, is_dense=dense),)))]
    if scan.vehicle_coordinates:
        parts = [(vehicle_frame, pts)]
    elif len(pts):              # grouped by device id (a stable counting sort), a slice each
        pts, groups = ((pts, scan.groups) if scan.groups is not None
                       else se.group_by_device(pts))    # grouped when decoded, or now
        parts = [(scanner_frame.format(device_id=d), pts[a:b]) for d, a, b in groups]
    else:
        parts = [(scanner_frame.format(device_id=int(d)), pts)
                 for d in scan.scanners['device_id'][:1]]
    dense = [bool(scan.dense) or is_dense(p) for _, p in parts]   # parts of a dense scan are
    t_ns = int(stamp[0]) * 1_000_000_000 + int(stamp[1])
    return [(frame, pointcloud2_cdr(p, frame, t_ns, is_dense=d))
            for (frame, p), d in zip(parts, dense)]


def scanner_transforms(scan: se.EcuScan, *, stamp, vehicle_frame: str = 'base_link',
                       scanner_frame: str = 'ibeo_scanner_{device_id}') -> list:
    """vehicle → scanner TransformStamped per scanner info (mounting yaw/pitch/roll, x/y/z),
    stamped ``stamp`` ((sec, nanosec)); none for a scanner whose mounting is not finite
    (rclpy messages: the node keeps every mount and publishes them latched)."""
    from ros_sim_bridge.ros.geometry import transform
    stamp = _time(stamp)
    return [transform(stamp, vehicle_frame, child, xyz, q_wxyz)
            for child, xyz, q_wxyz in _mounts(scan, scanner_frame)]


def scanner_transform_values(scan: se.EcuScan, *, stamp, vehicle_frame: str = 'base_link',
                             scanner_frame: str = 'ibeo_scanner_{device_id}') -> list:
    """:func:`scanner_transforms` as TransformStamped value trees
    (:mod:`ros_sim_bridge.ros.cdr_template`)."""
    return [{'header': _tree_header(stamp, vehicle_frame), 'child_frame_id': child,
             'transform': {'translation': dict(zip('xyz', xyz)),
                           'rotation': dict(zip('wxyz', q_wxyz))}}
            for child, xyz, q_wxyz in _mounts(scan, scanner_frame)]


def _mounts(scan: se.EcuScan, scanner_frame: str) -> list:
    """(child frame, (x, y, z), (w, x, y, z)) of each scanner whose mounting is finite."""
    out = []
    for row in scan.scanners:
        if non_finite_field(row, MOUNTING_FIELDS) is not None:
            continue
        q = frames.quat_from_euler(float(row['mounting_roll']), float(row['mounting_pitch']),
                                 float(row['mounting_yaw']))
        out.append((scanner_frame.format(device_id=int(row['device_id'])),
                    tuple(float(row[f]) for f in ('mounting_x', 'mounting_y', 'mounting_z')),
                    tuple(float(v) for v in q)))
    return out


class CappedObjectList(NamedTuple):
    """An ECU object list cut to the node's caps (``record``), and what was cut: the objects
    beyond ``max_objects`` and the contour points beyond ``max_contour_points`` of the objects
    kept."""
    record: oe.EcuObjectList
    dropped_objects: int = 0
    dropped_points: int = 0


def cap_object_list(lst: oe.EcuObjectList, max_objects: int, max_contour_points: int
                    ) -> CappedObjectList:
    """The first ``max_objects`` objects of an ECU list (with their properties), each contour
    cut to its first ``max_contour_points`` points: the LUX caps
    (:func:`.conversions.cap_objects`) for 0x2225 / 0x2280 / 0x2281 / 0x2291, whose counts
    allow 65,535 objects of 255 points.  The list itself when nothing is over."""
    from ros_sim_bridge.ibeo.ros.conversions import cut_contours
    n = len(lst.objects)
    keep = min(n, max(int(max_objects), 0))
    limit = max(int(max_contour_points), 0)
    if isinstance(lst.contours, Contours):               # cut in its one array
        contours, dropped_points = lst.contours.capped(keep, limit)
    else:
        contours = list(lst.contours[:keep])
        dropped_points = cut_contours(contours, limit)
    if keep == n and not dropped_points:
        return CappedObjectList(lst)
    return CappedObjectList(replace(lst, objects=lst.objects[:keep], contours=contours,
                                    properties=lst.properties[:keep]),
                            n - keep, dropped_points)


# --- vehicle states, GPS, IMU, odometry ----------------------------------------------------

def vehicle_odometry_rows(s) -> tuple:
    """0x2806/0x2807 as (pose x, y, z, qx, qy, qz, qw; twist vx, vy, vz, wx, wy, wz): position
    (distance x/y from the origin, m), course angle as yaw, longitudinal velocity, yaw rate."""
    half = 0.5 * float(s.course_angle)                  # about z, as frames.quat_from_yaw
    z, w = (math.sin(half), math.cos(half)) if math.isfinite(half) else (NAN, NAN)
    to_si = units.ECU_VEHICLE_STATE_TO_SI
    pose = [float(s.distance_x * to_si['distance_x']), float(s.distance_y * to_si['distance_y']),
            0.0, 0.0, 0.0, z, w]
    return pose, [float(s.longitudinal_velocity), 0.0, 0.0, 0.0, 0.0, float(s.yaw_rate)]


def _covariance(sx: float, sy: float, sz: float) -> list:
    """Diagonal from three sigmas; all zero (unknown) when a variance is not finite (a sigma
    NaN, ±Inf, or beyond 1.3e154: a DOUBLE sigma on the wire can be)."""
    c = [0.0] * 9
    variances = _variances((sx, sy, sz))
    if variances is not None:
        c[0], c[4], c[8] = variances
    return c


def _variances(sigmas) -> Optional[list]:
    """The squares of ``sigmas``; None when one is not finite (``s * s`` of a huge float is
    inf, where ``s ** 2`` would raise OverflowError)."""
    variances = [float(s) * float(s) for s in sigmas]
    return variances if all(map(math.isfinite, variances)) else None


#: sensor_msgs/NavSatStatus's statuses and NavSatFix's covariance types (NavSatStatus.msg,
#: NavSatFix.msg): the message package is not imported (10 ms of a command's start-up)
STATUS_NO_FIX, STATUS_FIX, STATUS_SBAS_FIX, STATUS_GBAS_FIX = -1, 0, 1, 2
COVARIANCE_TYPE_UNKNOWN, COVARIANCE_TYPE_APPROXIMATED = 0, 1
COVARIANCE_TYPE_DIAGONAL_KNOWN, COVARIANCE_TYPE_KNOWN = 2, 3
MAX_POSITION_SIGMA_M = 1e7           # a quarter meridian: a larger sigma locates nothing
_SBAS = {3, 4, 5}                     # 0x2604 source types: SBAS, Omnistar VBS/HP
_GBAS = {6, 7, 8}                     # GBAS, RTK float, RTK integer


def navsat_values(lat_deg: float, lon_deg: float, alt: float, *, sigmas=None,
                  status: int = STATUS_FIX,
                  cov_type: int = COVARIANCE_TYPE_DIAGONAL_KNOWN) -> tuple:
    """(latitude, longitude, altitude, status, position covariance (9), covariance type) of a
    fix: a horizontal position no receiver can have (not finite, |lat| > 90, |lon| > 180) is
    no fix, latitude, longitude and altitude NaN; an altitude not finite is NaN (NavSatFix.msg:
    "quiet NaN if no altitude is available"): no ±Inf reaches the message.  East/north/up
    sigmas give a diagonal covariance of ``cov_type`` when all are positive with finite
    squares (else UNKNOWN, all zero)."""
    lat, lon, alt = float(lat_deg), float(lon_deg), float(alt)
    if not (math.isfinite(lat) and math.isfinite(lon)
            and abs(lat) <= 90.0 and abs(lon) <= 180.0):
        lat = lon = alt = NAN
        status, sigmas = STATUS_NO_FIX, None
    elif not math.isfinite(alt):
        alt = NAN
    if sigmas is not None and all(s > 0 for s in sigmas) and _variances(sigmas) is not None:
        return lat, lon, alt, status, _covariance(*sigmas), cov_type
    return lat, lon, alt, status, [0.0] * 9, COVARIANCE_TYPE_UNKNOWN


def gps_fix_values(g: gi.PositionWgs84) -> tuple:
    """0x2604 → :func:`navsat_values`: latitude/longitude rad → deg; east/north/up sigmas
    from lon/lat/alt sigmas; the source type as SBAS / GBAS fix."""
    status = (STATUS_GBAS_FIX if g.source_type in _GBAS
              else STATUS_SBAS_FIX if g.source_type in _SBAS
              else STATUS_FIX)
    return navsat_values(math.degrees(g.latitude), math.degrees(g.longitude), g.altitude,
                         sigmas=(g.longitude_sigma, g.latitude_sigma, g.altitude_sigma),
                         status=status)


def vehicle_fix_values(s: ve.EcuVehicleState2808) -> tuple:
    """0x2808 (§17) → :func:`navsat_values`: sigma X (longitude, east) and sigma Y (latitude,
    north) [m] give an APPROXIMATED diagonal [σx², σy², up]; the record has no altitude sigma,
    so up is the larger horizontal variance.  UNKNOWN when a sigma is not positive and below
    :data:`MAX_POSITION_SIGMA_M` (NaN, ±Inf; a FLOAT32 up to 3.4e38 squares finitely)."""
    sx, sy = float(s.sigma_x), float(s.sigma_y)
    known = all(0 < v < MAX_POSITION_SIGMA_M for v in (sx, sy))
    return navsat_values(s.latitude_deg, s.longitude_deg, s.altitude,
                         sigmas=(sx, sy, max(sx, sy)) if known else None,
                         cov_type=COVARIANCE_TYPE_APPROXIMATED)


def gps_imu_fix_values(g: gi.GpsImu) -> tuple:
    """0x9001 → :func:`navsat_values` (INS quality 3 = GBAS fix)."""
    status = STATUS_GBAS_FIX if g.ins_quality == 3 else STATUS_FIX
    return navsat_values(math.degrees(g.latitude), math.degrees(g.longitude), g.altitude,
                         sigmas=(g.longitude_sigma, g.latitude_sigma, g.altitude_sigma),
                         status=status)


def gps_imu_imu_rows(g: gi.GpsImu) -> tuple:
    """0x9001 → Imu fields in FLU, in message order: orientation (x, y, z, w: roll/pitch and
    ENU yaw = north-based yaw + π/2) and its covariance, angular velocity (roll/pitch/yaw
    rates) and its covariance, linear acceleration (longitudinal/cross/vertical) and its
    covariance; covariances diagonal from the sigmas (unknown, all zero, when a sigma is not
    finite).  The values of :data:`IMU_FIELDS` must be finite (:class:`IbeoToRos` checks)."""
    w, x, y, z = frames.quat_from_euler(g.roll_angle, g.pitch_angle,
                                        g.yaw_angle + math.pi / 2).tolist()
    return ([x, y, z, w],
            _covariance(g.roll_angle_sigma, g.pitch_angle_sigma, g.yaw_angle_sigma),
            [float(g.roll_rate), float(g.pitch_rate), float(g.yaw_rate)],
            _covariance(g.roll_rate_sigma, g.pitch_rate_sigma, g.yaw_rate_sigma),
            [float(g.longitudinal_acceleration), float(g.cross_acceleration),
             float(g.vertical_acceleration)],
            _covariance(g.longitudinal_acceleration_sigma, g.cross_acceleration_sigma,
                        g.vertical_acceleration_sigma))


# --- image ---------------------------------------------------------------------------------

_CDR = EcuCdr()


def image(img: im.EcuImage, stamp, frame: str):
    """JPEG/MJPEG → CompressedImage ('jpeg'); GRAY8 → Image ('mono8'); None for YUV (or a
    GRAY8 image whose size is not width × height)."""
    if img.image_format in (im.JPEG, im.MJPEG):
        return _CDR.compressed_image(img.data, stamp, frame, 'jpeg')
    if img.image_format == im.GRAY8 and len(img.data) == img.width * img.height:
        return _CDR.image(img.data, stamp, frame, width=img.width, height=img.height,
                          encoding='mono8', step=img.width)
    return None


# --- status --------------------------------------------------------------------------------

_TF_MESSAGE, _DIAGNOSTIC_ARRAY = 'tf2_msgs/msg/TFMessage', 'diagnostic_msgs/msg/DiagnosticArray'
#: diagnostic_msgs/DiagnosticStatus levels (DiagnosticStatus.msg: byte constants)
OK, WARN, ERROR = b'\x00', b'\x01', b'\x02'
_LEVELS = {0: WARN, 1: OK, 2: WARN, 3: ERROR}


def status(record, *, device_id: int = 0, prefix: str = 'ibeo: '):
    """0x6700 / 0x6701 / 0x6705 / traces → one DiagnosticStatus (state 0 initialising = WARN,
    1 OK, 2 WARN, 3 ERROR; trace: error → ERROR, warning → WARN, else OK)."""
    return _status_message(status_values(record, device_id=device_id, prefix=prefix))


def _status_message(value: dict):
    """The rclpy DiagnosticStatus of a value tree."""
    from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
    return DiagnosticStatus(level=value['level'], name=value['name'], message=value['message'],
                            hardware_id=value['hardware_id'],
                            values=[KeyValue(**kv) for kv in value['values']])


def status_values(record, *, device_id: int = 0, prefix: str = 'ibeo: ') -> dict:
    """:func:`status` as a DiagnosticStatus value tree (:mod:`.cdr_template`)."""
    st = {'hardware_id': f'ibeo device {device_id}'}
    if isinstance(record, sm.TraceMessage):
        st['name'] = f'{prefix}trace'
        st['level'] = {1: ERROR, 2: WARN}.get(record.level, OK)
        st['message'] = record.text
        st['values'] = [{'key': 'level', 'value': str(record.level)}]
        return st
    st['level'] = _LEVELS.get(record.state, ERROR)
    state = sm.STATES.get(record.state, str(record.state))
    if isinstance(record, sm.DeviceStatus):
        kind = sm.DEVICE_TYPES.get(record.device_type, str(record.device_type))
        st['name'] = f'{prefix}device {record.device_id} ({kind})'
        bits = sm.bit_names(record.state_information, sm.STATE_INFO_BITS)
        extra = [('type_information', record.type_information)]
    elif isinstance(record, sm.CanStatus):
        st['name'] = f'{prefix}CAN message 0x{record.message_id:X} (device {record.device_id})'
        bits = sm.bit_names(record.state_information, sm.STATE_INFO_BITS)
        extra = []
    else:
        st['name'] = f'{prefix}system'
        bits = sm.bit_names(record.state_information, sm.SYSTEM_INFO_BITS)
        extra = [('cpu_usage', record.cpu_usage), ('ram_usage', record.ram_usage),
                 ('hdd_usage', record.hdd_usage)]
    st['message'] = state + (': ' + ', '.join(bits) if bits else '')
    st['values'] = ([{'key': 'state_information', 'value': f'0x{record.state_information:04X}'}]
                    + [{'key': k, 'value': str(v)} for k, v in extra])
    return st


# --- measurement list, CAN, object association, time record, meta information, planes -----

def measurement_list(m: ml.MeasurementList, stamp, frame: str, *, device_id: int = 0
                     ) -> CdrMessage:
    """0x2821 (§21): the typed key/values as sent, each with its §13 name."""
    return CdrMessage('ros_sim_bridge/msg/IbeoMeasurementList', (serialize(
        'ros_sim_bridge/msg/IbeoMeasurementList', {
            'header': _tree_header(stamp, frame), 'device_id': int(device_id),
            'device_time_us': int(m.microseconds), 'list_name': m.list_name,
            'group_name': m.group_name, 'names': [m.key_name(k) for k, _, _ in m.measurements],
            'measurements': [object_property(k, t, v) for k, t, v in m.measurements]}),))


def can_message(m: cm.CanMessage, stamp, *, source_device_id: int = 0) -> CdrMessage:
    """0x1002 (§30): one CAN frame, stamped with its receive time (frame '')."""
    return _CDR.can_message(m, stamp, '', source_device_id)


def object_association(a: oa.ObjectAssociation, stamp, frame: str) -> CdrMessage:
    """0x4001 (§31): the association table as parallel arrays; NTP times → ROS times."""
    rows = a.associations

    def times(column):
        return [dict(zip(('sec', 'nanosec'), stamp_of(int(t)))) for t in rows[column]]
    return CdrMessage('ros_sim_bridge/msg/IbeoObjectAssociation', (serialize(
        'ros_sim_bridge/msg/IbeoObjectAssociation', {
            'header': _tree_header(stamp, frame),
            'reference_object_list_id': int(a.reference_object_list_id),
            'reference_device_type': int(a.reference_device_type),
            'reference_device_interface_version': int(a.reference_device_interface_version),
            'dut_object_list_id': int(a.dut_object_list_id),
            'dut_device_type': int(a.dut_device_type),
            'dut_device_interface_version': int(a.dut_device_interface_version),
            'reference_object_id': rows['reference_object_id'].astype(np.uint32),
            'dut_object_id': rows['dut_object_id'].astype(np.uint32),
            'first_seen': times('timestamp_first_ntp'),
            'last_seen': times('timestamp_last_ntp'),
            'certainty': rows['certainty'].astype(np.float32)}),))


def time_references(t: tr.TimeRecord, stamp=None) -> list:
    """0x9000 (§32): one ``sensor_msgs/TimeReference`` per pair: stamp = the internal clock's
    time (``stamp`` instead when given: the node's receive time), ``time_ref`` = the external
    clock's (e.g. GPS) at that moment, ``source`` names the external clock and the pair's fix
    mode."""
    out = []
    for ext, internal, fix in zip(t.external_ntp.tolist(), t.internal_ntp.tolist(),
                                  t.fix_modes.tolist()):
        out.append(_CDR.time_reference(
            stamp_of(internal) if stamp is None else stamp, stamp_of(ext),
            f'ibeo clock {t.external_clock_id}/{t.external_clock_name} '
            f'fix {tr.FIX_MODES.get(fix, str(fix))}'))
    return out


def meta_information(lst: mi.MetaInformationList, *, device_id: int = 0,
                     prefix: str = 'ibeo: '):
    """0x7110 (§29): versions, AppBase configuration, sync method, ECU id, keywords as one
    OK status of key/values (``<type>[<i>]`` keys; undecoded payloads as hex)."""
    return _status_message(meta_information_values(lst, device_id=device_id, prefix=prefix))


def meta_information_values(lst: mi.MetaInformationList, *, device_id: int = 0,
                            prefix: str = 'ibeo: ') -> dict:
    """:func:`meta_information` as a DiagnosticStatus value tree."""
    values = []
    for i, e in enumerate(lst.elements):
        kind = (mi.TYPE_NAMES[e.info_type] if e.info_type < len(mi.TYPE_NAMES)
                else f'type_{e.info_type}')
        v = e.value
        if isinstance(v, dict):
            sw = mi.SOFTWARE_TYPES.get(v['software_type'], str(v['software_type']))
            text = f"{sw} {v['major']}.{v['minor']}.{v['patch']}" + (
                f" {v['extra']}" if v['extra'] else '')
        elif v is None:
            text = bytes(e.payload).hex()
        else:
            text = str(v)
        values.append({'key': f'{kind}[{i}]', 'value': text})
    return {'level': OK, 'name': f'{prefix}meta information',
            'hardware_id': f'ibeo device {device_id}',
            'message': f'{len(lst.elements)} element(s)', 'values': values}


def plane_cloud(p: pcp.PointCloudPlane, stamp, frame_id: str) -> CdrMessage:
    """0x7510 (§28): the points (x/y/z m in the tangential plane at the reference point, plus
    echo pulse width / flags when the points type has them) as a PointCloud2."""
    return pointcloud2_cdr(p.points, frame_id, int(stamp[0]) * 1_000_000_000 + int(stamp[1]),
                           is_dense=is_dense(p.points))


def plane_reference(p: pcp.PointCloudPlane, stamp, frame_id: str) -> CdrMessage:
    """0x7510's WGS84 reference point (rad → deg; no covariance given)."""
    return _CDR.navsatfix(navsat_values(math.degrees(p.reference_latitude),
                                        math.degrees(p.reference_longitude),
                                        p.reference_altitude), stamp, frame_id)


# --- dispatcher ----------------------------------------------------------------------------

#: Topic of each output (relative; the CLI prefixes a namespace).
TOPICS = {
    'points': 'points', 'scan_info': 'ecu/scan_info', 'tf_static': '/tf_static',
    'lux_scan_info': 'scan_info', 'objects': 'ecu/objects', 'lux_objects': 'objects',
    'markers': 'objects/markers', 'lux_vehicle_state': 'vehicle_state',
    'lux_twist': 'vehicle_state/twist', 'vehicle_odometry': 'vehicle_state/odometry',
    'vehicle_fix': 'vehicle_state/fix', 'vehicle_twist': 'vehicle_state/twist',
    'gps_fix': 'gps/fix', 'gps_imu_fix': 'gps_imu/fix', 'imu': 'imu/data',
    'odometry': 'odometry', 'odometry_twist': 'odometry/twist',
    'image_compressed': 'image/compressed', 'image': 'image', 'diagnostics': '/diagnostics',
    'measurements': 'measurements', 'can': 'can', 'object_association': 'object_association',
    'time_reference': 'time_reference', 'plane_points': 'plane_points',
    'plane_reference': 'plane_points/reference',
}
#: Types decoded but without a ROS form, and why (``ibeo_idc to-bag`` counts them): (codec
#: module, class name) → why
_NO_ROS_FORM = {
    (fi, 'FrameIndex'): 'file positions of the .idc frames: structure of the file, not data',
    (fe, 'FrameEndSeparator'): 'frame boundary marker',
    (fe, 'IdcTrailer'): 'end of an .idc file',
    (cw, 'CarriageWayList'): 'WGS84 road map without a local frame: use the codec records',
}


_WITHOUT_FORM: set = set()              # the types of _NO_ROS_FORM seen so far


def __getattr__(name: str):
    if name == 'NO_ROS_FORM':          # class → why (its modules imported)
        return {getattr(module, cls): why for (module, cls), why in _NO_ROS_FORM.items()}
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


class Conversion(NamedTuple):
    """One record through :meth:`IbeoToRos.convert_many`: what :meth:`IbeoToRos.convert` gave
    (its pairs, :attr:`~IbeoToRos.refused`, :attr:`~IbeoToRos.invalid_time`) and how many of a
    scan's points are not finite (written as sent); or ``error``, what refused or failed it
    (``invalid_time`` still set when judged before)."""
    pairs: list = []
    refused: list = []
    invalid_time: Optional[str] = None
    non_finite: int = 0
    error: Optional[Exception] = None


class IbeoToRos:
    """(IbeoHeader, record) → [(topic, message)] for every type with a ROS form: CDR bytes
    (:class:`~ros_sim_bridge.ros.pointcloud_cdr.CdrMessage`), but the latched ``/tf_static``
    mounts (a TFMessage) and ``/diagnostics`` (a DiagnosticArray), rclpy messages unless
    ``cdr`` (``ibeo_idc to-bag``: their CDR too, the same bytes, without importing rclpy's
    message packages).  Topics per :data:`TOPICS`
    (relative ones under ``namespace``).  Types without one (frame end, IDC trailer, frame
    index, carriage ways, commands: :data:`NO_ROS_FORM`) give [].  A record's own time
    (:mod:`~ros_sim_bridge.ibeo.record_times`) stamps its messages when valid within
    ``max_jump_s`` of the header time it is given (a checked one), else that header time does;
    :meth:`convert`'s ``stamp`` (the node's receive time) replaces both."""

    #: data types whose conversion depends on those converted before (a scanner's transform
    #: is sent by the first scan that shows its mounting): ``ibeo_idc to-bag`` converts them in
    #: file order, whatever their size
    STATEFUL_TYPES = frozenset({se.SCAN_2204, se.SCAN_2205})

    def __init__(self, *, namespace: str = '', vehicle_frame: str = 'base_link',
                 scanner_frame: str = 'ibeo_scanner_{device_id}', odom_frame: str = 'odom',
                 gps_frame: str = 'gps', imu_frame: str = 'imu', camera_frame: str = 'camera',
                 lux_frame: str = 'laser', plane_frame: str = 'ibeo_plane',
                 status_prefix: str = 'ibeo: ', max_jump_s: float = MAX_TIME_JUMP_S,
                 cdr: bool = False):
        self.ns = namespace.rstrip('/')
        self.cdr = cdr
        self._topics: dict = {}               # key → topic name in the namespace
        self.status_prefix = status_prefix   # of /diagnostics status names (live: the node's)
        self.vehicle_frame, self.scanner_frame = vehicle_frame, scanner_frame
        self.odom_frame, self.gps_frame, self.imu_frame = odom_frame, gps_frame, imu_frame
        self.camera_frame, self.lux_frame = camera_frame, lux_frame
        self.plane_frame = plane_frame
        self.max_jump_s = max_jump_s
        self._cdr = _CDR
        #: a CloudCdr of POINT_DTYPE points in vehicle_frame that scans may be decoded into
        #: (:func:`scan_clouds`); None: none
        self.cloud_cdr: Optional[CloudCdr] = None
        self._tf_sent: dict = {}
        self._mountings_seen: list = []        # the last scan's (device id, mounting) rows
        self._lux_builder = None
        #: the messages the last :meth:`convert` left out for a non-finite value
        self.refused: list = []
        #: why the last :meth:`convert`'s record's own time was invalid (its header time
        #: stamped it), None when it was valid or it has none
        self.invalid_time: str | None = None

    def topic(self, key: str) -> str:
        name = self._topics.get(key)
        if name is None:
            t = TOPICS[key]
            name = self._topics[key] = t if t.startswith('/') else f'{self.ns}/{t}'
        return name

    def _finite(self, header, values, names, what: str) -> bool:
        """True when the ``names`` of ``values`` are finite; else the message ``what`` is left
        out: a CodecError(BAD_VALUE) naming the field goes to :attr:`refused`."""
        bad = non_finite_field(values, names)
        if bad is None:
            return True
        dt = header.data_type
        self.refused.append(CodecError(f'0x{dt:04X} {registry.type_name(dt)}',
                                       f'not a finite number: no {what}', field=bad,
                                       kind=BAD_VALUE))
        return False

    def convert(self, header, record, stamp=None) -> list:
        """[(topic, message)] of one record; :attr:`refused` holds a CodecError(BAD_VALUE) for
        each message left out for a non-finite value (a transform, odometry, IMU or twist),
        :attr:`invalid_time` why its own time was not used (judged first: set as well when a
        stamp then cannot be made, StampError).  ``stamp`` ((sec, nanosec)): the stamp of
        every message instead of the record's times (the node's receive time)."""
        out: list = []
        self.refused = []
        h_ntp = header.ntp
        dev = header.device_id
        own = checked_record_time(record, h_ntp, self.max_jump_s)
        self.invalid_time = None if own is None else own.why
        t_ntp = h_ntp if own is None else own.ntp         # a record with a time of its own

        def own_stamp():
            return stamp_of(t_ntp) if stamp is None else stamp

        def header_stamp():
            return stamp_of(h_ntp) if stamp is None else stamp
        if type(record) in _WITHOUT_FORM:  # a type seen before without a ROS form
            return out
        st = own_stamp() if _own_stamped(record) else None
        c = self._cdr
        if isinstance(record, se.EcuScan):
            clouds = scan_clouds(record, stamp=st, vehicle_frame=self.vehicle_frame,
                                 scanner_frame=self.scanner_frame, cloud_cdr=self.cloud_cdr)
            points = self.topic('points')
            out += [(points, cloud) for _, cloud in clouds]
            frame = clouds[0][0] if clouds else ''
            out.append((self.topic('scan_info'), c.scan_info(record, st, frame, dev)))
            rows = _mounting_rows(record.scanners)
            if rows != self._mountings_seen:    # not as the last scan's (NaN ≠ NaN: again)
                self._mountings_seen = rows
                out += self._scanner_transforms(header, record, rows, st)
        elif isinstance(record, oe.EcuObjectList):
            objects, markers = c.objects(record, st, self.vehicle_frame, dev)
            out += [(self.topic('objects'), objects), (self.topic('markers'), markers)]
        elif ve.made(record, 'EcuVehicleState2806', 'EcuVehicleState2807'):
            if self._finite(header, record, VEHICLE_ODOMETRY_FIELDS, 'odometry'):
                out.append((self.topic('vehicle_odometry'),
                            c.vehicle_odometry(vehicle_odometry_rows(record), st,
                                               self.odom_frame, self.vehicle_frame)))
        elif ve.made(record, 'EcuVehicleState2808'):
            out.append((self.topic('vehicle_fix'),
                        c.navsatfix(vehicle_fix_values(record), st, self.gps_frame)))
            if self._finite(header, record, VEHICLE_TWIST_FIELDS, 'twist'):
                out.append((self.topic('vehicle_twist'),
                            c.twist(record.longitudinal_velocity, record.yaw_rate, st,
                                    self.vehicle_frame)))
        elif gi.made(record, 'PositionWgs84'):
            out.append((self.topic('gps_fix'),
                        c.navsatfix(gps_fix_values(record), st, self.gps_frame)))
        elif gi.made(record, 'GpsImu'):
            imu = self._finite(header, record, IMU_FIELDS, 'imu')
            out.append((self.topic('gps_imu_fix'),
                        c.navsatfix(gps_imu_fix_values(record), st, self.gps_frame)))
            if imu:
                out.append((self.topic('imu'),
                            c.imu(gps_imu_imu_rows(record), st, self.imu_frame)))
        elif od.made(record, 'EcuOdometry'):         # IbeoOdometry: NaN stays data
            moving = self._finite(header, record, ODOMETRY_TWIST_FIELDS, 'twist')
            out.append((self.topic('odometry'), c.odometry(record, st, self.vehicle_frame)))
            if moving:
                out.append((self.topic('odometry_twist'),
                            c.twist(record.velocity, record.yaw_rate, st, self.vehicle_frame)))
        elif im.made(record, 'EcuImage'):
            msg = image(record, st, self.camera_frame)
            if msg is not None:
                key = ('image_compressed' if msg.type_name == 'sensor_msgs/msg/CompressedImage'
                       else 'image')
                out.append((self.topic(key), msg))
        elif sm.made(record, 'DeviceStatus', 'CanStatus', 'SystemStatus',
                                 'TraceMessage'):
            out.append((self.topic('diagnostics'), self._diagnostics(
                header_stamp(), [status_values(record, device_id=dev,
                                               prefix=self.status_prefix)])))
        elif ml.made(record, 'MeasurementList'):
            out.append((self.topic('measurements'),
                        measurement_list(record, st, self.vehicle_frame, device_id=dev)))
        elif cm.made(record, 'CanMessage'):
            out.append((self.topic('can'), can_message(record, st, source_device_id=dev)))
        elif oa.made(record, 'ObjectAssociation'):
            out.append((self.topic('object_association'),
                        object_association(record, header_stamp(), self.vehicle_frame)))
        elif tr.made(record, 'TimeRecord'):
            out += [(self.topic('time_reference'), m)
                    for m in time_references(record, stamp)]
        elif mi.made(record, 'MetaInformationList'):
            out.append((self.topic('diagnostics'), self._diagnostics(
                header_stamp(), [meta_information_values(record, device_id=dev,
                                                         prefix=self.status_prefix)])))
        elif pcp.made(record, 'PointCloudPlane'):
            hs = header_stamp()
            out.append((self.topic('plane_points'), plane_cloud(record, hs, self.plane_frame)))
            out.append((self.topic('plane_reference'),
                        plane_reference(record, hs, self.plane_frame)))
        elif any(module.made(record, cls) for module, cls in _NO_ROS_FORM):
            _WITHOUT_FORM.add(type(record))
        else:
            out += self._lux(header, record, own_stamp)
        return out

    def _scanner_transforms(self, header, record, rows: list, stamp) -> list:
        """[(tf_static, TFMessage)] of the scanners of ``rows`` (:func:`_mounting_rows` of
        ``record``) new or moved since sent, [] for none; a non-finite mounting is named in
        :attr:`refused` and left out."""
        mounts = [m for m in rows
                  if all(map(math.isfinite, m[1:])) or   # else named and left out:
                  self._finite(header, dict(zip(MOUNTING_FIELDS, m[1:])),
                               MOUNTING_FIELDS, f'transform for scanner {m[0]}')]
        if not any(self._tf_sent.get(m[0]) != m for m in mounts):
            return []
        made = scanner_transform_values if self.cdr else scanner_transforms
        new = [tf for tf, m in zip(made(record, stamp=stamp, vehicle_frame=self.vehicle_frame,
                                        scanner_frame=self.scanner_frame),
                                   mounts) if self._tf_sent.get(m[0]) != m]
        for m in mounts:
            self._tf_sent[m[0]] = m
        return [(self.topic('tf_static'), self._tf_message(new))]

    def _tf_message(self, transforms: list):
        """A TFMessage of ``transforms`` (value trees when :attr:`cdr`, else rclpy's)."""
        if self.cdr:
            return CdrMessage(_TF_MESSAGE, (serialize(_TF_MESSAGE, {'transforms': transforms}),))
        from tf2_msgs.msg import TFMessage
        return TFMessage(transforms=transforms)

    def _diagnostics(self, stamp, statuses: list):
        """A DiagnosticArray stamped ``stamp`` ((sec, nanosec)) of ``statuses``
        (DiagnosticStatus value trees or rclpy messages)."""
        if self.cdr:
            return CdrMessage(_DIAGNOSTIC_ARRAY, (serialize(
                _DIAGNOSTIC_ARRAY, {'header': _tree_header(stamp, ''), 'status': statuses}),))
        from diagnostic_msgs.msg import DiagnosticArray
        from std_msgs.msg import Header
        return DiagnosticArray(header=Header(stamp=_time(stamp)),
                               status=[_status_message(st) if isinstance(st, dict) else st
                                       for st in statuses])

    def convert_many(self, items: list) -> list:
        """A :class:`Conversion` of each (header, record) of ``items``, as :meth:`convert` one
        by one gives; ECU object lists of one data type are made at once, not through
        :meth:`convert` (when one of them fails, each is converted on its own)."""
        if (len(items) > 1 and len({type(r) for _, r in items}) == 1
                and isinstance(items[0][1], oe.EcuObjectList)):
            try:
                return self._object_lists(items)
            except Exception:      # one that fails: each on its own, for its own answer
                pass
        out = []
        for header, record in items:
            try:
                out.append(Conversion(self.convert(header, record), self.refused,
                                      self.invalid_time,
                                      (record.non_finite or 0)
                                      if isinstance(record, se.EcuScan) else 0))
            except Exception as exc:
                out.append(Conversion(invalid_time=self.invalid_time, error=exc))
        return out

    def _object_lists(self, items: list) -> list:
        """:meth:`convert` of object lists of one data type, made at once."""
        owns = [checked_record_time(r, h.ntp, self.max_jump_s) for h, r in items]
        made = self._cdr.objects_many([r for _, r in items],
                                      [stamp_of(h.ntp if own is None else own.ntp)
                                       for (h, _), own in zip(items, owns)],
                                      self.vehicle_frame, [h.device_id for h, _ in items])
        objects, markers = self.topic('objects'), self.topic('markers')
        return [Conversion([(objects, o), (markers, m)], [], None if own is None else own.why)
                for (o, m), own in zip(made, owns)]

    def _lux(self, header, record, own_stamp) -> list:
        """LUX types through :mod:`.lux_cdr` (the ``ibeo_lux`` node's conversions);
        ``own_stamp()``: the stamp of a record with a time of its own (its own or its header
        time, :meth:`convert`)."""
        from ros_sim_bridge.ibeo.codec import errors_warnings as lux_ew
        from ros_sim_bridge.ibeo.codec import objects as lux_objects
        from ros_sim_bridge.ibeo.codec import scan as lux_scan
        from ros_sim_bridge.ibeo.codec import vehicle_state as lux_vs
        from ros_sim_bridge.ibeo.ros import conversions as lux
        dev = header.device_id
        lux_types = (lux_scan.LuxScan, lux_objects.LuxObjectList, lux_vs.LuxVehicleState,
                     lux_ew.LuxErrorsWarnings)
        if not isinstance(record, lux_types):
            return []
        st = own_stamp()
        if isinstance(record, lux_scan.LuxScan):
            if self._lux_builder is None:
                self._lux_builder = lux.CloudBuilder()
            cloud = self._lux_builder.build(record)
            t_ns = int(st[0]) * 1_000_000_000 + int(st[1])
            return [(self.topic('points'), pointcloud2_cdr(cloud, self.lux_frame, t_ns,
                                                           is_dense=lux.is_dense(cloud))),
                    (self.topic('lux_scan_info'),
                     lux_cdr.scan_info(record, st, self.lux_frame, device_id=dev,
                                       published_points=len(cloud)))]
        if isinstance(record, lux_objects.LuxObjectList):
            si = lux.objects_to_si(record)
            return [(self.topic('lux_objects'),
                     lux_cdr.object_list(si, st, self.lux_frame, device_id=dev)),
                    (self.topic('markers'), lux_cdr.LuxMarkers().update(si, st,
                                                                        self.lux_frame))]
        if isinstance(record, lux_vs.LuxVehicleState):
            out = [(self.topic('lux_vehicle_state'),
                    lux_cdr.vehicle_state(record, st, self.vehicle_frame, device_id=dev))]
            if record.valid:
                out.append((self.topic('lux_twist'),
                            lux_cdr.vehicle_twist(record, st, self.vehicle_frame)))
            return out
        if isinstance(record, lux_ew.LuxErrorsWarnings):
            statuses = lux.errors_statuses(record, name_prefix=self.status_prefix,
                                           hardware_id=f'ibeo device {dev}', age_s=0.0)
            return [(self.topic('diagnostics'), self._diagnostics(st, statuses))]
        return []


#: ECU record types whose messages are stamped with the record's own time (or its header's):
#: (codec module, class names)
_OWN_STAMPED = ((se, ('EcuScan',)), (oe, ('EcuObjectList',)),
                (ve, ('EcuVehicleState2806', 'EcuVehicleState2807', 'EcuVehicleState2808')),
                (gi, ('PositionWgs84', 'GpsImu')), (od, ('EcuOdometry',)), (im, ('EcuImage',)),
                (ml, ('MeasurementList',)), (cm, ('CanMessage',)))


_OWN_STAMPED_BY_TYPE: dict = {}        # record type → whether it is one of them


def _own_stamped(record) -> bool:
    kind = type(record)
    own = _OWN_STAMPED_BY_TYPE.get(kind)
    if own is None:                     # its module is imported: the answer holds for good
        own = _OWN_STAMPED_BY_TYPE[kind] = isinstance(
            record, (se.EcuScan, oe.EcuObjectList)) or any(
            module.made(record, *names) for module, names in _OWN_STAMPED[2:])
    return own


def message_type(msg):
    """The rclpy class of a converted message (a CdrMessage's by its type name)."""
    if isinstance(msg, CdrMessage):
        from ros_sim_bridge.ros.cdr_template import message_class
        return message_class(msg.type_name)
    return type(msg)


__all__ = ['CLOUD_DTYPE', 'ntp_to_ns', 'stamp_of', 'non_finite_field', 'is_dense',
           'scan_clouds', 'scanner_transforms', 'object_table', 'list_fields',
           'object_marker_rows', 'vehicle_odometry_rows', 'navsat_values', 'vehicle_fix_values',
           'gps_fix_values', 'gps_imu_fix_values', 'gps_imu_imu_rows', 'ODOMETRY_FIELDS',
           'image', 'status', 'measurement_list', 'can_message', 'object_association',
           'time_references', 'meta_information', 'plane_cloud', 'plane_reference', 'TOPICS',
           'NO_ROS_FORM', 'IbeoToRos', 'message_type']
