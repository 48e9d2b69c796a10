"""ibeo LUX / SICK LD-MRS / Ibeo ECU: codec (package), session, emulator, the ``ibeo_idc`` CLI,
and the ROS driver in ros/.

:data:`SOURCE` (the LUX) and :data:`EXTRA_SOURCES` (the same node with an ECU's defaults) are
this source's entries in the suite's table (core/source.py)."""
from ros_sim_bridge.core.source import Argument, Source


def _emulator_args(params: dict, args: dict) -> list[str]:
    return ['--host', '127.0.0.1', '--port', str(params.get('port', 12002)),
            '--layers', str(args.get('sim_layers') or '4'), '--duration', '0']


def _free_ports(params: dict, pick, resolve) -> dict:
    return {'port': pick('tcp', 1, 1)}


def _sim_parameters(params: dict, args: dict) -> dict:
    """With the emulator the LUX frame is put at the map origin (the ``/tf_static`` the node
    publishes), so RViz's fixed frame ``map`` shows it."""
    return {} if params.get('parent_frame_id') else {'parent_frame_id': 'map'}


def _ecu_emulator_args(params: dict, args: dict) -> list[str]:
    return ['--ecu', '--host', '127.0.0.1', '--port', str(params.get('port', 12002)),
            '--scanners', str(args.get('sim_scanners') or '4'),
            '--points', str(args.get('sim_points') or '60000'), '--duration', '0']


SOURCE = Source(
    'ibeo', 'ibeo LUX / SICK LD-MRS', 'ibeo_lux', 'ibeo_lux', 'ibeo_lux_sim', _emulator_args,
    (Argument('host', 'sensor address (default: the params file; a real LUX ships '
              'with 192.168.0.1)', 'str', 'host'),
     Argument('port', 'sensor TCP port (default: the params file)', 'int', 'port'),
     Argument('sim_layers', 'layers of the emulator with sim:=true: 4 or 8', 'str',
              None, '4'),
     Argument('source', "'tcp' (the sensor) or 'file' (play an .idc recording; "
              'default: the params file)', 'str', 'source'),
     Argument('file', '.idc recording played with source:=file (default: the params '
              'file)', 'str', 'file'),
     Argument('rate', 'source:=file: playback speed, recording seconds per wall second '
              '(default: the params file)', 'float', 'rate'),
     Argument('loop', "source:=file: 'true' starts again after the end (default: the "
              'params file)', 'bool', 'loop'),
     Argument('start_offset', 'source:=file: s after the first message to start at; '
              'negative: before the last (default: the params file)', 'float',
              'start_offset')),
    sim_parameters=_sim_parameters, free_ports=_free_ports, order=30, docs='ibeo.md',
    demo_check='lux')

#: ``ibeo_ecu`` is the ``ibeo_lux`` node with an Ibeo ECU's defaults: a launch file of its own
#: (an alternative to the ``ibeo`` source, on the same port), not started by the whole suite
EXTRA_SOURCES = (Source(
    'ibeo_ecu', 'Ibeo ECU / FUSION SYSTEM', 'ibeo_ecu', 'ibeo_ecu', 'ibeo_lux_sim',
    _ecu_emulator_args,
    (Argument('host', 'ECU address (default: the params file; an ECU ships with '
              '192.168.0.100)', 'str', 'host'),
     Argument('port', 'ECU TCP port (default: the params file)', 'int', 'port'),
     Argument('data_types', "ECU Set Filter after every connect: '0x2205, 0x2280' or "
              "'all' (default: the params file)", 'str', 'data_types'),
     Argument('sim_scanners', 'scanners of the emulator with sim:=true', 'str', None,
              '4'),
     Argument('sim_points', 'points per 0x2205 of the emulator with sim:=true', 'str',
              None, '60000')),
    free_ports=_free_ports, order=31, docs='ibeo.md'),)
