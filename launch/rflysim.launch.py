"""RflySim ground truth: `ros2 launch ros_sim_bridge rflysim.launch.py copter_ids:='[1,2,3]'`.

The node runs in namespace ``rflysim`` (argument ``namespace``) with config/rflysim.yaml (then
the argument ``params_file`` on top); ``copter_ids`` and ``base_port`` override them only when
given (``copter_ids:=2`` means ``[2]``). With ``sim:=true`` the built-in sender
(``rflysim_sim``) plays the same vehicles on 127.0.0.1. ``ros2 launch ros_sim_bridge
rflysim.launch.py --show-args`` lists every argument; the table behind them is
ros_sim_bridge/tools/suite.py.
"""
from ros_sim_bridge.tools.launch_suite import source_launch_description


def generate_launch_description():
    return source_launch_description('rflysim')
