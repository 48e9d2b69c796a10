"""The suite's one table of sources, shared by ``launch/*.launch.py`` and ``ros_sim_bridge_run``.

A source is one driver node and its built-in emulator: ``config/<name>.yaml`` holds the node's
parameters, ``launch/<name>.launch.py`` starts it, the suite puts it in namespace ``<name>``.
Adding a source (monoDrive, CARLA) is one :class:`Source` entry in :data:`SOURCES`.

Everything here is plain Python (no rclpy, no ``launch``): launch files import it inside
``ros2 launch``, the runner and the tests import it anywhere.

The rule for parameters (issue #14, #26): the package's ``config/<source>.yaml`` first, the
user's params file on top of it (the keys it holds win), then a launch argument or ``--set``,
which overrides a parameter only when the user gave it (its default is the empty string ``''``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import yaml

PACKAGE = 'ros_sim_bridge'
NOT_GIVEN = ''   # default of every overriding launch argument: "the params file decides"


def as_int_list(text) -> list[int]:
    """``2``, ``'2'``, ``'[1, 2]'``, ``'1,2'`` → a list of ints (what users type for a list)."""
    value = yaml.safe_load(f'[{text}]') if isinstance(text, str) and '[' not in text else (
        yaml.safe_load(text) if isinstance(text, str) else text)
    if not isinstance(value, list):
        value = [value]
    if len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    try:
        return [int(v) for v in value]
    except (TypeError, ValueError):
        raise ValueError(f'{text!r} is not an integer or a list of integers') from None


def as_bool(text) -> bool:
    value = yaml.safe_load(text) if isinstance(text, str) else text
    if not isinstance(value, bool):
        raise ValueError(f'{text!r} is not true or false')
    return value


#: how a launch argument's text becomes a parameter value
CONVERTERS: dict[str, Callable] = {'int': int, 'float': float, 'str': str, 'bool': as_bool,
                                   'int_list': as_int_list}


@dataclass(frozen=True)
class Argument:
    """A launch argument of a source: overrides ``parameter`` when given (``''``: not given);
    with ``parameter`` None it only feeds the emulator (a ``default`` then applies)."""
    name: str
    description: str
    kind: str = 'str'                 # key of CONVERTERS
    parameter: Optional[str] = None
    default: str = NOT_GIVEN

    def convert(self, text):
        return CONVERTERS[self.kind](text)


@dataclass(frozen=True)
class Source:
    """One driver of the suite and its built-in emulator."""
    name: str                       # namespace, config/<name>.yaml, launch/<name>.launch.py
    title: str
    executable: str                 # installed driver executable (CMakeLists)
    node_name: str                  # node name = section of config/<name>.yaml
    emulator: Optional[str]         # installed emulator executable (None: sim:=true sets
                                    # parameters only, e.g. a generated recording to replay)
    #: (node parameters in effect, argument values) → emulator command line
    emulator_args: Callable[[dict, dict], list[str]]
    arguments: tuple[Argument, ...] = ()
    #: (node parameters in effect, argument values) → parameters the driver needs with sim:=true
    sim_parameters: Callable[[dict, dict], dict] = field(default=lambda params, args: {})
    #: (node parameters in effect, free-port picker) → port parameters moved off their defaults,
    #: so a local suite can run beside others on one machine (runner --free-ports, tests)
    free_ports: Callable[[dict, Callable], dict] = field(default=lambda params, pick: {})
    #: a parameter without which the node cannot run (CARLA: the recording): the whole suite
    #: (all.launch.py, ros_sim_bridge_run) leaves the source out while it is empty
    required: Optional[str] = None

    @property
    def config(self) -> str:
        return f'{self.name}.yaml'

    @property
    def launch_file(self) -> str:
        return f'{self.name}.launch.py'


# -- RflySim ---------------------------------------------------------------------------------
def _rflysim_emulator(params: dict, args: dict) -> list[str]:
    ids = params.get('copter_ids', [1])
    return ['--ids', ','.join(str(i) for i in ids), '--base-port',
            str(params.get('base_port', 30101)), '--rate', '50', '--duration', '0', '--quiet']


def _rflysim_ports(params: dict, pick) -> dict:
    ids = params.get('copter_ids', [1])
    return {'base_port': pick('udp', max(ids) + 1, 2)}


# -- MORAI -----------------------------------------------------------------------------------
MORAI_EGO_PORT_SIM = '9091'  # MORAI's Ego Status port 909 needs privileges; 9091 on both sides
#: bridge listen_port.<name> → emulator --<name>-port; bridge sim_port.<name> → --<name>-listen-port
MORAI_LISTEN = ('ego_status', 'object_info', 'traffic_light_status', 'collision',
                'vehicle_collision', 'intersection_status')
MORAI_SIM_PORTS = ('ctrl_cmd', 'set_traffic_light', 'set_intersection', 'scenario_load',
                   'save_sensor_data', 'sensor_control', 'lamp_control', 'multi_ego_setting')


def _morai_emulator(params: dict, args: dict) -> list[str]:
    out = ['--release', args.get('release') or 'newest', '--duration', '0',
           '--log-level', 'WARNING']
    for name in MORAI_LISTEN:
        port = params.get(f'listen_port.{name}')
        if port is not None:
            out += [f'--{name.replace("_", "-")}-port', str(port if port > 0 else -1)]
    for name in MORAI_SIM_PORTS:
        port = params.get(f'sim_port.{name}')
        if port is not None:
            out += [f'--{name.replace("_", "-")}-listen-port', str(port if port > 0 else -1)]
    return out


def _morai_sim(params: dict, args: dict) -> dict:
    port = params.get('listen_port.ego_status')
    if args.get('ego_status_port') or (port is not None and 0 < port < 1024):
        return {'listen_port.ego_status': int(args.get('ego_status_port') or MORAI_EGO_PORT_SIM)}
    return {}


def _morai_ports(params: dict, pick) -> dict:
    out = {}
    for name in MORAI_LISTEN:
        if params.get(f'listen_port.{name}', 0) > 0:
            out[f'listen_port.{name}'] = pick('udp', 1, 1)
    for name in MORAI_SIM_PORTS:
        if params.get(f'sim_port.{name}', 0) > 0:
            out[f'sim_port.{name}'] = pick('udp', 1, 1)
    return out


# -- ibeo ------------------------------------------------------------------------------------
def _ibeo_emulator(params: dict, args: dict) -> list[str]:
    return ['--host', '127.0.0.1', '--port', str(params.get('port', 12002)),
            '--layers', str(args.get('sim_layers') or '4'), '--duration', '0']


def _ibeo_ports(params: dict, pick) -> dict:
    return {'port': pick('tcp', 1, 1)}


def _ibeo_sim(params: dict, args: dict) -> dict:
    """With the emulator the LUX frame is put at the map origin (the ``/tf_static`` the node
    publishes), so RViz's fixed frame ``map`` shows it."""
    return {} if params.get('parent_frame_id') else {'parent_frame_id': 'map'}


def _ibeo_ecu_emulator(params: dict, args: dict) -> list[str]:
    return ['--ecu', '--host', '127.0.0.1', '--port', str(params.get('port', 12002)),
            '--scanners', str(args.get('sim_scanners') or '4'),
            '--points', str(args.get('sim_points') or '60000'), '--duration', '0']


# -- monoDrive -------------------------------------------------------------------------------
def _monodrive_emulator(params: dict, args: dict) -> list[str]:
    # the emulator streams each sensor the client configures, on that sensor's listen_port
    return ['--host', '127.0.0.1', '--port', str(params.get('port', 8999)), '--duration', '0']


def _monodrive_ports(params: dict, pick) -> dict:
    """The control port and every sensor's ``listen_port`` (a copy of the sensors file with
    free ports, removed when this process ends): a simulator or another suite already on the
    default sensor ports is never connected to."""
    moved = {'port': pick('tcp', 1, 1)}
    name = params.get('sensors_config')
    if name:
        import atexit
        import json
        import tempfile
        from ros_sim_bridge.ros.params import resolve_config_path
        with open(resolve_config_path(str(name))) as f:
            sensors = json.load(f)
        for sensor in sensors if isinstance(sensors, list) else ():
            if isinstance(sensor, dict) and sensor.get('listen_port'):
                sensor['listen_port'] = pick('tcp', 1, 1)
        fd, path = tempfile.mkstemp(prefix='monodrive_sensors_', suffix='.json')
        with os.fdopen(fd, 'w') as f:
            json.dump(sensors, f)
        atexit.register(os.unlink, path)
        moved['sensors_config'] = path
    return moved


# -- CARLA -----------------------------------------------------------------------------------
def carla_demo_recording() -> str:
    """A recording of the generator's scripted scene (vehicles, walkers, lights, a collision,
    a destroyed actor), written once to the user's cache: what ``sim:=true`` replays."""
    from ros_sim_bridge import carla
    folder = Path(os.environ.get('XDG_CACHE_HOME', Path.home() / '.cache')) / PACKAGE
    path = folder / f'carla_demo_scene_{carla.DEMO_VERSION}.log'
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f'.{os.getpid()}.tmp')
        with open(tmp, 'wb') as f:
            carla.write_demo_scene(f)
        os.replace(tmp, path)
    return str(path)


def _carla_sim(params: dict, args: dict) -> dict:
    if params.get('file'):
        return {}
    return {'file': carla_demo_recording(), 'loop': True}


SOURCES: dict[str, Source] = {s.name: s for s in (
    Source('rflysim', 'RflySim ground truth', 'rflysim_truth', 'rflysim_truth', 'rflysim_sim',
           _rflysim_emulator,
           (Argument('copter_ids', "CopterIDs to receive: 2, '[1,2,3]' or 1,2,3 (default: the "
                                   'params file)', 'int_list', 'copter_ids'),
            Argument('base_port', 'UDP port of CopterID 1 (default: the params file)', 'int',
                     'base_port')),
           free_ports=_rflysim_ports),
    Source('morai', 'MORAI SIM', 'morai_bridge', 'morai_bridge', 'morai_sim', _morai_emulator,
           (Argument('ego_status_port', 'Ego Vehicle Status listen port (default: the params '
                     'file; with sim:=true 9091, as 909 needs privileges)', 'int'),
            Argument('release', 'emulator layout preset with sim:=true (document, oldest, '
                     'link_id, stamped, newest, 26.R1)', 'str', None, 'newest')),
           sim_parameters=_morai_sim, free_ports=_morai_ports),
    Source('ibeo', 'ibeo LUX / SICK LD-MRS', 'ibeo_lux', 'ibeo_lux', 'ibeo_lux_sim',
           _ibeo_emulator,
           (Argument('host', 'sensor address (default: the params file; a real LUX ships '
                     'with 192.168.0.1)', 'str', 'host'),
            Argument('port', 'sensor TCP port (default: the params file)', 'int', 'port'),
            Argument('sim_layers', 'layers of the emulator with sim:=true: 4 or 8', 'str',
                     None, '4'),
            Argument('source', "'tcp' (the sensor) or 'file' (play an .idc recording; "
                     'default: the params file)', 'str', 'source'),
            Argument('file', '.idc recording played with source:=file (default: the params '
                     'file)', 'str', 'file'),
            Argument('rate', 'source:=file: playback speed, recording seconds per wall second '
                     '(default: the params file)', 'float', 'rate'),
            Argument('loop', "source:=file: 'true' starts again after the end (default: the "
                     'params file)', 'bool', 'loop'),
            Argument('start_offset', 'source:=file: s after the first message to start at; '
                     'negative: before the last (default: the params file)', 'float',
                     'start_offset')),
           sim_parameters=_ibeo_sim, free_ports=_ibeo_ports),
    Source('monodrive', 'monoDrive simulator', 'monodrive_client', 'monodrive_client',
           'monodrive_sim', _monodrive_emulator,
           (Argument('host', 'simulator address (default: the params file)', 'str', 'host'),
            Argument('port', 'simulator control port (default: the params file)', 'int',
                     'port')),
           free_ports=_monodrive_ports),
    Source('carla', 'CARLA recorder replayer', 'carla_replayer', 'carla_replayer', None,
           lambda params, args: [],
           (Argument('file', 'CARLA recorder .log file to replay (default: the params file; '
                     'with sim:=true and none given, a generated recording)', 'str', 'file'),
            Argument('rate_factor', 'replay speed, recording seconds per wall second (default: '
                     'the params file)', 'float', 'rate_factor'),
            Argument('start_time', 'recording time to start at, s; negative: from the end '
                     '(default: the params file)', 'float', 'start_time'),
            Argument('end_time', 'recording time to stop at, s; 0: the end; negative: from '
                     'the end (default: the params file)', 'float', 'end_time'),
            Argument('loop', "'true': start again after the end (default: the params file)",
                     'bool', 'loop'),
            Argument('start_paused', "'true': wait for the resume service (default: the "
                     'params file)', 'bool', 'start_paused'),
            Argument('follow_actor', 'TF rooted on an actor: -1 none, 0 the hero, > 0 an actor '
                     'id (default: the params file)', 'int', 'follow_actor'),
            Argument('map_frame', 'world frame (default: the params file)', 'str',
                     'map_frame')),
           sim_parameters=_carla_sim, required='file'),
)}

#: Sources with a launch file of their own that the suite (all.launch.py, ros_sim_bridge_run)
#: does not start by default (``ros_sim_bridge_run --only`` takes them): ``ibeo_ecu`` is the
#: ``ibeo_lux`` node with an Ibeo ECU's defaults (an alternative to the ``ibeo`` source, on
#: the same port).
EXTRA_SOURCES: dict[str, Source] = {s.name: s for s in (
    Source('ibeo_ecu', 'Ibeo ECU / FUSION SYSTEM', 'ibeo_ecu', 'ibeo_ecu', 'ibeo_lux_sim',
           _ibeo_ecu_emulator,
           (Argument('host', 'ECU address (default: the params file; an ECU ships with '
                     '192.168.0.100)', 'str', 'host'),
            Argument('port', 'ECU TCP port (default: the params file)', 'int', 'port'),
            Argument('data_types', "ECU Set Filter after every connect: '0x2205, 0x2280' or "
                     "'all' (default: the params file)", 'str', 'data_types'),
            Argument('sim_scanners', 'scanners of the emulator with sim:=true', 'str', None,
                     '4'),
            Argument('sim_points', 'points per 0x2205 of the emulator with sim:=true', 'str',
                     None, '60000')),
           free_ports=_ibeo_ports),
)}

#: arguments of every launch file (per-node and all.launch.py)
COMMON_ARGUMENTS = (
    Argument('namespace', "namespace of the node and its topics (default: the source name; "
                          "'/' for none)"),
    Argument('params_file', 'your parameters file, applied on top of config/<source>.yaml of '
                            'the installed package (the keys it holds win; default: none)'),
    Argument('sim', "'true': also start the built-in emulator on 127.0.0.1", 'bool',
             None, 'false'),
    Argument('use_sim_time', "'true': stamp with /clock (default: the params file)", 'bool',
             'use_sim_time'),
    Argument('log_level', 'ROS log level of the node: debug, info, warn, error', 'str',
             None, 'info'),
)


# -- parameters in effect ----------------------------------------------------------------------
def section_keys(node_name: str, namespace: str = '') -> tuple[str, ...]:
    """The params-file section names that apply to node ``node_name`` in ``namespace``, in the
    order rcl applies them (a plain ``node_name:`` section only matches the root namespace)."""
    ns = namespace.strip('/')
    exact = (f'/{ns}/{node_name}', f'{ns}/{node_name}') if ns else (node_name, f'/{node_name}')
    return ('/**', '**', f'/**/{node_name}', *exact)


def file_parameters(path, node_name: str, namespace: str = '') -> dict:
    """``ros__parameters`` of the sections of params file ``path`` that apply to the node."""
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f'{path}: not a YAML params file ({_yaml_problem(exc)})') from None
    if not isinstance(data, dict):
        raise ValueError(f'{path}: not a params file (no "<node>: ros__parameters:" sections)')
    out: dict = {}
    for key in section_keys(node_name, namespace):
        section = data.get(key)
        if isinstance(section, dict):
            out.update(_flatten(section.get('ros__parameters') or {}))
    return out


def _flatten(params: dict, prefix: str = '') -> dict:
    out = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f'{prefix}{key}.'))
        else:
            out[f'{prefix}{key}'] = value
    return out


@dataclass
class Plan:
    """What starting one source means: the node's namespace, params files (in order, later
    ones win) and overrides, and the emulator's arguments (when sim). ``left_out``: why an
    optional source is not started (None: it is)."""
    source: Source
    namespace: str
    params_files: tuple
    overrides: dict
    effective: dict
    emulator_args: Optional[list[str]]
    log_level: str = 'info'
    left_out: Optional[str] = None


def plan(source: Source, values: dict, default_params_file, *, extra_files=(),
         parameters: Optional[dict] = None, pick_port: Optional[Callable] = None,
         optional: bool = False) -> Plan:
    """Resolve launch-argument ``values`` (name → text; ``''`` or absent: not given).

    ``default_params_file`` (the package's config), then the user's ``params_file``, then
    ``extra_files``; their parameters stay unless an argument was given. With ``sim`` the
    emulator gets the ports the node will really use, and the node what it needs for the
    emulator. The runner adds ``parameters`` (``--set``) and ``pick_port`` (``--free-ports``:
    the source's ports moved to free ones). ``optional`` (the whole suite): a source whose
    ``required`` parameter is empty is left out.
    """
    def given(name: str) -> str:
        value = values.get(name, NOT_GIVEN)
        return '' if value is None else str(value)

    files = tuple(str(f) for f in (default_params_file, given('params_file'), *extra_files) if f)
    namespace = given('namespace')
    namespace = source.name if namespace == NOT_GIVEN else namespace.strip('/')
    from_file: dict = {}
    for path in files:
        from_file.update(file_parameters(path, source.node_name, namespace))
    overrides: dict = {}
    arg_values: dict = {}
    for arg in (*COMMON_ARGUMENTS, *source.arguments):
        text = given(arg.name)
        if arg.parameter is None:
            arg_values[arg.name] = text or arg.default
            continue
        if text:
            try:
                overrides[arg.parameter] = arg.convert(text)
            except ValueError as exc:
                raise ValueError(f'{source.name}: argument {arg.name}:={text}: {exc}') from None
        arg_values[arg.name] = text
    # in a namespace named like the topic prefix, the prefix would say it twice
    if namespace and from_file.get('topic_prefix') == namespace \
            and 'topic_prefix' not in overrides:
        overrides['topic_prefix'] = ''
    overrides.update(parameters or {})
    effective = {**from_file, **overrides}
    if pick_port is not None:
        moved = source.free_ports(effective, pick_port)
        overrides.update(moved)
        effective.update(moved)
    sim = as_bool(arg_values.get('sim') or 'false')
    emulator_args = None
    if sim:
        extra = source.sim_parameters(effective, arg_values)
        overrides.update(extra)
        effective.update(extra)
        if source.emulator is not None:
            emulator_args = source.emulator_args(effective, arg_values)
    left_out = None
    if optional and source.required and not effective.get(source.required):
        left_out = f'{source.executable} not started: no {source.required} given'
    return Plan(source, namespace, files, overrides, effective, emulator_args,
                arg_values.get('log_level') or 'info', left_out)


def parse_set(items, sources=None) -> dict[str, dict]:
    """``SRC.PARAM=VALUE`` items (runner ``--set``) → {source: {param: value}} (YAML values)."""
    out: dict[str, dict] = {}
    sources = SOURCES if sources is None else sources
    for item in items or ():
        key, sep, text = item.partition('=')
        src, dot, param = key.partition('.')
        if not sep or not dot or not param or src not in sources:
            raise ValueError(f'--set {item!r}: expected SOURCE.PARAMETER=VALUE '
                             f'with SOURCE one of {sorted(sources)}')
        try:
            out.setdefault(src, {})[param] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f'--set {item!r}: the value is not YAML ({_yaml_problem(exc)})') \
                from None
    return out


def _yaml_problem(exc: Exception) -> str:
    """The first line of a YAML error, with its line and column where known."""
    mark = getattr(exc, 'problem_mark', None)
    what = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
    return f'{what} at line {mark.line + 1}, column {mark.column + 1}' if mark else what
