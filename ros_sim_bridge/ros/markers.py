"""``visualization_msgs/Marker`` builders as rclpy objects: oriented boxes, text labels, arrows
and line strips from numpy arrays, and the DELETE/DELETEALL bookkeeping, for the nodes that
still publish rclpy markers (ibeo, monoDrive).  The CDR builder every CDR-publishing source
uses is :mod:`.markers_cdr` (the same shapes; the numbers, :func:`box_rows` and
:func:`colors_array`, are its own).

Every builder takes arrays of n rows (ids, positions, sizes, colours) and returns a list of n
ADD markers sharing one ``std_msgs/Header``; the numeric work (quaternions from yaw, minimum
sizes, float conversion) is done once for the whole array, and each marker is copied from a
template instead of built field by field (a fresh ``Marker()`` constructs a dozen default
sub-messages).  The markers of one call therefore share the sub-messages that are the same
for all (header, lifetime, a constant scale or colour): treat returned markers as read-only.
Colours are RGBA rows in 0..1, or one RGBA tuple for all.

:class:`MarkerTracker` remembers which (namespace, id) pairs the last array showed and adds a
DELETE for each that is gone, so RViz never keeps a stale box; :func:`delete_all` is the one-
marker alternative for a namespace that is redrawn from scratch every time.

Usage::

    tracker = MarkerTracker()
    adds = boxes(header, 'objects', ids, centers, sizes, yaw=yaw, colors=colors)
    adds += labels(header, 'labels', ids, centers + [0, 0, 1.0], texts)
    publisher.publish(tracker.update(header, adds))
"""
from __future__ import annotations

import copy
from typing import Iterable, Optional, Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point, Pose, Quaternion, Vector3
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from .markers_cdr import WHITE, box_rows, colors_array, duration

__all__ = ['WHITE', 'duration', 'colors_array', 'boxes', 'box_rows', 'labels', 'arrows', 'line_strips',
           'delete_all', 'deletes', 'MarkerTracker']


def _template(header: Header, ns: str, mtype: int, lifetime: Optional[Duration]) -> Marker:
    m = Marker(header=header, ns=ns, type=mtype, action=Marker.ADD)
    if lifetime is not None:
        m.lifetime = lifetime
    return m


def _color_msgs(colors, n: int) -> list[ColorRGBA]:
    c = np.asarray(colors, np.float64)
    if c.ndim == 1:                      # one colour for all: one message, shared
        shared = ColorRGBA(r=float(c[0]), g=float(c[1]), b=float(c[2]), a=float(c[3]))
        return [shared] * n
    return [ColorRGBA(r=r, g=g, b=b, a=a) for r, g, b, a in c.reshape(n, 4).tolist()]


def boxes(header: Header, ns: str, ids: Sequence[int], centers, sizes, *, yaw=None,
          orientations=None, colors=WHITE, min_size: float = 0.0,
          lifetime: Optional[Duration] = None) -> list[Marker]:
    """CUBE markers: ``centers`` (n, 3) box centres (m), ``sizes`` (n, 3) full extents (m;
    sizes below ``min_size`` raised to it so a flat box stays visible), the orientation either
    ``yaw`` (n,) rad about z or ``orientations`` (n, 4) quaternions w, x, y, z (neither:
    axis-aligned), ``colors`` one RGBA or (n, 4)."""
    ids = np.asarray(ids).reshape(-1)
    n = len(ids)
    if not n:
        return []
    poses, scales = box_rows(n, centers, sizes, yaw=yaw, orientations=orientations,
                             min_size=min_size)
    col = _color_msgs(colors, n)
    tmpl = _template(header, ns, Marker.CUBE, lifetime)
    out = []
    for mid, (x, y, z, qx, qy, qz, w), (sx, sy, sz), color in zip(
            ids.tolist(), poses.tolist(), scales.tolist(), col):
        m = copy.copy(tmpl)
        m.id = mid
        m.pose = Pose(position=Point(x=x, y=y, z=z), orientation=Quaternion(x=qx, y=qy, z=qz,
                                                                           w=w))
        m.scale = Vector3(x=sx, y=sy, z=sz)
        m.color = color
        out.append(m)
    return out


def labels(header: Header, ns: str, ids: Sequence[int], positions, texts: Sequence[str], *,
           height: float = 0.6, colors=WHITE,
           lifetime: Optional[Duration] = None) -> list[Marker]:
    """TEXT_VIEW_FACING markers at ``positions`` (n, 3), text ``height`` m."""
    ids = np.asarray(ids).reshape(-1)
    n = len(ids)
    if not n:
        return []
    p = np.asarray(positions, np.float64).reshape(n, 3).tolist()
    col = _color_msgs(colors, n)
    tmpl = _template(header, ns, Marker.TEXT_VIEW_FACING, lifetime)
    tmpl.scale = Vector3(z=float(height))
    out = []
    for i, mid in enumerate(ids.tolist()):
        m = copy.copy(tmpl)
        m.id = mid
        x, y, z = p[i]
        m.pose = Pose(position=Point(x=x, y=y, z=z))
        m.color = col[i]
        m.text = texts[i]
        out.append(m)
    return out


def arrows(header: Header, ns: str, ids: Sequence[int], starts, ends, *,
           shaft: float = 0.1, head: float = 0.25, head_length: float = 0.3, colors=WHITE,
           lifetime: Optional[Duration] = None) -> list[Marker]:
    """ARROW markers from ``starts`` to ``ends`` (n, 3) m; ``shaft``/``head`` diameters and
    ``head_length`` in m."""
    ids = np.asarray(ids).reshape(-1)
    n = len(ids)
    if not n:
        return []
    a = np.asarray(starts, np.float64).reshape(n, 3).tolist()
    b = np.asarray(ends, np.float64).reshape(n, 3).tolist()
    col = _color_msgs(colors, n)
    tmpl = _template(header, ns, Marker.ARROW, lifetime)
    tmpl.scale = Vector3(x=float(shaft), y=float(head), z=float(head_length))
    tmpl.pose.orientation.w = 1.0
    out = []
    for i, mid in enumerate(ids.tolist()):
        m = copy.copy(tmpl)
        m.id = mid
        (x0, y0, z0), (x1, y1, z1) = a[i], b[i]
        m.points = [Point(x=x0, y=y0, z=z0), Point(x=x1, y=y1, z=z1)]
        m.color = col[i]
        out.append(m)
    return out


def line_strips(header: Header, ns: str, ids: Sequence[int], polylines: Iterable, *,
                z: float = 0.0, width: float = 0.05, colors=WHITE,
                lifetime: Optional[Duration] = None) -> list[Marker]:
    """LINE_STRIP markers, one per polyline ((k, 2) or (k, 3) m; 2-D ones at height ``z``;
    or a list of ``geometry_msgs/Point`` already built, used as is, e.g. shared with another
    message).  A one-point polyline becomes a degenerate segment (a strip needs two points)."""
    ids = np.asarray(ids).reshape(-1)
    n = len(ids)
    if not n:
        return []
    col = _color_msgs(colors, n)
    tmpl = _template(header, ns, Marker.LINE_STRIP, lifetime)
    tmpl.scale = Vector3(x=float(width))
    tmpl.pose.orientation.w = 1.0
    out = []
    for mid, line, color in zip(ids.tolist(), polylines, col):
        if isinstance(line, list) and (not line or isinstance(line[0], Point)):
            pts = line * 2 if len(line) == 1 else line
            m = copy.copy(tmpl)
            m.id = mid
            m.points = pts
            m.color = color
            out.append(m)
            continue
        xy = np.asarray(line, np.float64)
        if xy.ndim != 2 or xy.shape[1] not in (2, 3):
            xy = xy.reshape(-1, 2)
        if xy.shape[1] == 2:
            pts = [Point(x=x, y=y, z=z) for x, y in xy.tolist()]
        else:
            pts = [Point(x=x, y=y, z=zz) for x, y, zz in xy.tolist()]
        if len(pts) == 1:
            pts = pts * 2
        m = copy.copy(tmpl)
        m.id = mid
        m.points = pts
        m.color = color
        out.append(m)
    return out


def delete_all(header: Header, ns: str = '') -> Marker:
    """A DELETEALL marker: clears ``ns`` (every namespace of the topic when ns is empty)."""
    return Marker(header=header, ns=ns, action=Marker.DELETEALL)


def deletes(header: Header, keys: Iterable[tuple[str, int]]) -> list[Marker]:
    """DELETE markers for (namespace, id) keys, in a stable (sorted) order."""
    return [Marker(header=header, ns=ns, id=mid, action=Marker.DELETE)
            for ns, mid in sorted(keys)]


class MarkerTracker:
    """DELETE bookkeeping for a topic whose markers are updated incrementally.

    :meth:`update` returns a MarkerArray: a DELETE for every (ns, id) the previous update
    showed and this one does not (objects that vanished, an arrow that became invalid), then
    the new ADD markers.  :meth:`clear` deletes everything shown (e.g. when the link drops).
    """

    def __init__(self):
        #: (namespace, id) of every marker the last update added
        self.shown: set[tuple[str, int]] = set()

    def update(self, header: Header, adds: list[Marker]) -> MarkerArray:
        now = {(m.ns, m.id) for m in adds}
        gone = deletes(header, self.shown - now)
        self.shown = now
        return MarkerArray(markers=gone + adds)

    def clear(self, header: Header) -> MarkerArray:
        gone = deletes(header, self.shown)
        self.shown = set()
        return MarkerArray(markers=gone)
