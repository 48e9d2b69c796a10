"""``<node> --help`` (or ``-h``) of every installed node: usage, what it is and every parameter
with its default, exit 0, and no node started; it used to start the node."""
import importlib

import pytest

from conftest import run_installed

NODES = {'morai_bridge': 'ros_sim_bridge.morai.ros.node:MoraiBridgeNode',
         'rflysim_truth': 'ros_sim_bridge.rflysim.ros.node:RflySimTruthNode',
         'ibeo_lux': 'ros_sim_bridge.ibeo.ros.node:IbeoLuxNode',
         'ibeo_ecu': 'ros_sim_bridge.ibeo.ros.ecu_node:IbeoEcuNode',
         'monodrive_client': 'ros_sim_bridge.monodrive.ros.node:MonoDriveClientNode',
         'carla_replayer': 'ros_sim_bridge.carla.ros.node:CarlaReplayerNode'}


@pytest.mark.parametrize('exe', sorted(NODES))
def test_help_lists_every_parameter_and_exits_0(exe):
    module, name = NODES[exe].split(':')
    table = getattr(importlib.import_module(module), name).PARAMETERS
    code, out = run_installed(exe, '--help', timeout=30)
    assert code == 0 and 'Traceback' not in out, out
    assert out.startswith(f'usage: ros2 run ros_sim_bridge {exe} '), out
    for parameter, entry in table.items():
        assert f'  {parameter} (default ' in out and entry[1] in out, parameter
    assert '[INFO]' not in out and '[WARN]' not in out          # no node started, no log


def test_short_help_and_help_after_ros_args():
    code, out = run_installed('rflysim_truth', '-h', timeout=30)
    assert code == 0 and out.startswith('usage: ros2 run ros_sim_bridge rflysim_truth')
    # after --ros-args it is no help request of ours: rcl refuses it, one line, exit 1
    code, out = run_installed('rflysim_truth', '--ros-args', '--help', timeout=30)
    assert 'usage: ros2 run' not in out and 'Traceback' not in out, out
