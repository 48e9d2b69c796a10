"""The ROS names MORAI users know (SUPPLEMENT §1.6), kept out of the sans-IO codec.

MORAI's own ROS bridge publishes each message as a ``morai_msgs`` type on a fixed topic; users
configure types by those names too.  :func:`message_type` accepts our configuration name (the
codec's ``MESSAGE_TYPES`` key), the morai_msgs message name or its topic, case-insensitively.
"""
from __future__ import annotations

from typing import Dict, Tuple

from ros_sim_bridge.morai.codec import MESSAGE_TYPES, MessageType

#: codec type name → (morai_msgs message name, morai_msgs topic)
MORAI_MSGS: Dict[str, Tuple[str, str]] = {
    'ego_status': ('EgoVehicleStatus', '/Ego_topic'),
    'object_info': ('ObjectStatusList', '/Object_topic'),
    'traffic_light_status': ('GetTrafficLightStatus', '/GetTrafficLightStatus'),
    'collision': ('CollisionData', '/CollisionData'),
    'vehicle_collision': ('VehicleCollisionData', '/VehicleCollisionData'),
    'intersection_status': ('IntersectionStatus', '/InsnStatus'),
    'multi_ego_setting': ('MultiEgoSetting', '/ego_setting'),
    'ctrl_cmd': ('CtrlCmd', '/ctrl_cmd'),
    'set_traffic_light': ('SetTrafficLight', '/SetTrafficLight'),
    'set_intersection': ('IntersectionControl', '/InsnControl'),
    'scenario_load': ('ScenarioLoad', '/ScenarioLoad'),
    'save_sensor_data': ('SaveSensorData', '/SaveSensorData'),
    'sensor_control': ('SensorPosControl', '/SensorPosControl'),
    'lamp_control': ('Lamps', '/lamps'),
}

_ALIASES = {msg.lower(): name for name, (msg, _) in MORAI_MSGS.items()}
_ALIASES.update({topic.strip('/').lower(): name for name, (_, topic) in MORAI_MSGS.items()})


def message_type(name: str) -> MessageType:
    """Our name, the morai_msgs name or the morai_msgs topic → the codec's MessageType.
    Unknown names raise KeyError listing the valid ones (a configuration error)."""
    key = name.strip()
    if key in MESSAGE_TYPES:
        return MESSAGE_TYPES[key]
    alias = _ALIASES.get(key.strip('/').lower())
    if alias is None:
        raise KeyError(f'unknown MORAI message type {name!r}; known: ' + ', '.join(MESSAGE_TYPES))
    return MESSAGE_TYPES[alias]
