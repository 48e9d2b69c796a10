"""Demo section: MORAI SIM bridge, both directions, against the built-in emulator."""
from __future__ import annotations

import math
import threading
import time

from ros_sim_bridge.tools.ports import free_udp_ports
from ros_sim_bridge.tools.session import call_service, wait_until


def run(node, seconds: float) -> list[str]:
    """morai_bridge (config/morai.yaml) ← morai_sim in this process at 20 Hz: drive forward with a
    velocity command, then steer left with the left turn signal on, and load a scenario."""
    from nav_msgs.msg import Odometry
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray

    from ros_sim_bridge.core.frames import quat_to_euler
    from ros_sim_bridge.morai.emulator import MoraiEmulator, MoraiScene
    from ros_sim_bridge.msg import (MoraiCollisionData, MoraiCtrlCmd, MoraiEgoVehicleStatus,
                                    MoraiGetTrafficLightStatus, MoraiIntersectionStatus,
                                    MoraiLamps, MoraiObjectStatusList, MoraiVehicleCollisionData)
    from ros_sim_bridge.morai.ros.node import INBOUND
    from ros_sim_bridge.srv import MoraiScenarioLoad
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file
    from ros_sim_bridge.tools.listener import Listener

    rate = 20.0
    inbound = [n for n in INBOUND if n != 'multi_ego_setting']
    base = free_udp_ports(len(inbound))
    ports = {n: base + i for i, n in enumerate(inbound)}
    # a short scripted collision every few seconds so that the collision topics show something
    scene = MoraiScene('newest', collision_period=max(seconds / 2, 1.0))
    emu = MoraiEmulator(scene, send_ports=ports,
                        recv_ports={'ctrl_cmd': 0, 'lamp_control': 0, 'scenario_load': 0},
                        rate=rate)
    params = {f'listen_port.{n}': p for n, p in ports.items()}
    params.update({f'sim_port.{n}': emu.bound_ports[n] for n in emu.bound_ports})

    topics = {'ego_status': MoraiEgoVehicleStatus, 'odom': Odometry,
              'objects': MoraiObjectStatusList, 'object_markers': MarkerArray,
              'traffic_light_status': MoraiGetTrafficLightStatus,
              'collision': MoraiCollisionData, 'vehicle_collision': MoraiVehicleCollisionData,
              'intersection_status': MoraiIntersectionStatus}
    listener = Listener(node)
    for name, msg_type in topics.items():
        listener.listen(msg_type, f'morai/{name}', 100)
    listener.listen(TFMessage, '/tf', 100)
    collisions = {'ego': 0, 'npc': 0}

    def count_collisions(msg, key):
        if getattr(msg, 'collision_objects', None) or getattr(msg, 'collisions', None):
            collisions[key] += 1
    subs = [node.create_subscription(MoraiCollisionData, 'morai/collision',
                                     lambda m: count_collisions(m, 'ego'), 100),
            node.create_subscription(MoraiVehicleCollisionData, 'morai/vehicle_collision',
                                     lambda m: count_collisions(m, 'npc'), 100)]
    cmd_pub = node.create_publisher(MoraiCtrlCmd, 'morai/ctrl_cmd', 10)
    lamp_pub = node.create_publisher(MoraiLamps, 'morai/lamps', 10)

    lines = [f'MORAI SIM: morai_bridge (config/morai.yaml, ports overridden to free ones) ↔ '
             f'morai_sim (release newest, {rate:.0f} Hz, {seconds:.0f} s, UDP 127.0.0.1)']
    rows = []
    serve = threading.Thread(target=emu.serve, kwargs={'duration': seconds + 30}, daemon=True)
    try:
        with NodeProcess('morai_bridge', params_file=config_file('morai.yaml'),
                         parameters=params):
            if not listener.wait_matched(15.0):
                lines.append('  warning: not every topic was discovered within 15 s')
            wait_until(lambda: cmd_pub.get_subscription_count() > 0, 10, 0.05)
            serve.start()
            cruise = 30.0 / 3.6     # MoraiCtrlCmd.velocity is m/s (30 km/h on the wire)
            script = [(0.0, 'velocity 8.3 m/s (30 km/h)', dict(cmd_type=2, velocity=cruise,
                                                               steering=0.0), 0),
                      (0.5, 'steer left 0.3, left signal', dict(cmd_type=2, velocity=cruise,
                                                                steering=0.3), 1),
                      (0.8, 'brake', dict(cmd_type=1, brake=1.0), 0)]
            t0 = time.monotonic()
            step = 0
            last_row = -1.0
            while time.monotonic() - t0 < seconds:
                t = time.monotonic() - t0
                while step + 1 < len(script) and t >= script[step + 1][0] * seconds:
                    step += 1
                label, fields, signal = script[step][1:]
                cmd_pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=4, **fields))   # 10 Hz, like MORAI
                lamp_pub.publish(MoraiLamps(turn_signal=signal))
                if t - last_row >= seconds / 8:
                    last_row = t
                    rows.append((t, label, listener.last.get('morai/odom'),
                                 listener.last.get('morai/ego_status')))
                time.sleep(0.1)
            r = call_service(node, MoraiScenarioLoad, 'morai/scenario_load',
                             MoraiScenarioLoad.Request(file_name='demo_highway', set_pause=False))
            answer = '-' if r is None else f'success={r.success}'
            time.sleep(0.3)
    finally:
        emu.stop()
        if serve.is_alive():
            serve.join(5.0)
        emu.close()
        for sub in subs:
            node.destroy_subscription(sub)
        node.destroy_publisher(cmd_pub)
        node.destroy_publisher(lamp_pub)

    lines.append(f'  {"t s":>5}  {"command":30} {"x m":>7} {"y m":>7} {"yaw °":>6} '
                 f'{"speed m/s":>9} {"gear":>4} {"mode":>4}')
    for t, label, odom, status in rows:
        if odom is None or status is None:
            lines.append(f'  {t:5.1f}  {label:30} (no ego status yet)')
            continue
        p, q = odom.pose.pose.position, odom.pose.pose.orientation
        yaw = math.degrees(quat_to_euler([q.w, q.x, q.y, q.z])[2])
        lines.append(f'  {t:5.1f}  {label:30} {p.x:7.2f} {p.y:7.2f} {yaw:6.1f} '
                     f'{odom.twist.twist.linear.x:9.2f} {status.gear:>4} {status.ctrl_mode:>4}')
    objects = listener.last.get('morai/objects')
    tl = listener.last.get('morai/traffic_light_status')
    insn = listener.last.get('morai/intersection_status')
    status = listener.last.get('morai/ego_status')
    c = listener.count
    lines.append(f'  received: ego_status {c["morai/ego_status"]}, odom {c["morai/odom"]}, '
                 f'/tf {c["/tf"]}, objects {c["morai/objects"]}, markers '
                 f'{c["morai/object_markers"]}, traffic light {c["morai/traffic_light_status"]}, '
                 f'intersection {c["morai/intersection_status"]}, collision '
                 f'{c["morai/collision"]}, npc collision {c["morai/vehicle_collision"]} '
                 f'(sent {emu.scene.stats.get("ctrl_cmd", 0)} ctrl_cmd received by the emulator)')
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
    lines.append(f'  collisions: {collisions["ego"]} ego-collision messages with objects, '
                 f'{collisions["npc"]} npc-collision messages with pairs')
    lines.append('  command round trip: ctrl_cmd → ego moved to x = '
                 + (f'{rows[-1][2].pose.pose.position.x:.1f} m' if rows and rows[-1][2] else '-')
                 + f'; lamps → emulator turn signal {emu.scene.turn_signal}; scenario_load → '
                 f'{answer}, emulator loaded '
                 + (repr(emu.scene.scenario.file_name) if emu.scene.scenario else 'nothing'))
    return lines
