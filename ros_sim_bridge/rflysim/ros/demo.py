"""Demo section: RflySim ground truth."""
from __future__ import annotations

import re
import subprocess
import time


def run(node, seconds: float) -> list[str]:
    """rflysim_truth fed by the installed sender (rflysim_sim): three multicopters at 50 Hz."""
    from diagnostic_msgs.msg import DiagnosticArray
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import NavSatFix
    from tf2_msgs.msg import TFMessage

    from ros_sim_bridge.core.frames import quat_to_euler
    from ros_sim_bridge.ros.qos import LATCHED
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file, executable

    ids = [1, 2, 3]
    rate = 50.0
    from ros_sim_bridge.tools.listener import Listener

    listener = Listener(node)
    for i in ids:
        listener.listen(Odometry, f'rflysim/vehicle_{i}/odom', 200)
        listener.listen(NavSatFix, f'rflysim/vehicle_{i}/fix', 200)
    listener.listen(TFMessage, '/tf', 600)
    listener.listen(NavSatFix, 'rflysim/map_origin', LATCHED)
    listener.listen(DiagnosticArray, '/diagnostics')
    lines = [f'RflySim: rflysim_truth (config/rflysim.yaml, CopterIDs {ids}) ← rflysim_sim '
             f'({len(ids)} multicopters, {rate:.0f} Hz, {seconds:.0f} s, UDP 127.0.0.1:30101+)']
    with NodeProcess('rflysim_truth', params_file=config_file('rflysim.yaml'),
                     parameters={'copter_ids': ids}):
        # matched topics, and the node's first /diagnostics: its ports are bound by then
        if not (listener.wait_matched() and listener.wait_for('/diagnostics')):
            lines.append('  warning: the node did not come up within 10 s')
        sim = subprocess.run([str(executable('rflysim_sim')), '--ids', ','.join(map(str, ids)),
                              '--rate', f'{rate:g}', '--duration', f'{seconds:g}'],
                             capture_output=True, text=True, timeout=seconds + 60)
        time.sleep(0.5)
    sent = sent_per_vehicle(sim.stdout)
    if sim.returncode != 0 or not sent:
        lines.append(f'  warning: rflysim_sim exit {sim.returncode}: '
                     + (sim.stderr.strip().splitlines() or ['no summary'])[-1])
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
        lines.append(f'  {i:<8} {sent.get(i, "-"):>5} '
                     f'{listener.count[f"rflysim/vehicle_{i}/odom"]:>5} '
                     f'{listener.count[f"rflysim/vehicle_{i}/fix"]:>5}   {pose:44} {gps}')
    origin = listener.last.get('rflysim/map_origin')
    lines.append(f'  /tf transforms messages: {listener.count["/tf"]}; map origin: '
                 + (f'{origin.latitude:.6f}, {origin.longitude:.6f}, {origin.altitude:.1f}'
                    if origin else 'none'))
    return lines


def sent_per_vehicle(summary: str) -> dict[int, int]:
    """CopterID → truth packets sent, from rflysim_sim's last line ('sent N truth packets
    (1: a, 2: b, …)'); {} when there is none."""
    found = re.search(r'sent \d+ truth packets \(([^)]*)\)', summary)
    if not found:
        return {}
    pairs = (item.split(':') for item in found.group(1).split(','))
    return {int(k): int(v) for k, v in pairs}
