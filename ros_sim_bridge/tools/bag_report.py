"""What a recorded suite bag holds: a table per topic, and a top-down picture (``make demo``).

Read back with ``rosbags`` (an independent CDR decoder, against the bag's own type definitions),
never with the code that published it. The picture has one panel per top-level namespace that
has something to draw: point clouds (coloured by ``layer``, else ``intensity``), box markers
(CUBE: position, yaw, size) and odometry tracks, all in one frame per panel: what a source
records in another frame (a lidar cloud beside map-frame tracks) is moved there with the bag's
own /tf and /tf_static at its stamp, or named in the panel title as not drawn."""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from ros_sim_bridge.core import frames

_PC2_DTYPES = {1: 'i1', 2: 'u1', 3: 'i2', 4: 'u2', 5: 'i4', 6: 'u4', 7: 'f4', 8: 'f8'}


def read_bag(path):
    """topic → (msgtype, [(t_ns, message)]) for every message of the bag."""
    from rosbags.highlevel import AnyReader
    out: dict = {}
    with AnyReader([Path(path)]) as reader:
        for conn in reader.connections:
            out.setdefault(conn.topic, (conn.msgtype, []))
        for conn, t_ns, raw in reader.messages():
            out[conn.topic][1].append((t_ns, reader.deserialize(raw, conn.msgtype)))
    return out


def cloud_array(msg) -> np.ndarray:
    """A PointCloud2 (rosbags object) as a numpy structured array (fields by name)."""
    dtype = np.dtype({'names': [f.name for f in msg.fields],
                      'formats': [('>' if msg.is_bigendian else '<') + _PC2_DTYPES[f.datatype]
                                  for f in msg.fields],
                      'offsets': [f.offset for f in msg.fields], 'itemsize': msg.point_step})
    data = np.asarray(msg.data, dtype=np.uint8).tobytes()
    return np.frombuffer(data, dtype=dtype, count=msg.width * msg.height)


def _fmt(value) -> str:
    return f'{value:.3f}' if isinstance(value, float) else str(value)


def sample(msgtype: str, msg) -> str:
    """One decoded value of a message, in words a reader recognises."""
    name = msgtype.rsplit('/', 1)[-1]
    if name == 'PointCloud2':
        return f'{msg.width * msg.height} points, fields ' + ','.join(f.name for f in msg.fields)
    if name == 'Odometry':
        p = msg.pose.pose.position
        return f'position ({p.x:.2f}, {p.y:.2f}, {p.z:.2f}) m in {msg.header.frame_id}'
    if name == 'NavSatFix':
        return f'lat {msg.latitude:.6f} lon {msg.longitude:.6f} alt {msg.altitude:.1f}'
    if name == 'Imu':
        a = msg.linear_acceleration
        return f'accel ({a.x:.2f}, {a.y:.2f}, {a.z:.2f}) m/s²'
    if name == 'MarkerArray':
        return f'{len(msg.markers)} markers' + (f' ({msg.markers[0].ns})' if msg.markers else '')
    if name == 'TFMessage':
        return ', '.join(f'{t.header.frame_id}→{t.child_frame_id}' for t in msg.transforms[:2])
    if name == 'DiagnosticArray':
        return f'{len(msg.status)} statuses' + (f', e.g. {msg.status[0].name!r}'
                                                if msg.status else '')
    if name == 'Log':
        return f'{msg.name}: {msg.msg[:50]}'
    return _first_fields(msg)


def _first_fields(msg, limit: int = 3) -> str:
    """The first few scalar (or short array) fields, skipping headers."""
    parts = []
    for field in getattr(msg, '__dataclass_fields__', {}):
        if field in ('header', '__msgtype__'):
            continue
        value = getattr(msg, field)
        if isinstance(value, (bool, int, float, str)):
            parts.append(f'{field}={_fmt(value)}')
        elif isinstance(value, (list, np.ndarray)):
            parts.append(f'{field}[{len(value)}]')
        elif hasattr(value, '__dataclass_fields__'):
            inner = _first_fields(value, 1)
            if inner:
                parts.append(f'{field}.{inner}')
        if len(parts) >= limit:
            break
    return ' '.join(parts)


#: messages a topic needs for its rate to be shown
MIN_FOR_RATE = 10


def table(bag) -> list[str]:
    """Per topic: type, count, rate, one decoded sample."""
    rows = [f'{"topic":38} {"type":42} {"count":>6} {"rate Hz":>8}  sample']
    for topic in sorted(bag):
        msgtype, messages = bag[topic]
        count = len(messages)
        rate = '-'              # a few messages (events, latched): no rate to speak of
        if count >= MIN_FOR_RATE:
            span = (messages[-1][0] - messages[0][0]) / 1e9
            rate = f'{(count - 1) / span:8.1f}' if span > 0 else ''
        text = sample(msgtype, messages[-1][1]) if messages else '-'
        rows.append(f'{topic:38} {msgtype:42} {count:>6} {rate:>8}  {text[:70]}')
    return rows


def _yaw(q) -> float:
    return float(frames.quat_to_euler((q.w, q.x, q.y, q.z))[2])


def _namespace(topic: str) -> str:
    parts = topic.strip('/').split('/')
    return parts[0] if len(parts) > 1 else ''


def _stamp_ns(header) -> int:
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _matrix(t) -> np.ndarray:
    """4×4 homogeneous matrix of a geometry_msgs/Transform (parent ← child)."""
    q, v = t.rotation, t.translation
    m = np.eye(4)
    m[:3, :3] = frames.quat_rotate((q.w, q.x, q.y, q.z), np.eye(3)).T   # columns: rotated axes
    m[:3, 3] = (v.x, v.y, v.z)
    return m


class BagTransforms:
    """The bag's /tf and /tf_static as a tree: ``lookup(target, source, stamp_ns)`` composes
    the transforms on the path, each taken at its recorded stamp nearest ``stamp_ns`` and no
    further from it than ``tolerance_ns`` (a recorder that fell behind on /tf leaves the last
    seconds without transforms; nothing is drawn there rather than drawn in the wrong place)."""

    def __init__(self, bag):
        edges: dict = defaultdict(list)              # child → [(stamp_ns, parent, matrix)]
        for topic in ('/tf_static', '/tf'):
            for _, msg in bag.get(topic, (None, []))[1]:
                for tr in msg.transforms:
                    stamp = -1 if topic == '/tf_static' else _stamp_ns(tr.header)
                    edges[tr.child_frame_id].append((stamp, tr.header.frame_id,
                                                     _matrix(tr.transform)))
        self._edges = {child: sorted(rows, key=lambda r: r[0]) for child, rows in edges.items()}
        self._stamps = {child: np.array([r[0] for r in rows])
                        for child, rows in self._edges.items()}

    def _to_root(self, frame: str, stamp_ns: int, tolerance_ns: int) -> dict:
        """frame on the path to the root → matrix (that frame ← ``frame``)."""
        out, m, seen = {frame: np.eye(4)}, np.eye(4), {frame}
        while frame in self._edges:
            rows, stamps = self._edges[frame], self._stamps[frame]
            i = int(np.clip(np.searchsorted(stamps, stamp_ns), 0, len(rows) - 1))
            if i > 0 and abs(stamps[i - 1] - stamp_ns) <= abs(stamps[i] - stamp_ns):
                i -= 1
            stamp, frame, edge = rows[i]
            if stamp >= 0 and abs(stamp - stamp_ns) > tolerance_ns:
                break
            if frame in seen:                        # a loop in a broken bag: stop there
                break
            seen.add(frame)
            m = edge @ m
            out[frame] = m
        return out

    def lookup(self, target: str, source: str, stamp_ns: int, tolerance_ns: int = 200_000_000):
        """Matrix target ← source, or None when no transforms near ``stamp_ns`` join them."""
        if target == source:
            return np.eye(4)
        up_source = self._to_root(source, stamp_ns, tolerance_ns)
        up_target = self._to_root(target, stamp_ns, tolerance_ns)
        common = next((f for f in up_source if f in up_target), None)
        if common is None:
            return None
        return np.linalg.inv(up_target[common]) @ up_source[common]


def _moved_cloud(pts: np.ndarray, m: np.ndarray) -> np.ndarray:
    out = pts.copy()
    xyz = np.stack([pts['x'], pts['y'], pts['z']]).astype(np.float64)
    moved = m[:3, :3] @ xyz + m[:3, 3:4]
    out['x'], out['y'], out['z'] = moved
    return out


def drawables(bag) -> dict:
    """namespace → what to draw (clouds, boxes, tracks), all in one frame per panel: the frame
    of its boxes and tracks (else of its clouds); what is recorded in another frame is moved
    into it with the bag's TF at its own stamp, or listed under ``skipped`` when no TF joins
    the two frames."""
    items: dict = defaultdict(lambda: {'clouds': [], 'boxes': [], 'tracks': []})
    for topic, (msgtype, messages) in bag.items():
        ns = _namespace(topic)
        if not ns or not messages:
            continue
        name = msgtype.rsplit('/', 1)[-1]
        if name == 'PointCloud2':
            for _, msg in messages:
                items[ns]['clouds'].append((msg.header.frame_id, _stamp_ns(msg.header),
                                            cloud_array(msg)))
        elif name == 'MarkerArray':
            for marker in messages[-1][1].markers:
                if marker.type == 1 and marker.action == 0:       # CUBE, ADD
                    p, s = marker.pose.position, marker.scale
                    items[ns]['boxes'].append((marker.header.frame_id, _stamp_ns(marker.header),
                                               (p.x, p.y, p.z), _yaw(marker.pose.orientation),
                                               s.x, s.y, marker.ns))
        elif name == 'Odometry':
            last = messages[-1][1]
            xyz = np.array([(m.pose.pose.position.x, m.pose.pose.position.y,
                             m.pose.pose.position.z) for _, m in messages])
            items[ns]['tracks'].append((last.header.frame_id, _stamp_ns(last.header), topic, xyz))
    tf = BagTransforms(bag)
    panels = {}
    for ns, it in sorted(items.items()):
        fixed = [f for f, *_ in it['boxes'] + it['tracks']]
        frame = max(set(fixed), key=fixed.count) if fixed else (
            it['clouds'][-1][0] if it['clouds'] else '')
        panel = {'clouds': [], 'boxes': [], 'tracks': {}, 'frame': frame, 'skipped': []}
        for source, stamp, pts in reversed(it['clouds']):       # the last 3 that can be drawn
            m = tf.lookup(frame, source, stamp)
            if m is not None:
                panel['clouds'].append(_moved_cloud(pts, m))
                if len(panel['clouds']) == 3:
                    break
        if it['clouds'] and not panel['clouds']:
            panel['skipped'].append(f'cloud in {it["clouds"][-1][0]}')
        for source, stamp, xyz, yaw, lx, ly, mns in it['boxes']:
            m = tf.lookup(frame, source, stamp)
            if m is None:
                panel['skipped'].append(f'box in {source}')
                continue
            x, y, _ = m[:3, :3] @ np.array(xyz) + m[:3, 3]
            panel['boxes'].append((x, y, yaw + math.atan2(m[1, 0], m[0, 0]), lx, ly, mns))
        for source, stamp, topic, xyz in it['tracks']:
            m = tf.lookup(frame, source, stamp)
            if m is None:
                panel['skipped'].append(f'track in {source}')
                continue
            panel['tracks'][topic] = (xyz @ m[:3, :3].T + m[:3, 3])[:, :2]
        if panel['clouds'] or panel['boxes'] or panel['tracks']:
            panels[ns] = panel
    return panels


def render(bag, out_path, title: str = 'ros_sim_bridge suite (make demo)') -> Path:
    """The demo picture: one top-down panel per namespace (x east/forward, y north/left)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.patches import Polygon

    panels = drawables(bag)
    if not panels:
        raise ValueError('nothing to draw in the bag (no clouds, boxes or odometry)')
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 6), squeeze=False)
    for ax, (ns, p) in zip(axes[0], panels.items()):
        if p['clouds']:
            pts = np.concatenate(p['clouds'])
            key = 'layer' if 'layer' in pts.dtype.names else (
                'intensity' if 'intensity' in pts.dtype.names else None)
            colour = pts[key] if key else 'k'
            sc = ax.scatter(pts['x'], pts['y'], s=1, c=colour, cmap='viridis')
            if key:
                fig.colorbar(sc, ax=ax, label=key, shrink=0.7)
        for x, y, yaw, lx, ly, _ in p['boxes']:
            c, s = math.cos(yaw), math.sin(yaw)
            corners = [(x + c * dx - s * dy, y + s * dx + c * dy)
                       for dx, dy in ((lx / 2, ly / 2), (-lx / 2, ly / 2),
                                      (-lx / 2, -ly / 2), (lx / 2, -ly / 2))]
            ax.add_patch(Polygon(corners, closed=True, fill=False, ec='tab:red', lw=1.2))
        for topic, xy in p['tracks'].items():
            label = '/'.join(topic.strip('/').split('/')[1:-1]) or 'ego'   # /morai/odom: ego
            ax.plot(xy[:, 0], xy[:, 1], lw=1.5, label=f'{label} track')
            ax.plot(xy[-1, 0], xy[-1, 1], 'o', ms=5, color=ax.lines[-1].get_color())
        if p['tracks']:
            ax.legend(loc='best', fontsize=7)
        skipped = f'; not drawn (no TF): {", ".join(sorted(set(p["skipped"])))}' \
            if p['skipped'] else ''
        ax.set_title(f'/{ns}  (frame {p["frame"] or "?"}{skipped})', fontsize=9)
        ax.set_xlabel('x [m]')
        ax.set_ylabel('y [m]')
        ax.set_aspect('equal', adjustable='datalim')
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return out
