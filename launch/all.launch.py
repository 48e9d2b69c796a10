"""The whole suite: `ros2 launch ros_sim_bridge all.launch.py [sim:=true] [rviz:=true]`.

Every source of the suite table (each source's SOURCE, collected by tools/suite.py), each node
in its own namespace (``/rflysim``, ``/morai``, ``/ibeo``) with its config/<source>.yaml. Per
source: ``<source>:=false`` leaves it out, ``<source>_params_file``, ``<source>_namespace`` and
its own arguments prefixed (``rflysim_copter_ids``, ``ibeo_host``, ``ibeo_port``,
``morai_ego_status_port`` …); ``sim:=true`` starts the built-in emulators instead of waiting for
real sources; ``use_sim_time`` and ``log_level`` apply to every node; ``rviz:=true`` opens RViz
2 with config/ros_sim_bridge.rviz. ``carla_replayer`` starts only with ``carla_file`` or
``sim:=true``. ``--show-args`` lists them all.
"""
from ros_sim_bridge.tools.launch_suite import suite_launch_description


def generate_launch_description():
    return suite_launch_description()
