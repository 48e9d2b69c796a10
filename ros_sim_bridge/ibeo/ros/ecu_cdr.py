"""Ibeo ECU / FUSION SYSTEM messages as CDR bytes, the one conversion of the ``ibeo_ecu``
node's topics and of ``ibeo_idc to-bag``: odometry, fixes, IMU, twists, scan infos, images and
the other ECU forms made from :mod:`ros_sim_bridge.ros.cdr_template` templates (one per topic
shape: frame names, scanner count), object lists and their markers from element templates (one
per object shape: class name, contour length).  The numbers come from
:mod:`.ecu_conversions` (``*_rows``, ``*_values``, passed in) and from :func:`object_table`
here; every ``stamp`` is (sec, nanosec), chosen by the caller (the record's time, or the
node's receive time at publish).
"""
from __future__ import annotations

import dataclasses
import struct
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

from ros_sim_bridge.core.ntp import NTP_UNIX_OFFSET, ntp64_to_unix_ns
from ros_sim_bridge.ibeo.codec import objects_ecu as oe
from ros_sim_bridge.ibeo.codec import typed_values as tv
from ros_sim_bridge.ibeo.codec.contours import Contours
from ros_sim_bridge.ros.cdr_template import (ElementTemplates, Run, Slot, SlotPacker, build,
                                             field_types, messages_with_elements, ragged,
                                             small_unique)
from ros_sim_bridge.ros.markers_cdr import EMPTY_ARRAY, TYPE_NAME as MARKER_ARRAY, MarkerCdr
from ros_sim_bridge.ros.markers_cdr import duration as marker_duration
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage
from .lux_cdr import class_names, contours_xyz, id_class_texts, label_items
from ros_sim_bridge.ros.stamps import ns_to_sec_nanosec

NAN = float('nan')
_STAMP = Slot('stamp')
_SCANNER_F4 = ('start_angle', 'end_angle', 'frequency', 'beam_tilt', 'mounting_yaw',
               'mounting_pitch', 'mounting_roll', 'mounting_x', 'mounting_y', 'mounting_z')
_SCANNER_NTP = ('start_ntp', 'end_ntp', 'device_start_ntp', 'device_end_ntp')
#: IbeoOdometry's fields after the header, in message order (the codec's names)
ODOMETRY_FIELDS = tuple(n for n in field_types('ros_sim_bridge/msg/IbeoOdometry')
                        if n != 'header')
_ODOMETRY_KIND = {n: ('f8' if t == 'double' else 'u8' if t == 'uint64' else 'u1')
                  for n, t in field_types('ros_sim_bridge/msg/IbeoOdometry').items()
                  if n != 'header'}
#: sensor_msgs/NavSatStatus's SERVICE_GPS (NavSatStatus.msg)
SERVICE_GPS = 1


_OBJECT_LIST = 'ros_sim_bridge/msg/IbeoObjectList'


def ntp_to_ns(ntp: int) -> int:
    """Unix ns of an NTP64 time; a clock that was never set (seconds since power-up, before
    1970) gives its seconds since power-up instead of a negative time."""
    if (ntp >> 32) >= NTP_UNIX_OFFSET:
        return ntp64_to_unix_ns(ntp)
    return (ntp * 1_000_000_000) >> 32


# --- objects -------------------------------------------------------------------------------

_RENAMED = {'classification_quality': 'classification_certainty',
            'classification_age': 'classification_age_ms'}


def object_property(key: int, type_id: int, value) -> dict:
    """An IbeoObjectProperty value tree (:mod:`~ros_sim_bridge.ros.cdr_template`)."""
    if type_id == tv.STRING:
        return {'key': int(key), 'type_id': int(type_id), 'value': NAN, 'text': str(value)}
    return {'key': int(key), 'type_id': int(type_id),
            'value': NAN if value is None else float(value)}


#: IbeoObject's number fields (name → rosidl type), in message order
OBJECT_NUMBERS = {n: t for n, t in field_types('ros_sim_bridge/msg/IbeoObject').items()
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
    """How :func:`object_table` fills a row from an object of dtype ``wire``: views of an
    object and of a row with the runs of adjacent fields of the same type as opaque fields
    (assigning one to the other copies them all), and (row field, object field) of those to
    cast (e.g. a UINT16 id into IbeoObject's uint32)."""
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
    runs = []                                  # (source byte, row byte, length), merged
    for a, b in zip(src, dst):
        if runs and runs[-1][0] + runs[-1][2] == a and runs[-1][1] + runs[-1][2] == b:
            runs[-1][2] += 1
        else:
            runs.append([a, b, 1])

    def view(at: int, size: int) -> np.dtype:     # each run one opaque field
        return np.dtype({'names': [f'r{i}' for i in range(len(runs))],
                         'formats': [f'V{k}' for _, _, k in runs],
                         'offsets': [r[at] for r in runs], 'itemsize': size})
    return view(0, wire.itemsize), view(1, _OBJECT_ROW.itemsize), casts


@dataclass(frozen=True)
class ObjectTable:
    """An ECU object list as :class:`IbeoObject` fields: ``by_dtype[dtype]`` an (n, m) array of
    the m fields of :data:`OBJECT_FIELDS_BY_DTYPE` (float32 NaN where the data type has no such
    field, 0 for missing integers) and ``numbers`` the same rows as a structured array
    (``numbers[name]``: a field's column); the class names (``class_names``, each object's
    index in them ``class_index``), contours ((k, 2) m) and properties ([(key, type id,
    value)]; an empty list when the list has none) per object."""
    by_dtype: dict
    numbers: np.ndarray
    class_names: list
    class_index: np.ndarray
    contours: list
    properties: list

    @property
    def names(self) -> list:
        """Each object's class name."""
        return [self.class_names[i] for i in self.class_index.tolist()]

    def __len__(self) -> int:
        return len(self.numbers)


def object_table(lst: oe.EcuObjectList) -> ObjectTable:
    """Every field of every object (the bytes of the fields of the same type gathered at once);
    box centres of 0x2281 from the reference point."""
    o = lst.objects
    n = len(o)
    raw = np.empty((n, _OBJECT_ROW.itemsize), np.uint8)
    raw[:] = _EMPTY_OBJECT
    src, dst, casts = _object_gather(o.dtype)
    if n:           # the runs of fields of the same type: one opaque field each, copied
        raw.reshape(-1).view(dst)[...] = \
            np.ascontiguousarray(o).view(np.uint8).reshape(-1).view(src)
    rows = raw.view(_OBJECT_ROW).reshape(n)
    for name, source in casts:
        rows[name] = o[source]
    if n:
        centers = lst.box_centers()
        rows['box_center_x'] = centers[:, 0]
        rows['box_center_y'] = centers[:, 1]
    by_dtype = {d: raw[:, at:at + m * d.itemsize].view(d)
                for d, (at, m) in _OBJECT_GROUPS.items()}
    _, index, names = class_names(rows['classification'], oe.classification_name)
    contours = lst.contours.head(n) if isinstance(lst.contours, Contours) else \
        list(lst.contours[:n])
    return ObjectTable(by_dtype, rows, names, index, contours, list(lst.properties))


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


def _class_rgba() -> np.ndarray:
    """RGBA (opaque; float32, as ColorRGBA holds it) of each class number; grey for those
    without a colour of their own."""
    table = np.tile(np.float32([0.7, 0.7, 0.7, 1.0]), (256, 1))
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
    ids = (np.asarray(ids, np.int64) & 0x7FFFFFFF).astype(np.int32)     # Marker.id
    finite = np.isfinite(geo)
    rgba = np.take(_CLASS_RGBA, np.asarray(classification, np.uint8), axis=0)
    if finite.all():                                     # every object placed as given
        placed, box_rgba = np.arange(len(geo)), rgba.copy()
    else:
        placed = np.flatnonzero(finite[:, 0] & finite[:, 1])
        geo = np.where(finite, geo, _NO_GEOMETRY)[placed]
        box_rgba = rgba[placed]
    box = np.empty((len(placed), 6))                     # centre x, y, z, size x, y, z
    label = np.empty((len(placed), 3))                   # (column by column: fewer steps)
    for k in range(4):
        box[:, k + k // 2] = geo[:, k]
    box[:, 2], box[:, 5] = box_height / 2, box_height
    for k in range(2):                                   # the centre + 0.0 (-0.0: 0.0)
        np.add(geo[:, k], 0.0, out=label[:, k])
    label[:, 2] = box_height / 2 + (box_height / 2 + 0.4)
    box_rgba[:, 3] = 0.5
    return {'ids': ids, 'placed': placed, 'centers': box[:, :3], 'sizes': box[:, 3:],
            'yaw': geo[:, 4], 'box_rgba': box_rgba, 'contour_rgba': rgba,
            'label_positions': label}



def stamp_of(ntp: int) -> tuple:
    """(sec, nanosec) of an NTP64 time (:func:`ntp_to_ns`); StampError when no stamp holds it."""
    return ns_to_sec_nanosec(ntp_to_ns(ntp), source='ibeo', field='ntp')


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
    _scan_info_plans: dict = {}      # (template key, info dtype) → _scanner_bytes
    _objects = ElementTemplates('ros_sim_bridge/msg/IbeoObject')
    _markers = MarkerCdr()
    _life = marker_duration(MARKER_LIFETIME_S)

    def _template(self, key: tuple, type_name: str, value):
        tmpl = self._templates.get(key)
        if tmpl is None:
            tmpl = self._templates[key] = build(type_name, value())
        return tmpl

    def _fill(self, key: tuple, type_name: str, value, **slots) -> CdrMessage:
        tmpl = self._template(key, type_name, value)
        return CdrMessage(tmpl.type_name, (tmpl.fill(**slots),))

    def vehicle_odometry(self, rows: tuple, stamp, frame: str, child_frame: str
                         ) -> CdrMessage:
        """nav_msgs/Odometry of (pose (7), twist (6)) rows
        (:func:`.ecu_conversions.vehicle_odometry_rows`)."""
        pose, tw = rows
        return self._fill(('odometry', frame, child_frame), 'nav_msgs/msg/Odometry',
                          lambda: {'header': _header(frame), 'child_frame_id': child_frame,
                                   'pose': {'pose': Slot('pose')},
                                   'twist': {'twist': Slot('twist')}},
                          stamp=stamp, pose=pose, twist=tw)

    def navsatfix(self, values: tuple, stamp, frame: str) -> CdrMessage:
        """sensor_msgs/NavSatFix of :func:`.ecu_conversions.navsat_values`."""
        lat, lon, alt, status, cov, cov_type = values
        return self._fill(('fix', frame), 'sensor_msgs/msg/NavSatFix',
                          lambda: {'header': _header(frame),
                                   'status': {'status': Slot('status'),
                                              'service': SERVICE_GPS},
                                   'latitude': Slot('lla'), 'longitude': Slot('lla'),
                                   'altitude': Slot('lla'), 'position_covariance': Slot('cov'),
                                   'position_covariance_type': Slot('cov_type')},
                          stamp=stamp, status=status, lla=_column([lat, lon, alt]),
                          cov=cov, cov_type=cov_type)

    def imu(self, rows: tuple, stamp, frame: str) -> CdrMessage:
        """sensor_msgs/Imu of :func:`.ecu_conversions.gps_imu_imu_rows`."""
        q, q_cov, rate, rate_cov, acc, acc_cov = rows
        return self._fill(('imu', frame), 'sensor_msgs/msg/Imu',
                          lambda: {'header': _header(frame), 'orientation': Slot('q'),
                                   'orientation_covariance': Slot('cov'),
                                   'angular_velocity': Slot('v3'),
                                   'angular_velocity_covariance': Slot('cov'),
                                   'linear_acceleration': Slot('v3'),
                                   'linear_acceleration_covariance': Slot('cov')},
                          stamp=stamp, q=q, cov=[q_cov, rate_cov, acc_cov],
                          v3=[rate, acc])

    def odometry(self, o, stamp, frame: str) -> CdrMessage:
        """IbeoOdometry of a 0x9002 record (every field as sent)."""
        rows = {'f8': [], 'u8': [], 'u1': []}
        for name in ODOMETRY_FIELDS:
            rows[_ODOMETRY_KIND[name]].append(getattr(o, name))
        return self._fill(('ibeo_odometry', frame), 'ros_sim_bridge/msg/IbeoOdometry',
                          lambda: {'header': _header(frame),
                                   **{n: Slot(k) for n, k in _ODOMETRY_KIND.items()}},
                          stamp=stamp, **{k: _column(v, k) for k, v in rows.items()})

    def twist(self, velocity: float, yaw_rate: float, stamp, frame: str) -> CdrMessage:
        """TwistStamped of a forward velocity (x) and a yaw rate (z)."""
        return self._fill(('twist', frame), 'geometry_msgs/msg/TwistStamped',
                          lambda: {'header': _header(frame), 'twist': Slot('twist')},
                          stamp=stamp,
                          twist=[float(velocity), 0.0, 0.0, 0.0, 0.0, float(yaw_rate)])

    def scan_info(self, scan, stamp, frame: str, device_id: int) -> CdrMessage:
        """IbeoScanInfo of a 0x2204 / 0x2205 scan: its header and every scanner info
        (0x2204 infos leave the 0x2205-only fields 0)."""
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
        key = ('scan_info', frame, n, full)
        tmpl = self._template(key, 'ros_sim_bridge/msg/IbeoScanInfo', value)
        own = dict(stamp=stamp, u16=(int(scan.DATA_TYPE), int(scan.scan_number)),
                   u8=(int(device_id),), u64=(int(scan.start_ntp),),
                   u32=(int(scan.end_offset_us), int(scan.flags), len(scan.points)))
        plan = self._scan_info_plans.get((key, sc.dtype))
        if plan is None:
            plan = self._scan_info_plans[key, sc.dtype] = _scanner_bytes(tmpl, sc.dtype, n)
        if plan is not None:         # the scanners' numbers: their bytes, in one gather
            packer, to, source = plan
            out = packer.fill(**own)
            np.frombuffer(out, np.uint8)[to] = np.frombuffer(np.ascontiguousarray(sc),
                                                             np.uint8).take(source)
            return CdrMessage(tmpl.type_name, (out,))
        index, columns = _scanner_gather(sc.dtype)
        rows = np.ascontiguousarray(sc).view(np.uint8).reshape(n, sc.dtype.itemsize).take(
            index, axis=1)
        slots = {slot: rows[:, a:b].view(dtype).reshape(-1).tolist()
                 for slot, (a, b, dtype, width) in columns.items()}
        return CdrMessage(tmpl.type_name, (tmpl.packer().fill(**own, **slots),))

    def _with_data(self, key: tuple, type_name: str, value, data, **slots) -> CdrMessage:
        """A message whose last field is a ``uint8[]``: its template with that field empty
        (the bytes end with its count), the count set, the bytes ``data`` appended (not
        copied here: a part of the message)."""
        head = bytearray(self._template(key, type_name, value).fill(**slots))
        data = memoryview(data).cast('B')
        struct.pack_into('<I', head, len(head) - 4, len(data))
        return CdrMessage(type_name, (bytes(head), data))

    def compressed_image(self, data, stamp, frame: str, fmt: str = 'jpeg') -> CdrMessage:
        """sensor_msgs/CompressedImage of encoded bytes (``fmt``: e.g. 'jpeg')."""
        return self._with_data(('compressed', frame, fmt), 'sensor_msgs/msg/CompressedImage',
                               lambda: {'header': _header(frame), 'format': fmt, 'data': []},
                               data, stamp=stamp)

    def image(self, data, stamp, frame: str, *, width: int, height: int, encoding: str,
              step: int) -> CdrMessage:
        """sensor_msgs/Image of raw pixel bytes (little-endian)."""
        return self._with_data(('image', frame, encoding), 'sensor_msgs/msg/Image',
                               lambda: {'header': _header(frame), 'height': Slot('u32'),
                                        'width': Slot('u32'), 'encoding': encoding,
                                        'is_bigendian': 0, 'step': Slot('u32'), 'data': []},
                               data, stamp=stamp,
                               u32=_column([height, width, step], np.uint32))

    def can_message(self, m, stamp, frame: str, source_device_id: int) -> CdrMessage:
        """IbeoCanMessage of a 0x1002 CAN frame."""
        return self._with_data(('can', frame), 'ros_sim_bridge/msg/IbeoCanMessage',
                               lambda: {'header': _header(frame), 'can_id': Slot('u16'),
                                        'message_type': Slot('u8'), 'version': Slot('u8'),
                                        'device_id': Slot('u8'),
                                        'source_device_id': Slot('u16'),
                                        'device_time_us': Slot('u32'), 'data': []},
                               bytes(m.data), stamp=stamp,
                               u16=_column([m.can_id, source_device_id], np.uint16),
                               u8=_column([m.message_type, m.version, m.device_id], np.uint8),
                               u32=int(m.device_time_us))

    def time_reference(self, stamp, time_ref, source: str) -> CdrMessage:
        """sensor_msgs/TimeReference (frame ''): ``time_ref`` the external clock's time."""
        tmpl = self._template(('time_reference', source), 'sensor_msgs/msg/TimeReference',
                              lambda: {'header': _header(''), 'time_ref': Slot('stamp'),
                                       'source': source})
        return CdrMessage(tmpl.type_name, (tmpl.fill(stamp=[stamp, time_ref]),))

    def objects(self, lst, stamp, frame: str, device_id: int) -> tuple:
        """(IbeoObjectList, MarkerArray) of an ECU object list: every field of every object
        (:func:`object_table`); oriented boxes (namespace ``ecu_objects``), contours
        (``ecu_contours``: the finite points of each, none where it has none) and ``id class``
        labels (``ecu_labels``), one marker id per tracking id, expiring after
        :data:`MARKER_LIFETIME_S`."""
        return self.objects_many([lst], [stamp], frame, [device_id])[0]

    def objects_many(self, lists: list, stamps: list, frame: str, device_ids: list) -> list:
        """:meth:`objects` of each of ``lists``, object lists of one data type (stamps
        ``stamps``, devices ``device_ids``), made at once: the objects of all in one table, the
        elements of all in one buffer."""
        counts = np.array([len(lst.objects) for lst in lists], np.intp)
        ends = np.cumsum(counts)
        starts = ends - counts
        t = object_table(_joined(lists))
        stamps = np.array(stamps, np.int64).reshape(-1, 2)
        fields = [list_fields(lst, dev) for lst, dev in zip(lists, device_ids)]
        head = self._template(('object_list', frame), _OBJECT_LIST,
                              lambda: {'header': _header(frame), 'objects': [],
                                       **{k: Slot(_LIST_SLOT[v]) for k, v in _LIST_TYPES.items()}})
        if len(lists) == 1:             # one list: its few numbers by struct
            f = fields[0]
            heads = [head.packer().fill(
                stamp=stamps[0].tolist(), u8=[f['mid_scan_ntp']],
                u2=[f['data_type'], f['device_interface_version']],
                u1=[f['device_id'], f['object_list_id'], f['device_type'],
                    int(f['post_processed'])])]
        else:
            heads = head.fill_rows(len(lists), stamp=stamps[:, None],
                                   u2=[[[f['data_type']], [f['device_interface_version']]]
                                       for f in fields],
                                   u1=[[[f['device_id']], [f['object_list_id']],
                                        [f['device_type']], [int(f['post_processed'])]]
                                       for f in fields],
                                   u8=np.array([f['mid_scan_ntp'] for f in fields],
                                               np.uint64)[:, None, None])
        values = {d.str: a for d, a in t.by_dtype.items()}     # slot name: dtype
        xyz, lengths = contours_xyz(t.contours)
        first = np.cumsum(lengths) - lengths
        values['contour'] = ragged(xyz, first)
        if any(t.properties):               # properties are baked in: a template per object
            items = [(self._objects.at((name, k, repr(props)), _object_value(name, k, props)),
                      values, i)
                     for i, (name, k, props) in enumerate(zip(t.names, lengths.tolist(),
                                                              t.properties))]
        else:                               # a template per class and contour length
            top = int(lengths.max()) + 1 if len(lengths) else 1
            shapes, shape = small_unique(t.class_index * top + lengths)
            names = t.class_names
            items = Run([self._objects.at((names[c // top], c % top, '[]'),
                                          _object_value(names[c // top], c % top, []))
                         for c in shapes.tolist()], shape, values)
        if np.isfinite(xyz).all():          # (z is 0) every point drawn
            drawn, shown = slice(None), lengths
        else:
            drawn = np.isfinite(xyz[:, 0]) & np.isfinite(xyz[:, 1])   # NaN / ±Inf: not drawn
            upto = np.concatenate(([0], np.cumsum(drawn)))
            shown = upto[first + lengths] - upto[first]
        per_object = np.broadcast_to(stamps[0], (len(t), 2)) if len(lists) == 1 else \
            np.repeat(stamps, counts, axis=0)          # one list: one stamp row for all
        markers = self._object_markers(t, xyz[drawn], shown, per_object, frame, starts, ends)
        k = len(lists)          # the lists and their marker arrays in one buffer
        made = messages_with_elements(
            list(heads) + [EMPTY_ARRAY] * k,
            [[items] if k == 1 else [items[a:b]] if isinstance(items, Run) else items[a:b]
             for a, b in zip(starts, ends)] + markers)
        return [(CdrMessage(_OBJECT_LIST, (o,)), CdrMessage(MARKER_ARRAY, (m,)))
                for o, m in zip(made[:k], made[k:])]

    def _object_markers(self, t: ObjectTable, points: np.ndarray, lengths: np.ndarray,
                        stamps: np.ndarray, frame: str, starts, ends) -> list:
        """The marker items of each list (its objects: rows ``starts[j]:ends[j]`` of ``t``),
        every object stamped with its row of ``stamps``; ``points`` the (K, 3) finite contour
        points of the objects one after another, ``lengths`` k of each object (none: no
        contour marker)."""
        num = t.numbers
        geo = np.empty((len(num), 5))
        for k, name in enumerate(('box_center_x', 'box_center_y', 'box_size_x', 'box_size_y',
                                  'course_angle')):
            geo[:, k] = num[name]
        r = object_marker_rows(num['id'], geo, num['classification'])
        ns_box, ns_contour, ns_label = OBJECT_MARKER_NS
        life, m = self._life, self._markers
        placed = r['placed']
        outlined = np.flatnonzero(lengths)
        n = len(num)
        box, line = _every(placed, n), _every(outlined, n)     # slices where all are
        boxes = m.boxes(_rows_of(stamps, placed), frame, ns_box, r['ids'][box], r['centers'],
                        r['sizes'], yaw=r['yaw'], colors=r['box_rgba'], min_size=0.05,
                        lifetime=life)
        strips = m.line_strips_flat(_rows_of(stamps, outlined), frame, ns_contour,
                                    r['ids'][line], points, lengths[line], width=0.05,
                                    colors=r['contour_rgba'][line], lifetime=life)
        labels = label_items(_rows_of(stamps, placed), frame, ns_label, r['ids'][box],
                             r['label_positions'],
                             text_bytes=id_class_texts(
                                 num['id'][box], num['classification'][box],
                                 oe.classification_name, classes=None if box is placed else
                                 (None, t.class_index, t.class_names)),
                             lifetime=life)
        if len(starts) == 1:            # one list: its runs whole
            return [[boxes, strips, labels]]
        b0, b1 = np.searchsorted(placed, starts), np.searchsorted(placed, ends)
        s0, s1 = np.searchsorted(outlined, starts), np.searchsorted(outlined, ends)
        return [[boxes[a:b], strips[c:d], labels[a:b]]
                for a, b, c, d in zip(b0.tolist(), b1.tolist(), s0.tolist(), s1.tolist())]


def _every(index: np.ndarray, n: int):
    """``index`` (increasing indices below n), or the slice of all where it holds all n."""
    return slice(None) if len(index) == n else index


def _rows_of(rows: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``rows[index]``; of one row for all (a broadcast view), that row for as many."""
    return rows[:len(index)] if rows.strides[0] == 0 else rows[index]


def _joined(lists: list):
    """One object list of the objects, contours and properties of ``lists`` (of one data
    type), for :func:`.ecu_conversions.object_table` of all at once; ValueError unless every
    list has a contour (and properties, where any) per object."""
    for lst in lists:
        n = len(lst.objects)
        if len(lst.contours) < n or len(lst.properties) not in (0, n):
            raise ValueError('an object list without a contour or properties per object')
    if len(lists) == 1:
        return lists[0]
    contours, properties = [], []
    with_properties = any(len(lst.properties) for lst in lists)
    for lst in lists:
        n = len(lst.objects)
        contours += lst.contours[:n]
        if with_properties:
            properties += list(lst.properties) or [[] for _ in range(n)]
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


def _scanner_bytes(tmpl, info: np.dtype, n: int) -> Optional[tuple]:
    """How :meth:`EcuCdr.scan_info` fills the scanner slots of ``tmpl`` from ``n`` infos of
    dtype ``info`` by their bytes: (a SlotPacker of the scan's own slots, the message's byte
    positions, the infos' byte positions); None where a slot's type is not its column's
    (a conversion, not a byte copy) or the host is big-endian."""
    index, columns = _scanner_gather(info)
    if sys.byteorder != 'little':
        return None
    to, source = [], []
    for slot, (a, b, dtype, _) in columns.items():
        if slot not in tmpl.slots:               # no scanner at all
            continue
        slot_dtype, at = tmpl.slots[slot]
        if slot_dtype != dtype:
            return None
        size, per_info = dtype.itemsize, (b - a) // dtype.itemsize
        for j, element in enumerate(at.reshape(-1).tolist()):
            i, m = divmod(j, per_info)
            to += range(4 + element * size, 4 + (element + 1) * size)
            source += (i * info.itemsize + index[a + m * size:a + (m + 1) * size]).tolist()
    own = tuple(name for name in tmpl.slots if name not in columns)
    return SlotPacker(tmpl, own), np.array(to, np.intp), np.array(source, np.intp)


_LIST_TYPES = {n: t for n, t in field_types(_OBJECT_LIST).items()
               if n not in ('header', 'objects')}
_LIST_SLOT = {'uint8': 'u1', 'uint16': 'u2', 'uint64': 'u8', 'boolean': 'u1'}


def _object_value(name: str, k: int, props):
    def value():
        return {**{field: Slot(dtype.str) for dtype, fields in OBJECT_FIELDS_BY_DTYPE.items()
                   for field in fields},
                'classification_name': name, 'contour': [Slot('contour')] * k,
                'properties': [object_property(*p) for p in props]}
    return value
