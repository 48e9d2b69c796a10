"""Helpers shared by the monoDrive tests (test/monodrive): request bodies for every message
type, the emulator fixture, a scripted TCP server on 127.0.0.1, sensor list files, the node's
parameters and service calls.  Test modules import what they use from here (the ``sim``
fixture included: ``from monodrive_support import sim``)."""
from __future__ import annotations

import json
import socket
import struct
import threading

import pytest

from conftest import free_tcp_port
from ros_sim_bridge.monodrive.emulator import server as sim_server
from ros_sim_bridge.monodrive.codec import control

NODE = '/monodrive_client'

# a valid body for each message type whose body is checked (the others take {})
BODIES = {
    'EgoControl_ID': {'forward_amount': 0.5, 'right_amount': 0.1, 'brake_amount': 0.0,
                      'drive_mode': 1},
    'SimulatorConfig_ID': {'simulation_mode': 1, 'map': 'Straightaway5k'},
    'WeatherConfig': {'set_profile': 'sunny', 'profiles': [{'id': 'sunny'}]},
    'REPLAY_StepSimulationCommand_ID': {'amount': 2},
    'ClosedLoopStepCommand_ID': {'time_step': 0.01},
    'SampleSensorListCommand_ID': {'ports': [8000]},
    'GetMap': {'format': 'geojson', 'coordinates': 'world'},
    'REPLAY_StateStepSimulationCommand_ID': {'frame': {'vehicles': [], 'objects': []}},
    'REPLAY_ConfigureTrajectoryCommand_ID': [],
    'AttachSensorCommand_ID': {'type': 'Waypoint', 'listen_port': 8083},
    'REPLAY_ConfigureSensorsCommand_ID': {'type': 'Waypoint', 'listen_port': 8083},
    'REPLAY_ReConfigureSensorCommand_ID': {'type': 'Waypoint', 'listen_port': 8083},
    'DetachSensorCommand_ID': {'listen_port': 8083},
}


@pytest.fixture
def sim():
    """The emulator on a free port of 127.0.0.1 at 20 Hz."""
    s = sim_server.MonoDriveSim('127.0.0.1', 0, rate=20.0).start()
    yield s
    s.stop()


def connects(port: int) -> bool:
    """True when something accepts a TCP connection on 127.0.0.1:port."""
    try:
        socket.create_connection(('127.0.0.1', port), 0.5).close()
        return True
    except OSError:
        return False


def sensors_file(tmp_path, kinds=('State', 'Lidar', 'Camera', 'IMU', 'GPS'), extra=()):
    """A sensor list JSON file with one sensor per kind on free ports: (path, {kind: port})."""
    ports: dict = {}
    for kind in kinds:                  # distinct: a port let go may be handed out again
        port = free_tcp_port()
        while port in ports.values():
            port = free_tcp_port()
        ports[kind] = port
    sensors = []
    for kind, port in ports.items():
        s = {'type': kind, 'listen_port': port, 'description': kind.lower(),
             'location': {'x': 100.0, 'y': 50.0, 'z': 200.0},
             'rotation': {'pitch': 0.0, 'yaw': 90.0, 'roll': 0.0}}
        if kind == 'Camera':
            s.update(stream_dimensions={'x': 64, 'y': 48}, channels='bgra', fov=90.0)
        if kind == 'Lidar':
            s.update(n_lasers=16, horizontal_resolution=0.4)
        sensors.append(s)
    sensors += list(extra)
    path = tmp_path / 'sensors.json'
    path.write_text(json.dumps(sensors))
    return path, ports


def params(port, **kw):
    """monodrive_client parameters for a test: short timeouts and back-off; none of the
    package's JSON files unless given."""
    return {'port': port, 'request_timeout': 2.0, 'min_backoff': 0.1, 'max_backoff': 0.5,
            'diagnostics_period': 0.3, 'simulator_config': '', 'weather_config': '',
            'vehicle_config': '', 'sensors_config': '', **kw}


def command(ros, msg_type, body, timeout=10.0):
    """Call the node's service for ``msg_type`` with ``body`` (None when it never answers)."""
    from ros_sim_bridge.monodrive.ros.node import service_name
    from ros_sim_bridge.srv import MonoDriveCommand
    from ros_sim_bridge.tools.session import call_service
    req = MonoDriveCommand.Request(json=json.dumps(body))
    return call_service(ros.probe, MonoDriveCommand, f'{NODE}/{service_name(msg_type)}', req,
                        timeout)


def sensor_header(n: int, game_time: float, count: int) -> bytes:
    """A 16-byte sensor header (SUPPLEMENT §4.1) for an ``n``-byte payload, big-endian."""
    return struct.pack('>IIfI', 16 + n, 1, game_time, count)


class ScriptedServer:
    """A TCP server on 127.0.0.1 whose connections run ``handler(conn, stop_event)``."""

    def __init__(self, handler, port=0):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', port))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.handler = handler
        self.stop_flag = threading.Event()
        self.connections = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_flag.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            self.handler(conn, self.stop_flag)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self):
        self.stop_flag.set()
        self.sock.close()
        self.thread.join(2.0)


def read_request(conn):
    """The next control request arriving on ``conn`` (ControlMessage)."""
    framer = control.ControlFramer()
    conn.settimeout(5.0)
    while True:
        data = conn.recv(65536)
        if not data:
            raise OSError('closed')
        for ev in framer.feed(data):
            return control.decode_frame(ev)


class DiagnosticsWatch:
    """Every /diagnostics status whose name contains ``name_part``, as it arrives (subscribe
    before the node starts to see its first statuses)."""

    def __init__(self, ros, name_part: str):
        from diagnostic_msgs.msg import DiagnosticArray
        self.name_part = name_part
        self.collector = ros.collect(DiagnosticArray, '/diagnostics', 100, matched=False)

    def statuses(self):
        return [st for arr in list(self.collector.messages) for st in arr.status
                if self.name_part in st.name]

    def wait_for(self, predicate, timeout: float = 10.0):
        """The first status satisfying ``predicate(status)``; an assertion when none does."""
        from conftest import wait_until
        found = []

        def check():
            found[:] = [st for st in self.statuses() if predicate(st)][:1]
            return bool(found)
        assert wait_until(check, timeout), \
            f'no /diagnostics status {self.name_part!r} matched; last: ' + \
            repr([(st.level, st.message) for st in self.statuses()[-3:]])
        return found[0]
