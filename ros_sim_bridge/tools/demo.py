"""`make demo`: each driver against its built-in emulator on 127.0.0.1, for a few seconds.

Every driver runs as its installed executable with its config file, in its own process, as
`ros2 launch` would start it; this process plays the emulator and listens on DDS like a user's
stack, then prints what arrived.  DDS stays on this machine, in a demo-specific domain.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from ros_sim_bridge.tools.ports import DEMO_DOMAINS
from ros_sim_bridge.tools.session import background_node, keep_dds_local

# name → module with run(node, seconds) -> lines; each drives its node against its emulator
DEMOS = {'rflysim': 'ros_sim_bridge.rflysim.ros.demo', 'morai': 'ros_sim_bridge.morai.ros.demo',
         'lux': 'ros_sim_bridge.ibeo.ros.demo', 'carla': 'ros_sim_bridge.carla.ros.demo'}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='sim_bridge_demo', description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=4.0, help='emulator time per driver')
    parser.add_argument('--only', choices=list(DEMOS), action='append',
                        help='run only these demos')
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    keep_dds_local(DEMO_DOMAINS)
    print(f'ros_sim_bridge demo (ROS_DOMAIN_ID={os.environ["ROS_DOMAIN_ID"]}, DDS on localhost)')
    failed = False
    with background_node('sim_bridge_demo') as node:
        for name in args.only or DEMOS:
            try:
                module = importlib.import_module(DEMOS[name])
                print('\n'.join(module.run(node, args.seconds)), flush=True)
            except Exception as exc:  # say what failed, go on with the next driver
                print(f'{name} demo failed: {exc!r}', file=sys.stderr, flush=True)
                failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
