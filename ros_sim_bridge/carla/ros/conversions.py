"""World of a CARLA recording → ROS messages (the node and ``carla_log to-bag`` share these).

Units and axes: SUPPLEMENT §5.4 through :func:`ros_sim_bridge.carla.world.ue_to_rep103`
(cm → m, Y and the pitch/yaw senses flipped: Unreal's left-handed frame to REP-103 ENU/FLU).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from geometry_msgs.msg import Pose, TransformStamped
from nav_msgs.msg import Odometry
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.core.frames import quat_conjugate, quat_multiply, quat_rotate
from ros_sim_bridge.msg import (CarlaActor, CarlaActorList, CarlaCollision, CarlaTrafficLight,
                                CarlaTrafficLightList, CarlaVehicleControl,
                                CarlaVehicleControlList)
from ros_sim_bridge.ros import markers
from ros_sim_bridge.ros.geometry import point, quaternion, vector3
from ..codec.records import LIGHT_STATES, NOT_AN_ACTOR
from ..world import World, ue_to_rep103, ue_velocity_to_rep103

# default half sizes (m) when a recording has no BoundingBox for an actor, per actor type
DEFAULT_EXTENT = {0: (0.25, 0.25, 0.25), 1: (2.3, 1.0, 0.75), 2: (0.25, 0.25, 0.9),
                  3: (0.3, 0.3, 2.5), 4: (0.1, 0.5, 1.0), 5: (0.1, 0.1, 0.1), 6: (0.2, 0.2, 0.2)}
DEFAULT_ORIGIN_Z = {1: 0.75, 2: 0.0, 3: 2.5, 4: 1.0}
TYPE_COLOURS = {0: (0.6, 0.6, 0.6), 1: (0.1, 0.4, 1.0), 2: (1.0, 0.6, 0.0), 3: (0.9, 0.9, 0.1),
                4: (0.6, 0.2, 0.8), 5: (0.3, 0.9, 0.9), 6: (0.4, 0.4, 0.4)}
HERO_COLOUR = (0.1, 0.9, 0.2)
LIGHT_COLOURS = {0: (1.0, 0.0, 0.0), 1: (1.0, 0.8, 0.0), 2: (0.0, 1.0, 0.0), 3: (0.2, 0.2, 0.2)}


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


def finite_rows(*arrays) -> np.ndarray:
    """Per row (the last axis the values of one row), whether every value of ``arrays`` is
    finite: a pose or a velocity recorded with no NaN or ±Inf."""
    ok = np.isfinite(arrays[0]).all(axis=-1)
    for a in arrays[1:]:
        ok &= np.isfinite(a).all(axis=-1)
    return ok


@dataclass
class Snapshot:
    """Poses of the live actors at one time, in REP-103 (map frame), and their velocities
    (the Kinematics records of the frame, REP-103 map frame)."""
    ids: np.ndarray
    xyz: np.ndarray       # (n, 3) m
    q: np.ndarray         # (n, 4) w-x-y-z
    row: dict             # id → row
    finite: np.ndarray    # (n,) bool: the pose has no NaN (a NaN or ±Inf recorded)
    linear: np.ndarray    # (k, 3) m/s of the Kinematics records
    angular: np.ndarray   # (k, 3) rad/s
    twist_row: dict       # id → row of linear/angular, for the live actors with a finite one
    twist_unknown: frozenset  # the live actors whose Kinematics record has a NaN or ±Inf

    @classmethod
    def of(cls, world: World, t: Optional[float], interpolate: bool = True) -> 'Snapshot':
        ids, loc, rot = world.poses(t, interpolate)
        xyz, q = ue_to_rep103(loc, rot)
        q = q.reshape(-1, 4)
        row = {int(a): k for k, a in enumerate(ids.tolist())}
        kin = world.state.get('Kinematics')
        if kin is None:
            kin = np.zeros(0, world.rec.decoder.dtypes['Kinematics'])
        linear, angular = ue_velocity_to_rep103(kin['linear'], kin['angular'])
        twist_row = {i: k for k, i in enumerate(kin['id'].tolist()) if i in world.actors}
        ok = finite_rows(linear, angular).tolist()
        unknown = frozenset(i for i, k in twist_row.items() if not ok[k])
        for i in unknown:
            del twist_row[i]
        return cls(ids, xyz, q, row, finite_rows(xyz, q), linear, angular, twist_row, unknown)

    def pose(self, actor_id: int) -> Pose:
        k = self.row[actor_id]
        return Pose(position=point(self.xyz[k]), orientation=quaternion(self.q[k]))

    def has_pose(self, actor_id: int) -> bool:
        """The actor's pose in the map frame is finite (known)."""
        return bool(self.finite[self.row[actor_id]])


def header(stamp, frame_id: str) -> Header:
    return Header(stamp=stamp, frame_id=frame_id)


def transforms(world: World, snap: Snapshot, stamp, frames: Frames,
               follow: Optional[int] = None) -> list[TransformStamped]:
    """map → each actor; a child of a live parent relative to it (parents respected).  With
    ``follow`` the tree is re-rooted on that actor: it publishes followed → map instead.  An
    actor whose pose is not finite (or, relative to it, its parent's) is left out."""
    out = []
    for aid, actor in world.actors.items():
        k = snap.row[aid]
        xyz, q = snap.xyz[k], snap.q[k]
        parent = actor.parent if actor.parent in world.actors and actor.parent != aid else 0
        if not snap.finite[k] or (parent and aid != follow
                                  and not snap.finite[snap.row[parent]]):
            continue
        t = TransformStamped()
        t.header.stamp = stamp
        if aid == follow:
            q_inv = quat_conjugate(q)
            t.header.frame_id, t.child_frame_id = frames.of(actor), frames.map
            xyz, q = -quat_rotate(q_inv, xyz), q_inv
        elif parent:
            pk = snap.row[parent]
            pq_inv = quat_conjugate(snap.q[pk])
            t.header.frame_id = frames.of(world.actors[parent])
            t.child_frame_id = frames.of(actor)
            xyz = quat_rotate(pq_inv, xyz - snap.xyz[pk])
            q = quat_multiply(pq_inv, q)
        else:
            t.header.frame_id, t.child_frame_id = frames.map, frames.of(actor)
        t.transform.translation = vector3(xyz)
        t.transform.rotation = quaternion(q)
        out.append(t)
    return out


def _m(v) -> tuple:
    return tuple(c * s for c, s in zip(v, (0.01, -0.01, 0.01)))


def _rows(arr) -> dict:
    """id → row of a state array (empty dict for None)."""
    return {} if arr is None else {i: k for k, i in enumerate(arr['id'].tolist())}


def actor_list(world: World, snap: Snapshot, stamp, frames: Frames) -> CarlaActorList:
    """The live actors; one whose pose is not finite is left out (the message cannot say
    "pose unknown"), one whose velocities are not finite has a zero twist (as without a
    Kinematics record)."""
    msg = CarlaActorList(header=header(stamp, frames.map))
    lights = world.state.get('VehicleLight')
    walk = world.state.get('AnimWalker')
    light_rows, walk_rows = _rows(lights), _rows(walk)
    for aid, a in world.actors.items():
        if not snap.has_pose(aid):
            continue
        m = CarlaActor(id=aid, type=a.type, type_name=a.type_name, blueprint=a.blueprint,
                       description_uid=a.uid, role_name=a.role_name, parent_id=a.parent,
                       frame_id=frames.of(a), spawn_time=a.spawn_time, pose=snap.pose(aid))
        m.attribute_types = [int(t) for t, _, _ in a.attributes]
        m.attribute_ids = [k for _, k, _ in a.attributes]
        m.attribute_values = [v for _, _, v in a.attributes]
        if a.box is not None:
            m.has_bounding_box = True
            m.bounding_box_origin = vector3(_m(a.box[0]))
            m.bounding_box_extent = vector3([c * 0.01 for c in a.box[1]])
        k = snap.twist_row.get(aid)
        if k is not None:
            m.twist.linear, m.twist.angular = vector3(snap.linear[k]), vector3(snap.angular[k])
        k = light_rows.get(aid)
        if k is not None:
            m.light_state = int(lights['state'][k])
        k = walk_rows.get(aid)
        if k is not None:
            m.walker_speed = float(walk['speed'][k]) * 0.01   # cm/s (FWalkerControl.Speed)
        msg.actors.append(m)
    return msg


def _colour(rgb, a: float = 0.8) -> ColorRGBA:
    return ColorRGBA(r=float(rgb[0]), g=float(rgb[1]), b=float(rgb[2]), a=a)


def actor_markers(world: World, snap: Snapshot, stamp, frames: Frames, removed=(),
                  types=(1, 2, 3, 4)) -> MarkerArray:
    """Oriented boxes (recorded bounding box, else a per-type default; traffic lights in the
    colour of their state) and labels (id, blueprint, role) of the live actors of ``types``
    whose pose is finite; DELETE for ``removed`` actors."""
    hdr = header(stamp, frames.map)
    out = MarkerArray(markers=markers.deletes(
        hdr, [(ns, int(aid)) for aid in removed for ns in ('carla_actors', 'carla_labels')]))
    drawn = [a for a in world.actors.values() if a.type in types and snap.has_pose(a.id)]
    if not drawn:
        return out
    rows = np.array([snap.row[a.id] for a in drawn])
    origin = np.array([_m(a.box[0]) if a.box is not None
                       else (0.0, 0.0, DEFAULT_ORIGIN_Z.get(a.type, 0.0)) for a in drawn])
    extent = np.array([np.array(a.box[1]) * 0.01 if a.box is not None
                       else DEFAULT_EXTENT.get(a.type, (0.2, 0.2, 0.2)) for a in drawn])
    q = snap.q[rows]
    centre = snap.xyz[rows] + quat_rotate(q, origin)      # all boxes in one pass
    states = world.state.get('State')
    light_state = {} if states is None else dict(zip(states['id'].tolist(),
                                                     states['state'].tolist()))
    colours = []
    for a in drawn:
        colour = HERO_COLOUR if a.role_name == 'hero' else TYPE_COLOURS.get(a.type, (1, 1, 1))
        if a.id in light_state:  # traffic lights in the colour of their state
            colour = LIGHT_COLOURS.get(light_state[a.id], colour)
        colours.append((*colour[:3], 0.8))
    ids = [a.id for a in drawn]
    texts = [f'{a.id} {a.blueprint}' + (f' ({a.role_name})' if a.role_name else '')
             for a in drawn]
    above = centre + np.column_stack([np.zeros((len(drawn), 2)), extent[:, 2] + 0.5])
    out.markers += markers.boxes(hdr, 'carla_actors', ids, centre, 2 * extent, orientations=q,
                                 colors=colours, min_size=0.01)
    out.markers += markers.labels(hdr, 'carla_labels', ids, above, texts, height=0.6)
    return out


def traffic_lights(world: World, snap: Snapshot, stamp, frames: Frames) -> CarlaTrafficLightList:
    """The recorded lights; one whose actor's pose is not finite is left out."""
    msg = CarlaTrafficLightList(header=header(stamp, frames.map))
    state = world.state.get('State')
    if state is None:
        return msg
    for r in state:
        aid = int(r['id'])
        light = CarlaTrafficLight(id=aid, state=int(r['state']), frozen=bool(r['frozen']),
                                  elapsed_in_state=float(r['elapsed']),
                                  state_name=LIGHT_STATES.get(int(r['state']), 'unknown'))
        a = world.actors.get(aid)
        if a is not None:
            if not snap.has_pose(aid):
                continue
            if a.light_times:
                light.green_time, light.yellow_time, light.red_time = a.light_times
            light.pose = snap.pose(aid)
        msg.lights.append(light)
    return msg


def collisions(world: World, records, stamp, frames: Frames) -> list[CarlaCollision]:
    out = []
    for c in records:
        a1, a2 = world.actors.get(c.actor1), world.actors.get(c.actor2)
        out.append(CarlaCollision(header=header(stamp, frames.map), collision_id=c.id,
                                  actor1_id=c.actor1, actor2_id=c.actor2,
                                  actor1_is_hero=c.actor1_hero, actor2_is_hero=c.actor2_hero,
                                  actor1_blueprint=a1.blueprint if a1 else '',
                                  actor2_blueprint=a2.blueprint if a2 else ''))
    return out


def collision_markers(snap: Snapshot, records, stamp, frames: Frames) -> MarkerArray:
    """A red sphere at each colliding actor whose pose is finite, for one second (RViz drops
    it afterwards)."""
    out = MarkerArray()
    for c in records:
        for aid in (c.actor1, c.actor2):
            if aid == NOT_AN_ACTOR or aid not in snap.row or not snap.has_pose(aid):
                continue
            m = Marker(header=header(stamp, frames.map), ns='carla_collisions',
                       id=(c.id * 2 + (aid == c.actor2)) & 0x7FFFFFFF, type=Marker.SPHERE,
                       action=Marker.ADD, color=_colour((1.0, 0.1, 0.1), 0.7))
            m.pose.position = point(snap.xyz[snap.row[aid]])
            m.pose.orientation.w = 1.0
            m.scale = vector3((3.0, 3.0, 3.0))
            m.lifetime.sec = 1
            out.markers.append(m)
    return out


def vehicle_controls(world: World, stamp, frames: Frames) -> CarlaVehicleControlList:
    msg = CarlaVehicleControlList(header=header(stamp, frames.map))
    arr = world.state.get('AnimVehicle')
    if arr is not None:
        for r in arr:
            msg.controls.append(CarlaVehicleControl(
                id=int(r['id']), steering=float(r['steering']), throttle=float(r['throttle']),
                brake=float(r['brake']), handbrake=bool(r['handbrake']), gear=int(r['gear'])))
    return msg


def hero_odometry(world: World, snap: Snapshot, hero: int, stamp,
                  frames: Frames) -> Optional[Odometry]:
    """The hero in the map frame; twist in the hero's own frame (nav_msgs convention).  None
    when its pose or its Kinematics record is not finite."""
    actor = world.actors[hero]
    if not snap.has_pose(hero) or hero in snap.twist_unknown:
        return None
    odom = Odometry(header=header(stamp, frames.map), child_frame_id=frames.of(actor))
    odom.pose.pose = snap.pose(hero)
    k = snap.twist_row.get(hero)
    if k is not None:
        q_inv = quat_conjugate(snap.q[snap.row[hero]])
        odom.twist.twist.linear = vector3(quat_rotate(q_inv, snap.linear[k]))
        odom.twist.twist.angular = vector3(quat_rotate(q_inv, snap.angular[k]))
    return odom
