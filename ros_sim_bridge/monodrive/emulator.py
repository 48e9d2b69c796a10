"""A monoDrive simulator emulator (executable ``monodrive_sim``), ROS-free.

Control channel on ``--port`` (8999): accepts the framing of SUPPLEMENT §4.1, answers every
message type of §4.2 with a reply shaped like the real simulator's (§4.3), echoing the
request's ``reference`` (``--no-reference`` leaves it out, as some builds may).  A sensor
configured by the client (REPLAY_ConfigureSensorsCommand_ID …, or ``--sensors FILE``) gets a
TCP server on its ``listen_port`` that streams samples of a small moving scene: State (JSON),
Lidar (16- or 32-laser Velodyne packets), Camera (bgra/rgba/gray), IMU (35 B), GPS (66 B),
RPM, depth and semantic cameras, each with a 16-byte (``--header 12``: 12-byte) header; a
camera configured with ``annotation.include_annotation`` sends the annotation message (the
other vehicle's 2-D and oriented boxes) after each image.

Scene, in ENU metres: the ego drives a circle of ``radius`` anticlockwise; a second vehicle
drives the same circle a quarter turn ahead.  On the wire everything is in monoDrive units
(cm, cm/s, degrees) and Unreal's left-handed axes (y right): y and yaw are negated.
"""
from __future__ import annotations

import argparse
import errno
import json
import math
import socket
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.cli import number_problem, run_main, stop_requested, strip_ros_args
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.monodrive import lidar_geometry
from ros_sim_bridge.monodrive.codec import annotation, control, lidar, payloads, sensor

DEFAULT_HOST = '127.0.0.1'
DEFAULT_PORT = 8999
VERSION = 'simulator_version: 1.14, api_version: 5.0'
GPS_ORIGIN = (30.2672, -97.7431, 150.0)     # lat, lon, elevation of the world origin
CAMERA_SCROLL = 120.0                       # rows/s the emulated camera picture moves up
STREAMED = ('State', 'Lidar', 'Camera', 'IMU', 'GPS', 'RPM', 'DepthCamera', 'SemanticCamera',
            'Collision', 'Radar')


class Scene:
    """Two vehicles on a circle; pose and motion at time ``t`` (ENU, SI)."""

    def __init__(self, radius: float = 40.0, speed: float = 8.0):
        self.radius, self.speed = radius, speed
        self.t = 0.0
        self.throttle, self.steer, self.brake, self.drive_mode = 0.0, 0.0, 0.0, 1

    def vehicle(self, index: int, t: Optional[float] = None) -> dict:
        t = self.t if t is None else t
        w = self.speed / self.radius
        # each next vehicle 45° of arc ahead: seen 22.5° off the ego's heading, inside a 60°
        # camera's view (its annotation carries boxes)
        a = w * t + index * math.pi / 4
        x, y = self.radius * math.cos(a), self.radius * math.sin(a)
        yaw = a + math.pi / 2
        vx, vy = -self.speed * math.sin(a), self.speed * math.cos(a)
        # other vehicles named as monoDrive names them (its scenario files: 'Sedan2D_01_2'),
        # so their frames never meet another source's 'vehicle_<n>/base_link' in one TF tree
        return {'name': 'ego' if index == 0 else f'Sedan2D_01_{index}', 'x': x, 'y': y, 'z': 0.0,
                'yaw': yaw, 'vx': vx, 'vy': vy, 'yaw_rate': w}


BOX_SIZE_CM = (460.0, 190.0, 150.0)      # every vehicle's box: length, width, height


def _unreal_state(v: dict, ego: bool) -> dict:
    """One vehicle in the State sensor's JSON (cm, cm/s, rad/s; Unreal axes, y right)."""
    half = -v['yaw'] / 2                    # yaw negated for the left-handed frame
    return {'state': {
        'name': v['name'], 'tags': ['vehicle', 'dynamic'] + (['ego'] if ego else []),
        'odometry': {
            'pose': {'position': {'x': v['x'] * 100, 'y': -v['y'] * 100, 'z': v['z'] * 100},
                     'orientation': {'x': 0.0, 'y': 0.0, 'z': math.sin(half),
                                     'w': math.cos(half)}},
            'linear_velocity': {'x': v['vx'] * 100, 'y': -v['vy'] * 100, 'z': 0.0},
            'angular_velocity': {'x': 0.0, 'y': 0.0, 'z': -v['yaw_rate']}},
        # the box in the world (cm), turned with the vehicle; extents are full sizes
        'oriented_bounding_box': [{'name': 'body',
                                   'center': {'x': v['x'] * 100, 'y': -v['y'] * 100,
                                              'z': v['z'] * 100 + BOX_SIZE_CM[2] / 2},
                                   'extents': dict(zip('xyz', BOX_SIZE_CM)),
                                   'orientation': {'x': 0.0, 'y': 0.0, 'z': math.sin(half),
                                                   'w': math.cos(half)}}]},
        'wheels': [{'id': i, 'speed': v['vx'] and math.hypot(v['vx'], v['vy']) / 0.35}
                   for i in range(4)]}


def send_buffers(sock: socket.socket, buffers: list) -> None:
    """``sendall`` of several buffers in order, gathered (``sendmsg``) rather than joined."""
    views = [memoryview(b).cast('B') for b in buffers if len(b)]
    while views:
        n = sock.sendmsg(views[:512])
        while n and views:
            if n >= len(views[0]):
                n -= len(views.pop(0))
            else:
                views[0], n = views[0][n:], 0


def _listen(host: str, port: int, what: str) -> socket.socket:
    """A listening TCP socket; OSError naming the address and ``what`` when the port is
    taken (or out of range, or the address not on this host)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if not 0 <= port <= 65535:
            raise OSError(errno.EINVAL, 'not a TCP port 0..65535')
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(4)
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f'cannot listen on TCP {host}:{port} ({what}): '
                      f'{exc.strerror or exc}') from None
    return sock


class SensorStream:
    """One configured sensor: its listening socket, its clients and its sample generator."""

    def __init__(self, config: dict, host: str, header_size: int):
        self.config = config
        self.type = str(config.get('type'))
        self.port = int(config['listen_port'])
        self.header_size = header_size
        self.sample_count = 0
        self.clients: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener = _listen(host, self.port, f'{self.type} sensor port')
        self.listener.settimeout(0.2)
        self.sent = 0
        dims = config.get('stream_dimensions') or {}
        self.width = int(dims.get('x', 64))
        self.height = int(dims.get('y', 48))
        self.channels = str(config.get('channels', 'bgra'))
        if self.channels not in payloads.CHANNELS:
            self.channels = 'bgra'
        self.annotate = bool((config.get('annotation') or {}).get('include_annotation'))
        self.fov = float(config.get('fov', 60.0) or 60.0)
        self._image: Optional[memoryview] = None     # two copies of the picture, stacked
        self.n_lasers = int(config.get('n_lasers', 16))
        self.hres = float(config.get('horizontal_resolution', 0.4))
        self.rpm = float(config.get('rpms', 600.0))

    def accept(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(2.0)
            with self.lock:
                self.clients.append(conn)

    def send(self, payloads_: list, game_time: float) -> None:
        """Every payload (bytes or a memoryview) with its header to every client, gathered
        into one ``sendmsg`` per client: a camera frame is not copied on the way out."""
        with self.lock:
            clients = list(self.clients)
        if not clients:
            return
        self.sample_count += 1
        t = int(time.time()) & 0xFFFFFFFF
        count = self.sample_count if self.header_size == 16 else None
        buffers = []
        for p in payloads_:
            buffers.append(sensor.encode_header(len(p), t, game_time, count))
            buffers.append(p)
        for c in clients:
            try:
                send_buffers(c, buffers)
                self.sent += 1
            except OSError:
                self.drop(c)

    def drop(self, c: socket.socket) -> None:
        with self.lock:
            if c in self.clients:
                self.clients.remove(c)
        try:
            c.close()
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.listener.close()
        except OSError:
            pass
        with self.lock:
            clients, self.clients = self.clients, []
        for c in clients:
            try:
                c.close()
            except OSError:
                pass

    # --- samples of each sensor type --------------------------------------------------------
    def samples(self, scene: Scene, dt: float) -> list:
        kind = self.type
        if kind == 'State':
            body = {'time': int(time.time()), 'game_time': scene.t,
                    'sample_count': self.sample_count + 1,
                    'frame': {'vehicles': [_unreal_state(scene.vehicle(0), True),
                                           _unreal_state(scene.vehicle(1), False)],
                              'objects': []}}
            return [json.dumps(body).encode()]
        if kind == 'IMU':
            v = scene.vehicle(0)
            centripetal = scene.speed ** 2 / scene.radius
            return [payloads.encode_imu((0.0, -centripetal, 9.81), (0.0, 0.0, -v['yaw_rate']),
                                        timer=int(scene.t * 1000) & 0xFFFFFFFF)]
        if kind == 'GPS':
            v = scene.vehicle(0)
            lat = GPS_ORIGIN[0] + v['y'] / 111_320.0
            lon = GPS_ORIGIN[1] + v['x'] / (111_320.0 * math.cos(math.radians(GPS_ORIGIN[0])))
            return [payloads.encode_gps(lat, lon, GPS_ORIGIN[2], (v['x'] * 100, -v['y'] * 100),
                                        (math.cos(v['yaw']), -math.sin(v['yaw']), 0.0),
                                        -math.degrees(v['yaw']), scene.speed)]
        if kind == 'RPM':
            return [payloads.RPM.pack(int(self.config.get('wheelNumber', 0)),
                                      scene.speed / 0.35 * 60 / (2 * math.pi))]
        if kind == 'Camera':
            return [self._camera(scene)] + ([self._annotation(scene)] if self.annotate else [])
        if kind == 'DepthCamera':
            d = np.full((self.height, self.width), 2000.0 + 100 * math.sin(scene.t), '<f4')
            return [d.tobytes()]
        if kind == 'SemanticCamera':
            s = np.zeros((self.height, self.width), np.uint8)
            s[self.height // 2:] = 7
            return [s.tobytes()]
        if kind == 'Collision':
            return [json.dumps({'name': 'ego', 'game_time': scene.t, 'collision': False,
                                'distance': 25.0, 'time_to_collision': 3.1,
                                'targets': []}).encode()]
        if kind == 'Radar':
            other = scene.vehicle(1)
            ego = scene.vehicle(0)
            rng = math.hypot(other['x'] - ego['x'], other['y'] - ego['y'])
            return [json.dumps({'target_list': [{'range': rng * 100, 'aoa': -10.0,
                                                 'velocity': 0.0, 'rcs': 12.0,
                                                 'target_ids': [other['name']]}],
                                'gt_targets': []}).encode()]
        if kind == 'Lidar':
            return self._lidar(scene, dt)
        return []

    def _camera(self, scene: Scene) -> memoryview:
        """A diagonal gradient with a white bar, scrolling up ``CAMERA_SCROLL`` rows/s.

        Built once as two stacked copies of the picture: each frame is a zero-copy view of
        ``height`` consecutive rows of it, so a 1920×1080 bgra frame (8 MB) costs nothing to
        make at 30 Hz (no per-frame numpy work)."""
        c = payloads.CHANNELS[self.channels]
        h, w = max(1, self.height), max(1, self.width)
        if self._image is None:
            x = np.linspace(0, 255, w, dtype=np.float32)
            y = np.linspace(0, 255, h, dtype=np.float32)[:, None]
            img = np.empty((h, w, c), np.uint8)
            img[...] = ((x + y) / 2).astype(np.uint8)[..., None]
            img[: max(1, h // 20)] = 255               # the moving element: a white bar
            if c == 4:
                img[..., 3] = 255
            self._image = memoryview(np.concatenate([img, img]).reshape(-1))
        row = w * c
        shift = round(scene.t * CAMERA_SCROLL) % h
        return self._image[shift * row:(shift + h) * row]

    def _annotation(self, scene: Scene) -> bytes:
        """The annotation message after an image (codec.annotation's layout): the other
        vehicle's 2-D box, projected through a pinhole camera of this fov on the ego (its
        mount's location and yaw), and its oriented box in the world (Unreal cm)."""
        ego, other = scene.vehicle(0), scene.vehicle(1)
        loc = self.config.get('location') or {}
        yaw_mount = -math.radians(float((self.config.get('rotation') or {}).get('yaw', 0.0)))
        mx, my, mz = (float(loc.get(k, 0.0) or 0.0) / 100.0 for k in 'xyz')
        my = -my
        ce, se = math.cos(ego['yaw']), math.sin(ego['yaw'])
        cam = np.array([ego['x'] + ce * mx - se * my, ego['y'] + se * mx + ce * my, mz])
        h = ego['yaw'] + yaw_mount
        half = np.array([2.3, 0.95, 0.75])
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)],
                           float) * half
        co, so = math.cos(other['yaw']), math.sin(other['yaw'])
        world = np.stack([other['x'] + co * corners[:, 0] - so * corners[:, 1],
                          other['y'] + so * corners[:, 0] + co * corners[:, 1],
                          0.75 + corners[:, 2]], 1) - cam
        xc = math.cos(h) * world[:, 0] + math.sin(h) * world[:, 1]
        yc = -math.sin(h) * world[:, 0] + math.cos(h) * world[:, 1]
        zc = world[:, 2]
        actors = []
        front = xc > 0.1
        if front.any():
            fx = self.width / (2.0 * math.tan(math.radians(self.fov) / 2.0))
            u = np.clip(self.width / 2.0 - fx * yc[front] / xc[front], 0, self.width)
            v = np.clip(self.height / 2.0 - fx * zc[front] / xc[front], 0, self.height)
            if u.max() > u.min() and v.max() > v.min():
                yaw_u = -other['yaw'] / 2          # Unreal: y and yaw negated
                actors.append({
                    'name': other['name'], 'tags': ['vehicle', 'dynamic'],
                    '2d_bounding_boxes': [{'name': 'body', '2d_bounding_box': [
                        float(u.min()), float(u.max()), float(v.min()), float(v.max())]}],
                    'oriented_bounding_boxes': [{
                        'name': 'body',
                        'center': {'x': other['x'] * 100, 'y': -other['y'] * 100,
                                   'z': BOX_SIZE_CM[2] / 2},
                        'extents': dict(zip('xyz', BOX_SIZE_CM)),
                        'orientation': {'x': 0.0, 'y': 0.0, 'z': math.sin(yaw_u),
                                        'w': math.cos(yaw_u)},
                        'scale': {'x': 1.0, 'y': 1.0, 'z': 1.0}}]})
        return annotation.encode_annotation(actors)

    def _lidar(self, scene: Scene, dt: float) -> list[bytes]:
        """One revolution: ground ring below, a wall at 30 m above, the other vehicle."""
        geom = lidar_geometry.LidarGeometry(self.n_lasers, self.hres)
        firings = 2 if self.n_lasers == 16 else 1
        step = self.hres * firings
        azimuths = np.arange(0.0, 360.0, step)
        n_packets = int(math.ceil(len(azimuths) / 12))
        az = np.resize(azimuths, n_packets * 12).reshape(n_packets, 12)
        az[-1, :] = np.minimum(az[-1, :], 359.99)
        elev = np.arcsin(geom.sin_elev)                           # (32,)
        height = float((self.config.get('location') or {}).get('z', 200.0)) / 100.0
        with np.errstate(divide='ignore'):
            ground = np.where(elev < 0, height / np.sin(-np.minimum(elev, -1e-3)), 0.0)
        wall = 30.0 / np.cos(elev)
        dist = np.where(elev < 0, np.minimum(ground, wall), wall)  # (32,)
        d = np.broadcast_to(dist, (n_packets, 12, 32)).copy()
        ego, other = scene.vehicle(0), scene.vehicle(1)
        rel = math.atan2(other['y'] - ego['y'], other['x'] - ego['x']) - ego['yaw']
        bearing = (-math.degrees(rel)) % 360.0                    # clockwise from forward
        rng = math.hypot(other['x'] - ego['x'], other['y'] - ego['y'])
        full_az = az[..., None] + geom.offset_deg                  # (P, 12, 32)
        diff = np.abs((full_az - bearing + 180.0) % 360.0 - 180.0)
        hit = (diff < 4.0) & (np.abs(elev) < math.radians(6))
        d[hit] = np.minimum(d[hit], rng)
        raw = np.clip(d / lidar.DISTANCE_UNIT_M, 0, 65535).astype(np.uint16)
        pk = np.zeros(n_packets, lidar.PACKET)
        pk['blocks']['flag'] = lidar.BLOCK_FLAG
        pk['blocks']['azimuth'] = np.round(az * 100).astype(np.uint16)
        pk['blocks']['returns']['distance'] = raw
        pk['blocks']['returns']['reflectivity'] = np.where(hit, 200, 40).astype(np.uint8)
        pk['timestamp'] = int(scene.t * 1e6) & 0xFFFFFFFF
        pk['factory'] = 0x2237 if self.n_lasers == 16 else 0x2137
        data = pk.tobytes()
        return [data[i:i + lidar.PACKET_SIZE] for i in range(0, len(data), lidar.PACKET_SIZE)]


class MonoDriveSim:
    """The control server and the configured sensor streams."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
                 rate: float = 10.0, header_size: int = 16,
                 reply_magic: int = control.CLIENT_MAGIC, echo_reference: bool = True,
                 scene: Optional[Scene] = None, camera_rate: Optional[float] = None,
                 log: Optional[Callable[[str], None]] = None):
        self.host = host
        self.log = log                  # told when a sensor port starts listening (the CLI)
        self.rate = rate
        self.camera_rate = camera_rate or rate
        self.header_size = header_size
        self.reply_magic = reply_magic
        self.echo_reference = echo_reference
        self.scene = scene or Scene()
        self.mode = 0
        self.sensors: dict[int, SensorStream] = {}
        self.received: list[control.ControlMessage] = []
        self.errors = 0
        self.weather = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.server = _listen(host, port, 'control port, --port')
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.clients: list[socket.socket] = []

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> 'MonoDriveSim':
        for target in (self._accept, self._stream):
            t = threading.Thread(target=target, daemon=True, name=f'monodrive-sim-{target.__name__}')
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        self._stop.set()
        try:
            self.server.close()
        except OSError:
            pass
        for c in list(self.clients):
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass
        for s in list(self.sensors.values()):
            s.close()
        for t in self._threads:
            t.join(timeout=2.0)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def configure_sensor(self, config: dict) -> str:
        port = int(config['listen_port'])
        kind = str(config.get('type'))
        with self._lock:
            old = self.sensors.pop(port, None)
            if old is not None:
                old.close()
            if kind not in STREAMED:
                return f'{kind} configured (not streamed by the emulator)'
            stream = SensorStream(config, self.host, self.header_size)
            self.sensors[port] = stream
        t = threading.Thread(target=stream.accept, args=(self._stop,), daemon=True,
                             name=f'monodrive-sim-{kind}-{port}')
        t.start()
        self._threads.append(t)
        if self.log is not None:
            self.log(f'{kind} listening on {self.host}:{port}')
        return 'complete'

    # --- control channel -------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.clients.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        framer = control.ControlFramer()
        conn.settimeout(0.2)
        try:
            while not self._stop.is_set():
                try:
                    chunk = conn.recv(1 << 16)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                for event in framer.feed(chunk):
                    if isinstance(event, Frame):
                        reply = self._reply_to(event)
                        if reply is not None:
                            conn.sendall(control.encode_frame(reply, self.reply_magic))
                    else:
                        self.errors += 1
        except OSError:
            pass
        finally:
            if conn in self.clients:
                self.clients.remove(conn)
            try:
                conn.close()
            except OSError:
                pass

    def _reply_to(self, frame: Frame) -> Optional[dict]:
        try:
            msg = control.decode_frame(frame)
        except CodecError:
            self.errors += 1
            return None
        self.received.append(msg)
        try:
            success, message = self.answer(msg.type, msg.message)
        except (KeyError, TypeError, ValueError, OSError) as exc:
            success, message = False, f'invalid {msg.type} message: {exc}'
        out = {'type': msg.type, 'success': success, 'message': message}
        if self.echo_reference and msg.reference is not None:
            out['reference'] = msg.reference
        return out

    def answer(self, msg_type: str, body: Any) -> tuple[bool, Any]:
        """(success, message) the simulator answers ``msg_type`` with (SUPPLEMENT §4.3)."""
        s = self.scene
        if msg_type == 'SimulatorConfig_ID':
            if 'map' in body and not body['map']:
                return False, 'invalid map specified'
            self.mode = int(body.get('simulation_mode', 0))
            return True, f'simulator configuration mode = {self.mode}'
        if msg_type == 'EgoControl_ID':
            s.throttle = float(body['forward_amount'])
            s.steer = float(body['right_amount'])
            s.brake = float(body['brake_amount'])
            s.drive_mode = int(body['drive_mode'])
            return True, 'complete'
        if msg_type == 'WeatherConfig':
            self.weather = body
            return True, f'Weather configured to {body.get("set_profile", body.get("id"))}'
        if msg_type in ('REPLAY_ConfigureSensorsCommand_ID', 'AttachSensorCommand_ID'):
            results = [self.configure_sensor(c) for c in (body if isinstance(body, list)
                                                            else [body])]
            return True, results[0] if len(results) == 1 else 'complete'
        if msg_type == 'REPLAY_ReConfigureSensorCommand_ID':
            return True, self.configure_sensor(body)
        if msg_type == 'DetachSensorCommand_ID':
            stream = self.sensors.pop(int(body.get('listen_port', -1)), None)
            if stream is not None:
                stream.close()
            return True, 'complete'
        if msg_type == 'REPLAY_StepSimulationCommand_ID':
            s.t += int(body['amount']) / self.rate
            return True, 'complete'
        if msg_type == 'REPLAY_StateStepSimulationCommand_ID':
            return True, 'complete'
        if msg_type == 'ClosedLoopStepCommand_ID':
            s.t += float(body['time_step'])
            return True, True
        if msg_type == 'SampleSensorsCommand_ID':
            return True, 'sensors sampled'
        if msg_type == 'SampleSensorListCommand_ID':
            return True, f'sampled {len(body.get("ports", []))} sensors'
        if msg_type == 'GetVersion':
            return True, VERSION
        if msg_type == 'GetMap':
            if body.get('format') == 'opendrive':
                return True, '<?xml version="1.0"?><OpenDRIVE><header name="emulator"/></OpenDRIVE>'
            pts = [[s.radius * 100 * math.cos(a), -s.radius * 100 * math.sin(a), 0.0]
                   for a in np.linspace(0, 2 * math.pi, 24, endpoint=False)]
            return True, {'type': 'FeatureCollection', 'features': [
                {'type': 'Feature', 'properties': {'road_id': 0, 'lane_id': -1},
                 'geometry': {'type': 'LineString', 'coordinates': pts}}]}
        if msg_type == 'GetStartPoints':
            return True, [{'location': {'x': s.radius * 100, 'y': 0.0, 'z': 0.0},
                           'rotation': {'pitch': 0.0, 'yaw': -90.0, 'roll': 0.0}}]
        if msg_type in ('StopAllSensorsCommand_ID', 'StartAllSensorsCommand_ID',
                        'ActivateLicense', 'Status_ID', 'ImportMap', 'AutopilotControl',
                        'VehicleLightsConf', 'EgoVehicleConfig_ID', 'ScenarioConfig_ID',
                        'ScenarioInit_ID', 'MapCommand_ID', 'WaypointUpdate_ID',
                        'StreamData_ID', 'SpawnActorCommand_ID', 'UpdateActorCommand_ID',
                        'REPLAY_ConfigureTrajectoryCommand_ID', 'ClosedLoopConfigCommand_ID'):
            return True, 'complete'
        return False, f'unknown message type {msg_type}'

    # --- sensor streaming -------------------------------------------------------------------
    def _stream(self) -> None:
        period = 1.0 / self.rate
        next_t = time.monotonic()
        while not self._stop.is_set():
            self.scene.t += period
            with self._lock:
                streams = list(self.sensors.values())
            for stream in streams:
                try:
                    data = stream.samples(self.scene, period)
                    stream.send(data, self.scene.t)
                except Exception as exc:  # one sensor's failure must not stop the others
                    self.errors += 1
                    print(f'monodrive_sim: {stream.type} on {stream.port}: {exc!r}',
                          file=sys.stderr, flush=True)
            next_t += period
            delay = next_t - time.monotonic()
            if delay < -1.0:
                next_t = time.monotonic()
            self._stop.wait(max(0.0, delay))

    def serve_forever(self, duration: Optional[float] = None) -> None:
        end = None if not duration else time.monotonic() + duration
        while not (self._stop.is_set() or stop_requested()) and (
                end is None or time.monotonic() < end):
            self._stop.wait(0.2)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog='monodrive_sim',
                                 description='monoDrive simulator emulator (JSON over TCP)')
    ap.add_argument('--host', default=DEFAULT_HOST, help='address to listen on (127.0.0.1)')
    ap.add_argument('--port', type=int, default=DEFAULT_PORT, help='control port (8999)')
    ap.add_argument('--rate', type=float, default=10.0, help='scene and sensor rate, Hz')
    ap.add_argument('--header', type=int, choices=(12, 16), default=16,
                    help='sensor header generation: 12 (2019 – May 2020) or 16 bytes')
    ap.add_argument('--reply-magic', choices=('new', 'legacy'), default='new',
                    help='reply magic: new 0x6d6f6e6f or legacy 0x6f6e6f6d (clients ≤ May 2020)')
    ap.add_argument('--no-reference', action='store_true', help='omit reference from replies')
    ap.add_argument('--sensors', help='JSON sensor list to stream from the start')
    ap.add_argument('--duration', type=float, default=0.0, help='seconds to run (0 = forever)')
    args = ap.parse_args(strip_ros_args(sys.argv[1:] if argv is None else argv))
    problem = argument_problem(args)
    if problem:
        print(f'monodrive_sim: {problem}', file=sys.stderr)
        return 2
    return run_main(lambda: _serve(args))


def argument_problem(args) -> Optional[str]:
    """The first argument out of range as one line naming it, None when all are fine (the
    checks of rflysim_sim and morai_sim: exit 2, never a traceback)."""
    problem = number_problem(args, positive=('rate',), non_negative=('duration',))
    if problem:
        return problem
    if not 0 <= args.port <= 65535:
        return f'--port must be a TCP port 1..65535, or 0: any free port (got {args.port})'
    return None


def _serve(args) -> int:
    """Build and serve until ``--duration`` or a stop signal (core.cli.run_main: exit 0)."""
    try:
        sim = MonoDriveSim(args.host, args.port, rate=args.rate, header_size=args.header,
                           reply_magic=(control.CLIENT_MAGIC if args.reply_magic == 'new'
                                        else control.LEGACY_REPLY_MAGIC),
                           echo_reference=not args.no_reference,
                           log=lambda text: print(f'monodrive_sim: {text}', flush=True))
        if args.sensors:
            from ros_sim_bridge.monodrive.codec.config import load_config
            for sensor_cfg in load_config(args.sensors, 'sensors').sensors():
                sim.configure_sensor(sensor_cfg)
    except OSError as exc:        # a port in use (named), an address not on this host
        print(f'monodrive_sim: {exc.strerror or exc}', file=sys.stderr)
        return 1
    except ValueError as exc:     # a bad --sensors file
        print(f'monodrive_sim: {exc}', file=sys.stderr)
        return 2
    print(f'monodrive_sim: control on {args.host}:{sim.port}, {args.rate:g} Hz, '
          f'{args.header}-byte sensor headers', flush=True)
    try:
        sim.start()
        sim.serve_forever(args.duration or None)
    finally:
        sim.stop()
        print(f'monodrive_sim: {len(sim.received)} control messages, {sim.errors} errors',
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
