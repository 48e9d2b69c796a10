"""The markers of :mod:`.markers`' builders (boxes, labels, line strips) as CDR bytes, for
writers of serialised messages (bags): each marker is an element template of
:mod:`.cdr_template`, cached by its shape (frame, namespace, lifetime, text, point count) and
the phase it lands at, filled with the same numbers the rclpy builders use
(:func:`.markers.box_rows`, colour rows), so :func:`marker_array` reads back as
``MarkerArray(markers=boxes(...) + labels(...) + ...)`` does.

Usage::

    cdr = MarkerCdr()
    items = cdr.boxes(stamp, 'map', 'objects', ids, centers, sizes, yaw=yaw, colors=rgba)
    items += cdr.labels(stamp, 'map', 'labels', ids, positions, texts)
    msg = marker_array(items)                       # a CdrMessage
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from visualization_msgs.msg import Marker

from .cdr_template import ElementTemplates, Slot, serialize, with_elements
from .markers import WHITE, box_rows, colors_array
from .pointcloud_cdr import CdrMessage

TYPE_NAME = 'visualization_msgs/msg/MarkerArray'
_MARKER = 'visualization_msgs/msg/Marker'
_EMPTY = serialize(TYPE_NAME, {'markers': []})
_ZERO = Duration()


def marker_array(items) -> CdrMessage:
    """The MarkerArray of ``items`` (from :class:`MarkerCdr`'s builders), in order."""
    return CdrMessage(TYPE_NAME, (bytes(with_elements(_EMPTY, items)),))


class MarkerCdr:
    """Marker element templates by shape and phase; :meth:`boxes`, :meth:`labels` and
    :meth:`line_strips` take what the builders of :mod:`.markers` take (a stamp as
    (sec, nanosec) and a frame instead of a header) and give (template, values) items."""

    def __init__(self, max_templates: int = 4096):
        self._at = ElementTemplates(_MARKER, max_templates).at

    @staticmethod
    def _base(frame: str, ns: str, mtype: int, lifetime: Optional[Duration]) -> dict:
        return {'header': {'stamp': Slot('stamp'), 'frame_id': frame}, 'ns': ns,
                'id': Slot('id'), 'type': mtype, 'action': Marker.ADD,
                'lifetime': lifetime or _ZERO, 'color': Slot('color')}

    def boxes(self, stamp: tuple, frame: str, ns: str, ids: Sequence[int], centers, sizes, *,
              yaw=None, orientations=None, colors=WHITE, min_size: float = 0.0,
              lifetime: Optional[Duration] = None) -> list:
        """:func:`.markers.boxes`."""
        ids = np.asarray(ids).reshape(-1)
        n = len(ids)
        if not n:
            return []
        poses, scales = box_rows(n, centers, sizes, yaw=yaw, orientations=orientations,
                                 min_size=min_size)
        col = colors_array(colors, n)
        value = dict(self._base(frame, ns, Marker.CUBE, lifetime), pose=Slot('pose'),
                     scale=Slot('scale'))
        at = self._at(('box', frame, ns, _key(lifetime)), value)
        return [(at, {'stamp': stamp, 'id': i, 'pose': p, 'scale': s, 'color': c})
                for i, p, s, c in zip(ids.tolist(), poses, scales, col)]

    def labels(self, stamp: tuple, frame: str, ns: str, ids: Sequence[int], positions,
               texts: Sequence[str], *, height: float = 0.6, colors=WHITE,
               lifetime: Optional[Duration] = None) -> list:
        """:func:`.markers.labels`."""
        ids = np.asarray(ids).reshape(-1)
        n = len(ids)
        if not n:
            return []
        pos = np.asarray(positions, np.float64).reshape(n, 3)
        col = colors_array(colors, n)
        base = (self._base(frame, ns, Marker.TEXT_VIEW_FACING, lifetime),
                {'x': 0.0, 'y': 0.0, 'z': float(height)})
        key = ('label', frame, ns, _key(lifetime), float(height))
        return [(self._at(key + (text,), dict(base[0], pose={'position': Slot('position')},
                                               scale=base[1], text=text)),
                 {'stamp': stamp, 'id': i, 'position': p, 'color': c})
                for i, p, c, text in zip(ids.tolist(), pos, col, texts)]

    def line_strips(self, stamp: tuple, frame: str, ns: str, ids: Sequence[int], polylines,
                    *, z: float = 0.0, width: float = 0.05, colors=WHITE,
                    lifetime: Optional[Duration] = None) -> list:
        """:func:`.markers.line_strips` of (k, 2) or (k, 3) arrays (2-D ones at ``z``; one
        point doubled)."""
        ids = np.asarray(ids).reshape(-1)
        n = len(ids)
        if not n:
            return []
        col = colors_array(colors, n)
        base = dict(self._base(frame, ns, Marker.LINE_STRIP, lifetime),
                    pose={'orientation': {'w': 1.0}}, scale={'x': float(width)})
        key = ('strip', frame, ns, _key(lifetime), float(width))
        out = []
        for i, line, c in zip(ids.tolist(), polylines, col):
            xy = np.asarray(line, np.float64)
            if xy.ndim != 2 or xy.shape[1] not in (2, 3):
                xy = xy.reshape(-1, 2)
            if xy.shape[1] == 2:
                xy = np.column_stack([xy, np.full(len(xy), float(z))])
            if len(xy) == 1:
                xy = np.repeat(xy, 2, axis=0)
            k = len(xy)
            value = dict(base, points=[Slot('points')] * k)
            values = {'stamp': stamp, 'id': i, 'color': c}
            if k:
                values['points'] = xy
            out.append((self._at(key + (k,), value), values))
        return out


def _key(lifetime: Optional[Duration]) -> tuple:
    return (0, 0) if lifetime is None else (lifetime.sec, lifetime.nanosec)
