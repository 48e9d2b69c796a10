"""The suite's table of sources is what each source declares (``SOURCE`` in its package's
``__init__.py``, core/source.py): every source package declares one, each entry names files and
executables that exist, and tools/ names no source (issue #29: adding a source touches its own
folder plus CMakeLists, setup.py, launch and config)."""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from ros_sim_bridge.core.source import Source
from ros_sim_bridge.tools import demo, suite

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / 'ros_sim_bridge'
PACKAGES = sorted(p.name for p in ROOT.iterdir() if (p / '__init__.py').exists()
                  and p.name not in ('core', 'ros', 'tools'))
ALL = {**suite.SOURCES, **suite.EXTRA_SOURCES}


def cmake_executables() -> set[str]:
    text = (REPO / 'CMakeLists.txt').read_text()
    block = re.search(r'set\(SIM_BRIDGE_EXECUTABLES(.*?)\)', text, re.S).group(1)
    return {pair.split('=', 1)[0] for pair in block.split() if '=' in pair}


def test_every_source_package_declares_its_entry():
    assert PACKAGES == ['carla', 'ibeo', 'monodrive', 'morai', 'rflysim']
    for name in PACKAGES:
        module = importlib.import_module(f'ros_sim_bridge.{name}')
        assert isinstance(module.SOURCE, Source), name
        assert suite.SOURCES[module.SOURCE.name] is module.SOURCE
    assert list(suite.SOURCES) == ['rflysim', 'morai', 'ibeo', 'monodrive', 'carla']
    assert list(suite.EXTRA_SOURCES) == ['ibeo_ecu']
    assert suite.SOURCE_PACKAGES['ibeo_ecu'] == 'ros_sim_bridge.ibeo'


@pytest.mark.parametrize('name', sorted(ALL))
def test_an_entry_names_what_exists(name):
    s = ALL[name]
    exes = cmake_executables()
    assert s.executable in exes and (s.emulator is None or s.emulator in exes)
    assert (REPO / 'config' / s.config).exists() and (REPO / 'launch' / s.launch_file).exists()
    assert s.docs and (REPO / 'docs' / s.docs).exists()
    if s.demo_check or s.demo_driver:
        module = importlib.import_module(suite.demo_module(s))
        assert not s.demo_check or callable(module.run)
        assert not s.demo_driver or callable(getattr(module, s.demo_driver))
    params = {arg.parameter for arg in s.arguments if arg.parameter}
    for key, _ in s.demo_set:
        assert key in params or key in suite.file_parameters(REPO / 'config' / s.config,
                                                              s.node_name, s.name), key


def test_the_demo_checks_come_from_the_entries():
    assert demo.CHECKS == {'rflysim': 'ros_sim_bridge.rflysim.ros.demo',
                           'morai': 'ros_sim_bridge.morai.ros.demo',
                           'lux': 'ros_sim_bridge.ibeo.ros.demo',
                           'monodrive': 'ros_sim_bridge.monodrive.ros.demo',
                           'carla': 'ros_sim_bridge.carla.ros.demo'}


def test_tools_name_no_source_in_code():
    """tools/ reaches the sources through the table: no string of its code (docstrings and
    help texts' examples aside) names a source's package or module."""
    found = []
    for path in sorted((ROOT / 'tools').glob('*.py')):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.search(r'ros_sim_bridge\.(' + '|'.join(PACKAGES) + r')\b', node.value):
                found.append(f'{path.name}:{node.lineno}: {node.value[:60]!r}')
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module or '']
                found += [f'{path.name}:{node.lineno}: import {n}' for n in names
                          if n.split('.')[:2] in ([['ros_sim_bridge', p] for p in PACKAGES])]
            if isinstance(node, ast.ImportFrom) and node.module == 'ros_sim_bridge':
                found += [f'{path.name}:{node.lineno}: from ros_sim_bridge import {a.name}'
                          for a in node.names if a.name in PACKAGES]
    assert not found, 'tools/ names sources:\n' + '\n'.join(found)
