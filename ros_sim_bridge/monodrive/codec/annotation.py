"""The camera's annotation message (SUPPLEMENT §4.4: a camera with ``annotation.include_annotation``
sends two framed messages per sample, the image then this JSON), sans-IO.

Layout, as monoDrive's public clients read and write it (the C++ client's camera annotation
frame and 2-D/oriented box records, the Python client's annotation example; facts only):

* the message is a JSON **array**, one entry per annotated actor:
  ``{"name", "tags": [str], "2d_bounding_boxes": [...], "oriented_bounding_boxes": [...]}``;
* a 2-D box: ``{"name", "2d_bounding_box": [xmin, xmax, ymin, ymax]}`` in pixels of the image
  (origin top-left, x right, y down) — note the order, x pair first;
* an oriented box: ``{"name", "center", "extents", "orientation", "scale"}``; vectors as
  ``{"x", "y", "z"}`` objects or ``[x, y, z]`` arrays, the orientation a quaternion
  ``{"x", "y", "z", "w"}`` or ``[x, y, z, w]``; Unreal units and axes (cm, left-handed),
  extents are full sizes, as in the State sensor's ``oriented_bounding_box``
  (``payloads.STATE_BOX``).

Which frame the oriented boxes of a *camera* annotation are given in is not stated by any public
source; the node publishes them in the world (map) frame (configurable).  An entry (or box) with
missing or ill-typed fields is reported in ``problems`` and left out; the others are kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.monodrive.codec.control import json_float, parse_json

MESSAGE = 'Camera annotation'
UNKNOWN_LAYOUT = 'unknown_layout'
ACTOR_KEYS = ('2d_bounding_boxes', 'oriented_bounding_boxes')

# one row per 2-D box: the index of its actor, then the corners in pixels
BOX_2D = np.dtype([('actor', '<i4'), ('xmin', '<f8'), ('xmax', '<f8'), ('ymin', '<f8'),
                   ('ymax', '<f8')])
# one row per oriented box, monoDrive units and axes: centre and full sizes in cm (Unreal,
# left-handed), orientation quaternion x, y, z, w (Unreal), scale factors
ORIENTED_BOX = np.dtype([('actor', '<i4'), ('center', '<f8', 3), ('extents', '<f8', 3),
                         ('orientation', '<f8', 4), ('scale', '<f8', 3)])


@dataclass
class CameraAnnotation:
    actors: list[str]                       # actor names, indexed by the boxes' ``actor``
    tags: list[list[str]]
    boxes_2d: np.ndarray                    # BOX_2D
    names_2d: list[str]                     # each 2-D box's own name (a part of its actor)
    boxes_3d: np.ndarray                    # ORIENTED_BOX
    names_3d: list[str]
    problems: list[CodecError] = field(default_factory=list)


def is_annotation(value: Any) -> bool:
    """True for the annotation layout: a JSON array whose entries are objects carrying
    ``2d_bounding_boxes`` or ``oriented_bounding_boxes`` (an empty array: nothing in view)."""
    return isinstance(value, list) and all(
        isinstance(e, dict) and any(k in e for k in ACTOR_KEYS) for e in value)


def decode_annotation(payload) -> CameraAnnotation:
    """The annotation message → CameraAnnotation; CodecError (kind ``unknown_layout``) when the
    JSON is not that layout, ``bad_json`` / ``non_standard_json`` when it is not JSON."""
    value = parse_json(payload, MESSAGE)
    if not is_annotation(value):
        raise CodecError(MESSAGE, 'not the annotation layout (an array of actors with '
                         '2d_bounding_boxes / oriented_bounding_boxes)', kind=UNKNOWN_LAYOUT)
    return annotation_from_value(value)


#: boxes of each kind (2-D, oriented) decoded per annotation at most; the rest are counted
MAX_BOXES = 256


def annotation_from_value(value: list, max_boxes: int = MAX_BOXES) -> CameraAnnotation:
    """The boxes of the first ``max_boxes`` of each kind (a problem of kind ``oversized``
    says how many more there were: a huge message costs a bounded time, never the stream)."""
    actors, tags, rows2, names2, rows3, names3, problems = [], [], [], [], [], [], []
    dropped = 0
    for i, entry in enumerate(value):
        where = f'[{i}]'
        actors.append(str(entry.get('name', '')))
        t = entry.get('tags')
        tags.append([str(x) for x in t] if isinstance(t, list) else [])
        boxes_2d = _list(entry, '2d_bounding_boxes', where, problems)
        boxes_3d = _list(entry, 'oriented_bounding_boxes', where, problems)
        room_2d, room_3d = max(0, max_boxes - len(rows2)), max(0, max_boxes - len(rows3))
        dropped += max(0, len(boxes_2d) - room_2d) + max(0, len(boxes_3d) - room_3d)
        boxes_2d, boxes_3d = boxes_2d[:room_2d], boxes_3d[:room_3d]
        for j, box in enumerate(boxes_2d):
            try:
                corners = _numbers(box.get('2d_bounding_box') if isinstance(box, dict) else None,
                                   4, f'{where}.2d_bounding_boxes[{j}].2d_bounding_box')
            except CodecError as err:
                problems.append(err)
                continue
            rows2.append((i, *corners))
            names2.append(str(box.get('name', '')))
        for j, box in enumerate(boxes_3d):
            at = f'{where}.oriented_bounding_boxes[{j}]'
            try:
                if not isinstance(box, dict):
                    raise CodecError(MESSAGE, 'not an object', field=at)
                center = _vector(box.get('center'), 3, f'{at}.center')
                extents = _vector(box.get('extents'), 3, f'{at}.extents')
                orientation = _vector(box.get('orientation'), 4, f'{at}.orientation')
                scale = (1.0, 1.0, 1.0) if box.get('scale') is None else \
                    _vector(box.get('scale'), 3, f'{at}.scale')
            except CodecError as err:
                problems.append(err)
                continue
            rows3.append((i, center, extents, orientation, scale))
            names3.append(str(box.get('name', '')))
    if dropped:
        problems.append(CodecError(MESSAGE, f'{dropped} boxes beyond the first {max_boxes} of '
                                   'each kind left out', field='boxes', kind='oversized'))
    return CameraAnnotation(actors, tags, np.array(rows2, BOX_2D), names2,
                            np.array(rows3, ORIENTED_BOX), names3, problems)


def _list(entry: dict, key: str, where: str, problems: list) -> list:
    v = entry.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        problems.append(CodecError(MESSAGE, f'{key} is not an array', field=f'{where}.{key}'))
        return []
    return v


def _numbers(v, n: int, where: str, message: str = MESSAGE) -> tuple:
    if not isinstance(v, list) or len(v) != n or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool)
            and math.isfinite(json_float(x)) for x in v):   # (1e400 is inf: refused)
        raise CodecError(message, f'expected {n} finite numbers, got {v!r:.120}', field=where)
    return tuple(json_float(x) for x in v)


def vector_of(v, n: int, where: str, message: str = MESSAGE) -> tuple:
    """``{"x", "y", "z"(, "w")}`` or an array of ``n`` finite numbers, else CodecError."""
    if isinstance(v, dict):
        v = [v.get(k) for k in 'xyzw'[:n]]
    return _numbers(v, n, where, message)


_vector = vector_of


def encode_annotation(actors: list[dict]) -> bytes:
    """The JSON of an annotation message (for the emulator and tests)."""
    from ros_sim_bridge.monodrive.codec.control import dumps
    return dumps(actors, MESSAGE).encode('utf-8')


__all__ = ['BOX_2D', 'ORIENTED_BOX', 'CameraAnnotation', 'is_annotation', 'decode_annotation',
           'annotation_from_value', 'encode_annotation']
