"""The test harness (test/conftest.py RosHarness): a node it stops has left the graph when
``stop`` returns, so the next test's node of the same name is a node of its own, /rosout
publisher included (rcl shares one per logger name, and the last node of the name takes it).
rclpy destroys a node later when the executor is using it, which a busy node's timer makes
likely: without the wait most of these nodes are still in the graph after destroy_node().
"""
from __future__ import annotations

import time

from rclpy.node import Node


class Busy(Node):
    """A node the executor is nearly always in: a timer callback of 2 ms every 1 ms."""

    def __init__(self, node_name: str, **kwargs):
        super().__init__(node_name, **kwargs)
        self.create_timer(0.001, lambda: time.sleep(0.002))


def test_a_stopped_node_has_left_the_graph_when_stop_returns(ros):
    for _ in range(10):
        node = ros.start(Busy, node_name='harness_same_name')
        assert ros.node_count('harness_same_name') == 1
        time.sleep(0.02)
        ros.stop(node)
        assert ros.node_count('harness_same_name') == 0


def test_a_node_started_after_one_of_its_name_was_stopped_logs_on_rosout(ros):
    from rcl_interfaces.msg import Log
    from rclpy.qos import DurabilityPolicy, QoSProfile
    logs = ros.collect(Log, '/rosout', QoSProfile(
        depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL), matched=False)
    start_ns = time.time_ns()
    for k in range(4):
        node = ros.start(Busy, node_name='harness_logger')
        node.get_logger().info(f'harness line {k}')
        logs.wait_for(1, timeout=10.0, where=lambda m, k=k: m.name == 'harness_logger'
                      and m.msg == f'harness line {k}'
                      and m.stamp.sec * 10**9 + m.stamp.nanosec >= start_ns)
        ros.stop(node)
