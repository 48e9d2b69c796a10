"""Diagnostics.log_limited: any mix of severities from the shared helper, on a real node.

rclpy's logger remembers the severity of each call site and raises ValueError when one site
logs at another severity (issue #10, defect 2): the helper must never do that, because it runs
inside the receive threads' own exception guards.
"""
import pytest
from rclpy.node import Node

from ros_sim_bridge.ros.diagnostics import Diagnostics

LEVELS = ('debug', 'info', 'warning', 'error', 'fatal')


class _Plain(Node):
    def __init__(self, **kwargs):
        super().__init__('diagnostics_logging_probe', **kwargs)
        self.diagnostics = Diagnostics(self, period=5.0)


@pytest.mark.parametrize('first', LEVELS)
def test_every_severity_after_every_other_from_one_helper(ros, first):
    node = ros.start(_Plain)
    d = node.diagnostics
    d.log_limited('link', f'first-{first}', f'first at {first}', first)
    for k, level in enumerate(LEVELS):
        d.log_limited('link', f'kind-{k}-{level}', f'then {level}', level)   # must not raise
    for kind, text in (('a', 'bad input'), ('b', 'receive failed')):
        d.log_limited('other', kind, text)              # default level after the others


def test_unknown_level_is_logged_as_error_not_raised(ros):
    node = ros.start(_Plain)
    node.diagnostics.log_limited('link', 'x', 'a message at a level rclpy has not', 'loud')
