"""The QoS profiles the nodes publish with.

Reliable publishers match both reliable and best-effort subscribers (RViz, ros2 bag, any
stack), so data topics are reliable with a short queue; /tf follows tf2's own profile, and
one-off facts (a map origin) are latched with transient-local durability.
"""
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

DATA = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                  reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
TF = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def deeper(profile: QoSProfile, depth: int) -> QoSProfile:
    """``profile`` with a history of at least ``depth`` samples (a writer that publishes
    bursts: KEEP_LAST drops the oldest samples not yet sent)."""
    return QoSProfile(history=profile.history, depth=max(profile.depth, depth),
                      reliability=profile.reliability, durability=profile.durability)
