"""A subscriber that counts and keeps the last message per topic (demo and benchmarks)."""
from __future__ import annotations

from ros_sim_bridge.tools.session import wait_until


class Listener:
    """Counts and keeps the last message of each subscribed topic."""

    def __init__(self, node):
        self.node = node
        self.count: dict[str, int] = {}
        self.last: dict[str, object] = {}
        self.subs = []

    def listen(self, msg_type, topic: str, qos=10) -> None:
        self.count[topic] = 0

        def on_msg(msg, topic=topic):
            self.count[topic] += 1
            self.last[topic] = msg
        self.subs.append(self.node.create_subscription(msg_type, topic, on_msg, qos))

    def wait_matched(self, timeout: float = 10.0) -> bool:
        """True once every subscription has a publisher (DDS discovery is asynchronous)."""
        return wait_until(lambda: all(s.get_publisher_count() > 0 for s in self.subs),
                          timeout, 0.05)

    def wait_for(self, topic: str, count: int = 1, timeout: float = 10.0) -> bool:
        """True once ``count`` messages arrived on ``topic``."""
        return wait_until(lambda: self.count.get(topic, 0) >= count, timeout, 0.05)
