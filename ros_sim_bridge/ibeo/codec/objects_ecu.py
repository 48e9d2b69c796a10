"""Ibeo FUSION SYSTEM / ECU object lists, data types 0x2225, 0x2280, 0x2281 and 0x2291
(spec §10, §11, §12, §24; big-endian; metres, radians, m/s, in the vehicle frame).

Each object = a fixed part (132 B in 0x2225, 170 B in 0x2280, 164 B in 0x2281/0x2291) followed
by its own contour (``count`` × Point2D float32) and, in 0x2281/0x2291, its property list
(UINT16 count + typed entries, :mod:`.typed_values`).  The fixed parts are gathered in one go
into a structured array (host byte order, the document's field names); the contours, (k, 2)
float32, in one array (:class:`.contours.Contours`).  In 0x2280 the two bytes 168..169 between "existence measurement" and
the contour (offset 170) are not described by the document: they are skipped.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ros_sim_bridge.core.binary import CodecError, pack
from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from . import object_walk, registry
from .body_sizes import (CONTOUR_POINT_SIZE, LIST_HEAD_2225, LIST_HEAD_2281, OBJECT_LAYOUT,
                         contour_cut, list_head, object_cut, walk_objects)
from .contours import Contours
from .scan_ecu import _layout
from .typed_values import encode_entries

OBJECTS_2225 = 0x2225
OBJECTS_2280 = 0x2280
OBJECTS_2281 = 0x2281
REFERENCE_OBJECTS_2291 = 0x2291
NAME = 'ibeo_ecu_objects'

CLASSIFICATIONS = {0: 'unclassified', 1: 'unknown_small', 2: 'unknown_big', 3: 'pedestrian',
                   4: 'bike', 5: 'car', 6: 'truck', 12: 'underdrivable'}
# Object flags (§11, §11.1).
FLAG_STATIC_MODEL = 0x0040          # bit 6: tracked by the static model
FLAG_MOBILE_DETECTED = 0x0080       # bit 7: mobility of the dynamic object detected
FLAG_MOTION_VALIDATED = 0x0100      # bit 8: motion model validated
LIST_FLAG_POST_PROCESSED = 0x10     # 0x2281 list flags bit 4
REFERENCE_POINTS = {0: 'center_of_gravity', 1: 'front_left', 2: 'front_right', 3: 'rear_right',
                    4: 'rear_left', 5: 'front_center', 6: 'right_center', 7: 'rear_center',
                    8: 'left_center', 9: 'object_center', 0xFF: 'unknown'}
#: Position of each reference point in the object box, in units of (length/2, width/2), x
#: along the course angle, y to its left.
REFERENCE_POINT_OFFSETS = {0: (0, 0), 1: (1, 1), 2: (1, -1), 3: (-1, -1), 4: (-1, 1), 5: (1, 0),
                           6: (0, -1), 7: (-1, 0), 8: (0, 1), 9: (0, 0)}


def _xy(name: str, offset: int) -> list:
    return [(name + '_x', 'f4', offset), (name + '_y', 'f4', offset + 4)]


_F2225 = ([('id', 'u2', 0), ('age', 'u4', 4), ('timestamp_ntp', 'u8', 8),
           ('prediction_age', 'u2', 16), ('classification', 'u1', 18),
           ('classification_certainty', 'u1', 19), ('classification_age', 'u4', 20)]
          + _xy('bounding_box_center', 24) + _xy('bounding_box_size', 32)
          + _xy('box_center', 40) + _xy('box_center_sigma', 48) + _xy('box_size', 56)
          + [('course_angle', 'f4', 72)]
          + _xy('relative_velocity', 80) + _xy('relative_velocity_sigma', 88)
          + _xy('absolute_velocity', 96) + _xy('absolute_velocity_sigma', 104)
          + [('contour_count', 'u1', 130), ('closest_point_index', 'u1', 131)])
_F2280 = ([('id', 'u2', 0), ('flags', 'u2', 2), ('age', 'u4', 4), ('timestamp_ntp', 'u8', 8),
           ('prediction_age', 'u2', 16), ('classification', 'u1', 18),
           ('classification_quality', 'u1', 19), ('classification_age_ms', 'u4', 20)]
          + _xy('box_center', 40) + _xy('box_center_sigma', 48) + _xy('box_size', 56)
          + [('course_angle', 'f4', 72), ('course_angle_sigma', 'f4', 76)]
          + _xy('relative_velocity', 80) + _xy('relative_velocity_sigma', 88)
          + _xy('absolute_velocity', 96) + _xy('absolute_velocity_sigma', 104)
          + [('contour_count', 'u1', 130), ('closest_point_index', 'u1', 131),
             ('reference_point_location', 'u2', 132)]
          + _xy('reference_point', 134) + _xy('reference_point_sigma', 142)
          + [('reference_point_correlation', 'f4', 150), ('priority', 'u2', 162),
             ('existence_measurement', 'f4', 164)])
_F2281 = ([('id', 'u4', 0), ('flags', 'u2', 4), ('age', 'u4', 6), ('timestamp_ntp', 'u8', 10),
           ('prediction_age', 'u2', 18), ('classification', 'u1', 20),
           ('classification_quality', 'u1', 21), ('classification_age_ms', 'u4', 22)]
          + _xy('box_size', 26) + _xy('box_size_sigma', 34)
          + [('course_angle', 'f4', 42), ('course_angle_sigma', 'f4', 46)]
          + _xy('relative_velocity', 50) + _xy('relative_velocity_sigma', 58)
          + _xy('absolute_velocity', 66) + _xy('absolute_velocity_sigma', 74)
          + [('height', 'f4', 82), ('height_sigma', 'f4', 86)]
          + _xy('motion_reference_point', 90) + _xy('motion_reference_point_sigma', 98)
          + [('longitudinal_acceleration', 'f4', 106),
             ('longitudinal_acceleration_sigma', 'f4', 110), ('yaw_rate', 'f4', 114),
             ('yaw_rate_sigma', 'f4', 118), ('contour_count', 'u1', 122),
             ('closest_point_index', 'u1', 123), ('reference_point_location', 'u2', 124)]
          + _xy('reference_point', 126) + _xy('reference_point_sigma', 134)
          + [('reference_point_correlation', 'f4', 142)] + _xy('center_of_gravity', 146)
          + [('priority', 'u2', 154), ('existence_measurement', 'f4', 156)])

#: Wire (big-endian) and decoded (host order) object layouts per data type.
WIRE_OBJECT_2225_DTYPE, OBJECT_2225_DTYPE = _layout(_F2225, 132, '>'), _layout(_F2225, 132, '=')
WIRE_OBJECT_2280_DTYPE, OBJECT_2280_DTYPE = _layout(_F2280, 170, '>'), _layout(_F2280, 170, '=')
WIRE_OBJECT_2281_DTYPE, OBJECT_2281_DTYPE = _layout(_F2281, 164, '>'), _layout(_F2281, 164, '=')
_POINT = np.dtype([('x', '>f4'), ('y', '>f4')])

_H2225 = LIST_HEAD_2225                       # mid-scan time, object count
_H2281 = LIST_HEAD_2281                       # + list id, device type, interface version, flags


def classification_name(value: int) -> str:
    return CLASSIFICATIONS.get(int(value), f'class_{int(value)}')


@dataclass(frozen=True, eq=False)
class EcuObjectList:
    """Common part of the ECU object lists: mid-scan time, ``objects`` (structured array of the
    type's OBJECT_*_DTYPE), ``contours[i]`` ((k, 2) float32 m) and, for 0x2281/0x2291,
    ``properties[i]`` ([(key, type id, value)])."""
    mid_scan_ntp: int
    objects: np.ndarray
    contours: Sequence[np.ndarray] = ()
    properties: Sequence[list] = ()

    DATA_TYPE = 0

    @property
    def mid_scan_ns(self) -> int:
        return ntp64_to_unix_ns(self.mid_scan_ntp)

    def __len__(self) -> int:
        return len(self.objects)

    def box_centers(self) -> np.ndarray:
        """(N, 2) object box centres (m): the box centre where the type has one, else the
        reference point moved by its location in the box (§11 reference point location); for
        an unknown location, the centre of gravity (0x2281) or the reference point."""
        o = self.objects
        if 'box_center_x' in o.dtype.names:         # (two column casts: fewer steps)
            center = np.empty((len(o), 2))
            center[:, 0], center[:, 1] = o['box_center_x'], o['box_center_y']
            return center
        loc = o['reference_point_location'].astype(np.int64)
        table = np.zeros((0x100, 2))
        for k, v in REFERENCE_POINT_OFFSETS.items():
            table[k] = v
        known = np.isin(loc, list(REFERENCE_POINT_OFFSETS))
        off = table[np.minimum(loc, 0xFF)]
        with np.errstate(invalid='ignore', over='ignore'):   # NaN/Inf sent: a NaN centre
            half_l, half_w = o['box_size_x'] / 2.0, o['box_size_y'] / 2.0
            dx, dy = off[:, 0] * half_l, off[:, 1] * half_w
            c, s = np.cos(o['course_angle']), np.sin(o['course_angle'])
            ref = np.stack([o['reference_point_x'], o['reference_point_y']],
                           1).astype(np.float64)
            center = ref - np.stack([c * dx - s * dy, s * dx + c * dy], 1)
        if 'center_of_gravity_x' in o.dtype.names:
            cog = np.stack([o['center_of_gravity_x'], o['center_of_gravity_y']], 1)
            center = np.where(known[:, None], center, cog)
        return center


@dataclass(frozen=True, eq=False)
class EcuObjectList2225(EcuObjectList):
    DATA_TYPE = OBJECTS_2225


@dataclass(frozen=True, eq=False)
class EcuObjectList2280(EcuObjectList):
    DATA_TYPE = OBJECTS_2280


@dataclass(frozen=True, eq=False)
class EcuObjectList2281(EcuObjectList):
    """0x2281 adds list id, device type, device interface version and list flags (bit 4:
    post-processed)."""
    object_list_id: int = 255
    device_type: int = 0
    device_interface_version: int = 0
    list_flags: int = 0
    DATA_TYPE = OBJECTS_2281

    @property
    def post_processed(self) -> bool:
        return bool(self.list_flags & LIST_FLAG_POST_PROCESSED)


@dataclass(frozen=True, eq=False)
class ReferenceObjectList2291(EcuObjectList2281):
    """0x2291 (Evaluation Suite ≤ R2015-08): 0x2281's layout, list flags byte reserved."""
    DATA_TYPE = REFERENCE_OBJECTS_2291


_SPEC = {  # type: (record class, wire dtype, host dtype, list header struct, has properties)
    OBJECTS_2225: (EcuObjectList2225, WIRE_OBJECT_2225_DTYPE, OBJECT_2225_DTYPE, _H2225, False),
    OBJECTS_2280: (EcuObjectList2280, WIRE_OBJECT_2280_DTYPE, OBJECT_2280_DTYPE, _H2225, False),
    OBJECTS_2281: (EcuObjectList2281, WIRE_OBJECT_2281_DTYPE, OBJECT_2281_DTYPE, _H2281, True),
    REFERENCE_OBJECTS_2291: (ReferenceObjectList2291, WIRE_OBJECT_2281_DTYPE, OBJECT_2281_DTYPE,
                             _H2281, True),
}
# the walk (body_sizes, numpy-free) knows the same layouts
assert all(OBJECT_LAYOUT[t] == (spec[3], spec[1].itemsize, spec[1].fields['contour_count'][1],
                                spec[4]) for t, spec in _SPEC.items())
_U16 = struct.Struct('>H')


def _walked(data_type: int, body) -> tuple:
    """(list header, the objects' fixed parts as records, contours) of a list without
    properties by the compiled walk (:mod:`.object_walk`, which must be there): the records
    and errors of :func:`.body_sizes.walk_objects`."""
    head_st, size, cnt_at, _ = OBJECT_LAYOUT[data_type]
    head = list_head(data_type, body)
    count, n = head[-1], len(body)
    offsets, counts, wire, points, end = object_walk.walk(
        body, head_st.size, count, size, cnt_at, 1, True, -1, CONTOUR_POINT_SIZE)
    k = len(offsets)
    if end > n:
        raise contour_cut(k - 1, int(counts[-1]), end, n)
    if k < count:
        raise object_cut(k, count, end, size, n)
    xy = points.view(_POINT.fields['x'][0]).astype(np.float32).reshape(-1, 2)
    return head, wire.reshape(-1).view(_SPEC[data_type][1]), Contours(xy, counts)


def _decode(data_type: int, body) -> EcuObjectList:
    cls, wire_dt, host_dt, head_st, has_props = _SPEC[data_type]
    walked = None if has_props or not object_walk.NATIVE else _walked(data_type, body)
    if walked is not None:
        head, wire, contours = walked
        return cls(head[0], wire.astype(host_dt), contours)
    head, offsets, counts, properties = walk_objects(data_type, body)
    count, size = len(offsets), wire_dt.itemsize
    offsets, counts = np.array(offsets, np.int64), np.array(counts, np.int64)
    raw = np.frombuffer(body, np.uint8)
    if count:
        wire = raw[offsets[:, None] + np.arange(size)].reshape(-1).view(wire_dt)
        starts = np.repeat(offsets + size, counts)
        within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        xy = raw[(starts + 8 * within)[:, None] + np.arange(8)].view(
            _POINT.fields['x'][0]).astype(np.float32)          # (x, y) rows: _POINT's fields
    else:
        wire, xy = np.zeros(0, wire_dt), np.zeros((0, 2), np.float32)
    contours = Contours(xy.reshape(-1, 2), counts)
    objects = wire.astype(host_dt)
    if data_type in (OBJECTS_2225, OBJECTS_2280):
        return cls(head[0], objects, contours)
    mid, list_id, device_type, version, flags, _ = head
    return cls(mid, objects, contours, properties, list_id, device_type, version, flags)


def decode_objects_2225(body, header=None) -> EcuObjectList2225:
    """Decode a 0x2225 body (§10)."""
    return _decode(OBJECTS_2225, body)


def decode_objects_2280(body, header=None) -> EcuObjectList2280:
    """Decode a 0x2280 body (§11)."""
    return _decode(OBJECTS_2280, body)


def decode_objects_2281(body, header=None) -> EcuObjectList2281:
    """Decode a 0x2281 body (§12)."""
    return _decode(OBJECTS_2281, body)


def decode_objects_2291(body, header=None) -> ReferenceObjectList2291:
    """Decode a 0x2291 body (§24)."""
    return _decode(REFERENCE_OBJECTS_2291, body)


def make_objects(count: int, data_type: int = OBJECTS_2280) -> np.ndarray:
    """A zeroed object array of the type's layout to fill in before encoding."""
    return np.zeros(count, _SPEC[data_type][2])


def encode_objects(lst: EcuObjectList) -> bytes:
    """The body of ``lst`` for its data type (reserved bytes zero)."""
    data_type = lst.DATA_TYPE
    _, wire_dt, _, head_st, has_props = _SPEC[data_type]
    o = np.asarray(lst.objects)
    contours = [np.asarray(c, np.float32).reshape(-1, 2) for c in lst.contours]
    if len(contours) != len(o):
        raise CodecError(NAME, f'{len(o)} objects but {len(contours)} contours', field='contours')
    props = list(lst.properties) if has_props else []
    if has_props and len(props) != len(o):
        props = props + [[] for _ in range(len(o) - len(props))]
    if len(o) > 0xFFFF or any(len(c) > 0xFF for c in contours):
        raise CodecError(NAME, 'too many objects or contour points for the wire counts',
                         field='objects')
    w = np.zeros(len(o), wire_dt)
    for name in wire_dt.names:
        w[name] = o[name]
    w['contour_count'] = [len(c) for c in contours]
    if has_props:
        head = pack(head_st, (lst.mid_scan_ntp, lst.object_list_id, lst.device_type,
                              lst.device_interface_version,
                              lst.list_flags if data_type == OBJECTS_2281 else 0, len(o)), NAME)
    else:
        head = pack(head_st, (lst.mid_scan_ntp, len(o)), NAME)
    parts = [head]
    for i, c in enumerate(contours):
        parts.append(w[i:i + 1].tobytes())
        pts = np.zeros(len(c), _POINT)
        pts['x'], pts['y'] = c[:, 0], c[:, 1]
        parts.append(pts.tobytes())
        if has_props:
            parts.append(_U16.pack(len(props[i])) + encode_entries(props[i]))
    return b''.join(parts)


registry.register(OBJECTS_2225, 'ecu_objects_2225', decode_objects_2225,
                  record=EcuObjectList2225, encode=encode_objects, min_size=_H2225.size)
registry.register(OBJECTS_2280, 'ecu_objects_2280', decode_objects_2280,
                  record=EcuObjectList2280, encode=encode_objects, min_size=_H2225.size)
registry.register(OBJECTS_2281, 'ecu_objects_2281', decode_objects_2281,
                  record=EcuObjectList2281, encode=encode_objects, min_size=_H2281.size)
registry.register(REFERENCE_OBJECTS_2291, 'reference_objects_2291', decode_objects_2291,
                  record=ReferenceObjectList2291, encode=encode_objects, min_size=_H2281.size)
