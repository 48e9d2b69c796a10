"""What a recorded suite bag holds: a table per topic, and a top-down picture (``make demo``).

Read back with ``rosbags`` (an independent CDR decoder, against the bag's own type definitions),
never with the code that published it. The picture has one panel per top-level namespace that
has something to draw: point clouds (coloured by ``layer``, else ``intensity``), box markers
(CUBE: position, yaw, size), odometry tracks, and LINE_STRIP contours. New sources (CARLA
actors, monoDrive) appear without changes here when they publish these types.
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np

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


def table(bag) -> list[str]:
    """Per topic: type, count, rate, one decoded sample."""
    rows = [f'{"topic":38} {"type":42} {"count":>6} {"rate Hz":>8}  sample']
    for topic in sorted(bag):
        msgtype, messages = bag[topic]
        count = len(messages)
        rate = ''
        if count > 1:
            span = (messages[-1][0] - messages[0][0]) / 1e9
            rate = f'{(count - 1) / span:8.1f}' if span > 0 else ''
        text = sample(msgtype, messages[-1][1]) if messages else '-'
        rows.append(f'{topic:38} {msgtype:42} {count:>6} {rate:>8}  {text[:70]}')
    return rows


def _yaw(q) -> float:
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def _namespace(topic: str) -> str:
    parts = topic.strip('/').split('/')
    return parts[0] if len(parts) > 1 else ''


def drawables(bag) -> dict:
    """namespace → what to draw: clouds, boxes, tracks."""
    panels: dict = defaultdict(lambda: {'clouds': [], 'boxes': [], 'tracks': {}, 'frame': ''})
    for topic, (msgtype, messages) in bag.items():
        ns = _namespace(topic)
        if not ns or not messages:
            continue
        name = msgtype.rsplit('/', 1)[-1]
        panel = panels[ns]
        if name == 'PointCloud2':
            for _, msg in messages[-3:]:
                panel['clouds'].append(cloud_array(msg))
                panel['frame'] = msg.header.frame_id
        elif name == 'MarkerArray':
            for marker in messages[-1][1].markers:
                if marker.type == 1 and marker.action == 0:       # CUBE, ADD
                    p, s = marker.pose.position, marker.scale
                    panel['boxes'].append((p.x, p.y, _yaw(marker.pose.orientation), s.x, s.y,
                                           marker.ns))
                    panel['frame'] = panel['frame'] or marker.header.frame_id
        elif name == 'Odometry':
            xy = np.array([(m.pose.pose.position.x, m.pose.pose.position.y)
                           for _, m in messages])
            panel['tracks'][topic] = xy
            panel['frame'] = panel['frame'] or messages[-1][1].header.frame_id
    return {ns: p for ns, p in sorted(panels.items())
            if p['clouds'] or p['boxes'] or p['tracks']}


def render(bag, out_path, title: str = 'ros_sim_bridge suite (make demo)') -> Path:
    """docs/demo.png: one top-down panel per namespace (x east/forward, y north/left)."""
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
        ax.set_title(f'/{ns}  (frame {p["frame"] or "?"})')
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
