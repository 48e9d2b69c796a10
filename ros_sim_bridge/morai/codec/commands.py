"""Client → simulator messages: encoders (validate, then pack) and decoders (for the emulator).

Spec: morai-sim-udp.txt (one section per message); SUPPLEMENT §1.2–1.3 for identifiers and
offsets.  Every encoder validates first: an out-of-range value raises CodecError(kind=BAD_VALUE)
and no bytes are produced.  Decoders check framing and then apply the same validation.

==============================  =====================  ====  =====  ========================
message                         identifier             data  total  function pair
==============================  =====================  ====  =====  ========================
Ego Ctrl Cmd                    #MoraiCtrlCmd$         23    55     encode/decode_ctrl_cmd
  (26.R1, third-party parsers)                         27    59     (rear_steering set)
Set TrafficLight Ctrl           #TrafficLight$         14    46     ..._set_traffic_light
Set Intersection Status         #SetIntStatus$         8     40     ..._set_intersection
Scenario Load                   #ScenarioLoad$         37    69     ..._scenario_load
Save Sensor Data                #SaveSensorData$       91    125    ..._save_sensor_data
Sensor Control                  #SensorControl$        26    59     ..._sensor_control
Turn Signal Lamp Control        #LampControl$          2     33     ..._lamp_control
==============================  =====================  ====  =====  ========================
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError
from .fields import INT16, check_bool, check_enum, check_float, check_int, decode_text, encode_text
from .framing import (ID_CTRL_CMD, ID_LAMP_CONTROL, ID_SAVE_SENSOR_DATA, ID_SCENARIO_LOAD,
                      ID_SENSOR_CONTROL, ID_SET_INTERSECTION, ID_TRAFFIC_LIGHT, Layout,
                      build_frame, select_layout)
from .traffic_light import (INDEX_LENGTH, LAYOUTS as _GET_TL_LAYOUTS, SET_DATA_LENGTH, TL_OFF,
                            TL_STATUS_BITS)


# ---------------------------------------------------------------------------------------------
# Ego Ctrl Cmd
CTRL_CMD = 'Ego Ctrl Cmd'
CTRL_MODE_KEYBOARD = 1
CTRL_MODE_AUTO = 2
GEAR_MANUAL, GEAR_PARKING, GEAR_REVERSE, GEAR_NEUTRAL, GEAR_DRIVE, GEAR_LOW = range(6)
CMD_TYPE_PEDAL = 1          # accel / brake / steering pedals
CMD_TYPE_VELOCITY = 2       # target velocity (km/h) + steering
CMD_TYPE_ACCELERATION = 3   # target acceleration (m/s²) + steering

_CTRL_23 = struct.Struct('<BBB5f')
_CTRL_27 = struct.Struct('<BBB6f')
CTRL_LAYOUTS = (Layout('ctrl23', ID_CTRL_CMD, _CTRL_23.size),
                Layout('ctrl27', ID_CTRL_CMD, _CTRL_27.size))


@dataclass
class CtrlCmd:
    ctrl_mode: int = CTRL_MODE_AUTO   # 1 keyboard, 2 auto
    gear: int = GEAR_DRIVE            # 0 manual, 1 P, 2 R, 3 N, 4 D, 5 lower gear
    cmd_type: int = CMD_TYPE_PEDAL    # 1 pedals, 2 velocity, 3 acceleration
    velocity: float = 0.0             # km/h, used when cmd_type == 2
    acceleration: float = 0.0         # m/s², used when cmd_type == 3
    accel: float = 0.0                # accelerator pedal 0..1
    brake: float = 0.0                # brake pedal 0..1
    steering: float = 0.0             # -1..1 = wheel angle / max wheel angle (+ = left)
    rear_steering: Optional[float] = None  # -1..1; set only for the 59-byte (26.R1) form


def _check_ctrl(cmd: CtrlCmd) -> None:
    m = CTRL_CMD
    check_enum(cmd.ctrl_mode, (1, 2), m, 'ctrl_mode', '1 keyboard, 2 auto')
    check_enum(cmd.gear, range(6), m, 'gear', '0 manual, 1 P, 2 R, 3 N, 4 D, 5 low')
    check_enum(cmd.cmd_type, (1, 2, 3), m, 'cmd_type', '1 pedals, 2 velocity, 3 acceleration')
    check_float(cmd.velocity, m, 'velocity', unit=' km/h')
    check_float(cmd.acceleration, m, 'acceleration', unit=' m/s²')
    check_float(cmd.accel, m, 'accel', 0.0, 1.0)
    check_float(cmd.brake, m, 'brake', 0.0, 1.0)
    check_float(cmd.steering, m, 'steering', -1.0, 1.0)
    if cmd.rear_steering is not None:
        check_float(cmd.rear_steering, m, 'rear_steering', -1.0, 1.0)


def encode_ctrl_cmd(cmd: CtrlCmd, aux=(0, 0, 0)) -> bytes:
    """55 bytes (59 when ``rear_steering`` is set)."""
    _check_ctrl(cmd)
    values = [cmd.ctrl_mode, cmd.gear, cmd.cmd_type, cmd.velocity, cmd.acceleration,
              cmd.accel, cmd.brake, cmd.steering]
    if cmd.rear_steering is None:
        return build_frame(CTRL_LAYOUTS[0], _CTRL_23.pack(*values), CTRL_CMD, aux)
    return build_frame(CTRL_LAYOUTS[1], _CTRL_27.pack(*values, cmd.rear_steering), CTRL_CMD, aux)


def decode_ctrl_cmd(datagram) -> CtrlCmd:
    layout = select_layout(datagram, CTRL_LAYOUTS, CTRL_CMD)
    fmt = _CTRL_23 if layout.name == 'ctrl23' else _CTRL_27
    cmd = CtrlCmd(*fmt.unpack_from(datagram, layout.payload_offset))
    _check_ctrl(cmd)
    return cmd


# ---------------------------------------------------------------------------------------------
# Set TrafficLight Ctrl
SET_TRAFFIC_LIGHT = 'Set TrafficLight Ctrl'
_SET_TL = struct.Struct('<h')
SET_TL_LAYOUTS = (Layout('settl14', ID_TRAFFIC_LIGHT, SET_DATA_LENGTH),)
assert SET_DATA_LENGTH == INDEX_LENGTH + _SET_TL.size


@dataclass
class SetTrafficLight:
    index: str = ''      # traffic light id, 1..12 ASCII chars
    status: int = 1      # OR of 1 red, 4 yellow, 16 green, 32 green-left; or -1 off


def _check_tl_status(status, message: str) -> int:
    value = check_int(status, *INT16, message, 'status')
    if value != TL_OFF and (value <= 0 or value & ~TL_STATUS_BITS):
        raise CodecError(message, f'{value} is not -1 (off) or an OR of 1 red, 4 yellow, '
                         '16 green, 32 green-left', field='status', kind=BAD_VALUE)
    return value


def encode_set_traffic_light(cmd: SetTrafficLight, aux=(0, 0, 0)) -> bytes:
    index = encode_text(cmd.index, INDEX_LENGTH, SET_TRAFFIC_LIGHT, 'index', allow_empty=False)
    status = _check_tl_status(cmd.status, SET_TRAFFIC_LIGHT)
    return build_frame(SET_TL_LAYOUTS[0], index + _SET_TL.pack(status), SET_TRAFFIC_LIGHT, aux)


def decode_set_traffic_light(datagram) -> SetTrafficLight:
    layout = select_layout(datagram, SET_TL_LAYOUTS, SET_TRAFFIC_LIGHT,
                           hints={_GET_TL_LAYOUTS[0].data_length:
                                  'Get TrafficLight Status (simulator → client)'})
    off = layout.payload_offset
    index = decode_text(datagram, off, INDEX_LENGTH, SET_TRAFFIC_LIGHT, 'index')
    (status,) = _SET_TL.unpack_from(datagram, off + INDEX_LENGTH)
    cmd = SetTrafficLight(index, status)
    _check_tl_status(cmd.status, SET_TRAFFIC_LIGHT)
    return cmd


# ---------------------------------------------------------------------------------------------
# Set Intersection Status
SET_INTERSECTION = 'Set Intersection Status'
_SET_INT = struct.Struct('<hhf')
SET_INT_LAYOUTS = (Layout('setint8', ID_SET_INTERSECTION, _SET_INT.size),)


@dataclass
class SetIntersectionStatus:
    index: int = 0            # intersection id (int16)
    status: int = 0           # phase to switch to (int16, simulator-defined)
    status_time: float = 0.0  # s already spent in that phase (≥ 0)


def _check_set_int(cmd: SetIntersectionStatus) -> None:
    check_int(cmd.index, *INT16, SET_INTERSECTION, 'index')
    check_int(cmd.status, *INT16, SET_INTERSECTION, 'status')
    check_float(cmd.status_time, SET_INTERSECTION, 'status_time', 0.0, unit=' s')


def encode_set_intersection(cmd: SetIntersectionStatus, aux=(0, 0, 0)) -> bytes:
    _check_set_int(cmd)
    return build_frame(SET_INT_LAYOUTS[0], _SET_INT.pack(cmd.index, cmd.status, cmd.status_time),
                       SET_INTERSECTION, aux)


def decode_set_intersection(datagram) -> SetIntersectionStatus:
    layout = select_layout(datagram, SET_INT_LAYOUTS, SET_INTERSECTION)
    cmd = SetIntersectionStatus(*_SET_INT.unpack_from(datagram, layout.payload_offset))
    _check_set_int(cmd)
    return cmd


# ---------------------------------------------------------------------------------------------
# Scenario Load
SCENARIO_LOAD = 'Scenario Load'
FILE_NAME_LENGTH = 30
_SCENARIO_FLAGS = ('delete_all', 'load_network_connection_data', 'load_ego_vehicle_data',
                   'load_npc_vehicle_data', 'load_pedestrian_data', 'load_object_data',
                   'set_pause')
_SCENARIO_BOOLS = struct.Struct('<7?')
SCENARIO_LAYOUTS = (Layout('scen37', ID_SCENARIO_LOAD, FILE_NAME_LENGTH + _SCENARIO_BOOLS.size),)


@dataclass
class ScenarioLoad:
    file_name: str = ''                      # scenario .json name, ≤ 30 ASCII chars
    delete_all: bool = False
    load_network_connection_data: bool = False
    load_ego_vehicle_data: bool = False
    load_npc_vehicle_data: bool = False
    load_pedestrian_data: bool = False
    load_object_data: bool = False
    set_pause: bool = False


def encode_scenario_load(cmd: ScenarioLoad, pad: bytes = b' ', aux=(0, 0, 0)) -> bytes:
    """``file_name`` is space-padded like MORAI's own example (``pad=b'\\0'`` for NULs); an
    empty one is refused (the interface says 1..30 characters: the simulator has no file to
    load)."""
    if cmd.file_name == '':
        raise CodecError(SCENARIO_LOAD, 'must not be empty: name the scenario file to load (1..30 '
                         'ASCII characters)', field='file_name', kind=BAD_VALUE)
    name = encode_text(cmd.file_name, FILE_NAME_LENGTH, SCENARIO_LOAD, 'file_name', pad=pad)
    flags = [check_bool(getattr(cmd, f), SCENARIO_LOAD, f) for f in _SCENARIO_FLAGS]
    return build_frame(SCENARIO_LAYOUTS[0], name + _SCENARIO_BOOLS.pack(*flags), SCENARIO_LOAD,
                       aux)


def decode_scenario_load(datagram) -> ScenarioLoad:
    layout = select_layout(datagram, SCENARIO_LAYOUTS, SCENARIO_LOAD)
    off = layout.payload_offset
    name = decode_text(datagram, off, FILE_NAME_LENGTH, SCENARIO_LOAD, 'file_name')
    flags = _SCENARIO_BOOLS.unpack_from(datagram, off + FILE_NAME_LENGTH)
    return ScenarioLoad(name, *flags)


# ---------------------------------------------------------------------------------------------
# Save Sensor Data
SAVE_SENSOR_DATA = 'Save Sensor Data'
FILE_DIR_LENGTH = 60
SAVE_LAYOUTS = (Layout('save91', ID_SAVE_SENSOR_DATA, 1 + FILE_NAME_LENGTH + FILE_DIR_LENGTH),)


@dataclass
class SaveSensorData:
    is_custom_file_name: bool = False   # use custom_file_name
    custom_file_name: str = ''          # ≤ 30 ASCII chars
    file_dir: str = ''                  # full save path, ≤ 60 ASCII chars


def encode_save_sensor_data(cmd: SaveSensorData, aux=(0, 0, 0)) -> bytes:
    flag = check_bool(cmd.is_custom_file_name, SAVE_SENSOR_DATA, 'is_custom_file_name')
    name = encode_text(cmd.custom_file_name, FILE_NAME_LENGTH, SAVE_SENSOR_DATA,
                       'custom_file_name')
    path = encode_text(cmd.file_dir, FILE_DIR_LENGTH, SAVE_SENSOR_DATA, 'file_dir')
    return build_frame(SAVE_LAYOUTS[0], bytes([flag]) + name + path, SAVE_SENSOR_DATA, aux)


def decode_save_sensor_data(datagram) -> SaveSensorData:
    layout = select_layout(datagram, SAVE_LAYOUTS, SAVE_SENSOR_DATA)
    off = layout.payload_offset
    return SaveSensorData(
        bool(datagram[off]),
        decode_text(datagram, off + 1, FILE_NAME_LENGTH, SAVE_SENSOR_DATA, 'custom_file_name'),
        decode_text(datagram, off + 1 + FILE_NAME_LENGTH, FILE_DIR_LENGTH, SAVE_SENSOR_DATA,
                    'file_dir'))


# ---------------------------------------------------------------------------------------------
# Sensor Control
SENSOR_CONTROL = 'Sensor Control'
_SENSOR = struct.Struct('<h6f')
SENSOR_LAYOUTS = (Layout('sensor26', ID_SENSOR_CONTROL, _SENSOR.size),)
_SENSOR_FLOATS = ('pos_x', 'pos_y', 'pos_z', 'roll', 'pitch', 'heading')


@dataclass
class SensorControl:
    sensor_index: int = 0   # int16
    pos_x: float = 0.0      # m (the document's "pose")
    pos_y: float = 0.0      # m
    pos_z: float = 0.0      # m
    roll: float = 0.0       # deg
    pitch: float = 0.0      # deg
    heading: float = 0.0    # deg


def _check_sensor(cmd: SensorControl) -> None:
    check_int(cmd.sensor_index, *INT16, SENSOR_CONTROL, 'sensor_index')
    for name in _SENSOR_FLOATS:
        check_float(getattr(cmd, name), SENSOR_CONTROL, name)


def encode_sensor_control(cmd: SensorControl, aux=(0, 0, 0)) -> bytes:
    _check_sensor(cmd)
    body = _SENSOR.pack(cmd.sensor_index, *(getattr(cmd, n) for n in _SENSOR_FLOATS))
    return build_frame(SENSOR_LAYOUTS[0], body, SENSOR_CONTROL, aux)


def decode_sensor_control(datagram) -> SensorControl:
    layout = select_layout(datagram, SENSOR_LAYOUTS, SENSOR_CONTROL)
    cmd = SensorControl(*_SENSOR.unpack_from(datagram, layout.payload_offset))
    _check_sensor(cmd)
    return cmd


# ---------------------------------------------------------------------------------------------
# Turn Signal Lamp Control
LAMP_CONTROL = 'Turn Signal Lamp Control'
TURN_SIGNAL_NONE, TURN_SIGNAL_LEFT, TURN_SIGNAL_RIGHT = 0, 1, 2
_LAMP = struct.Struct('<BB')
LAMP_LAYOUTS = (Layout('lamp2', ID_LAMP_CONTROL, _LAMP.size),)


@dataclass
class LampControl:
    turn_signal: int = TURN_SIGNAL_NONE   # 0 none, 1 left, 2 right
    emergency_signal: int = 0             # 0 off, 1 hazard lamps on


def _check_lamp(cmd: LampControl) -> None:
    check_enum(cmd.turn_signal, (0, 1, 2), LAMP_CONTROL, 'turn_signal', '0 none, 1 left, 2 right')
    check_enum(cmd.emergency_signal, (0, 1), LAMP_CONTROL, 'emergency_signal', '0 off, 1 on')


def encode_lamp_control(cmd: LampControl, aux=(0, 0, 0)) -> bytes:
    _check_lamp(cmd)
    return build_frame(LAMP_LAYOUTS[0], _LAMP.pack(cmd.turn_signal, cmd.emergency_signal),
                       LAMP_CONTROL, aux)


def decode_lamp_control(datagram) -> LampControl:
    layout = select_layout(datagram, LAMP_LAYOUTS, LAMP_CONTROL)
    cmd = LampControl(*_LAMP.unpack_from(datagram, layout.payload_offset))
    _check_lamp(cmd)
    return cmd
