"""The emulated MORAI world: pure, steppable logic, no sockets, no clocks.

An ego on a straight east-west road (map ENU, x east) driven by a kinematic bicycle model, NPC
vehicles in the neighbouring lanes that stop for the light, pedestrians on the crosswalk, static
obstacles (one far ahead in the ego lane), an intersection whose phase drives a traffic light,
and a scripted collision every ``collision_period`` seconds.  ``step(dt)`` advances it,
``handle_datagram(bytes)`` applies a client → simulator datagram, ``outputs()`` returns the
simulator → client datagrams.
"""
from __future__ import annotations

import collections
import logging
import math
from dataclasses import dataclass
from typing import Dict, Optional

import numpy as np

from ros_sim_bridge.core.binary import WRONG_SOURCE, CodecError
from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.codec import commands as cmds
from ros_sim_bridge.morai.codec.traffic_light import TL_GREEN, TL_RED, TL_YELLOW

LOG = logging.getLogger('morai_emulator')

#: Release presets: (ego status layout, object info layout, collision layout).
RELEASES = {
    'document': ('ego94_notail', 'obj68', 'col140'),   # the manual's sizes (121-byte status)
    'oldest': ('ego94', 'obj68', 'col140'),
    'link_id': ('ego132', 'obj106', 'col140'),
    'stamped': ('ego152', 'obj106_ts', 'col148'),
    'newest': ('ego200', 'obj106_ts', 'col148'),
    '26.R1': ('ego216', 'obj106_ts', 'col148'),
}
DEFAULT_RELEASE = 'newest'

KMH = 3.6
TL_INDEX = 'C119BS010025'
INTERSECTION_INDEX = 1
STOP_LINE_X = 95.0          # eastbound stop line before the intersection at x = 100
#: Intersection phases: (duration s, traffic light status for the east-west road).
PHASES = ((12.0, TL_GREEN), (3.0, TL_YELLOW), (10.0, TL_RED), (3.0, TL_RED))
ROAD_X = (-100.0, 300.0)    # NPCs wrap around inside this stretch


@dataclass
class VehicleParams:
    """Ego vehicle: size and kinematic bicycle-model limits."""
    size_x: float = 4.6           # m length
    size_y: float = 1.9           # m width
    size_z: float = 1.5           # m height
    overhang: float = 0.9         # m front
    wheelbase: float = 2.7        # m
    rear_overhang: float = 1.0    # m
    max_steer_deg: float = 40.0   # wheel angle at steering = ±1
    max_rear_steer_deg: float = 10.0  # rear wheel angle at rear_steering = ±1 (26.R1 Ctrl Cmd;
                                  # MORAI does not state it: an emulator choice)
    max_accel: float = 3.0        # m/s² at full throttle
    max_brake: float = 8.0        # m/s² at full brake
    drag: float = 0.015           # 1/s, linear speed loss
    rolling: float = 0.05         # m/s², rolling resistance
    velocity_gain: float = 1.2    # 1/s, velocity-mode P gain
    max_speed: float = 50.0       # m/s


@dataclass
class EgoState:
    x: float = 0.0       # m, map ENU
    y: float = 0.0
    yaw: float = 0.0     # rad, counter-clockwise from east
    v: float = 0.0       # m/s, signed (negative = reversing)
    steer: float = 0.0   # rad, front wheel angle (+ = left)
    rear_steer: float = 0.0  # rad, rear wheel angle (+ = left), from a 26.R1 Ctrl Cmd
    accel: float = 0.0   # m/s², longitudinal
    yaw_rate: float = 0.0  # rad/s


class MoraiScene:
    """The emulated world.  Pure: no sockets, no clocks; time advances only in :meth:`step`."""

    def __init__(self, release: str = DEFAULT_RELEASE, *, ego_layout: Optional[str] = None,
                 object_layout: Optional[str] = None, collision_layout: Optional[str] = None,
                 params: Optional[VehicleParams] = None, collision_period: float = 30.0,
                 max_events: int = 1000):
        if release not in RELEASES:
            raise ValueError(f'unknown release {release!r}; known: {", ".join(RELEASES)}')
        e, o, c = RELEASES[release]
        self.ego_layout = ego_layout or e
        self.object_layout = object_layout or o
        self.collision_layout = collision_layout or c
        for value, known in ((self.ego_layout, morai.ego_status.LAYOUT_NAMES),
                             (self.object_layout, morai.object_info.LAYOUT_NAMES),
                             (self.collision_layout, morai.collision.LAYOUT_NAMES)):
            if value not in known:
                raise ValueError(f'unknown layout {value!r}; known: {", ".join(known)}')
        self.params = params or VehicleParams()
        self.collision_period = collision_period
        self.events: collections.deque = collections.deque(maxlen=max_events)
        self.stats: collections.Counter = collections.Counter()
        self.reset()

    # -- state ---------------------------------------------------------------------------------
    def reset(self) -> None:
        self.time = 0.0
        self.paused = False
        self.ego = EgoState()
        self.ctrl_mode = cmds.CTRL_MODE_KEYBOARD    # MORAI starts in keyboard mode
        self.gear = cmds.GEAR_PARKING
        self.cmd: Optional[morai.CtrlCmd] = None
        self.pedals = (0.0, 0.0)                    # reported accel / brake pedal
        self.turn_signal = 0
        self.emergency_signal = 0
        self.phase = 0
        self.phase_time = 0.0
        self.tl_override: Optional[tuple] = None    # (status, until time)
        self.sensor_poses: Dict[int, morai.SensorControl] = {}
        self.scenario: Optional[morai.ScenarioLoad] = None
        self.multi_ego: Optional[morai.MultiEgoSetting] = None
        self._contacts: set = set()
        self._reset_actors()

    def _reset_actors(self) -> None:
        # NPC vehicles: obj_id, lane y, direction (+1 east / -1 west), x, cruise speed m/s
        self.npcs = np.array([(1, 3.5, 1, 20.0, 8.0, 8.0), (2, 3.5, 1, 60.0, 11.0, 11.0),
                              (3, 3.5, 1, 130.0, 13.5, 13.5), (4, -3.5, -1, 160.0, 10.0, 10.0)],
                             dtype=[('obj_id', 'i2'), ('y', 'f8'), ('dir', 'i1'), ('x', 'f8'),
                                    ('v', 'f8'), ('cruise', 'f8')])
        self.npc_accel = np.zeros(len(self.npcs))
        # Pedestrians on the crosswalk at x ≈ 100: obj_id, x, y, vy (m/s)
        self.peds = np.array([(101, 100.5, -8.0, 1.2), (102, 103.0, 6.0, -1.0)],
                             dtype=[('obj_id', 'i2'), ('x', 'f8'), ('y', 'f8'), ('vy', 'f8')])
        # Static obstacles: obj_id, x, y, size
        self.obstacles = [(201, 50.0, -7.5, 1.0), (202, 180.0, 7.5, 2.0), (203, 250.0, 0.0, 1.2)]

    def log(self, text: str) -> None:
        self.events.append((round(self.time, 3), text))
        LOG.info('t=%.2f %s', self.time, text)

    # -- time ----------------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        """Advance the world by ``dt`` seconds (sub-stepped at ≤ 20 ms)."""
        if dt < 0:
            raise ValueError('dt must be ≥ 0')
        if self.paused:
            return
        n = max(1, int(math.ceil(dt / 0.02)))
        for _ in range(n):
            self._substep(dt / n)

    def _substep(self, dt: float) -> None:
        prev = self.time
        self.time += dt
        self._step_signals(dt)
        self._step_ego(dt)
        self._step_actors(dt)
        self._check_contacts()
        if self.collision_period > 0 and int(prev / self.collision_period) != int(
                self.time / self.collision_period):
            self.log('scripted collision event')

    def _step_signals(self, dt: float) -> None:
        self.phase_time += dt
        while self.phase_time >= PHASES[self.phase][0]:
            self.phase_time -= PHASES[self.phase][0]
            self.phase = (self.phase + 1) % len(PHASES)
        if self.tl_override and self.time >= self.tl_override[1]:
            self.tl_override = None
            self.log('traffic light override ended')

    def traffic_light_status(self) -> int:
        if self.tl_override:
            return self.tl_override[0]
        return PHASES[self.phase][1]

    def _step_ego(self, dt: float) -> None:
        p, e, cmd = self.params, self.ego, self.cmd
        auto = cmd is not None and self.ctrl_mode == cmds.CTRL_MODE_AUTO
        gear = self.gear
        if auto:
            e.steer = math.radians(cmd.steering * p.max_steer_deg)
            rear = cmd.rear_steering if cmd.rear_steering is not None else 0.0
            e.rear_steer = math.radians(rear * p.max_rear_steer_deg)
        direction = -1.0 if gear == cmds.GEAR_REVERSE else 1.0
        resist = p.drag * abs(e.v) + (p.rolling if e.v else 0.0)
        drive, stop = 0.0, resist
        accel_pedal = brake_pedal = 0.0
        if gear == cmds.GEAR_PARKING:
            e.v, e.accel = 0.0, 0.0
        elif auto and cmd.cmd_type == cmds.CMD_TYPE_PEDAL:
            accel_pedal, brake_pedal = cmd.accel, cmd.brake
            if gear != cmds.GEAR_NEUTRAL:
                drive = direction * cmd.accel * p.max_accel
            stop += cmd.brake * p.max_brake
        elif auto and cmd.cmd_type == cmds.CMD_TYPE_VELOCITY:
            target = direction * abs(cmd.velocity) / KMH
            want = p.velocity_gain * (target - e.v) + math.copysign(resist, e.v)
            drive = min(max(want, -p.max_brake), p.max_accel)
            accel_pedal = max(drive, 0.0) / p.max_accel
            brake_pedal = max(-drive, 0.0) / p.max_brake
        elif auto and cmd.cmd_type == cmds.CMD_TYPE_ACCELERATION:
            # The commanded acceleration is the net one: resistance is compensated.
            a = min(max(cmd.acceleration, -p.max_brake), p.max_accel)
            if a >= 0:
                drive, stop = direction * a, 0.0
            else:
                stop = -a
            accel_pedal = max(a, 0.0) / p.max_accel
            brake_pedal = max(-a, 0.0) / p.max_brake
        if gear != cmds.GEAR_PARKING:
            v0 = e.v
            v1 = v0 + drive * dt
            if abs(v1) <= stop * dt:
                v1 = 0.0
            else:
                v1 -= math.copysign(stop * dt, v1)
            v1 = min(max(v1, -p.max_speed), p.max_speed)
            e.accel = (v1 - v0) / dt if dt else 0.0
            e.v = v1
        self.pedals = (accel_pedal, brake_pedal)
        # kinematic bicycle with both axles steered (rear angle 0 without rear steering)
        e.yaw_rate = e.v / p.wheelbase * (math.tan(e.steer) - math.tan(e.rear_steer))
        yaw_mid = e.yaw + 0.5 * e.yaw_rate * dt
        e.x += e.v * math.cos(yaw_mid) * dt
        e.y += e.v * math.sin(yaw_mid) * dt
        e.yaw = math.atan2(math.sin(e.yaw + e.yaw_rate * dt), math.cos(e.yaw + e.yaw_rate * dt))

    def _step_actors(self, dt: float) -> None:
        npcs = self.npcs
        stopping = (self.traffic_light_status() != TL_GREEN) & (npcs['dir'] == 1) & \
            (npcs['x'] < STOP_LINE_X) & (npcs['x'] > STOP_LINE_X - 25.0)
        gap = np.where(stopping, STOP_LINE_X - npcs['x'] - 2.5, np.inf)
        target = np.where(stopping, np.clip(gap, 0.0, None) * 0.6, npcs['cruise'])
        target = np.minimum(target, npcs['cruise'])
        accel = np.clip(1.5 * (target - npcs['v']), -6.0, 2.0)
        v_new = np.maximum(npcs['v'] + accel * dt, 0.0)
        self.npc_accel = (v_new - npcs['v']) / dt if dt else accel
        npcs['v'] = v_new
        npcs['x'] += npcs['dir'] * npcs['v'] * dt
        lo, hi = ROAD_X
        npcs['x'] = np.where(npcs['x'] > hi, lo, np.where(npcs['x'] < lo, hi, npcs['x']))
        peds = self.peds
        peds['y'] += peds['vy'] * dt
        turn = np.abs(peds['y']) > 8.0
        peds['vy'] = np.where(turn, -peds['vy'], peds['vy'])
        peds['y'] = np.clip(peds['y'], -8.0, 8.0)

    # -- objects and collisions ----------------------------------------------------------------
    def objects(self) -> np.ndarray:
        """Every actor as OBJECT_DTYPE records (map frame; velocity in km/h along heading)."""
        n_npc, n_ped, n_obs = len(self.npcs), len(self.peds), len(self.obstacles)
        out = np.zeros(n_npc + n_ped + n_obs, morai.OBJECT_DTYPE)
        s = slice(0, n_npc)
        out['obj_id'][s] = self.npcs['obj_id']
        out['obj_type'][s] = morai.object_info.OBJ_TYPE_NPC_VEHICLE
        out['pos_x'][s] = self.npcs['x']
        out['pos_y'][s] = self.npcs['y']
        out['heading'][s] = np.where(self.npcs['dir'] > 0, 0.0, 180.0)
        out['size_x'][s], out['size_y'][s], out['size_z'][s] = 4.5, 1.85, 1.5
        out['overhang'][s], out['wheelbase'][s], out['rear_overhang'][s] = 0.9, 2.7, 0.9
        out['velocity_x'][s] = self.npcs['v'] * KMH
        out['accel_x'][s] = self.npc_accel
        out['link_id'][s] = np.where(self.npcs['dir'] > 0, b'LANE_EAST_2', b'LANE_WEST_1')
        s = slice(n_npc, n_npc + n_ped)
        out['obj_id'][s] = self.peds['obj_id']
        out['obj_type'][s] = morai.object_info.OBJ_TYPE_PEDESTRIAN
        out['pos_x'][s] = self.peds['x']
        out['pos_y'][s] = self.peds['y']
        out['heading'][s] = np.where(self.peds['vy'] > 0, 90.0, -90.0)
        out['size_x'][s], out['size_y'][s], out['size_z'][s] = 0.5, 0.5, 1.7
        out['velocity_x'][s] = np.abs(self.peds['vy']) * KMH
        out['link_id'][s] = b'CROSSWALK_1'
        for k, (obj_id, x, y, size) in enumerate(self.obstacles, start=n_npc + n_ped):
            out[k]['obj_id'], out[k]['obj_type'] = obj_id, morai.object_info.OBJ_TYPE_OBSTACLE
            out[k]['pos_x'], out[k]['pos_y'] = x, y
            out[k]['size_x'] = out[k]['size_y'] = out[k]['size_z'] = size
        return out

    def nearest_objects(self, count: int = 20) -> np.ndarray:
        objs = self.objects()
        d = np.hypot(objs['pos_x'] - self.ego.x, objs['pos_y'] - self.ego.y)
        return objs[np.argsort(d, kind='stable')[:count]]

    def _relative(self, objs: np.ndarray) -> np.ndarray:
        """Object positions in the ego frame (x forward, y left), shape (n, 2)."""
        dx, dy = objs['pos_x'] - self.ego.x, objs['pos_y'] - self.ego.y
        c, s = math.cos(self.ego.yaw), math.sin(self.ego.yaw)
        return np.stack([c * dx + s * dy, -s * dx + c * dy], axis=1)

    def _touching(self, objs: np.ndarray) -> np.ndarray:
        rel = self._relative(objs)
        reach = 0.5 * np.maximum(objs['size_x'], objs['size_y'])
        return (np.abs(rel[:, 0]) < 0.5 * self.params.size_x + reach) & \
            (np.abs(rel[:, 1]) < 0.5 * self.params.size_y + reach)

    def _check_contacts(self) -> None:
        objs = self.objects()
        hit = objs[self._touching(objs)]
        ids = set(int(i) for i in hit['obj_id'])
        for obj_id in ids - self._contacts:
            self.log(f'ego collided with object {obj_id}')
            self.stats['collisions'] += 1
            self.ego.v = 0.0        # the ego stops at the obstacle
        self._contacts = ids

    def _scripted_active(self, offset: float = 0.0, width: float = 0.5) -> bool:
        if self.collision_period <= 0:
            return False
        phase = (self.time - offset) % self.collision_period
        return self.time >= self.collision_period and phase < width

    def collision_records(self) -> np.ndarray:
        """Up to 5 COLLISION_DTYPE records: real contacts, plus the scripted event."""
        objs = self.objects()
        hit = objs[self._touching(objs)]
        if self._scripted_active() and len(hit) == 0:
            hit = self.nearest_objects(1)
        hit = hit[:morai.collision.SLOTS]
        out = np.zeros(len(hit), morai.COLLISION_DTYPE)
        rel = self._relative(hit)
        out['obj_type'], out['obj_id'] = hit['obj_type'], hit['obj_id']
        out['pos_x'], out['pos_y'] = rel[:, 0], rel[:, 1]
        out['global_offset_x'], out['global_offset_y'] = hit['pos_x'], hit['pos_y']
        return out

    def vehicle_collision_pairs(self) -> np.ndarray:
        """NPC–NPC collision pairs, shape (k, 2): the scripted event, half a period offset."""
        if not self._scripted_active(offset=self.collision_period / 2):
            return np.zeros((0, 2), morai.VEHICLE_DTYPE)
        objs = self.objects()[:2]
        pair = np.zeros((1, 2), morai.VEHICLE_DTYPE)
        for name in morai.VEHICLE_DTYPE.names:
            pair[0][name] = objs[name]
        return pair

    # -- status --------------------------------------------------------------------------------
    def ego_status(self) -> morai.EgoVehicleStatus:
        p, e = self.params, self.ego
        sec, nsec = self.sim_time()
        lateral = e.v * e.yaw_rate
        return morai.EgoVehicleStatus(
            layout=self.ego_layout, sec=sec, nsec=nsec, ctrl_mode=self.ctrl_mode,
            gear=self.gear, signed_velocity=e.v * KMH, map_data_id=1,
            accel=self.pedals[0], brake=self.pedals[1], size_x=p.size_x, size_y=p.size_y,
            size_z=p.size_z, overhang=p.overhang, wheelbase=p.wheelbase,
            rear_overhang=p.rear_overhang, pos_x=e.x, pos_y=e.y, pos_z=0.0, roll=0.0,
            pitch=0.0, heading=math.degrees(e.yaw), velocity_x=e.v * KMH, velocity_y=0.0,
            velocity_z=0.0, angular_velocity_x=0.0, angular_velocity_y=0.0,
            angular_velocity_z=math.degrees(e.yaw_rate), accel_x=e.accel, accel_y=lateral,
            accel_z=0.0, steer=math.degrees(e.steer),
            rear_steer=math.degrees(e.rear_steer),
            link_id='LANE_EAST_1' if math.cos(e.yaw) >= 0 else 'LANE_WEST_2',
            **{name: 0.0 for name in morai.ego_status.FIELD_NAMES
               if name.startswith(('tire_', 'side_slip')) or name in (
                   'distance_left_lane_boundary', 'distance_right_lane_boundary',
                   'cross_track_error')})

    def sim_time(self) -> tuple:
        ns = int(round(self.time * 1e9))
        return ns // 1_000_000_000, ns % 1_000_000_000

    def outputs(self) -> Dict[str, bytes]:
        """Every simulator → client datagram for the current instant, by message name."""
        sec, nsec = self.sim_time()
        return {
            'ego_status': morai.encode_ego_status(self.ego_status()),
            'object_info': morai.encode_object_info(self.nearest_objects(), self.object_layout,
                                                    sec, nsec),
            'traffic_light_status': morai.encode_traffic_light_status(
                morai.TrafficLightStatus(TL_INDEX, 0, self.traffic_light_status())),
            'collision': morai.encode_collision(self.collision_records(), self.collision_layout,
                                                sec, nsec),
            'vehicle_collision': morai.encode_vehicle_collision(self.vehicle_collision_pairs()),
            'intersection_status': morai.encode_intersection_status(
                morai.IntersectionStatus(INTERSECTION_INDEX, self.phase, self.phase_time)),
        }

    def multi_ego_output(self) -> bytes:
        egos = np.zeros(1, morai.MULTI_EGO_DTYPE)
        st = self.ego_status()
        for name in ('pos_x', 'pos_y', 'pos_z', 'roll', 'pitch', 'heading', 'gear', 'ctrl_mode'):
            egos[name] = getattr(st, name)
        egos['velocity'] = st.signed_velocity
        return morai.encode_multi_ego(morai.MultiEgoSetting(1, 0, egos))

    # -- commands ------------------------------------------------------------------------------
    def handle_datagram(self, datagram: bytes) -> str:
        """Decode and apply one client → simulator datagram; returns its message name.
        Bad bytes raise CodecError (counted in ``stats``)."""
        try:
            name, value = morai.decode_any(datagram)
            if morai.MESSAGE_TYPES[name].direction != morai.TO_SIM:
                raise CodecError(name, 'a simulator → client message sent to the simulator',
                                 kind=WRONG_SOURCE)
        except CodecError as exc:
            self.stats['error_' + exc.kind] += 1
            raise
        self.apply(name, value)
        return name

    def apply(self, name: str, value) -> None:
        self.stats[name] += 1
        getattr(self, '_on_' + name)(value)

    def _on_ctrl_cmd(self, cmd: morai.CtrlCmd) -> None:
        if (cmd.ctrl_mode, cmd.gear) != (self.ctrl_mode, self.gear):
            self.log(f'ctrl_mode {cmd.ctrl_mode}, gear {cmd.gear}, cmd_type {cmd.cmd_type}')
        self.cmd = cmd
        self.ctrl_mode = cmd.ctrl_mode
        if cmd.ctrl_mode == cmds.CTRL_MODE_AUTO:
            self.gear = cmd.gear

    def _on_lamp_control(self, cmd: morai.LampControl) -> None:
        if (cmd.turn_signal, cmd.emergency_signal) != (self.turn_signal, self.emergency_signal):
            self.log(f'lamps: turn signal {cmd.turn_signal}, emergency {cmd.emergency_signal}')
        self.turn_signal, self.emergency_signal = cmd.turn_signal, cmd.emergency_signal

    def _on_set_traffic_light(self, cmd: morai.SetTrafficLight, hold: float = 10.0) -> None:
        if cmd.index != TL_INDEX:
            self.log(f'set traffic light: unknown index {cmd.index!r} ignored')
            return
        self.tl_override = (cmd.status, self.time + hold)
        self.log(f'traffic light {cmd.index} set to {cmd.status} for {hold:g} s')

    def _on_set_intersection(self, cmd: morai.SetIntersectionStatus) -> None:
        if cmd.index != INTERSECTION_INDEX:
            self.log(f'set intersection: unknown index {cmd.index} ignored')
            return
        self.phase = cmd.status % len(PHASES)
        self.phase_time = min(cmd.status_time, PHASES[self.phase][0] * 0.999)
        self.tl_override = None
        self.log(f'intersection {cmd.index} set to phase {self.phase} at {self.phase_time:g} s')

    def _on_scenario_load(self, cmd: morai.ScenarioLoad) -> None:
        self.scenario = cmd
        self.log(f'scenario load {cmd.file_name!r} (delete_all={cmd.delete_all}, '
                 f'pause={cmd.set_pause})')
        if cmd.delete_all or cmd.load_npc_vehicle_data or cmd.load_pedestrian_data \
                or cmd.load_object_data:
            self._reset_actors()
        if cmd.load_ego_vehicle_data:
            self.ego = EgoState()
        self.paused = cmd.set_pause

    def _on_save_sensor_data(self, cmd: morai.SaveSensorData) -> None:
        name = cmd.custom_file_name if cmd.is_custom_file_name else '<auto>'
        self.log(f'save sensor data requested: {name} in {cmd.file_dir!r} (not saved)')

    def _on_sensor_control(self, cmd: morai.SensorControl) -> None:
        self.sensor_poses[cmd.sensor_index] = cmd
        self.log(f'sensor {cmd.sensor_index} moved to ({cmd.pos_x:g}, {cmd.pos_y:g}, '
                 f'{cmd.pos_z:g}) rpy ({cmd.roll:g}, {cmd.pitch:g}, {cmd.heading:g})')

    def _on_multi_ego_setting(self, cmd: morai.MultiEgoSetting) -> None:
        self.multi_ego = cmd
        mine = cmd.active()[cmd.active()['ego_index'] == 0]
        if len(mine):
            rec = mine[0]
            self.ego.x, self.ego.y = float(rec['pos_x']), float(rec['pos_y'])
            self.ego.yaw = math.radians(float(rec['heading']))
            self.ego.v = float(rec['velocity']) / KMH
        self.log(f'multi ego setting: {cmd.num_of_ego} ego(s), camera {cmd.camera_index}')
