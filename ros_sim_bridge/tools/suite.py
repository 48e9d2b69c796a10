"""The suite's one table of sources, shared by ``launch/*.launch.py`` and ``ros_sim_bridge_run``.

A source is one driver node and its built-in emulator: ``config/<name>.yaml`` holds the node's
parameters, ``launch/<name>.launch.py`` starts it, the suite puts it in namespace ``<name>``.
Each source declares its entry (:class:`~ros_sim_bridge.core.source.Source`) as ``SOURCE`` in
its package's ``__init__.py``; :data:`SOURCES` collects them, so this module names none.

Everything here is plain Python (no rclpy, no ``launch``): launch files import it inside
``ros2 launch``, the runner and the tests import it anywhere.

The rule for parameters (issue #14, #26): the package's ``config/<source>.yaml`` first, the
user's params file on top of it (the keys it holds win), then a launch argument or ``--set``,
which overrides a parameter only when the user gave it (its default is the empty string ``''``).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import yaml

from ros_sim_bridge.core.source import NOT_GIVEN, Argument, Source

PACKAGE = 'ros_sim_bridge'


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


def convert(arg: Argument, text):
    """The value of launch argument ``arg`` given as ``text``."""
    return CONVERTERS[arg.kind](text)


#: the interface packages beside the layers: no source
_NOT_SOURCES = ('core', 'ros', 'tools', 'msg', 'srv')


def _registered() -> tuple[dict[str, Source], dict[str, Source], dict[str, str]]:
    """Every package ``ros_sim_bridge/<name>/`` that declares a ``SOURCE`` (and maybe
    ``EXTRA_SOURCES``): (sources, extra sources, source name → package), in ``order``."""
    import ros_sim_bridge
    sources, extra, packages = [], [], {}
    for info in pkgutil.iter_modules(ros_sim_bridge.__path__):
        if not info.ispkg or info.name in _NOT_SOURCES:
            continue
        module = importlib.import_module(f'{PACKAGE}.{info.name}')
        if getattr(module, 'SOURCE', None) is None:
            continue
        sources.append(module.SOURCE)
        extra.extend(getattr(module, 'EXTRA_SOURCES', ()))
        for s in (module.SOURCE, *getattr(module, 'EXTRA_SOURCES', ())):
            packages[s.name] = module.__name__
    ordered = lambda ss: {s.name: s for s in sorted(ss, key=lambda s: (s.order, s.name))}  # noqa
    return ordered(sources), ordered(extra), packages


#: The suite's sources, each declared by its package (``SOURCE`` in
#: ``ros_sim_bridge/<source>/__init__.py``), and the sources with a launch file of their own
#: that the suite (all.launch.py, ros_sim_bridge_run) does not start by default
#: (``ros_sim_bridge_run --only`` takes them): ``ibeo_ecu`` is the ``ibeo_lux`` node with an
#: Ibeo ECU's defaults (an alternative to the ``ibeo`` source, on the same port).
SOURCES, EXTRA_SOURCES, SOURCE_PACKAGES = _registered()


def demo_module(source: Source) -> str:
    """The module of a source's demo: ``<source package>.ros.demo``."""
    return f'{SOURCE_PACKAGES[source.name]}.ros.demo'


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
                overrides[arg.parameter] = convert(arg, text)
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
        from ros_sim_bridge.ros.params import resolve_config_path
        moved = source.free_ports(effective, pick_port, resolve_config_path)
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
