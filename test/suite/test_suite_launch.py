"""Every launch file, evaluated without ``ros2 launch`` (issue #14).

``launch`` / ``launch_ros`` are not on PyPI: where they are absent, small stand-ins record what
the launch file builds (only the public API the files use; anything else fails the import).
The evaluation then does what ``ros2 launch`` does: declared arguments get their defaults or the
given values, conditions are evaluated, OpaqueFunctions run. Checked: every executable, config
file and parameter named exists and matches the node's PARAMETERS table; every
LaunchConfiguration used is declared and described; a params file wins over argument defaults;
``copter_ids:=2`` becomes [2]; README and docs/ argument examples name declared arguments.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import shlex
import sys
import types
from pathlib import Path

import pytest
import yaml

from ros_sim_bridge.tools import suite

REPO = Path(__file__).resolve().parents[2]
LAUNCH_DIR = REPO / 'launch'
LAUNCH_FILES = sorted(p.name for p in LAUNCH_DIR.glob('*.launch.py'))
CMAKE = (REPO / 'CMakeLists.txt').read_text()
EXECUTABLES = dict(re.findall(r'^\s+(\w+)=([\w.]+)\s*$', CMAKE, re.M))
OTHER_PACKAGES = {('rviz2', 'rviz2')}   # executables of other ROS packages a launch file starts


# -- stand-ins for launch / launch_ros (public API only) ---------------------------------------
class _Recorded:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.condition = kwargs.get('condition')


class LaunchConfiguration:
    def __init__(self, name, default=None):
        self.name = name
        USED.add(name)

    def perform(self, context):
        return context.launch_configurations[self.name]


class IfCondition:
    def __init__(self, predicate):
        self.predicate = predicate

    def evaluate(self, context):
        text = _text(self.predicate, context).strip().lower()
        if text not in ('true', 'false', '1', '0'):
            raise ValueError(f'IfCondition: {text!r} is not a boolean')
        return text in ('true', '1')


class DeclareLaunchArgument(_Recorded):
    def __init__(self, name, *, default_value=None, description=None, choices=None, **kw):
        super().__init__(name, **kw)
        self.name, self.default_value, self.description = name, default_value, description


class OpaqueFunction(_Recorded):
    def __init__(self, *, function, args=None, kwargs=None, **kw):
        super().__init__(**kw)
        self.function, self.fargs, self.fkwargs = function, args or [], kwargs or {}


class Node(_Recorded):
    pass


class LogInfo(_Recorded):
    def __init__(self, *, msg, **kw):
        super().__init__(**kw)
        self.msg = msg


class LaunchDescription:
    def __init__(self, entities=()):
        self.entities = list(entities)


class IncludeLaunchDescription(_Recorded):
    pass


class PythonLaunchDescriptionSource:
    def __init__(self, path):
        self.path = path


USED: set[str] = set()


def _text(value, context) -> str:
    if isinstance(value, LaunchConfiguration):
        return value.perform(context)
    if isinstance(value, (list, tuple)):
        return ''.join(_text(v, context) for v in value)
    return str(value)


def _install_stand_ins(monkeypatch):
    """sys.modules entries for launch / launch_ros, only where the real modules are absent."""
    if importlib.util.find_spec('launch') is not None:
        pytest.skip('the real launch package is installed: use `ros2 launch --show-args` and '
                    'the launch_testing route there')   # the stand-ins stay the ones we test
    mods = {
        'launch': {'LaunchDescription': LaunchDescription},
        'launch.actions': {'DeclareLaunchArgument': DeclareLaunchArgument,
                           'OpaqueFunction': OpaqueFunction, 'LogInfo': LogInfo,
                           'IncludeLaunchDescription': IncludeLaunchDescription},
        'launch.conditions': {'IfCondition': IfCondition},
        'launch.substitutions': {'LaunchConfiguration': LaunchConfiguration},
        'launch.launch_description_sources': {
            'PythonLaunchDescriptionSource': PythonLaunchDescriptionSource},
        'launch_ros': {},
        'launch_ros.actions': {'Node': Node},
    }
    for name, attrs in mods.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        monkeypatch.setitem(sys.modules, name, module)
    # the helper module imports launch at import time: import it afresh under the stand-ins
    monkeypatch.delitem(sys.modules, 'ros_sim_bridge.tools.launch_suite', raising=False)
    # the package share folder is the source tree's layout (launch/, config/)
    share = types.ModuleType('ament_index_python.packages')

    def get_package_share_directory(package):
        assert package == 'ros_sim_bridge', package
        return str(REPO)
    share.get_package_share_directory = get_package_share_directory
    import ament_index_python.packages as real
    share.get_package_prefix = real.get_package_prefix
    monkeypatch.setitem(sys.modules, 'ament_index_python.packages', share)


class Context:
    def __init__(self, configurations):
        self.launch_configurations = dict(configurations)


def load(name: str):
    spec = importlib.util.spec_from_file_location(name.replace('.', '_'), LAUNCH_DIR / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description()


def evaluate(name: str, given: dict | None = None, logged: list | None = None):
    """What `ros2 launch ros_sim_bridge <name> k:=v …` would start: (declared args, nodes);
    the LogInfo lines it writes are appended to ``logged``."""
    USED.clear()
    declared: dict[str, DeclareLaunchArgument] = {}
    nodes: list[Node] = []
    context = Context({})
    given = dict(given or {})

    def visit(entities):
        for entity in entities:
            if isinstance(entity, DeclareLaunchArgument):
                declared[entity.name] = entity
                if entity.name not in context.launch_configurations:
                    context.launch_configurations[entity.name] = (
                        given[entity.name] if entity.name in given else entity.default_value)
                continue
            if entity.condition is not None and not entity.condition.evaluate(context):
                continue
            if isinstance(entity, OpaqueFunction):
                visit(entity.function(context, *entity.fargs, **entity.fkwargs) or [])
            elif isinstance(entity, IncludeLaunchDescription):
                visit(load_path(entity.args[0].path).entities)
            elif isinstance(entity, Node):
                nodes.append(entity)
            elif isinstance(entity, LogInfo):
                (logged if logged is not None else []).append(entity.msg)
            else:
                raise AssertionError(f'{name}: unexpected launch entity {entity!r}')

    context.launch_configurations.update(given)  # command-line values are set first
    visit(load(name).entities)
    return declared, nodes


def load_path(path: str):
    return load(Path(path).name)


@pytest.fixture
def stand_ins(monkeypatch):
    _install_stand_ins(monkeypatch)


def node_named(nodes, executable):
    found = [n for n in nodes if n.kwargs['executable'] == executable]
    assert len(found) == 1, f'{executable}: {len(found)} nodes'
    return found[0]


def node_parameters(node) -> tuple[list[str], dict]:
    files = [p for p in node.kwargs.get('parameters', []) if isinstance(p, str)]
    overrides: dict = {}
    for p in node.kwargs.get('parameters', []):
        if isinstance(p, dict):
            overrides.update(p)
    return files, overrides


def declared_parameters(executable: str) -> dict:
    return importlib.import_module(EXECUTABLES[executable]).PARAMETERS


# -- tests -------------------------------------------------------------------------------------
ALL_SOURCES = [*suite.SOURCES.values(), *suite.EXTRA_SOURCES.values()]


def test_every_source_has_its_files():
    for source in ALL_SOURCES:
        assert (REPO / 'config' / source.config).exists(), source.config
        assert (REPO / 'launch' / source.launch_file).exists(), source.launch_file
        assert source.executable in EXECUTABLES
        assert source.emulator is None or source.emulator in EXECUTABLES
        declared = declared_parameters(source.executable)
        for arg in source.arguments:
            if arg.parameter is not None:
                assert arg.parameter in declared, f'{source.name}: {arg.parameter}'


@pytest.mark.parametrize('name', LAUNCH_FILES)
@pytest.mark.parametrize('sim', ['false', 'true'])
def test_launch_file_names_real_things(stand_ins, name, sim):
    declared, nodes = evaluate(name, {'sim': sim, 'rviz': 'true'})
    assert nodes, f'{name} starts nothing'
    assert 'namespace' in declared or name == 'all.launch.py'
    for arg in declared.values():
        assert arg.description and 'no description' not in arg.description, arg.name
    assert USED <= set(declared), f'{name}: LaunchConfiguration not declared: {USED - set(declared)}'
    for node in nodes:
        package, exe = node.kwargs['package'], node.kwargs['executable']
        if (package, exe) in OTHER_PACKAGES:
            continue
        assert package == 'ros_sim_bridge' and exe in EXECUTABLES, exe
        files, overrides = node_parameters(node)
        if exe in {s.emulator for s in ALL_SOURCES}:
            assert sim == 'true' and not files
            continue
        assert files == [str(REPO / 'config' / suite.SOURCES.get(
            node.kwargs['namespace'], suite.EXTRA_SOURCES.get(node.kwargs['namespace'])).config)]
        params = declared_parameters(exe)
        section = suite.file_parameters(files[0], node.kwargs['name'], node.kwargs['namespace'])
        assert section, f'{files[0]} has no section for {node.kwargs["name"]} in any namespace'
        for key, value in {**section, **overrides}.items():
            if key == 'use_sim_time':
                continue
            assert key in params, f'{exe}: no parameter {key}'
            assert type(value) is type(params[key][0]), f'{exe}: {key} {value!r}'
    emulators = {n.kwargs['executable'] for n in nodes} & {s.emulator for s in ALL_SOURCES}
    started = {n.kwargs['executable'] for n in nodes}
    with_emulator = [s for s in ALL_SOURCES if s.executable in started and s.emulator]
    assert bool(emulators) == (sim == 'true' and bool(with_emulator))


@pytest.mark.parametrize('source', [*suite.SOURCES, *suite.EXTRA_SOURCES])
def test_namespace_and_default_topics(stand_ins, source):
    src = suite.SOURCES.get(source) or suite.EXTRA_SOURCES[source]
    _, nodes = evaluate(src.launch_file)
    node = node_named(nodes, src.executable)
    assert node.kwargs['namespace'] == source
    files, overrides = node_parameters(node)
    # the params file alone, except the topic prefix: config/<source>.yaml's is the namespace
    # (as the node's default is), so it is left out there (issue #26)
    assert overrides == {'topic_prefix': ''}
    _, nodes = evaluate(src.launch_file, {'namespace': 'robot1/' + source})
    assert node_named(nodes, src.executable).kwargs['namespace'] == 'robot1/' + source


def test_params_file_wins_over_argument_defaults(stand_ins, tmp_path):
    """yaml port 12202 stays 12202; yaml copter_ids [1, 2] stays [1, 2] (issue #14); the
    user's file comes after the package's config (issue #26)."""
    ibeo = tmp_path / 'ibeo.yaml'
    ibeo.write_text(yaml.safe_dump({'ibeo_lux': {'ros__parameters': {'port': 12202}}}))
    _, nodes = evaluate('ibeo.launch.py', {'params_file': str(ibeo), 'namespace': '/'})
    files, overrides = node_parameters(node_named(nodes, 'ibeo_lux'))
    assert files == [str(REPO / 'config' / 'ibeo.yaml'), str(ibeo)]
    assert overrides == {}
    rfly = tmp_path / 'rflysim.yaml'
    rfly.write_text(yaml.safe_dump({'/**/rflysim_truth': {'ros__parameters': {
        'copter_ids': [1, 2], 'topic_prefix': 'rflysim'}}}))
    _, nodes = evaluate('rflysim.launch.py', {'params_file': str(rfly), 'sim': 'true'})
    files, overrides = node_parameters(node_named(nodes, 'rflysim_truth'))
    assert files[-1] == str(rfly) and 'copter_ids' not in overrides
    # the emulator plays the vehicles the node listens for
    args = node_named(nodes, 'rflysim_sim').kwargs['arguments']
    assert args[args.index('--ids') + 1] == '1,2'
    # with the same file, given arguments do override
    _, nodes = evaluate('ibeo.launch.py', {'params_file': str(ibeo), 'port': '12555',
                                           'sim': 'true'})
    # (and in namespace /ibeo the package's topic prefix 'ibeo' is left out)
    assert node_parameters(node_named(nodes, 'ibeo_lux'))[1] == {
        'port': 12555, 'parent_frame_id': 'map', 'topic_prefix': ''}
    args = node_named(nodes, 'ibeo_lux_sim').kwargs['arguments']
    assert args[args.index('--port') + 1] == '12555'


@pytest.mark.parametrize('text, expected', [('2', [2]), ('[1,2,3]', [1, 2, 3]),
                                            ('1,2', [1, 2]), ('[4]', [4])])
def test_copter_ids_forgives_what_users_type(stand_ins, text, expected):
    _, nodes = evaluate('rflysim.launch.py', {'copter_ids': text, 'sim': 'true'})
    assert node_parameters(node_named(nodes, 'rflysim_truth'))[1]['copter_ids'] == expected
    args = node_named(nodes, 'rflysim_sim').kwargs['arguments']
    assert args[args.index('--ids') + 1] == ','.join(map(str, expected))


def test_bad_argument_is_one_clear_error(stand_ins):
    with pytest.raises(ValueError, match='copter_ids:=x'):
        evaluate('rflysim.launch.py', {'copter_ids': 'x'})


def test_morai_sim_moves_the_privileged_ego_port(stand_ins):
    _, nodes = evaluate('morai.launch.py', {'sim': 'true'})
    overrides = node_parameters(node_named(nodes, 'morai_bridge'))[1]
    assert overrides['listen_port.ego_status'] == 9091
    args = node_named(nodes, 'morai_sim').kwargs['arguments']
    assert args[args.index('--ego-status-port') + 1] == '9091'
    assert args[args.index('--object-info-port') + 1] == '7505'   # config/morai.yaml
    _, nodes = evaluate('morai.launch.py')                       # real simulator: the file
    assert 'listen_port.ego_status' not in node_parameters(node_named(nodes, 'morai_bridge'))[1]


def test_all_launch_switches_sources_and_shares_sim(stand_ins):
    _, nodes = evaluate('all.launch.py', {'carla_file': '/data/rec.log'})
    exes = {n.kwargs['executable'] for n in nodes}
    assert exes == {s.executable for s in suite.SOURCES.values()}
    for s in suite.SOURCES.values():
        assert node_named(nodes, s.executable).kwargs['namespace'] == s.name
    _, nodes = evaluate('all.launch.py', {'ibeo': 'false', 'sim': 'true', 'rviz': 'true',
                                          'rflysim_copter_ids': '3', 'use_sim_time': 'true'})
    exes = {n.kwargs['executable'] for n in nodes}
    assert 'ibeo_lux' not in exes and 'ibeo_lux_sim' not in exes
    assert {'rflysim_sim', 'morai_sim', 'rviz2', 'carla_replayer'} <= exes
    rviz = node_named(nodes, 'rviz2').kwargs['arguments']
    assert rviz[0] == '-d' and isinstance(rviz[1], LaunchConfiguration)
    overrides = node_parameters(node_named(nodes, 'rflysim_truth'))[1]
    assert overrides['copter_ids'] == [3] and overrides['use_sim_time'] is True


def test_all_launch_without_a_recording_leaves_carla_out_in_one_line(stand_ins):
    """carla_replayer needs a .log: without one (and without sim:=true) all.launch.py does not
    start it (it would die with FATAL), and says so once (issue #26)."""
    logged = []
    _, nodes = evaluate('all.launch.py', logged=logged)
    exes = {n.kwargs['executable'] for n in nodes}
    assert exes == {s.executable for s in suite.SOURCES.values()} - {'carla_replayer'}
    assert len(logged) == 1 and 'carla_replayer not started' in logged[0] \
        and 'carla_file:=' in logged[0]
    _, nodes = evaluate('carla.launch.py')   # asked for by name: it starts and says what is missing
    assert node_named(nodes, 'carla_replayer')


def test_runner_leaves_carla_out_without_a_recording(capsys):
    from ros_sim_bridge.tools.run import Suite
    names = [p.source.name for p in Suite().plans]
    assert names == [s for s in suite.SOURCES if s != 'carla']
    assert 'carla_replayer not started' in capsys.readouterr().err
    assert [p.source.name for p in Suite(only=['carla']).plans] == ['carla']
    assert 'carla' in [p.source.name for p in Suite(sim=True).plans]


def test_old_ibeo_lux_launch_file_is_the_new_one(stand_ins):
    declared_old, nodes_old = evaluate('ibeo_lux.launch.py', {'host': '127.0.0.5'})
    declared_new, _ = evaluate('ibeo.launch.py')
    assert set(declared_old) == set(declared_new)
    assert node_parameters(node_named(nodes_old, 'ibeo_lux'))[1]['host'] == '127.0.0.5'


def readme_launch_examples():
    """The ``ros2 launch`` lines of the README and of every page under docs/."""
    pages = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
    text = '\n'.join(p.read_text() for p in pages)
    for line in text.splitlines():
        match = re.search(r'ros2 launch ros_sim_bridge ([\w.]+\.launch\.py)([^`]*)', line)
        if match:
            yield match.group(1), match.group(2).split('#')[0].strip()


@pytest.mark.parametrize('name, rest', list(readme_launch_examples()))
def test_readme_launch_examples_parse(stand_ins, name, rest):
    assert (LAUNCH_DIR / name).exists(), name
    given = {}
    for token in shlex.split(re.sub(r'<[^>]*>', 'PLACEHOLDER', rest)):
        if token.startswith('-'):
            continue
        key, sep, value = token.partition(':=')
        assert sep, f'README/docs: {token!r} is not name:=value'
        given[key] = '' if value == 'PLACEHOLDER' else value   # a placeholder: not given
        if key.endswith('params_file') and not Path(value).exists():   # the user's own file
            source = key[:-len('_params_file')] or name.split('.')[0]
            given[key] = str(REPO / 'config' / suite.SOURCES[source].config)
    declared, _ = evaluate(name, given)
    for key in given:
        assert key in declared, f'README/docs: {name} has no argument {key!r} (ros2 launch ignores it)'


@pytest.mark.parametrize('text, expected', [(2, [2]), ('2', [2]), ('[1, 2]', [1, 2]),
                                            ('1,2,3', [1, 2, 3]), ([4, 5], [4, 5])])
def test_as_int_list(text, expected):
    assert suite.as_int_list(text) == expected


def test_as_int_list_refuses_words():
    with pytest.raises(ValueError):
        suite.as_int_list('one')


def test_runner_set_items():
    assert suite.parse_set(['rflysim.copter_ids=[1,2]', 'ibeo.host=127.0.0.2',
                            'ibeo.port=1']) == {
        'rflysim': {'copter_ids': [1, 2]}, 'ibeo': {'host': '127.0.0.2', 'port': 1}}
    for bad in ('copter_ids=[1]', 'nosuch.port=1', 'rflysim.base_port'):
        with pytest.raises(ValueError):
            suite.parse_set([bad], suite.SOURCES)


def test_runner_plan_matches_the_launch_plan(stand_ins):
    """ros_sim_bridge_run and the launch files resolve a source the same way (one table)."""
    from ros_sim_bridge.tools.run import Suite
    runner = Suite(sim=True, only=['morai'])
    _, nodes = evaluate('morai.launch.py', {'sim': 'true'})
    plan = runner.plans[0]
    assert plan.namespace == node_named(nodes, 'morai_bridge').kwargs['namespace']
    assert plan.overrides == node_parameters(node_named(nodes, 'morai_bridge'))[1]
    assert plan.emulator_args == node_named(nodes, 'morai_sim').kwargs['arguments']


def test_runner_config_file_applies_after_the_source_config(tmp_path):
    from ros_sim_bridge.tools.launcher import config_file
    from ros_sim_bridge.tools.run import Suite
    mine = tmp_path / 'mine.yaml'
    mine.write_text(yaml.safe_dump({'/**/rflysim_truth': {'ros__parameters': {
        'copter_ids': [4, 5]}}, 'unrelated_node': {'ros__parameters': {'x': 1}}}))
    plan = Suite(sim=True, only=['rflysim'], configs=[str(mine)]).plans[0]
    assert plan.params_files == (str(config_file('rflysim.yaml')), str(mine))
    assert plan.effective['copter_ids'] == [4, 5]
    assert plan.effective['base_port'] == 30101               # config/rflysim.yaml
    assert plan.emulator_args[plan.emulator_args.index('--ids') + 1] == '4,5'
    plan = Suite(sim=True, only=['rflysim'], configs=[str(mine)],
                 settings={'rflysim': {'copter_ids': [7]}}).plans[0]
    assert plan.overrides['copter_ids'] == [7]                # --set wins over files


def test_free_ports_move_every_monodrive_sensor_port_too():
    """--free-ports (make demo, tests) moves the sensors' listen ports, not only the control
    port: a simulator or another suite on the default ports is never connected to."""
    import json
    from ros_sim_bridge.monodrive.ros.node import resolve_config_path
    from ros_sim_bridge.tools.run import Suite
    plan = Suite(sim=True, only=['monodrive'], free_ports=True).plans[0]
    default = json.load(open(resolve_config_path(
        suite.file_parameters(plan.params_files[0], 'monodrive_client', 'monodrive')
        ['sensors_config'])))
    moved = json.load(open(plan.overrides['sensors_config']))
    assert [s['type'] for s in moved] == [s['type'] for s in default]
    old = {s['listen_port'] for s in default if s.get('listen_port')}
    new = [s['listen_port'] for s in moved if s.get('listen_port')]
    assert len(new) == len(old) and not old & set(new) and len(set(new)) == len(new)
    assert plan.overrides['port'] != 8999
