"""Packet ids and record layouts of CARLA recorder files (SUPPLEMENT §5.3), decode and encode.

Every packet is ``u8 id``, ``u32 size``, ``size`` bytes of data.  Most data are ``u16 count`` +
fixed-size records, decoded here as numpy structured arrays (zero copy); vectors are 3 × f32 in
UE4 builds (0.9.x) and 3 × f64 in UE5 builds (0.10.x), so those dtypes depend on
:class:`Layout`.  Variable-length records (actor additions, physics control, walker bones,
wheel animations) are sized from the packet, never from a fixed struct.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import (BAD_VALUE, OVERSIZED, TRUNCATED, UNKNOWN_LAYOUT,
                                        CodecError, records, unpack_from)
from .header import encode_string, read_string

U8 = struct.Struct('<B')
U16 = struct.Struct('<H')
U32 = struct.Struct('<I')
PACKET_HEADER = struct.Struct('<BI')      # id, size
FRAME_START = np.dtype([('id', '<u8'), ('duration', '<f8'), ('elapsed', '<f8')])
FRAME_START_STRUCT = struct.Struct('<Qdd')
NOT_AN_ACTOR = 0xFFFFFFFF

# ids 0..17 are the same in every release
FIXED_IDS = {
    0: 'FrameStart', 1: 'FrameEnd', 2: 'EventAdd', 3: 'EventDel', 4: 'EventParent',
    5: 'Collision', 6: 'Position', 7: 'State', 8: 'AnimVehicle', 9: 'AnimWalker',
    10: 'VehicleLight', 11: 'SceneLight', 12: 'Kinematics', 13: 'BoundingBox',
    14: 'PlatformTime', 15: 'PhysicsControl', 16: 'TrafficLightTime', 17: 'TriggerVolume',
}
# ids >= 18 were renumbered between releases (SUPPLEMENT §5.3); Weather 24 is one port's id
ID_TABLES = {
    '0.9.14': {18: 'WalkerBones', 19: 'VisualTime'},
    '0.9.15': {18: 'FrameCounter', 19: 'WalkerBones', 20: 'VisualTime',
               21: 'AnimVehicleWheels', 22: 'AnimBiker'},
    '0.9.16': {18: 'FrameCounter', 19: 'WalkerBones', 20: 'VisualTime', 21: 'VehicleDoor',
               22: 'AnimVehicleWheels', 23: 'AnimBiker', 24: 'Weather'},
}
LATEST_TABLE = '0.9.16'
USER_IDS = 100  # ids from here on are for users' own packets

ACTOR_TYPES = {0: 'other', 1: 'vehicle', 2: 'walker', 3: 'traffic_light', 4: 'traffic_sign',
               5: 'sensor', 6: 'invalid'}
ATTRIBUTE_TYPES = {0: 'bool', 1: 'int', 2: 'float', 3: 'string', 4: 'rgb_color'}
LIGHT_STATES = {0: 'red', 1: 'yellow', 2: 'green', 3: 'off', 4: 'unknown'}
VEHICLE_LIGHT_BITS = (('Position', 1), ('LowBeam', 2), ('HighBeam', 4), ('Brake', 8),
                      ('RightBlinker', 16), ('LeftBlinker', 32), ('Reverse', 64),
                      ('Interior', 256), ('Fog', 128), ('Special1', 512), ('Special2', 1024))
DOORS = {0: 'FL', 1: 'FR', 2: 'RL', 3: 'RR', 4: 'Hood', 5: 'Trunk', 6: 'All'}
WEATHER_FIELDS = ('cloudiness', 'precipitation', 'precipitation_deposits', 'wind_intensity',
                  'sun_azimuth_angle', 'sun_altitude_angle', 'fog_density', 'fog_distance',
                  'fog_falloff', 'wetness', 'scattering_intensity', 'mie_scattering_scale',
                  'rayleigh_scattering_scale', 'dust_storm')


@dataclass(frozen=True)
class Layout:
    """What differs between releases: vector width (``'<f4'`` UE4, ``'<f8'`` UE5) and the
    numbering of ids >= 18 (a key of :data:`ID_TABLES`)."""
    vector: str = '<f4'
    ids: str = LATEST_TABLE

    @property
    def name(self) -> str:
        return f"{'UE4' if self.vector == '<f4' else 'UE5'} vectors, ids>=18 as {self.ids}"

    def packet_name(self, pid: int) -> Optional[str]:
        return FIXED_IDS.get(pid) or ID_TABLES[self.ids].get(pid)

    def packet_id(self, name: str) -> int:
        for pid, n in FIXED_IDS.items():
            if n == name:
                return pid
        for pid, n in ID_TABLES[self.ids].items():
            if n == name:
                return pid
        raise KeyError(f'{name} has no id in the {self.ids} table')


UE4 = Layout('<f4', LATEST_TABLE)
UE5 = Layout('<f8', LATEST_TABLE)


def _vec(t: str) -> tuple:
    return (t, (3,))


def array_dtypes(vector: str) -> dict[str, np.dtype]:
    """The fixed-size records (after a ``u16`` count) for one vector width, packed."""
    v = _vec(vector)
    box = np.dtype([('id', '<u4'), ('origin',) + v, ('extent',) + v])
    return {
        'EventDel': np.dtype([('id', '<u4')]),
        'EventParent': np.dtype([('id', '<u4'), ('parent', '<u4')]),
        'Collision': np.dtype([('id', '<u4'), ('actor1', '<u4'), ('actor2', '<u4'),
                               ('actor1_hero', 'u1'), ('actor2_hero', 'u1')]),
        'Position': np.dtype([('id', '<u4'), ('location',) + v, ('rotation',) + v]),
        'State': np.dtype([('id', '<u4'), ('frozen', 'u1'), ('elapsed', '<f4'),
                           ('state', 'u1')]),
        'AnimVehicle': np.dtype([('id', '<u4'), ('steering', '<f4'), ('throttle', '<f4'),
                                 ('brake', '<f4'), ('handbrake', 'u1'), ('gear', '<i4')]),
        'AnimWalker': np.dtype([('id', '<u4'), ('speed', '<f4')]),
        'VehicleLight': np.dtype([('id', '<u4'), ('state', '<u4')]),
        'SceneLight': np.dtype([('id', '<i4'), ('intensity', '<f4'), ('color', '<f4', (4,)),
                                ('on', 'u1'), ('group', 'u1')]),
        'Kinematics': np.dtype([('id', '<u4'), ('linear',) + v, ('angular',) + v]),
        'BoundingBox': box,
        'TrafficLightTime': np.dtype([('id', '<u4'), ('green', '<f4'), ('yellow', '<f4'),
                                      ('red', '<f4')]),
        'TriggerVolume': box,
        'VehicleDoor': np.dtype([('id', '<u4'), ('door', 'u1'), ('open', 'u1')]),
        'AnimBiker': np.dtype([('id', '<u4'), ('forward_speed', '<f4'),
                               ('engine_rotation', '<f4')]),
        'Weather': np.dtype([(name, '<f4') for name in WEATHER_FIELDS]),
    }


DTYPES = {'<f4': array_dtypes('<f4'), '<f8': array_dtypes('<f8')}
SCALARS = {'PlatformTime': struct.Struct('<d'), 'VisualTime': struct.Struct('<d'),
           'FrameCounter': struct.Struct('<Q')}
# packets whose record size tells the vector width (28 B UE4, 52 B UE5)
VECTOR_PROBES = ('Position', 'Kinematics', 'BoundingBox', 'TriggerVolume')


# -- decoded variable-length records ---------------------------------------------------------
@dataclass
class ActorAdd:
    """One EventAdd record: an actor created this frame (location cm, rotation deg, Unreal)."""
    id: int
    type: int
    location: tuple
    rotation: tuple
    uid: int
    blueprint: str
    attributes: list = field(default_factory=list)  # (type, id, value) tuples

    @property
    def type_name(self) -> str:
        return ACTOR_TYPES.get(self.type, f'type{self.type}')

    def attribute(self, key: str, default: str = '') -> str:
        for _, k, v in self.attributes:
            if k == key:
                return v
        return default


@dataclass
class PhysicsControl:
    """One vehicle's physics control: UE4 layout (wheels of 36 B in 0.9.10, 48 B later) or
    UE5 layout (``reverse_gears`` set, wheels of 208 B; see :data:`PHYSICS_HEAD_UE5`)."""
    id: int
    values: dict
    torque_curve: np.ndarray
    forward_gears: np.ndarray
    steering_curve: np.ndarray
    wheels: np.ndarray
    raw: bytes = b''
    reverse_gears: Optional[np.ndarray] = None   # UE5 only

    @property
    def layout(self) -> str:
        return 'ue4' if self.reverse_gears is None else 'ue5'


@dataclass
class WalkerBones:
    id: int
    bones: list  # (name, location(3), rotation(3))


@dataclass
class WheelAnimation:
    id: int
    wheels: np.ndarray  # location u1, steering f4, rotation f4


PHYSICS_HEAD = struct.Struct('<I5f?4f3f')   # 53 B
PHYSICS_HEAD_NAMES = ('max_rpm', 'moi', 'damping_rate_full_throttle',
                      'damping_rate_zero_throttle_clutch_engaged',
                      'damping_rate_zero_throttle_clutch_disengaged', 'use_gear_autobox',
                      'clutch_strength', 'final_ratio', 'mass', 'drag_coefficient')
CURVE = np.dtype([('x', '<f4'), ('y', '<f4')])
GEAR = np.dtype([('ratio', '<f4'), ('down_ratio', '<f4'), ('up_ratio', '<f4')])
WHEEL_FIELDS_0910 = ['tire_friction', 'damping_rate', 'max_steer_angle', 'radius',
                     'max_brake_torque', 'max_handbrake_torque']
WHEEL_FIELDS_0913 = WHEEL_FIELDS_0910 + ['lat_stiff_max_load', 'lat_stiff_value',
                                         'long_stiff_value']
WHEELS = {36: np.dtype([(n, '<f4') for n in WHEEL_FIELDS_0910] + [('position', '<f4', (3,))]),
          48: np.dtype([(n, '<f4') for n in WHEEL_FIELDS_0913] + [('position', '<f4', (3,))])}
WHEEL_ANIM = np.dtype([('location', 'u1'), ('steering', '<f4'), ('rotation', '<f4')])

# UE5 (0.10.x, ue5-dev) PhysicsControl record: CarlaRecorderPhysicsControl::Write writes the
# u32 actor id, then each scalar of carla::rpc::VehiclePhysicsControl with WriteValue
# (sizeof(T) bytes, packed one after the other: f32, u8 differential type, bool), vectors as
# carla::geom::Vector3D (3 × f32 even in UE5), then five WriteStdVector lists (u32 count +
# count × sizeof(T)): torque curve (Vector2D, 2 × f32), forward and reverse gear ratios (f32),
# steering curve (Vector2D), wheels (carla::rpc::WheelPhysicsControl written as its in-memory
# image, see WHEEL_UE5).
PHYSICS_HEAD_UE5 = struct.Struct('<I6fBf?7f3f4f3f2f?')   # 111 B
PHYSICS_HEAD_UE5_NAMES = (
    'max_torque', 'max_rpm', 'idle_rpm', 'brake_effect', 'rev_up_moi', 'rev_down_rate',
    'differential_type', 'front_rear_split', 'use_automatic_gears', 'gear_change_time',
    'final_ratio', 'change_up_rpm', 'change_down_rpm', 'transmission_efficiency', 'mass',
    'drag_coefficient', 'center_of_mass', 'chassis_width', 'chassis_height',
    'downforce_coefficient', 'drag_area', 'inertia_tensor_scale', 'sleep_threshold',
    'sleep_slope_limit', 'use_sweep_wheel_collision')
RATIO = np.dtype([('ratio', '<f4')])
# carla::rpc::WheelPhysicsControl is not packed and holds a std::vector (lateral_slip_graph),
# so WriteValue writes its natural-alignment image: 208 B on the 64-bit ABIs CARLA builds for
# (Linux clang, Windows MSVC: 24-B std::vector, 8-B alignment).  Bytes 72..95 are the vector's
# pointers (the slip graph itself is not in the file) and the padding bytes are undefined:
# neither is decoded.
_WHEEL_UE5_FIELDS = (
    ('axle_type', 'u1', 0), ('offset', ('<f4', (3,)), 4), ('wheel_radius', '<f4', 16),
    ('wheel_width', '<f4', 20), ('wheel_mass', '<f4', 24), ('cornering_stiffness', '<f4', 28),
    ('friction_force_multiplier', '<f4', 32), ('side_slip_modifier', '<f4', 36),
    ('slip_threshold', '<f4', 40), ('skid_threshold', '<f4', 44),
    ('max_steer_angle', '<f4', 48), ('affected_by_steering', 'u1', 52),
    ('affected_by_brake', 'u1', 53), ('affected_by_handbrake', 'u1', 54),
    ('affected_by_engine', 'u1', 55), ('abs_enabled', 'u1', 56),
    ('traction_control_enabled', 'u1', 57), ('max_wheelspin_rotation', '<f4', 60),
    ('external_torque_combine_method', 'u1', 64), ('suspension_axis', ('<f4', (3,)), 96),
    ('suspension_force_offset', ('<f4', (3,)), 108), ('suspension_max_raise', '<f4', 120),
    ('suspension_max_drop', '<f4', 124), ('suspension_damping_ratio', '<f4', 128),
    ('wheel_load_ratio', '<f4', 132), ('spring_rate', '<f4', 136),
    ('spring_preload', '<f4', 140), ('suspension_smoothing', '<i4', 144),
    ('rollbar_scaling', '<f4', 148), ('sweep_shape', 'u1', 152), ('sweep_type', 'u1', 153),
    ('max_brake_torque', '<f4', 156), ('max_hand_brake_torque', '<f4', 160),
    ('wheel_index', '<i4', 164), ('location', ('<f4', (3,)), 168),
    ('old_location', ('<f4', (3,)), 180), ('velocity', ('<f4', (3,)), 192))
WHEEL_UE5 = np.dtype({'names': [f[0] for f in _WHEEL_UE5_FIELDS],
                      'formats': [f[1] for f in _WHEEL_UE5_FIELDS],
                      'offsets': [f[2] for f in _WHEEL_UE5_FIELDS], 'itemsize': 208})


MAX_LIST = 64   # items in one list of a record (curve points, gears, wheels): more is absurd


def filled(data, off: int, message: str, what: str, kind: str = OVERSIZED) -> None:
    """CodecError unless the records read up to ``off`` fill the packet ``data`` exactly (the
    reads before were bounds-checked, so only bytes left over can remain)."""
    if off != len(data):
        raise CodecError(message, f'{len(data) - off} B left after {what}', offset=off,
                         kind=kind)


def list_count(data, off: int, message: str, field: str) -> int:
    """The ``u32`` item count of a list inside a record, at most :data:`MAX_LIST`."""
    (k,) = unpack_from(U32, data, off, message, field + '.count')
    if k > MAX_LIST:
        raise CodecError(message, f'{k} {field.rsplit(".", 1)[-1]}: absurd', field=field,
                         offset=off, kind=BAD_VALUE)
    return k


class PacketDecoder:
    """Decodes the data of one packet; ``where(offset)`` names frame, packet and file offset.

    ``data`` is the packet's data only; ``base`` its offset in the file (for error messages).
    """

    def __init__(self, layout: Layout):
        self.layout = layout
        self.dtypes = DTYPES[layout.vector]
        self.vec = struct.Struct('<3' + ('f' if layout.vector == '<f4' else 'd'))

    def decode(self, name: str, data, message: str, base: int = 0,
               bad: Optional[list] = None):
        """Packet ``name`` decoded from ``data``, CodecError if it cannot be.  With a ``bad``
        list a string that is not UTF-8 (its length intact) costs only that string: read with
        U+FFFD, its CodecError appended to ``bad`` (:func:`~.header.read_string`)."""
        found = None if bad is None else []
        value = self._decode(name, data, message, base, found)
        if found:
            bad.extend(_in_file(err, base) for err in found)
        return value

    def _decode(self, name: str, data, message: str, base: int, bad: Optional[list]):
        try:
            if name in self.dtypes:
                return self.array(name, data, message)
            if name in SCALARS:
                s = SCALARS[name]
                if len(data) != s.size:
                    raise CodecError(message, f'{len(data)} B, {name} has {s.size}',
                                     offset=0, kind=UNKNOWN_LAYOUT)
                return s.unpack_from(data, 0)[0]
            if name == 'FrameStart':
                if len(data) != FRAME_START.itemsize:
                    raise CodecError(message, f'{len(data)} B, FrameStart has 24', offset=0,
                                     kind=UNKNOWN_LAYOUT)
                return np.frombuffer(data, FRAME_START, 1)[0]
            if name == 'FrameEnd':
                return None
            if name in STRING_RECORDS:
                return getattr(self, name)(data, message, bad)
            return getattr(self, name)(data, message)
        except CodecError as err:
            if base:  # re-raise with the offset in the file
                raise _in_file(err, base) from None
            raise

    # -- fixed-size arrays -----------------------------------------------------------------
    def count(self, data, message: str) -> int:
        (n,) = unpack_from(U16, data, 0, message, 'count')
        return n

    def array(self, name: str, data, message: str) -> np.ndarray:
        dtype = self.dtypes[name]
        n = self.count(data, message)
        need = 2 + n * dtype.itemsize
        if need != len(data):
            if n and (len(data) - 2) % n == 0:
                raise CodecError(message, f'{n} records of {(len(data) - 2) // n} B: no '
                                 f'layout has {name} records of that size (this one: '
                                 f'{dtype.itemsize})', field='records', offset=2,
                                 kind=UNKNOWN_LAYOUT)
            raise CodecError(message, f'count {n} × {dtype.itemsize} B + 2 = {need} B, packet '
                             f'has {len(data)}', field='count', offset=0,
                             kind=TRUNCATED if need > len(data) else OVERSIZED)
        return records(dtype, data, 2, n, message, 'records')

    # -- variable-length records -----------------------------------------------------------
    def _vector(self, data, offset, message, fieldname):
        return unpack_from(self.vec, data, offset, message, fieldname), offset + self.vec.size

    def EventAdd(self, data, message: str, bad: Optional[list] = None) -> list[ActorAdd]:
        n = self.count(data, message)
        if n * 30 > len(data):  # every record is at least 30 B with f4 vectors
            raise CodecError(message, f'count {n} cannot fit in {len(data)} B', field='count',
                             offset=0, kind=BAD_VALUE)
        off, out = 2, []
        for i in range(n):
            aid, atype = unpack_from(_ID_TYPE, data, off, message, f'[{i}].id')
            loc, off = self._vector(data, off + 5, message, f'[{i}].location')
            rot, off = self._vector(data, off, message, f'[{i}].rotation')
            (uid,) = unpack_from(U32, data, off, message, f'[{i}].uid')
            bp, off = read_string(data, off + 4, message, f'[{i}].blueprint', bad)
            (na,) = unpack_from(U16, data, off, message, f'[{i}].attributes')
            off += 2
            attrs = []
            for _ in range(na):
                (t,) = unpack_from(U8, data, off, message, f'[{i}].attribute.type')
                key, off = read_string(data, off + 1, message, f'[{i}].attribute.id', bad)
                val, off = read_string(data, off, message, f'[{i}].attribute.value', bad)
                attrs.append((t, key, val))
            out.append(ActorAdd(aid, atype, loc, rot, uid, bp, attrs))
        filled(data, off, message, f'{n} records')
        return out

    def PhysicsControl(self, data, message: str) -> list:
        """UE4 layout; the wheel record size (36 or 48 B) is the one that fills the packet."""
        n = self.count(data, message)
        if self.layout.vector != '<f4':
            return self._physics_ue5(data, message, n)
        errors = []
        for wheel_size in (48, 36):
            try:
                return self._physics(data, message, n, wheel_size)
            except CodecError as err:
                errors.append(err)
        raise errors[0]

    def _physics(self, data, message, n, wheel_size) -> list:
        off, out = 2, []
        for i in range(n):
            start = off
            head = unpack_from(PHYSICS_HEAD, data, off, message, f'[{i}]')
            off += PHYSICS_HEAD.size
            lists = []
            for name, dtype in (('torque_curve', CURVE), ('forward_gears', GEAR),
                                ('steering_curve', CURVE), ('wheels', WHEELS[wheel_size])):
                k = list_count(data, off, message, f'[{i}].{name}')
                lists.append(records(dtype, data, off + 4, k, message, f'[{i}].{name}'))
                off += 4 + k * dtype.itemsize
            values = dict(zip(PHYSICS_HEAD_NAMES, head[1:11]))
            values['center_of_mass'] = head[11:14]
            out.append(PhysicsControl(head[0], values, *lists, raw=bytes(data[start:off])))
        filled(data, off, message, f'{n} physics records with {wheel_size}-B wheels',
               UNKNOWN_LAYOUT)
        return out

    def _physics_ue5(self, data, message, n) -> list:
        """UE5 layout (:data:`PHYSICS_HEAD_UE5`, lists sized by their counts, wheels of
        :data:`WHEEL_UE5`); the records must fill the packet exactly."""
        off, out = 2, []
        for i in range(n):
            start = off
            head = unpack_from(PHYSICS_HEAD_UE5, data, off, message, f'[{i}]')
            off += PHYSICS_HEAD_UE5.size
            lists = []
            for name, dtype in (('torque_curve', CURVE), ('forward_gears', RATIO),
                                ('reverse_gears', RATIO), ('steering_curve', CURVE),
                                ('wheels', WHEEL_UE5)):
                k = list_count(data, off, message, f'[{i}].{name}')
                lists.append(records(dtype, data, off + 4, k, message, f'[{i}].{name}'))
                off += 4 + k * dtype.itemsize
            flat = list(head[1:])
            values = {}
            for key in PHYSICS_HEAD_UE5_NAMES:   # the two Vector3D take three values each
                if key in ('center_of_mass', 'inertia_tensor_scale'):
                    values[key], flat = tuple(flat[:3]), flat[3:]
                else:
                    values[key], flat = flat[0], flat[1:]
            torque, fwd, rev, steer, wheels = lists
            out.append(PhysicsControl(head[0], values, torque, fwd, steer, wheels,
                                      raw=bytes(data[start:off]), reverse_gears=rev))
        filled(data, off, message, f'{n} UE5 physics records', UNKNOWN_LAYOUT)
        return out

    def WalkerBones(self, data, message: str, bad: Optional[list] = None) -> list:
        n = self.count(data, message)
        off, out = 2, []
        for i in range(n):
            aid, nb = unpack_from(_ID_U16, data, off, message, f'[{i}].id')
            off += 6
            bones = []
            for _ in range(nb):
                name, off = read_string(data, off, message, f'[{i}].bone.name', bad)
                loc, off = self._vector(data, off, message, f'[{i}].bone.location')
                rot, off = self._vector(data, off, message, f'[{i}].bone.rotation')
                bones.append((name, loc, rot))
            out.append(WalkerBones(aid, bones))
        filled(data, off, message, f'{n} walkers')
        return out

    def AnimVehicleWheels(self, data, message: str) -> list:
        n = self.count(data, message)
        off, out = 2, []
        for i in range(n):
            (aid,) = unpack_from(U32, data, off, message, f'[{i}].id')
            nw = list_count(data, off + 4, message, f'[{i}].wheels')
            out.append(WheelAnimation(aid, records(WHEEL_ANIM, data, off + 8, nw, message,
                                                   f'[{i}].wheels')))
            off += 8 + nw * WHEEL_ANIM.itemsize
        filled(data, off, message, f'{n} vehicles')
        return out


# packets with strings (read_string): a string that is not UTF-8 costs only itself
STRING_RECORDS = frozenset(('EventAdd', 'WalkerBones'))


def _in_file(err: CodecError, base: int) -> CodecError:
    """``err`` with its offset counted from the start of the file (``base``: the packet's)."""
    if not base or err.offset is None:
        return err
    return CodecError(err.message, err.detail, field=err.field, offset=base + err.offset,
                      kind=err.kind)


_ID_TYPE = struct.Struct('<IB')
_ID_U16 = struct.Struct('<IH')
_ID_U32 = struct.Struct('<II')


def fits(name: str, data, layout: Layout) -> bool:
    """Whether ``data`` decodes exactly as packet ``name`` in ``layout`` (layout detection)."""
    try:
        PacketDecoder(layout).decode(name, data, name, bad=[])   # strings: not the layout
        return True
    except CodecError:
        return False


# -- encoding (the generator and tests use it) -----------------------------------------------
class PacketEncoder:
    """Packet bytes (id + size + data) for one layout; arrays from numpy records or tuples."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.dtypes = DTYPES[layout.vector]
        self.vec = struct.Struct('<3' + ('f' if layout.vector == '<f4' else 'd'))

    def packet(self, name: str, data: bytes) -> bytes:
        return PACKET_HEADER.pack(self.layout.packet_id(name), len(data)) + data

    def frame_start(self, frame_id: int, duration: float, elapsed: float) -> bytes:
        return self.packet('FrameStart', FRAME_START_STRUCT.pack(frame_id, duration, elapsed))

    def frame_end(self) -> bytes:
        return self.packet('FrameEnd', b'')

    def array(self, name: str, rows) -> bytes:
        arr = np.asarray(rows, dtype=self.dtypes[name]) if not isinstance(rows, np.ndarray) \
            else rows.astype(self.dtypes[name], copy=False)
        return self.packet(name, U16.pack(len(arr)) + arr.tobytes())

    def scalar(self, name: str, value) -> bytes:
        return self.packet(name, SCALARS[name].pack(value))

    def event_add(self, adds: list) -> bytes:
        parts = [U16.pack(len(adds))]
        for a in adds:
            parts.append(_ID_TYPE.pack(a.id, a.type) + self.vec.pack(*a.location)
                         + self.vec.pack(*a.rotation) + U32.pack(a.uid)
                         + encode_string(a.blueprint) + U16.pack(len(a.attributes)))
            for t, k, v in a.attributes:
                parts.append(U8.pack(t) + encode_string(k) + encode_string(v))
        return self.packet('EventAdd', b''.join(parts))

    def physics_control(self, controls: list) -> bytes:
        parts = [U16.pack(len(controls))]
        for c in controls:
            v = c.values
            if c.reverse_gears is not None:   # UE5 layout
                head = []
                for key in PHYSICS_HEAD_UE5_NAMES:
                    head.extend(v[key] if key in ('center_of_mass', 'inertia_tensor_scale')
                                else (v[key],))
                parts.append(PHYSICS_HEAD_UE5.pack(c.id, *head))
                for arr, dtype in ((c.torque_curve, CURVE), (c.forward_gears, RATIO),
                                   (c.reverse_gears, RATIO), (c.steering_curve, CURVE),
                                   (c.wheels, WHEEL_UE5)):
                    parts.append(U32.pack(len(arr))
                                 + np.asarray(arr, dtype).tobytes())
                continue
            parts.append(PHYSICS_HEAD.pack(c.id, *(v[k] for k in PHYSICS_HEAD_NAMES),
                                           *v['center_of_mass']))
            for arr in (c.torque_curve, c.forward_gears, c.steering_curve, c.wheels):
                parts.append(U32.pack(len(arr)) + np.ascontiguousarray(arr).tobytes())
        return self.packet('PhysicsControl', b''.join(parts))

    def walker_bones(self, walkers: list) -> bytes:
        parts = [U16.pack(len(walkers))]
        for w in walkers:
            parts.append(_ID_U16.pack(w.id, len(w.bones)))
            for name, loc, rot in w.bones:
                parts.append(encode_string(name) + self.vec.pack(*loc) + self.vec.pack(*rot))
        return self.packet('WalkerBones', b''.join(parts))

    def wheels(self, vehicles: list) -> bytes:
        parts = [U16.pack(len(vehicles))]
        for v in vehicles:
            arr = np.asarray(v.wheels, WHEEL_ANIM)
            parts.append(_ID_U32.pack(v.id, len(arr)) + arr.tobytes())
        return self.packet('AnimVehicleWheels', b''.join(parts))


def vehicle_lights(state: int) -> str:
    """CARLA's wording of a VehicleLight state (names of the set bits, or ``None``)."""
    names = [n for n, bit in VEHICLE_LIGHT_BITS if state & bit]
    return ' '.join(names) if names else 'None'

