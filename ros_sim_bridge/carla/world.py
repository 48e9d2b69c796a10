"""The world of a recording at a given time: actors alive, their poses, lights, controls
(SUPPLEMENT §5.3, §5.5), and the conversion of Unreal values to REP-103 (§5.4, the factors of
:mod:`.codec.units`).  ROS-free.

Applying frame ``i`` applies its events (add, delete, parent, collision) and takes its state
packets (positions, traffic lights, animations, lights, kinematics) as the current ones; a state
packet a frame leaves out keeps the last one recorded.  Poses follow CARLA's replayer
(SUPPLEMENT §5.5): at a time ``t`` in frame ``i`` (elapsed_i <= t < elapsed_i + duration_i)
they are interpolated between the *previous* Position packet and frame ``i``'s with the
fraction ``(t - elapsed_i) / duration_i`` (angles the short way, as UE's FRotator lerp); an
actor without a previous position is at its current one; without interpolation (CARLA: time
factor >= 2) the fraction is 0, i.e. the previous position.

A jump (seek, loop, far or backward move) rebuilds the world from the frame index: every event
before the target (actors, parents, destructions, bounding boxes, traffic light times), the
latest state packets at or before it, then the target frame — the same world a frame-by-frame
replay reaches.  Collisions of the frames jumped over are not reported (CARLA's replayer never
replays Collision packets; we report those of the frames replayed, and of the frame a jump
lands in).

Parented actors (a sensor spawned with ``attach_to``): CARLA records their EventAdd transform
*relative to the parent* (it spawns them at the relative transform and attaches them keeping
it) and writes Position records only for vehicles and walkers.  An actor with a live parent and
no Position record of its own is therefore at its parent's world pose composed with its spawn
transform (chains of parents in turn).  When the parent is destroyed the child is detached, as
UE does: it stays at the world pose it had at the parent's last recorded pose.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError
from ros_sim_bridge.core.frames import quat_from_euler, quat_multiply, quat_rotate, quat_to_euler
from .codec import ActorAdd, Frame, Recording
from .codec.records import ACTOR_TYPES
from .codec.units import LINEAR_SIGNS, LOCATION_FROM_SI, LOCATION_TO_SI, ROTATION_SIGNS

# what a rebuild (seek) replays of the frames before the target
REBUILD = frozenset({'EventAdd', 'EventDel', 'EventParent', 'BoundingBox', 'TriggerVolume',
                     'TrafficLightTime'})
# state packets whose last recorded one holds until the next (Kinematics: see apply)
STATE = ('Position', 'State', 'AnimVehicle', 'AnimWalker', 'VehicleLight', 'SceneLight')
FAR = 50   # frames ahead beyond which moving on is a rebuild, not a frame-by-frame replay


def float64_nan(values) -> np.ndarray:
    """Recorded locations or rotations (Unreal) as a float64 copy, ±Inf made NaN: a corrupt
    pose stays NaN through every step to REP-103 (Inf would raise numpy's 'invalid value'
    warnings in sin, remainder, …) and is left out where it would be published (SUPPLEMENT
    §5.4; frame_cdr)."""
    out = np.array(values, dtype=np.float64)
    np.copyto(out, np.nan, where=np.isinf(out))
    return out


def ue_to_rep103(location_cm, rotation_deg):
    """Unreal (cm, deg, left-handed X fwd Y right Z up) → REP-103 (m, w-x-y-z quaternion):
    x = X/100, y = −Y/100, z = Z/100; roll = rad(Rx), pitch = −rad(Ry), yaw = −rad(Rz)."""
    loc = np.asarray(location_cm, dtype=np.float64) * LOCATION_TO_SI
    rot = np.radians(np.asarray(rotation_deg, dtype=np.float64))
    q = quat_from_euler(rot[..., 0], -rot[..., 1], -rot[..., 2])
    return loc, q


def rep103_to_ue(xyz, q):
    """The inverse of :func:`ue_to_rep103`: REP-103 (m, w-x-y-z) → Unreal (cm, deg roll,
    pitch, yaw)."""
    loc = np.asarray(xyz, dtype=np.float64) * LOCATION_FROM_SI
    rot = np.degrees(quat_to_euler(q)) * ROTATION_SIGNS
    return loc, rot


def attach_levels(actors, alive, positioned) -> list:
    """Which of ``actors`` (a sequence of :class:`Actor`) are placed by their parent: those
    with a parent in ``alive`` (ids), not detached, whose id is not in ``positioned`` (the ids
    with a Position record).  Returns ``[(child rows, parent rows), …]`` level by level (a
    parent's row before its children's); a cycle of parents is left at its spawn poses."""
    row = {a.id: k for k, a in enumerate(actors)}
    pending = {}
    for k, a in enumerate(actors):
        if (a.parent and a.parent != a.id and a.parent in alive and a.parent in row
                and a.detached is None and a.id not in positioned):
            pending[k] = row[a.parent]
    levels = []
    while pending:
        level = [(c, p) for c, p in pending.items() if p not in pending]
        if not level:
            break
        for c, _ in level:
            del pending[c]
        levels.append((np.array([c for c, _ in level], np.intp),
                       np.array([p for _, p in level], np.intp)))
    return levels


def attach(loc, rot, spawn_loc, spawn_rot, levels, children=None):
    """World poses (Unreal, ``(…, n, 3)`` arrays, changed in place) of the children of
    ``levels`` (:func:`attach_levels`): parent's world pose ∘ the child's spawn transform
    (``(n, 3)`` Unreal, relative to the parent), composed in REP-103.  ``children``: the
    children's spawn transforms in REP-103 (:func:`child_transforms`), when already made."""
    if children is None:
        children = child_transforms(spawn_loc, spawn_rot, levels)
    for (child, parent), (c_xyz, c_q) in zip(levels, children):
        p_xyz, p_q = ue_to_rep103(loc[..., parent, :], rot[..., parent, :])
        loc[..., child, :], rot[..., child, :] = rep103_to_ue(
            p_xyz + quat_rotate(p_q, c_xyz), quat_multiply(p_q, c_q))
    return loc, rot


def child_transforms(spawn_loc, spawn_rot, levels) -> list:
    """``[(xyz, q), …]`` REP-103 spawn transforms of the children of each of ``levels``."""
    return [ue_to_rep103(spawn_loc[child], spawn_rot[child]) for child, _ in levels]


def ue_velocity_to_rep103(linear, angular_deg):
    """Kinematics: linear (m/s, Unreal axes) → (x, −y, z); angular deg/s → (rad(x), −rad(y),
    −rad(z))."""
    lin = np.asarray(linear, dtype=np.float64) * LINEAR_SIGNS
    ang = np.radians(np.asarray(angular_deg, dtype=np.float64)) * ROTATION_SIGNS
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
    detached: Optional[tuple] = None     # (location, rotation) world, once its parent is gone

    @property
    def pose(self) -> tuple:
        """(location, rotation) when nothing else places it: where it was detached, else its
        spawn transform."""
        return self.detached if self.detached is not None else (self.spawn_location,
                                                                self.spawn_rotation)

    @classmethod
    def from_add(cls, add: ActorAdd, t: float) -> 'Actor':
        return cls(add.id, add.type, add.blueprint, add.uid, list(add.attributes),
                   tuple(float64_nan(add.location).tolist()),
                   tuple(float64_nan(add.rotation).tolist()), t)

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
        self.elapsed = 0.0
        self.actors: dict[int, Actor] = {}
        self.state: dict[str, np.ndarray] = {}
        self.state_frame: dict[str, int] = {}   # name → index of the frame it came from
        self._prev: Optional[tuple] = None       # (frame index, previous Position array)
        self._placed: Optional[tuple] = None     # what _place keeps of the actors

    # -- frames -----------------------------------------------------------------------------
    def apply(self, fr: Frame, changes: FrameChanges) -> None:
        """Frame ``fr`` replayed: its events, then its state packets."""
        self.apply_events(fr, changes)
        for name in STATE:
            arr = fr.get(name)
            if arr is not None:
                self.state[name] = arr
                self.state_frame[name] = fr.index
        # Kinematics is left out of a frame without moving actors (SUPPLEMENT §5.6)
        self.state['Kinematics'] = fr.get('Kinematics', np.zeros(0, self.rec.decoder.dtypes[
            'Kinematics']))
        self.index = fr.index
        self.elapsed = fr.elapsed

    def apply_events(self, fr: Frame, changes: FrameChanges) -> None:
        """The events of ``fr``: actors added and destroyed, parents, collisions, bounding
        boxes, trigger volumes, traffic light times."""
        self.errors.extend(fr.errors)
        for add in fr.get('EventAdd', []):
            self.actors[add.id] = Actor.from_add(add, fr.elapsed)
            changes.added.append(add.id)
        dels = fr.get('EventDel')
        if dels is not None:
            gone = set(dels['id'].tolist())
            self._detach(fr, gone)
            for i in gone:
                if self.actors.pop(i, None) is not None:
                    changes.removed.append(i)
            for a in self.actors.values():     # detached for good: an actor that takes the
                if a.parent in gone:           # id later is not their parent
                    a.parent = 0
        par = fr.get('EventParent')
        if par is not None:
            for child, parent in zip(par['id'].tolist(), par['parent'].tolist()):
                if child not in self.actors:
                    continue
                if self._above(parent, child):
                    self.errors.append(CodecError(
                        f'frame {fr.id} EventParent', f'actor {child} under {parent} '
                        'would close a loop of parents: ignored', kind=BAD_VALUE))
                    continue
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
                        if not all(map(math.isfinite, value[0] + value[1])):
                            # how the recorder writes an actor without a box (Unreal's empty
                            # box: origin NaN, extent -Inf; the spectator, some sensors)
                            value = None
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

    def advance(self, target: int, jump: bool = False) -> FrameChanges:
        """Bring the world to frame ``target``.  Replay (``jump`` false): frame by frame,
        every event of the frames passed is reported.  A jump (a seek, a loop) or a backward or
        far move: the world is rebuilt (see the module text) and only the target frame's
        collisions are reported; ``added``/``removed`` say how the actor set changed."""
        changes = FrameChanges()
        if not len(self.rec):                  # no readable frame: the world stays empty
            return changes
        target = max(0, min(target, len(self.rec) - 1))
        if target == self.index:
            return changes
        if self.index < target <= self.index + FAR:   # near ahead: frame by frame
            for i in range(self.index + 1, target + 1):
                if jump and i == target:
                    changes.collisions.clear()          # only the landing frame's
                self.apply(self.rec.frame(i), changes)
            return changes
        before = set(self.actors)
        self.reset()
        changes.reset = True
        scratch = FrameChanges()
        for fr in self.rec.event_frames(REBUILD):
            if fr.index >= target:
                break
            self.apply_events(fr, scratch)
        for name in STATE:
            j = self.rec.last_with(name, target - 1)
            if j >= 0 and self.rec.last_with(name, target) != target:
                arr = self.rec.frame(j, {name}).get(name)
                if arr is not None:
                    self.state[name], self.state_frame[name] = arr, j
        self.apply(self.rec.frame(target), changes)
        changes.removed = sorted(before - set(self.actors))
        changes.added = sorted(set(self.actors) - before)
        return changes

    def _above(self, actor: int, child: int) -> bool:
        """Whether ``child`` is ``actor`` or one of its parents (so ``actor`` cannot be its
        parent: TF would get a loop)."""
        seen = set()
        while actor and actor not in seen:
            if actor == child:
                return True
            seen.add(actor)
            a = self.actors.get(actor)
            actor = a.parent if a is not None else 0
        return False

    def _detach(self, fr: Frame, gone: set) -> None:
        """Before the actors ``gone`` are destroyed: their children placed by them keep the
        world pose of the last Position packet before ``fr`` (frame by frame that is the
        current state; in a rebuild it is read from the file)."""
        pos = None
        for a in self.actors.values():
            if a.parent not in gone or a.id in gone or a.detached is not None:
                continue
            if pos is None:
                j = self.rec.last_with('Position', fr.index - 1)
                if j < 0:
                    pos = np.zeros(0, self.rec.decoder.dtypes['Position'])
                elif self.state_frame.get('Position') == j:
                    pos = self.state['Position']
                else:
                    pos = self.rec.frame(j, {'Position'}).get('Position')
                    if pos is None:
                        pos = np.zeros(0, self.rec.decoder.dtypes['Position'])
                ids, loc, rot = self._place(float64_nan(pos['location']),
                                            float64_nan(pos['rotation']), pos['id'])
                row = {i: k for k, i in enumerate(ids.tolist())}
            k = row[a.id]
            a.detached = (tuple(loc[k].tolist()), tuple(rot[k].tolist()))

    # -- poses ------------------------------------------------------------------------------
    def _previous_positions(self):
        """The Position packet recorded before the current one (CARLA's PrevPos), or None."""
        current = self.state_frame.get('Position', -1)
        j = self.rec.last_with('Position', current - 1) if current > 0 else -1
        if j < 0:
            return None
        if self._prev is None or self._prev[0] != j:
            self._prev = (j, self.rec.frame(j, {'Position'}).get('Position'))
        return self._prev[1]

    def poses(self, t: Optional[float] = None, interpolate: bool = True):
        """(ids, location cm (n,3), rotation deg (n,3)) of every live actor at time ``t``
        (Unreal units), by CARLA's replayer rule (module text): between the previous and the
        current Position packet, fraction ``(t − elapsed) / duration`` (0 without
        ``interpolate``).  ``t=None``: the current frame's recorded positions as they are.
        Actors without a Position record keep their spawn pose, or, with a live parent, are at
        the parent's pose composed with it (module text)."""
        pos = self.state.get('Position')
        if pos is None or not len(pos):
            return self._place(None, None, None)
        cur_loc = float64_nan(pos['location'])
        cur_rot = float64_nan(pos['rotation'])
        prev = self._previous_positions() if t is not None else None
        if prev is not None and len(prev):
            duration = float(self.rec.durations[self.index])
            alpha = 0.0
            if interpolate and duration > 0:
                alpha = min(max((t - self.elapsed) / duration, 0.0), 1.0)
            sorter = np.argsort(prev['id'])
            k = sorter[np.clip(np.searchsorted(prev['id'], pos['id'], sorter=sorter), 0,
                               len(prev) - 1)]
            both = (prev['id'][k] == pos['id'])[:, None]
            p_loc = float64_nan(prev['location'][k])
            p_rot = float64_nan(prev['rotation'][k])
            d_rot = (cur_rot - p_rot + 180.0) % 360.0 - 180.0
            cur_loc = np.where(both, p_loc + alpha * (cur_loc - p_loc), cur_loc)
            cur_rot = np.where(both, p_rot + alpha * d_rot, cur_rot)
        return self._place(cur_loc, cur_rot, pos['id'])

    def _place(self, cur_loc, cur_rot, pos_ids):
        """(ids, loc, rot) of the live actors: those of ``pos_ids`` at ``cur_loc``/``cur_rot``,
        the children placed by their parents, the others at :attr:`Actor.pose`."""
        actors = tuple(self.actors.values())
        # what depends on the actors alone (the same from frame to frame): kept while the
        # same actor objects have the same parents and detachments (the entry keeps them
        # alive, so no other object takes their ids)
        key = (tuple(map(id, actors)), tuple([(a.parent, a.detached) for a in actors]))
        placed = self._placed
        if placed is None or placed[0] != key:
            ids = np.fromiter(self.actors, np.int64, len(actors))
            spawn_loc = np.array([a.pose[0] for a in actors], np.float64).reshape(-1, 3)
            spawn_rot = np.array([a.pose[1] for a in actors], np.float64).reshape(-1, 3)
            placed = self._placed = (key, actors, ids, spawn_loc, spawn_rot, np.argsort(ids),
                                     {})
        _, _, ids, spawn_loc, spawn_rot, order, levels_of = placed
        loc, rot = spawn_loc.copy(), spawn_rot.copy()
        if not len(ids):
            return ids, loc, rot
        positioned = b''
        if pos_ids is not None and len(pos_ids):
            j = np.searchsorted(ids, pos_ids, sorter=order)
            j = order[np.clip(j, 0, len(ids) - 1)]
            hit = ids[j] == pos_ids
            loc[j[hit]] = cur_loc[hit]
            rot[j[hit]] = cur_rot[hit]
            positioned = np.ascontiguousarray(pos_ids[hit]).tobytes()
        levels = levels_of.get(positioned)
        if levels is None:
            if len(levels_of) > 8:
                levels_of.clear()
            ids_positioned = set(np.frombuffer(positioned, pos_ids.dtype).tolist()) \
                if positioned else set()
            lv = attach_levels(actors, self.actors, ids_positioned)
            levels = levels_of[positioned] = (lv, child_transforms(spawn_loc, spawn_rot, lv))
        if levels[0]:
            attach(loc, rot, spawn_loc, spawn_rot, *levels)
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
