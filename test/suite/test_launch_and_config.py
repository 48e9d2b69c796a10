"""Launch and config files are checked statically here (no `launch` package on PyPI):
every launched executable is installed, every params file exists, and every parameter in a
config file is declared by its node with the same type (rclpy refuses 1 for a float)."""
import ast
import importlib
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CMAKE = (REPO / 'CMakeLists.txt').read_text()
EXECUTABLES = dict(re.findall(r'^\s+(\w+)=([\w.]+)\s*$', CMAKE, re.M))
LAUNCH_FILES = sorted((REPO / 'launch').glob('*.launch.py'))
CONFIG_FILES = sorted((REPO / 'config').glob('*.yaml'))


def test_executables_point_at_modules_with_main():
    assert EXECUTABLES, 'no executables registered in CMakeLists.txt'
    for name, module in EXECUTABLES.items():
        path = REPO / (module.replace('.', '/') + '.py')
        if not path.exists():
            pytest.fail(f'executable {name}: {path} missing')
        assert 'def main(' in path.read_text(), f'{module} has no main()'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file(path):
    tree = ast.parse(path.read_text())
    assert any(isinstance(n, ast.FunctionDef) and n.name == 'generate_launch_description'
               for n in tree.body)
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        for kw in call.keywords:
            if kw.arg == 'executable' and isinstance(kw.value, ast.Constant):
                assert kw.value.value in EXECUTABLES, f'{kw.value.value} is not installed'
            if kw.arg == 'package' and isinstance(kw.value, ast.Constant):
                assert kw.value.value == 'ros_sim_bridge'
    for const in (n for n in ast.walk(tree) if isinstance(n, ast.Constant)):
        if isinstance(const.value, str) and const.value.endswith('.yaml'):
            assert (REPO / 'config' / const.value).exists(), const.value


@pytest.mark.parametrize('path', CONFIG_FILES, ids=lambda p: p.name)
def test_config_parameters_are_declared_with_their_types(path):
    data = yaml.safe_load(path.read_text())
    for node_name, section in data.items():
        params = section['ros__parameters']
        module = importlib.import_module(EXECUTABLES[node_name.rpartition('/')[2]])
        declared = module.PARAMETERS
        for key, value in params.items():
            assert key in declared, f'{path.name}: {node_name} declares no parameter {key!r}'
            default = declared[key][0]
            assert type(value) is type(default), \
                f'{path.name}: {key} is {type(value).__name__}, declared {type(default).__name__}'
            if isinstance(default, list) and default and value:
                assert type(value[0]) is type(default[0]), f'{path.name}: {key} element type'


def test_ibeo_config_lists_every_ibeo_lux_parameter():
    """config/ibeo.yaml is the full list of ibeo_lux's parameters: config/ibeo_ecu.yaml refers to
    it for the rest, and ros_sim_bridge_run --set calls a name it does not list a typo."""
    params = yaml.safe_load((REPO / 'config' / 'ibeo.yaml').read_text())
    listed = params['/**/ibeo_lux']['ros__parameters']
    declared = importlib.import_module(EXECUTABLES['ibeo_lux']).PARAMETERS
    assert sorted(set(declared) - set(listed)) == []


@pytest.mark.parametrize('path', CONFIG_FILES, ids=lambda p: p.name)
def test_node_defaults_are_the_packaged_config(path):
    """A node started without a params file (`ros2 run`) behaves as under launch, where
    config/<source>.yaml comes first: topic prefix, sensor files, frames … (issue #26)."""
    data = yaml.safe_load(path.read_text())
    for node_name, section in data.items():
        declared = importlib.import_module(EXECUTABLES[node_name.rpartition('/')[2]]).PARAMETERS
        for key, value in section['ros__parameters'].items():
            default = declared[key][0]
            if isinstance(default, float):
                assert value == pytest.approx(default, rel=1e-6), f'{path.name}: {key}'
            else:
                assert value == default, \
                    f'{path.name}: {key} is {value!r}, the node says {default!r}'
