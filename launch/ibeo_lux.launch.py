"""ibeo LUX / SICK LD-MRS driver: `ros2 launch ros_sim_bridge ibeo_lux.launch.py host:=<sensor ip>`.

With ``sim:=true`` the built-in LUX emulator (``ibeo_lux_sim``) serves 127.0.0.1:<port>.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def generate_launch_description():
    config = os.path.join(get_package_share_directory('ros_sim_bridge'), 'config',
                          'ibeo_lux.yaml')
    host = LaunchConfiguration('host')
    port = LaunchConfiguration('port')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=config),
        DeclareLaunchArgument('host', default_value='127.0.0.1',
                              description='sensor address (a real LUX has a fixed IP)'),
        DeclareLaunchArgument('port', default_value='12002'),
        DeclareLaunchArgument('sim', default_value='false',
                              description='also run the built-in LUX emulator on 127.0.0.1'),
        DeclareLaunchArgument('sim_layers', default_value='4', description='4 or 8'),
        Node(package='ros_sim_bridge', executable='ibeo_lux', name='ibeo_lux',
             output='screen',
             parameters=[LaunchConfiguration('params_file'),
                         {'host': host, 'port': ParameterValue(port, value_type=int)}]),
        Node(package='ros_sim_bridge', executable='ibeo_lux_sim', name='ibeo_lux_sim',
             output='screen', condition=IfCondition(LaunchConfiguration('sim')),
             arguments=['--host', '127.0.0.1', '--port', port,
                        '--layers', LaunchConfiguration('sim_layers')]),
    ])
