"""Demo section: a generated CARLA recording replayed by carla_replayer."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path


def run(node, seconds: float) -> list[str]:
    """carla_replayer (config/carla.yaml) on a generated recording: 6 vehicles, 3 walkers,
    4 traffic lights, a hero collision and a destroyed vehicle within the demo's time."""
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from std_srvs.srv import Trigger
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray

    from ros_sim_bridge.carla.emulator.scene import Scene

    from ros_sim_bridge.carla.emulator.writer import write
    from ros_sim_bridge.msg import CarlaActorList, CarlaCollision
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file
    from ros_sim_bridge.tools.listener import Listener
    from ros_sim_bridge.tools.session import call_service

    rate_factor = 2.0
    scene = Scene(seconds=max(seconds * rate_factor, 4.0), rate=20.0, vehicles=6, walkers=3,
                  traffic_lights=4)
    listener = Listener(node)
    for msg_type, topic, depth in ((Clock, '/clock', 100), (TFMessage, '/tf', 200),
                                   (CarlaActorList, 'carla/actor_list', 50),
                                   (MarkerArray, 'carla/markers', 50),
                                   (CarlaCollision, 'carla/collisions', 50),
                                   (Odometry, 'carla/hero/odometry', 50)):
        listener.listen(msg_type, topic, depth)
    deleted: set = set()
    node.create_subscription(MarkerArray, 'carla/markers', lambda m: deleted.update(
        x.id for x in m.markers if x.action == 2), 50)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'demo_scene.log'
        with open(path, 'wb') as f:
            size = write(f, scene, 'ue4-0.9.13')
        lines = [f'CARLA: carla_replayer (config/carla.yaml) ← generated recording '
                 f'({scene.frames} frames, {scene.seconds:.0f} s, {size / 1e3:.0f} kB, '
                 f'replayed ×{rate_factor:g})']
        with NodeProcess('carla_replayer', params_file=config_file('carla.yaml'),
                         parameters={'file': str(path), 'rate_factor': rate_factor,
                                     'start_paused': True}):
            # paused until every topic is matched, so that nothing is replayed unheard
            if not listener.wait_matched() or call_service(
                    node, Trigger, 'carla/resume', Trigger.Request(), 10.0) is None:
                lines.append('  warning: the replayer did not come up within 10 s')
            time.sleep(scene.seconds / rate_factor + 1.0)
    clock = listener.last.get('/clock')
    actors = listener.last.get('carla/actor_list')
    odom = listener.last.get('carla/hero/odometry')
    t = clock.clock.sec + clock.clock.nanosec * 1e-9 if clock else float('nan')
    lines.append(f'  /clock reached {t:.2f} s; messages: ' + ', '.join(
        f'{topic} {listener.count[topic]}' for topic in ('/tf', 'carla/actor_list',
                                                         'carla/markers', 'carla/collisions')))
    if actors is not None:
        kinds: dict = {}
        for a in actors.actors:
            kinds[a.type_name] = kinds.get(a.type_name, 0) + 1
        lines.append('  actors alive at the end: ' + ', '.join(f'{n} {k}' for k, n in
                                                               sorted(kinds.items())))
    lines.append(f'  destroyed actor {scene.destroyed} deleted from the markers: '
                 f'{"yes" if scene.destroyed in deleted else "no"}')
    if odom is not None:
        p = odom.pose.pose.position
        lines.append(f'  hero odometry (map, m): ({p.x:.2f}, {p.y:.2f}, {p.z:.2f})')
    return lines
