"""Ibeo ECU / FUSION SYSTEM records → ROS messages, and :class:`IbeoToRos`, the dispatcher
from (Ibeo header, record) to (topic, message) pairs that ``ibeo_idc to-bag`` uses (LUX types
through the existing :mod:`.conversions`, called read-only).

Frames (REP-103): ECU positions are ISO 8855 (x forward, y left, z up) = FLU, so they pass
through unchanged.  A scan in vehicle coordinates (scan flag bit 11) goes out in
``vehicle_frame``; one in scanner coordinates in ``scanner_frame`` formatted with the device id
(one cloud per scanner).  Scanner mounting poses become static transforms
vehicle → scanner.  GPS headings (north = 0, counter-clockwise, π/2 = west) become ENU yaw
(east = 0) by adding π/2.

Non-finite values (NaN, ±Inf): ECU records carry NaN for "not available" in some fields, so a
record is not refused for one; but none reaches a pose, a transform or a twist.  A scanner whose
mounting is not finite gets no transform, a vehicle state / GpsImu / odometry record whose
values a pose, IMU or twist is made of are not finite gets no such message (the fixes go out,
NO_FIX when the position is not finite); :meth:`IbeoToRos.convert` names each one left out in
:attr:`IbeoToRos.refused` (counted as ``bad_value``).  Clouds keep every point, ``is_dense``
false when a point's x, y or z is not finite.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple, Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import CompressedImage, Image, Imu, NavSatFix, NavSatStatus, TimeReference
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core import frames
from ros_sim_bridge.core.binary import BAD_VALUE, CodecError
from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S, NTP_UNIX_OFFSET, ntp64_to_unix_ns
from ros_sim_bridge.ibeo.codec import can_message as cm
from ros_sim_bridge.ibeo.codec import frame_end as fe
from ros_sim_bridge.ibeo.codec import frame_index as fi
from ros_sim_bridge.ibeo.codec import measurement_list as ml
from ros_sim_bridge.ibeo.codec import meta_information as mi
from ros_sim_bridge.ibeo.codec import object_association as oa
from ros_sim_bridge.ibeo.codec import point_cloud_plane as pcp
from ros_sim_bridge.ibeo.codec import carriage_way as cw
from ros_sim_bridge.ibeo.codec import time_record as tr
from ros_sim_bridge.ibeo.codec import gps_imu as gi
from ros_sim_bridge.ibeo.codec import image as im
from ros_sim_bridge.ibeo.codec import objects_ecu as oe
from ros_sim_bridge.ibeo.codec import odometry as od
from ros_sim_bridge.ibeo.codec import scan_ecu as se
from ros_sim_bridge.ibeo.codec import system_monitoring as sm
from ros_sim_bridge.ibeo.codec import typed_values as tv
from ros_sim_bridge.ibeo.codec import registry, units
from ros_sim_bridge.ibeo.codec import vehicle_state_ecu as ve
from ros_sim_bridge.ibeo.record_times import checked_record_time
from ros_sim_bridge.msg import (IbeoCanMessage, IbeoMeasurementList, IbeoObject,
                                IbeoObjectAssociation, IbeoObjectList, IbeoObjectProperty,
                                IbeoOdometry, IbeoScanInfo, IbeoScannerInfo)
from ros_sim_bridge.ros import markers as mk
from ros_sim_bridge.ros.geometry import transform
from ros_sim_bridge.ros.pointcloud import to_pointcloud2
from ros_sim_bridge.ros.pointcloud_cdr import pointcloud2_cdr
from ros_sim_bridge.ros.stamps import ns_to_stamp

NAN = float('nan')
#: Published ECU point layout: the codec's POINT_DTYPE as is (28 bytes: x, y, z, echo_width
#: [m], device_id, layer, echo, time_offset_us [µs after the scan start], flags (UINT16)).
CLOUD_DTYPE = se.POINT_DTYPE


def ntp_to_ns(ntp: int) -> int:
    """Unix ns of an NTP64 time; a clock that was never set (seconds since power-up, before
    1970) gives its seconds since power-up instead of a negative time."""
    if (ntp >> 32) >= NTP_UNIX_OFFSET:
        return ntp64_to_unix_ns(ntp)
    return (ntp * 1_000_000_000) >> 32


def _header(ntp: int, frame_id: str) -> Header:
    return Header(stamp=ns_to_stamp(ntp_to_ns(ntp)), frame_id=frame_id)


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

def scan_clouds(scan: se.EcuScan, *, stamp_ntp: int, vehicle_frame: str = 'base_link',
                scanner_frame: str = 'ibeo_scanner_{device_id}', serialized: bool = False
                ) -> list:
    """[(frame, PointCloud2)]: one cloud in ``vehicle_frame`` for a scan in vehicle
    coordinates, else one per device id in its scanner frame.  Fields: :data:`CLOUD_DTYPE`.
    With ``serialized`` the clouds come as :class:`~ros_sim_bridge.ros.pointcloud_cdr.CdrMessage`
    (CDR bytes straight from the points: for bags and raw publishing)."""
    pts = scan.points
    if scan.vehicle_coordinates:
        parts = [(vehicle_frame, pts)]
    elif len(pts):              # one stable sort by device id, then a slice per device
        ids = pts['device_id']
        order = np.argsort(ids, kind='stable')
        rows = np.ascontiguousarray(pts).view(np.dtype((np.void, pts.dtype.itemsize)))
        pts, ids = rows[order].view(pts.dtype), ids[order]   # whole rows: 7× a field-wise take
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        ends = np.r_[starts[1:], len(ids)]
        parts = [(scanner_frame.format(device_id=int(ids[a])), pts[a:b])
                 for a, b in zip(starts.tolist(), ends.tolist())]
    else:
        parts = [(scanner_frame.format(device_id=int(d)), pts)
                 for d in scan.scanners['device_id'][:1]]
    dense = [bool(scan.dense) or is_dense(p) for _, p in parts]   # parts of a dense scan are
    if serialized:
        t_ns = ntp_to_ns(stamp_ntp)
        return [(frame, pointcloud2_cdr(p, frame, t_ns, is_dense=d))
                for (frame, p), d in zip(parts, dense)]
    return [(frame, to_pointcloud2(p, _header(stamp_ntp, frame), is_dense=d))
            for (frame, p), d in zip(parts, dense)]


def scan_info(scan: se.EcuScan, header: Header, *, device_id: int = 0) -> IbeoScanInfo:
    m = IbeoScanInfo(header=header, data_type=scan.DATA_TYPE, device_id=int(device_id),
                     scan_start_ntp=int(scan.start_ntp),
                     scan_end_offset_us=int(scan.end_offset_us), flags=int(scan.flags),
                     scan_number=int(scan.scan_number), scan_points=len(scan.points))
    names = scan.scanners.dtype.names
    for row in scan.scanners:
        s = IbeoScannerInfo()
        for name in ('device_id', 'scanner_type', 'scan_number'):
            setattr(s, name, int(row[name]))
        for name in ('start_angle', 'end_angle', 'mounting_yaw', 'mounting_pitch',
                     'mounting_roll', 'mounting_x', 'mounting_y', 'mounting_z'):
            setattr(s, name, float(row[name]))
        if 'resolutions' in names:
            for name in ('start_ntp', 'end_ntp', 'device_start_ntp', 'device_end_ntp',
                         'scan_flags'):
                setattr(s, name, int(row[name]))
            s.frequency, s.beam_tilt = float(row['frequency']), float(row['beam_tilt'])
            s.resolution_start_angles = row['resolutions']['start_angle'].astype(np.float32)
            s.resolutions = row['resolutions']['resolution'].astype(np.float32)
        m.scanners.append(s)
    return m


def scanner_transforms(scan: se.EcuScan, *, stamp_ntp: int, vehicle_frame: str = 'base_link',
                       scanner_frame: str = 'ibeo_scanner_{device_id}') -> list:
    """vehicle → scanner TransformStamped per scanner info (mounting yaw/pitch/roll, x/y/z);
    none for a scanner whose mounting is not finite."""
    out = []
    stamp = ns_to_stamp(ntp_to_ns(stamp_ntp))
    for row in scan.scanners:
        if non_finite_field(row, MOUNTING_FIELDS) is not None:
            continue
        q = frames.quat_from_euler(float(row['mounting_roll']), float(row['mounting_pitch']),
                                 float(row['mounting_yaw']))
        out.append(transform(stamp, vehicle_frame,
                             scanner_frame.format(device_id=int(row['device_id'])),
                             (row['mounting_x'], row['mounting_y'], row['mounting_z']), q))
    return out


# --- objects -------------------------------------------------------------------------------

_RENAMED = {'classification_quality': 'classification_certainty',
            'classification_age': 'classification_age_ms'}


def object_property(key: int, type_id: int, value) -> IbeoObjectProperty:
    p = IbeoObjectProperty(key=int(key), type_id=int(type_id))
    if type_id == tv.STRING:
        p.value, p.text = NAN, str(value)
    else:
        p.value = NAN if value is None else float(value)
    return p


#: IbeoObject's number fields (name → rosidl type), in message order
OBJECT_NUMBERS = {n: t for n, t in IbeoObject.get_fields_and_field_types().items()
                  if t in ('float', 'uint8', 'uint16', 'uint32', 'uint64')}
#: the same fields grouped by element type: numpy dtype → names, in message order
OBJECT_FIELDS_BY_DTYPE = {
    np.dtype(d): [n for n, t in OBJECT_NUMBERS.items() if t == kind]
    for kind, d in (('float', 'f4'), ('uint8', 'u1'), ('uint16', 'u2'), ('uint32', 'u4'),
                    ('uint64', 'u8'))}


def _row_layout() -> tuple:
    """One object's numbers as a row: the groups of :data:`OBJECT_FIELDS_BY_DTYPE` side by
    side, the widest first (each group aligned, the row a multiple of 8 bytes); (dtype, group
    dtype → (byte offset, field count), the bytes of a row of no field given: NaN / 0)."""
    names, formats, offsets, groups, at = [], [], [], {}, 0
    for d in sorted(OBJECT_FIELDS_BY_DTYPE, key=lambda d: -d.itemsize):
        fields = OBJECT_FIELDS_BY_DTYPE[d]
        groups[d] = (at, len(fields))
        names += fields
        formats += [d] * len(fields)
        offsets += range(at, at + len(fields) * d.itemsize, d.itemsize)
        at += len(fields) * d.itemsize
    row = np.dtype({'names': names, 'formats': formats, 'offsets': offsets,
                    'itemsize': -(-at // 8) * 8})
    empty = np.zeros((), row)
    for name in OBJECT_FIELDS_BY_DTYPE[np.dtype('f4')]:
        empty[name] = np.nan
    return row, groups, np.frombuffer(empty.tobytes(), np.uint8)


_OBJECT_ROW, _OBJECT_GROUPS, _EMPTY_OBJECT = _row_layout()


@lru_cache(maxsize=None)
def _object_gather(wire: np.dtype) -> tuple:
    """How :func:`object_table` fills a row from an object of dtype ``wire``: (byte indices in
    the object, byte indices in the row) of the fields of the same type, and (row field,
    object field) of those to cast (e.g. a UINT16 id into IbeoObject's uint32)."""
    present = set(wire.names)
    src, dst, casts = [], [], []
    for name in _OBJECT_ROW.names:
        source = name if name in present else _RENAMED.get(name)
        if source not in present:
            continue
        (t, t_at), (s, s_at) = _OBJECT_ROW.fields[name][:2], wire.fields[source][:2]
        if s == t:
            src += range(s_at, s_at + s.itemsize)
            dst += range(t_at, t_at + t.itemsize)
        else:
            casts.append((name, source))
    return np.array(src, np.intp), np.array(dst, np.intp), casts


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
    contours = list(lst.contours[:keep])
    dropped_points = cut_contours(contours, max(int(max_contour_points), 0))
    if keep == n and not dropped_points:
        return CappedObjectList(lst)
    return CappedObjectList(replace(lst, objects=lst.objects[:keep], contours=contours,
                                    properties=lst.properties[:keep]),
                            n - keep, dropped_points)


@dataclass(frozen=True)
class ObjectTable:
    """An ECU object list as :class:`IbeoObject` fields: ``by_dtype[dtype]`` an (n, m) array of
    the m fields of :data:`OBJECT_FIELDS_BY_DTYPE` (float32 NaN where the data type has no such
    field, 0 for missing integers) and ``numbers`` the same rows as a structured array
    (``numbers[name]``: a field's column); class names, contours ((k, 2) m) and properties
    ([(key, type id, value)]) per object."""
    by_dtype: dict
    numbers: np.ndarray
    names: list
    contours: list
    properties: list

    def __len__(self) -> int:
        return len(self.names)


def object_table(lst: oe.EcuObjectList) -> ObjectTable:
    """Every field of every object (the bytes of the fields of the same type gathered at once);
    box centres of 0x2281 from the reference point."""
    o = lst.objects
    n = len(o)
    raw = np.empty((n, _OBJECT_ROW.itemsize), np.uint8)
    raw[:] = _EMPTY_OBJECT
    src, dst, casts = _object_gather(o.dtype)
    if n:
        raw[:, dst] = np.ascontiguousarray(o).view(np.uint8).reshape(n, -1)[:, src]
    rows = raw.view(_OBJECT_ROW).reshape(n)
    for name, source in casts:
        rows[name] = o[source]
    if n:
        centers = lst.box_centers()
        rows['box_center_x'] = centers[:, 0]
        rows['box_center_y'] = centers[:, 1]
    by_dtype = {d: raw[:, at:at + m * d.itemsize].view(d)
                for d, (at, m) in _OBJECT_GROUPS.items()}
    names = [oe.classification_name(c) for c in rows['classification'].tolist()]
    return ObjectTable(by_dtype, rows, names, [np.asarray(c) for c in lst.contours[:n]],
                       list(lst.properties) or [[] for _ in range(n)])


def list_fields(lst: oe.EcuObjectList, device_id: int) -> dict:
    """IbeoObjectList's fields but the header and the objects."""
    out = {'data_type': lst.DATA_TYPE, 'device_id': int(device_id),
           'mid_scan_ntp': int(lst.mid_scan_ntp), 'object_list_id': 0, 'device_type': 0,
           'device_interface_version': 0, 'post_processed': False}
    if isinstance(lst, oe.EcuObjectList2281):
        out.update(object_list_id=int(lst.object_list_id), device_type=int(lst.device_type),
                   device_interface_version=int(lst.device_interface_version),
                   post_processed=bool(lst.post_processed))
    return out


def object_list(lst: oe.EcuObjectList, header: Header, *, device_id: int = 0) -> IbeoObjectList:
    """Every field of every object (:func:`object_table`)."""
    m = IbeoObjectList(header=header, **list_fields(lst, device_id))
    t = object_table(lst)
    rows = list(zip(*(t.numbers[name].tolist() for name in OBJECT_NUMBERS)))
    for i in range(len(t)):
        obj = IbeoObject()
        for name, value in zip(OBJECT_NUMBERS, rows[i]):
            setattr(obj, name, value)
        obj.classification_name = t.names[i]
        obj.contour = [Point(x=x, y=y, z=0.0) for x, y in t.contours[i].tolist()]
        obj.properties = [object_property(*p) for p in t.properties[i]]
        m.objects.append(obj)
    return m


def _class_rgba() -> np.ndarray:
    """RGBA (opaque) of each class number; grey for those without a colour of their own."""
    table = np.tile([0.7, 0.7, 0.7, 1.0], (256, 1))
    for value, rgb in {3: (1.0, 0.2, 0.2), 4: (1.0, 0.6, 0.0), 5: (0.2, 0.6, 1.0),
                       6: (0.4, 0.2, 1.0), 12: (0.3, 0.8, 0.3)}.items():
        table[value, :3] = rgb
    return table


_CLASS_RGBA = _class_rgba()
_NO_GEOMETRY = np.array([0.0, 0.0, 0.05, 0.05, 0.0])    # centre, size x/y, course angle


#: namespaces of :func:`object_markers`, and its marker lifetime and box height
OBJECT_MARKER_NS = ('ecu_objects', 'ecu_contours', 'ecu_labels')
MARKER_LIFETIME_S, BOX_HEIGHT = 0.25, 1.5


def object_marker_rows(ids, geo: np.ndarray, classification, *,
                       box_height: float = BOX_HEIGHT) -> dict:
    """The numbers of :func:`object_markers` from the objects' ids, (n, 5) box centre x/y,
    size x/y and course angle (NaN: none) and classes: marker ids (tracking id, 31 bits) and
    contour RGBA of every object; for the objects with a finite centre (``placed``, their
    indices: an object without one gets no box and no label rather than one at the origin)
    box centres/sizes/yaw (sizes 5 cm and yaw 0 where not given) and RGBA, label
    positions."""
    ids = np.asarray(ids, np.int64) & 0x7FFFFFFF
    finite = np.isfinite(geo)
    placed = np.flatnonzero(finite[:, 0] & finite[:, 1])
    geo = np.where(finite, geo, _NO_GEOMETRY)[placed]
    box = np.empty((len(placed), 6))                     # centre x, y, z, size x, y, z
    box[:, :2], box[:, 2] = geo[:, :2], box_height / 2
    box[:, 3:5], box[:, 5] = geo[:, 2:4], box_height
    rgba = _CLASS_RGBA[np.asarray(classification, np.uint8)]
    box_rgba = rgba[placed]
    box_rgba[:, 3] = 0.5
    return {'ids': ids, 'placed': placed, 'centers': box[:, :3], 'sizes': box[:, 3:],
            'yaw': geo[:, 4], 'box_rgba': box_rgba, 'contour_rgba': rgba,
            'label_positions': box[:, :3] + [0.0, 0.0, box_height / 2 + 0.4]}


def object_markers(msg: IbeoObjectList, *, lifetime_s: float = MARKER_LIFETIME_S,
                   box_height: float = BOX_HEIGHT) -> MarkerArray:
    """Oriented boxes (namespace ``ecu_objects``), contours (``ecu_contours``: the finite
    points of each, none where it has none) and ``id class`` labels (``ecu_labels``) of an
    :class:`IbeoObjectList`, built by the shared :mod:`ros_sim_bridge.ros.markers` builders;
    one id per tracking id; markers expire after ``lifetime_s``."""
    objs = msg.objects
    if not objs:
        return MarkerArray()
    r = object_marker_rows([o.id for o in objs],
                           np.array([(o.box_center_x, o.box_center_y, o.box_size_x,
                                      o.box_size_y, o.course_angle) for o in objs], np.float64),
                           [o.classification for o in objs], box_height=box_height)
    life = mk.duration(lifetime_s)
    ns_box, ns_contour, ns_label = OBJECT_MARKER_NS
    placed = r['placed']
    out = mk.boxes(msg.header, ns_box, r['ids'][placed], r['centers'], r['sizes'],
                   yaw=r['yaw'], colors=r['box_rgba'], min_size=0.05, lifetime=life)
    drawn = [[p for p in o.contour if math.isfinite(p.x) and math.isfinite(p.y)
              and math.isfinite(p.z)] for o in objs]       # RViz refuses a NaN / ±Inf point
    outlined = [i for i, d in enumerate(drawn) if d]
    out += mk.line_strips(msg.header, ns_contour, r['ids'][outlined],
                          [drawn[i] for i in outlined], width=0.05,
                          colors=r['contour_rgba'][outlined], lifetime=life)
    out += mk.labels(msg.header, ns_label, r['ids'][placed], r['label_positions'],
                     [f'{objs[i].id} {objs[i].classification_name}' for i in placed.tolist()],
                     lifetime=life)
    return MarkerArray(markers=out)


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


def vehicle_odometry(s, header: Header, *, child_frame: str = 'base_link') -> Odometry:
    """0x2806/0x2807 (:func:`vehicle_odometry_rows`) in ``header.frame_id`` (odometry frame)."""
    pose, tw = vehicle_odometry_rows(s)
    m = Odometry(header=header, child_frame_id=child_frame)
    p = m.pose.pose
    p.position.x, p.position.y, p.position.z = pose[:3]
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = pose[3:]
    m.twist.twist.linear.x, m.twist.twist.angular.z = tw[0], tw[5]
    return m


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


MAX_POSITION_SIGMA_M = 1e7           # a quarter meridian: a larger sigma locates nothing
_SBAS = {3, 4, 5}                     # 0x2604 source types: SBAS, Omnistar VBS/HP
_GBAS = {6, 7, 8}                     # GBAS, RTK float, RTK integer


def navsat_values(lat_deg: float, lon_deg: float, alt: float, *, sigmas=None,
                  status: int = NavSatStatus.STATUS_FIX,
                  cov_type: int = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN) -> tuple:
    """(latitude, longitude, altitude, status, position covariance (9), covariance type) of a
    fix: a position no receiver can have (not finite, |lat| > 90, |lon| > 180) is no fix;
    east/north/up sigmas give a diagonal covariance of ``cov_type`` when all are positive
    with finite squares (else UNKNOWN, all zero)."""
    lat, lon, alt = float(lat_deg), float(lon_deg), float(alt)
    if not (math.isfinite(lat) and math.isfinite(lon) and math.isfinite(alt)
            and abs(lat) <= 90.0 and abs(lon) <= 180.0):
        status, sigmas = NavSatStatus.STATUS_NO_FIX, None
    if sigmas is not None and all(s > 0 for s in sigmas) and _variances(sigmas) is not None:
        return lat, lon, alt, status, _covariance(*sigmas), cov_type
    return lat, lon, alt, status, [0.0] * 9, NavSatFix.COVARIANCE_TYPE_UNKNOWN


def navsatfix(lat_deg: float, lon_deg: float, alt: float, header: Header, *, sigmas=None,
              status: int = NavSatStatus.STATUS_FIX) -> NavSatFix:
    return _fix(navsat_values(lat_deg, lon_deg, alt, sigmas=sigmas, status=status), header)


def gps_fix_values(g: gi.PositionWgs84) -> tuple:
    """0x2604 → :func:`navsat_values`: latitude/longitude rad → deg; east/north/up sigmas
    from lon/lat/alt sigmas; the source type as SBAS / GBAS fix."""
    status = (NavSatStatus.STATUS_GBAS_FIX if g.source_type in _GBAS
              else NavSatStatus.STATUS_SBAS_FIX if g.source_type in _SBAS
              else NavSatStatus.STATUS_FIX)
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
                         cov_type=NavSatFix.COVARIANCE_TYPE_APPROXIMATED)


def gps_imu_fix_values(g: gi.GpsImu) -> tuple:
    """0x9001 → :func:`navsat_values` (INS quality 3 = GBAS fix)."""
    status = NavSatStatus.STATUS_GBAS_FIX if g.ins_quality == 3 else NavSatStatus.STATUS_FIX
    return navsat_values(math.degrees(g.latitude), math.degrees(g.longitude), g.altitude,
                         sigmas=(g.longitude_sigma, g.latitude_sigma, g.altitude_sigma),
                         status=status)


def _fix(values: tuple, header: Header) -> NavSatFix:
    lat, lon, alt, status, cov, cov_type = values
    m = NavSatFix(header=header, latitude=lat, longitude=lon, altitude=alt,
                  position_covariance=cov, position_covariance_type=cov_type)
    m.status.status, m.status.service = status, NavSatStatus.SERVICE_GPS
    return m


def gps_fix(g: gi.PositionWgs84, header: Header) -> NavSatFix:
    return _fix(gps_fix_values(g), header)


def gps_imu_fix(g: gi.GpsImu, header: Header) -> NavSatFix:
    return _fix(gps_imu_fix_values(g), header)


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


def gps_imu_imu(g: gi.GpsImu, header: Header) -> Imu:
    """0x9001 → Imu (:func:`gps_imu_imu_rows`)."""
    q, q_cov, rate, rate_cov, acc, acc_cov = gps_imu_imu_rows(g)
    m = Imu(header=header, orientation_covariance=q_cov,
            angular_velocity_covariance=rate_cov, linear_acceleration_covariance=acc_cov)
    m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w = q
    m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z = rate
    m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = acc
    return m


#: IbeoOdometry's fields after the header, in message order (the codec's names)
ODOMETRY_FIELDS = tuple(n for n in IbeoOdometry.get_fields_and_field_types() if n != 'header')


def odometry(o: od.EcuOdometry, header: Header) -> IbeoOdometry:
    m = IbeoOdometry(header=header)
    for name in ODOMETRY_FIELDS:
        setattr(m, name, getattr(o, name))
    return m


def twist(velocity: float, yaw_rate: float, header: Header) -> TwistStamped:
    m = TwistStamped(header=header)
    m.twist.linear.x, m.twist.angular.z = float(velocity), float(yaw_rate)
    return m


# --- image ---------------------------------------------------------------------------------

def image(img: im.EcuImage, header: Header):
    """JPEG/MJPEG → CompressedImage ('jpeg'); GRAY8 → Image ('mono8'); None for YUV."""
    if img.image_format in (im.JPEG, im.MJPEG):
        return CompressedImage(header=header, format='jpeg', data=img.data)
    if img.image_format == im.GRAY8 and len(img.data) == img.width * img.height:
        return Image(header=header, height=img.height, width=img.width, encoding='mono8',
                     is_bigendian=0, step=img.width, data=img.data)
    return None


# --- status --------------------------------------------------------------------------------

_LEVELS = {0: DiagnosticStatus.WARN, 1: DiagnosticStatus.OK, 2: DiagnosticStatus.WARN,
           3: DiagnosticStatus.ERROR}


def status(record, *, device_id: int = 0, prefix: str = 'ibeo: ') -> DiagnosticStatus:
    """0x6700 / 0x6701 / 0x6705 / traces → one DiagnosticStatus (state 0 initialising = WARN,
    1 OK, 2 WARN, 3 ERROR; trace: error → ERROR, warning → WARN, else OK)."""
    st = DiagnosticStatus(hardware_id=f'ibeo device {device_id}')
    if isinstance(record, sm.TraceMessage):
        st.name = f'{prefix}trace'
        st.level = {1: DiagnosticStatus.ERROR, 2: DiagnosticStatus.WARN}.get(
            record.level, DiagnosticStatus.OK)
        st.message = record.text
        st.values = [KeyValue(key='level', value=str(record.level))]
        return st
    st.level = _LEVELS.get(record.state, DiagnosticStatus.ERROR)
    state = sm.STATES.get(record.state, str(record.state))
    if isinstance(record, sm.DeviceStatus):
        kind = sm.DEVICE_TYPES.get(record.device_type, str(record.device_type))
        st.name = f'{prefix}device {record.device_id} ({kind})'
        bits = sm.bit_names(record.state_information, sm.STATE_INFO_BITS)
        extra = [('type_information', record.type_information)]
    elif isinstance(record, sm.CanStatus):
        st.name = f'{prefix}CAN message 0x{record.message_id:X} (device {record.device_id})'
        bits = sm.bit_names(record.state_information, sm.STATE_INFO_BITS)
        extra = []
    else:
        st.name = f'{prefix}system'
        bits = sm.bit_names(record.state_information, sm.SYSTEM_INFO_BITS)
        extra = [('cpu_usage', record.cpu_usage), ('ram_usage', record.ram_usage),
                 ('hdd_usage', record.hdd_usage)]
    st.message = state + (': ' + ', '.join(bits) if bits else '')
    st.values = [KeyValue(key='state_information', value=f'0x{record.state_information:04X}')] \
        + [KeyValue(key=k, value=str(v)) for k, v in extra]
    return st


# --- measurement list, CAN, object association, time record, meta information, planes -----

def measurement_list(m: ml.MeasurementList, header: Header, *, device_id: int = 0
                     ) -> IbeoMeasurementList:
    """0x2821 (§21): the typed key/values as sent, each with its §13 name."""
    return IbeoMeasurementList(
        header=header, device_id=int(device_id), device_time_us=int(m.microseconds),
        list_name=m.list_name, group_name=m.group_name,
        names=[m.key_name(k) for k, _, _ in m.measurements],
        measurements=[object_property(k, t, v) for k, t, v in m.measurements])


def can_message(m: cm.CanMessage, header: Header, *, source_device_id: int = 0
                ) -> IbeoCanMessage:
    """0x1002 (§30): one CAN frame, stamped with its receive time."""
    return IbeoCanMessage(header=header, can_id=int(m.can_id), message_type=int(m.message_type),
                          version=int(m.version), device_id=int(m.device_id),
                          source_device_id=int(source_device_id),
                          device_time_us=int(m.device_time_us), data=bytes(m.data))


def object_association(a: oa.ObjectAssociation, header: Header) -> IbeoObjectAssociation:
    """0x4001 (§31): the association table as parallel arrays; NTP times → ROS times."""
    rows = a.associations
    return IbeoObjectAssociation(
        header=header, reference_object_list_id=int(a.reference_object_list_id),
        reference_device_type=int(a.reference_device_type),
        reference_device_interface_version=int(a.reference_device_interface_version),
        dut_object_list_id=int(a.dut_object_list_id), dut_device_type=int(a.dut_device_type),
        dut_device_interface_version=int(a.dut_device_interface_version),
        reference_object_id=rows['reference_object_id'].astype(np.uint32),
        dut_object_id=rows['dut_object_id'].astype(np.uint32),
        first_seen=[ns_to_stamp(ntp_to_ns(int(t))) for t in rows['timestamp_first_ntp']],
        last_seen=[ns_to_stamp(ntp_to_ns(int(t))) for t in rows['timestamp_last_ntp']],
        certainty=rows['certainty'].astype(np.float32))


def time_references(t: tr.TimeRecord, *, frame_id: str = '') -> list:
    """0x9000 (§32): one ``sensor_msgs/TimeReference`` per pair: stamp = the internal clock's
    time, ``time_ref`` = the external clock's (e.g. GPS) at that moment, ``source`` names the
    external clock and the pair's fix mode."""
    out = []
    for ext, internal, fix in zip(t.external_ntp.tolist(), t.internal_ntp.tolist(),
                                  t.fix_modes.tolist()):
        out.append(TimeReference(
            header=_header(internal, frame_id), time_ref=ns_to_stamp(ntp_to_ns(ext)),
            source=(f'ibeo clock {t.external_clock_id}/{t.external_clock_name} '
                    f'fix {tr.FIX_MODES.get(fix, str(fix))}')))
    return out


def meta_information(lst: mi.MetaInformationList, *, device_id: int = 0,
                     prefix: str = 'ibeo: ') -> DiagnosticStatus:
    """0x7110 (§29): versions, AppBase configuration, sync method, ECU id, keywords as one
    OK status of key/values (``<type>[<i>]`` keys; undecoded payloads as hex)."""
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
        values.append(KeyValue(key=f'{kind}[{i}]', value=text))
    return DiagnosticStatus(level=DiagnosticStatus.OK, name=f'{prefix}meta information',
                            hardware_id=f'ibeo device {device_id}',
                            message=f'{len(lst.elements)} element(s)', values=values)


def plane_cloud(p: pcp.PointCloudPlane, *, stamp_ntp: int, frame_id: str,
                serialized: bool = False):
    """0x7510 (§28): the points (x/y/z m in the tangential plane at the reference point, plus
    echo pulse width / flags when the points type has them) as a PointCloud2."""
    dense = is_dense(p.points)
    if serialized:
        return pointcloud2_cdr(p.points, frame_id, ntp_to_ns(stamp_ntp), is_dense=dense)
    return to_pointcloud2(p.points, _header(stamp_ntp, frame_id), is_dense=dense)


def plane_reference(p: pcp.PointCloudPlane, header: Header) -> NavSatFix:
    """0x7510's WGS84 reference point (rad → deg; no covariance given)."""
    return navsatfix(math.degrees(p.reference_latitude), math.degrees(p.reference_longitude),
                     p.reference_altitude, header)


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
#: Types decoded but without a ROS form, and why (``ibeo_idc to-bag`` counts them).
NO_ROS_FORM = {
    fi.FrameIndex: 'file positions of the .idc frames: structure of the file, not data',
    fe.FrameEndSeparator: 'frame boundary marker',
    fe.IdcTrailer: 'end of an .idc file',
    cw.CarriageWayList: 'WGS84 road map without a local frame: use the codec records',
}


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
    """(IbeoHeader, record) → [(topic, message)] for every type with a ROS form.  Topics per
    :data:`TOPICS` (relative ones under ``namespace``).  Types without one (frame end, IDC
    trailer, frame index, carriage ways, commands: :data:`NO_ROS_FORM`) give [].  With
    ``serialized`` the ECU clouds and the fixed-shape messages (:mod:`.ecu_cdr`) are
    :class:`~ros_sim_bridge.ros.pointcloud_cdr.CdrMessage` (bytes, not rclpy messages).  A
    record's own time (:mod:`~ros_sim_bridge.ibeo.record_times`) stamps its messages when
    valid within ``max_jump_s`` of the header time it is given (a checked one), else that
    header time does."""

    #: data types whose conversion depends on those converted before (a scanner's transform
    #: is sent by the first scan that shows its mounting): ``ibeo_idc to-bag`` converts them in
    #: file order, whatever their size
    STATEFUL_TYPES = frozenset({se.SCAN_2204, se.SCAN_2205})

    def __init__(self, *, namespace: str = '', vehicle_frame: str = 'base_link',
                 scanner_frame: str = 'ibeo_scanner_{device_id}', odom_frame: str = 'odom',
                 gps_frame: str = 'gps', imu_frame: str = 'imu', camera_frame: str = 'camera',
                 lux_frame: str = 'laser', plane_frame: str = 'ibeo_plane',
                 serialized: bool = False, status_prefix: str = 'ibeo: ',
                 max_jump_s: float = MAX_TIME_JUMP_S):
        self.ns = namespace.rstrip('/')
        self.status_prefix = status_prefix   # of /diagnostics status names (live: the node's)
        self.vehicle_frame, self.scanner_frame = vehicle_frame, scanner_frame
        self.odom_frame, self.gps_frame, self.imu_frame = odom_frame, gps_frame, imu_frame
        self.camera_frame, self.lux_frame = camera_frame, lux_frame
        self.plane_frame = plane_frame
        self.serialized = serialized
        self.max_jump_s = max_jump_s
        self._cdr = None
        if serialized:
            from .ecu_cdr import EcuCdr
            self._cdr = EcuCdr()
        self._tf_sent: dict = {}
        self._lux_builder = None
        #: the messages the last :meth:`convert` left out for a non-finite value
        self.refused: list = []
        #: why the last :meth:`convert`'s record's own time was invalid (its header time
        #: stamped it), None when it was valid or it has none
        self.invalid_time: str | None = None

    def topic(self, key: str) -> str:
        t = TOPICS[key]
        return t if t.startswith('/') else f'{self.ns}/{t}'

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

    def convert(self, header, record) -> list:
        """[(topic, message)] of one record; :attr:`refused` holds a CodecError(BAD_VALUE) for
        each message left out for a non-finite value (a transform, odometry, IMU or twist),
        :attr:`invalid_time` why its own time was not used (judged first: set as well when a
        stamp then cannot be made, StampError)."""
        out: list = []
        self.refused = []
        h_ntp = header.ntp
        dev = header.device_id
        own = checked_record_time(record, h_ntp, self.max_jump_s)
        self.invalid_time = None if own is None else own.why
        t = h_ntp if own is None else own.ntp      # the stamp of a record with a time of its own
        if isinstance(record, se.EcuScan):
            clouds = scan_clouds(record, stamp_ntp=t, vehicle_frame=self.vehicle_frame,
                                 scanner_frame=self.scanner_frame,
                                 serialized=self.serialized)
            out += [(self.topic('points'), cloud) for _, cloud in clouds]
            frame = clouds[0][0] if clouds else ''
            out.append((self.topic('scan_info'),
                        self._cdr.scan_info(record, t, frame, dev) if self._cdr else
                        scan_info(record, _header(t, frame), device_id=dev)))
            mounts = [m for m in record.scanners[['device_id', *MOUNTING_FIELDS]].tolist()
                      if all(map(math.isfinite, m[1:])) or   # else named and left out:
                      self._finite(header, dict(zip(MOUNTING_FIELDS, m[1:])),
                                   MOUNTING_FIELDS, f'transform for scanner {m[0]}')]
            if any(self._tf_sent.get(m[0]) != m for m in mounts):   # new or moved scanners
                new = [tf for tf, m in zip(scanner_transforms(record, stamp_ntp=t,
                                                              vehicle_frame=self.vehicle_frame,
                                                              scanner_frame=self.scanner_frame),
                                           mounts) if self._tf_sent.get(m[0]) != m]
                for m in mounts:
                    self._tf_sent[m[0]] = m
                out.append((self.topic('tf_static'), TFMessage(transforms=new)))
        elif isinstance(record, oe.EcuObjectList):
            if self._cdr:
                objects, markers = self._cdr.objects(record, t, self.vehicle_frame, dev)
            else:
                objects = object_list(record, _header(t, self.vehicle_frame), device_id=dev)
                markers = object_markers(objects)
            out += [(self.topic('objects'), objects), (self.topic('markers'), markers)]
        elif isinstance(record, (ve.EcuVehicleState2806, ve.EcuVehicleState2807)):
            if self._finite(header, record, VEHICLE_ODOMETRY_FIELDS, 'odometry'):
                out.append((self.topic('vehicle_odometry'),
                            self._cdr.vehicle_odometry(record, t, self.odom_frame,
                                                       self.vehicle_frame) if self._cdr else
                            vehicle_odometry(record, _header(t, self.odom_frame),
                                             child_frame=self.vehicle_frame)))
        elif isinstance(record, ve.EcuVehicleState2808):
            fix = vehicle_fix_values(record)
            out.append((self.topic('vehicle_fix'),
                        self._cdr.navsatfix(fix, t, self.gps_frame) if self._cdr else
                        _fix(fix, _header(t, self.gps_frame))))
            if self._finite(header, record, VEHICLE_TWIST_FIELDS, 'twist'):
                out.append((self.topic('vehicle_twist'),
                            self._cdr.twist(record.longitudinal_velocity, record.yaw_rate, t,
                                            self.vehicle_frame) if self._cdr else
                            twist(record.longitudinal_velocity, record.yaw_rate,
                                  _header(t, self.vehicle_frame))))
        elif isinstance(record, gi.PositionWgs84):
            out.append((self.topic('gps_fix'),
                        self._cdr.navsatfix(gps_fix_values(record), t, self.gps_frame)
                        if self._cdr else gps_fix(record, _header(t, self.gps_frame))))
        elif isinstance(record, gi.GpsImu):
            imu = self._finite(header, record, IMU_FIELDS, 'imu')
            if self._cdr:
                out.append((self.topic('gps_imu_fix'),
                            self._cdr.navsatfix(gps_imu_fix_values(record), t, self.gps_frame)))
                if imu:
                    out.append((self.topic('imu'), self._cdr.imu(record, t, self.imu_frame)))
            else:
                out.append((self.topic('gps_imu_fix'),
                            gps_imu_fix(record, _header(t, self.gps_frame))))
                if imu:
                    out.append((self.topic('imu'),
                                gps_imu_imu(record, _header(t, self.imu_frame))))
        elif isinstance(record, od.EcuOdometry):         # IbeoOdometry: NaN stays data
            moving = self._finite(header, record, ODOMETRY_TWIST_FIELDS, 'twist')
            if self._cdr:
                out.append((self.topic('odometry'),
                            self._cdr.odometry(record, t, self.vehicle_frame)))
                if moving:
                    out.append((self.topic('odometry_twist'),
                                self._cdr.twist(record.velocity, record.yaw_rate, t,
                                                self.vehicle_frame)))
            else:
                hdr = _header(t, self.vehicle_frame)
                out.append((self.topic('odometry'), odometry(record, hdr)))
                if moving:
                    out.append((self.topic('odometry_twist'),
                                twist(record.velocity, record.yaw_rate, hdr)))
        elif isinstance(record, im.EcuImage):
            msg = image(record, _header(t, self.camera_frame))
            if msg is not None:
                key = 'image_compressed' if isinstance(msg, CompressedImage) else 'image'
                out.append((self.topic(key), msg))
        elif isinstance(record, (sm.DeviceStatus, sm.CanStatus, sm.SystemStatus,
                                 sm.TraceMessage)):
            out.append((self.topic('diagnostics'),
                        DiagnosticArray(header=_header(h_ntp, ''),
                                        status=[status(record, device_id=dev,
                                                      prefix=self.status_prefix)])))
        elif isinstance(record, ml.MeasurementList):
            out.append((self.topic('measurements'),
                        measurement_list(record, _header(t, self.vehicle_frame), device_id=dev)))
        elif isinstance(record, cm.CanMessage):
            out.append((self.topic('can'),
                        can_message(record, _header(t, ''),
                                    source_device_id=dev)))
        elif isinstance(record, oa.ObjectAssociation):
            out.append((self.topic('object_association'),
                        object_association(record, _header(h_ntp, self.vehicle_frame))))
        elif isinstance(record, tr.TimeRecord):
            out += [(self.topic('time_reference'), m) for m in time_references(record)]
        elif isinstance(record, mi.MetaInformationList):
            out.append((self.topic('diagnostics'),
                        DiagnosticArray(header=_header(h_ntp, ''),
                                        status=[meta_information(
                                            record, device_id=dev, prefix=self.status_prefix)])))
        elif isinstance(record, pcp.PointCloudPlane):
            out.append((self.topic('plane_points'),
                        plane_cloud(record, stamp_ntp=h_ntp, frame_id=self.plane_frame,
                                    serialized=self.serialized)))
            out.append((self.topic('plane_reference'),
                        plane_reference(record, _header(h_ntp, self.plane_frame))))
        elif isinstance(record, tuple(NO_ROS_FORM)):
            pass
        else:
            out += self._lux(header, record, t)
        return out

    def convert_many(self, items: list) -> list:
        """A :class:`Conversion` of each (header, record) of ``items``, as :meth:`convert` one
        by one gives; serialised ECU object lists of one data type are made at once, not
        through :meth:`convert` (when one of them fails, each is converted on its own)."""
        if (self._cdr is not None and len(items) > 1 and len({type(r) for _, r in items}) == 1
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
        """:meth:`convert` of serialised object lists of one data type, made at once."""
        owns = [checked_record_time(r, h.ntp, self.max_jump_s) for h, r in items]
        made = self._cdr.objects_many([r for _, r in items],
                                      [h.ntp if own is None else own.ntp
                                       for (h, _), own in zip(items, owns)],
                                      self.vehicle_frame, [h.device_id for h, _ in items])
        objects, markers = self.topic('objects'), self.topic('markers')
        return [Conversion([(objects, o), (markers, m)], [], None if own is None else own.why)
                for (o, m), own in zip(made, owns)]

    def _lux(self, header, record, t: int) -> list:
        """LUX types through the existing conversions (read-only use); ``t``: the stamp of a
        record with a time of its own (its own or its header time, :meth:`convert`)."""
        from ros_sim_bridge.ibeo.codec import errors_warnings as lux_ew
        from ros_sim_bridge.ibeo.codec import objects as lux_objects
        from ros_sim_bridge.ibeo.codec import scan as lux_scan
        from ros_sim_bridge.ibeo.codec import vehicle_state as lux_vs
        from ros_sim_bridge.ibeo.ros import conversions as lux
        dev = header.device_id
        if isinstance(record, lux_scan.LuxScan):
            if self._lux_builder is None:
                self._lux_builder = lux.CloudBuilder()
            hdr = _header(t, self.lux_frame)
            cloud = self._lux_builder.build(record)
            return [(self.topic('points'), to_pointcloud2(cloud, hdr,
                                                          is_dense=lux.is_dense(cloud))),
                    (self.topic('lux_scan_info'),
                     lux.scan_info(record, hdr, device_id=dev, published_points=len(cloud)))]
        if isinstance(record, lux_objects.LuxObjectList):
            hdr = _header(t, self.lux_frame)
            si = lux.objects_to_si(record)
            return [(self.topic('lux_objects'), lux.object_list(si, hdr, device_id=dev)),
                    (self.topic('markers'), MarkerArray(markers=lux.object_markers(si, hdr)))]
        if isinstance(record, lux_vs.LuxVehicleState):
            hdr = _header(t, self.vehicle_frame)
            out = [(self.topic('lux_vehicle_state'), lux.vehicle_state(record, hdr,
                                                                       device_id=dev))]
            if record.valid:
                out.append((self.topic('lux_twist'), lux.vehicle_twist(record, hdr)))
            return out
        if isinstance(record, lux_ew.LuxErrorsWarnings):
            statuses = lux.errors_statuses(record, name_prefix=self.status_prefix,
                                           hardware_id=f'ibeo device {dev}', age_s=0.0)
            return [(self.topic('diagnostics'),
                     DiagnosticArray(header=_header(header.ntp, ''), status=statuses))]
        return []


__all__ = ['CLOUD_DTYPE', 'ntp_to_ns', 'non_finite_field', 'is_dense', 'scan_clouds',
           'scan_info', 'scanner_transforms',
           'object_list', 'object_markers', 'vehicle_odometry_rows', 'vehicle_odometry',
           'navsat_values', 'navsatfix', 'vehicle_fix_values', 'gps_fix_values', 'gps_fix',
           'gps_imu_fix_values', 'gps_imu_fix', 'gps_imu_imu_rows', 'gps_imu_imu', 'ODOMETRY_FIELDS', 'odometry', 'twist',
           'image', 'status',
           'measurement_list', 'can_message', 'object_association', 'time_references',
           'meta_information', 'plane_cloud', 'plane_reference', 'TOPICS', 'NO_ROS_FORM',
           'IbeoToRos']
