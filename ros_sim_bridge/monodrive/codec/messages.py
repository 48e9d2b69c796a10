"""monoDrive message types and validation of the bodies that are public (SUPPLEMENT §4.2,
§4.3).  A body is checked before it is sent: a missing field, a ``null`` where a number is
expected, a value of the wrong type or out of range raises CodecError naming the field
(``EgoControl_ID.forward_amount``).  Types whose bodies are not public pass through as given.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.monodrive.codec.control import json_float

# Type strings of 2019+ simulators (§4.2), in the document's order, then the later additions.
MESSAGE_TYPES = (
    'Status_ID', 'SimulatorConfig_ID', 'EgoVehicleConfig_ID', 'EgoControl_ID', 'MapCommand_ID',
    'ScenarioConfig_ID', 'ScenarioInit_ID', 'WaypointUpdate_ID', 'StreamData_ID',
    'SpawnActorCommand_ID', 'UpdateActorCommand_ID', 'AttachSensorCommand_ID',
    'DetachSensorCommand_ID', 'StopAllSensorsCommand_ID', 'StartAllSensorsCommand_ID',
    'ActivateLicense', 'WeatherConfig', 'REPLAY_ConfigureSensorsCommand_ID',
    'REPLAY_ReConfigureSensorCommand_ID', 'REPLAY_ConfigureTrajectoryCommand_ID',
    'REPLAY_StepSimulationCommand_ID', 'REPLAY_StateStepSimulationCommand_ID',
    'SampleSensorsCommand_ID', 'SampleSensorListCommand_ID', 'ClosedLoopConfigCommand_ID',
    'ClosedLoopStepCommand_ID', 'GetMap', 'GetStartPoints', 'GetVersion', 'ImportMap',
    'AutopilotControl', 'VehicleLightsConf',
)

SIMULATION_MODES = {0: 'closed loop', 1: 'replay', 2: 'replay step'}
DRIVE_MODES = {-1: 'reverse', 0: 'neutral', 1: 'drive'}


class _Check:
    """Field checks of one message, each raising CodecError naming ``type.field``."""

    def __init__(self, msg_type: str, body: Any):
        self.type = msg_type
        self.body = body

    def fail(self, field: Optional[str], detail: str):
        raise CodecError(self.type, detail, field=field)

    def obj(self, value: Any = None, field: Optional[str] = None) -> dict:
        value = self.body if value is None and field is None else value
        if not isinstance(value, dict):
            self.fail(field, f'expected a JSON object, got {_kind(value)}')
        return value

    def number(self, obj: dict, name: str, *, required: bool = True, low: float = -math.inf,
               high: float = math.inf, integer: bool = False, prefix: str = '') -> Optional[float]:
        field = prefix + name
        if name not in obj:
            if required:
                self.fail(field, 'missing')
            return None
        value = obj[name]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and integer and isinstance(value, float):
            ok = value.is_integer()
        if not ok:
            self.fail(field, f'{_kind(value)}, expected {"an integer" if integer else "a number"}')
        if not math.isfinite(json_float(value)) or not low <= value <= high:
            self.fail(field, f'{json_float(value):g} outside [{low}, {high}]')
        return value

    def string(self, obj: dict, name: str, *, required: bool = True, choices=None,
               prefix: str = '') -> Optional[str]:
        field = prefix + name
        if name not in obj:
            if required:
                self.fail(field, 'missing')
            return None
        value = obj[name]
        if not isinstance(value, str):
            self.fail(field, f'{_kind(value)}, expected a string')
        if choices is not None and value not in choices:
            self.fail(field, f'{value!r} is not one of {", ".join(choices)}')
        return value

    def boolean(self, obj: dict, name: str, prefix: str = '') -> None:
        if name in obj and not isinstance(obj[name], bool):
            self.fail(prefix + name, f'{_kind(obj[name])}, expected true or false')

    def array(self, obj: dict, name: str, *, required: bool = True, prefix: str = '') -> list:
        field = prefix + name
        if name not in obj:
            if required:
                self.fail(field, 'missing')
            return []
        if not isinstance(obj[name], list):
            self.fail(field, f'{_kind(obj[name])}, expected an array')
        return obj[name]


def _kind(value: Any) -> str:
    if value is None:
        return 'null'
    return {bool: 'a boolean', int: 'an integer', float: 'a number', str: 'a string',
            list: 'an array', dict: 'an object'}.get(type(value), type(value).__name__)


def _ego_control(c: _Check) -> None:
    b = c.obj()
    c.number(b, 'forward_amount', low=0.0, high=1.0)
    c.number(b, 'right_amount', low=-1.0, high=1.0)
    c.number(b, 'brake_amount', low=0.0, high=1.0)
    c.number(b, 'drive_mode', low=-1, high=1, integer=True)


def _simulator_config(c: _Check) -> None:
    b = c.obj()
    c.number(b, 'simulation_mode', required=False, low=0, high=2, integer=True)
    c.number(b, 'server_port', required=False, low=0, high=65535, integer=True)
    c.string(b, 'server_ip', required=False)
    c.string(b, 'map', required=False)
    if 'traffic_configuration' in b:
        c.obj(b['traffic_configuration'], 'traffic_configuration')
    if 'ros' in b:
        ros = c.obj(b['ros'], 'ros')
        c.number(ros, 'port', required=False, low=0, high=65535, integer=True, prefix='ros.')


def _sensor(c: _Check, sensor: Any, prefix: str) -> None:
    s = c.obj(sensor, prefix.rstrip('.') or None)
    c.string(s, 'type', prefix=prefix)
    c.number(s, 'listen_port', low=0, high=65535, integer=True, prefix=prefix)
    for block, keys in (('location', 'xyz'), ('rotation', ('pitch', 'yaw', 'roll'))):
        if block in s:
            inner = c.obj(s[block], prefix + block)
            for k in keys:
                c.number(inner, k, required=False, prefix=f'{prefix}{block}.')


def _configure_sensors(c: _Check) -> None:
    if isinstance(c.body, list):
        for i, sensor in enumerate(c.body):
            _sensor(c, sensor, f'[{i}].')
    else:
        _sensor(c, c.body, '')


def _reconfigure_sensor(c: _Check) -> None:
    _sensor(c, c.body, '')


def _vector(c: _Check, obj: dict, name: str, n: int, prefix: str) -> None:
    """An array of ``n`` numbers, or an object with x, y, z (and w) numbers."""
    if name not in obj:
        return
    v = obj[name]
    if isinstance(v, list):
        if len(v) != n:
            c.fail(prefix + name, f'{len(v)} values, expected {n}')
        for i, x in enumerate(v):
            c.number({str(i): x}, str(i), prefix=f'{prefix}{name}.')
    elif isinstance(v, dict):
        for k in 'xyzw'[:n] if n == 4 else 'xyz':
            c.number(v, k, prefix=f'{prefix}{name}.')
    else:
        c.fail(prefix + name, f'{_kind(v)}, expected an array of {n} numbers or an object')


def _trajectory(c: _Check) -> None:
    frames = c.body
    if not isinstance(frames, list):
        c.fail(None, f'expected an array of frames, got {_kind(frames)}')
    for i, frame in enumerate(frames):
        c.obj(frame, f'[{i}]')
        inner = frame.get('frame')
        if isinstance(inner, list):             # layout (b): frame = [vehicle states]
            for j, veh in enumerate(inner):
                p = f'[{i}].frame[{j}].'
                c.obj(veh, p.rstrip('.'))
                c.string(veh, 'name', prefix=p)
                _vector(c, veh, 'position', 3, p)
                _vector(c, veh, 'orientation', 4, p)
        elif isinstance(inner, dict):           # layout (c): state-sensor frames
            _state_frame(c, inner, f'[{i}].frame.')
        elif inner is None:                     # layout (a): {vehicle name: state}
            for name, veh in frame.items():
                if name not in ('time', 'game_time', 'sample_count'):
                    c.obj(veh, f'[{i}].{name}')
        else:
            c.fail(f'[{i}].frame', f'{_kind(inner)}, expected an array or object')


def _state_frame(c: _Check, frame: dict, prefix: str) -> None:
    for j, veh in enumerate(c.array(frame, 'vehicles', prefix=prefix)):
        p = f'{prefix}vehicles[{j}].'
        state = c.obj(c.obj(veh, p.rstrip('.')).get('state'), p + 'state')
        c.string(state, 'name', prefix=p + 'state.')
        odom = c.obj(state.get('odometry'), p + 'state.odometry')
        pose = c.obj(odom.get('pose'), p + 'state.odometry.pose')
        _vector(c, pose, 'position', 3, p + 'state.odometry.pose.')
        _vector(c, pose, 'orientation', 4, p + 'state.odometry.pose.')
    c.array(frame, 'objects', required=False, prefix=prefix)


def _state_step(c: _Check) -> None:
    b = c.obj()
    _state_frame(c, c.obj(b.get('frame'), 'frame'), 'frame.')


def _step(c: _Check) -> None:
    c.number(c.obj(), 'amount', integer=True)


def _sample_sensors(c: _Check) -> None:
    c.number(c.obj(), 'timeout', required=False, low=0)


def _sample_sensor_list(c: _Check) -> None:
    ports = c.array(c.obj(), 'ports')
    for i, port in enumerate(ports):
        c.number({f'ports[{i}]': port}, f'ports[{i}]', low=0, high=65535, integer=True)


def _closed_loop_step(c: _Check) -> None:
    c.number(c.obj(), 'time_step', low=0.0)


def _get_map(c: _Check) -> None:
    b = c.obj()
    c.string(b, 'format', required=False, choices=('geojson', 'opendrive', 'point_array'))
    c.string(b, 'coordinates', required=False, choices=('world', 'gis'))
    c.number(b, 'point_delta', required=False, low=0.0)
    c.number(b, 'orientation', required=False)
    if 'gis_anchor' in b:
        anchor = c.obj(b['gis_anchor'], 'gis_anchor')
        for k in 'xyz':
            c.number(anchor, k, required=False, prefix='gis_anchor.')


def _weather(c: _Check) -> None:
    b = c.obj()
    if 'profiles' in b:
        profiles = c.array(b, 'profiles')
        for i, prof in enumerate(profiles):
            c.obj(prof, f'profiles[{i}]')
            c.string(prof, 'id', prefix=f'profiles[{i}].')
        c.string(b, 'set_profile', required=False)
    else:                                       # one profile (ROS 1 client's weather.json)
        c.string(b, 'id')


def _autopilot(c: _Check) -> None:
    b = c.obj()
    for name in ('set_speed', 'negotiated_speed', 'headway'):
        c.number(b, name, required=False)
    c.number(b, 'lane_change', required=False, integer=True)
    c.number(b, 'gear', required=False, integer=True)
    c.number(b, 'drive_mode', required=False, integer=True, low=-1, high=1)
    c.boolean(b, 'autopilot_engaged')


def _object(c: _Check) -> None:
    c.obj()


VALIDATORS: dict[str, Callable[[_Check], None]] = {
    'EgoControl_ID': _ego_control,
    'SimulatorConfig_ID': _simulator_config,
    'REPLAY_ConfigureSensorsCommand_ID': _configure_sensors,
    'REPLAY_ReConfigureSensorCommand_ID': _reconfigure_sensor,
    'REPLAY_ConfigureTrajectoryCommand_ID': _trajectory,
    'REPLAY_StepSimulationCommand_ID': _step,
    'REPLAY_StateStepSimulationCommand_ID': _state_step,
    'SampleSensorsCommand_ID': _sample_sensors,
    'SampleSensorListCommand_ID': _sample_sensor_list,
    'ClosedLoopConfigCommand_ID': _object,
    'ClosedLoopStepCommand_ID': _closed_loop_step,
    'GetMap': _get_map,
    'WeatherConfig': _weather,
    'AutopilotControl': _autopilot,
    'GetVersion': _object,
    'EgoVehicleConfig_ID': _object,
    'ScenarioConfig_ID': _object,
}


def validate(msg_type: str, body: Any) -> Any:
    """Check ``body`` for ``msg_type`` (§4.3); returns it unchanged, or raises CodecError
    naming the field.  Types without a public body are not checked."""
    check = VALIDATORS.get(msg_type)
    if check is not None:
        check(_Check(msg_type, body))
    return body
