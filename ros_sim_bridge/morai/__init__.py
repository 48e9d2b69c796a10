"""MORAI SIM UDP interface: codec (package), emulator, and the ROS bridge in ros/.

:data:`SOURCE` is this source's entry in the suite's table (core/source.py)."""
from ros_sim_bridge.core.source import Argument, Source

EGO_PORT_SIM = '9091'  # MORAI's Ego Status port 909 needs privileges; 9091 on both sides
#: bridge listen_port.<name> → emulator --<name>-port;
#: bridge sim_port.<name> → --<name>-listen-port
LISTEN = ('ego_status', 'object_info', 'traffic_light_status', 'collision',
          'vehicle_collision', 'intersection_status')
SIM_PORTS = ('ctrl_cmd', 'set_traffic_light', 'set_intersection', 'scenario_load',
             'save_sensor_data', 'sensor_control', 'lamp_control', 'multi_ego_setting')


def _emulator_args(params: dict, args: dict) -> list[str]:
    out = ['--release', args.get('release') or 'newest', '--duration', '0',
           '--log-level', 'WARNING']
    for name in LISTEN:
        port = params.get(f'listen_port.{name}')
        if port is not None:
            out += [f'--{name.replace("_", "-")}-port', str(port if port > 0 else -1)]
    for name in SIM_PORTS:
        port = params.get(f'sim_port.{name}')
        if port is not None:
            out += [f'--{name.replace("_", "-")}-listen-port', str(port if port > 0 else -1)]
    return out


def _sim_parameters(params: dict, args: dict) -> dict:
    port = params.get('listen_port.ego_status')
    if args.get('ego_status_port') or (port is not None and 0 < port < 1024):
        return {'listen_port.ego_status': int(args.get('ego_status_port') or EGO_PORT_SIM)}
    return {}


def _free_ports(params: dict, pick, resolve) -> dict:
    out = {}
    for name in LISTEN:
        if params.get(f'listen_port.{name}', 0) > 0:
            out[f'listen_port.{name}'] = pick('udp', 1, 1)
    for name in SIM_PORTS:
        if params.get(f'sim_port.{name}', 0) > 0:
            out[f'sim_port.{name}'] = pick('udp', 1, 1)
    return out


SOURCE = Source(
    'morai', 'MORAI SIM', 'morai_bridge', 'morai_bridge', 'morai_sim', _emulator_args,
    (Argument('ego_status_port', 'Ego Vehicle Status listen port (default: the params '
              'file; with sim:=true 9091, as 909 needs privileges)', 'int'),
     Argument('release', 'emulator layout preset with sim:=true (document, oldest, '
              'link_id, stamped, newest, 26.R1)', 'str', None, 'newest')),
    sim_parameters=_sim_parameters, free_ports=_free_ports, order=20, docs='morai.md',
    demo_check='morai', demo_driver='EgoDriver')
