"""The one ``main`` every node executable shares: init, spin, close cleanly on Ctrl-C."""
from __future__ import annotations

import sys

import rclpy
import rclpy.logging
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.signals import SignalHandlerOptions


def run_node(node_class, argv=None) -> int:
    """Spin one node; a node that cannot start (a port in use, a bad parameter) exits with 1
    after one clear log line instead of a traceback."""
    # Ctrl-C / SIGINT arrives as KeyboardInterrupt (not rclpy's handler, which would invalidate
    # the context while receive threads still publish): close() stops those threads first.
    rclpy.init(args=argv if argv is not None else sys.argv,
               signal_handler_options=SignalHandlerOptions.NO)
    node = None
    try:
        try:
            node = node_class()
        except (OSError, ValueError) as exc:
            rclpy.logging.get_logger(node_class.__name__).fatal(f'cannot start: {exc}')
            return 1
        executor = MultiThreadedExecutor()
        executor.add_node(node)
        executor.spin()
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
