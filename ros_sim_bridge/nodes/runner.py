"""The one ``main`` every node executable shares: init, spin, close cleanly on Ctrl-C."""
from __future__ import annotations

import sys

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor


def run_node(node_class, argv=None) -> int:
    rclpy.init(args=argv if argv is not None else sys.argv)
    node = None
    try:
        node = node_class()
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
