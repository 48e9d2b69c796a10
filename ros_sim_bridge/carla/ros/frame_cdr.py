"""The messages of a CARLA recording's world at one time as CDR bytes: the one conversion of
``carla_replayer`` (one frame per publish, the poses it interpolates) and ``carla_log to-bag``
(every recorded frame, in blocks), made from :mod:`ros_sim_bridge.ros.cdr_template` templates
(markers: :mod:`ros_sim_bridge.ros.markers_cdr`).

Units and axes: SUPPLEMENT §5.4 through :func:`ros_sim_bridge.carla.world.ue_to_rep103` (cm →
m, Y and the pitch/yaw senses flipped: Unreal's left-handed frame to REP-103 ENU/FLU).  An
actor whose pose is not finite (a NaN or ±Inf recorded) is left out of /tf, the actor list,
the markers, the traffic lights and the collision markers, and no hero odometry is made while
it is the hero's; a velocity that is not finite is a zero twist in the actor list and no
odometry.  Both are counted (:attr:`FrameCdr.non_finite_poses`,
:attr:`FrameCdr.non_finite_kinematics`).

Frames come in one by one (the world advanced to each); consecutive frames of one *structure*
form a block: the same actors (parents, bounding boxes), the same ids in the same order in
each state array (positions, kinematics, lights, animations).  A block shares its templates
(frame names, blueprints, attributes, marker texts, box sizes, built once per structure; the
traffic lights one per run of equal light states, whose names are text; TF, actor list,
markers and traffic lights one per run of equal sets of actors left out for a pose that is not
finite, found by boolean masks over the block) and its numbers are computed with numpy for all
of its frames at once (poses, relative transforms, velocities, colours, stamps).  A frame
that deletes actors (its markers carry DELETEs) is a block of its own; the replayer's frames
are blocks of one (:meth:`FrameCdr.frame`).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Optional

import numpy as np
from builtin_interfaces.msg import Duration

from ros_sim_bridge.core.frames import quat_conjugate, quat_multiply, quat_rotate
from ros_sim_bridge.ros import markers_cdr as mk
from ros_sim_bridge.ros.cdr_template import Slot, build, serialize
from ..codec.records import LIGHT_STATES, NOT_AN_ACTOR
from ..codec.units import LOCATION_TO_SI
from ..world import (World, attach, attach_levels, float64_nan, ue_to_rep103,
                     ue_velocity_to_rep103)

# default half sizes (m) when a recording has no BoundingBox for an actor, per actor type
DEFAULT_EXTENT = {0: (0.25, 0.25, 0.25), 1: (2.3, 1.0, 0.75), 2: (0.25, 0.25, 0.9),
                  3: (0.3, 0.3, 2.5), 4: (0.1, 0.5, 1.0), 5: (0.1, 0.1, 0.1), 6: (0.2, 0.2, 0.2)}
DEFAULT_ORIGIN_Z = {1: 0.75, 2: 0.0, 3: 2.5, 4: 1.0}
TYPE_COLOURS = {0: (0.6, 0.6, 0.6), 1: (0.1, 0.4, 1.0), 2: (1.0, 0.6, 0.0), 3: (0.9, 0.9, 0.1),
                4: (0.6, 0.2, 0.8), 5: (0.3, 0.9, 0.9), 6: (0.4, 0.4, 0.4)}
HERO_COLOUR = (0.1, 0.9, 0.2)
LIGHT_COLOURS = {0: (1.0, 0.0, 0.0), 1: (1.0, 0.8, 0.0), 2: (0.0, 1.0, 0.0), 3: (0.2, 0.2, 0.2)}
COLLISION_COLOUR = (1.0, 0.1, 0.1, 0.7)
COLLISION_LIFETIME = Duration(sec=1)        # RViz drops a collision sphere after a second


@dataclass
class Frames:
    """TF frame names (parameters of the node)."""
    map: str = 'map'
    actor: str = 'actor_{id}'   # {id}, {role}, {type} are filled in
    hero: str = 'hero'

    def of(self, actor) -> str:
        if actor.role_name == 'hero' and self.hero:
            return self.hero
        return self.actor.format(id=actor.id, role=actor.role_name or 'none',
                                 type=actor.type_name)


def _m(v) -> tuple:
    """A bounding box origin, cm in Unreal's actor frame → m in the FLU actor frame."""
    return tuple(c * s for c, s in zip(v, LOCATION_TO_SI.tolist()))


CLOCK = 'rosgraph_msgs/msg/Clock'
COLLISION = 'ros_sim_bridge/msg/CarlaCollision'
TF = 'tf2_msgs/msg/TFMessage'
ACTOR_LIST = 'ros_sim_bridge/msg/CarlaActorList'
MARKERS = 'visualization_msgs/msg/MarkerArray'
TRAFFIC_LIGHTS = 'ros_sim_bridge/msg/CarlaTrafficLightList'
VEHICLE_CONTROLS = 'ros_sim_bridge/msg/CarlaVehicleControlList'
ODOMETRY = 'nav_msgs/msg/Odometry'
#: the kinds of message of a frame, in the order the node publishes them
KINDS = ('clock', 'tf', 'actor_list', 'markers', 'traffic_lights', 'vehicle_controls',
         'odometry')

_STAMP = Slot('stamp')
_parent, _box, _pose = attrgetter('parent'), attrgetter('box'), attrgetter('pose')
# colour rows of the light states (red, yellow, green, off); NaN: a state without one
_LIGHT_LUT = np.array([(*LIGHT_COLOURS.get(s, (np.nan,) * 3), 0.8) for s in range(256)])
_STATES = ('Position', 'Kinematics', 'VehicleLight', 'AnimWalker', 'State', 'AnimVehicle')


def _xyz(v) -> dict:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


def _pose_rows(xyz: np.ndarray, q_wxyz: np.ndarray) -> np.ndarray:
    """(…, 7) rows of geometry_msgs/Pose: x, y, z, qx, qy, qz, qw."""
    out = np.empty(xyz.shape[:-1] + (7,))
    out[..., :3] = xyz
    out[..., 3:6] = q_wxyz[..., 1:]
    out[..., 6] = q_wxyz[..., 0]
    return out


def _last_rows(state_ids: np.ndarray, ids: np.ndarray):
    """For each of ``ids``, the row of ``state_ids`` holding it (the last one, as a dict built
    from the rows keeps), and whether there is one."""
    if not len(state_ids) or not len(ids):
        return np.zeros(len(ids), np.intp), np.zeros(len(ids), bool)
    order = np.argsort(state_ids, kind='stable')
    pos = np.maximum(np.searchsorted(state_ids[order], ids, side='right') - 1, 0)
    rows = order[pos]
    return rows, state_ids[rows] == ids


def _runs(rows: np.ndarray) -> list:
    """``[(lo, hi), …]``: the runs of equal rows of ``rows`` (one row per frame)."""
    change = (np.flatnonzero(np.any(rows[1:] != rows[:-1], axis=1)) + 1).tolist()
    return list(zip([0, *change], [*change, len(rows)]))


def _ids(arr) -> Optional[bytes]:
    return None if arr is None else arr['id'].tobytes()


class _Cache:
    """The last few templates of one topic by key (a frame with deletes, then back).

    Keys name actors by ``id()`` of their objects (mutable dataclasses, not hashable); an
    entry keeps the objects it was made from alive, so no other object can take their ids
    while the entry can be found."""

    def __init__(self, size: int = 8):
        self.size, self.items = size, OrderedDict()

    def get(self, key, make, keep=None):
        hit = self.items.get(key)
        if hit is None:
            hit = self.items[key] = (make(), keep)
            if len(self.items) > self.size:
                self.items.popitem(last=False)
        else:
            self.items.move_to_end(key)
        return hit[0]


@dataclass
class _Frame:
    t_ns: int
    stamp: tuple                   # (sec, nanosec)
    state: tuple                   # the arrays of _STATES (or None) at this frame
    after: list                    # (kind, cdr) after vehicle_controls: collisions, markers
    hits: list                     # (marker id, actor id) of the collision spheres
    poses: Optional[tuple] = None  # (loc, rot) of the actors (Unreal units), else recorded


@dataclass
class _Block:
    key: tuple
    actors: tuple
    world_actors: dict
    frames: list = field(default_factory=list)
    removed: tuple = ()
    follow: Optional[int] = None   # the row of the actor TF is re-rooted on


@dataclass
class FrameBlock:
    """The messages of consecutive frames: ``kinds`` in the order of :data:`KINDS` (those the
    frames have), each as runs ``(lo, hi, rows)``: frames lo..hi-1 have their message in the
    rows of one uint8 array (all of a size), or have none when ``rows`` is None; ``after``
    frame index → ``(kind, cdr)`` of its collisions and their markers, which come after
    ``vehicle_controls``."""
    t_ns: list
    kinds: list                    # [(kind, [(lo, hi, rows), …]), …]
    after: dict

    def messages(self) -> list:
        """Frame by frame: ``[(t_ns, [(kind, cdr), …]), …]``."""
        return [self.frame(i) for i in range(len(self.t_ns))]

    def frame(self, i: int) -> tuple:
        """``(t_ns, [(kind, cdr), …])`` of frame ``i``, in the node's order."""
        msgs = []
        for kind, runs in self.kinds:
            if kind == 'odometry':
                msgs += self.after.get(i, ())
            lo, _, rows = next(r for r in runs if r[0] <= i < r[1])
            if rows is not None:
                msgs.append((kind, memoryview(rows[i - lo])))
        if not self.kinds or self.kinds[-1][0] != 'odometry':
            msgs += self.after.get(i, ())
        return self.t_ns[i], msgs


class FrameCdr:
    """Collects frames (:meth:`add`) and gives their messages back block by block, in
    order: lists of ``(t_ns, [(kind, cdr), …])``, kinds as :data:`KINDS` (and ``collisions``,
    ``collision_markers`` after ``vehicle_controls`` in a frame with collisions); or one frame
    at once (:meth:`frame`)."""

    def __init__(self, frames: Optional[Frames] = None, marker_types=(1, 2, 3, 4),
                 block: int = 200):
        frames = frames or Frames()
        self.frames = frames
        self.marker_types = frozenset(marker_types)
        self.max_frames = block
        self._caches = {name: _Cache() for name in ('tf', 'actors', 'markers', 'controls',
                                                    'odom', 'hero')}
        self._caches['lights'] = _Cache(64)         # traffic light state combinations
        self._clock = build(CLOCK, {'clock': _STAMP})
        self._block: Optional[_Block] = None
        self.non_finite_poses = 0    # actor transforms left out of /tf: NaN or ±Inf
        self.non_finite_kinematics = 0   # live actors' Kinematics records with NaN or ±Inf

    def add(self, world: World, stamp, t_ns: int, removed=(), collisions=()) -> list:
        """Frame at ``world`` (just advanced to it); ``removed`` the actors deleted since the
        last frame added, ``collisions`` its Collision records (and those of the frames left
        out since).  Returns the frames now complete (maybe none)."""
        return [m for block in self.add_blocks(world, stamp, t_ns, removed, collisions)
                for m in block.messages()]

    def frame(self, world: World, stamp, removed=(), collisions=(), poses=None,
              follow: Optional[int] = None) -> list:
        """The messages of one frame, now: ``[(kind, cdr), …]`` in the node's order (as
        :meth:`add`).  ``poses``: ``(loc, rot)`` of ``world.actors`` in Unreal units
        (:meth:`World.poses` at the time published; None: the frame's recorded poses);
        ``follow``: TF re-rooted on that actor (it publishes followed → map)."""
        held = self.flush_blocks()
        assert not held, 'FrameCdr.frame after add: flush first'
        self.add_blocks(world, stamp, 0, removed, collisions, poses, follow)
        [block] = self.flush_blocks()
        return block.frame(0)[1]

    def flush(self) -> list:
        """The frames still held."""
        return [m for block in self.flush_blocks() for m in block.messages()]

    def add_blocks(self, world: World, stamp, t_ns: int, removed=(), collisions=(),
                   poses=None, follow: Optional[int] = None) -> list:
        """As :meth:`add`, the complete frames as :class:`FrameBlock` s (for writers of many
        messages at once); ``poses`` and ``follow`` as :meth:`frame`."""
        actors = tuple(world.actors.values())
        if follow is not None and follow not in world.actors:
            follow = None
        state = tuple(map(world.state.get, _STATES))
        tl = state[4]
        lights = () if tl is None else tuple(
            a.light_times if a is not None else False
            for a in map(world.actors.get, tl['id'].tolist()))
        key = (tuple(map(id, actors)), tuple(map(_parent, actors)), tuple(map(_box, actors)),
               *map(_ids, state), lights, -1 if state[5] is None else len(state[5]), follow,
               poses is None)
        done = []
        block = self._block
        if block is None or block.key != key or block.removed or removed \
                or len(block.frames) >= self.max_frames:
            if block is not None:
                done = [self._finish(block)]
            block = self._block = _Block(key, actors, dict(world.actors), removed=tuple(removed))
            if follow is not None:
                block.follow = list(world.actors).index(follow)
            self._begin(block, state[0], poses is None)
        sec_ns = (stamp.sec, stamp.nanosec)
        after, hits = self._collisions(world, collisions, sec_ns)
        block.frames.append(_Frame(int(t_ns), sec_ns, state, after, hits, poses))
        return done

    def flush_blocks(self) -> list:
        """The frames still held, as :class:`FrameBlock` s."""
        block, self._block = self._block, None
        return [] if block is None else [self._finish(block)]

    # -- a block ------------------------------------------------------------------------------
    def _begin(self, b: _Block, positions, recorded: bool) -> None:
        """Templates and the block's constant arrays, from the world at its first frame
        (``positions``: its Position array or None; ``recorded``: the poses are the frames'
        recorded ones, not given).  Which actors their parents place is taken now: a later
        frame may detach them (the actors are the world's objects)."""
        actors = b.actors
        b.ids = np.fromiter((a.id for a in actors), np.int64, len(actors))
        if recorded:
            poses = list(map(_pose, actors))
            b.spawn_loc = np.array([p[0] for p in poses], np.float64).reshape(-1, 3)
            b.spawn_rot = np.array([p[1] for p in poses], np.float64).reshape(-1, 3)
            b.levels = attach_levels(actors, b.world_actors, set() if positions is None
                                     else set(positions['id'].tolist()))
        akey = b.key[0]
        b.tf = self._caches['tf'].get((akey, b.key[1], b.follow), lambda: self._tf(b), actors)
        b.actor_list = self._caches['actors'].get(b.key[:3], lambda: self._actor_list(b),
                                                  actors)
        b.markers = self._caches['markers'].get((akey, b.key[2], b.removed),
                                                lambda: self._markers(b), actors)
        b.hero = self._caches['hero'].get(akey, lambda: next(
            (k for k, a in enumerate(actors) if a.role_name == 'hero'), None), actors)
        b.odom = None
        if b.hero is not None:
            child = self.frames.of(actors[b.hero])
            b.odom = self._caches['odom'].get(child, lambda: build(ODOMETRY, {
                'header': {'stamp': _STAMP, 'frame_id': self.frames.map}, 'child_frame_id': child,
                'pose': {'pose': Slot('pose')}, 'twist': {'twist': Slot('twist')}}))

    def _finish(self, b: _Block) -> list:
        frames = b.frames
        count, n = len(frames), len(b.actors)
        stamps = np.array([f.stamp for f in frames], np.int64)[:, None, :]
        state = [self._stack([f.state[k] for f in frames]) for k in range(len(_STATES))]
        pos, kin, vlight, walk, tl, anim = state
        # poses as World.poses(None) + ue_to_rep103, for all frames at once: the recorded
        # positions, the children without one placed by their parents
        if frames[0].poses is not None:                  # given (the replayer's)
            loc, rot = (np.reshape(frames[0].poses[k] if count == 1 else
                                   [f.poses[k] for f in frames], (count, n, 3)) for k in (0, 1))
        else:
            loc = np.broadcast_to(b.spawn_loc, (count, n, 3)).copy()
            rot = np.broadcast_to(b.spawn_rot, (count, n, 3)).copy()
            if pos is not None and pos.shape[1] and n:
                order = np.argsort(b.ids)
                pid = pos['id'][0]
                j = order[np.clip(np.searchsorted(b.ids, pid, sorter=order), 0, n - 1)]
                hit = b.ids[j] == pid
                loc[:, j[hit]] = float64_nan(pos['location'][:, hit])
                rot[:, j[hit]] = float64_nan(pos['rotation'][:, hit])
            if b.levels:
                attach(loc, rot, b.spawn_loc, b.spawn_rot, b.levels)
        xyz, q = ue_to_rep103(loc, rot)
        pose = _pose_rows(xyz, q)
        known = np.isfinite(pose).all(axis=-1)            # (frames, actors): a finite pose
        known = None if known.all() else known             # None: all (the common case)
        twist, has_twist, twist_known = self._twists(b, count, kin)
        runs = {}
        whole = lambda rows: [(0, count, rows)]            # noqa: E731
        runs['clock'] = whole(self._clock.fill_rows(count, stamp=stamps))
        if n:
            runs['tf'] = self._tf_fill(b, count, stamps, xyz, q, pose)
        runs['actor_list'] = self._actor_list_fill(b, count, stamps, pose, twist, vlight, walk,
                                                   known)
        runs['markers'] = self._markers_fill(b, count, stamps, xyz, q, tl, known)
        runs['traffic_lights'] = self._lights_fill(b, count, stamps, pose, tl, known)
        runs['vehicle_controls'] = whole(self._controls_fill(b, count, stamps, anim))
        if b.odom is not None:
            runs['odometry'] = self._odom_fill(b, count, stamps, q, pose, twist, has_twist,
                                               twist_known, known)
        for i, f in enumerate(frames):
            if f.after:
                f.after.append(('collision_markers',
                                self._collision_markers(b, f, xyz[i], known, i)))
        return FrameBlock([f.t_ns for f in frames],
                          [(kind, runs[kind]) for kind in KINDS if kind in runs],
                          {i: f.after for i, f in enumerate(frames) if f.after})

    @staticmethod
    def _stack(arrays):
        """(frames, rows) of one state array of a block; None when the world had none.  The
        rows are joined as bytes (np.stack would promote the structured dtype per array)."""
        first = arrays[0]
        if first is None:
            return None
        raw = np.concatenate([np.ascontiguousarray(a).view(np.uint8) for a in arrays])
        return raw.view(first.dtype).reshape(len(arrays), len(first))

    # -- TF -----------------------------------------------------------------------------------
    def _tf(self, b: _Block, keep=None):
        """The TF template of the block's actors (those ``keep`` says, a bool per actor, when
        given), the rows of the children of a live parent and of their parents.  The actor
        followed (``b.follow``) publishes itself → map, whatever its parent."""
        frames, alive = self.frames, b.world_actors
        index = {a.id: k for k, a in enumerate(b.actors)}
        items, child, parent = [], [], []
        for k, a in enumerate(b.actors):
            p = a.parent if a.parent in alive and a.parent != a.id else 0
            if k == b.follow:
                names = frames.of(a), frames.map
            else:
                if p:
                    child.append(k)
                    parent.append(index[p])
                names = frames.of(alive[p]) if p else frames.map, frames.of(a)
            if keep is None or keep[k]:
                items.append({'header': {'stamp': _STAMP, 'frame_id': names[0]},
                              'child_frame_id': names[1], 'transform': Slot('transform')})
        return (build(TF, {'transforms': items}), np.array(child, np.intp),
                np.array(parent, np.intp))

    def _tf_fill(self, b, count, stamps, xyz, q, pose):
        """map → each actor; a child of a live parent relative to it; the actor followed:
        followed → map (the inverse of its pose); a transform that is not finite (the actor's
        pose, or its parent's) left out.  ``[(lo, hi, rows)]``: one run per set of actors
        left out."""
        tmpl, child, parent = b.tf
        values = pose
        if len(child) or b.follow is not None:
            values = pose.copy()
        if len(child):
            pq_inv = quat_conjugate(q[:, parent])
            values[:, child] = _pose_rows(
                quat_rotate(pq_inv, xyz[:, child] - xyz[:, parent]),
                quat_multiply(pq_inv, q[:, child]))
        if b.follow is not None:
            q_inv = quat_conjugate(q[:, b.follow])
            values[:, b.follow] = _pose_rows(-quat_rotate(q_inv, xyz[:, b.follow]), q_inv)
        finite = np.isfinite(values).all(axis=-1)              # (frames, actors)
        if finite.all():
            return [(0, count, tmpl.fill_rows(count, stamp=stamps, transform=values))]
        self.non_finite_poses += finite.size - int(np.count_nonzero(finite))
        out = []
        for lo, hi in _runs(finite):
            keep = finite[lo]
            sub = self._caches['tf'].get((b.key[0], b.key[1], b.follow, keep.tobytes()),
                                         lambda: self._tf(b, keep)[0], b.actors)
            out.append((lo, hi, sub.fill_rows(hi - lo, stamp=stamps[lo:hi],
                                              transform=values[lo:hi, keep])))
        return out

    # -- actor list ---------------------------------------------------------------------------
    def _actor_list(self, b: _Block, keep=None):
        """The actor list template of the block's actors (those ``keep`` says, when given)."""
        frames = self.frames
        items = []
        for k, a in enumerate(b.actors):
            if keep is not None and not keep[k]:
                continue
            m = {'id': a.id, 'type': a.type, 'type_name': a.type_name, 'blueprint': a.blueprint,
                 'description_uid': a.uid, 'role_name': a.role_name, 'parent_id': a.parent,
                 'frame_id': frames.of(a), 'spawn_time': a.spawn_time,
                 'attribute_types': [int(t) for t, _, _ in a.attributes],
                 'attribute_ids': [k for _, k, _ in a.attributes],
                 'attribute_values': [v for _, _, v in a.attributes],
                 'pose': Slot('pose'), 'twist': Slot('twist'), 'light_state': Slot('light'),
                 'walker_speed': Slot('speed')}
            if a.box is not None:
                m['has_bounding_box'] = True
                m['bounding_box_origin'] = _xyz(_m(a.box[0]))
                m['bounding_box_extent'] = _xyz([c * 0.01 for c in a.box[1]])
            items.append(m)
        return build(ACTOR_LIST, {'header': {'stamp': _STAMP, 'frame_id': frames.map},
                                  'actors': items})

    def _twists(self, b, count, kin):
        """Velocities of the block's actors (their Kinematics records, REP-103 map frame):
        ``(twist (frames, actors, 6), has (actors,) a Kinematics record, known (frames,
        actors) or None: all finite)``; a twist that is not finite is counted and made 0."""
        n = len(b.actors)
        twist = np.zeros((count, n, 6))
        if kin is None or not kin.shape[1]:
            return twist, np.zeros(n, bool), None
        lin, ang = ue_velocity_to_rep103(kin['linear'], kin['angular'])
        rows, hit = _last_rows(kin['id'][0], b.ids)
        twist[:, hit, :3] = lin[:, rows[hit]]
        twist[:, hit, 3:] = ang[:, rows[hit]]
        known = np.isfinite(twist).all(axis=-1)
        if known.all():
            return twist, hit, None
        self.non_finite_kinematics += known.size - int(np.count_nonzero(known))
        twist[~known] = 0.0
        return twist, hit, known

    def _actor_list_fill(self, b, count, stamps, pose, twist, vlight, walk, known):
        """The live actors (pose in the map frame, twist, vehicle light state, walker speed
        cm/s → m/s): ``[(lo, hi, rows)]``, one run per set of actors left out (their pose not
        finite: a CarlaActor cannot say "pose unknown")."""
        n = len(b.actors)
        light = np.zeros((count, n), np.uint32)
        if vlight is not None and vlight.shape[1]:
            rows, hit = _last_rows(vlight['id'][0], b.ids)
            light[:, hit] = vlight['state'][:, rows[hit]]
        speed = np.zeros((count, n), np.float32)
        if walk is not None and walk.shape[1]:
            rows, hit = _last_rows(walk['id'][0], b.ids)
            # cm/s (FWalkerControl.Speed) → m/s, in double as the conversion does
            speed[:, hit] = walk['speed'][:, rows[hit]].astype(np.float64) * 0.01
        values = {'pose': pose, 'twist': twist, 'light': light[..., None],
                  'speed': speed[..., None]}
        if known is None:
            return [(0, count, b.actor_list.fill_rows(count, stamp=stamps, **values))]
        out = []
        for lo, hi in _runs(known):
            keep = known[lo]
            tmpl = self._caches['actors'].get((*b.key[:3], keep.tobytes()),
                                              lambda: self._actor_list(b, keep), b.actors)
            out.append((lo, hi, tmpl.fill_rows(hi - lo, stamp=stamps[lo:hi], **{
                name: v[lo:hi, keep] for name, v in values.items()})))
        return out

    # -- markers ------------------------------------------------------------------------------
    def _markers(self, b: _Block, keep=None):
        """The markers template (of the drawn actors ``keep`` says, a bool per drawn actor,
        when given), the rows of the drawn actors, their box origins, label offsets and
        colours."""
        frames, types = self.frames, self.marker_types
        items = [mk.delete(frames.map, ns, mid)
                 for ns, mid in sorted((ns, int(aid)) for aid in b.removed
                                       for ns in ('carla_actors', 'carla_labels'))]
        drawn = [k for k, a in enumerate(b.actors) if a.type in types]
        actors = [b.actors[k] for k in drawn]
        origin = np.array([_m(a.box[0]) if a.box is not None
                           else (0.0, 0.0, DEFAULT_ORIGIN_Z.get(a.type, 0.0))
                           for a in actors]).reshape(-1, 3)
        extent = np.array([np.array(a.box[1]) * 0.01 if a.box is not None
                           else DEFAULT_EXTENT.get(a.type, (0.2, 0.2, 0.2))
                           for a in actors]).reshape(-1, 3)
        sizes = np.maximum(2 * extent, 0.01).tolist()
        base = np.array([(*(HERO_COLOUR if a.role_name == 'hero'
                            else TYPE_COLOURS.get(a.type, (1, 1, 1)))[:3], 0.8)
                         for a in actors], np.float64).reshape(-1, 4)
        above = np.column_stack([np.zeros((len(actors), 2)), extent[:, 2] + 0.5])
        shown = actors if keep is None else [a for a, k in zip(actors, keep) if k]
        sizes = sizes if keep is None else [s for s, k in zip(sizes, keep) if k]
        items += [mk.box(frames.map, 'carla_actors', id=a.id, pose=Slot('box_pose'),
                         scale=_xyz(size), color=Slot('box_colour'))
                  for a, size in zip(shown, sizes)]
        items += [mk.label(frames.map, 'carla_labels', f'{a.id} {a.blueprint}'
                           + (f' ({a.role_name})' if a.role_name else ''), id=a.id,
                           position=Slot('label_xyz'), height=0.6) for a in shown]
        return (mk.array_template(items), np.array(drawn, np.intp), origin, above, base)

    def _markers_fill(self, b, count, stamps, xyz, q, tl, known):
        """Oriented boxes of the actors of the marker types (the recorded bounding box, else
        a per-type default; the hero green, traffic lights in the colour of their state, else
        the type's colour), labels (id, blueprint, role) 0.5 m above them, DELETEs of the
        actors removed; ``[(lo, hi, rows)]``, one run per set of actors left out (their pose
        not finite)."""
        tmpl, drawn, origin, above, base = b.markers
        if not len(drawn):
            return [(0, count, tmpl.fill_rows(count, stamp=stamps))]
        qd = q[:, drawn]
        centre = xyz[:, drawn] + quat_rotate(qd, origin)
        colour = base
        if tl is not None and tl.shape[1]:
            rows, hit = _last_rows(tl['id'][0], b.ids[drawn])
            if hit.any():
                lit = _LIGHT_LUT[tl['state'][:, rows[hit]]]            # (frames, hits, 4)
                colour = np.broadcast_to(base, (count,) + base.shape).copy()
                colour[:, hit] = np.where(np.isnan(lit[..., :1]), base[hit], lit)
        values = {'box_pose': _pose_rows(centre, qd), 'box_colour': colour,
                  'label_xyz': centre + above}
        if known is None or known[:, drawn].all():
            return [(0, count, tmpl.fill_rows(count, stamp=stamps, **values))]
        values['box_colour'] = np.broadcast_to(colour, (count,) + base.shape)
        shown = known[:, drawn]
        out = []
        for lo, hi in _runs(shown):
            keep = shown[lo]
            sub = self._caches['markers'].get((b.key[0], b.key[2], b.removed, keep.tobytes()),
                                              lambda: self._markers(b, keep)[0], b.actors)
            out.append((lo, hi, sub.fill_rows(hi - lo, stamp=stamps[lo:hi], **{
                name: v[lo:hi, keep] for name, v in values.items()})))
        return out

    # -- traffic lights -----------------------------------------------------------------------
    def _lights(self, b: _Block, ids, states, keep):
        """The traffic lights template of ``ids`` in ``states`` (those ``keep`` says, when
        given), the actor rows of their poses."""
        index = {a.id: k for k, a in enumerate(b.actors)}
        items, rows = [], []
        for k, (aid, st) in enumerate(zip(ids, states)):
            if keep is not None and not keep[k]:
                continue
            a = b.world_actors.get(aid)
            m = {'id': aid, 'state': st, 'state_name': LIGHT_STATES.get(st, 'unknown'),
                 'frozen': Slot('frozen'), 'elapsed_in_state': Slot('elapsed')}
            if a is not None:
                if a.light_times:
                    m['green_time'], m['yellow_time'], m['red_time'] = a.light_times
                m['pose'] = Slot('pose')
                rows.append(index[aid])
            items.append(m)
        return (build(TRAFFIC_LIGHTS, {'header': {'stamp': _STAMP, 'frame_id': self.frames.map},
                                       'lights': items}), np.array(rows, np.intp))

    def _lights_fill(self, b, count, stamps, pose, tl, known):
        """The recorded lights (state, frozen, time in state; times and pose from their
        actor); a state change changes the text (its name),
        and a light left out (its actor's pose not finite) the message, so the frames go in
        runs of equal states and lights left out, one template each: ``[(lo, hi, rows)]``."""
        if tl is None or not tl.shape[1]:
            tmpl, _ = self._lights_template(b, [], [], None)
            return [(0, count, tmpl.fill_rows(count, stamp=stamps))]
        ids = tl['id'][0].tolist()
        states = tl['state']
        shown = None
        if known is not None:
            actor, hit = _last_rows(b.ids, tl['id'][0])      # each light's actor, if alive
            shown = np.ones(states.shape, bool)
            shown[:, hit] = known[:, actor[hit]]
            if shown.all():
                shown = None
        runs = _runs(states) if shown is None else _runs(np.concatenate(
            [states, shown.astype(states.dtype)], axis=1))
        out = []
        for lo, hi in runs:
            keep = None if shown is None else shown[lo]
            tmpl, rows = self._lights_template(b, ids, states[lo].tolist(), keep)
            values = {'stamp': stamps[lo:hi],
                      'frozen': tl['frozen'][lo:hi].astype(bool)[..., None],
                      'elapsed': tl['elapsed'][lo:hi][..., None]}
            if keep is not None:
                values['frozen'], values['elapsed'] = (values['frozen'][:, keep],
                                                       values['elapsed'][:, keep])
            if len(rows):
                values['pose'] = pose[lo:hi, rows]
            out.append((lo, hi, tmpl.fill_rows(hi - lo, **values)))
        return out

    def _lights_template(self, b, ids, states, keep):
        return self._caches['lights'].get(
            (tuple(ids), tuple(states), b.key[0], b.key[-2],
             None if keep is None else keep.tobytes()),
            lambda: self._lights(b, ids, states, keep), b.actors)

    # -- vehicle controls ---------------------------------------------------------------------
    def _controls_fill(self, b, count, stamps, anim):
        """The AnimVehicle records: steering, throttle, brake, handbrake, gear."""
        n = 0 if anim is None else anim.shape[1]
        tmpl = self._caches['controls'].get(n, lambda: build(VEHICLE_CONTROLS, {
            'header': {'stamp': _STAMP, 'frame_id': self.frames.map},
            'controls': [{'id': Slot('id'), 'steering': Slot('steering'),
                          'throttle': Slot('throttle'), 'brake': Slot('brake'),
                          'handbrake': Slot('handbrake'), 'gear': Slot('gear')}] * n}))
        if not n:
            return tmpl.fill_rows(count, stamp=stamps)
        return tmpl.fill_rows(count, stamp=stamps, id=anim['id'][..., None],
                              steering=anim['steering'][..., None],
                              throttle=anim['throttle'][..., None],
                              brake=anim['brake'][..., None],
                              handbrake=anim['handbrake'].astype(bool)[..., None],
                              gear=anim['gear'][..., None])

    # -- collisions ---------------------------------------------------------------------------
    def _collisions(self, world: World, records, stamp: tuple) -> tuple:
        """``([('collisions', cdr), …], [(marker id, actor id), …])`` of Collision
        ``records`` (rare: a message each, serialised at once; their markers wait for the
        frame's poses)."""
        if not records:
            return [], []
        head = {'stamp': {'sec': stamp[0], 'nanosec': stamp[1]}, 'frame_id': self.frames.map}
        out, hits = [], []
        for c in records:
            a1, a2 = world.actors.get(c.actor1), world.actors.get(c.actor2)
            out.append(('collisions', serialize(COLLISION, {
                'header': head, 'collision_id': c.id, 'actor1_id': c.actor1,
                'actor2_id': c.actor2, 'actor1_is_hero': c.actor1_hero,
                'actor2_is_hero': c.actor2_hero, 'actor1_blueprint': a1.blueprint if a1 else '',
                'actor2_blueprint': a2.blueprint if a2 else ''})))
            hits += [((c.id * 2 + (aid == c.actor2)) & 0x7FFFFFFF, aid)
                     for aid in (c.actor1, c.actor2) if aid != NOT_AN_ACTOR]
        return out, hits

    def _collision_markers(self, b: _Block, f: _Frame, xyz, known, i: int) -> bytes:
        """A red sphere (3 m, for one second) at each colliding actor that is alive with a
        finite pose."""
        row = {int(a): k for k, a in enumerate(b.ids.tolist())}
        stamp = {'sec': f.stamp[0], 'nanosec': f.stamp[1]}
        items = []
        for mid, aid in f.hits:
            k = row.get(aid)
            if k is None or (known is not None and not known[i, k]):
                continue
            items.append(mk.sphere(self.frames.map, 'carla_collisions', 3.0, COLLISION_COLOUR,
                                   id=mid, position=_xyz(xyz[k]), stamp=stamp,
                                   lifetime=COLLISION_LIFETIME))
        return serialize(MARKERS, {'markers': items})

    # -- hero odometry ------------------------------------------------------------------------
    def _odom_fill(self, b, count, stamps, q, pose, twist, has_twist, twist_known, known):
        """The hero in the map frame, its twist in its own frame (nav_msgs convention);
        ``[(lo, hi, rows or None)]``: no message where the hero's pose or twist is not
        finite."""
        h = b.hero
        values = np.zeros((count, 1, 6))
        if has_twist[h]:
            q_inv = quat_conjugate(q[:, h])
            values[:, 0, :3] = quat_rotate(q_inv, twist[:, h, :3])
            values[:, 0, 3:] = quat_rotate(q_inv, twist[:, h, 3:])
        rows = b.odom.fill_rows(count, stamp=stamps, pose=pose[:, h:h + 1], twist=values)
        sent = np.ones(count, bool)
        for mask in (known, twist_known):
            if mask is not None:
                sent &= mask[:, h]
        if sent.all():
            return [(0, count, rows)]
        return [(lo, hi, rows[lo:hi] if sent[lo] else None) for lo, hi in _runs(sent[:, None])]
