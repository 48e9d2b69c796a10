"""The former name of launch/ibeo.launch.py, kept for users who have it: the same arguments.

`ros2 launch ros_sim_bridge ibeo_lux.launch.py host:=<sensor ip>` ≡ ibeo.launch.py.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource


def generate_launch_description():
    path = os.path.join(get_package_share_directory('ros_sim_bridge'), 'launch',
                        'ibeo.launch.py')
    # arguments given to this file reach the included one (launch passes them through)
    return LaunchDescription([IncludeLaunchDescription(PythonLaunchDescriptionSource(path))])
