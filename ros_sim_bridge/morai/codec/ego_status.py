"""Ego Vehicle Status (``#MoraiInfo$``, simulator → client).

Spec: morai-sim-udp.txt "Ego Vehicle Status"; SUPPLEMENT §1.2–1.4 for the release layouts.
Payload starts at byte 27.  Layouts, chosen from ``data_length`` and the datagram size:

=============  ===========  =====  ===============================================================
name           data_length  total  payload
=============  ===========  =====  ===============================================================
ego94          94           123    document's table (ctrl_mode … steer)
ego94_notail   94           121    the document's "121 bytes": same, sent without the tail
ego132         132          161    ego94 + link_id char[38]
ego152         152          181    sec, nsec int32, ego94 with ang_vel xyz after vel xyz, link_id
ego200         200          229    ego152 + 12 f32 tyre values (fl, fr, rl, rr each)
ego216         216          245    26.R1 (third-party parsers only): ego152 + rear_steer after
                                   steer, then link_id, the 12 tyre values and 3 lane values
=============  ===========  =====  ===============================================================
"""
from __future__ import annotations

from dataclasses import dataclass, fields as dc_fields
from typing import Optional

from ros_sim_bridge.core.binary import pack
from .fields import decode_text, encode_text, floats, names_of, struct_of, xyz
from .framing import ID_EGO_STATUS, Layout, build_frame, layout_by_name, select_layout

MESSAGE = 'Ego Vehicle Status'
LINK_ID_LENGTH = 38

_HEAD = [('ctrl_mode', 'b'), ('gear', 'b'), ('signed_velocity', 'f'), ('map_data_id', 'i'),
         ('accel', 'f'), ('brake', 'f'), *xyz('size'),
         *floats('overhang', 'wheelbase', 'rear_overhang'), *xyz('pos'),
         *floats('roll', 'pitch', 'heading'), *xyz('velocity')]
_ACCEL_STEER = [*xyz('accel'), ('steer', 'f')]
_STAMP = [('sec', 'i'), ('nsec', 'i')]
_LINK = [('link_id', f'{LINK_ID_LENGTH}s')]
_TYRES = floats(*(f'{q}_{w}' for q in ('tire_lateral_force', 'side_slip_angle',
                                       'tire_cornering_stiffness')
                  for w in ('fl', 'fr', 'rl', 'rr')))
_LANE = floats('distance_left_lane_boundary', 'distance_right_lane_boundary',
               'cross_track_error')

_FIELDS = {
    'ego94': _HEAD + _ACCEL_STEER,
    'ego94_notail': _HEAD + _ACCEL_STEER,
    'ego132': _HEAD + _ACCEL_STEER + _LINK,
    'ego152': _STAMP + _HEAD + xyz('angular_velocity') + _ACCEL_STEER + _LINK,
    'ego200': _STAMP + _HEAD + xyz('angular_velocity') + _ACCEL_STEER + _LINK + _TYRES,
    'ego216': (_STAMP + _HEAD + xyz('angular_velocity') + _ACCEL_STEER + [('rear_steer', 'f')]
               + _LINK + _TYRES + _LANE),
}
_STRUCTS = {name: struct_of(f) for name, f in _FIELDS.items()}
_NAMES = {name: names_of(f) for name, f in _FIELDS.items()}
# offset of link_id in the payload of the layouts that carry it
_LINK_OFFSETS = {name: struct_of(f[:_NAMES[name].index('link_id')]).size
                 for name, f in _FIELDS.items() if 'link_id' in _NAMES[name]}

LAYOUTS = tuple(
    Layout(name, ID_EGO_STATUS, _STRUCTS[name].size, tail=(name != 'ego94_notail'))
    for name in ('ego94', 'ego94_notail', 'ego132', 'ego152', 'ego200', 'ego216'))
LAYOUT_NAMES = tuple(lay.name for lay in LAYOUTS)
DEFAULT_LAYOUT = 'ego200'


@dataclass
class EgoVehicleStatus:
    """Decoded Ego Vehicle Status, in the spec's units (convert to SI in the node)."""
    layout: str = DEFAULT_LAYOUT  # which release layout arrived (LAYOUT_NAMES)
    sec: Optional[int] = None     # sim time, s  (ego152 and later; else None)
    nsec: Optional[int] = None    # sim time, ns (ego152 and later; else None)
    ctrl_mode: int = 2            # 1 keyboard, 2 auto
    gear: int = 4                 # 0 manual, 1 P, 2 R, 3 N, 4 D, 5 lower gear
    signed_velocity: float = 0.0  # km/h, negative when reversing
    map_data_id: int = 0          # digital-twin map id 0..9999
    accel: float = 0.0            # accelerator pedal 0..1
    brake: float = 0.0            # brake pedal 0..1
    size_x: float = 0.0           # m, vehicle length
    size_y: float = 0.0           # m, vehicle width
    size_z: float = 0.0           # m, vehicle height
    overhang: float = 0.0         # m, front overhang
    wheelbase: float = 0.0        # m
    rear_overhang: float = 0.0    # m
    pos_x: float = 0.0            # m, map ENU (x east)
    pos_y: float = 0.0            # m, map ENU (y north)
    pos_z: float = 0.0            # m, elevation
    roll: float = 0.0             # deg
    pitch: float = 0.0            # deg
    heading: float = 0.0          # deg (yaw)
    velocity_x: float = 0.0       # km/h
    velocity_y: float = 0.0       # km/h
    velocity_z: float = 0.0       # km/h
    angular_velocity_x: Optional[float] = None  # deg/s (ego152 and later; unit per third-party
    angular_velocity_y: Optional[float] = None  # parsers, not in MORAI's document)
    angular_velocity_z: Optional[float] = None
    accel_x: float = 0.0          # m/s², acceleration
    accel_y: float = 0.0          # m/s²
    accel_z: float = 0.0          # m/s²
    steer: float = 0.0            # deg, front wheel steering angle
    rear_steer: Optional[float] = None  # deg, ego216 only
    link_id: Optional[str] = None       # HD-map link id (ego132 and later)
    tire_lateral_force_fl: Optional[float] = None   # ego200/ego216 (unit not documented)
    tire_lateral_force_fr: Optional[float] = None
    tire_lateral_force_rl: Optional[float] = None
    tire_lateral_force_rr: Optional[float] = None
    side_slip_angle_fl: Optional[float] = None      # ego200/ego216 (unit not documented)
    side_slip_angle_fr: Optional[float] = None
    side_slip_angle_rl: Optional[float] = None
    side_slip_angle_rr: Optional[float] = None
    tire_cornering_stiffness_fl: Optional[float] = None  # ego200/ego216
    tire_cornering_stiffness_fr: Optional[float] = None
    tire_cornering_stiffness_rl: Optional[float] = None
    tire_cornering_stiffness_rr: Optional[float] = None
    distance_left_lane_boundary: Optional[float] = None   # m, ego216 only
    distance_right_lane_boundary: Optional[float] = None  # m, ego216 only
    cross_track_error: Optional[float] = None             # m, ego216 only

    @property
    def stamp_ns(self) -> Optional[int]:
        """Sim time in ns, or None when the layout has none."""
        return None if self.sec is None else self.sec * 1_000_000_000 + self.nsec


def decode_ego_status(datagram) -> EgoVehicleStatus:
    """Decode any known Ego Vehicle Status layout (see the module table)."""
    layout = select_layout(datagram, LAYOUTS, MESSAGE)
    fmt = _STRUCTS[layout.name]
    values = dict(zip(_NAMES[layout.name], fmt.unpack_from(datagram, layout.payload_offset)))
    if 'link_id' in values:
        off = layout.payload_offset + _LINK_OFFSETS[layout.name]
        values['link_id'] = decode_text(datagram, off, LINK_ID_LENGTH, MESSAGE, 'link_id')
    return EgoVehicleStatus(layout=layout.name, **values)


def encode_ego_status(status: EgoVehicleStatus, layout: Optional[str] = None,
                      aux=(0, 0, 0)) -> bytes:
    """Encode ``status`` in ``layout`` (default: ``status.layout``). Optional fields the layout
    carries but ``status`` leaves None are sent as 0 / empty."""
    lay = layout_by_name(LAYOUTS, layout or status.layout, MESSAGE)
    names = _NAMES[lay.name]
    values = []
    for name in names:
        value = getattr(status, name)
        if name == 'link_id':
            value = encode_text(value or '', LINK_ID_LENGTH, MESSAGE, 'link_id')
        elif value is None:
            value = 0
        values.append(value)
    payload = pack(_STRUCTS[lay.name], values, MESSAGE, names)
    return build_frame(lay, payload, MESSAGE, aux)


FIELD_NAMES = tuple(f.name for f in dc_fields(EgoVehicleStatus))
