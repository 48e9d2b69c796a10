"""A node spinning in a background thread, for the demo and benchmarks (not for drivers)."""
from __future__ import annotations

import contextlib
import os
import random
import threading


def keep_dds_local(domain_range: tuple[int, int]) -> None:
    """DDS discovery on this machine only, in a domain of our own unless one is set."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(*domain_range)))


@contextlib.contextmanager
def background_node(name: str):
    """rclpy initialised, one node spinning in a thread; all of it shut down cleanly after."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

    rclpy.init()
    node = rclpy.create_node(name)
    executor = SingleThreadedExecutor()
    executor.add_node(node)

    def spin():
        try:
            executor.spin()
        except ExternalShutdownException:
            pass
    thread = threading.Thread(target=spin, name=f'{name}-spin', daemon=True)
    thread.start()
    try:
        yield node
    finally:
        rclpy.try_shutdown()  # wakes the executor, so its thread ends before the process does
        thread.join(timeout=5.0)
        executor.shutdown()
        node.destroy_node()
