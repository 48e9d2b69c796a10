"""setup.py's job: the codecs and emulators as a plain Python distribution, usable without ROS."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter in which every ROS module fails to import.
NO_ROS = r'''
import importlib, importlib.abc, sys
class NoRos(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split('.')[0]
        if top in ('rclpy', 'rosidl_runtime_py', 'rpyutils') or top.endswith('_msgs') \
                or top.startswith('rosidl') or (top == 'ros_sim_bridge' and name.endswith('.msg')):
            raise ImportError(f'{name}: no ROS here')
sys.meta_path.insert(0, NoRos())
sys.path.insert(0, sys.argv[1])
import pkgutil, ros_sim_bridge
assert ros_sim_bridge.__file__.startswith(sys.argv[1]), ros_sim_bridge.__file__
names = [m.name for m in pkgutil.walk_packages(ros_sim_bridge.__path__, 'ros_sim_bridge.')]
for name in names:
    importlib.import_module(name)
from ros_sim_bridge.rflysim import codec as rflysim
from ros_sim_bridge.rflysim.emulator.scene import Scene
state = Scene([1]).state(1, 0.5)
back = rflysim.decode(rflysim.encode_truth(state, 'sout2simulator'))
assert back.copter_id == 1 and abs(back.pos_ned[0] - state.pos_ned[0]) < 1e-9
print(len(names), 'modules')
'''


def test_wheel_holds_codecs_and_emulators_and_imports_without_ros(tmp_path):
    src = tmp_path / 'src'  # a copy: building in the work tree would leave build artefacts
    shutil.copytree(REPO / 'ros_sim_bridge', src / 'ros_sim_bridge',
                    ignore=shutil.ignore_patterns('__pycache__'))
    shutil.copy(REPO / 'setup.py', src / 'setup.py')
    out = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation',
                          '-q', '-w', str(tmp_path), str(src)], capture_output=True, text=True,
                         cwd=tmp_path)
    if out.returncode != 0 and 'No module named' in out.stderr:
        pytest.skip(f'no wheel build tools here: {out.stderr.strip()[-200:]}')
    assert out.returncode == 0, out.stderr
    wheel = next(tmp_path.glob('ros_sim_bridge_codecs-*.whl'))
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(tmp_path / 'site')
    assert 'ros_sim_bridge/rflysim/codec/__init__.py' in names
    assert any(n.startswith('ros_sim_bridge/morai/codec/') for n in names)
    assert any(n.startswith('ros_sim_bridge/ibeo/codec/') for n in names)
    assert 'ros_sim_bridge/rflysim/emulator/cli.py' in names
    assert 'ros_sim_bridge/core/udp.py' in names
    ros_parts = [n for n in names if n.startswith(('ros_sim_bridge/ros/', 'ros_sim_bridge/tools/'))
                 or '/ros/' in n.removeprefix('ros_sim_bridge/')]
    assert not ros_parts, f'ROS parts must not be in the ROS-free distribution: {ros_parts}'
    entry = next(n for n in names if n.endswith('entry_points.txt'))
    text = (tmp_path / 'site' / entry).read_text()
    assert 'ros_sim_bridge/entry.py' in names      # the commands' stop signals, stdlib only
    assert 'rflysim_sim = ros_sim_bridge.entry:rflysim_sim' in text
    run = subprocess.run([sys.executable, '-c', NO_ROS, str(tmp_path / 'site')],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert 'modules' in run.stdout
