"""The parameters every node shares are declared and checked once (ros/params.py, issue #9)."""
import pytest

from ros_sim_bridge.morai.ros.node import PARAMETERS as MORAI, MoraiBridgeNode
from ros_sim_bridge.rflysim.ros.node import PARAMETERS as RFLYSIM, RflySimTruthNode

SHARED = ('diagnostics_period', 'stale_after', 'stamp_source')


@pytest.mark.parametrize('table', [RFLYSIM, MORAI], ids=['rflysim', 'morai'])
def test_shared_parameters_come_from_one_place_with_their_checks(table):
    for name in SHARED:
        assert name in table and len(table[name]) == 3, name   # (default, description, check)
    assert table['stamp_source'][2]('no_such_source')
    assert table['stale_after'][2](0.0) and table['diagnostics_period'][2](float('nan'))
    assert table['stale_after'][2](0.5) is None


@pytest.mark.parametrize('node_class', [RflySimTruthNode, MoraiBridgeNode],
                         ids=['rflysim', 'morai'])
@pytest.mark.parametrize('name, bad', [('stamp_source', 'gps'), ('stale_after', 0.0),
                                       ('diagnostics_period', -1.0)])
def test_a_bad_shared_parameter_stops_the_node_with_a_clear_reason(ros, node_class, name, bad):
    with pytest.raises(ValueError, match=f'parameter {name} = '):
        ros.start(node_class, {name: bad})
