"""Ibeo ECU / FUSION SYSTEM driver (executable ``ibeo_ecu``): the ``ibeo_lux`` node with an
ECU's defaults — same code, topics, services and diagnostics (:mod:`.node`).

What differs is its topic prefix (``ibeo_ecu``: /ibeo_ecu/points, the names of its launch
namespace /ibeo_ecu, so a LUX's /ibeo/points can run beside it), its topics and what an ECU
needs on connect (spec §20): with ``source:=tcp`` every ECU publisher exists from the start
(``ibeo_lux`` makes one on first use of an ECU type only); an ECU sends nothing until it got a
Set Filter, so ``data_types`` defaults to ``all`` (sent after every (re)connect); it is no
LUX, so no LUX Start Measure and no DeviceType probe (``start_measure_on_connect`` false,
``layers`` 4); its clock is normally NTP-synchronised, so stamps default to the messages' NTP
times (as ``ibeo_idc to-bag`` writes them); and a fused 0x2205 can hold 65,535 points per
message.
"""
from __future__ import annotations

import sys

from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.ros import node as lux_node
from ros_sim_bridge.ros.runner import run_node

#: the ibeo_lux table with the ECU's defaults (descriptions and checks unchanged)
ECU_DEFAULTS = {
    'topic_prefix': 'ibeo_ecu',     # the launch namespace: apart from a LUX's /ibeo topics
    'data_types': 'all',
    'start_measure_on_connect': False,
    'layers': 4,
    'stamp_source': 'sensor',
    'frame_id': 'laser',
    'stale_after': 2.0,
}
PARAMETERS = {name: (ECU_DEFAULTS.get(name, entry[0]), *entry[1:])
              for name, entry in lux_node.PARAMETERS.items()}


class IbeoEcuNode(lux_node.IbeoLuxNode):
    NODE_NAME = 'ibeo_ecu'
    PARAMETERS = PARAMETERS
    DEVICE = 'ECU'
    # no LUX scan (0x2202) expected; which scan type comes (0x2204, 0x2205) depends on the
    # ECU: each type's status on first sight, the link's says whether anything comes at all
    TYPE_STREAMS = ((registry.REPLY, 'command replies', False),)
    ECU_PUBLISHERS_AT_START = True      # every ECU topic exists from the start (tcp)


def main(argv=None) -> int:
    return run_node(IbeoEcuNode, argv)


if __name__ == '__main__':
    sys.exit(main())
