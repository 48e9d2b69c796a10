"""The scripted scene of the CARLA recording generator (the emulator of a file source): every
value computed from the time, so tests compare what a decoder reads with what the scene says,
not with what an encoder wrote.

The scene (all in Unreal units: cm, degrees, left-handed): a spectator, traffic lights cycling
green → yellow → red, vehicles driving circles (the first one is the hero,
``role_name=hero``, with a collision sensor attached to it as CARLA records one: EventAdd at
its transform relative to the hero, EventParent, never a Position record), one vehicle
parked for the whole recording (for ``blocked``), walkers pacing back and forth, a collision of
the hero with the second vehicle and one with a non-actor, and the last vehicle destroyed at
60 % of the recording.  :mod:`.writer` writes it as a recorder file, :mod:`.cli` is
``python -m ros_sim_bridge.carla.emulator.cli``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codec.records import (PHYSICS_HEAD_UE5_NAMES, RATIO, WHEEL_UE5, WHEELS, ActorAdd, Layout,
                             PhysicsControl, CURVE, GEAR)

LAYOUTS = {  # name → (Layout, whether ids >= 18 are written)
    'ue4-0.9.13': (Layout('<f4', '0.9.16'), False),
    'ue4-0.9.15': (Layout('<f4', '0.9.15'), True),
    'ue5': (Layout('<f8', '0.9.16'), True),
}
SPECTATOR = 1
SENSOR_OFFSET = 1000       # the collision sensor's id is hero id + this
# its spawn transform relative to the hero (cm, deg): where a front camera sits
SENSOR_RELATIVE = ((100.0, 0.0, 280.0), (0.0, 0.0, 0.0))


@dataclass
class Scene:
    seconds: float = 20.0
    rate: float = 20.0
    vehicles: int = 4
    walkers: int = 2
    traffic_lights: int = 2
    date: int = 1_700_000_000
    map_name: str = 'Town10HD_Opt'

    # -- ids --------------------------------------------------------------------------------
    @property
    def frames(self) -> int:
        return int(round(self.seconds * self.rate)) + 1

    @property
    def light_ids(self) -> np.ndarray:
        return np.arange(self.traffic_lights, dtype=np.uint32) + 100

    @property
    def vehicle_ids(self) -> np.ndarray:
        return np.arange(self.vehicles, dtype=np.uint32) + 200

    @property
    def walker_ids(self) -> np.ndarray:
        return np.arange(self.walkers, dtype=np.uint32) + 300 + self.vehicles

    @property
    def hero(self) -> int:
        return int(self.vehicle_ids[0])

    @property
    def parked(self) -> int:
        """The vehicle that never moves (for ``blocked``): the third, when there are three."""
        return int(self.vehicle_ids[2]) if self.vehicles >= 3 else -1

    @property
    def destroyed(self) -> int:
        return int(self.vehicle_ids[-1]) if self.vehicles >= 4 else -1

    @property
    def destroy_frame(self) -> int:
        return int(self.frames * 0.6)

    def collision_frames(self) -> range:
        start = min(int(self.frames / 3), self.frames - 4)
        return range(max(start, 1), max(start, 1) + 3)

    # -- state as a function of time --------------------------------------------------------
    def vehicle_state(self, t: float):
        """(location (n,3) cm, rotation (n,3) roll/pitch/yaw deg, velocity (n,3) m/s,
        yaw rate (n,) deg/s) of every vehicle at time ``t``."""
        k = np.arange(self.vehicles)
        radius = 1500.0 + 300.0 * k                        # cm
        omega = 0.2 / (1 + 0.1 * k)                         # rad/s
        cx, cy = 6000.0 * (k % 5), 6000.0 * (k // 5)
        a = omega * t + 0.5 * k
        if self.parked >= 0:
            omega = np.where(self.vehicle_ids == self.parked, 0.0, omega)
            a = np.where(self.vehicle_ids == self.parked, 0.0, a)
        loc = np.stack([cx + radius * np.cos(a), cy + radius * np.sin(a),
                        np.full(self.vehicles, 20.0)], axis=1)
        yaw = np.degrees(a) + 90.0
        rot = np.stack([np.zeros(self.vehicles), np.zeros(self.vehicles),
                        (yaw + 180.0) % 360.0 - 180.0], axis=1)
        speed = omega * radius / 100.0                        # m/s
        vel = np.stack([-speed * np.sin(a), speed * np.cos(a), np.zeros(self.vehicles)], axis=1)
        return loc, rot, vel, np.degrees(omega)

    def walker_state(self, t: float):
        k = np.arange(self.walkers)
        period = 20.0
        phase = (t / period + k * 0.25) % 1.0
        forward = phase < 0.5
        s = np.where(forward, phase, 1.0 - phase) * 2 * 1400.0     # 0..1400 cm and back
        loc = np.stack([-3000.0 + s, 500.0 * k - 2000.0, np.full(self.walkers, 90.0)], axis=1)
        rot = np.stack([np.zeros(self.walkers), np.zeros(self.walkers),
                        np.where(forward, 0.0, 180.0)], axis=1)
        return loc, rot, np.full(self.walkers, 1.4)

    def light_state(self, t: float):
        """(state (0 red 1 yellow 2 green), elapsed in state) of every light."""
        cycle = np.array([10.0, 3.0, 2.0])                  # green, yellow, red
        tt = (t + 5.0 * np.arange(self.traffic_lights)) % cycle.sum()
        state = np.where(tt < 10, 2, np.where(tt < 13, 1, 0))
        elapsed = np.where(tt < 10, tt, np.where(tt < 13, tt - 10, tt - 13))
        return state.astype(np.uint8), elapsed.astype(np.float32)

    def light_location(self) -> np.ndarray:
        k = np.arange(self.traffic_lights)
        return np.stack([1000.0 * k, np.full(self.traffic_lights, -800.0),
                         np.zeros(self.traffic_lights)], axis=1)

    def alive_vehicles(self, frame: int) -> np.ndarray:
        if self.destroyed >= 0 and frame >= self.destroy_frame:
            return self.vehicle_ids != self.destroyed
        return np.ones(self.vehicles, bool)

    def additions(self, vector: str) -> list[ActorAdd]:
        adds = [ActorAdd(SPECTATOR, 0, (0.0, 0.0, 1000.0), (0.0, -30.0, 0.0), 0, 'spectator', [])]
        for i, lid in enumerate(self.light_ids):
            x, y, z = self.light_location()[i]
            adds.append(ActorAdd(int(lid), 3, (x, y, z), (0.0, 0.0, 90.0), 0,
                                 'traffic.traffic_light', [(3, 'role_name', '')]))
        loc, rot, _, _ = self.vehicle_state(0.0)
        for i, vid in enumerate(self.vehicle_ids):
            role = 'hero' if int(vid) == self.hero else ('parked' if int(vid) == self.parked
                                                         else 'autopilot')
            adds.append(ActorAdd(int(vid), 1, tuple(loc[i]), tuple(rot[i]), 0,
                                 'vehicle.tesla.model3' if i % 2 == 0 else 'vehicle.audi.tt',
                                 [(0, 'sticky_control', 'true'), (1, 'number_of_wheels', '4'),
                                  (4, 'color', f'{50 * i % 255},33,85'),
                                  (3, 'role_name', role)]))
        wl, wr, _ = self.walker_state(0.0)
        for i, wid in enumerate(self.walker_ids):
            adds.append(ActorAdd(int(wid), 2, tuple(wl[i]), tuple(wr[i]), 0,
                                 'walker.pedestrian.0001',
                                 [(0, 'is_invincible', 'false'), (2, 'speed', '1.4'),
                                  (3, 'role_name', 'walker')]))
        adds.append(ActorAdd(self.hero + SENSOR_OFFSET, 5, *SENSOR_RELATIVE, 0,
                             'sensor.other.collision', [(3, 'role_name', 'front')]))
        return adds


def vehicle_box(n: int) -> tuple:
    return (0.0, 0.0, 75.0), (235.0, 95.0, 75.0)


def physics(vid: int) -> PhysicsControl:
    wheels = np.zeros(4, WHEELS[48])
    wheels['tire_friction'] = 3.5
    wheels['radius'] = 37.0
    wheels['max_steer_angle'] = [70, 70, 0, 0]
    wheels['position'] = [[150, -80, 30], [150, 80, 30], [-150, -80, 30], [-150, 80, 30]]
    return PhysicsControl(vid, {
        'max_rpm': 15000.0, 'moi': 1.0, 'damping_rate_full_throttle': 0.25,
        'damping_rate_zero_throttle_clutch_engaged': 2.0,
        'damping_rate_zero_throttle_clutch_disengaged': 0.35, 'use_gear_autobox': True,
        'clutch_strength': 10.0, 'final_ratio': 4.0, 'mass': 1845.0, 'drag_coefficient': 0.15,
        'center_of_mass': (0.0, 0.0, 0.0)},
        np.array([(0, 400), (1890, 500), (5730, 400)], CURVE),
        np.array([(3.5, 0.2, 0.65), (2.0, 0.5, 0.65), (1.4, 0.5, 0.65)], GEAR),
        np.array([(0, 1), (20, 0.9), (60, 0.8), (120, 0.7)], CURVE), wheels)


def physics_ue5(vid: int) -> PhysicsControl:
    """The same car in UE5's physics control (Chaos vehicle fields, SUPPLEMENT §5.3)."""
    wheels = np.zeros(4, WHEEL_UE5)
    wheels['axle_type'] = [0, 0, 1, 1]
    wheels['offset'] = [[150, -80, 30], [150, 80, 30], [-150, -80, 30], [-150, 80, 30]]
    wheels['wheel_radius'] = 37.0
    wheels['wheel_width'] = 25.0
    wheels['max_steer_angle'] = [70, 70, 0, 0]
    wheels['affected_by_steering'] = [1, 1, 0, 0]
    wheels['suspension_axis'] = (0.0, 0.0, -1.0)
    wheels['max_brake_torque'] = 1500.0
    wheels['max_hand_brake_torque'] = 3000.0
    wheels['wheel_index'] = np.arange(4)
    values = dict.fromkeys(PHYSICS_HEAD_UE5_NAMES, 0.0)
    values.update({'max_torque': 300.0, 'max_rpm': 5000.0, 'idle_rpm': 900.0,
                   'use_automatic_gears': True, 'final_ratio': 4.0, 'mass': 1845.0,
                   'drag_coefficient': 0.3, 'center_of_mass': (0.0, 0.0, 0.0),
                   'inertia_tensor_scale': (1.0, 1.0, 1.0), 'use_sweep_wheel_collision': False,
                   'differential_type': 0})
    return PhysicsControl(vid, values, np.array([(0, 500), (5000, 500)], CURVE),
                          np.array([(3.5,), (2.0,), (1.4,)], RATIO),
                          np.array([(0, 1), (10, 0.5)], CURVE), wheels,
                          reverse_gears=np.array([(2.86,)], RATIO))
