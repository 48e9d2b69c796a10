"""monoDrive simulator client: JSON control channel and TCP sensor streams (SUPPLEMENT §4).

:data:`SOURCE` is this source's entry in the suite's table (core/source.py)."""
import os

from ros_sim_bridge.core.source import Argument, Source


def _emulator_args(params: dict, args: dict) -> list[str]:
    # the emulator streams each sensor the client configures, on that sensor's listen_port
    return ['--host', '127.0.0.1', '--port', str(params.get('port', 8999)), '--duration', '0']


def _free_ports(params: dict, pick, resolve) -> dict:
    """The control port and every sensor's ``listen_port`` (a copy of the sensors file with
    free ports, removed when this process ends): a simulator or another suite already on the
    default sensor ports is never connected to."""
    moved = {'port': pick('tcp', 1, 1)}
    name = params.get('sensors_config')
    if name:
        import atexit
        import json
        import tempfile
        with open(resolve(str(name))) as f:
            sensors = json.load(f)
        for sensor in sensors if isinstance(sensors, list) else ():
            if isinstance(sensor, dict) and sensor.get('listen_port'):
                sensor['listen_port'] = pick('tcp', 1, 1)
        fd, path = tempfile.mkstemp(prefix='monodrive_sensors_', suffix='.json')
        with os.fdopen(fd, 'w') as f:
            json.dump(sensors, f)
        atexit.register(os.unlink, path)
        moved['sensors_config'] = path
    return moved


SOURCE = Source(
    'monodrive', 'monoDrive simulator', 'monodrive_client', 'monodrive_client',
    'monodrive_sim', _emulator_args,
    (Argument('host', 'simulator address (default: the params file)', 'str', 'host'),
     Argument('port', 'simulator control port (default: the params file)', 'int', 'port')),
    free_ports=_free_ports, order=40, docs='monodrive.md', demo_check='monodrive')
