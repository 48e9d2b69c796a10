"""`make demo`: each driver against its built-in emulator on 127.0.0.1, for a few seconds.

Every driver runs as its installed executable with its config file, in its own process, as
`ros2 launch` would start it; this process plays the emulator and listens on DDS like a user's
stack, then prints what arrived.  DDS stays on this machine, in a demo-specific domain.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time

DEMOS = ('rflysim',)


def _setup_environment() -> None:
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(161, 200)))


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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(s.get_publisher_count() > 0 for s in self.subs):
                return True
            time.sleep(0.05)
        return False


def demo_rflysim(node, seconds: float) -> list[str]:
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import NavSatFix
    from tf2_msgs.msg import TFMessage

    from ros_sim_bridge.conversions.frames import quat_to_euler
    from ros_sim_bridge.emulators.rflysim_sim import Scene, Sender
    from ros_sim_bridge.qos import LATCHED
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file

    ids = [1, 2, 3]
    rate = 50.0
    listener = Listener(node)
    for i in ids:
        listener.listen(Odometry, f'rflysim/vehicle_{i}/odom')
        listener.listen(NavSatFix, f'rflysim/vehicle_{i}/fix')
    listener.listen(TFMessage, '/tf', 100)
    listener.listen(NavSatFix, 'rflysim/map_origin', LATCHED)
    lines = [f'RflySim: rflysim_truth (config/rflysim.yaml, CopterIDs {ids}) ← rflysim_sim '
             f'({len(ids)} multicopters, {rate:.0f} Hz, {seconds:.0f} s, UDP 127.0.0.1:30101+)']
    with NodeProcess('rflysim_truth', params_file=config_file('rflysim.yaml'),
                     parameters={'copter_ids': ids}):
        if not listener.wait_matched():
            lines.append('  warning: not every topic was discovered within 10 s')
        with Sender(Scene(ids), rate=rate) as sender:
            sender.run(seconds)
        time.sleep(0.5)
    lines.append(f'  {"vehicle":8} {"sent":>5} {"odom":>5} {"fix":>5}   last pose (ENU m, yaw deg)'
                 '                lat, lon, alt')
    for i in ids:
        odom = listener.last.get(f'rflysim/vehicle_{i}/odom')
        fix = listener.last.get(f'rflysim/vehicle_{i}/fix')
        pose = '-'
        if odom is not None:
            p, q = odom.pose.pose.position, odom.pose.pose.orientation
            yaw = quat_to_euler([q.w, q.x, q.y, q.z])[2]
            pose = f'({p.x:7.2f}, {p.y:7.2f}, {p.z:6.2f}) yaw {yaw * 57.29578:7.1f}'
        gps = f'{fix.latitude:.6f}, {fix.longitude:.6f}, {fix.altitude:.1f}' if fix else '-'
        lines.append(f'  {i:<8} {sender.sent[i]:>5} '
                     f'{listener.count[f"rflysim/vehicle_{i}/odom"]:>5} '
                     f'{listener.count[f"rflysim/vehicle_{i}/fix"]:>5}   {pose:44} {gps}')
    origin = listener.last.get('rflysim/map_origin')
    lines.append(f'  /tf transforms messages: {listener.count["/tf"]}; map origin: '
                 + (f'{origin.latitude:.6f}, {origin.longitude:.6f}, {origin.altitude:.1f}'
                    if origin else 'none'))
    return lines


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
            lines = globals()[f'demo_{name}'](node, args.seconds)
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
