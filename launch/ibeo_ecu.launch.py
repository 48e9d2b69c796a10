"""Ibeo ECU / FUSION SYSTEM driver: `ros2 launch ros_sim_bridge ibeo_ecu.launch.py host:=<ECU ip>`.

The node (executable ``ibeo_ecu``: the ibeo_lux node with an ECU's defaults) runs in namespace
``ibeo_ecu`` with config/ibeo_ecu.yaml (then the argument ``params_file`` on top); ``host``,
``port`` and ``data_types`` override them only when given. With ``sim:=true`` the built-in
emulator in ECU mode (``ibeo_lux_sim --ecu``, ``sim_scanners``, ``sim_points``) serves
127.0.0.1:<port>. ``--show-args`` lists every argument; the table behind them is
ros_sim_bridge/tools/suite.py.
"""
from ros_sim_bridge.tools.launch_suite import source_launch_description


def generate_launch_description():
    return source_launch_description('ibeo_ecu')
