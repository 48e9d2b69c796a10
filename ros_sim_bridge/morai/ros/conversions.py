"""MORAI SIM records ↔ ROS messages.

Units (SUPPLEMENT §1.6: "SI units in our messages are still the rule"): the codec stays in the
wire units (km/h, deg, deg/s); this module is where they meet SI.

Simulator → client: the codec's records become the custom ``Morai*`` messages in SI / REP-103
(km/h → m/s, deg → rad, deg/s → rad/s; m, m/s² and s unchanged), field names after the spec,
plus the standard views: ego ``nav_msgs/Odometry`` and the ``map → base_link`` transform (m,
m/s, rad), objects and collisions as ``visualization_msgs/MarkerArray``.  Object arrays are
converted column-wise with numpy.

Client → simulator: ``Morai*`` command messages / service requests (SI) become the codec's
command dataclasses in wire units (m/s → km/h, rad → deg); the codec's encoders validate them
(CodecError BAD_VALUE, nothing encoded).  Unitless values (pedals 0..1, the normalised steering
command −1..1, enums, ids) pass through unchanged in both directions.

Frames (SUPPLEMENT §1.5): MORAI positions are map ENU (x east, y north, z up); heading is the
yaw counter-clockwise from map x (deg on the wire, rad in the messages).  Ego and object
velocities are taken along the vehicle's own axes (x forward, y left, z up): MORAI's examples
read ``velocity.x`` as the forward speed, and the emulator sends them so (inference; the
document says only "x-axis component").
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point, Pose, Vector3
from nav_msgs.msg import Odometry
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.codec.units import (  # noqa: F401 (names used here and by callers)
    DEG, FROM_SI, KMH_PER_MPS, MPS_PER_KMH, RAD, TO_SI, WIRE_UNITS)
from ros_sim_bridge.msg import (MoraiCollisionData, MoraiCollisionObject, MoraiCollisionVehicle,
                   MoraiEgoSetting, MoraiEgoVehicleStatus, MoraiGetTrafficLightStatus,
                   MoraiIntersectionStatus, MoraiMultiEgoSetting, MoraiObjectStatus,
                   MoraiObjectStatusList, MoraiVehicleCollision, MoraiVehicleCollisionData)
from ros_sim_bridge.core import frames
from ros_sim_bridge.ros import markers as ros_markers
from ros_sim_bridge.ros.geometry import point, quaternion, transform as make_transform

# Units: the codec gives the wire's km/h and deg (README "Units rule"); the factors are the
# codec's table (morai/codec/units.py), applied here and nowhere else.

# -- colours by ObjType (RGBA) ----------------------------------------------------------------
OBJECT_COLOURS = {
    morai.object_info.OBJ_TYPE_EGO: (0.1, 0.8, 0.2, 0.8),          # other ego vehicles: green
    morai.object_info.OBJ_TYPE_PEDESTRIAN: (1.0, 0.85, 0.0, 0.9),  # pedestrians: yellow
    morai.object_info.OBJ_TYPE_NPC_VEHICLE: (0.2, 0.45, 1.0, 0.8),  # NPC vehicles: blue
    morai.object_info.OBJ_TYPE_OBSTACLE: (0.6, 0.6, 0.6, 0.8),     # static objects: grey
}
UNKNOWN_COLOUR = (0.9, 0.2, 0.9, 0.8)                               # anything else: magenta
COLLISION_COLOUR = (1.0, 0.1, 0.1, 0.9)
VEHICLE_COLLISION_COLOURS = ((1.0, 0.5, 0.0, 0.8), (1.0, 0.1, 0.1, 0.8))
OBJECT_TYPE_NAMES = {-1: 'ego', 0: 'pedestrian', 1: 'npc', 2: 'obstacle'}

MARKER_NS_OBJECTS = 'morai_objects'
MARKER_NS_LABELS = 'morai_object_labels'
MARKER_NS_COLLISION = 'morai_collision'
MARKER_NS_VEHICLE_COLLISION = 'morai_vehicle_collision'

_EGO_OPTIONAL = {
    'has_angular_velocity': ('angular_velocity_x', 'angular_velocity_y', 'angular_velocity_z'),
    'has_rear_steer': ('rear_steer',),
    'has_tire_data': tuple(n for n in morai.ego_status.FIELD_NAMES
                           if n.startswith(('tire_', 'side_slip_'))),
    'has_lane_data': ('distance_left_lane_boundary', 'distance_right_lane_boundary',
                      'cross_track_error'),
}
_EGO_ALWAYS = tuple(n for n in morai.ego_status.FIELD_NAMES
                    if n not in ('layout', 'sec', 'nsec', 'link_id')
                    and not any(n in group for group in _EGO_OPTIONAL.values()))
_OBJECT_FIELDS = tuple(n for n in morai.OBJECT_DTYPE.names if n != 'link_id')
_COLLISION_FIELDS = morai.COLLISION_DTYPE.names
_VEHICLE_FIELDS = morai.VEHICLE_DTYPE.names
_EGO_SETTING_FIELDS = morai.MULTI_EGO_DTYPE.names


def _header(stamp, frame_id: str) -> Header:
    return Header(stamp=stamp, frame_id=frame_id)


def _stamp_fields(msg, value) -> None:
    msg.has_sim_time = value.sec is not None
    if value.sec is not None:
        msg.sec, msg.nsec = int(value.sec), int(value.nsec)


def _text(raw) -> str:
    """A fixed char[] column value (bytes, NUL-cut by numpy) as text; non-ASCII bytes escaped."""
    return raw.decode('ascii', 'backslashreplace').rstrip(' ') if isinstance(raw, bytes) else raw


def _si(name: str, value):
    """One wire value in SI (float64; unchanged for fields that need no conversion)."""
    factor = TO_SI.get(name)
    return value if factor is None else float(value) * factor


def _records_to_msgs(records: np.ndarray, names, msg_class) -> list:
    """Structured records (wire units) → messages in SI: each column converted at once in
    float64 (km/h → m/s, deg → rad), then one tolist() per column and kwargs per record."""
    columns = []
    for name in names:
        column = records[name]
        factor = TO_SI.get(name)
        if factor is not None:
            column = column.astype(np.float64) * factor
        columns.append(column.tolist())
    return [msg_class(**dict(zip(names, row))) for row in zip(*columns)]


def _records_from_msgs(msgs, names, dtype, count: int) -> np.ndarray:
    """Messages in SI → structured records in wire units (the inverse of _records_to_msgs)."""
    out = np.zeros(count, dtype)
    for name in names:
        factor = FROM_SI.get(name)
        column = [getattr(m, name) for m in msgs]
        if factor is None:
            out[name] = column
        else:
            out[name] = np.asarray(column, dtype=np.float64) * factor
    return out


# -- simulator → client: custom messages (SI) ---------------------------------------------------

def ego_status_msg(st: morai.EgoVehicleStatus, stamp, frame_id: str) -> MoraiEgoVehicleStatus:
    m = MoraiEgoVehicleStatus(header=_header(stamp, frame_id), layout=st.layout)
    _stamp_fields(m, st)
    for name in _EGO_ALWAYS:
        setattr(m, name, _si(name, getattr(st, name)))
    for flag, names in _EGO_OPTIONAL.items():
        present = getattr(st, names[0]) is not None
        setattr(m, flag, present)
        if present:
            for name in names:
                setattr(m, name, float(_si(name, getattr(st, name))))
    m.has_link_id = st.link_id is not None
    m.link_id = st.link_id or ''
    return m


def object_list_msg(info: morai.ObjectInfo, stamp, frame_id: str) -> MoraiObjectStatusList:
    """Occupied slots only (empty slots have obj_id 0), in wire order."""
    present = info.present()
    m = MoraiObjectStatusList(header=_header(stamp, frame_id), layout=info.layout)
    _stamp_fields(m, info)
    types = present['obj_type']
    m.num_of_npcs = int(np.count_nonzero(types == morai.object_info.OBJ_TYPE_NPC_VEHICLE))
    m.num_of_pedestrian = int(np.count_nonzero(types == morai.object_info.OBJ_TYPE_PEDESTRIAN))
    m.num_of_obstacle = int(np.count_nonzero(types == morai.object_info.OBJ_TYPE_OBSTACLE))
    objects = _records_to_msgs(present, _OBJECT_FIELDS, MoraiObjectStatus)
    if info.layout.startswith('obj106'):
        for msg, link in zip(objects, present['link_id'].tolist()):
            msg.link_id = _text(link)
    m.objects = objects
    return m


def multi_ego_msg(setting: morai.MultiEgoSetting, stamp, frame_id: str) -> MoraiMultiEgoSetting:
    return MoraiMultiEgoSetting(
        header=_header(stamp, frame_id), num_of_ego=int(setting.num_of_ego),
        camera_index=int(setting.camera_index),
        egos=_records_to_msgs(setting.active(), _EGO_SETTING_FIELDS, MoraiEgoSetting))


def traffic_light_msg(st: morai.TrafficLightStatus, stamp) -> MoraiGetTrafficLightStatus:
    return MoraiGetTrafficLightStatus(header=_header(stamp, ''), traffic_light_index=st.index,
                                      traffic_light_type=int(st.type),
                                      traffic_light_status=int(st.status))


def collision_msg(data: morai.CollisionData, stamp, frame_id: str) -> MoraiCollisionData:
    m = MoraiCollisionData(header=_header(stamp, frame_id), layout=data.layout)
    _stamp_fields(m, data)
    m.collision_objects = _records_to_msgs(data.present(), _COLLISION_FIELDS,
                                           MoraiCollisionObject)
    return m


def vehicle_collision_msg(data: morai.VehicleCollisionData, stamp,
                          frame_id: str) -> MoraiVehicleCollisionData:
    pairs = data.present()
    flat = _records_to_msgs(pairs.reshape(-1), _VEHICLE_FIELDS, MoraiCollisionVehicle)
    return MoraiVehicleCollisionData(
        header=_header(stamp, frame_id),
        collisions=[MoraiVehicleCollision(vehicle_a=flat[2 * k], vehicle_b=flat[2 * k + 1])
                    for k in range(len(pairs))])


def intersection_msg(st: morai.IntersectionStatus, stamp) -> MoraiIntersectionStatus:
    return MoraiIntersectionStatus(header=_header(stamp, ''), intersection_index=int(st.index),
                                   intersection_status=int(st.status),
                                   intersection_status_time=float(st.status_time))


# -- simulator → client: standard views (SI, REP-103) -------------------------------------------

def ego_pose(st: morai.EgoVehicleStatus):
    """(position m, orientation w-x-y-z) of the ego in the map frame."""
    q = frames.quat_from_euler(st.roll * DEG, st.pitch * DEG, st.heading * DEG)
    return np.array([st.pos_x, st.pos_y, st.pos_z], dtype=np.float64), \
        frames.quat_positive_w(frames.quat_normalize(q))


def ego_odometry(st: morai.EgoVehicleStatus, stamp, frame_id: str,
                 child_frame_id: str, pose=None) -> Odometry:
    """Pose in the map frame; twist in the vehicle frame (m/s, rad/s). Angular velocity is
    zero for layouts without it (ego94/ego132).  ``pose``: :func:`ego_pose` if already known."""
    position, q = pose if pose is not None else ego_pose(st)
    m = Odometry()
    m.header = _header(stamp, frame_id)
    m.child_frame_id = child_frame_id
    m.pose.pose.position = point(position)
    m.pose.pose.orientation = quaternion(q)
    m.twist.twist.linear = Vector3(x=st.velocity_x / KMH_PER_MPS, y=st.velocity_y / KMH_PER_MPS,
                                   z=st.velocity_z / KMH_PER_MPS)
    if st.angular_velocity_x is not None:
        m.twist.twist.angular = Vector3(x=st.angular_velocity_x * DEG,
                                        y=st.angular_velocity_y * DEG,
                                        z=st.angular_velocity_z * DEG)
    return m  # simulator ground truth: covariances stay zero


def ego_transform(st: morai.EgoVehicleStatus, stamp, parent: str, child: str, pose=None):
    position, q = pose if pose is not None else ego_pose(st)
    return make_transform(stamp, parent, child, position, q)


def _colour(rgba) -> ColorRGBA:
    return ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])


def _boxes(header: Header, ns: str, ids, xyz: np.ndarray, heading: np.ndarray,
           size: np.ndarray, colours) -> list:
    """CUBE markers (:func:`ros_sim_bridge.ros.markers.boxes`); ``xyz`` is the box centre
    (n, 3), ``heading`` deg, ``size`` (n, 3) with zero sizes made visible (0.1 m)."""
    size = np.where(size > 0, size, 0.1)
    return ros_markers.boxes(header, ns, np.fromiter(ids, np.int64), xyz, size,
                         yaw=np.asarray(heading, dtype=np.float64) * DEG,
                         colors=np.asarray(colours, np.float64).reshape(-1, 4))


def object_markers(info: morai.ObjectInfo, stamp, frame_id: str,
                   labels: bool = False) -> MarkerArray:
    """DELETEALL, then one CUBE per occupied slot (id = obj_id, colour by obj_type), in the map
    frame; the box stands on (pos_x, pos_y, pos_z) (pos is taken as the ground point)."""
    header = _header(stamp, frame_id)
    objs = info.present()
    markers = [ros_markers.delete_all(header, MARKER_NS_OBJECTS)]
    if labels:
        markers.append(ros_markers.delete_all(header, MARKER_NS_LABELS))
    size = np.stack([objs['size_x'], objs['size_y'], objs['size_z']], axis=-1).astype(np.float64)
    centre = np.stack([objs['pos_x'], objs['pos_y'], objs['pos_z'] + 0.5 * objs['size_z']],
                      axis=-1).astype(np.float64)
    types = objs['obj_type'].tolist()
    colours = [OBJECT_COLOURS.get(t, UNKNOWN_COLOUR) for t in types]
    ids = objs['obj_id'].tolist()
    markers += _boxes(header, MARKER_NS_OBJECTS, ids, centre, objs['heading'], size, colours)
    if labels:
        top = centre + np.stack([np.zeros(len(size)), np.zeros(len(size)), size[:, 2]], -1)
        markers += ros_markers.labels(header, MARKER_NS_LABELS, ids, top,
                                      [f'{OBJECT_TYPE_NAMES.get(t, t)} {i}'
                                       for i, t in zip(ids, types)], height=0.8)
    return MarkerArray(markers=markers)


def collision_markers(data: morai.CollisionData, stamp, frame_id: str) -> MarkerArray:
    """DELETEALL, then a red SPHERE (1 m) at each collided object's global offset (map frame),
    id = obj_id."""
    header = _header(stamp, frame_id)
    markers = [ros_markers.delete_all(header, MARKER_NS_COLLISION)]
    for rec in data.present().tolist():
        row = dict(zip(_COLLISION_FIELDS, rec))
        markers.append(Marker(
            header=header, ns=MARKER_NS_COLLISION, id=int(row['obj_id']), type=Marker.SPHERE,
            action=Marker.ADD,
            pose=Pose(position=Point(x=row['global_offset_x'], y=row['global_offset_y'],
                                     z=row['global_offset_z'])),
            scale=Vector3(x=1.0, y=1.0, z=1.0), color=_colour(COLLISION_COLOUR)))
    return MarkerArray(markers=markers)


def vehicle_collision_markers(data: morai.VehicleCollisionData, stamp,
                              frame_id: str) -> MarkerArray:
    """DELETEALL, then both vehicles of each colliding pair as boxes (ids 2k, 2k + 1)."""
    header = _header(stamp, frame_id)
    markers = [ros_markers.delete_all(header, MARKER_NS_VEHICLE_COLLISION)]
    flat = data.present().reshape(-1)
    if len(flat):
        size = np.stack([flat['size_x'], flat['size_y'], flat['size_z']], -1).astype(np.float64)
        centre = np.stack([flat['pos_x'], flat['pos_y'], flat['pos_z'] + 0.5 * flat['size_z']],
                          -1).astype(np.float64)
        colours = [VEHICLE_COLLISION_COLOURS[k % 2] for k in range(len(flat))]
        markers += _boxes(header, MARKER_NS_VEHICLE_COLLISION, range(len(flat)), centre,
                          flat['heading'], size, colours)
    return MarkerArray(markers=markers)


# -- client → simulator: ROS commands (SI) → codec dataclasses (wire units) --------------------

def ctrl_cmd(msg) -> morai.CtrlCmd:
    """velocity m/s → km/h; acceleration stays m/s²; pedals and the normalised steering
    (−1..1) are unitless."""
    return morai.CtrlCmd(ctrl_mode=msg.ctrl_mode, gear=msg.gear, cmd_type=msg.cmd_type,
                         velocity=msg.velocity * KMH_PER_MPS, acceleration=msg.acceleration,
                         accel=msg.accel, brake=msg.brake, steering=msg.steering,
                         rear_steering=msg.rear_steering if msg.has_rear_steering else None)


def lamp_control(msg) -> morai.LampControl:
    return morai.LampControl(turn_signal=msg.turn_signal, emergency_signal=msg.emergency_signal)


def set_traffic_light(req) -> morai.SetTrafficLight:
    return morai.SetTrafficLight(index=req.traffic_light_index, status=req.traffic_light_status)


def set_intersection(req) -> morai.SetIntersectionStatus:
    return morai.SetIntersectionStatus(index=req.intersection_index,
                                       status=req.intersection_status,
                                       status_time=req.intersection_status_time)


def scenario_load(req) -> morai.ScenarioLoad:
    return morai.ScenarioLoad(
        file_name=req.file_name, delete_all=req.delete_all,
        load_network_connection_data=req.load_network_connection_data,
        load_ego_vehicle_data=req.load_ego_vehicle_data,
        load_npc_vehicle_data=req.load_npc_vehicle_data,
        load_pedestrian_data=req.load_pedestrian_data, load_object_data=req.load_object_data,
        set_pause=req.set_pause)


def save_sensor_data(req) -> morai.SaveSensorData:
    return morai.SaveSensorData(is_custom_file_name=req.is_custom_file_name,
                                custom_file_name=req.custom_file_name, file_dir=req.file_dir)


def sensor_control(req) -> morai.SensorControl:
    """Position m (unchanged); roll, pitch, heading rad → deg."""
    return morai.SensorControl(sensor_index=req.sensor_index, pos_x=req.pos_x, pos_y=req.pos_y,
                               pos_z=req.pos_z, roll=req.roll * RAD, pitch=req.pitch * RAD,
                               heading=req.heading * RAD)


def multi_ego_setting(req) -> morai.MultiEgoSetting:
    """num_of_ego = len(req.egos); more than 20 egos is refused by the encoder.  Per ego:
    velocity m/s → km/h, roll/pitch/heading rad → deg."""
    egos = _records_from_msgs(req.egos, _EGO_SETTING_FIELDS, morai.MULTI_EGO_DTYPE,
                              len(req.egos))
    return morai.MultiEgoSetting(num_of_ego=len(req.egos), camera_index=req.camera_index,
                                 egos=egos)


#: ROS command type → converter, by codec message name.
COMMANDS = {
    'ctrl_cmd': ctrl_cmd,
    'lamp_control': lamp_control,
    'set_traffic_light': set_traffic_light,
    'set_intersection': set_intersection,
    'scenario_load': scenario_load,
    'save_sensor_data': save_sensor_data,
    'sensor_control': sensor_control,
    'multi_ego_setting': multi_ego_setting,
}


def describe(value) -> str:
    """A short text of a command dataclass (wire units) for service answers and logs; converted
    values carry their wire unit, e.g. ``velocity=36 km/h``."""
    parts = []
    for name in getattr(value, '__dataclass_fields__', {}):
        v = getattr(value, name)
        if isinstance(v, np.ndarray):
            parts.append(f'{name}=[{len(v)} records]')
        elif isinstance(v, float):
            unit = WIRE_UNITS.get(name)
            parts.append(f'{name}={v:g}' + (f' {unit}' if unit else ''))
        else:
            parts.append(f'{name}={v!r}')
    return ', '.join(parts)


__all__ = ['ego_status_msg', 'object_list_msg', 'multi_ego_msg', 'traffic_light_msg',
           'collision_msg', 'vehicle_collision_msg', 'intersection_msg', 'ego_pose',
           'ego_odometry', 'ego_transform', 'object_markers', 'collision_markers',
           'vehicle_collision_markers', 'COMMANDS', 'describe']
