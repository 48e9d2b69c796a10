"""monoDrive's JSON configuration files, as its public clients ship them (SUPPLEMENT §4.3/4.4).

:func:`load_config` reads one file, detects its kind (or checks the kind asked for) and, for a
trajectory, which of the three layouts it has:

* ``vehicle_map`` — ``[{"<vehicle>": {position, orientation, ...}}]`` (oldest replay files)
* ``frame_list`` — ``[{"frame": [{name, position, orientation, velocity, ...}], "time", ...}]``
* ``state_frames`` — ``[{"frame": {"vehicles": [{"state": {..., "odometry": {...}}}]}}]``

The data is kept as loaded (it is sent as is); invalid JSON raises :class:`ConfigError` naming
the file, line and column.  The kinds are sent in monoDrive's client order (:data:`SEND_ORDER`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ros_sim_bridge.monodrive.codec import messages

KINDS = ('simulator', 'weather', 'vehicle', 'scenario', 'trajectory', 'sensors')
# kind → message type that carries it; the order of this table is the order monoDrive's
# clients configure a simulator: simulator, weather, ego vehicle / scenario / trajectory,
# then the sensors (one message per sensor).
SEND_ORDER = (
    ('simulator', 'SimulatorConfig_ID'),
    ('weather', 'WeatherConfig'),
    ('vehicle', 'EgoVehicleConfig_ID'),
    ('scenario', 'ClosedLoopConfigCommand_ID'),
    ('trajectory', 'REPLAY_ConfigureTrajectoryCommand_ID'),
    ('sensors', 'REPLAY_ConfigureSensorsCommand_ID'),
)
MESSAGE_FOR_KIND = dict(SEND_ORDER)


class ConfigError(ValueError):
    """A configuration file that cannot be used; the text names the file (and line)."""

    def __init__(self, path, detail: str, line: Optional[int] = None,
                 column: Optional[int] = None):
        self.path, self.line, self.column = str(path), line, column
        where = self.path + (f', line {line}' if line else '') + \
            (f' column {column}' if column else '')
        super().__init__(f'{where}: {detail}')


@dataclass
class ConfigFile:
    path: str
    kind: str
    data: Any
    layout: Optional[str] = None       # trajectories only

    @property
    def message_type(self) -> str:
        return MESSAGE_FOR_KIND[self.kind]

    def messages(self) -> list[tuple[str, Any]]:
        """(type, body) pairs to send: one per sensor for a sensor list, else one."""
        if self.kind == 'sensors':
            items = self.data if isinstance(self.data, list) else [self.data]
            return [(self.message_type, s) for s in items]
        return [(self.message_type, self.data)]

    def sensors(self) -> list[dict]:
        if self.kind != 'sensors':
            return []
        return list(self.data) if isinstance(self.data, list) else [self.data]

    def frames(self) -> list:
        """A trajectory's frames, whatever its layout."""
        return list(self.data) if self.kind == 'trajectory' else []


FRAME_KEYS = ('time', 'game_time', 'sample_count')  # per-frame stamps beside the vehicles


def trajectory_layout(data: Any) -> Optional[str]:
    if not isinstance(data, list) or not data or not all(isinstance(f, dict) for f in data):
        return None
    first = data[0]
    inner = first.get('frame')
    if isinstance(inner, list):
        return 'frame_list'
    if isinstance(inner, dict) and 'vehicles' in inner:
        return 'state_frames'
    states = [v for k, v in first.items() if k not in FRAME_KEYS]
    if inner is None and states and all(isinstance(v, dict) and 'position' in v
                                        for v in states):
        return 'vehicle_map'
    return None


def detect_kind(data: Any) -> Optional[str]:
    """The kind of a loaded file, from the keys monoDrive's files carry."""
    if isinstance(data, list):
        if trajectory_layout(data):
            return 'trajectory'
        if all(isinstance(s, dict) and 'type' in s for s in data):
            return 'sensors'            # an empty list too: a valid, empty sensor set
        return None
    if not isinstance(data, dict):
        return None
    if 'type' in data and 'listen_port' in data:
        return 'sensors'
    if 'profiles' in data or 'SunPolarAngle' in data:
        return 'weather'
    if 'traffic_configuration' in data or 'simulation_mode' in data or 'server_port' in data:
        return 'simulator'
    if 'vehicle_dynamics' in data or 'body' in data:
        return 'vehicle'
    if 'vehicles' in data or 'trigger_boxes' in data:
        return 'scenario'
    if 'spawning_rotation' in data or 'clock_mode' in data:
        return 'vehicle'                # the 2018 v1.0 vehicle configuration (with sensors)
    return None


def _refuse_constant(name: str):
    raise ValueError(f'non-standard JSON constant {name} (NaN and Infinity are not JSON; '
                     'the simulator would not read it)')


def load_config(path, kind: Optional[str] = None, *, validate: bool = True) -> ConfigFile:
    """Load and classify one file; ConfigError names the file (and line) when it is not
    JSON, is not of a known kind, is not of the ``kind`` asked for, or fails the body checks
    of its message type (a sensor without a listen_port …)."""
    path = Path(path)
    try:
        text = path.read_text(encoding='utf-8')
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, f'cannot read: {exc}') from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(path, f'invalid JSON: {exc.msg}', exc.lineno, exc.colno) from None
    except ValueError as exc:             # NaN / Infinity: Python's json takes them, JSON not
        name = str(exc).split()[3]
        line = text.count('\n', 0, max(text.find(name), 0)) + 1
        raise ConfigError(path, str(exc), line) from None
    found = detect_kind(data)
    if kind is not None:
        if kind not in KINDS:
            raise ConfigError(path, f'unknown kind {kind!r} (one of {", ".join(KINDS)})')
        if found != kind and not (kind == 'scenario' and found == 'vehicle'):
            raise ConfigError(path, f'expected a {kind} file, this looks like '
                              f'{found or "nothing monoDrive sends"}')
        found = kind
    if found is None:
        raise ConfigError(path, 'not a monoDrive simulator, weather, vehicle, scenario, '
                          'trajectory or sensor file')
    cfg = ConfigFile(str(path), found, data,
                     trajectory_layout(data) if found == 'trajectory' else None)
    if validate:
        from ros_sim_bridge.core.binary import CodecError
        try:
            for msg_type, body in cfg.messages():
                if found == 'sensors':
                    messages.validate('REPLAY_ConfigureSensorsCommand_ID', body)
                else:
                    messages.validate(msg_type, body)
        except CodecError as err:
            raise ConfigError(path, str(err)) from None
    return cfg
