"""ros.params.declare_parameters on a real node: values of another type than the default's are
one clear ValueError (rclpy's own check is a traceback), the plain conversions are made, and
parameters are read-only at run time but for the ones a node names dynamic."""
import pytest
from rclpy.node import Node
from rclpy.parameter import Parameter

from ros_sim_bridge.ros.diagnostics import Diagnostics
from ros_sim_bridge.ros.params import declare_parameters

TABLE = {'rate': (10.0, 'Hz'), 'ids': ([1], 'ids'), 'gains': ([0.5], 'gains'),
         'header': ('8', 'header size'), 'on': (True, 'switch'), 'count': (3, 'count'),
         'mode': ('a', 'changeable at run time')}


class _Probe(Node):
    def __init__(self, **kwargs):
        super().__init__('param_types_probe', **kwargs)
        self.p = declare_parameters(self, TABLE, dynamic=('mode',))


def test_plain_conversions_are_made(ros):
    node = ros.start(_Probe, {'rate': 2, 'header': 12, 'gains': [1, 2], 'ids': []})
    assert (node.p.rate, node.p.header, node.p.gains, node.p.ids) == (2.0, '12', [1.0, 2.0], [])
    assert isinstance(node.p.rate, float) and isinstance(node.p.gains[0], float)


@pytest.mark.parametrize('name,value,says', [
    ('rate', 'fast', "parameter rate = 'fast' is a string, not a number"),
    ('ids', 'abc', "parameter ids = 'abc' is a string, not a list of integers"),
    ('ids', [1.5], 'is a list, not a list of integers'),
    ('on', 1, 'parameter on = 1 is an integer, not a boolean'),
    ('count', 2.5, 'parameter count = 2.5 is a number, not an integer'),
    ('header', True, 'is a boolean, not a string')])
def test_a_value_of_another_type_is_one_clear_error(ros, name, value, says):
    with pytest.raises(ValueError) as err:
        ros.start(_Probe, {name: value})
    assert says in str(err.value)


def test_read_only_at_run_time_but_for_the_dynamic_ones(ros):
    """`ros2 param set` of a parameter the node reads once is refused with rclpy's reason (it
    used to be accepted and ignored); a dynamic one is set."""
    node = ros.start(_Probe)
    refused, = node.set_parameters([Parameter('rate', value=5.0)])
    assert not refused.successful and 'read-only' in refused.reason
    assert node.get_parameter('rate').value == 10.0
    taken, = node.set_parameters([Parameter('mode', value='b')])
    assert taken.successful and node.get_parameter('mode').value == 'b'


def test_diagnostics_run_under_use_sim_time_without_a_clock(ros):
    """Nothing publishes /clock: the node's timers on ROS time never fire, /diagnostics (on the
    steady clock) still does."""
    from diagnostic_msgs.msg import DiagnosticArray

    class _Sim(Node):
        def __init__(self, **kwargs):
            super().__init__('sim_time_diagnostics_probe', **kwargs)
            self.diagnostics = Diagnostics(self, period=0.2)
            self.diagnostics.stream('probe stream')

    got = ros.collect(DiagnosticArray, '/diagnostics', matched=False)
    ros.start(_Sim, {'use_sim_time': True})
    got.wait_for(2, timeout=10, where=lambda m: any(
        st.name.startswith('sim_time_diagnostics_probe') for st in m.status))
