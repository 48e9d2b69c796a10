"""Demo section: ibeo LUX driver against the built-in LUX emulator."""
from __future__ import annotations

import socket
import time

from ros_sim_bridge.tools.ports import free_tcp_port
from ros_sim_bridge.tools.session import call_service, wait_until

PREFIX = 'ibeo/'   # the node's default topic_prefix (config/ibeo.yaml), in the root namespace


def run(node, seconds: float) -> list[str]:
    """ibeo_lux (installed executable, config/ibeo.yaml) ← ibeo_lux_sim (4 layers, 12.5 Hz)."""
    port = free_tcp_port()
    listener = _listener(node)
    warnings: dict[str, int] = {}
    link: dict[str, str] = {}
    diag_sub = _watch_diagnostics(node, warnings, link)
    lines = [f'ibeo LUX: ibeo_lux (config/ibeo.yaml, port {port}) ← ibeo_lux_sim (4 layers, '
             f'12.5 Hz, {seconds:.0f} s, TCP 127.0.0.1:{port})']
    try:
        points_per_scan, status, param = _drive(node, listener, port, seconds, lines)
    finally:
        node.destroy_subscription(diag_sub)
    return lines + _summary(listener, points_per_scan, warnings, link, status, param)


def _listener(node):
    """A Listener on every topic the driver publishes."""
    from geometry_msgs.msg import TwistStamped
    from sensor_msgs.msg import PointCloud2
    from visualization_msgs.msg import MarkerArray

    from ros_sim_bridge.msg import LuxObjectList, LuxScanInfo, LuxVehicleState
    from ros_sim_bridge.tools.listener import Listener

    listener = Listener(node)
    listener.listen(PointCloud2, PREFIX + 'points')
    listener.listen(LuxScanInfo, PREFIX + 'scan_info', 50)
    listener.listen(LuxObjectList, PREFIX + 'objects')
    listener.listen(MarkerArray, PREFIX + 'objects/markers')
    listener.listen(LuxVehicleState, PREFIX + 'vehicle_state')
    listener.listen(TwistStamped, PREFIX + 'vehicle_state/twist')
    return listener


def _watch_diagnostics(node, warnings: dict, link: dict):
    """Collect the sensor warnings seen and the last link status values from /diagnostics."""
    from diagnostic_msgs.msg import DiagnosticArray

    def on_diag(msg):
        for st in msg.status:
            if st.name.endswith('sensor warnings'):
                for kv in st.values:
                    if kv.key.startswith('W-') or kv.key.startswith('E-'):
                        warnings[kv.key] = warnings.get(kv.key, 0) + 1
            elif ': link tcp' in st.name and st.name.startswith('ibeo_lux'):
                link.update({kv.key: kv.value for kv in st.values})
    return node.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 50)


def _drive(node, listener, port: int, seconds: float, lines: list[str]):
    """Run the installed driver against the emulator for ``seconds``, then call two services:
    (points per scan seen, get_status response, get_parameter response)."""
    from ros_sim_bridge.srv import LuxGetParameter, LuxGetStatus
    from ros_sim_bridge.tools.launcher import NodeProcess, config_file

    points_per_scan: list[int] = []
    # the sensor first and gone last, as on a robot: the driver's log then shows no refused
    # connection and no lost link
    with NodeProcess('ibeo_lux_sim', args=['--host', '127.0.0.1', '--port', str(port),
                                           '--layers', '4', '--rate', '12.5', '--seed', '1',
                                           '--warning-period', '1.5'], quiet=True):
        wait_until(lambda: _listening(port), timeout=10.0, interval=0.05)
        with NodeProcess('ibeo_lux', params_file=config_file('ibeo.yaml'),
                         parameters={'port': port, 'min_backoff': 0.1, 'max_backoff': 0.5}):
            if not listener.wait_matched():
                lines.append('  warning: not every topic was discovered within 10 s')
            deadline = time.monotonic() + seconds
            seen = 0
            while time.monotonic() < deadline:
                time.sleep(0.05)
                info = listener.last.get(PREFIX + 'scan_info')
                if info is not None and listener.count[PREFIX + 'scan_info'] != seen:
                    seen = listener.count[PREFIX + 'scan_info']
                    points_per_scan.append(info.published_points)
            status = call_service(node, LuxGetStatus, '/ibeo_lux/get_status',
                                  LuxGetStatus.Request())
            param = call_service(node, LuxGetParameter, '/ibeo_lux/get_parameter',
                                 LuxGetParameter.Request(name='Scan frequency'))
            time.sleep(0.3)
    return points_per_scan, status, param


def _listening(port: int) -> bool:
    try:
        socket.create_connection(('127.0.0.1', port), timeout=0.2).close()
        return True
    except OSError:
        return False


def _summary(listener, points_per_scan, warnings, link, status, param) -> list[str]:
    c = {topic[len(PREFIX):]: n for topic, n in listener.count.items()}
    lines = []
    pts = (f'{min(points_per_scan)}–{max(points_per_scan)} points per scan'
           if points_per_scan else 'no scans')
    lines.append(f'  scans: {c["points"]} clouds, {c["scan_info"]} scan_info ({pts})')
    objs = listener.last.get(PREFIX + 'objects')
    if objs is not None:
        kinds = ', '.join(f'{o.id}:{o.classification_name}' for o in objs.objects)
        lines.append(f'  objects: {c["objects"]} lists, {c["objects/markers"]} marker arrays; '
                     f'last list: {len(objs.objects)} objects ({kinds})')
    vs = listener.last.get(PREFIX + 'vehicle_state')
    if vs is not None:
        lines.append(f'  vehicle state: {c["vehicle_state"]} messages ({c["vehicle_state/twist"]}'
                     f' twists), last: valid={vs.valid}, v={vs.longitudinal_velocity:.2f} m/s, '
                     f'dt={vs.time_difference:.3f} s')
    lines.append('  sensor warnings seen on /diagnostics: '
                 + (', '.join(f'{k}×{v}' for k, v in sorted(warnings.items())) or 'none'))
    if link:
        lines.append(f'  link: connected={link.get("connected")}, connects={link.get("connects")}, '
                     f'layers={link.get("layers")}, sensor clock {link.get("sensor_clock")}, '
                     f'offset {link.get("time_offset_s")} s, points by '
                     f'{link.get("point_builder")}')
    lines.append('  get_status: ' + (status.message if status is not None else 'no answer'))
    lines.append('  get_parameter: ' + (param.message if param is not None else 'no answer'))
    return lines
