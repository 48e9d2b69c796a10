"""``visualization_msgs/Marker`` as CDR bytes, the one marker builder of every source.

Two ways to the same bytes, one description of each marker (:func:`marker` and its shapes
:func:`box`, :func:`label`, :func:`sphere`, :func:`delete`, :func:`delete_all`: value trees of
:mod:`.cdr_template`, numbers left as slots):

* a whole ``MarkerArray`` template (:func:`array_template`) for a topic whose markers keep
  their shape from message to message (the same objects, the same texts): one template per
  shape, cached by the caller, filled per message (or per block of messages) from numpy rows;
* element templates (:class:`MarkerCdr`: :meth:`~MarkerCdr.boxes`, :meth:`~MarkerCdr.labels`,
  :meth:`~MarkerCdr.line_strips`), cached by their shape (frame, namespace, lifetime, text,
  point count) and the phase they land at, each call's markers one
  :class:`~.cdr_template.Run` (their numbers as rows), joined by :func:`marker_arrays`
  without a loop over the markers, for streams whose markers come and go.

The numbers are worked out once for a whole array (:func:`box_rows`: poses from centres and
yaw or quaternions, minimum sizes; :func:`colors_array`).

Usage::

    tmpl = array_template([box('map', 'objects')] * n + [label('map', 'labels', t) for t in texts])
    cdr = tmpl.fill(stamp=(sec, nanosec), id=ids[:, None], pose=poses, scale=scales,
                    color=rgba, position=tops)

    cdr = MarkerCdr()
    items = [cdr.boxes(stamp, 'map', 'objects', ids, centers, sizes, yaw=yaw, colors=rgba),
             cdr.labels(stamp, 'map', 'labels', ids, positions, texts)]
    msg, = marker_arrays([items])                   # a CdrMessage
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np
from builtin_interfaces.msg import Duration

from .cdr_template import (CdrTemplate, ElementTemplates, Run, Slot, build,
                           messages_with_elements, ragged, serialize, small_unique)
from .pointcloud_cdr import CdrMessage

TYPE_NAME = 'visualization_msgs/msg/MarkerArray'
_MARKER = 'visualization_msgs/msg/Marker'
_EMPTY = serialize(TYPE_NAME, {'markers': []})
#: an empty MarkerArray's bytes: the head of :func:`.cdr_template.messages_with_elements`
EMPTY_ARRAY = _EMPTY
_ZERO = Duration()
WHITE = (1.0, 1.0, 1.0, 1.0)
_STAMP = Slot('stamp')


class Marker:
    """visualization_msgs/Marker's constants used here (Marker.msg), without importing the
    message package (4 ms of a command's start-up)."""
    ARROW, CUBE, SPHERE, LINE_STRIP, TEXT_VIEW_FACING = 0, 1, 2, 4, 9
    ADD, DELETE, DELETEALL = 0, 2, 3


ADD, DELETE, DELETEALL = Marker.ADD, Marker.DELETE, Marker.DELETEALL
ARROW, CUBE, SPHERE, TEXT = Marker.ARROW, Marker.CUBE, Marker.SPHERE, Marker.TEXT_VIEW_FACING


def duration(seconds: float) -> Duration:
    """A marker lifetime (0 = forever)."""
    seconds = max(float(seconds), 0.0)
    return Duration(sec=int(seconds), nanosec=int(round((seconds % 1.0) * 1e9)) % 1_000_000_000)


def colors_array(colors, n: int) -> np.ndarray:
    """(n, 4) float RGBA rows from one RGBA tuple or n rows (float32 rows kept as they are:
    ColorRGBA's type)."""
    c = np.asarray(colors)
    if c.dtype != np.float32:
        c = c.astype(np.float64)
    return np.broadcast_to(c, (n, 4)) if c.ndim == 1 else c.reshape(n, 4)


def stamp_rows(stamp, n: int) -> np.ndarray:
    """(n, 2) int64 rows of the stamps of n markers from one (sec, nanosec) (a read-only view
    of that row, stride 0) or n rows."""
    s = np.asarray(stamp, np.int64)
    if s.shape == (n, 2):
        return s
    if s.shape == (2,) and n and s.flags.c_contiguous:   # (broadcast_to, in fewer steps)
        rows = np.ndarray((n, 2), np.int64, s, 0, (0, 8))
        rows.flags.writeable = False
        return rows
    return np.broadcast_to(s, (n, 2))


def box_rows(n: int, centers, sizes, *, yaw=None, orientations=None,
             min_size: float = 0.0) -> tuple:
    """The numbers of n boxes: (n, 7) poses (x, y, z, qx, qy, qz, qw, as
    ``geometry_msgs/Pose`` lays them out) and (n, 3) scales; the orientation either ``yaw``
    (n,) rad about z or ``orientations`` (n, 4) quaternions w, x, y, z (neither: axis-aligned),
    sizes below ``min_size`` raised to it (a flat box stays visible)."""
    if yaw is not None and orientations is not None:
        raise ValueError('boxes: give yaw or orientations, not both')
    poses = np.empty((n, 7))
    poses[:, :3] = np.asarray(centers, np.float64).reshape(n, 3)
    if yaw is not None and orientations is None:   # frames.quat_from_yaw, in place
        half = np.multiply(np.asarray(yaw, np.float64).reshape(n), 0.5)
        poses[:, 3:5] = 0.0
        poses[:, 5], poses[:, 6] = np.sin(half), np.cos(half)
        return poses, np.maximum(np.asarray(sizes, np.float64).reshape(n, 3), min_size)
    if orientations is not None:
        q = np.asarray(orientations, np.float64).reshape(n, 4)
    else:
        q = np.array([1.0, 0.0, 0.0, 0.0])
    poses[:, 3:6], poses[:, 6] = q[..., 1:], q[..., 0]
    return poses, np.maximum(np.asarray(sizes, np.float64).reshape(n, 3), min_size)


def _rgba(color) -> dict:
    """A colour given as an RGBA tuple → its value tree; a Slot stays one."""
    return color if isinstance(color, Slot) else dict(zip('rgba', map(float, color)))


def marker(frame: str, ns: str, mtype: int = CUBE, *, id=Slot('id'), action: int = ADD,
           stamp=_STAMP, lifetime: Optional[Duration] = None, **fields) -> dict:
    """The value tree of one Marker (:mod:`.cdr_template`): header (``stamp`` a slot or a
    (sec, nanosec) value tree), ns, id, type, action, lifetime, and any other ``fields``
    (pose, scale, color, text, points) as given."""
    tree = {'header': {'stamp': stamp, 'frame_id': frame}, 'ns': ns, 'id': id,
            'type': mtype, 'action': action, **fields}
    if lifetime is not None:
        tree['lifetime'] = lifetime
    return tree


def box(frame: str, ns: str, *, id=Slot('id'), pose=Slot('pose'), scale=Slot('scale'),
        color=Slot('color'), **kw) -> dict:
    """A CUBE: ``pose`` (7: x, y, z, qx, qy, qz, qw) and ``scale`` (3) slots (or values)."""
    return marker(frame, ns, CUBE, id=id, pose=pose, scale=scale, color=_rgba(color), **kw)


def sphere(frame: str, ns: str, diameter: float, color, *, id=Slot('id'),
           position=Slot('position'), **kw) -> dict:
    """A SPHERE of ``diameter`` m at ``position`` (orientation identity)."""
    d = float(diameter)
    return marker(frame, ns, SPHERE, id=id, pose={'position': position},
                  scale={'x': d, 'y': d, 'z': d}, color=_rgba(color), **kw)


def label(frame: str, ns: str, text: str, *, id=Slot('id'), position=Slot('position'),
          height: float = 0.6, color=WHITE, **kw) -> dict:
    """A TEXT_VIEW_FACING marker of ``text``, ``height`` m tall, at ``position``."""
    return marker(frame, ns, TEXT, id=id, pose={'position': position},
                  scale={'x': 0.0, 'y': 0.0, 'z': float(height)}, color=_rgba(color),
                  text=text, **kw)


def arrow(frame: str, ns: str, *, id=Slot('id'), start=Slot('start'), end=Slot('end'),
          shaft: float = 0.1, head: float = 0.25, head_length: float = 0.3,
          color=Slot('color'), **kw) -> dict:
    """An ARROW from ``start`` to ``end`` (points), ``shaft``/``head`` diameters and
    ``head_length`` in m."""
    return marker(frame, ns, ARROW, id=id, pose={'orientation': {'w': 1.0}},
                  scale={'x': float(shaft), 'y': float(head), 'z': float(head_length)},
                  color=_rgba(color), points=[start, end], **kw)


def delete(frame: str, ns: str, id, **kw) -> dict:
    """DELETE of marker (ns, id)."""
    return marker(frame, ns, 0, id=id, action=DELETE, **kw)


def delete_all(frame: str, ns: str = '', **kw) -> dict:
    """DELETEALL: clears ``ns`` (every namespace of the topic when ns is empty)."""
    return marker(frame, ns, 0, id=0, action=DELETEALL, **kw)


def array_template(items: list) -> CdrTemplate:
    """The whole-``MarkerArray`` template of these markers (value trees above)."""
    return build(TYPE_NAME, {'markers': items})


def marker_arrays(item_lists) -> list:
    """The MarkerArray of each list of items (from :class:`MarkerCdr`'s builders), in
    order, made at once (:func:`.cdr_template.messages_with_elements`)."""
    return [CdrMessage(TYPE_NAME, (m,)) for m in messages_with_elements(
        [_EMPTY] * len(item_lists), item_lists)]


class MarkerCdr:
    """Marker element templates by shape and phase; :meth:`boxes`, :meth:`labels` and
    :meth:`line_strips` take a stamp as (sec, nanosec), or one per marker as (n, 2) rows, a
    frame, a namespace and n rows of ids and numbers, and give a
    :class:`~.cdr_template.Run` of the markers (a sequence of (template, values, row)
    items; ``[]`` for none), the values of all of a call's markers as rows."""

    def __init__(self, max_templates: int = 4096):
        self._at = ElementTemplates(_MARKER, max_templates).at

    @staticmethod
    def _base(frame: str, ns: str, mtype: int, lifetime: Optional[Duration]) -> dict:
        return marker(frame, ns, mtype, lifetime=lifetime or _ZERO, color=Slot('color'))

    @staticmethod
    def _rows(stamp, ids, colors) -> tuple:
        """(ids, values with the stamp and colour rows) of n markers."""
        ids = np.asarray(ids).reshape(-1)
        n = len(ids)
        return ids, {'stamp': stamp_rows(stamp, n), 'id': ids,
                     'color': colors_array(colors, n)}

    def boxes(self, stamp, frame: str, ns: str, ids: Sequence[int], centers, sizes, *,
              yaw=None, orientations=None, colors=WHITE, min_size: float = 0.0,
              lifetime: Optional[Duration] = None) -> list:
        """CUBEs: ``centers`` (n, 3), ``sizes`` (n, 3) full extents, orientation as
        :func:`box_rows`, ``colors`` one RGBA or (n, 4)."""
        ids, values = self._rows(stamp, ids, colors)
        if not len(ids):
            return []
        values['pose'], values['scale'] = box_rows(len(ids), centers, sizes, yaw=yaw,
                                                   orientations=orientations,
                                                   min_size=min_size)
        at = self._at(('box', frame, ns, _key(lifetime)),
                      lambda: dict(self._base(frame, ns, Marker.CUBE, lifetime),
                                   pose=Slot('pose'), scale=Slot('scale')))
        return Run([at], np.zeros(len(ids), np.intp), values)

    def labels(self, stamp, frame: str, ns: str, ids: Sequence[int], positions,
               texts: Sequence[str], *, height: float = 0.6, colors=WHITE,
               lifetime: Optional[Duration] = None) -> list:
        """TEXT_VIEW_FACING markers at ``positions`` (n, 3), text ``height`` m."""
        ids, values = self._rows(stamp, ids, colors)
        n = len(ids)
        if not n:
            return []
        values['position'] = np.asarray(positions, np.float64).reshape(n, 3)
        key = ('label', frame, ns, _key(lifetime), float(height))

        def value(text):
            return lambda: dict(self._base(frame, ns, Marker.TEXT_VIEW_FACING, lifetime),
                                pose={'position': Slot('position')},
                                scale={'x': 0.0, 'y': 0.0, 'z': float(height)}, text=text)
        shapes: dict = {}
        shape = [shapes.setdefault(text, len(shapes)) for text in texts]
        return Run([self._at(key + (text,), value(text)) for text in shapes], shape, values)

    def arrows(self, stamp, frame: str, ns: str, ids: Sequence[int], starts, ends, *,
               shaft: float = 0.1, head: float = 0.25, head_length: float = 0.3, colors=WHITE,
               lifetime: Optional[Duration] = None) -> list:
        """ARROWs from ``starts`` to ``ends`` (n, 3) m (:func:`arrow`)."""
        ids, values = self._rows(stamp, ids, colors)
        n = len(ids)
        if not n:
            return []
        values['start'] = np.asarray(starts, np.float64).reshape(n, 3)
        values['end'] = np.asarray(ends, np.float64).reshape(n, 3)
        at = self._at(('arrow', frame, ns, _key(lifetime), float(shaft), float(head),
                       float(head_length)),
                      lambda: arrow(frame, ns, shaft=shaft, head=head, head_length=head_length,
                                    lifetime=lifetime or _ZERO))
        return Run([at], np.zeros(n, np.intp), values)

    def deletes(self, stamp, frame: str, keys: Iterable[tuple]) -> list:
        """DELETEs of (namespace, id) ``keys``, in sorted order."""
        keys = sorted(keys)
        if not keys:
            return []
        values = {'stamp': stamp_rows(stamp, len(keys)),
                  'id': np.array([mid for _, mid in keys], np.int64)}
        spaces: dict = {}
        shape = [spaces.setdefault(ns, len(spaces)) for ns, _ in keys]
        return Run([self._at(('delete', frame, ns), lambda ns=ns: delete(frame, ns, Slot('id')))
                    for ns in spaces], shape, values)

    def line_strips(self, stamp, frame: str, ns: str, ids: Sequence[int], polylines,
                    *, z: float = 0.0, width: float = 0.05, colors=WHITE,
                    lifetime: Optional[Duration] = None) -> list:
        """LINE_STRIPs of (k, 2) or (k, 3) arrays (2-D ones at ``z``; a one-point polyline
        doubled: a strip needs two points)."""
        lines = []
        for line in polylines:
            xy = np.asarray(line, np.float64)
            if xy.ndim != 2 or xy.shape[1] not in (2, 3):
                xy = xy.reshape(-1, 2)
            if xy.shape[1] == 2:
                xy = np.column_stack([xy, np.full(len(xy), float(z))])
            lines.append(xy)
        counts = np.array([len(xy) for xy in lines], np.intp)
        flat = np.concatenate(lines) if lines else np.zeros((0, 3))
        return self.line_strips_flat(stamp, frame, ns, ids, flat, counts, width=width,
                                     colors=colors, lifetime=lifetime)

    def line_strips_flat(self, stamp, frame: str, ns: str, ids: Sequence[int], points,
                         counts, *, width: float = 0.05, colors=WHITE,
                         lifetime: Optional[Duration] = None) -> Run:
        """:meth:`line_strips` of polylines given as one (K, 3) array of their points one
        after another and each one's point count (no loop over the polylines)."""
        ids, values = self._rows(stamp, ids, colors)
        if not len(ids):
            return []
        points, counts = np.asarray(points, np.float64), np.asarray(counts, np.intp)
        single = counts == 1
        if single.any():                    # a strip needs two points: a one-point one doubled
            points = np.repeat(points, np.repeat(np.where(single, 2, 1), counts), axis=0)
            counts = np.where(single, 2, counts)
        values['points'] = ragged(points, np.cumsum(counts) - counts)
        key = ('strip', frame, ns, _key(lifetime), float(width))

        def value(k):
            return lambda: dict(self._base(frame, ns, Marker.LINE_STRIP, lifetime),
                                pose={'orientation': {'w': 1.0}}, scale={'x': float(width)},
                                points=[Slot('points')] * k)
        lengths, shape = small_unique(counts)
        return Run([self._at(key + (k,), value(k)) for k in lengths.tolist()], shape, values)


def _key(lifetime: Optional[Duration]) -> tuple:
    return (0, 0) if lifetime is None else (lifetime.sec, lifetime.nanosec)


class MarkerTracker:
    """DELETE bookkeeping for a topic whose markers are updated incrementally: :meth:`update`
    gives DELETE items (:meth:`MarkerCdr.deletes`) for every (namespace, id) the previous
    update showed and this one does not, to put before the new markers; :meth:`clear`
    deletes everything shown (e.g. when the link drops)."""

    def __init__(self):
        #: (namespace, id) of every marker the last update showed
        self.shown: set = set()

    def update(self, cdr: MarkerCdr, stamp, frame: str, keys: Iterable[tuple]) -> list:
        now = set(keys)
        gone, self.shown = self.shown - now, now
        return cdr.deletes(stamp, frame, gone)

    def clear(self, cdr: MarkerCdr, stamp, frame: str) -> list:
        gone, self.shown = self.shown, set()
        return cdr.deletes(stamp, frame, gone)
