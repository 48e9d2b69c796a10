"""`make demo`: each driver against its built-in emulator on 127.0.0.1, for a few seconds.

Every driver runs as its installed executable with its config file, in its own process, as
`ros2 launch` would start it; this process plays the emulator and listens on DDS like a user's
stack, then prints what arrived.  DDS stays on this machine, in a demo-specific domain.
"""
from __future__ import annotations

import argparse
import importlib
import os
import random
import sys
import threading

# name → module with run(node, seconds) -> lines; each drives its node against its emulator
DEMOS = ('rflysim',)


def _setup_environment() -> None:
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(161, 200)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='sim_bridge_demo', description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=4.0, help='emulator time per driver')
    parser.add_argument('--only', choices=DEMOS, action='append', help='run only these demos')
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    _setup_environment()

    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

    rclpy.init()
    node = rclpy.create_node('sim_bridge_demo')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    def spin():
        try:
            executor.spin()
        except ExternalShutdownException:
            pass
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    print(f'ros_sim_bridge demo (ROS_DOMAIN_ID={os.environ["ROS_DOMAIN_ID"]}, DDS on localhost)')
    failed = False
    try:
        for name in args.only or DEMOS:
            module = importlib.import_module(f'ros_sim_bridge.tools.demo_{name}')
            lines = module.run(node, args.seconds)
            print('\n'.join(lines), flush=True)
    except Exception as exc:  # the demo says what failed instead of a traceback wall
        print(f'demo failed: {exc!r}', file=sys.stderr)
        failed = True
    finally:
        rclpy.try_shutdown()  # wakes the executor; then its thread can end before exit
        spinner.join(timeout=5.0)
        executor.shutdown()
        node.destroy_node()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
