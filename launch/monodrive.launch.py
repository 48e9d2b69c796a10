"""monoDrive client: `ros2 launch ros_sim_bridge monodrive.launch.py [sim:=true]`.

With ``sim:=true`` the built-in emulator (monodrive_sim) plays a simulator on 127.0.0.1.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    config = os.path.join(get_package_share_directory('ros_sim_bridge'), 'config',
                          'monodrive.yaml')
    host = LaunchConfiguration('host')
    port = LaunchConfiguration('port')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=config,
                              description='parameter file of monodrive_client'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of the client (and its topics)'),
        DeclareLaunchArgument('host', default_value='127.0.0.1',
                              description='simulator address'),
        DeclareLaunchArgument('port', default_value='8999',
                              description='simulator control port'),
        DeclareLaunchArgument('sim', default_value='false',
                              description='also run the built-in monoDrive emulator'),
        Node(package='ros_sim_bridge', executable='monodrive_client', name='monodrive_client',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[LaunchConfiguration('params_file'), {'host': host, 'port': port}]),
        Node(package='ros_sim_bridge', executable='monodrive_sim', name='monodrive_sim',
             output='screen', condition=IfCondition(LaunchConfiguration('sim')),
             arguments=['--host', host, '--port', port]),
    ])
