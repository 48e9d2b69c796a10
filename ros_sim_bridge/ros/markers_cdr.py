"""The markers of :mod:`.markers`' builders (boxes, labels, line strips) as CDR bytes, for
writers of serialised messages (bags): each marker is an element template of
:mod:`.cdr_template`, cached by its shape (frame, namespace, lifetime, text, point count) and
the phase it lands at, filled with the same numbers the rclpy builders use
(:func:`.markers.box_rows`, colour rows), so :func:`marker_arrays` read back as
``MarkerArray(markers=boxes(...) + labels(...) + ...)`` does.

Usage::

    cdr = MarkerCdr()
    items = cdr.boxes(stamp, 'map', 'objects', ids, centers, sizes, yaw=yaw, colors=rgba)
    items += cdr.labels(stamp, 'map', 'labels', ids, positions, texts)
    msg, = marker_arrays([items])                   # a CdrMessage
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from visualization_msgs.msg import Marker

from .cdr_template import ElementTemplates, Slot, messages_with_elements, ragged, serialize
from .markers import WHITE, box_rows, colors_array
from .pointcloud_cdr import CdrMessage

TYPE_NAME = 'visualization_msgs/msg/MarkerArray'
_MARKER = 'visualization_msgs/msg/Marker'
_EMPTY = serialize(TYPE_NAME, {'markers': []})
_ZERO = Duration()


def marker_arrays(item_lists) -> list:
    """The MarkerArray of each list of items (from :class:`MarkerCdr`'s builders), in
    order, made at once (:func:`.cdr_template.messages_with_elements`)."""
    return [CdrMessage(TYPE_NAME, (m,)) for m in messages_with_elements(
        [_EMPTY] * len(item_lists), item_lists)]


class MarkerCdr:
    """Marker element templates by shape and phase; :meth:`boxes`, :meth:`labels` and
    :meth:`line_strips` take what the builders of :mod:`.markers` take (a stamp as
    (sec, nanosec), or one per marker as (n, 2) rows, and a frame instead of a header) and give
    (template, values, row) items, the values of all of a call's markers as rows."""

    def __init__(self, max_templates: int = 4096):
        self._at = ElementTemplates(_MARKER, max_templates).at

    @staticmethod
    def _base(frame: str, ns: str, mtype: int, lifetime: Optional[Duration]) -> dict:
        return {'header': {'stamp': Slot('stamp'), 'frame_id': frame}, 'ns': ns,
                'id': Slot('id'), 'type': mtype, 'action': Marker.ADD,
                'lifetime': lifetime or _ZERO, 'color': Slot('color')}

    @staticmethod
    def _rows(stamp, ids, colors) -> tuple:
        """(ids, values with the stamp and colour rows) of n markers."""
        ids = np.asarray(ids).reshape(-1)
        n = len(ids)
        return ids, {'stamp': np.broadcast_to(np.asarray(stamp, np.int64), (n, 2)), 'id': ids,
                     'color': colors_array(colors, n)}

    def boxes(self, stamp, frame: str, ns: str, ids: Sequence[int], centers, sizes, *,
              yaw=None, orientations=None, colors=WHITE, min_size: float = 0.0,
              lifetime: Optional[Duration] = None) -> list:
        """:func:`.markers.boxes`."""
        ids, values = self._rows(stamp, ids, colors)
        if not len(ids):
            return []
        values['pose'], values['scale'] = box_rows(len(ids), centers, sizes, yaw=yaw,
                                                   orientations=orientations,
                                                   min_size=min_size)
        at = self._at(('box', frame, ns, _key(lifetime)),
                      lambda: dict(self._base(frame, ns, Marker.CUBE, lifetime),
                                   pose=Slot('pose'), scale=Slot('scale')))
        return [(at, values, i) for i in range(len(ids))]

    def labels(self, stamp, frame: str, ns: str, ids: Sequence[int], positions,
               texts: Sequence[str], *, height: float = 0.6, colors=WHITE,
               lifetime: Optional[Duration] = None) -> list:
        """:func:`.markers.labels`."""
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
        return [(self._at(key + (text,), value(text)), values, i)
                for i, text in enumerate(texts)]

    def line_strips(self, stamp, frame: str, ns: str, ids: Sequence[int], polylines,
                    *, z: float = 0.0, width: float = 0.05, colors=WHITE,
                    lifetime: Optional[Duration] = None) -> list:
        """:func:`.markers.line_strips` of (k, 2) or (k, 3) arrays (2-D ones at ``z``; one
        point doubled)."""
        ids, values = self._rows(stamp, ids, colors)
        if not len(ids):
            return []
        lines = []
        for line in polylines:
            xy = np.asarray(line, np.float64)
            if xy.ndim != 2 or xy.shape[1] not in (2, 3):
                xy = xy.reshape(-1, 2)
            if xy.shape[1] == 2:
                xy = np.column_stack([xy, np.full(len(xy), float(z))])
            lines.append(np.repeat(xy, 2, axis=0) if len(xy) == 1 else xy)
        counts = np.array([len(xy) for xy in lines], np.intp)
        starts = np.cumsum(counts) - counts
        flat = np.concatenate(lines) if lines else np.zeros((0, 3))
        values['points'] = ragged(flat, starts)
        key = ('strip', frame, ns, _key(lifetime), float(width))

        def value(k):
            return lambda: dict(self._base(frame, ns, Marker.LINE_STRIP, lifetime),
                                pose={'orientation': {'w': 1.0}}, scale={'x': float(width)},
                                points=[Slot('points')] * k)
        return [(self._at(key + (k,), value(k)), values, i)
                for i, k in enumerate(counts.tolist())]


def _key(lifetime: Optional[Duration]) -> tuple:
    return (0, 0) if lifetime is None else (lifetime.sec, lifetime.nanosec)
