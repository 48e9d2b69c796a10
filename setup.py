"""The ROS-free part of ros_sim_bridge as an ordinary Python distribution.

colcon does not use this file (package.xml says ament_cmake; CMakeLists.txt builds the messages
and installs everything). It exists for machines without ROS — a simulator PC, an analysis
box, CI of another project: ``pip install .`` gives the sans-IO codecs (decode and encode every
supported protocol), the socket transports they share with the nodes, the built-in emulators
as commands (``rflysim_sim``, ``morai_sim``, ``ibeo_lux_sim``, ``monodrive_sim``) and
``carla_log`` (``info``, ``collisions``, ``blocked``; ``to-bag`` needs ROS 2), with numpy as
the only dependency.
"""
from setuptools import find_packages, setup
from setuptools.command.build_py import build_py


class CodecsOnly(build_py):
    """Of the top-level package only its (empty) __init__ and entry (the commands' stop
    signals, standard library only): the rest of it needs rclpy."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        if package == 'ros_sim_bridge':
            modules = [m for m in modules if m[1] in ('__init__', 'entry')]
        return modules


setup(
    name='ros-sim-bridge-codecs',
    version='0.1.0',
    description='Sans-IO codecs and protocol emulators of ros_sim_bridge (MORAI, RflySim, '
                'ibeo LUX, CARLA recorder files), usable without ROS',
    license='Apache-2.0',
    python_requires='>=3.10',
    install_requires=['numpy>=1.21'],
    # everything except the ROS parts: ros_sim_bridge.ros, every <source>.ros, and the tools
    packages=find_packages(include=['ros_sim_bridge', 'ros_sim_bridge.*'],
                           exclude=['ros_sim_bridge.ros', 'ros_sim_bridge.*.ros',
                                    'ros_sim_bridge.tools']),
    cmdclass={'build_py': CodecsOnly},
    # through ros_sim_bridge.entry: a stop signal during the imports is a quiet exit 0
    entry_points={'console_scripts': [
        'rflysim_sim = ros_sim_bridge.entry:rflysim_sim',
        'morai_sim = ros_sim_bridge.entry:morai_sim',
        'ibeo_lux_sim = ros_sim_bridge.entry:ibeo_lux_sim',
        'monodrive_sim = ros_sim_bridge.entry:monodrive_sim',
        # carla_log info | collisions | blocked need numpy only (to-bag needs ROS 2)
        'carla_log = ros_sim_bridge.entry:carla_log',
    ]},
)
