"""ibeo LUX object list, data type 0x2221 (spec §4; little-endian).

Body = scan start time (NTP64) + object count (u16) + objects; each object is a 58-byte fixed
part followed by its own contour list (Point2D int16 cm).  Every field is decoded in the
unit the spec's table names (cm, cm/s, ms; the orientation's 1/100 deg fixed point → deg) into
one :data:`OBJECT_DTYPE` array; the contours, (k, 2) in cm, in one array (:class:`.contours.
Contours`).  The factors to SI
are in :mod:`.units` (docs/development.md, "Units rule"); ``ibeo/ros/conversions.py`` applies them.

Real-world rules (SUPPLEMENT §3.3): orientation is 1/100 deg (spec v1.32); a velocity
component 0x8000 marks the vector invalid (→ NaN and ``*_valid`` False); a contour count of
0xFFFF means one point; classes beyond 0..6 are kept as numbers.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ros_sim_bridge.core.binary import TRUNCATED, CodecError, pack, unpack_from
from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from . import object_walk, registry
from .contours import Contours

DATA_TYPE = registry.OBJECTS
NAME = 'ibeo_objects'
INVALID = -0x8000                  # 0x8000 as int16
SINGLE_POINT_COUNT = 0xFFFF        # a contour count meaning "one point"

_LIST_HEADER = struct.Struct('<QH')

#: Wire layout of an object's fixed part (§4 "Object: content"), 58 bytes.
WIRE_OBJECT_DTYPE = np.dtype([
    ('id', '<u2'), ('age', '<u2'), ('prediction_age', '<u2'), ('relative_timestamp', '<u2'),
    ('reference_x', '<i2'), ('reference_y', '<i2'),
    ('reference_sigma_x', '<i2'), ('reference_sigma_y', '<i2'),
    ('closest_x', '<i2'), ('closest_y', '<i2'),
    ('bbox_center_x', '<i2'), ('bbox_center_y', '<i2'),
    ('bbox_width', '<u2'), ('bbox_length', '<u2'),          # width = Y extent, length = X extent
    ('box_center_x', '<i2'), ('box_center_y', '<i2'),
    ('box_size_x', '<u2'), ('box_size_y', '<u2'),
    ('box_orientation', '<i2'),                             # 1/100 deg
    ('abs_velocity_x', '<i2'), ('abs_velocity_y', '<i2'),
    ('abs_velocity_sigma_x', '<u2'), ('abs_velocity_sigma_y', '<u2'),
    ('rel_velocity_x', '<i2'), ('rel_velocity_y', '<i2'),
    ('classification', '<u2'), ('classification_age', '<u2'),
    ('classification_certainty', '<u2'), ('contour_count', '<u2')])
assert WIRE_OBJECT_DTYPE.itemsize == 58
WIRE_POINT2D_DTYPE = np.dtype([('x', '<i2'), ('y', '<i2')])

#: Decoded objects, the spec's units: positions/sizes/sigmas cm, velocities cm/s,
#: relative_time ms (after scan start), box_orientation deg (wire: 1/100 deg); SI factors in
#: :data:`.units.OBJECT_TO_SI`.  bbox_size_x is the bounding box length (X extent), bbox_size_y
#: its width (Y extent).  Invalid velocities are NaN with ``*_valid`` False.  Fields aligned
#: (padding between): numpy's arithmetic on unaligned float64 fields is several times slower.
OBJECT_DTYPE = np.dtype([
    ('id', 'u2'), ('age', 'u2'), ('prediction_age', 'u2'), ('relative_time', 'f8'),
    ('reference_x', 'f8'), ('reference_y', 'f8'),
    ('reference_sigma_x', 'f8'), ('reference_sigma_y', 'f8'),
    ('closest_x', 'f8'), ('closest_y', 'f8'),
    ('bbox_center_x', 'f8'), ('bbox_center_y', 'f8'), ('bbox_size_x', 'f8'), ('bbox_size_y', 'f8'),
    ('box_center_x', 'f8'), ('box_center_y', 'f8'), ('box_size_x', 'f8'), ('box_size_y', 'f8'),
    ('box_orientation', 'f8'),
    ('abs_velocity_x', 'f8'), ('abs_velocity_y', 'f8'),
    ('abs_velocity_sigma_x', 'f8'), ('abs_velocity_sigma_y', 'f8'), ('abs_velocity_valid', '?'),
    ('rel_velocity_x', 'f8'), ('rel_velocity_y', 'f8'), ('rel_velocity_valid', '?'),
    ('classification', 'u2'), ('classification_age', 'u2'), ('classification_certainty', 'u2'),
    ('contour_count', 'u2')], align=True)

CLASSIFICATIONS = {0: 'unclassified', 1: 'unknown_small', 2: 'unknown_big', 3: 'pedestrian',
                   4: 'bike', 5: 'car', 6: 'truck',
                   12: 'bicycle'}  # 12: Ibeo SDK, not in the document (SUPPLEMENT §3.3)


def classification_name(value: int) -> str:
    """Class name, or ``class_<n>`` for numbers the document reserves."""
    return CLASSIFICATIONS.get(int(value), f'class_{int(value)}')


@dataclass(frozen=True, eq=False)
class LuxObjectList:
    """One 0x2221 message: ``objects`` (OBJECT_DTYPE) and ``contours[i]`` ((k, 2) cm) of each
    (decoded lists: a :class:`Contours`; any sequence of (k, 2) arrays when encoding)."""
    scan_start_ntp: int
    objects: np.ndarray = field(default_factory=lambda: np.zeros(0, OBJECT_DTYPE))
    contours: Sequence[np.ndarray] = ()

    DATA_TYPE = DATA_TYPE

    @property
    def scan_start_ns(self) -> int:
        return ntp64_to_unix_ns(self.scan_start_ntp)

    def __len__(self) -> int:
        return len(self.objects)


def decode_objects(body, header=None) -> LuxObjectList:
    """Decode a 0x2221 body (§4).  TRUNCATED when an object or contour runs past the body."""
    start, count = unpack_from(_LIST_HEADER, body, 0, NAME, 'object_header')
    view = bytes(body)
    walked = object_walk.walk(view, _LIST_HEADER.size, count, WIRE_OBJECT_DTYPE.itemsize,
                              _CNT_AT, 2, False, SINGLE_POINT_COUNT, 4)
    if walked is None:
        return _decode_walking(view, start, count)
    offsets, counts, wire, points, end = walked
    n = len(view)
    if len(offsets) < count:
        raise _object_cut(len(offsets), count, end, n)
    if end > n:
        raise _contour_cut(count, end, n)
    objects = _from_wire(wire.reshape(-1).view(WIRE_OBJECT_DTYPE), counts)
    pts = points.view(WIRE_POINT2D_DTYPE)
    xy = np.empty((len(pts), 2), np.float64)
    xy[:, 0], xy[:, 1] = pts['x'], pts['y']
    return LuxObjectList(start, objects, Contours(xy, counts))


_CNT_AT = WIRE_OBJECT_DTYPE.fields['contour_count'][1]


def _object_cut(i: int, count: int, pos: int, n: int) -> CodecError:
    """Object ``i`` of ``count`` at ``pos`` runs past the body's ``n`` bytes (TRUNCATED)."""
    return CodecError(NAME, f'object {i} of {count} needs bytes {pos}..{pos + 58}, have {n}',
                      field=f'objects[{i}]', offset=pos, kind=TRUNCATED)


def _contour_cut(count: int, end: int, n: int) -> CodecError:
    """The last object's contour (of ``count`` objects) ends at ``end``, past ``n``."""
    return CodecError(NAME, f'contour of object {count - 1} needs bytes up to {end}, have {n}',
                      field=f'objects[{count - 1}].contour', offset=n, kind=TRUNCATED)


def _decode_walking(view: bytes, start: int, count: int) -> LuxObjectList:
    """:func:`decode_objects` without the compiled walk: the offsets in a Python loop (two
    byte reads an object)."""
    offsets, counts = [], []
    pos = _LIST_HEADER.size
    n = len(view)
    cnt_at = _CNT_AT
    for i in range(count):
        if pos + 58 > n:
            raise _object_cut(i, count, pos, n)
        k = view[pos + cnt_at] | (view[pos + cnt_at + 1] << 8)
        if k == SINGLE_POINT_COUNT:
            k = 1
        offsets.append(pos)
        counts.append(k)
        pos += 58 + 4 * k
    if pos > n:
        raise _contour_cut(count, pos, n)
    offsets = np.asarray(offsets, np.int64)
    counts = np.asarray(counts, np.int64)
    raw = np.frombuffer(view, np.uint8)
    if count and (np.diff(offsets) == 58 + 4 * counts[0]).all():   # equal contours: a view
        wire = np.ndarray(count, WIRE_OBJECT_DTYPE, view, offsets[0], (58 + 4 * counts[0],))
    else:
        wire = np.frombuffer(b''.join([view[o:o + 58] for o in offsets.tolist()]),
                             WIRE_OBJECT_DTYPE)
    objects = _from_wire(wire, counts)
    # All contour points in one gather; each object's contour is a view made on access.
    total = int(counts.sum())
    if total:
        starts = np.repeat(offsets + 58, counts)
        within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        idx = (starts + 4 * within)[:, None] + np.arange(4)
        pts = raw[idx].reshape(-1).view(WIRE_POINT2D_DTYPE)
        xy = np.stack([pts['x'], pts['y']], axis=1).astype(np.float64)
    else:
        xy = np.zeros((0, 2), np.float64)
    return LuxObjectList(start, objects, Contours(xy, counts))


def _from_wire(w: np.ndarray, counts: np.ndarray) -> np.ndarray:
    o = np.zeros(len(w), OBJECT_DTYPE)
    for name in ('id', 'age', 'prediction_age', 'classification', 'classification_age',
                 'classification_certainty'):
        o[name] = w[name]
    o['relative_time'] = w['relative_timestamp']
    for name in ('reference_x', 'reference_y', 'reference_sigma_x', 'reference_sigma_y',
                 'closest_x', 'closest_y', 'bbox_center_x', 'bbox_center_y', 'box_center_x',
                 'box_center_y', 'box_size_x', 'box_size_y'):
        o[name] = w[name]
    o['bbox_size_x'] = w['bbox_length']
    o['bbox_size_y'] = w['bbox_width']
    np.multiply(w['box_orientation'], 0.01, out=o['box_orientation'])   # 1/100 deg → deg
    for kind in ('abs', 'rel'):
        vx, vy = w[f'{kind}_velocity_x'], w[f'{kind}_velocity_y']
        valid = (vx != INVALID) & (vy != INVALID)
        o[f'{kind}_velocity_valid'] = valid
        o[f'{kind}_velocity_x'] = vx
        o[f'{kind}_velocity_y'] = vy
        if not valid.all():
            invalid = ~valid
            o[f'{kind}_velocity_x'][invalid] = np.nan
            o[f'{kind}_velocity_y'][invalid] = np.nan
    # Sigmas are passed through even when the velocity is invalid (the spec says nothing).
    o['abs_velocity_sigma_x'] = w['abs_velocity_sigma_x']
    o['abs_velocity_sigma_y'] = w['abs_velocity_sigma_y']
    o['contour_count'] = counts
    return o


def _cm(values, name: str, signed: bool = True) -> np.ndarray:
    v = np.rint(np.asarray(values, np.float64))
    low, high = (-0x8000, 0x7FFF) if signed else (0, 0xFFFF)
    if np.any(~np.isfinite(v)) or np.any((v < low) | (v > high)):
        raise CodecError(NAME, f'value outside the {"int16" if signed else "uint16"} cm range',
                         field=name)
    return v.astype(np.int64)


def encode_objects(lst: LuxObjectList, *, single_point_as_ffff: bool = False) -> bytes:
    """The 0x2221 body of ``lst`` (the spec's units, see :data:`OBJECT_DTYPE`).  Invalid/NaN velocities go out as 0x8000; with
    ``single_point_as_ffff`` a one-point contour is announced as 0xFFFF (as some firmware does)."""
    o = np.asarray(lst.objects)
    contours = [np.asarray(c, np.float64).reshape(-1, 2) for c in lst.contours]
    if len(contours) != len(o):
        raise CodecError(NAME, f'{len(o)} objects but {len(contours)} contours', field='contours')
    w = np.zeros(len(o), WIRE_OBJECT_DTYPE)
    for name in ('id', 'age', 'prediction_age', 'classification', 'classification_age',
                 'classification_certainty'):
        w[name] = o[name]
    w['relative_timestamp'] = np.rint(o['relative_time'])
    for name in ('reference_x', 'reference_y', 'reference_sigma_x', 'reference_sigma_y',
                 'closest_x', 'closest_y', 'bbox_center_x', 'bbox_center_y', 'box_center_x',
                 'box_center_y'):
        w[name] = _cm(o[name], name)
    w['box_size_x'] = _cm(o['box_size_x'], 'box_size_x', False)
    w['box_size_y'] = _cm(o['box_size_y'], 'box_size_y', False)
    w['bbox_length'] = _cm(o['bbox_size_x'], 'bbox_size_x', False)
    w['bbox_width'] = _cm(o['bbox_size_y'], 'bbox_size_y', False)
    w['box_orientation'] = np.rint(o['box_orientation'] * 100.0)
    for kind in ('abs', 'rel'):
        valid = o[f'{kind}_velocity_valid'] & np.isfinite(o[f'{kind}_velocity_x']) \
            & np.isfinite(o[f'{kind}_velocity_y'])
        for axis in ('x', 'y'):
            name = f'{kind}_velocity_{axis}'
            w[name] = np.where(valid, _cm(np.where(valid, o[name], 0.0), name), INVALID)
    for axis in ('x', 'y'):
        name = f'abs_velocity_sigma_{axis}'
        sig = np.where(np.isfinite(o[name]), o[name], 0.0)
        w[name] = _cm(sig, name, False)
    counts = np.array([len(c) for c in contours], np.int64)
    if np.any(counts > 0xFFFE):
        raise CodecError(NAME, 'contour too long', field='contours')
    w['contour_count'] = np.where((counts == 1) & single_point_as_ffff, SINGLE_POINT_COUNT, counts)
    parts = [pack(_LIST_HEADER, (lst.scan_start_ntp, len(o)), NAME)]
    for i, c in enumerate(contours):
        parts.append(w[i:i + 1].tobytes())
        if len(c):
            pts = np.zeros(len(c), WIRE_POINT2D_DTYPE)
            pts['x'] = _cm(c[:, 0], 'contour.x')
            pts['y'] = _cm(c[:, 1], 'contour.y')
            parts.append(pts.tobytes())
    return b''.join(parts)


def make_objects(count: int) -> np.ndarray:
    """A zeroed OBJECT_DTYPE array (velocities valid, 0 cm/s) to fill in before encoding."""
    o = np.zeros(count, OBJECT_DTYPE)
    o['abs_velocity_valid'] = True
    o['rel_velocity_valid'] = True
    return o


registry.register(DATA_TYPE, 'lux_objects', decode_objects, record=LuxObjectList,
                  encode=encode_objects, min_size=_LIST_HEADER.size)
