"""MORAI SIM bridge: `ros2 launch ros_sim_bridge morai.launch.py [params_file:=...] [sim:=true]`.

The node runs in namespace ``morai`` with config/morai.yaml (then the argument ``params_file``
on top). With ``sim:=true`` the built-in MORAI emulator (``morai_sim``, preset ``release``)
runs too, on 127.0.0.1 with the ports of the params file, except Ego Vehicle Status: 909 needs
privileges, so both sides use ``ego_status_port`` (default 9091) then. ``--show-args`` lists
every argument; the table behind them is ros_sim_bridge/tools/suite.py.
"""
from ros_sim_bridge.tools.launch_suite import source_launch_description


def generate_launch_description():
    return source_launch_description('morai')
