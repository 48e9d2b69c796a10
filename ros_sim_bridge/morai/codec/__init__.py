"""MORAI SIM UDP codec (sans-IO): framing, simulator → client decoders, client → simulator
encoders, and a dispatch table.  Spec: shared/specs/morai-sim-udp.txt, SUPPLEMENT §1.

One module per concept: :mod:`.framing` (identifier, data_length, tail, layout detection),
:mod:`.ego_status`, :mod:`.object_info`, :mod:`.multi_ego`, :mod:`.traffic_light`,
:mod:`.collision`, :mod:`.vehicle_collision`, :mod:`.intersection`, :mod:`.commands`,
:mod:`.dispatch`.
"""
from .collision import COLLISION_DTYPE, CollisionData, decode_collision, encode_collision
from .commands import (CtrlCmd, LampControl, SaveSensorData, ScenarioLoad, SensorControl,
                       SetIntersectionStatus, SetTrafficLight, decode_ctrl_cmd,
                       decode_lamp_control, decode_save_sensor_data, decode_scenario_load,
                       decode_sensor_control, decode_set_intersection, decode_set_traffic_light,
                       encode_ctrl_cmd, encode_lamp_control, encode_save_sensor_data,
                       encode_scenario_load, encode_sensor_control, encode_set_intersection,
                       encode_set_traffic_light)
from .dispatch import (FROM_SIM, MESSAGE_TYPES, TO_SIM, MessageType, decode, decode_any, encode,
                       identify, message_type)
from .ego_status import EgoVehicleStatus, decode_ego_status, encode_ego_status
from .intersection import (IntersectionStatus, decode_intersection_status,
                           encode_intersection_status)
from .multi_ego import MULTI_EGO_DTYPE, MultiEgoSetting, decode_multi_ego, encode_multi_ego
from .object_info import OBJECT_DTYPE, ObjectInfo, decode_object_info, encode_object_info
from .traffic_light import (TrafficLightStatus, decode_traffic_light_status,
                            encode_traffic_light_status)
from .vehicle_collision import (VEHICLE_DTYPE, VehicleCollisionData, decode_vehicle_collision,
                                encode_vehicle_collision)

__all__ = [name for name in dir() if not name.startswith('_')]
