"""ECU messages of :mod:`.ecu_conversions` as CDR bytes, for ``ibeo_idc to-bag``: odometry,
fixes, IMU, twists and scan infos made from :mod:`ros_sim_bridge.ros.cdr_template` templates
(one per topic shape: frame names, scanner count), object lists and their markers from element
templates (one per object shape: class name, contour length), instead of rclpy objects.  The
numbers come from the same functions the rclpy forms use (``*_rows``, ``*_values``,
:func:`~.ecu_conversions.object_table`), so the messages read back equal to those forms
(tested message for message on a whole recording).
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np

from ros_sim_bridge.msg import IbeoOdometry
from ros_sim_bridge.ros import markers as mk
from ros_sim_bridge.ros.cdr_template import (ElementTemplates, Slot, build,
                                             messages_with_elements, ragged)
from ros_sim_bridge.ros.markers_cdr import MarkerCdr, marker_arrays
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage
from ros_sim_bridge.ros.stamps import ns_to_sec_nanosec
from . import ecu_conversions as ec

_STAMP = Slot('stamp')
_SCANNER_F4 = ('start_angle', 'end_angle', 'frequency', 'beam_tilt', 'mounting_yaw',
               'mounting_pitch', 'mounting_roll', 'mounting_x', 'mounting_y', 'mounting_z')
_SCANNER_NTP = ('start_ntp', 'end_ntp', 'device_start_ntp', 'device_end_ntp')
_ODOMETRY_KIND = {n: ('f8' if t == 'double' else 'u8' if t == 'uint64' else 'u1')
                  for n, t in IbeoOdometry.get_fields_and_field_types().items()
                  if n != 'header'}


_OBJECT_LIST = 'ros_sim_bridge/msg/IbeoObjectList'


def _stamp(ntp: int) -> tuple:
    return ns_to_sec_nanosec(ec.ntp_to_ns(ntp), source='ibeo', field='ntp')


def _header(frame: str) -> dict:
    return {'stamp': _STAMP, 'frame_id': frame}


def _column(values, dtype=None) -> np.ndarray:
    """(n, 1) rows for a slot on n scalar fields (integers given their type: NTP times past
    2^63 mixed with small numbers must not become floats)."""
    return np.asarray(values, dtype)[:, None]


class EcuCdr:
    """CDR builders with their templates, cached by shape and shared by every instance of the
    process (a template depends on nothing else)."""

    _templates: dict = {}
    _objects = ElementTemplates('ros_sim_bridge/msg/IbeoObject')
    _markers = MarkerCdr()
    _life = mk.duration(ec.MARKER_LIFETIME_S)

    def _template(self, key: tuple, type_name: str, value):
        tmpl = self._templates.get(key)
        if tmpl is None:
            tmpl = self._templates[key] = build(type_name, value())
        return tmpl

    def _fill(self, key: tuple, type_name: str, value, **slots) -> CdrMessage:
        tmpl = self._template(key, type_name, value)
        return CdrMessage(tmpl.type_name, (tmpl.fill(**slots),))

    def vehicle_odometry(self, s, ntp: int, frame: str, child_frame: str) -> CdrMessage:
        pose, tw = ec.vehicle_odometry_rows(s)
        return self._fill(('odometry', frame, child_frame), 'nav_msgs/msg/Odometry',
                          lambda: {'header': _header(frame), 'child_frame_id': child_frame,
                                   'pose': {'pose': Slot('pose')},
                                   'twist': {'twist': Slot('twist')}},
                          stamp=_stamp(ntp), pose=pose, twist=tw)

    def navsatfix(self, values: tuple, ntp: int, frame: str) -> CdrMessage:
        lat, lon, alt, status, cov, cov_type = values
        return self._fill(('fix', frame), 'sensor_msgs/msg/NavSatFix',
                          lambda: {'header': _header(frame),
                                   'status': {'status': Slot('status'),
                                              'service': ec.NavSatStatus.SERVICE_GPS},
                                   'latitude': Slot('lla'), 'longitude': Slot('lla'),
                                   'altitude': Slot('lla'), 'position_covariance': Slot('cov'),
                                   'position_covariance_type': Slot('cov_type')},
                          stamp=_stamp(ntp), status=status, lla=_column([lat, lon, alt]),
                          cov=cov, cov_type=cov_type)

    def imu(self, g, ntp: int, frame: str) -> CdrMessage:
        q, q_cov, rate, rate_cov, acc, acc_cov = ec.gps_imu_imu_rows(g)
        return self._fill(('imu', frame), 'sensor_msgs/msg/Imu',
                          lambda: {'header': _header(frame), 'orientation': Slot('q'),
                                   'orientation_covariance': Slot('cov'),
                                   'angular_velocity': Slot('v3'),
                                   'angular_velocity_covariance': Slot('cov'),
                                   'linear_acceleration': Slot('v3'),
                                   'linear_acceleration_covariance': Slot('cov')},
                          stamp=_stamp(ntp), q=q, cov=[q_cov, rate_cov, acc_cov],
                          v3=[rate, acc])

    def odometry(self, o, ntp: int, frame: str) -> CdrMessage:
        rows = {'f8': [], 'u8': [], 'u1': []}
        for name in ec.ODOMETRY_FIELDS:
            rows[_ODOMETRY_KIND[name]].append(getattr(o, name))
        return self._fill(('ibeo_odometry', frame), 'ros_sim_bridge/msg/IbeoOdometry',
                          lambda: {'header': _header(frame),
                                   **{n: Slot(k) for n, k in _ODOMETRY_KIND.items()}},
                          stamp=_stamp(ntp), **{k: _column(v, k) for k, v in rows.items()})

    def twist(self, velocity: float, yaw_rate: float, ntp: int, frame: str) -> CdrMessage:
        return self._fill(('twist', frame), 'geometry_msgs/msg/TwistStamped',
                          lambda: {'header': _header(frame), 'twist': Slot('twist')},
                          stamp=_stamp(ntp),
                          twist=[float(velocity), 0.0, 0.0, 0.0, 0.0, float(yaw_rate)])

    def scan_info(self, scan, ntp: int, frame: str, device_id: int) -> CdrMessage:
        """:func:`.ecu_conversions.scan_info` (0x2204 infos leave the 0x2205-only fields 0)."""
        sc = scan.scanners
        full = 'resolutions' in sc.dtype.names
        n = len(sc)

        def value():
            scanner = {'device_id': Slot('s_u8'), 'scanner_type': Slot('s_u8'),
                       'scan_number': Slot('s_u16'),
                       **{name: Slot('s_f4') for name in _SCANNER_F4 if full or
                          name not in ('frequency', 'beam_tilt')}}
            if full:
                scanner.update({name: Slot('s_u64') for name in _SCANNER_NTP})
                scanner.update(scan_flags=Slot('s_u32'), resolution_start_angles=Slot('res'),
                               resolutions=Slot('res'))
            return {'header': _header(frame), 'data_type': Slot('u16'),
                    'device_id': Slot('u8'), 'scan_start_ntp': Slot('u64'),
                    'scan_end_offset_us': Slot('u32'), 'flags': Slot('u32'),
                    'scan_number': Slot('u16'), 'scan_points': Slot('u32'),
                    'scanners': [scanner] * n}
        index, columns = _scanner_gather(sc.dtype)
        rows = np.ascontiguousarray(sc).view(np.uint8).reshape(n, sc.dtype.itemsize).take(
            index, axis=1)
        slots = {slot: rows[:, a:b].view(dtype).reshape(-1, width)
                 for slot, (a, b, dtype, width) in columns.items()}
        return self._fill(('scan_info', frame, n, full), 'ros_sim_bridge/msg/IbeoScanInfo',
                          value, stamp=_stamp(ntp),
                          u16=_column([scan.DATA_TYPE, scan.scan_number], 'u2'),
                          u8=int(device_id), u64=np.uint64(scan.start_ntp),
                          u32=_column([scan.end_offset_us, scan.flags, len(scan.points)], 'u4'),
                          **slots)

    def objects(self, lst, ntp: int, frame: str, device_id: int) -> tuple:
        """(IbeoObjectList, MarkerArray) of an ECU object list: :func:`.ecu_conversions.
        object_list` and :func:`.ecu_conversions.object_markers`."""
        return self.objects_many([lst], [ntp], frame, [device_id])[0]

    def objects_many(self, lists: list, ntps: list, frame: str, device_ids: list) -> list:
        """:meth:`objects` of each of ``lists``, object lists of one data type (stamps
        ``ntps``, devices ``device_ids``), made at once: the objects of all in one table, the
        elements of all in one buffer."""
        counts = np.array([len(lst.objects) for lst in lists], np.intp)
        ends = np.cumsum(counts)
        starts = ends - counts
        t = ec.object_table(_joined(lists))
        stamps = np.array([_stamp(ntp) for ntp in ntps], np.int64).reshape(-1, 2)
        fields = [ec.list_fields(lst, dev) for lst, dev in zip(lists, device_ids)]
        head = self._template(('object_list', frame), _OBJECT_LIST,
                              lambda: {'header': _header(frame), 'objects': [],
                                       **{k: Slot(_LIST_SLOT[v]) for k, v in _LIST_TYPES.items()}})
        heads = head.fill_rows(len(lists), stamp=stamps[:, None],
                               u2=[[[f['data_type']], [f['device_interface_version']]]
                                   for f in fields],
                               u1=[[[f['device_id']], [f['object_list_id']], [f['device_type']],
                                    [int(f['post_processed'])]] for f in fields],
                               u8=np.array([f['mid_scan_ntp'] for f in fields],
                                           np.uint64)[:, None, None])
        values = {d.str: a[:, :, None] for d, a in t.by_dtype.items()}     # slot name: dtype
        xyz, lengths = _contours_xyz(t.contours)
        first = np.cumsum(lengths) - lengths
        values['contour'] = ragged(xyz, first)
        items = [(self._objects.at((name, k, repr(props)), _object_value(name, k, props)),
                  values, i)
                 for i, (name, k, props) in enumerate(zip(t.names, lengths.tolist(),
                                                          t.properties))]
        objects = messages_with_elements(heads, [items[a:b] for a, b in zip(starts, ends)])
        drawn = np.isfinite(xyz).all(axis=1)     # a NaN / ±Inf contour point: not drawn
        upto = np.concatenate(([0], np.cumsum(drawn)))
        shown = upto[first + lengths] - upto[first]
        every = bool(drawn.all())
        outlines = [xyz[a:a + k] if every else xyz[a:a + k][drawn[a:a + k]] for a, k, n in
                    zip(first.tolist(), lengths.tolist(), shown.tolist()) if n]
        markers = marker_arrays(self._object_markers(t, outlines, shown,
                                                     np.repeat(stamps, counts, axis=0),
                                                     frame, starts, ends))
        return [(CdrMessage(_OBJECT_LIST, (o,)), m) for o, m in zip(objects, markers)]

    def _object_markers(self, t: ec.ObjectTable, outlines: list, lengths: np.ndarray,
                        stamps: np.ndarray, frame: str, starts, ends) -> list:
        """The marker items of each list (its objects: rows ``starts[j]:ends[j]`` of ``t``),
        every object stamped with its row of ``stamps``; ``outlines`` the (k, 3) finite contour
        points of those with ``lengths`` k > 0 of them."""
        num = t.numbers
        r = ec.object_marker_rows(num['id'], np.column_stack(
            [num[k] for k in ('box_center_x', 'box_center_y', 'box_size_x', 'box_size_y',
                              'course_angle')]).astype(np.float64), num['classification'])
        ns_box, ns_contour, ns_label = ec.OBJECT_MARKER_NS
        life, m = self._life, self._markers
        placed = r['placed']
        outlined = np.flatnonzero(lengths)
        boxes = m.boxes(stamps[placed], frame, ns_box, r['ids'][placed], r['centers'],
                        r['sizes'], yaw=r['yaw'], colors=r['box_rgba'], min_size=0.05,
                        lifetime=life)
        strips = m.line_strips(stamps[outlined], frame, ns_contour, r['ids'][outlined],
                               outlines, width=0.05,
                               colors=r['contour_rgba'][outlined], lifetime=life)
        ids = num['id'].tolist()
        labels = m.labels(stamps[placed], frame, ns_label, r['ids'][placed],
                          r['label_positions'],
                          [f'{ids[i]} {t.names[i]}' for i in placed.tolist()], lifetime=life)
        b0, b1 = np.searchsorted(placed, starts), np.searchsorted(placed, ends)
        s0, s1 = np.searchsorted(outlined, starts), np.searchsorted(outlined, ends)
        return [boxes[a:b] + strips[c:d] + labels[a:b]
                for a, b, c, d in zip(b0.tolist(), b1.tolist(), s0.tolist(), s1.tolist())]


def _joined(lists: list):
    """One object list of the objects, contours and properties of ``lists`` (of one data
    type), for :func:`.ecu_conversions.object_table` of all at once; ValueError unless every
    list has a contour (and properties, where any) per object."""
    contours, properties = [], []
    for lst in lists:
        n = len(lst.objects)
        if len(lst.contours) < n or len(lst.properties) not in (0, n):
            raise ValueError('an object list without a contour or properties per object')
        contours += lst.contours[:n]
        properties += list(lst.properties) or [[] for _ in range(n)]
    if len(lists) == 1:
        return lists[0]
    dtype = lists[0].objects.dtype
    if any(lst.objects.dtype != dtype for lst in lists):
        raise ValueError('object lists of different layouts')
    objects = np.concatenate([np.ascontiguousarray(lst.objects).view(np.uint8)
                              for lst in lists]).view(dtype)     # bytes: no field promotion
    return dataclasses.replace(lists[0], objects=objects, contours=contours,
                               properties=properties)


@lru_cache(maxsize=None)
def _scanner_gather(info: np.dtype) -> tuple:
    """How :meth:`EcuCdr.scan_info` takes the slots of every scanner info (of dtype ``info``)
    at once: the byte indices of a row of slot columns in an info, and per slot its columns
    (first, end byte), dtype and values per row of the slot's values (the 16 resolution
    numbers are two rows of 8)."""
    full = 'resolutions' in info.names
    slots = {'s_u8': ['device_id', 'scanner_type'], 's_u16': ['scan_number'],
             's_f4': [n for n in _SCANNER_F4 if full or n not in ('frequency', 'beam_tilt')]}
    if full:
        sectors = info.fields['resolutions'][0]
        slots.update(s_u64=list(_SCANNER_NTP), s_u32=['scan_flags'],
                     res=[('resolutions', k, part) for part in ('start_angle', 'resolution')
                          for k in range(sectors.shape[0])])
    index, columns = [], {}
    for slot, fields in slots.items():
        start = len(index)
        for f in fields:
            if isinstance(f, tuple):          # one part of one sector
                name, k, part = f
                sector = info.fields[name][0].base
                dtype, at = sector.fields[part][:2]
                at += info.fields[name][1] + k * sector.itemsize
            else:
                dtype, at = info.fields[f][:2]
            index += range(at, at + dtype.itemsize)
        columns[slot] = (start, len(index), dtype, 8 if slot == 'res' else 1)
    return np.array(index, np.intp), columns


def _contours_xyz(contours: list) -> tuple:
    """The (k, 2) contours as one (K, 3) float64 array of points (z = 0), and each one's k."""
    contours = [np.asarray(c, np.float64).reshape(-1, 2) for c in contours]
    lengths = np.array([len(c) for c in contours], np.intp)
    xyz = np.zeros((int(lengths.sum()), 3))
    if len(xyz):
        xyz[:, :2] = np.concatenate(contours)
    return xyz, lengths


_LIST_TYPES = {n: t for n, t in ec.IbeoObjectList.get_fields_and_field_types().items()
               if n not in ('header', 'objects')}
_LIST_SLOT = {'uint8': 'u1', 'uint16': 'u2', 'uint64': 'u8', 'boolean': 'u1'}


def _object_value(name: str, k: int, props):
    def value():
        return {**{field: Slot(dtype.str) for dtype, fields in ec.OBJECT_FIELDS_BY_DTYPE.items()
                   for field in fields},
                'classification_name': name, 'contour': [Slot('contour')] * k,
                'properties': [ec.object_property(*p) for p in props]}
    return value
