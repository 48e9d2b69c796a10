"""Demo section: MORAI SIM bridge, both directions, against the built-in emulator."""
from __future__ import annotations

import math
import re
import time

from ros_sim_bridge.tools.ports import free_udp_ports
from ros_sim_bridge.tools.session import call_service, wait_until


TOPICS = ('ego_status', 'odom', 'objects', 'object_markers', 'traffic_light_status',
          'collision', 'vehicle_collision', 'intersection_status')
RATE = 20.0


#: the commands the demo sends; the emulator's other command ports are off
COMMANDS = ('ctrl_cmd', 'lamp_control', 'scenario_load')


def run(node, seconds: float) -> list[str]:
    """morai_bridge (config/morai.yaml) ← morai_sim (installed) at 20 Hz: drive forward with a
    velocity command, then steer left with the left turn signal on, and load a scenario."""
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file

    sim_args, params = emulator_ports(seconds)
    watch = Watch(node)
    lines = [f'MORAI SIM: morai_bridge (config/morai.yaml, ports overridden to free ones) ↔ '
             f'morai_sim (release newest, {RATE:.0f} Hz, {seconds:.0f} s, UDP 127.0.0.1)']
    try:
        with NodeProcess('morai_bridge', params_file=config_file('morai.yaml'),
                         parameters=params):
            if not watch.listener.wait_matched(15.0):
                lines.append('  warning: not every topic was discovered within 15 s')
            wait_until(lambda: watch.cmd_pub.get_subscription_count() > 0, 10, 0.05)
            # its event log (stderr) tells what it did with the commands
            with NodeProcess('morai_sim', args=sim_args, quiet=True) as sim:
                rows = drive(watch, seconds)
                answer = load_scenario(node)
            events = sim.last_lines(100)
    finally:
        watch.close()
    return lines + drive_table(rows) + summary(watch, events, rows, answer)


def emulator_ports(seconds: float) -> tuple[list[str], dict]:
    """morai_sim's arguments on free ports, and the bridge's parameter overrides pointing at
    them."""
    from ros_sim_bridge.morai.ros.node import INBOUND, OUTBOUND

    inbound = [n for n in INBOUND if n != 'multi_ego_setting']
    base = free_udp_ports(len(inbound) + len(COMMANDS))
    ports = {n: base + i for i, n in enumerate(inbound)}
    command_ports = {n: base + len(inbound) + i for i, n in enumerate(COMMANDS)}
    # a short scripted collision every few seconds so that the collision topics show something
    args = ['--release', 'newest', '--rate', f'{RATE:g}', '--duration', f'{seconds + 30:g}',
            '--collision-period', f'{max(seconds / 2, 1.0):g}', '--log-level', 'INFO']
    for name, port in ports.items():
        args += [f'--{name.replace("_", "-")}-port', str(port)]
    for name in OUTBOUND:
        args += [f'--{name.replace("_", "-")}-listen-port', str(command_ports.get(name, -1))]
    params = {f'listen_port.{n}': p for n, p in ports.items()}
    params.update({f'sim_port.{n}': p for n, p in command_ports.items()})
    return args, params


class Watch:
    """What the demo listens to (every topic, collisions counted) and commands with."""

    def __init__(self, node):
        from nav_msgs.msg import Odometry
        from tf2_msgs.msg import TFMessage
        from visualization_msgs.msg import MarkerArray

        from ros_sim_bridge.msg import (MoraiCollisionData, MoraiCtrlCmd, MoraiEgoVehicleStatus,
                                        MoraiGetTrafficLightStatus, MoraiIntersectionStatus,
                                        MoraiLamps, MoraiObjectStatusList,
                                        MoraiVehicleCollisionData)
        from ros_sim_bridge.tools.listener import Listener

        types = dict(zip(TOPICS, (MoraiEgoVehicleStatus, Odometry, MoraiObjectStatusList,
                                  MarkerArray, MoraiGetTrafficLightStatus, MoraiCollisionData,
                                  MoraiVehicleCollisionData, MoraiIntersectionStatus)))
        self.node = node
        self.listener = Listener(node)
        for name, msg_type in types.items():
            self.listener.listen(msg_type, f'morai/{name}', 100)
        self.listener.listen(TFMessage, '/tf', 100)
        self.collisions = {'ego': 0, 'npc': 0}
        self.subs = [node.create_subscription(MoraiCollisionData, 'morai/collision',
                                              lambda m: self._collision(m, 'ego'), 100),
                     node.create_subscription(MoraiVehicleCollisionData, 'morai/vehicle_collision',
                                              lambda m: self._collision(m, 'npc'), 100)]
        self.cmd_pub = node.create_publisher(MoraiCtrlCmd, 'morai/ctrl_cmd', 10)
        self.lamp_pub = node.create_publisher(MoraiLamps, 'morai/lamps', 10)

    def _collision(self, msg, key: str) -> None:
        if getattr(msg, 'collision_objects', None) or getattr(msg, 'collisions', None):
            self.collisions[key] += 1

    def close(self) -> None:
        for sub in self.subs:
            self.node.destroy_subscription(sub)
        self.node.destroy_publisher(self.cmd_pub)
        self.node.destroy_publisher(self.lamp_pub)


def drive(watch: Watch, seconds: float) -> list[tuple]:
    """The command script at 10 Hz (like MORAI's examples); a row (t, label, odom, status)
    every eighth of the run."""
    from ros_sim_bridge.msg import MoraiCtrlCmd, MoraiLamps
    cruise = 30.0 / 3.6     # MoraiCtrlCmd.velocity is m/s (30 km/h on the wire)
    script = [(0.0, 'velocity 8.3 m/s (30 km/h)', dict(cmd_type=2, velocity=cruise,
                                                       steering=0.0), 0),
              (0.5, 'steer left 0.3, left signal', dict(cmd_type=2, velocity=cruise,
                                                        steering=0.3), 1),
              (0.8, 'brake', dict(cmd_type=1, brake=1.0), 0)]
    rows = []
    t0 = time.monotonic()
    step = 0
    last_row = -1.0
    while time.monotonic() - t0 < seconds:
        t = time.monotonic() - t0
        while step + 1 < len(script) and t >= script[step + 1][0] * seconds:
            step += 1
        label, fields, signal = script[step][1:]
        watch.cmd_pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=4, **fields))
        watch.lamp_pub.publish(MoraiLamps(turn_signal=signal))
        if t - last_row >= seconds / 8:
            last_row = t
            rows.append((t, label, watch.listener.last.get('morai/odom'),
                         watch.listener.last.get('morai/ego_status')))
        time.sleep(0.1)
    return rows


def load_scenario(node) -> str:
    from ros_sim_bridge.srv import MoraiScenarioLoad
    r = call_service(node, MoraiScenarioLoad, 'morai/scenario_load',
                     MoraiScenarioLoad.Request(file_name='demo_highway', set_pause=False))
    time.sleep(0.3)
    return '-' if r is None else f'success={r.success}'


def drive_table(rows: list[tuple]) -> list[str]:
    """Where the ego went under each command: position, yaw, speed, gear, control mode."""
    from ros_sim_bridge.core.frames import quat_to_euler
    lines = [f'  {"t s":>5}  {"command":30} {"x m":>7} {"y m":>7} {"yaw °":>6} '
             f'{"speed m/s":>9} {"gear":>4} {"mode":>4}']
    for t, label, odom, status in rows:
        if odom is None or status is None:
            lines.append(f'  {t:5.1f}  {label:30} (no ego status yet)')
            continue
        p, q = odom.pose.pose.position, odom.pose.pose.orientation
        yaw = math.degrees(quat_to_euler([q.w, q.x, q.y, q.z])[2])
        lines.append(f'  {t:5.1f}  {label:30} {p.x:7.2f} {p.y:7.2f} {yaw:6.1f} '
                     f'{odom.twist.twist.linear.x:9.2f} {status.gear:>4} {status.ctrl_mode:>4}')
    return lines


def changes(events: list[str], pattern: str) -> list[str]:
    """The first group of ``pattern`` in morai_sim's log lines, in order, each change once (the
    steer phase's left signal shows though the brake step has reset it)."""
    out: list[str] = []
    for line in events:
        found = re.search(pattern, line)
        if found and (not out or out[-1] != found.group(1)):
            out.append(found.group(1))
    return out


def last_event(events: list[str], pattern: str) -> str | None:
    """The first group of ``pattern`` in the last of morai_sim's log lines it matches."""
    for line in reversed(events):
        found = re.search(pattern, line)
        if found:
            return found.group(1)
    return None


def summary(watch: Watch, events: list[str], rows: list[tuple], answer: str) -> list[str]:
    """Counts per topic, the last objects, traffic light and intersection, collisions and the
    command round trip (what the emulator did: its log)."""
    last, c = watch.listener.last, watch.listener.count
    objects, status = last.get('morai/objects'), last.get('morai/ego_status')
    tl, insn = last.get('morai/traffic_light_status'), last.get('morai/intersection_status')
    lines = [f'  received: ego_status {c["morai/ego_status"]}, odom {c["morai/odom"]}, '
             f'/tf {c["/tf"]}, objects {c["morai/objects"]}, markers '
             f'{c["morai/object_markers"]}, traffic light {c["morai/traffic_light_status"]}, '
             f'intersection {c["morai/intersection_status"]}, collision '
             f'{c["morai/collision"]}, npc collision {c["morai/vehicle_collision"]}']
    if objects is not None:
        kinds = (f'{objects.num_of_npcs} npc, {objects.num_of_pedestrian} pedestrian, '
                 f'{objects.num_of_obstacle} obstacle')
        lines.append(f'  objects: {len(objects.objects)} of 20 slots ({kinds}), layout '
                     f'{objects.layout}; ego layout {status.layout if status else "-"}')
    if tl is not None:
        names = {1: 'red', 4: 'yellow', 16: 'green', 32: 'green-left', -1: 'off'}
        lines.append(f'  traffic light {tl.traffic_light_index}: '
                     f'{names.get(tl.traffic_light_status, tl.traffic_light_status)}; intersection '
                     + (f'{insn.intersection_index} phase {insn.intersection_status} for '
                        f'{insn.intersection_status_time:.1f} s' if insn else '-'))
    lines.append(f'  collisions: {watch.collisions["ego"]} ego-collision messages with objects, '
                 f'{watch.collisions["npc"]} npc-collision messages with pairs')
    lines.append('  command round trip: ctrl_cmd → ego moved to x = '
                 + (f'{rows[-1][2].pose.pose.position.x:.1f} m' if rows and rows[-1][2] else '-')
                 + '; lamps → emulator turn signals '
                 + (' → '.join(changes(events, r'lamps: turn signal (\d+)')) or 'none')
                 + f'; scenario_load → {answer}, emulator loaded '
                 + (last_event(events, r'scenario load (\S+)') or 'nothing'))
    return lines


class EgoDriver:
    """Drives the emulated MORAI ego along a curve through /morai/ctrl_cmd (as a user's stack
    would), so the recorded ego track has a shape; its own rclpy context."""

    def __init__(self):
        import rclpy
        from ros_sim_bridge.msg import MoraiCtrlCmd
        self.rclpy, self.msg = rclpy, MoraiCtrlCmd
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('sim_bridge_demo_driver', context=self.context)
        self.pub = self.node.create_publisher(MoraiCtrlCmd, '/morai/ctrl_cmd', 10)

    def __call__(self, elapsed: float) -> None:
        steering = 0.15 if int(elapsed) % 8 < 5 else -0.1      # rad: left, then right
        self.pub.publish(self.msg(ctrl_mode=2, gear=4, cmd_type=2, velocity=8.0,
                                  steering=steering))

    def close(self) -> None:
        self.node.destroy_node()
        self.context.try_shutdown()
