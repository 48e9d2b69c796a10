"""monoDrive samples → the CDR bytes of ROS messages, in SI units and REP-103 axes.

Every data-rate message is built as CDR (``publisher.publish(bytes)``): a
:mod:`ros_sim_bridge.ros.cdr_template` template per message shape (frames, sizes, names and
string lengths baked in; kept in a bounded cache) whose numbers and stamp are slots filled per
sample; a message whose strings change every time (a JSON report) is serialised whole by the
same writer (:func:`~ros_sim_bridge.ros.cdr_template.serialize`).  Stamps are (sec, nanosec)
pairs (or ``builtin_interfaces/Time``) the node sets at publish time.

Unreal (monoDrive) is left-handed: X forward, Y right, Z up, centimetres (SUPPLEMENT §4.4,
§5.4).  To REP-103: x = X/100, y = −Y/100, z = Z/100; a quaternion (x, y, z, w) becomes
(−x, y, −z, w) (the same rotation seen in the mirrored frame: yaw and roll change sign);
angular velocity (x, −y, −z) as §5.4 states it; sensor rotations (pitch, yaw, roll in degrees)
become roll = rad(roll), pitch = −rad(pitch), yaw = −rad(yaw).
"""
from __future__ import annotations

import math
import struct
import threading
from dataclasses import dataclass
from typing import Optional

import numpy as np
from sensor_msgs.msg import NavSatFix, NavSatStatus
from visualization_msgs.msg import Marker

from ros_sim_bridge.core.frames import quat_from_euler
from ros_sim_bridge.monodrive.codec import payloads
from ros_sim_bridge.monodrive.codec.control import standard_json, utf8_text
from ros_sim_bridge.monodrive.codec.units import CM
from ros_sim_bridge.ros.cdr_template import (ElementTemplates, Slot, build,
                                             messages_with_elements, serialize)
from ros_sim_bridge.ros.markers_cdr import box_rows, colors_array, duration
from ros_sim_bridge.ros.markers_cdr import MarkerCdr

ENCODINGS = {'bgra': 'bgra8', 'rgba': 'rgba8', 'bgr': 'bgr8', 'rgb': 'rgb8', 'gray': 'mono8',
             'mono8': 'mono8'}


def pair(stamp) -> tuple:
    """(sec, nanosec) of a ``builtin_interfaces/Time`` or of such a pair."""
    return (stamp.sec, stamp.nanosec) if hasattr(stamp, 'sec') else tuple(stamp)


def _header(frame_id: str) -> dict:
    return {'stamp': Slot('stamp'), 'frame_id': utf8_text(frame_id)}


def _stamped(stamp, frame_id: str) -> dict:
    """A header with its stamp given (a message serialised whole)."""
    sec, nanosec = pair(stamp)
    return {'stamp': {'sec': sec, 'nanosec': nanosec}, 'frame_id': utf8_text(frame_id)}


class _Templates:
    """Templates by shape key, built on first use; at ``max_templates`` the cache starts
    again (a scene of ever new names or texts cannot grow it without bound)."""

    def __init__(self, max_templates: int = 1024):
        self._cache: dict = {}
        self._max = max_templates
        self._lock = threading.Lock()

    def get(self, key, type_name: str, tree):
        """The template of ``key``; ``tree()`` gives its value tree when it is built."""
        tmpl = self._cache.get(key)
        if tmpl is None:
            tmpl = build(type_name, tree())
            with self._lock:
                if len(self._cache) >= self._max:
                    self._cache.clear()
                self._cache[key] = tmpl
        return tmpl


_TEMPLATES = _Templates()


# --- axes -----------------------------------------------------------------------------------
def position_m(v) -> tuple:
    """Unreal cm (x, y, z) → REP-103 metres."""
    return (v[0] * CM, -v[1] * CM, v[2] * CM)


def quat_wxyz(q_xyzw) -> tuple:
    """Unreal quaternion (x, y, z, w) → REP-103 (w, x, y, z), normalised."""
    x, y, z, w = q_xyzw
    n = math.sqrt(x * x + y * y + z * z + w * w) or 1.0
    return (w / n, -x / n, y / n, -z / n)


def angular_velocity(v) -> tuple:
    return (v[0], -v[1], -v[2])


def mount_pose(config: dict) -> tuple[tuple, tuple]:
    """A sensor's ``location`` (cm) and ``rotation`` (deg) → translation (m), quaternion wxyz."""
    loc = config.get('location') or {}
    rot = config.get('rotation') or {}
    t = position_m((_f(loc, 'x'), _f(loc, 'y'), _f(loc, 'z')))
    q = quat_from_euler(math.radians(_f(rot, 'roll')), -math.radians(_f(rot, 'pitch')),
                      -math.radians(_f(rot, 'yaw')))
    return t, tuple(float(v) for v in q)


def _f(d: dict, k: str) -> float:
    v = d.get(k)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


# --- cameras --------------------------------------------------------------------------------
_IMAGE = 'sensor_msgs/msg/Image'
_LENGTH = struct.Struct('<I')


def _image(pixels, height: int, width: int, encoding: str, step: int, stamp,
           frame_id: str) -> bytes:
    """An Image: its head from a template (stamp filled, data length set), then the pixels:
    one copy of the frame, into the bytes published."""
    tmpl = _TEMPLATES.get(('image', frame_id, height, width, encoding, step), _IMAGE, lambda: {
        'header': _header(frame_id), 'height': height, 'width': width, 'encoding': encoding,
        'is_bigendian': 0, 'step': step, 'data': []})
    head = tmpl.fill(stamp=pair(stamp))
    n = memoryview(pixels).nbytes
    return b''.join((head[:-4], _LENGTH.pack(n), pixels))


def camera_image(payload, width: int, height: int, channels: str, stamp, frame_id: str) -> bytes:
    """The payload is the Image's data as it is (bgra8/rgba8/mono8…)."""
    payloads.decode_image(payload, width, height, channels)      # checks size and channels
    return _image(payload, height, width, ENCODINGS[channels], width * payloads.CHANNELS[channels],
                  stamp, frame_id)


def depth_image(payload, width: int, height: int, stamp, frame_id: str) -> bytes:
    """32FC1 in metres (the payload's cm converted)."""
    metres = np.ascontiguousarray(payloads.decode_depth(payload, width, height), '<f4')
    return _image(metres.data.cast('B'), height, width, '32FC1', width * 4, stamp, frame_id)


def semantic_image(payload, width: int, height: int, stamp, frame_id: str) -> bytes:
    classes = np.ascontiguousarray(payloads.decode_semantic(payload, width, height), np.uint8)
    return _image(classes.data.cast('B'), height, width, 'mono8', width, stamp, frame_id)


def camera_info(width: int, height: int, fov_deg: float, stamp, frame_id: str) -> bytes:
    """Pinhole intrinsics from the horizontal field of view (square pixels, no distortion)."""
    def tree():
        fx = width / (2.0 * math.tan(math.radians(fov_deg) / 2.0))
        cx, cy = width / 2.0, height / 2.0
        return {'header': _header(frame_id), 'width': width, 'height': height,
                'distortion_model': 'plumb_bob', 'd': [0.0] * 5,
                'k': [fx, 0.0, cx, 0.0, fx, cy, 0.0, 0.0, 1.0],
                'r': [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                'p': [fx, 0.0, cx, 0.0, 0.0, fx, cy, 0.0, 0.0, 0.0, 1.0, 0.0]}
    tmpl = _TEMPLATES.get(('camera_info', frame_id, width, height, float(fov_deg)),
                          'sensor_msgs/msg/CameraInfo', tree)
    return bytes(tmpl.fill(stamp=pair(stamp)))


# --- IMU, GPS, RPM --------------------------------------------------------------------------
def imu(sample: payloads.ImuSample, stamp, frame_id: str) -> bytes:
    """Acceleration and angular velocity in REP-103 axes; no orientation (covariance −1)."""
    tmpl = _TEMPLATES.get(('imu', frame_id), 'sensor_msgs/msg/Imu', lambda: {
        'header': _header(frame_id), 'orientation_covariance': [-1.0] + [0.0] * 8,
        'angular_velocity': Slot('gyro'), 'linear_acceleration': Slot('acc')})
    a = sample.acceleration
    return bytes(tmpl.fill(stamp=pair(stamp), acc=(a[0], -a[1], a[2]),
                           gyro=angular_velocity(sample.angular_velocity)))


def nav_sat_fix(sample: payloads.GpsSample, stamp, frame_id: str) -> bytes:
    """Fix or no fix, GPS service; the accuracies (m) as a diagonal covariance."""
    tmpl = _TEMPLATES.get(('fix', frame_id), 'sensor_msgs/msg/NavSatFix', lambda: {
        'header': _header(frame_id),
        'status': {'status': Slot('status'), 'service': NavSatStatus.SERVICE_GPS},
        'latitude': Slot('lat'), 'longitude': Slot('lon'), 'altitude': Slot('alt'),
        'position_covariance': Slot('cov'),
        'position_covariance_type': NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN})
    h, v = float(sample.h_accuracy), float(sample.v_accuracy)
    return bytes(tmpl.fill(
        stamp=pair(stamp), lat=sample.latitude, lon=sample.longitude, alt=sample.elevation,
        status=NavSatStatus.STATUS_FIX if sample.fix else NavSatStatus.STATUS_NO_FIX,
        cov=(h * h, 0.0, 0.0, 0.0, h * h, 0.0, 0.0, 0.0, v * v)))


def rpm(wheel: int, speed: float, stamp, frame_id: str) -> bytes:
    tmpl = _TEMPLATES.get(('rpm', frame_id), 'ros_sim_bridge/msg/MonoDriveRpm', lambda: {
        'header': _header(frame_id), 'wheel_number': Slot('wheel'), 'speed': Slot('speed')})
    return bytes(tmpl.fill(stamp=pair(stamp), wheel=wheel, speed=_float32(speed)))


# --- state ----------------------------------------------------------------------------------
@dataclass
class StateRows:
    """A State frame's vehicles then objects in REP-103: ``pose`` (n, 7) x, y, z, qx, qy, qz,
    qw in the map frame (m); ``twist`` (n, 6) linear m/s and angular rad/s in the map frame;
    ``boxes`` each one's ``payloads.STATE_BOX`` array."""
    names: list
    tags: list
    is_object: list
    pose: np.ndarray
    twist: np.ndarray
    boxes: list

    def __len__(self) -> int:
        return len(self.names)


def state_rows(frame: payloads.StateFrame) -> StateRows:
    vs = list(frame.vehicles) + list(frame.objects)
    pose = np.zeros((len(vs), 7))
    twist = np.zeros((len(vs), 6))
    for i, v in enumerate(vs):
        w, x, y, z = quat_wxyz(v.orientation)
        pose[i] = (*position_m(v.position), x, y, z, w)
        twist[i] = (*position_m(v.linear_velocity), *angular_velocity(v.angular_velocity))
    return StateRows([utf8_text(v.name) for v in vs], [[utf8_text(t) for t in v.tags]
                                                       for v in vs],
                     [bool(v.is_object) for v in vs], pose, twist, [v.boxes for v in vs])


def state(rows: StateRows, game_time: float, sample_count: Optional[int], stamp,
          map_frame: str) -> bytes:
    """MonoDriveState: vehicles, then objects, as sent (REP-103, SI)."""
    key = ('state', map_frame, tuple(rows.names), tuple(map(tuple, rows.tags)),
           tuple(rows.is_object))

    def vehicle(i):
        return {'name': rows.names[i], 'tags': rows.tags[i], 'pose': Slot('pose'),
                'twist': Slot('twist'), 'is_object': rows.is_object[i]}
    tmpl = _TEMPLATES.get(key, 'ros_sim_bridge/msg/MonoDriveState', lambda: {
        'header': _header(map_frame), 'game_time': Slot('game_time'),
        'sample_count': Slot('sample_count'),
        'vehicles': [vehicle(i) for i in range(len(rows)) if not rows.is_object[i]],
        'objects': [vehicle(i) for i in range(len(rows)) if rows.is_object[i]]})
    order = [i for i in range(len(rows)) if not rows.is_object[i]] + \
        [i for i in range(len(rows)) if rows.is_object[i]]
    return bytes(tmpl.fill(stamp=pair(stamp), game_time=float(game_time),
                           sample_count=int(sample_count or 0), pose=rows.pose[order],
                           twist=rows.twist[order]))


def odometry(rows: StateRows, i: int, stamp, map_frame: str, child: str) -> bytes:
    """Odometry of vehicle ``i``; the twist is rotated into the vehicle frame (REP-105)."""
    tmpl = _TEMPLATES.get(('odom', map_frame, child), 'nav_msgs/msg/Odometry', lambda: {
        'header': _header(map_frame), 'child_frame_id': utf8_text(child),
        'pose': {'pose': Slot('pose')}, 'twist': {'twist': Slot('twist')}})
    qx, qy, qz, qw = rows.pose[i, 3:]
    rot = _rotation(qw, qx, qy, qz)
    t = rows.twist[i]
    return bytes(tmpl.fill(stamp=pair(stamp), pose=rows.pose[i],
                           twist=np.concatenate([rot.T @ t[:3], rot.T @ t[3:]])))


def transforms(rows: StateRows, children: list, stamp, parent: str) -> bytes:
    """TFMessage of ``parent`` → each vehicle's frame (``children``, one per row)."""
    tmpl = _TEMPLATES.get(('tf', parent, tuple(children)), 'tf2_msgs/msg/TFMessage', lambda: {
        'transforms': [{'header': _header(parent), 'child_frame_id': utf8_text(c),
                        'transform': Slot('transform')} for c in children]})
    return bytes(tmpl.fill(stamp=pair(stamp), transform=rows.pose))


def _rotation(w, x, y, z) -> np.ndarray:
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


EGO_BOX_COLOR = (0.2, 0.8, 0.2, 0.6)
OTHER_BOX_COLOR = (0.9, 0.5, 0.1, 0.6)
DEFAULT_BOX = ((0.0, 0.0, 0.75), (4.5, 1.9, 1.5))   # centre (m, vehicle frame), full size (m)
BOXES_PER_VEHICLE = 16                               # marker id = vehicle index · 16 + box
BOX_LIFETIME_S = 0.5


def world_boxes(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Oriented boxes (``payloads.STATE_BOX`` or an annotation's ``boxes_3d``) → (centres m,
    full sizes m, orientations wxyz), all in the world frame (REP-103).

    monoDrive's State documentation: ``center`` is "relative to the origin" (world cm: a cone
    at (12200, 3710, 10) has its box centre at (12199.95, 3710.03, 37.28)) and ``orientation``
    is the box's own rotation in the world.  ``extents`` are full sizes: the same example's
    compact car measures 415 × 180 × 142 cm and its cone 32 × 32 × 64 cm (as half sizes the car
    would be 8.3 m long and the cone's box would reach 27 cm below the ground).  An orientation
    of zero norm is the identity."""
    c = boxes['center'] * CM
    centers = np.stack([c[:, 0], -c[:, 1], c[:, 2]], 1)
    sizes = np.abs(boxes['extents']) * CM
    q = boxes['orientation']
    n = np.linalg.norm(q, axis=1, keepdims=True)
    q = np.where(n > 0, q / np.where(n > 0, n, 1.0), (0.0, 0.0, 0.0, 1.0))
    wxyz = np.stack([q[:, 3], -q[:, 0], q[:, 1], -q[:, 2]], 1)       # as quat_wxyz
    return centers, sizes, wxyz


def box_markers(rows: StateRows, stamp, map_frame: str) -> bytes:
    """The State sensor's oriented boxes as a MarkerArray of CUBEs (ns ``monodrive_boxes``,
    id = vehicle index · 16 + box, text = the vehicle's name, lifetime 0.5 s) in ``map_frame``:
    each ``payloads.STATE_BOX`` with its world centre, orientation and full size
    (:func:`world_boxes`); a vehicle without boxes gets a 4.5 × 1.9 × 1.5 m default box on its
    pose.  The first 16 boxes of a vehicle are drawn."""
    ids, centers, sizes, quats, colors, names = [], [], [], [], [], []
    for i in range(len(rows)):
        vboxes = rows.boxes[i]
        if len(vboxes):
            c, s, o = world_boxes(vboxes[:BOXES_PER_VEHICLE])
        else:
            qx, qy, qz, qw = rows.pose[i, 3:]
            c = [rows.pose[i, :3] + _rotation(qw, qx, qy, qz) @ np.array(DEFAULT_BOX[0])]
            s, o = [DEFAULT_BOX[1]], [(qw, qx, qy, qz)]
        ids += range(i * BOXES_PER_VEHICLE, i * BOXES_PER_VEHICLE + len(c))
        centers += list(c)
        sizes += list(s)
        quats += list(o)
        colors += [EGO_BOX_COLOR if 'ego' in rows.tags[i] else OTHER_BOX_COLOR] * len(c)
        names += [rows.names[i]] * len(c)
    n = len(ids)
    life = duration(BOX_LIFETIME_S)
    tmpl = _TEMPLATES.get(('boxes', map_frame, tuple(names)),
                          'visualization_msgs/msg/MarkerArray', lambda: {'markers': [
                              {'header': _header(map_frame), 'ns': 'monodrive_boxes',
                               'id': Slot('id'), 'type': Marker.CUBE, 'action': Marker.ADD,
                               'pose': Slot('pose'), 'scale': Slot('scale'),
                               'color': Slot('color'), 'lifetime': life, 'text': name}
                              for name in names]})
    if not n:
        return bytes(tmpl.fill(stamp=pair(stamp)))
    poses, scales = box_rows(n, centers, sizes, orientations=quats, min_size=0.01)
    return bytes(tmpl.fill(stamp=pair(stamp), id=np.asarray(ids, np.int32).reshape(-1, 1),
                           pose=poses, scale=scales,
                           color=np.asarray(colors, np.float32).reshape(-1, 4)))


# --- camera annotations ---------------------------------------------------------------------
ANNOTATION_2D_COLOR = (1.0, 0.9, 0.1, 1.0)
ANNOTATION_3D_COLOR = (0.1, 0.6, 1.0, 0.5)
_MARKER = 'visualization_msgs/msg/Marker'


class AnnotationCdr:
    """A camera's annotation messages as MarkerArray CDR, with DELETE bookkeeping: markers
    shown by the previous message and gone from this one are deleted first (as
    ``ros/markers_cdr.MarkerTracker`` does), then the new ones added:

    * ``monodrive_annotation_2d``: each 2-D box (pixels) as a closed LINE_STRIP on the plane
      ``depth`` m in front of the camera, in its optical frame (x right, y down, z forward),
      through the pinhole intrinsics of :func:`camera_info` — it overlays the object in RViz;
    * ``monodrive_annotation_labels``: the actor's name above each 2-D box;
    * ``monodrive_annotation_3d``: each oriented box as a CUBE in ``world_frame`` (world
      centre, orientation and full size, the State sensor's rule: :func:`world_boxes`)."""

    def __init__(self, optical_frame: str, world_frame: str, width: int, height: int,
                 fov_deg: float, depth: float = 1.0):
        self.optical, self.world = utf8_text(optical_frame), utf8_text(world_frame)
        self.width, self.height, self.fov, self.depth = width, height, fov_deg, depth
        self.shown: set = set()                    # (frame, ns, id) of the last message
        self._markers = MarkerCdr()
        self._deletes = ElementTemplates(_MARKER)

    def items(self, ann, stamp) -> tuple[list, set]:
        """The ADD items (markers_cdr) of one annotation, and their (frame, ns, id) keys."""
        st, depth, out, keys = pair(stamp), self.depth, [], set()
        b = ann.boxes_2d
        if len(b):
            fx = self.width / (2.0 * math.tan(math.radians(self.fov) / 2.0))
            cx, cy = self.width / 2.0, self.height / 2.0
            x0, x1 = (b['xmin'] - cx) / fx * depth, (b['xmax'] - cx) / fx * depth
            y0, y1 = (b['ymin'] - cy) / fx * depth, (b['ymax'] - cy) / fx * depth
            z = np.full(len(b), float(depth))
            rect = np.stack([np.stack([x0, y0, z], 1), np.stack([x1, y0, z], 1),
                             np.stack([x1, y1, z], 1), np.stack([x0, y1, z], 1),
                             np.stack([x0, y0, z], 1)], 1)                    # (n, 5, 3)
            ids = np.arange(len(b))
            out += self._markers.line_strips(st, self.optical, 'monodrive_annotation_2d', ids,
                                             list(rect), width=0.004 * depth,
                                             colors=ANNOTATION_2D_COLOR)
            top = np.stack([(x0 + x1) / 2, y0 - 0.03 * depth, z], 1)
            out += self._markers.labels(st, self.optical, 'monodrive_annotation_labels', ids,
                                        top, [utf8_text(ann.actors[i])
                                              for i in b['actor'].tolist()],
                                        height=0.04 * depth, colors=ANNOTATION_2D_COLOR)
            for ns in ('monodrive_annotation_2d', 'monodrive_annotation_labels'):
                keys |= {(self.optical, ns, i) for i in range(len(b))}
        o = ann.boxes_3d
        if len(o):
            centers, sizes, wxyz = world_boxes(o)
            out += self._markers.boxes(st, self.world, 'monodrive_annotation_3d',
                                       np.arange(len(o)), centers, sizes, orientations=wxyz,
                                       colors=ANNOTATION_3D_COLOR, min_size=0.01)
            keys |= {(self.world, 'monodrive_annotation_3d', i) for i in range(len(o))}
        return out, keys

    def markers(self, ann, stamp) -> bytes:
        adds, keys = self.items(ann, stamp)
        gone = sorted(self.shown - keys, key=lambda k: (k[1], k[2]))
        self.shown = keys
        deletes = []
        if gone:
            values = {'stamp': np.broadcast_to(np.asarray(pair(stamp), np.int64),
                                               (len(gone), 2)),
                      'id': np.array([k[2] for k in gone], np.int32)}
            for row, (frame, ns, _) in enumerate(gone):
                deletes.append((self._deletes.at(('delete', frame, ns), {
                    'header': _header(frame), 'ns': ns, 'id': Slot('id'),
                    'action': Marker.DELETE}), values, row))
        return _marker_array(deletes + adds)


_EMPTY_ARRAY = serialize('visualization_msgs/msg/MarkerArray', {'markers': []})


def _marker_array(items: list) -> bytes:
    (msg,) = messages_with_elements([_EMPTY_ARRAY], [items])
    return bytes(msg)


# --- radar ----------------------------------------------------------------------------------
RADAR_MARKER_LIFETIME_S = 0.2


def _radar_rows(targets: np.ndarray) -> np.ndarray:
    """(n, 4) float32 range m, aoa rad (REP-103: positive left), velocity, rcs."""
    out = np.empty((len(targets), 4))
    out[:, 0] = targets['range'] * CM
    out[:, 1] = -np.radians(targets['aoa'])
    out[:, 2] = targets['velocity']
    out[:, 3] = targets['rcs']
    return out.astype(np.float32)


def radar(targets: payloads.RadarTargets, stamp, frame_id: str) -> bytes:
    """MonoDriveRadarTargets (the codec left out targets with values beyond float32)."""
    ids = tuple(tuple(utf8_text(t) for t in i) for i in targets.target_ids)
    gt_ids = tuple(tuple(utf8_text(t) for t in i) for i in targets.gt_target_ids)

    def target(names, slot):
        return {'range': Slot(slot), 'aoa': Slot(slot), 'velocity': Slot(slot),
                'rcs': Slot(slot), 'target_ids': list(names)}
    tmpl = _TEMPLATES.get(('radar', frame_id, ids, gt_ids),
                          'ros_sim_bridge/msg/MonoDriveRadarTargets', lambda: {
                              'header': _header(frame_id),
                              'targets': [target(i, 't') for i in ids],
                              'gt_targets': [target(i, 'g') for i in gt_ids]})
    values = {'stamp': pair(stamp)}
    if ids:
        values['t'] = _radar_rows(targets.targets).reshape(-1, 1)
    if gt_ids:
        values['g'] = _radar_rows(targets.gt_targets).reshape(-1, 1)
    return bytes(tmpl.fill(**values))


def radar_markers(targets: payloads.RadarTargets, stamp, frame_id: str) -> bytes:
    """A red SPHERE (0.5 m) at each target (range, angle of arrival) in the radar's frame."""
    n = len(targets.targets)
    tmpl = _TEMPLATES.get(('radar_markers', frame_id, n),
                          'visualization_msgs/msg/MarkerArray', lambda: {'markers': [
                              {'header': _header(frame_id), 'ns': 'monodrive_radar', 'id': k,
                               'type': Marker.SPHERE, 'action': Marker.ADD,
                               'pose': {'position': Slot('at')},
                               'scale': {'x': 0.5, 'y': 0.5, 'z': 0.5},
                               'color': {'r': 1.0, 'a': 0.8},
                               'lifetime': duration(RADAR_MARKER_LIFETIME_S)}
                              for k in range(n)]})
    if not n:
        return bytes(tmpl.fill(stamp=pair(stamp)))
    rows = _radar_rows(targets.targets).astype(np.float64)
    r, aoa = rows[:, 0], rows[:, 1]
    at = np.stack([r * np.cos(aoa), r * np.sin(aoa), np.zeros(n)], 1)
    return bytes(tmpl.fill(stamp=pair(stamp), at=at))


# --- JSON sensors ---------------------------------------------------------------------------
def _float32(v: float) -> float:
    """NaN for a value a float32 field cannot hold (beyond ±3.4e38, not finite)."""
    v = float(v)
    return v if abs(v) <= payloads.FLOAT32_MAX else math.nan


def _f32(obj, key: str, scale: float = 1.0) -> float:
    """An optional report number for a float32 field: NaN when absent, not finite or beyond
    float32."""
    return _float32(payloads.number_or_nan(obj, key) * scale)


def collision(value, text: str, stamp, frame_id: str) -> bytes:
    v = value if isinstance(value, dict) else {}
    targets = v.get('targets') if isinstance(v.get('targets'), list) else []
    targets = [t for t in targets if isinstance(t, dict)]
    return serialize('ros_sim_bridge/msg/MonoDriveCollision', {
        'header': _stamped(stamp, frame_id),
        'name': utf8_text(str(v.get('name', ''))),
        'collision': bool(v.get('collision', False)),
        'game_time': payloads.number_or_nan(v, 'game_time'),
        'distance': _f32(v, 'distance'), 'time_to_collision': _f32(v, 'time_to_collision'),
        'forward_velocity': _f32(v, 'forward_velocity'),
        'target_names': [utf8_text(str(t.get('name', ''))) for t in targets],
        'target_distances': [_f32(t, 'distance') for t in targets],
        'target_time_to_collision': [_f32(t, 'time_to_collision') for t in targets],
        'json': utf8_text(text)})


def waypoint(text: str, stamp, frame_id: str) -> bytes:
    return serialize('ros_sim_bridge/msg/MonoDriveWaypoint', {
        'header': _stamped(stamp, frame_id),
        'json': utf8_text(text)})


def ultrasonic(value, text: str, stamp, frame_id: str, raw=()) -> bytes:
    """Ranges (m) of the targets of a JSON report (NaN where not a float32 number); ``raw``:
    the floats of a binary message, as sent."""
    targets = []
    if isinstance(value, dict):
        targets = value.get('targets') or value.get('target_list') or []
    elif isinstance(value, list):
        targets = value
    targets = targets if isinstance(targets, list) else []
    return serialize('ros_sim_bridge/msg/MonoDriveUltrasonic', {
        'header': _stamped(stamp, frame_id),
        'ranges': [_f32(t, 'range', CM) for t in targets if isinstance(t, dict)],
        'json': utf8_text(text), 'raw': np.asarray(raw, np.float32)})


def raw(source: str, port: int, stamp, *, msg_type: str = '', game_time: float = 0.0,
        sample_count: Optional[int] = None, payload=b'') -> bytes:
    """MonoDriveRaw: the payload as JSON text when it is UTF-8 JSON, else as bytes."""
    data, text = bytes(payload), ''
    if payloads.is_json(data):
        try:
            text, data = data.decode('utf-8'), b''
        except UnicodeDecodeError:
            pass
    return serialize('ros_sim_bridge/msg/MonoDriveRaw', {
        'header': _stamped(stamp, ''), 'source': utf8_text(source),
        'port': int(port), 'type': utf8_text(msg_type), 'game_time': float(game_time),
        'sample_count': int(sample_count or 0), 'json': utf8_text(text), 'data': data})


def control_raw(message, port: int, stamp) -> bytes:
    """A control message nobody waits for: its JSON as standard JSON (non-finite → null)."""
    return serialize('ros_sim_bridge/msg/MonoDriveRaw', {
        'header': _stamped(stamp, ''), 'source': 'control', 'port': int(port),
        'type': utf8_text(message.type), 'json': utf8_text(standard_json(message.raw))})
