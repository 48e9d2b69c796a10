"""ibeo LUX / SICK LD-MRS driver: `ros2 launch ros_sim_bridge ibeo.launch.py host:=<sensor ip>`.

The node (executable ``ibeo_lux``) runs in namespace ``ibeo`` with config/ibeo.yaml (then the
argument ``params_file`` on top); ``host`` and ``port`` override them only when given. With
``sim:=true`` the built-in LUX emulator (``ibeo_lux_sim``, ``sim_layers`` 4 or 8) serves
127.0.0.1:<port>. ``--show-args`` lists every argument; the table behind them is
ros_sim_bridge/tools/suite.py.
"""
from ros_sim_bridge.tools.launch_suite import source_launch_description


def generate_launch_description():
    return source_launch_description('ibeo')
