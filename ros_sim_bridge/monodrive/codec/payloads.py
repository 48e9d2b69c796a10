"""Sensor payloads after the header (SUPPLEMENT §4.4).  Wire units are kept here (cm, cm/s,
degrees, Unreal's left-handed axes); the ROS layer converts to SI and REP-103."""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ros_sim_bridge.core.binary import BAD_MAGIC, CodecError, require_length
from ros_sim_bridge.monodrive.codec.annotation import vector_of
from ros_sim_bridge.monodrive.codec.control import json_float, parse_json
from ros_sim_bridge.monodrive.codec.units import CM

# --- IMU: 35 bytes, big-endian --------------------------------------------------------------
IMU_SIZE = 35
IMU_START = 0xC2
IMU = np.dtype([('start', 'u1'), ('acceleration', '>f4', (3,)), ('angular_velocity', '>f4', (3,)),
                ('timer', '>u4'), ('checksum', '>u2'), ('time_of_week', '>u4')])
assert IMU.itemsize == IMU_SIZE
IMU_2021_SIZE = 168           # newer docs' layout of float vectors: published raw (not public)


@dataclass(frozen=True)
class ImuSample:
    acceleration: tuple       # x, y, z as sent (Unreal axes)
    angular_velocity: tuple   # x, y, z as sent (Unreal axes)
    timer: int
    checksum: int
    time_of_week: int


def decode_imu(payload) -> ImuSample:
    require_length(payload, 'IMU', exact=IMU_SIZE)
    r = np.frombuffer(payload, IMU, count=1)[0]
    if r['start'] != IMU_START:
        raise CodecError('IMU', f'start byte 0x{int(r["start"]):02x}, expected 0xc2',
                         field='start', offset=0, kind=BAD_MAGIC)
    acc = tuple(float(v) for v in r['acceleration'])
    gyro = tuple(float(v) for v in r['angular_velocity'])
    if not all(math.isfinite(v) for v in acc + gyro):
        raise CodecError('IMU', 'non-finite acceleration or angular velocity', offset=1)
    return ImuSample(acc, gyro, int(r['timer']), int(r['checksum']), int(r['time_of_week']))


def encode_imu(acc, gyro, timer=0, checksum=0, time_of_week=0) -> bytes:
    r = np.zeros(1, IMU)
    r['start'], r['acceleration'], r['angular_velocity'] = IMU_START, acc, gyro
    r['timer'], r['checksum'], r['time_of_week'] = timer, checksum, time_of_week
    return r.tobytes()


# --- GPS: 66 bytes, big-endian `>chhcdddfffffffhhcch` ---------------------------------------
GPS = struct.Struct('>BhhBdddfffffffHHBBH')
GPS_SIZE = GPS.size
GPS_PREAMBLE = 0x55
GPS_MSG_ID = 0x020A
assert GPS_SIZE == 66


@dataclass(frozen=True)
class GpsSample:
    msg_id: int
    id: int
    payload_size: int
    latitude: float           # degrees
    longitude: float          # degrees
    elevation: float          # m
    world_x: float            # cm (Unreal)
    world_y: float            # cm (Unreal)
    forward: tuple            # unit vector (Unreal)
    yaw: float                # degrees (Unreal, clockwise)
    speed: float              # m/s
    h_accuracy: int
    v_accuracy: int
    satellites: int
    fix: int
    crc: int


def decode_gps(payload) -> GpsSample:
    require_length(payload, 'GPS', exact=GPS_SIZE)
    v = GPS.unpack_from(payload, 0)
    if v[0] != GPS_PREAMBLE:
        raise CodecError('GPS', f'preamble 0x{v[0]:02x}, expected 0x55', field='preamble',
                         offset=0, kind=BAD_MAGIC)
    if not all(math.isfinite(x) for x in v[4:14]):
        raise CodecError('GPS', 'non-finite position or motion', offset=6)
    if not (-90 <= v[4] <= 90 and -180 <= v[5] <= 360):
        raise CodecError('GPS', f'latitude {v[4]} / longitude {v[5]} out of range',
                         field='latitude', offset=6)
    return GpsSample(v[1] & 0xFFFF, v[2], v[3], v[4], v[5], v[6], v[7], v[8],
                     (v[9], v[10], v[11]), v[12], v[13], v[14], v[15], v[16], v[17], v[18])


def encode_gps(lat, lon, elevation, world_xy=(0.0, 0.0), forward=(1.0, 0.0, 0.0), yaw=0.0,
               speed=0.0, h_acc=1, v_acc=1, satellites=12, fix=1, crc=0, sensor_id=0) -> bytes:
    return GPS.pack(GPS_PREAMBLE, GPS_MSG_ID, sensor_id, 34, lat, lon, elevation,
                    world_xy[0], world_xy[1], *forward, yaw, speed, h_acc, v_acc, satellites,
                    fix, crc)


# --- RPM: i32 wheel number, f32 speed (big-endian like the other binary sensors) ---------
RPM = struct.Struct('>if')


def decode_rpm(payload) -> tuple[int, float]:
    require_length(payload, 'RPM', exact=RPM.size)
    wheel, speed = RPM.unpack_from(payload, 0)
    if not math.isfinite(speed):
        raise CodecError('RPM', f'speed {speed}', field='speed', offset=4)
    return wheel, speed


# --- Cameras ------------------------------------------------------------------------------
CHANNELS = {'bgra': 4, 'rgba': 4, 'bgr': 3, 'rgb': 3, 'gray': 1, 'mono8': 1}


def image_size(width: int, height: int, channels: str) -> int:
    return width * height * CHANNELS[channels]


def decode_image(payload, width: int, height: int, channels: str = 'bgra') -> np.ndarray:
    """Row-major 8-bit pixels as a (height, width, c) view (no copy)."""
    if channels not in CHANNELS:
        raise CodecError('Camera', f'channels {channels!r} not one of {", ".join(CHANNELS)}',
                         field='channels')
    require_length(payload, 'Camera', exact=image_size(width, height, channels))
    return np.frombuffer(payload, np.uint8).reshape(height, width, CHANNELS[channels])


def decode_depth(payload, width: int, height: int, byte_order: str = '<') -> np.ndarray:
    """float32 distance in cm per pixel → (height, width) float32 in metres."""
    require_length(payload, 'DepthCamera', exact=width * height * 4)
    return np.frombuffer(payload, np.dtype('f4').newbyteorder(byte_order)
                         ).reshape(height, width).astype(np.float32) * np.float32(CM)


def decode_semantic(payload, width: int, height: int) -> np.ndarray:
    """One byte of class id per pixel → (height, width) uint8."""
    require_length(payload, 'SemanticCamera', exact=width * height)
    return np.frombuffer(payload, np.uint8).reshape(height, width)


def is_json(payload) -> bool:
    return len(payload) > 0 and bytes(payload[:1]) in (b'{', b'[')


# --- JSON sensors -------------------------------------------------------------------------
def _num(obj: Any, key: str, where: str, sensor: str) -> float:
    if not isinstance(obj, dict):
        raise CodecError(sensor, 'not an object', field=where)
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CodecError(sensor, 'missing' if key not in obj else
                         f'{"null" if value is None else type(value).__name__}, expected a number',
                         field=f'{where}.{key}')
    value = json_float(value)
    if not math.isfinite(value):
        raise CodecError(sensor, f'{value}, expected a finite number', field=f'{where}.{key}')
    return value


def vector(value: Any, where: str, sensor: str, keys: str = 'xyz') -> tuple:
    """A vector given as {x, y, z(, w)} or as an array."""
    if isinstance(value, list):
        if len(value) != len(keys):
            raise CodecError(sensor, f'{len(value)} values, expected {len(keys)}', field=where)
        out = []
        for i, v in enumerate(value):
            out.append(_num({'v': v}, 'v', f'{where}[{i}]', sensor))
        return tuple(out)
    return tuple(_num(value, k, where, sensor) for k in keys)


RADAR_TARGET = np.dtype([('range', 'f8'), ('aoa', 'f8'), ('velocity', 'f8'), ('rcs', 'f8')])
FLOAT32_MAX = 3.402823466e+38     # the bound rclpy checks on a float32 field (ROS targets)


@dataclass
class RadarTargets:
    targets: np.ndarray                 # RADAR_TARGET, wire units (range cm, aoa deg)
    target_ids: list                    # list of lists of str
    gt_targets: np.ndarray
    gt_target_ids: list
    problems: list = field(default_factory=list)   # CodecErrors of targets left out


def _radar_list(items: Any, where: str, problems: list) -> tuple[np.ndarray, list]:
    """The targets of one list; a target with a missing, non-finite or (for float32)
    too large value is left out and its error added to ``problems``."""
    if items is None:
        return np.zeros(0, RADAR_TARGET), []
    if not isinstance(items, list):
        raise CodecError('Radar', 'expected an array', field=where)
    rows, ids = [], []
    for i, t in enumerate(items):
        try:
            row = tuple(_num(t, k, f'{where}[{i}]', 'Radar') for k in RADAR_TARGET.names)
            big = [k for k, v in zip(RADAR_TARGET.names, row) if abs(v) > FLOAT32_MAX]
            if big:
                raise CodecError('Radar', f'{row[RADAR_TARGET.names.index(big[0])]:g} beyond '
                                 'float32', field=f'{where}[{i}].{big[0]}')
        except CodecError as err:
            problems.append(err)
            continue
        rows.append(row)
        raw = t.get('target_ids') or []
        ids.append([str(x) for x in raw] if isinstance(raw, list) else [str(raw)])
    return np.array(rows, RADAR_TARGET), ids


def decode_radar(payload) -> RadarTargets:
    value = parse_json(payload, 'Radar')
    if not isinstance(value, dict):
        raise CodecError('Radar', 'expected a JSON object')
    problems: list = []
    t, ids = _radar_list(value.get('target_list'), 'target_list', problems)
    g, gids = _radar_list(value.get('gt_targets'), 'gt_targets', problems)
    return RadarTargets(t, ids, g, gids, problems)


@dataclass
class VehicleState:
    name: str
    position: tuple            # cm, Unreal
    orientation: tuple         # x, y, z, w (Unreal)
    linear_velocity: tuple     # cm/s
    angular_velocity: tuple    # rad/s (Unreal axes)
    tags: list
    boxes: np.ndarray          # STATE_BOX: oriented bounding boxes (world cm, Unreal axes)
    wheels: list
    is_object: bool = False


@dataclass
class StateFrame:
    time: Optional[float]
    game_time: Optional[float]
    sample_count: Optional[int]
    vehicles: list
    objects: list
    problems: list = field(default_factory=list)   # CodecErrors of entries left out


#: one ``oriented_bounding_box`` of the State sensor, as sent (Unreal axes): ``center`` world cm
#: (monoDrive's State documentation: "relative to the origin"), ``extents`` full sizes in cm,
#: ``orientation`` the box's own world rotation (x, y, z, w; identity when absent)
STATE_BOX = np.dtype([('center', '<f8', 3), ('extents', '<f8', 3), ('orientation', '<f8', 4)])


def _state_boxes(value: Any, where: str, problems: list) -> np.ndarray:
    """The boxes of one vehicle; a box with a missing or non-finite centre, extent or
    orientation is left out and its CodecError (naming the field) kept in ``problems``."""
    if value is None:
        return np.zeros(0, STATE_BOX)
    rows = []
    for j, box in enumerate(value if isinstance(value, list) else [value]):
        at = f'{where}.oriented_bounding_box[{j}]'
        try:
            if not isinstance(box, dict):
                raise CodecError('State', 'not an object', field=at)
            center = vector_of(box.get('center'), 3, f'{at}.center', 'State')
            extents = vector_of(box.get('extents'), 3, f'{at}.extents', 'State')
            orientation = (0.0, 0.0, 0.0, 1.0) if box.get('orientation') is None else \
                vector_of(box.get('orientation'), 4, f'{at}.orientation', 'State')
        except CodecError as err:
            problems.append(err)
            continue
        rows.append((center, extents, orientation))
    return np.array(rows, STATE_BOX)


def _state_entry(entry: Any, where: str, is_object: bool, problems: list) -> VehicleState:
    if not isinstance(entry, dict):
        raise CodecError('State', 'not an object', field=where)
    state = entry.get('state', entry)
    if not isinstance(state, dict):
        raise CodecError('State', 'not an object', field=where + '.state')
    odom = state.get('odometry')
    if not isinstance(odom, dict):
        raise CodecError('State', 'missing or not an object', field=where + '.state.odometry')
    pose = odom.get('pose')
    if not isinstance(pose, dict):
        raise CodecError('State', 'missing or not an object', field=where + '.odometry.pose')
    w = where + '.state.odometry'
    boxes = _state_boxes(state.get('oriented_bounding_box'), where + '.state', problems)
    return VehicleState(
        name=str(state.get('name', '')),
        position=vector(pose.get('position'), w + '.pose.position', 'State'),
        orientation=vector(pose.get('orientation'), w + '.pose.orientation', 'State', 'xyzw'),
        linear_velocity=vector(odom.get('linear_velocity', {'x': 0, 'y': 0, 'z': 0}),
                               w + '.linear_velocity', 'State'),
        angular_velocity=vector(odom.get('angular_velocity', {'x': 0, 'y': 0, 'z': 0}),
                                w + '.angular_velocity', 'State'),
        tags=[str(t) for t in state.get('tags') or []],
        boxes=boxes,
        wheels=entry.get('wheels') or [], is_object=is_object)


def _opt_num(value: Any) -> Optional[float]:
    """An optional number: None when absent or not a number, NaN when not finite."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    value = json_float(value)
    return value if math.isfinite(value) else math.nan


def decode_state(payload) -> StateFrame:
    """State sensor JSON; a vehicle with a missing or ``null`` pose value is left out and its
    error kept in ``problems`` (the other vehicles still arrive)."""
    value = parse_json(payload, 'State')
    if not isinstance(value, dict):
        raise CodecError('State', 'expected a JSON object')
    frame = value.get('frame', value)
    if not isinstance(frame, dict):
        raise CodecError('State', 'missing or not an object', field='frame')
    count = value.get('sample_count')
    out = StateFrame(_opt_num(value.get('time')), _opt_num(value.get('game_time')),
                     count if isinstance(count, int) and 0 <= count < 1 << 32 else None, [], [])
    for key, target, is_object in (('vehicles', out.vehicles, False),
                                   ('objects', out.objects, True)):
        items = frame.get(key) or []
        if not isinstance(items, list):
            raise CodecError('State', 'not an array', field=f'frame.{key}')
        for i, entry in enumerate(items):
            try:
                target.append(_state_entry(entry, f'frame.{key}[{i}]', is_object,
                                           out.problems))
            except CodecError as err:
                out.problems.append(err)
    return out


def decode_json_sensor(payload, sensor: str) -> Any:
    """Collision, Waypoint, Ultrasonic (targets), annotations: the parsed JSON."""
    return parse_json(payload, sensor)


def number_or_nan(obj: Any, key: str) -> float:
    """A JSON number, or NaN for ``null``/absent/non-numeric (used for optional report
    fields: the collision report publishes every sample it can)."""
    value = _opt_num(obj.get(key) if isinstance(obj, dict) else None)
    return math.nan if value is None else value
