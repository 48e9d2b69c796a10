"""RflySim ground truth: `ros2 launch ros_sim_bridge rflysim.launch.py copter_ids:='[1,2,3]'`.

With ``sim:=true`` the built-in sender plays a scene of the same vehicles on 127.0.0.1.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    config = os.path.join(get_package_share_directory('ros_sim_bridge'), 'config', 'rflysim.yaml')
    copter_ids = LaunchConfiguration('copter_ids')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=config),
        DeclareLaunchArgument('copter_ids', default_value='[1]'),
        DeclareLaunchArgument('sim', default_value='false',
                              description='also run the built-in RflySim sender'),
        Node(package='ros_sim_bridge', executable='rflysim_truth', name='rflysim_truth',
             output='screen',
             parameters=[LaunchConfiguration('params_file'),
                         {'copter_ids': copter_ids}]),
        Node(package='ros_sim_bridge', executable='rflysim_sim', name='rflysim_sim',
             output='screen', condition=IfCondition(LaunchConfiguration('sim')),
             arguments=['--ids', copter_ids, '--duration', '0']),
    ])
