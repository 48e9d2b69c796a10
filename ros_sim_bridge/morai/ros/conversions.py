"""MORAI SIM records ↔ ROS messages.

Units (SUPPLEMENT §1.6: "SI units in our messages are still the rule"): the codec stays in the
wire units (km/h, deg, deg/s); this module is where they meet SI.

Simulator → client: the codec's records become the custom ``Morai*`` messages in SI / REP-103
(km/h → m/s, deg → rad, deg/s → rad/s; m, m/s² and s unchanged), field names after the spec,
plus the standard views: ego ``nav_msgs/Odometry`` and the ``map → base_link`` transform (m,
m/s, rad), objects and collisions as ``visualization_msgs/MarkerArray``.  Each is built as
CDR bytes (:class:`EgoCdr`, :class:`ObjectsCdr`, :class:`EventsCdr`): a
:mod:`ros_sim_bridge.ros.cdr_template` template per message shape, the records' columns
converted with numpy into one slot per field type, the stamp a slot.

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

from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.codec.units import (  # noqa: F401 (names used here and by callers)
    DEG, FROM_SI, KMH_PER_MPS, MPS_PER_KMH, RAD, TO_SI, WIRE_UNITS)
from ros_sim_bridge.msg import (MoraiCollisionObject, MoraiCollisionVehicle, MoraiEgoSetting,
                                MoraiEgoVehicleStatus, MoraiGetTrafficLightStatus,
                                MoraiIntersectionStatus, MoraiObjectStatus)
from ros_sim_bridge.core import frames
from ros_sim_bridge.ros import markers_cdr as mk
from ros_sim_bridge.ros.cdr_template import Slot, build

# Units: the codec gives the wire's km/h and deg (docs/development.md, "Units rule"); the factors are the
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


def _text(raw) -> str:
    """A fixed char[] column value (bytes, NUL-cut by numpy) as text; non-ASCII bytes escaped."""
    return raw.decode('ascii', 'backslashreplace').rstrip(' ') if isinstance(raw, bytes) else raw


def _si(name: str, value):
    """One wire value in SI (float64; unchanged for fields that need no conversion)."""
    factor = TO_SI.get(name)
    return value if factor is None else float(value) * factor


def _records_from_msgs(msgs, names, dtype, count: int) -> np.ndarray:
    """Messages in SI → structured records in wire units (the inverse of EventsCdr's and ObjectsCdr's record columns)."""
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

# -- simulator → client: standard views (SI, REP-103) -------------------------------------------

def ego_pose(st: morai.EgoVehicleStatus):
    """(position m, orientation w-x-y-z) of the ego in the map frame."""
    q = frames.quat_from_euler(st.roll * DEG, st.pitch * DEG, st.heading * DEG)
    return np.array([st.pos_x, st.pos_y, st.pos_z], dtype=np.float64), \
        frames.quat_positive_w(frames.quat_normalize(q))


# -- simulator → client at data rate: CDR bytes from templates (issue #27) ---------------------

_GROUPS = {'float': ('f32', np.float32), 'int8': ('i8', np.int8), 'int16': ('i16', np.int16),
           'int32': ('i32', np.int32), 'boolean': ('flag', np.uint8)}


def _slotted(cls, constants: dict) -> tuple:
    """A value tree of ``cls`` whose numeric fields share one slot per type (filled in field
    order from one column), and those slots' field names."""
    value, names = dict(constants), {}
    for name, kind in cls.get_fields_and_field_types().items():
        if name not in constants and kind in _GROUPS:
            slot = _GROUPS[kind][0]
            value[name] = Slot(slot)
            names.setdefault(slot, []).append(name)
    return value, names


def _column(names: dict, slot: str, get) -> np.ndarray:
    """(n, 1) values of ``slot``'s fields, ``get(name)`` each."""
    dtype = next(d for s, d in _GROUPS.values() if s == slot)
    return np.array([get(n) for n in names[slot]], np.float64).astype(dtype).reshape(-1, 1)


def _pair(stamp) -> tuple:
    return (stamp.sec, stamp.nanosec) if hasattr(stamp, 'sec') else tuple(stamp)


class EgoCdr:
    """Ego Vehicle Status → CDR of MoraiEgoVehicleStatus (SI), nav_msgs/Odometry and the
    ``map → base`` TFMessage; templates per (layout, link_id), the stamp a slot."""

    def __init__(self, map_frame: str, base_frame: str, max_templates: int = 1024):
        self.map_frame, self._max = map_frame, max_templates
        self._status: dict = {}
        self._odom = build('nav_msgs/msg/Odometry', {
            'header': {'stamp': Slot('stamp'), 'frame_id': map_frame},
            'child_frame_id': base_frame, 'pose': {'pose': Slot('pose')},
            'twist': {'twist': Slot('twist')}})   # ground truth: covariances stay zero
        self._tf = build('tf2_msgs/msg/TFMessage', {'transforms': [{
            'header': {'stamp': Slot('stamp'), 'frame_id': map_frame},
            'child_frame_id': base_frame, 'transform': Slot('transform')}]})

    def status(self, st: morai.EgoVehicleStatus, stamp) -> bytes:
        """Every field in SI; the optional groups zero with their has_* false when the layout
        lacks them; sec/nsec zero without sim time."""
        link = st.link_id or ''
        key = (st.layout, link)
        entry = self._status.get(key)
        if entry is None:
            if len(self._status) >= self._max:
                self._status.clear()
            value, names = _slotted(MoraiEgoVehicleStatus, {
                'header': {'stamp': Slot('stamp'), 'frame_id': self.map_frame},
                'layout': st.layout, 'link_id': link})
            entry = self._status[key] = (build('ros_sim_bridge/msg/MoraiEgoVehicleStatus',
                                               value), names)
        tmpl, names = entry
        flags = {flag: getattr(st, group[0]) is not None
                 for flag, group in _EGO_OPTIONAL.items()}
        flags.update(has_sim_time=st.sec is not None, has_link_id=st.link_id is not None)

        def number(name):
            v = getattr(st, name)
            return 0.0 if v is None else _si(name, v)
        return bytes(tmpl.fill(
            stamp=_pair(stamp), flag=_column(names, 'flag', flags.__getitem__),
            f32=_column(names, 'f32', number), i8=_column(names, 'i8', number),
            i32=_column(names, 'i32', number)))

    def odometry(self, st: morai.EgoVehicleStatus, stamp, pose) -> bytes:
        """Pose in the map frame; twist in the vehicle frame (m/s, rad/s); angular velocity
        zero for layouts without it (ego94/ego132).  ``pose``: :func:`ego_pose`."""
        position, q = pose
        rates = (0.0, 0.0, 0.0) if st.angular_velocity_x is None else (
            st.angular_velocity_x * DEG, st.angular_velocity_y * DEG, st.angular_velocity_z * DEG)
        return bytes(self._odom.fill(
            stamp=_pair(stamp), pose=np.concatenate([position, q[[1, 2, 3, 0]]]),
            twist=np.array([st.velocity_x / KMH_PER_MPS, st.velocity_y / KMH_PER_MPS,
                            st.velocity_z / KMH_PER_MPS, *rates])))

    def transform(self, stamp, pose) -> bytes:
        position, q = pose
        return bytes(self._tf.fill(stamp=_pair(stamp),
                                   transform=np.concatenate([position, q[[1, 2, 3, 0]]])))


_OBJECT_FLOATS = tuple(n for n in _OBJECT_FIELDS if n not in ('obj_id', 'obj_type'))
_FLOAT_FACTORS = np.array([TO_SI.get(n, 1.0) for n in _OBJECT_FLOATS])


class ObjectsCdr:
    """Object Info → CDR of MoraiObjectStatusList (occupied slots, wire order, SI) and its
    MarkerArray (DELETEALL, then a CUBE per object, optionally a label).  Each is one template
    of the whole message, kept by its shape (layout, the objects' link ids; the object count,
    and the label texts), every object's numbers in one slot per type: a scene whose objects
    keep their links fills a cached template."""

    def __init__(self, frame_id: str, labels: bool = False, max_templates: int = 256):
        self.frame, self.labels, self._max = frame_id, labels, max_templates
        self._lists: dict = {}
        self._arrays: dict = {}

    def object_list(self, info: morai.ObjectInfo, stamp) -> bytes:
        present = info.present()
        n = len(present)
        links = (tuple(_text(v) for v in present['link_id'].tolist())
                 if info.layout.startswith('obj106') else ('',) * n)
        tmpl = _cached(self._lists, (info.layout, links), lambda: (
            'ros_sim_bridge/msg/MoraiObjectStatusList', {
                'header': {'stamp': Slot('stamp'), 'frame_id': self.frame},
                'layout': info.layout, 'has_sim_time': Slot('flag'), 'sec': Slot('i32'),
                'nsec': Slot('i32'), 'num_of_npcs': Slot('i32'),
                'num_of_pedestrian': Slot('i32'), 'num_of_obstacle': Slot('i32'),
                'objects': [_slotted(MoraiObjectStatus, {'link_id': link})[0]
                            for link in links]}), self._max)
        types = present['obj_type']
        stamped = info.sec is not None
        i32 = np.array([info.sec if stamped else 0, info.nsec if stamped else 0,
                        *(np.count_nonzero(types == t) for t in (
                            morai.object_info.OBJ_TYPE_NPC_VEHICLE,
                            morai.object_info.OBJ_TYPE_PEDESTRIAN,
                            morai.object_info.OBJ_TYPE_OBSTACLE))], np.int32)
        i16 = np.stack([present['obj_id'], types], -1).astype(np.int16)
        f32 = (np.stack([present[f] for f in _OBJECT_FLOATS], -1).astype(np.float64)
               * _FLOAT_FACTORS).astype(np.float32)
        return bytes(tmpl.fill(stamp=_pair(stamp), flag=stamped, i32=i32.reshape(-1, 1),
                               i16=i16.reshape(-1, 1), f32=f32.reshape(-1, 1)))

    def markers(self, info: morai.ObjectInfo, stamp) -> bytes:
        """The box stands on (pos_x, pos_y, pos_z) (pos is taken as the ground point); zero
        sizes made visible (0.1 m); id = obj_id, colour by obj_type; labels white, 0.8 m."""
        objs = info.present()
        n = len(objs)
        size = np.stack([objs['size_x'], objs['size_y'], objs['size_z']], -1).astype(np.float64)
        centre = np.stack([objs['pos_x'], objs['pos_y'], objs['pos_z'] + 0.5 * objs['size_z']],
                          -1).astype(np.float64)
        types, ids = objs['obj_type'].tolist(), objs['obj_id'].astype(np.int32)
        texts = tuple(f'{OBJECT_TYPE_NAMES.get(t, t)} {i}'
                      for i, t in zip(ids.tolist(), types)) if self.labels else ()
        tmpl = _cached(self._arrays, (n, texts), lambda: (
            mk.TYPE_NAME, {'markers': self._marker_tree(n, texts)}), self._max)
        poses, scales = mk.box_rows(
            n, centre, np.where(size > 0, size, 0.1),
            yaw=objs['heading'].astype(np.float64) * DEG)
        values = {'stamp': _pair(stamp), 'id': ids.reshape(-1, 1), 'pose': poses,
                  'scale': scales, 'color': np.array(
                      [OBJECT_COLOURS.get(t, UNKNOWN_COLOUR) for t in types],
                      np.float32).reshape(-1, 4)}
        if self.labels:
            top = centre.copy()
            top[:, 2] += size[:, 2]
            values.update(label_id=values['id'], label_at=top)
        return bytes(tmpl.fill(**values))

    def _marker_tree(self, n: int, texts: tuple) -> list:
        tree = [mk.delete_all(self.frame, MARKER_NS_OBJECTS)]
        if self.labels:
            tree.append(mk.delete_all(self.frame, MARKER_NS_LABELS))
        tree += [mk.box(self.frame, MARKER_NS_OBJECTS)] * n
        tree += [mk.label(self.frame, MARKER_NS_LABELS, text, id=Slot('label_id'),
                          position=Slot('label_at'), height=0.8) for text in texts]
        return tree


def _cached(cache: dict, key, value, max_templates: int = 256):
    """The template of ``key`` in ``cache``, built from ``value()`` = (type, value tree)."""
    tmpl = cache.get(key)
    if tmpl is None:
        if len(cache) >= max_templates:
            cache.clear()
        type_name, tree = value()
        tmpl = cache[key] = build(type_name, tree)
    return tmpl


def _record_columns(records: np.ndarray, names: dict) -> dict:
    """Slot values of n records (wire units → SI) for element templates from :func:`_slotted`:
    per slot its fields' values, record by record, as (n·k, 1)."""
    out = {}
    for slot, fields in names.items():
        dtype = next(d for s, d in _GROUPS.values() if s == slot)
        columns = [records[f].astype(np.float64) * TO_SI.get(f, 1.0) for f in fields]
        out[slot] = np.stack(columns, -1).astype(dtype).reshape(-1, 1)
    return out


class EventsCdr:
    """The other simulator → client messages as CDR: Multi Ego Setting, traffic light,
    intersection, Collision and NPC Vehicle Collision (with their MarkerArrays); one
    template per message shape (strings, record counts), the stamp a slot."""

    def __init__(self, frame_id: str):
        self.frame = frame_id
        self._cache: dict = {}

    def _header(self, frame=None) -> dict:
        return {'stamp': Slot('stamp'), 'frame_id': self.frame if frame is None else frame}

    def multi_ego(self, setting: morai.MultiEgoSetting, stamp) -> bytes:
        """The active egos (the first num_of_ego records) in SI."""
        egos = setting.active()
        element, names = _slotted(MoraiEgoSetting, {})
        tmpl = _cached(self._cache, ('multi_ego', len(egos)), lambda: (
            'ros_sim_bridge/msg/MoraiMultiEgoSetting', {
                'header': self._header(), 'num_of_ego': Slot('i32'),
                'camera_index': Slot('i32'), 'egos': [element] * len(egos)}))
        return bytes(tmpl.fill(stamp=_pair(stamp), i32=np.array(
            [[setting.num_of_ego], [setting.camera_index]], np.int32),
            **_record_columns(egos, names)))

    def traffic_light(self, st: morai.TrafficLightStatus, stamp) -> bytes:
        tmpl = _cached(self._cache, ('traffic_light', st.index), lambda: (
            'ros_sim_bridge/msg/MoraiGetTrafficLightStatus', _slotted(
                MoraiGetTrafficLightStatus, {'header': self._header(''),
                                             'traffic_light_index': st.index})[0]))
        return bytes(tmpl.fill(stamp=_pair(stamp),
                               i16=np.array([[st.type], [st.status]], np.int16)))

    def intersection(self, st: morai.IntersectionStatus, stamp) -> bytes:
        tmpl = _cached(self._cache, ('intersection',), lambda: (
            'ros_sim_bridge/msg/MoraiIntersectionStatus', _slotted(
                MoraiIntersectionStatus, {'header': self._header('')})[0]))
        return bytes(tmpl.fill(stamp=_pair(stamp),
                               i16=np.array([[st.index], [st.status]], np.int16),
                               f32=np.float32(st.status_time)))

    def collision(self, data: morai.CollisionData, stamp) -> bytes:
        """The occupied records, in SI; sec/nsec zero without sim time."""
        records = data.present()
        element, names = _slotted(MoraiCollisionObject, {})
        tmpl = _cached(self._cache, ('collision', data.layout, len(records)), lambda: (
            'ros_sim_bridge/msg/MoraiCollisionData', {
                'header': self._header(), 'layout': data.layout,
                'has_sim_time': Slot('flag'), 'sec': Slot('i32'), 'nsec': Slot('i32'),
                'collision_objects': [element] * len(records)}))
        stamped = data.sec is not None
        return bytes(tmpl.fill(
            stamp=_pair(stamp), flag=stamped, i32=np.array(
                [[data.sec if stamped else 0], [data.nsec if stamped else 0]], np.int32),
            **_record_columns(records, names)))

    def collision_markers(self, data: morai.CollisionData, stamp) -> bytes:
        """DELETEALL, then a red SPHERE (1 m) at each collided object's global offset (map
        frame), id = obj_id."""
        records = data.present()
        n = len(records)
        tmpl = _cached(self._cache, ('collision_markers', n), lambda: (
            mk.TYPE_NAME, {'markers': [mk.delete_all(self.frame, MARKER_NS_COLLISION)] + [
                mk.sphere(self.frame, MARKER_NS_COLLISION, 1.0, COLLISION_COLOUR,
                          position=Slot('at'))] * n}))
        at = np.stack([records[f'global_offset_{c}'] for c in 'xyz'], -1).astype(np.float64)
        return bytes(tmpl.fill(stamp=_pair(stamp), at=at,
                               id=records['obj_id'].astype(np.int32).reshape(-1, 1)))

    def vehicle_collision(self, data: morai.VehicleCollisionData, stamp) -> bytes:
        """Each colliding pair (vehicle_a hit vehicle_b), in SI."""
        flat = data.present().reshape(-1)
        element, names = _slotted(MoraiCollisionVehicle, {})
        tmpl = _cached(self._cache, ('vehicle_collision', len(flat)), lambda: (
            'ros_sim_bridge/msg/MoraiVehicleCollisionData', {
                'header': self._header(), 'collisions': [
                    {'vehicle_a': element, 'vehicle_b': element}] * (len(flat) // 2)}))
        return bytes(tmpl.fill(stamp=_pair(stamp), **_record_columns(flat, names)))

    def vehicle_collision_markers(self, data: morai.VehicleCollisionData, stamp) -> bytes:
        """DELETEALL, then both vehicles of each colliding pair as boxes (ids 2k, 2k + 1),
        standing on their position, zero sizes made visible (0.1 m)."""
        flat = data.present().reshape(-1)
        n = len(flat)
        tmpl = _cached(self._cache, ('vehicle_collision_markers', n), lambda: (
            mk.TYPE_NAME, {'markers': [
                mk.delete_all(self.frame, MARKER_NS_VEHICLE_COLLISION)] + [
                mk.box(self.frame, MARKER_NS_VEHICLE_COLLISION, id=k,
                       color=VEHICLE_COLLISION_COLOURS[k % 2]) for k in range(n)]}))
        size = np.stack([flat['size_x'], flat['size_y'], flat['size_z']], -1).astype(np.float64)
        centre = np.stack([flat['pos_x'], flat['pos_y'], flat['pos_z'] + 0.5 * flat['size_z']],
                          -1).astype(np.float64)
        poses, scales = mk.box_rows(n, centre, np.where(size > 0, size, 0.1),
                                             yaw=flat['heading'].astype(np.float64) * DEG)
        return bytes(tmpl.fill(stamp=_pair(stamp), pose=poses, scale=scales))


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


__all__ = ['EgoCdr', 'ObjectsCdr', 'EventsCdr', 'ego_pose', 'COMMANDS', 'describe']
