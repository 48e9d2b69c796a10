"""Message table and dispatch: configured type name + datagram → decoded value.

SUPPLEMENT §1.4: dispatch on the identifier, then on (data_length, total).  The table also
records each message's direction and MORAI example port (SUPPLEMENT §1.5), so a node can stay a
table.  ROS names (the message and topic names of MORAI's ROS bridge, SUPPLEMENT §1.6) live in
``morai/ros/names.py``, not here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Tuple

from ros_sim_bridge.core.binary import BAD_MAGIC, CodecError
from . import (collision, commands, ego_status, intersection, multi_ego, object_info,
               traffic_light, vehicle_collision)
from .framing import UnknownLayout, peek_identifier, read_data_length

FROM_SIM = 'from_sim'
TO_SIM = 'to_sim'


@dataclass(frozen=True)
class MessageType:
    name: str                     # our configuration name, e.g. 'ego_status'
    title: str                    # the document's name, e.g. 'Ego Vehicle Status'
    identifier: bytes
    data_lengths: Tuple[int, ...]  # every known data_length
    direction: str                # FROM_SIM or TO_SIM
    port: int                     # MORAI example default port
    decode: Callable[[Any], Any]
    encode: Callable[..., bytes]


def _lengths(layouts) -> Tuple[int, ...]:
    return tuple(sorted({lay.data_length for lay in layouts}))


def _enc_objects(value, **kw) -> bytes:
    if isinstance(value, object_info.ObjectInfo):
        return object_info.encode_object_info(value.objects, kw.pop('layout', value.layout),
                                              value.sec or 0, value.nsec or 0, **kw)
    return object_info.encode_object_info(value, **kw)


def _enc_collision(value, **kw) -> bytes:
    if isinstance(value, collision.CollisionData):
        return collision.encode_collision(value.records, kw.pop('layout', value.layout),
                                          value.sec or 0, value.nsec or 0, **kw)
    return collision.encode_collision(value, **kw)


def _enc_vehicle_collision(value, **kw) -> bytes:
    if isinstance(value, vehicle_collision.VehicleCollisionData):
        value = value.pairs
    return vehicle_collision.encode_vehicle_collision(value, **kw)


_TABLE = [
    MessageType('ego_status', ego_status.MESSAGE, ego_status.LAYOUTS[0].identifier,
                _lengths(ego_status.LAYOUTS), FROM_SIM, 909,
                ego_status.decode_ego_status, ego_status.encode_ego_status),
    MessageType('object_info', object_info.MESSAGE, object_info.LAYOUTS[0].identifier,
                _lengths(object_info.LAYOUTS), FROM_SIM, 7505,
                object_info.decode_object_info, _enc_objects),
    MessageType('traffic_light_status', traffic_light.MESSAGE,
                traffic_light.LAYOUTS[0].identifier, _lengths(traffic_light.LAYOUTS), FROM_SIM,
                7502, traffic_light.decode_traffic_light_status,
                traffic_light.encode_traffic_light_status),
    MessageType('collision', collision.MESSAGE, collision.LAYOUTS[0].identifier,
                _lengths(collision.LAYOUTS), FROM_SIM, 9092,
                collision.decode_collision, _enc_collision),
    MessageType('vehicle_collision', vehicle_collision.MESSAGE,
                vehicle_collision.LAYOUTS[0].identifier, _lengths(vehicle_collision.LAYOUTS),
                FROM_SIM, 9108,
                vehicle_collision.decode_vehicle_collision, _enc_vehicle_collision),
    MessageType('intersection_status', intersection.MESSAGE, intersection.LAYOUTS[0].identifier,
                _lengths(intersection.LAYOUTS), FROM_SIM, 9102,
                intersection.decode_intersection_status, intersection.encode_intersection_status),
    MessageType('multi_ego_setting', multi_ego.MESSAGE, multi_ego.LAYOUTS[0].identifier,
                _lengths(multi_ego.LAYOUTS), TO_SIM, 7604,
                multi_ego.decode_multi_ego, multi_ego.encode_multi_ego),
    MessageType('ctrl_cmd', commands.CTRL_CMD, commands.CTRL_LAYOUTS[0].identifier,
                _lengths(commands.CTRL_LAYOUTS), TO_SIM, 9093,
                commands.decode_ctrl_cmd, commands.encode_ctrl_cmd),
    MessageType('set_traffic_light', commands.SET_TRAFFIC_LIGHT,
                commands.SET_TL_LAYOUTS[0].identifier, _lengths(commands.SET_TL_LAYOUTS),
                TO_SIM, 7607,
                commands.decode_set_traffic_light, commands.encode_set_traffic_light),
    MessageType('set_intersection', commands.SET_INTERSECTION,
                commands.SET_INT_LAYOUTS[0].identifier, _lengths(commands.SET_INT_LAYOUTS),
                TO_SIM, 9132,
                commands.decode_set_intersection, commands.encode_set_intersection),
    MessageType('scenario_load', commands.SCENARIO_LOAD, commands.SCENARIO_LAYOUTS[0].identifier,
                _lengths(commands.SCENARIO_LAYOUTS), TO_SIM, 9099,
                commands.decode_scenario_load, commands.encode_scenario_load),
    MessageType('save_sensor_data', commands.SAVE_SENSOR_DATA,
                commands.SAVE_LAYOUTS[0].identifier, _lengths(commands.SAVE_LAYOUTS), TO_SIM,
                9105, commands.decode_save_sensor_data,
                commands.encode_save_sensor_data),
    MessageType('sensor_control', commands.SENSOR_CONTROL, commands.SENSOR_LAYOUTS[0].identifier,
                _lengths(commands.SENSOR_LAYOUTS), TO_SIM, 9103, commands.decode_sensor_control,
                commands.encode_sensor_control),
    MessageType('lamp_control', commands.LAMP_CONTROL, commands.LAMP_LAYOUTS[0].identifier,
                _lengths(commands.LAMP_LAYOUTS), TO_SIM, 9097,
                commands.decode_lamp_control, commands.encode_lamp_control),
]

#: name → MessageType, in the table's order.
MESSAGE_TYPES: Dict[str, MessageType] = {m.name: m for m in _TABLE}


def message_type(name: str) -> MessageType:
    """Look up by our configuration name; an unknown name raises KeyError listing the valid
    ones (a configuration error)."""
    try:
        return MESSAGE_TYPES[name.strip()]
    except KeyError:
        raise KeyError(f'unknown MORAI message type {name!r}; known: '
                       + ', '.join(MESSAGE_TYPES)) from None


def decode(name: str, datagram) -> Any:
    """Decode ``datagram`` as the configured message type ``name`` (CodecError on bad bytes)."""
    return message_type(name).decode(datagram)


def encode(name: str, value, **kwargs) -> bytes:
    return message_type(name).encode(value, **kwargs)


def identify(datagram) -> str:
    """The message type name of a datagram, from its identifier and data_length."""
    ident = peek_identifier(datagram)
    matches = [m for m in _TABLE if m.identifier == ident]
    if not matches:
        raise CodecError('MORAI', f'no known identifier at the start of the datagram '
                         f'({bytes(datagram[:18])!r})', field='identifier', offset=0,
                         kind=BAD_MAGIC)
    if len(matches) == 1:
        return matches[0].name
    data_length = read_data_length(datagram, ident, 'MORAI')
    for m in matches:
        if data_length in m.data_lengths:
            return m.name
    raise UnknownLayout('MORAI', f'{ident!r} with data_length {data_length} matches none of '
                        + ', '.join(f'{m.name} {m.data_lengths}' for m in matches),
                        data_length=data_length, offset=len(ident))


def decode_any(datagram) -> Tuple[str, Any]:
    """(name, decoded value) for any known message."""
    name = identify(datagram)
    return name, MESSAGE_TYPES[name].decode(datagram)
