"""CARLA recorder replayer: `ros2 launch ros_sim_bridge carla.launch.py file:=/path/rec.log`.

The node runs in namespace ``carla`` (argument ``namespace``) with config/carla.yaml (then the
argument ``params_file`` on top); ``file``, ``rate_factor``, ``start_time``, ``end_time``,
``loop``, ``start_paused``, ``follow_actor`` and ``map_frame`` override them only when given.
With ``sim:=true`` and no file, a generated recording is replayed in a loop. ``--show-args``
lists every argument; the table behind them is ros_sim_bridge/tools/suite.py.
"""
from ros_sim_bridge.tools.launch_suite import source_launch_description


def generate_launch_description():
    return source_launch_description('carla')
