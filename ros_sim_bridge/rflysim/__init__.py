"""RflySim UDP_30100_TrueSimRecv ground truth: codec, emulator, and the ROS node in ros/.

:data:`SOURCE` is this source's entry in the suite's table (core/source.py)."""
from ros_sim_bridge.core.source import Argument, Source


def _emulator_args(params: dict, args: dict) -> list[str]:
    ids = params.get('copter_ids', [1])
    return ['--ids', ','.join(str(i) for i in ids), '--base-port',
            str(params.get('base_port', 30101)), '--rate', '50', '--duration', '0', '--quiet']


def _free_ports(params: dict, pick, resolve) -> dict:
    ids = params.get('copter_ids', [1])
    return {'base_port': pick('udp', max(ids) + 1, 2)}


SOURCE = Source(
    'rflysim', 'RflySim ground truth', 'rflysim_truth', 'rflysim_truth', 'rflysim_sim',
    _emulator_args,
    (Argument('copter_ids', "CopterIDs to receive: 2, '[1,2,3]' or 1,2,3 (default: the "
                            'params file)', 'int_list', 'copter_ids'),
     Argument('base_port', 'UDP port of CopterID 1 (default: the params file)', 'int',
              'base_port')),
    free_ports=_free_ports, order=10, docs='rflysim.md', demo_check='rflysim',
    demo_set=(('copter_ids', '[1,2,3]'),))
