"""CARLA recorder replayer: `ros2 launch ros_sim_bridge carla.launch.py file:=/path/rec.log`.

Every argument is described (``ros2 launch ros_sim_bridge carla.launch.py --show-args``);
``namespace`` moves the replayer's topics and services (not /clock, /tf, /diagnostics).
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

ARGUMENTS = [  # name, default, description, type
    ('file', '', 'CARLA recorder .log file to replay (required)', str),
    ('rate_factor', '1.0', 'replay speed (recording seconds per wall second)', float),
    ('start_time', '0.0', 'recording time to start at, s; negative: from the end', float),
    ('end_time', '0.0', 'recording time to stop at, s; 0: the end; negative: from the end',
     float),
    ('loop', 'false', 'start again after the end', bool),
    ('start_paused', 'false', 'wait for the carla/resume service', bool),
    ('follow_actor', '-1', 'TF rooted on an actor: -1 none, 0 the hero, > 0 an actor id', int),
    ('map_frame', 'map', 'world frame', str),
    ('hero_frame', 'hero', "TF frame of the hero ('' to use actor_frame)", str),
]


def generate_launch_description():
    config = os.path.join(get_package_share_directory('ros_sim_bridge'), 'config', 'carla.yaml')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=config,
                              description='parameters file (config/carla.yaml)'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='namespace of the replayer node and its topics'),
        *[DeclareLaunchArgument(name, default_value=default, description=text)
          for name, default, text, _ in ARGUMENTS],
        Node(package='ros_sim_bridge', executable='carla_replayer', name='carla_replayer',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[LaunchConfiguration('params_file'),
                         {name: ParameterValue(LaunchConfiguration(name), value_type=kind)
                          for name, _, _, kind in ARGUMENTS}]),
    ])
