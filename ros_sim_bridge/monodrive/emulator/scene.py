"""The emulated monoDrive world (SUPPLEMENT §4.3, §4.4), ROS-free, no sockets: the scene and
what each sensor type samples of it.

Scene, in ENU metres: the ego drives a circle of ``radius`` anticlockwise; a second vehicle
drives the same circle a quarter turn ahead.  On the wire everything is in monoDrive units
(cm, cm/s, degrees) and Unreal's left-handed axes (y right): y and yaw are negated.  Samples:
State (JSON), Lidar (16- or 32-laser Velodyne packets), Camera (bgra/rgba/gray; with
``annotation.include_annotation`` the annotation message of the other vehicle's 2-D and
oriented boxes after each image), IMU (35 B), GPS (66 B), RPM, depth and semantic cameras,
collision and radar reports.
"""
from __future__ import annotations

import json
import math
import time
from typing import Optional

import numpy as np

from ros_sim_bridge.monodrive import lidar_geometry
from ros_sim_bridge.monodrive.codec import annotation, lidar, payloads, units

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



class SensorModel:
    """One configured sensor's sample generator."""

    def __init__(self, config: dict):
        self.config = config
        self.type = str(config.get('type'))
        self.port = int(config['listen_port'])
        self.sample_count = 0           # of the last sample sent
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
        raw = np.clip(d / units.LIDAR_DISTANCE_M, 0, 65535).astype(np.uint16)
        pk = np.zeros(n_packets, lidar.PACKET)
        pk['blocks']['flag'] = lidar.BLOCK_FLAG
        pk['blocks']['azimuth'] = np.round(az * 100).astype(np.uint16)
        pk['blocks']['returns']['distance'] = raw
        pk['blocks']['returns']['reflectivity'] = np.where(hit, 200, 40).astype(np.uint8)
        pk['timestamp'] = int(scene.t * 1e6) & 0xFFFFFFFF
        pk['factory'] = 0x2237 if self.n_lasers == 16 else 0x2137
        data = pk.tobytes()
        return [data[i:i + lidar.PACKET_SIZE] for i in range(0, len(data), lidar.PACKET_SIZE)]


