"""monoDrive samples → ROS messages, in SI units and REP-103 axes.

Unreal (monoDrive) is left-handed: X forward, Y right, Z up, centimetres (SUPPLEMENT §4.4,
§5.4).  To REP-103: x = X/100, y = −Y/100, z = Z/100; a quaternion (x, y, z, w) becomes
(−x, y, −z, w) (the same rotation seen in the mirrored frame: yaw and roll change sign);
angular velocity (x, −y, −z) as §5.4 states it; sensor rotations (pitch, yaw, roll in degrees)
become roll = rad(roll), pitch = −rad(pitch), yaw = −rad(yaw).
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np
from geometry_msgs.msg import Pose, Twist, TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import CameraInfo, Image, Imu, NavSatFix, NavSatStatus
from std_msgs.msg import Header
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.core.frames import quat_from_euler
from ros_sim_bridge.monodrive.codec import payloads
from ros_sim_bridge.monodrive.codec.control import standard_json
from ros_sim_bridge.msg import (MonoDriveCollision, MonoDriveRadarTarget, MonoDriveRadarTargets,
                                MonoDriveRaw, MonoDriveRpm, MonoDriveState,
                                MonoDriveUltrasonic, MonoDriveVehicleState, MonoDriveWaypoint)
from ros_sim_bridge.ros import markers
from ros_sim_bridge.ros.geometry import point, quaternion, vector3
from ros_sim_bridge.ros.uint8_field import set_uint8_field

CM = 0.01
ENCODINGS = {'bgra': 'bgra8', 'rgba': 'rgba8', 'bgr': 'bgr8', 'rgb': 'rgb8', 'gray': 'mono8',
             'mono8': 'mono8'}


def header(stamp, frame_id: str) -> Header:
    return Header(stamp=stamp, frame_id=frame_id)


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
def image(pixels: np.ndarray, encoding: str, stamp, frame_id: str) -> Image:
    h, w = pixels.shape[:2]
    c = pixels.shape[2] if pixels.ndim == 3 else 1
    msg = Image(header=header(stamp, frame_id), height=h, width=w, encoding=encoding,
                is_bigendian=0, step=w * c * pixels.dtype.itemsize)
    msg.data = pixels.tobytes() if not pixels.flags.c_contiguous else bytes(pixels.data)
    return msg


def camera_image(payload, width: int, height: int, channels: str, stamp, frame_id: str) -> Image:
    """An Image whose ``data`` is the payload itself, not a copy (a 1920×1080 bgra frame is
    8 MB): rclpy's C conversion takes any buffer for a uint8[] field and copies it once, at
    publish.  The payload must stay unchanged until then (the sensor framer hands every
    message its own buffer).  Reading ``msg.data`` back in Python gives that buffer."""
    payloads.decode_image(payload, width, height, channels)      # checks size and channels
    msg = Image(header=header(stamp, frame_id), height=height, width=width,
                encoding=ENCODINGS[channels], is_bigendian=0,
                step=width * payloads.CHANNELS[channels])
    set_uint8_field(msg, 'data', payload)
    return msg


def depth_image(payload, width: int, height: int, stamp, frame_id: str) -> Image:
    metres = payloads.decode_depth(payload, width, height)
    return image(metres, '32FC1', stamp, frame_id)


def semantic_image(payload, width: int, height: int, stamp, frame_id: str) -> Image:
    return image(payloads.decode_semantic(payload, width, height), 'mono8', stamp, frame_id)


def camera_info(width: int, height: int, fov_deg: float, stamp, frame_id: str) -> CameraInfo:
    """Pinhole intrinsics from the horizontal field of view (square pixels, no distortion)."""
    fx = width / (2.0 * math.tan(math.radians(fov_deg) / 2.0))
    cx, cy = width / 2.0, height / 2.0
    msg = CameraInfo(header=header(stamp, frame_id), width=width, height=height,
                     distortion_model='plumb_bob')
    msg.d = [0.0] * 5
    msg.k = [fx, 0.0, cx, 0.0, fx, cy, 0.0, 0.0, 1.0]
    msg.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    msg.p = [fx, 0.0, cx, 0.0, 0.0, fx, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    return msg


# --- IMU, GPS, RPM --------------------------------------------------------------------------
def imu(sample: payloads.ImuSample, stamp, frame_id: str) -> Imu:
    msg = Imu(header=header(stamp, frame_id))
    a = sample.acceleration
    msg.linear_acceleration = vector3((a[0], -a[1], a[2]))
    msg.angular_velocity = vector3(angular_velocity(sample.angular_velocity))
    msg.orientation_covariance[0] = -1.0        # no orientation in the record
    return msg


def nav_sat_fix(sample: payloads.GpsSample, stamp, frame_id: str) -> NavSatFix:
    msg = NavSatFix(header=header(stamp, frame_id), latitude=sample.latitude,
                    longitude=sample.longitude, altitude=sample.elevation)
    msg.status.status = NavSatStatus.STATUS_FIX if sample.fix else NavSatStatus.STATUS_NO_FIX
    msg.status.service = NavSatStatus.SERVICE_GPS
    h, v = float(sample.h_accuracy), float(sample.v_accuracy)
    msg.position_covariance = [h * h, 0.0, 0.0, 0.0, h * h, 0.0, 0.0, 0.0, v * v]
    msg.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    return msg


def rpm(wheel: int, speed: float, stamp, frame_id: str) -> MonoDriveRpm:
    return MonoDriveRpm(header=header(stamp, frame_id), wheel_number=wheel, speed=speed)


# --- state ----------------------------------------------------------------------------------
def vehicle_state(v: payloads.VehicleState) -> MonoDriveVehicleState:
    pose = Pose(position=point(position_m(v.position)),
                orientation=quaternion(quat_wxyz(v.orientation)))
    twist = Twist(linear=vector3(position_m(v.linear_velocity)),
                  angular=vector3(angular_velocity(v.angular_velocity)))
    return MonoDriveVehicleState(name=v.name, tags=list(v.tags), pose=pose, twist=twist,
                                 is_object=v.is_object)


def state(frame: payloads.StateFrame, game_time: float, sample_count: Optional[int], stamp,
          map_frame: str) -> MonoDriveState:
    return MonoDriveState(header=header(stamp, map_frame), game_time=float(game_time),
                          sample_count=int(sample_count or 0),
                          vehicles=[vehicle_state(v) for v in frame.vehicles],
                          objects=[vehicle_state(v) for v in frame.objects])


def odometry(v: MonoDriveVehicleState, stamp, map_frame: str, child: str) -> Odometry:
    """Odometry of one vehicle; the twist is rotated into the vehicle frame (REP-105)."""
    msg = Odometry(header=header(stamp, map_frame), child_frame_id=child)
    msg.pose.pose = v.pose
    q = v.pose.orientation
    rot = _rotation(q.w, q.x, q.y, q.z)
    lin = rot.T @ np.array([v.twist.linear.x, v.twist.linear.y, v.twist.linear.z])
    ang = rot.T @ np.array([v.twist.angular.x, v.twist.angular.y, v.twist.angular.z])
    msg.twist.twist.linear = vector3(lin)
    msg.twist.twist.angular = vector3(ang)
    return msg


def _rotation(w, x, y, z) -> np.ndarray:
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def transform(v: MonoDriveVehicleState, stamp, parent: str, child: str) -> TransformStamped:
    t = TransformStamped(header=header(stamp, parent), child_frame_id=child)
    p = v.pose.position
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = p.x, p.y, p.z
    t.transform.rotation = v.pose.orientation
    return t


EGO_BOX_COLOR = (0.2, 0.8, 0.2, 0.6)
OTHER_BOX_COLOR = (0.9, 0.5, 0.1, 0.6)
DEFAULT_BOX = ((0.0, 0.0, 0.75), (4.5, 1.9, 1.5))   # centre (m, vehicle frame), full size (m)
BOXES_PER_VEHICLE = 16                               # marker id = vehicle index · 16 + box


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


def box_markers(vehicles, boxes, stamp, map_frame: str, lifetime_s: float = 0.5
                ) -> MarkerArray:
    """Oriented boxes of the State sensor as CUBE markers (ros/markers.boxes) in ``map_frame``.
    ``boxes``: per vehicle, its ``payloads.STATE_BOX`` array — world centre, orientation and
    full size (:func:`world_boxes`); a vehicle without boxes gets a 4.5 × 1.9 × 1.5 m default
    box on its pose.  Each box's text is the vehicle's name."""
    ids, centers, sizes, quats, colors, names = [], [], [], [], [], []
    for i, (v, vboxes) in enumerate(zip(vehicles, boxes)):
        q = v.pose.orientation
        if len(vboxes):
            c, s, o = world_boxes(vboxes)
        else:
            p = np.array([v.pose.position.x, v.pose.position.y, v.pose.position.z])
            rot = _rotation(q.w, q.x, q.y, q.z)
            c = [p + rot @ np.array(DEFAULT_BOX[0])]
            s, o = [DEFAULT_BOX[1]], [(q.w, q.x, q.y, q.z)]
        n = min(len(c), BOXES_PER_VEHICLE)
        ids += range(i * BOXES_PER_VEHICLE, i * BOXES_PER_VEHICLE + n)
        centers += list(c[:n])
        sizes += list(s[:n])
        quats += list(o[:n])
        colors += [EGO_BOX_COLOR if 'ego' in v.tags else OTHER_BOX_COLOR] * n
        names += [v.name] * n
    out = MarkerArray()
    if not ids:
        return out
    out.markers = markers.boxes(header(stamp, map_frame), 'monodrive_boxes', ids, centers,
                                sizes, orientations=quats, colors=colors, min_size=0.01,
                                lifetime=markers.duration(lifetime_s))
    for m, name in zip(out.markers, names):
        m.text = name
    return out


ANNOTATION_2D_COLOR = (1.0, 0.9, 0.1, 1.0)
ANNOTATION_3D_COLOR = (0.1, 0.6, 1.0, 0.5)


def annotation_markers(ann, stamp, optical_frame: str, world_frame: str, width: int,
                       height: int, fov_deg: float, depth: float = 1.0) -> list[Marker]:
    """A camera annotation (codec.annotation.CameraAnnotation) as markers (ADD only; the node
    deletes the ones gone with ros/markers.MarkerTracker):

    * ``monodrive_annotation_2d``: each 2-D box (pixels) as a closed LINE_STRIP on the plane
      ``depth`` m in front of the camera, in its optical frame (x right, y down, z forward),
      through the pinhole intrinsics of :func:`camera_info` — it overlays the object in RViz;
    * ``monodrive_annotation_labels``: the actor's name above each 2-D box;
    * ``monodrive_annotation_3d``: each oriented box as a CUBE in ``world_frame`` (world
      centre, orientation and full size, the State sensor's rule: :func:`oriented_box`)."""
    out: list[Marker] = []
    b = ann.boxes_2d
    if len(b):
        fx = width / (2.0 * math.tan(math.radians(fov_deg) / 2.0))
        cx, cy = width / 2.0, height / 2.0
        x0, x1 = (b['xmin'] - cx) / fx * depth, (b['xmax'] - cx) / fx * depth
        y0, y1 = (b['ymin'] - cy) / fx * depth, (b['ymax'] - cy) / fx * depth
        z = np.full(len(b), float(depth))
        rect = np.stack([np.stack([x0, y0, z], 1), np.stack([x1, y0, z], 1),
                         np.stack([x1, y1, z], 1), np.stack([x0, y1, z], 1),
                         np.stack([x0, y0, z], 1)], 1)                    # (n, 5, 3)
        h = header(stamp, optical_frame)
        ids = np.arange(len(b))
        out += markers.line_strips(h, 'monodrive_annotation_2d', ids, list(rect),
                                   width=0.004 * depth, colors=ANNOTATION_2D_COLOR)
        top = np.stack([(x0 + x1) / 2, y0 - 0.03 * depth, z], 1)
        out += markers.labels(h, 'monodrive_annotation_labels', ids, top,
                              [ann.actors[i] for i in b['actor'].tolist()],
                              height=0.04 * depth, colors=ANNOTATION_2D_COLOR)
    o = ann.boxes_3d
    if len(o):
        centers, sizes, wxyz = world_boxes(o)
        out += markers.boxes(header(stamp, world_frame), 'monodrive_annotation_3d',
                             np.arange(len(o)), centers, sizes, orientations=wxyz,
                             colors=ANNOTATION_3D_COLOR, min_size=0.01)
    return out


# --- radar ----------------------------------------------------------------------------------
def radar(targets: payloads.RadarTargets, stamp, frame_id: str) -> MonoDriveRadarTargets:
    def convert(arr, ids):
        return [MonoDriveRadarTarget(range=float(t['range']) * CM,
                                     aoa=-math.radians(float(t['aoa'])),
                                     velocity=float(t['velocity']), rcs=float(t['rcs']),
                                     target_ids=list(i))
                for t, i in zip(arr, ids)]
    return MonoDriveRadarTargets(header=header(stamp, frame_id),
                                 targets=convert(targets.targets, targets.target_ids),
                                 gt_targets=convert(targets.gt_targets, targets.gt_target_ids))


def radar_markers(msg: MonoDriveRadarTargets, lifetime_s: float = 0.2) -> MarkerArray:
    out = MarkerArray()
    for i, t in enumerate(msg.targets):
        m = Marker(header=msg.header, ns='monodrive_radar', id=i, type=Marker.SPHERE,
                   action=Marker.ADD)
        m.pose.position = point((t.range * math.cos(t.aoa), t.range * math.sin(t.aoa), 0.0))
        m.pose.orientation.w = 1.0
        m.scale = vector3((0.5, 0.5, 0.5))
        m.color.r, m.color.a = 1.0, 0.8
        m.lifetime.nanosec = int(lifetime_s * 1e9)
        out.markers.append(m)
    return out


# --- JSON sensors ---------------------------------------------------------------------------
def _f32(obj, key: str, scale: float = 1.0) -> float:
    """An optional report number for a float32 field: NaN when absent, not finite or beyond
    float32 (rclpy refuses the message otherwise)."""
    v = payloads.number_or_nan(obj, key) * scale
    return v if abs(v) <= payloads.FLOAT32_MAX else math.nan


def collision(value, text: str, stamp, frame_id: str) -> MonoDriveCollision:
    v = value if isinstance(value, dict) else {}
    targets = v.get('targets') if isinstance(v.get('targets'), list) else []
    targets = [t for t in targets if isinstance(t, dict)]
    return MonoDriveCollision(
        header=header(stamp, frame_id), name=str(v.get('name', '')),
        collision=bool(v.get('collision', False)),
        game_time=payloads.number_or_nan(v, 'game_time'),
        distance=_f32(v, 'distance'), time_to_collision=_f32(v, 'time_to_collision'),
        forward_velocity=_f32(v, 'forward_velocity'),
        target_names=[str(t.get('name', '')) for t in targets],
        target_distances=[_f32(t, 'distance') for t in targets],
        target_time_to_collision=[_f32(t, 'time_to_collision') for t in targets],
        json=text)


def waypoint(text: str, stamp, frame_id: str) -> MonoDriveWaypoint:
    return MonoDriveWaypoint(header=header(stamp, frame_id), json=text)


def ultrasonic(value, text: str, stamp, frame_id: str) -> MonoDriveUltrasonic:
    targets = []
    if isinstance(value, dict):
        targets = value.get('targets') or value.get('target_list') or []
    elif isinstance(value, list):
        targets = value
    targets = targets if isinstance(targets, list) else []
    ranges = [_f32(t, 'range', CM) for t in targets if isinstance(t, dict)]
    return MonoDriveUltrasonic(header=header(stamp, frame_id), ranges=ranges, json=text)


def raw(source: str, port: int, stamp, *, msg_type: str = '', game_time: float = 0.0,
        sample_count: Optional[int] = None, payload=b'') -> MonoDriveRaw:
    msg = MonoDriveRaw(header=header(stamp, ''), source=source, port=port, type=msg_type,
                       game_time=float(game_time), sample_count=int(sample_count or 0))
    data = bytes(payload)
    if payloads.is_json(data):
        try:
            msg.json = data.decode('utf-8')
            return msg
        except UnicodeDecodeError:
            pass
    msg.data = data
    return msg


def control_raw(message, port: int, stamp) -> MonoDriveRaw:
    return MonoDriveRaw(header=header(stamp, ''), source='control', port=port,
                        type=message.type, json=standard_json(message.raw))
