"""Demo section: monoDrive client against the built-in emulator."""
from __future__ import annotations

import json
import os
import tempfile
import time


def run(node, seconds: float) -> list[str]:
    """monodrive_client (config/monodrive.yaml) ← monodrive_sim: state, lidar, camera, IMU,
    GPS streamed on free ports, a GetVersion and a replay step through the services."""
    from sensor_msgs.msg import Image, Imu, NavSatFix, PointCloud2

    from ros_sim_bridge.msg import MonoDriveState
    from ros_sim_bridge.srv import MonoDriveCommand, MonoDriveStep
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file
    from ros_sim_bridge.tools.listener import Listener
    from ros_sim_bridge.tools.ports import free_tcp_port
    from ros_sim_bridge.tools.session import call_service

    with open(config_file('monodrive/sensors.json')) as f:
        sensors = json.load(f)
    for s in sensors:                      # free ports: demos may run side by side
        s['listen_port'] = free_tcp_port()
    fd, sensors_path = tempfile.mkstemp(prefix='monodrive_sensors_', suffix='.json')
    with os.fdopen(fd, 'w') as f:
        json.dump(sensors, f)
    topics = {'state': (MonoDriveState, 'monodrive/state'),
              'lidar': (PointCloud2, 'monodrive/lidar/points'),
              'camera': (Image, 'monodrive/front_camera/image'),
              'imu': (Imu, 'monodrive/imu/imu'), 'gps': (NavSatFix, 'monodrive/gps/fix')}
    listener = Listener(node)
    for msg_type, topic in topics.values():
        listener.listen(msg_type, topic)
    port = free_tcp_port()
    lines = [f'monoDrive: monodrive_client (config/monodrive.yaml) ← monodrive_sim '
             f'(control 127.0.0.1:{port}, {len(sensors)} sensors, 10 Hz, {seconds:.0f} s)']
    try:
        with NodeProcess('monodrive_sim', args=['--host', '127.0.0.1', '--port', str(port),
                                                '--rate', '10'], quiet=True) as sim, \
                NodeProcess('monodrive_client', params_file=config_file('monodrive.yaml'),
                            parameters={'port': port, 'sensors_config': sensors_path}):
            if not listener.wait_matched(15.0):
                lines.append('  warning: the node did not come up within 15 s')
            version = call_service(node, MonoDriveCommand, '/monodrive_client/get_version',
                                   MonoDriveCommand.Request(json='{}'), 10.0)
            time.sleep(seconds)
            step = call_service(node, MonoDriveStep, '/monodrive_client/replay_step',
                                MonoDriveStep.Request(amount=1), 10.0)
            if not sim.running():
                lines.append('  warning: monodrive_sim ended: ' + ' | '.join(sim.last_lines()))
    finally:
        os.unlink(sensors_path)
    lines.append(f'  get_version → {version.message if version else "no answer"}; '
                 f'replay_step → {step.message if step else "no answer"}')
    lines.append('  ' + '  '.join(f'{k}: {listener.count[t]}' for k, (_, t) in topics.items()))
    state = listener.last.get('monodrive/state')
    cloud = listener.last.get('monodrive/lidar/points')
    if state is not None and state.vehicles:
        p = state.vehicles[0].pose.position
        lines.append(f'  ego at ({p.x:6.2f}, {p.y:6.2f}) m, {len(state.vehicles)} vehicles; '
                     f'last cloud {cloud.width if cloud else 0} points')
    return lines
