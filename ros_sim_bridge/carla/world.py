"""The world of a recording at a given time: actors alive, their poses, lights, controls
(SUPPLEMENT §5.3, §5.5), and the conversion of Unreal values to REP-103 (§5.4).  ROS-free.

Applying frame ``i`` applies its events (add, delete, parent, collision) and takes its state
arrays (positions, traffic lights, animations, lights, kinematics) as the current ones.  Poses
at a time ``t`` between frame ``i`` and ``i + 1`` are interpolated linearly (angles along the
short way), so at a frame's elapsed time the pose is exactly the recorded one; like CARLA's
replayer, there is no interpolation at a time factor of 2 or more.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ros_sim_bridge.core.frames import quat_from_euler
from .codec import ActorAdd, Frame, Recording
from .codec.records import ACTOR_TYPES

# what a rebuild (seek) replays of the frames before the target
REBUILD = frozenset({'EventAdd', 'EventDel', 'EventParent', 'Collision', 'BoundingBox',
                     'TriggerVolume', 'TrafficLightTime'})


def ue_to_rep103(location_cm, rotation_deg):
    """Unreal (cm, deg, left-handed X fwd Y right Z up) → REP-103 (m, w-x-y-z quaternion):
    x = X/100, y = −Y/100, z = Z/100; roll = rad(Rx), pitch = −rad(Ry), yaw = −rad(Rz)."""
    loc = np.asarray(location_cm, dtype=np.float64) * np.array([0.01, -0.01, 0.01])
    rot = np.radians(np.asarray(rotation_deg, dtype=np.float64))
    q = quat_from_euler(rot[..., 0], -rot[..., 1], -rot[..., 2])
    return loc, q


def ue_velocity_to_rep103(linear, angular_deg):
    """Kinematics: linear (m/s, Unreal axes) → (x, −y, z); angular deg/s → (rad(x), −rad(y),
    −rad(z))."""
    lin = np.asarray(linear, dtype=np.float64) * np.array([1.0, -1.0, 1.0])
    ang = np.radians(np.asarray(angular_deg, dtype=np.float64)) * np.array([1.0, -1.0, -1.0])
    return lin, ang


@dataclass
class Actor:
    """What the recording says about one actor (Unreal units as recorded)."""
    id: int
    type: int
    blueprint: str
    uid: int
    attributes: list
    spawn_location: tuple
    spawn_rotation: tuple
    spawn_time: float
    parent: int = 0
    box: Optional[tuple] = None          # (origin, extent) cm, actor-local
    trigger: Optional[tuple] = None
    light_times: Optional[tuple] = None  # green, yellow, red s

    @classmethod
    def from_add(cls, add: ActorAdd, t: float) -> 'Actor':
        return cls(add.id, add.type, add.blueprint, add.uid, list(add.attributes),
                   tuple(add.location), tuple(add.rotation), t)

    @property
    def type_name(self) -> str:
        return ACTOR_TYPES.get(self.type, f'type{self.type}')

    @property
    def role_name(self) -> str:
        for _, k, v in self.attributes:
            if k == 'role_name':
                return v
        return ''


@dataclass
class Collision:
    time: float
    frame: int
    id: int
    actor1: int
    actor2: int
    actor1_hero: bool
    actor2_hero: bool


@dataclass
class FrameChanges:
    """What one call of :meth:`World.advance` changed."""
    added: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    collisions: list = field(default_factory=list)
    reset: bool = False


class World:
    def __init__(self, recording: Recording):
        self.rec = recording
        self.errors: list = []   # CodecErrors of frames applied, for the caller to drain
        self.reset()

    def reset(self) -> None:
        self.index = -1
        self.actors: dict[int, Actor] = {}
        self.state: dict[str, np.ndarray] = {}
        self._next: Optional[tuple] = None

    # -- frames -----------------------------------------------------------------------------
    def apply(self, fr: Frame, changes: FrameChanges) -> None:
        self.errors.extend(fr.errors)
        for add in fr.get('EventAdd', []):
            self.actors[add.id] = Actor.from_add(add, fr.elapsed)
            changes.added.append(add.id)
        dels = fr.get('EventDel')
        if dels is not None:
            for i in dels['id'].tolist():
                if self.actors.pop(i, None) is not None:
                    changes.removed.append(i)
        par = fr.get('EventParent')
        if par is not None:
            for child, parent in zip(par['id'].tolist(), par['parent'].tolist()):
                if child in self.actors:
                    self.actors[child].parent = parent
        coll = fr.get('Collision')
        if coll is not None:
            for c in coll:
                changes.collisions.append(Collision(fr.elapsed, fr.id, int(c['id']),
                                                    int(c['actor1']), int(c['actor2']),
                                                    bool(c['actor1_hero']),
                                                    bool(c['actor2_hero'])))
        for name in ('BoundingBox', 'TriggerVolume'):
            arr = fr.get(name)
            if arr is not None:
                for r in arr:
                    a = self.actors.get(int(r['id']))
                    if a is not None:
                        value = (tuple(r['origin'].tolist()), tuple(r['extent'].tolist()))
                        if name == 'BoundingBox':
                            a.box = value
                        else:
                            a.trigger = value
        tl = fr.get('TrafficLightTime')
        if tl is not None:
            for r in tl:
                a = self.actors.get(int(r['id']))
                if a is not None:
                    a.light_times = (float(r['green']), float(r['yellow']), float(r['red']))
        for name in ('Position', 'State', 'AnimVehicle', 'AnimWalker', 'VehicleLight'):
            arr = fr.get(name)
            if arr is not None:
                self.state[name] = arr
        # Kinematics is left out of a frame without moving actors (SUPPLEMENT §5.6)
        self.state['Kinematics'] = fr.get('Kinematics', np.zeros(0, self.rec.decoder.dtypes[
            'Kinematics']))
        self.index = fr.index
        self.elapsed = fr.elapsed

    def advance(self, target: int) -> FrameChanges:
        """Bring the world to frame ``target``: forward frame by frame, or (backwards / far)
        rebuilt from the events before it and the state of ``target`` itself."""
        changes = FrameChanges()
        target = max(0, min(target, len(self.rec) - 1))
        if target < self.index or target - self.index > 50:
            before = set(self.actors)
            self.reset()
            changes.reset = True
            for fr in self.rec.event_frames(REBUILD):
                if fr.index >= target:
                    break
                scratch = FrameChanges()
                self.apply(fr, scratch)
            self.apply(self.rec.frame(target), changes)
            changes.removed = sorted(before - set(self.actors))
            changes.added = sorted(set(self.actors) - before)
            return changes
        for i in range(self.index + 1, target + 1):
            self.apply(self.rec.frame(i), changes)
        return changes

    # -- poses ------------------------------------------------------------------------------
    def _next_positions(self):
        i = self.index + 1
        if i >= len(self.rec):
            return None
        if self._next is None or self._next[0] != i:
            self._next = (i, self.rec.frame(i, {'Position'}).get('Position'))
        return self._next[1]

    def poses(self, t: Optional[float] = None, interpolate: bool = True):
        """(ids, location cm (n,3), rotation deg (n,3)) of every live actor at time ``t``
        (Unreal units); actors without a Position record keep their spawn pose."""
        ids = np.fromiter(self.actors, np.int64, len(self.actors))
        loc = np.array([a.spawn_location for a in self.actors.values()], np.float64)
        rot = np.array([a.spawn_rotation for a in self.actors.values()], np.float64)
        if not len(ids):
            return ids, loc.reshape(0, 3), rot.reshape(0, 3)
        pos = self.state.get('Position')
        if pos is not None and len(pos):
            order = np.argsort(ids)
            cur_loc = pos['location'].astype(np.float64)
            cur_rot = pos['rotation'].astype(np.float64)
            nxt = self._next_positions() if interpolate and t is not None else None
            duration = self.rec.durations[self.index]
            if nxt is not None and len(nxt) and duration > 0 and t > self.elapsed:
                alpha = min((t - self.elapsed) / duration, 1.0)
                k = np.searchsorted(nxt['id'], pos['id'])
                sorter = np.argsort(nxt['id'])
                k = sorter[np.clip(np.searchsorted(nxt['id'], pos['id'], sorter=sorter), 0,
                                   len(nxt) - 1)]
                both = nxt['id'][k] == pos['id']
                d_loc = nxt['location'][k].astype(np.float64) - cur_loc
                d_rot = (nxt['rotation'][k].astype(np.float64) - cur_rot + 180.0) % 360.0 - 180.0
                cur_loc = cur_loc + np.where(both[:, None], alpha * d_loc, 0.0)
                cur_rot = cur_rot + np.where(both[:, None], alpha * d_rot, 0.0)
            j = np.searchsorted(ids, pos['id'], sorter=order)
            j = order[np.clip(j, 0, len(ids) - 1)]
            hit = ids[j] == pos['id']
            loc[j[hit]] = cur_loc[hit]
            rot[j[hit]] = cur_rot[hit]
        return ids, loc, rot

    def hero(self) -> Optional[int]:
        for a in self.actors.values():
            if a.role_name == 'hero':
                return a.id
        return None

    def record(self, name: str, actor: int):
        """The current ``name`` record (AnimVehicle, VehicleLight, …) of ``actor`` or None."""
        arr = self.state.get(name)
        if arr is None or not len(arr):
            return None
        hit = np.flatnonzero(arr['id'] == actor)
        return arr[hit[0]] if len(hit) else None
