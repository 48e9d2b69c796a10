"""monoDrive client: `ros2 launch ros_sim_bridge monodrive.launch.py [sim:=true]`.

The node runs in namespace ``monodrive`` (argument ``namespace``) with config/monodrive.yaml
(then the argument ``params_file`` on top); ``host`` and ``port`` override them only when
given. With ``sim:=true`` the built-in emulator (``monodrive_sim``) plays a simulator on
127.0.0.1. ``--show-args`` lists every argument; the table behind them is
ros_sim_bridge/tools/suite.py.
"""
from ros_sim_bridge.tools.launch_suite import source_launch_description


def generate_launch_description():
    return source_launch_description('monodrive')
