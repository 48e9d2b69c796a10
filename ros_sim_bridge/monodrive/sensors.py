"""monoDrive sensors, sans-IO: a sensor's configuration and what one of its samples is
(SUPPLEMENT §4.4).  Bytes in, typed records out, CodecError (naming the field) on bad input;
no sockets, threads or ROS.

:func:`sensor_config` reads one entry of a sensor list (REPLAY_ConfigureSensorsCommand_ID);
:func:`decode_sample` turns the payload of one framed sample of that sensor into a record.
The state across samples (header generation, sample gaps, lidar revolutions) is
:class:`ros_sim_bridge.monodrive.session.SensorSession`'s.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.monodrive import lidar_geometry
from ros_sim_bridge.monodrive.codec import annotation as annot
from ros_sim_bridge.monodrive.codec import control, lidar, payloads
from ros_sim_bridge.monodrive.codec.sensor import SensorHeader

#: sensor types whose samples are JSON (no binary layout of a known size)
JSON_SENSORS = ('State', 'Radar', 'Collision', 'Waypoint', 'Ultrasonic')
DEFAULT_FOV = 60.0              # degrees, a camera configured without ``fov``
DEFAULT_LASERS = 16
DEFAULT_HORIZONTAL_RESOLUTION = 0.4   # degrees


def is_camera(kind: str) -> bool:
    """Camera, DepthCamera, SemanticCamera and every other ``…Camera`` type."""
    return 'Camera' in kind


def sensor_name(kind: str, port: int, config: dict) -> str:
    """The sensor's ``description`` (else ``id``) with non-word characters as ``_``; a numeric
    or empty one gives ``<kind>_<port>``."""
    desc = str(config.get('description') or config.get('id') or '')
    base = re.sub(r'[^A-Za-z0-9_]', '_', desc) if desc and not desc.isdigit() else ''
    return base or f'{kind.lower()}_{port}'


@dataclass(frozen=True)
class SensorConfig:
    """One configured sensor stream, as far as reading its samples goes."""
    kind: str                   # the ``type`` field ('Unknown' when absent)
    port: int                   # listen_port
    name: str                   # see :func:`sensor_name`
    width: int = 0              # stream_dimensions (cameras), pixels
    height: int = 0
    channels: str = 'bgra'      # a camera's pixel layout (payloads.CHANNELS; unknown: bgra)
    fov: float = DEFAULT_FOV    # horizontal field of view, degrees (cameras)
    n_lasers: int = DEFAULT_LASERS              # lidar: 16 or 32 (else 16)
    horizontal_resolution: float = DEFAULT_HORIZONTAL_RESOLUTION
    expected: tuple = ()        # payload sizes of the sensor's own data (header detection)
    config: dict = field(default_factory=dict, repr=False, compare=False)   # the entry

    @property
    def json(self) -> bool:
        return self.kind in JSON_SENSORS

    @property
    def camera(self) -> bool:
        return is_camera(self.kind)

    def geometry(self) -> lidar_geometry.LidarGeometry:
        return lidar_geometry.LidarGeometry(self.n_lasers, self.horizontal_resolution)


def sensor_config(config: dict) -> SensorConfig:
    """The :class:`SensorConfig` of one sensor list entry; CodecError naming the field when
    it cannot be read (``listen_port``; a camera's ``fov`` not in (0, 180) degrees)."""
    if not isinstance(config, dict):
        raise CodecError('sensor', 'expected a JSON object')
    kind = str(config.get('type', 'Unknown'))
    port = config.get('listen_port')
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise CodecError(kind, f'{port!r} is not a TCP port 1..65535', field='listen_port')
    dims = config.get('stream_dimensions') or {}
    if not isinstance(dims, dict):
        raise CodecError(kind, f'{dims!r} is not an object', field='stream_dimensions')
    width = _number(kind, 'stream_dimensions.x', dims.get('x', 0) or 0, int)
    height = _number(kind, 'stream_dimensions.y', dims.get('y', 0) or 0, int)
    channels = str(config.get('channels', 'bgra')).lower()
    if channels not in payloads.CHANNELS:
        channels = 'bgra'
    fov = config.get('fov')
    if is_camera(kind):
        fov = DEFAULT_FOV if fov is None else fov
        if not isinstance(fov, (int, float)) or isinstance(fov, bool) \
                or not 0.0 < fov < 180.0:       # NaN too: no pinhole camera has it
            raise CodecError(kind, f'{fov!r}: a camera\'s horizontal field of view is more '
                             'than 0 and less than 180 degrees', field='fov')
    else:      # no field of view: kept as given where it is a number
        fov = fov if isinstance(fov, (int, float)) and not isinstance(fov, bool) and fov \
            else DEFAULT_FOV
    n, hres = DEFAULT_LASERS, DEFAULT_HORIZONTAL_RESOLUTION
    if kind == 'Lidar':
        n = _number(kind, 'n_lasers', config.get('n_lasers') or DEFAULT_LASERS, int)
        hres = _number(kind, 'horizontal_resolution',
                       config.get('horizontal_resolution', DEFAULT_HORIZONTAL_RESOLUTION), float)
    cfg = SensorConfig(kind, port, sensor_name(kind, port, config), width, height, channels,
                       float(fov), n if n in lidar_geometry.ELEVATIONS else DEFAULT_LASERS,
                       hres, (), config)
    return _with_sizes(cfg)


def _number(kind: str, name: str, value: Any, kind_of: type):
    """``int(value)`` or ``float(value)`` (as the simulator's JSON reader would take it), else
    CodecError naming the field."""
    try:
        return kind_of(value)
    except (TypeError, ValueError, OverflowError):
        raise CodecError(kind, f'{value!r} is not a number', field=name) from None


def _with_sizes(cfg: SensorConfig) -> SensorConfig:
    """The payload sizes of the sensor's own data (SUPPLEMENT §4.4)."""
    k, w, h = cfg.kind, cfg.width, cfg.height
    if k == 'Lidar':
        sizes = (lidar.PACKET_SIZE,)
    elif k == 'DepthCamera':
        sizes = (w * h * 4,)
    elif k == 'SemanticCamera':
        sizes = (w * h,)
    elif is_camera(k):
        sizes = (payloads.image_size(w, h, cfg.channels),)
    elif k == 'IMU':
        sizes = (payloads.IMU_SIZE, payloads.IMU_2021_SIZE)
    elif k == 'GPS':
        sizes = (payloads.GPS_SIZE,)
    elif k == 'RPM':
        sizes = (payloads.RPM.size,)
    else:
        sizes = ()
    return dataclasses.replace(cfg, expected=sizes)


# --- records: one per sample ----------------------------------------------------------------
@dataclass
class Sample:
    header: SensorHeader


@dataclass
class Pixels(Sample):
    """A camera frame as sent (``what``: 'image', 'depth' or 'semantic'), not copied."""
    what: str
    data: memoryview


@dataclass
class Annotation(Sample):
    """The annotation message that follows a camera's image (codec.annotation)."""
    value: annot.CameraAnnotation


@dataclass
class Companion(Sample):
    """A JSON message beside a sensor's data of a layout we do not know."""
    data: memoryview


@dataclass
class LidarPacket(Sample):
    """One 1206-byte Velodyne packet (the session joins them into revolutions)."""
    data: memoryview


@dataclass
class Revolution(Sample):
    """One lidar revolution: its packets joined, the game time of its first packet."""
    data: bytes
    game_time: float


@dataclass
class Imu(Sample):
    value: payloads.ImuSample


@dataclass
class Gps(Sample):
    value: payloads.GpsSample


@dataclass
class Rpm(Sample):
    wheel: int
    speed: float


@dataclass
class State(Sample):
    value: payloads.StateFrame


@dataclass
class RadarCube(Sample):
    """The radar's optional binary cube: not converted (counted)."""


@dataclass
class Radar(Sample):
    value: payloads.RadarTargets


@dataclass
class Collision(Sample):
    value: Any          # the parsed JSON
    text: str           # as sent (invalid UTF-8 replaced)


@dataclass
class Waypoint(Sample):
    text: str


@dataclass
class Ultrasonic(Sample):
    value: Any                  # the parsed JSON; None for the binary layout
    text: str
    ranges: Any = ()            # the binary layout: its little-endian float32 values


@dataclass
class Unconverted(Sample):
    """A sample of a type (or layout: the 168-byte IMU, LidarArray …) without a conversion."""
    data: memoryview


def decode_sample(cfg: SensorConfig, header: SensorHeader, payload: memoryview, *,
                  max_annotation_boxes: int = annot.MAX_BOXES) -> Sample:
    """The record of one sample of ``cfg``'s sensor; CodecError (naming the field) when its
    payload cannot be read."""
    k = cfg.kind
    if k == 'Lidar':
        if len(payload) != lidar.PACKET_SIZE:
            raise CodecError('Lidar', f'{len(payload)} bytes, a packet has '
                             f'{lidar.PACKET_SIZE}', kind='unknown_layout')
        return LidarPacket(header, payload)
    if not cfg.json and len(payload) not in cfg.expected and payloads.is_json(payload):
        # a JSON companion message (a payload of the sensor's own size is its data, whatever
        # its first byte); a camera's annotation follows its image (§4.4)
        if cfg.camera:
            value = control.parse_json(payload, f'{k} annotation')
            if annot.is_annotation(value):
                return Annotation(header, annot.annotation_from_value(value,
                                                                      max_annotation_boxes))
        return Companion(header, payload)
    if k == 'DepthCamera':
        return Pixels(header, 'depth', payload)
    if k == 'SemanticCamera':
        return Pixels(header, 'semantic', payload)
    if cfg.camera:
        return Pixels(header, 'image', payload)
    if k == 'IMU' and len(payload) == payloads.IMU_SIZE:
        return Imu(header, payloads.decode_imu(payload))
    if k == 'GPS':
        return Gps(header, payloads.decode_gps(payload))
    if k == 'RPM':
        return Rpm(header, *payloads.decode_rpm(payload))
    if k == 'State':
        return State(header, payloads.decode_state(payload))
    if k == 'Radar':
        if not payloads.is_json(payload):
            return RadarCube(header)
        return Radar(header, payloads.decode_radar(payload))
    if k == 'Collision':
        text = _text(payload)
        return Collision(header, payloads.decode_json_sensor(payload, k), text)
    if k == 'Waypoint':
        payloads.decode_json_sensor(payload, k)           # JSON, or CodecError
        return Waypoint(header, _text(payload))
    if k == 'Ultrasonic':
        if payloads.is_json(payload):
            return Ultrasonic(header, payloads.decode_json_sensor(payload, k), _text(payload))
        n = len(payload) // 4
        return Ultrasonic(header, None, '', np.frombuffer(payload[:n * 4], '<f4'))
    return Unconverted(header, payload)


def _text(payload) -> str:
    return bytes(payload).decode('utf-8', 'replace')
