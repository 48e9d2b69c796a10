"""Launch descriptions built from the suite table (tools/suite.py), for ``launch/*.launch.py``.

Only the public ``launch`` / ``launch_ros`` API of Humble … Kilted is used: DeclareLaunchArgument,
OpaqueFunction, IfCondition, LaunchConfiguration, launch_ros ``Node``.  Arguments that override
a parameter default to ``''`` ("not given"), and an OpaqueFunction reads them when the launch
runs: the node gets config/<source>.yaml, the user's params file on top, then a dict of exactly
the parameters the user gave.
"""
from __future__ import annotations

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from ros_sim_bridge.core.source import Source
from ros_sim_bridge.tools.suite import COMMON_ARGUMENTS, EXTRA_SOURCES, PACKAGE, SOURCES, plan

SHARED = ('sim', 'use_sim_time', 'log_level')  # all.launch.py: one value for every source
RVIZ_CONFIG = 'ros_sim_bridge.rviz'


def share(*parts: str) -> str:
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def _node_actions(context, source: Source, prefix: str):
    """The driver (and with sim:=true its emulator), resolved when the launch runs."""
    def value(name: str) -> str:
        key = name if (prefix and name in SHARED) or not prefix else prefix + name
        return LaunchConfiguration(key).perform(context)

    names = [a.name for a in (*COMMON_ARGUMENTS, *source.arguments)]
    p = plan(source, {n: value(n) for n in names}, share('config', source.config),
             optional=bool(prefix))
    if p.left_out:
        return [LogInfo(msg=f'{p.left_out} ({prefix}{source.required}:=… or sim:=true)')]
    parameters = [*p.params_files] + ([p.overrides] if p.overrides else [])
    actions = [Node(package=PACKAGE, executable=source.executable, name=source.node_name,
                    namespace=p.namespace, output='screen', parameters=parameters,
                    arguments=['--ros-args', '--log-level', p.log_level])]
    if p.emulator_args is not None:
        actions.append(Node(package=PACKAGE, executable=source.emulator, name=source.emulator,
                            namespace=p.namespace, output='screen',
                            arguments=p.emulator_args))
    return actions


def _declare(arg, prefix: str = '', what: str = '') -> DeclareLaunchArgument:
    return DeclareLaunchArgument(prefix + arg.name, default_value=arg.default,
                                 description=(f'{what}: ' if what else '') + arg.description)


def source_launch_description(name: str) -> LaunchDescription:
    """``launch/<name>.launch.py``: one source (of the suite or EXTRA_SOURCES), its arguments
    unprefixed."""
    source = SOURCES[name] if name in SOURCES else EXTRA_SOURCES[name]
    return LaunchDescription([
        *(_declare(a) for a in (*COMMON_ARGUMENTS, *source.arguments)),
        OpaqueFunction(function=_node_actions, args=[source, '']),
    ])


def suite_launch_description() -> LaunchDescription:
    """``launch/all.launch.py``: every source of the table, each switchable, plus RViz.

    Per source ``<src>:=true|false`` and ``<src>_<argument>`` (``rflysim_copter_ids``,
    ``ibeo_port``, ``morai_params_file`` …); ``sim``, ``use_sim_time`` and ``log_level``
    apply to all."""
    entities = [_declare(a) for a in COMMON_ARGUMENTS if a.name in SHARED]
    entities += [
        DeclareLaunchArgument('rviz', default_value='false',
                              description="'true': open RViz 2 with config/ros_sim_bridge.rviz"),
        DeclareLaunchArgument('rviz_config', default_value=share('config', RVIZ_CONFIG),
                              description='RViz 2 configuration file for rviz:=true'),
    ]
    for source in SOURCES.values():
        entities.append(DeclareLaunchArgument(
            source.name, default_value='true',
            description=f"'false': do not start {source.title} ({source.executable})"))
        entities += [_declare(a, f'{source.name}_', source.title)
                     for a in (*COMMON_ARGUMENTS, *source.arguments) if a.name not in SHARED]
        entities.append(OpaqueFunction(function=_node_actions, args=[source, f'{source.name}_'],
                                       condition=IfCondition(LaunchConfiguration(source.name))))
    entities.append(Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
                         arguments=['-d', LaunchConfiguration('rviz_config')],
                         condition=IfCondition(LaunchConfiguration('rviz'))))
    return LaunchDescription(entities)
