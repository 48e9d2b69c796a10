"""MORAI SIM bridge: `ros2 launch ros_sim_bridge morai.launch.py [params_file:=...] [sim:=true]`.

With ``sim:=true`` the built-in MORAI emulator (``morai_sim``) runs too, on 127.0.0.1 with the
same example ports as config/morai.yaml (except Ego Vehicle Status: 909 needs privileges, so
both sides use ``ego_status_port``, default 9091, in that case).
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    config = os.path.join(get_package_share_directory('ros_sim_bridge'), 'config', 'morai.yaml')
    params_file = LaunchConfiguration('params_file')
    sim = LaunchConfiguration('sim')
    ego_port = LaunchConfiguration('ego_status_port')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=config),
        DeclareLaunchArgument('sim', default_value='false',
                              description='also run the built-in MORAI emulator (morai_sim)'),
        DeclareLaunchArgument('ego_status_port', default_value='9091',
                              description='Ego Vehicle Status port used with sim:=true'),
        DeclareLaunchArgument('release', default_value='newest',
                              description='emulator layout preset (document, oldest, link_id, '
                                          'stamped, newest, 26.R1)'),
        # against a real simulator: the ports of the params file
        Node(package='ros_sim_bridge', executable='morai_bridge', name='morai_bridge',
             output='screen', parameters=[params_file], condition=UnlessCondition(sim)),
        # against the emulator: the same, with the unprivileged Ego Vehicle Status port
        Node(package='ros_sim_bridge', executable='morai_bridge', name='morai_bridge',
             output='screen', condition=IfCondition(sim),
             parameters=[params_file, {'listen_port.ego_status': ego_port}]),
        Node(package='ros_sim_bridge', executable='morai_sim', name='morai_sim',
             output='screen', condition=IfCondition(sim),
             arguments=['--release', LaunchConfiguration('release'),
                        '--ego-status-port', ego_port, '--duration', '0']),
    ])
