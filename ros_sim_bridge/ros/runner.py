"""The one ``main`` every node executable shares: init, spin, close cleanly on Ctrl-C."""
from __future__ import annotations

import signal
import sys

import rclpy
import rclpy.logging
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.signals import SignalHandlerOptions


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run_node(node_class, argv=None) -> int:
    """Spin one node; a node that cannot start (a port in use, a bad parameter) exits with 1
    after one clear log line instead of a traceback."""
    # SIGINT (Ctrl-C; ros2 launch first) and SIGTERM (ros2 launch after its timeout, docker
    # stop, systemd) both arrive as KeyboardInterrupt — not through rclpy's handler, which would
    # invalidate the context while receive threads still publish: close() stops those threads
    # first.  Set explicitly, as rclpy does: a background job of a script inherits SIGINT
    # ignored, and SIGTERM's default would end the process without closing anything.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
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
