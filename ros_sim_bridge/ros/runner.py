"""The one ``main`` every node executable shares: init, spin, close cleanly on SIGINT/SIGTERM."""
from __future__ import annotations

import re
import sys

import rclpy
import rclpy.logging
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.signals import SignalHandlerOptions

from ros_sim_bridge.core.cli import run_tool, stop_on_signals
from ros_sim_bridge.ros.dds import use_packaged_fastdds_profile
from ros_sim_bridge.ros.params import describe_parameters


#: the longest the main thread waits inside rclpy: a stop signal is handled (in Python) only
#: when it comes back, and with ``use_sim_time`` and no /clock no timer wakes it
SPIN_WAKE = 0.25


def run_node(node_class, argv=None) -> int:
    """Spin one node; a node that cannot start (a port in use, a bad parameter) exits with 1
    after one clear log line instead of a traceback; SIGINT and SIGTERM exit with 0;
    ``-h``/``--help`` (before ``--ros-args``) prints :func:`node_help` and exits with 0."""
    args = list(sys.argv if argv is None else argv)[1:]
    own = args[:args.index('--ros-args')] if '--ros-args' in args else args
    if '-h' in own or '--help' in own:       # (a reader that went away: exit 0 quietly)
        return run_tool(lambda stops: print(node_help(node_class)) or 0,
                        executable=argv is None)
    # SIGINT and SIGTERM both arrive once as KeyboardInterrupt and any later one is ignored
    # while the node closes (core.cli.stop_on_signals) — not through rclpy's handler, which
    # would invalidate the context while receive threads still publish: close() stops those
    # threads first.
    stops = stop_on_signals()
    try:
        # reliable samples (service replies) lost under heavy streams are repaired in ~0.1 s
        use_packaged_fastdds_profile()
        code = _run(node_class, argv, stops)
    except KeyboardInterrupt:       # a stop signal during start-up or cleanup
        code = 0
    return stops.finish(code)


def node_help(node_class) -> str:
    """Usage, what the node is (its module's first paragraph) and its parameters."""
    name = getattr(node_class, 'NODE_NAME', None) or node_class.__name__
    doc = (sys.modules[node_class.__module__].__doc__ or '').strip().split('\n\n')[0]
    doc = re.sub(r':\w+:`[~.]*([^`]+)`', r'\1', doc)       # Sphinx roles: the name alone
    return '\n'.join([
        f'usage: ros2 run ros_sim_bridge {name} [--ros-args -p NAME:=VALUE ... '
        '| --params-file FILE]', '', ' '.join(doc.replace('``', '').split()), '',
        'parameters (read-only once running):',
        describe_parameters(getattr(node_class, 'PARAMETERS', {})), '',
        'Topics, services, frames and /diagnostics: docs/<source>.md, and config/*.yaml for a '
        'parameters file to start from.'])


def _logger_name(node_class, argv=None) -> str:
    """The name start-up failures are logged under, as every later line of the node: its
    namespace and name (``rflysim.rflysim_truth``) with the ``__ns``/``__node`` remappings of
    ``argv`` applied; the name is the class attribute ``NODE_NAME``, else the class name."""
    name = getattr(node_class, 'NODE_NAME', None) or node_class.__name__
    namespace = ''
    args = list(sys.argv if argv is None else argv)
    for flag, value in zip(args, args[1:]):
        if flag in ('-r', '--remap'):
            key, _, remapped = value.partition(':=')
            if key == '__ns':
                namespace = remapped.strip('/').replace('/', '.')
            elif key == '__node':
                name = remapped
    return f'{namespace}.{name}' if namespace else name


def _run(node_class, argv, stops) -> int:
    node = None
    try:
        with stops.deferred():      # a stop signal during start-up acts once all is built
            try:
                rclpy.init(args=argv if argv is not None else sys.argv,
                           signal_handler_options=SignalHandlerOptions.NO)
            except Exception as exc:  # rcl refuses the arguments (e.g. -p 'name:=')
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                rclpy.logging.get_logger(_logger_name(node_class, argv)).fatal(
                    f'cannot start: invalid ROS arguments: {first}')
                return 1
            try:
                node = node_class()
            except Exception as exc:    # a value no check of ours caught (a topic name rcl
                # refuses, a timer period, a frame template): still one line, exit 1
                said = str(exc) if isinstance(exc, (OSError, ValueError, _rclpy.RCLError)) \
                    else f'{type(exc).__name__}: {exc}'
                rclpy.logging.get_logger(_logger_name(node_class, argv)).fatal(
                    f'cannot start: {said}')
                return 1
            executor = MultiThreadedExecutor()
            executor.add_node(node)
        # back in Python at least every SPIN_WAKE s, so a stop signal is seen even when no timer
        # can fire, and even when its KeyboardInterrupt was lost (core.cli.stop_requested)
        while rclpy.ok() and not stops.fired:
            executor.spin_once(timeout_sec=SPIN_WAKE)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            close = getattr(node, 'close', None)
            if close is not None:
                close()
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0
