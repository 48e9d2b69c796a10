"""The emulated monoDrive simulator's sockets (SUPPLEMENT §4.1 – §4.3), ROS-free.

Control channel on ``port`` (8999): accepts the framing of §4.1, answers every message type of
§4.2 with a reply shaped like the real simulator's (§4.3), echoing the request's
``reference`` (``echo_reference=False`` leaves it out, as some builds may).  A sensor
configured by the client (REPLAY_ConfigureSensorsCommand_ID …, or the CLI's ``--sensors``)
gets a TCP server on its ``listen_port`` that streams the samples of
:class:`~.scene.SensorModel`, each with a 16-byte (``header_size=12``: 12-byte) header.
"""
from __future__ import annotations

import errno
import math
import socket
import sys
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.cli import stop_requested
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.monodrive.codec import control, sensor
from ros_sim_bridge.monodrive.emulator.scene import STREAMED, VERSION, Scene, SensorModel

DEFAULT_HOST = '127.0.0.1'
DEFAULT_PORT = 8999


def send_buffers(sock: socket.socket, buffers: list) -> None:
    """``sendall`` of several buffers in order, gathered (``sendmsg``) rather than joined."""
    views = [memoryview(b).cast('B') for b in buffers if len(b)]
    while views:
        n = sock.sendmsg(views[:512])
        while n and views:
            if n >= len(views[0]):
                n -= len(views.pop(0))
            else:
                views[0], n = views[0][n:], 0


def _listen(host: str, port: int, what: str) -> socket.socket:
    """A listening TCP socket; OSError naming the address and ``what`` when the port is
    taken (or out of range, or the address not on this host)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if not 0 <= port <= 65535:
            raise OSError(errno.EINVAL, 'not a TCP port 0..65535')
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(4)
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f'cannot listen on TCP {host}:{port} ({what}): '
                      f'{exc.strerror or exc}') from None
    return sock



class SensorStream(SensorModel):
    """One configured sensor: its listening socket, its clients and its sample generator."""

    def __init__(self, config: dict, host: str, header_size: int):
        super().__init__(config)
        self.header_size = header_size
        self.clients: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener = _listen(host, self.port, f'{self.type} sensor port')
        self.listener.settimeout(0.2)
        self.sent = 0

    def accept(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(2.0)
            with self.lock:
                self.clients.append(conn)

    def send(self, payloads_: list, game_time: float) -> None:
        """Every payload (bytes or a memoryview) with its header to every client, gathered
        into one ``sendmsg`` per client: a camera frame is not copied on the way out."""
        with self.lock:
            clients = list(self.clients)
        if not clients:
            return
        self.sample_count += 1
        t = int(time.time()) & 0xFFFFFFFF
        count = self.sample_count if self.header_size == 16 else None
        buffers = []
        for p in payloads_:
            buffers.append(sensor.encode_header(len(p), t, game_time, count))
            buffers.append(p)
        for c in clients:
            try:
                send_buffers(c, buffers)
                self.sent += 1
            except OSError:
                self.drop(c)

    def drop(self, c: socket.socket) -> None:
        with self.lock:
            if c in self.clients:
                self.clients.remove(c)
        try:
            c.close()
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.listener.close()
        except OSError:
            pass
        with self.lock:
            clients, self.clients = self.clients, []
        for c in clients:
            try:
                c.close()
            except OSError:
                pass

    # --- samples of each sensor type --------------------------------------------------------

class MonoDriveSim:
    """The control server and the configured sensor streams."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
                 rate: float = 10.0, header_size: int = 16,
                 reply_magic: int = control.CLIENT_MAGIC, echo_reference: bool = True,
                 scene: Optional[Scene] = None, camera_rate: Optional[float] = None,
                 log: Optional[Callable[[str], None]] = None):
        self.host = host
        self.log = log                  # told when a sensor port starts listening (the CLI)
        self.rate = rate
        self.camera_rate = camera_rate or rate
        self.header_size = header_size
        self.reply_magic = reply_magic
        self.echo_reference = echo_reference
        self.scene = scene or Scene()
        self.mode = 0
        self.sensors: dict[int, SensorStream] = {}
        self.received: list[control.ControlMessage] = []
        self.errors = 0
        self.weather = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.server = _listen(host, port, 'control port, --port')
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.clients: list[socket.socket] = []

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> 'MonoDriveSim':
        for target in (self._accept, self._stream):
            t = threading.Thread(target=target, daemon=True, name=f'monodrive-sim-{target.__name__}')
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        self._stop.set()
        try:
            self.server.close()
        except OSError:
            pass
        for c in list(self.clients):
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass
        for s in list(self.sensors.values()):
            s.close()
        for t in self._threads:
            t.join(timeout=2.0)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def configure_sensor(self, config: dict) -> str:
        port = int(config['listen_port'])
        kind = str(config.get('type'))
        with self._lock:
            old = self.sensors.pop(port, None)
            if old is not None:
                old.close()
            if kind not in STREAMED:
                return f'{kind} configured (not streamed by the emulator)'
            stream = SensorStream(config, self.host, self.header_size)
            self.sensors[port] = stream
        t = threading.Thread(target=stream.accept, args=(self._stop,), daemon=True,
                             name=f'monodrive-sim-{kind}-{port}')
        t.start()
        self._threads.append(t)
        if self.log is not None:
            self.log(f'{kind} listening on {self.host}:{port}')
        return 'complete'

    # --- control channel -------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.clients.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        framer = control.ControlFramer()
        conn.settimeout(0.2)
        try:
            while not self._stop.is_set():
                try:
                    chunk = conn.recv(1 << 16)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                for event in framer.feed(chunk):
                    if isinstance(event, Frame):
                        reply = self._reply_to(event)
                        if reply is not None:
                            conn.sendall(control.encode_frame(reply, self.reply_magic))
                    else:
                        self.errors += 1
        except OSError:
            pass
        finally:
            if conn in self.clients:
                self.clients.remove(conn)
            try:
                conn.close()
            except OSError:
                pass

    def _reply_to(self, frame: Frame) -> Optional[dict]:
        try:
            msg = control.decode_frame(frame)
        except CodecError:
            self.errors += 1
            return None
        self.received.append(msg)
        try:
            success, message = self.answer(msg.type, msg.message)
        except (KeyError, TypeError, ValueError, OSError) as exc:
            success, message = False, f'invalid {msg.type} message: {exc}'
        out = {'type': msg.type, 'success': success, 'message': message}
        if self.echo_reference and msg.reference is not None:
            out['reference'] = msg.reference
        return out

    def answer(self, msg_type: str, body: Any) -> tuple[bool, Any]:
        """(success, message) the simulator answers ``msg_type`` with (SUPPLEMENT §4.3)."""
        s = self.scene
        if msg_type == 'SimulatorConfig_ID':
            if 'map' in body and not body['map']:
                return False, 'invalid map specified'
            self.mode = int(body.get('simulation_mode', 0))
            return True, f'simulator configuration mode = {self.mode}'
        if msg_type == 'EgoControl_ID':
            s.throttle = float(body['forward_amount'])
            s.steer = float(body['right_amount'])
            s.brake = float(body['brake_amount'])
            s.drive_mode = int(body['drive_mode'])
            return True, 'complete'
        if msg_type == 'WeatherConfig':
            self.weather = body
            return True, f'Weather configured to {body.get("set_profile", body.get("id"))}'
        if msg_type in ('REPLAY_ConfigureSensorsCommand_ID', 'AttachSensorCommand_ID'):
            results = [self.configure_sensor(c) for c in (body if isinstance(body, list)
                                                            else [body])]
            return True, results[0] if len(results) == 1 else 'complete'
        if msg_type == 'REPLAY_ReConfigureSensorCommand_ID':
            return True, self.configure_sensor(body)
        if msg_type == 'DetachSensorCommand_ID':
            stream = self.sensors.pop(int(body.get('listen_port', -1)), None)
            if stream is not None:
                stream.close()
            return True, 'complete'
        if msg_type == 'REPLAY_StepSimulationCommand_ID':
            s.t += int(body['amount']) / self.rate
            return True, 'complete'
        if msg_type == 'REPLAY_StateStepSimulationCommand_ID':
            return True, 'complete'
        if msg_type == 'ClosedLoopStepCommand_ID':
            s.t += float(body['time_step'])
            return True, True
        if msg_type == 'SampleSensorsCommand_ID':
            return True, 'sensors sampled'
        if msg_type == 'SampleSensorListCommand_ID':
            return True, f'sampled {len(body.get("ports", []))} sensors'
        if msg_type == 'GetVersion':
            return True, VERSION
        if msg_type == 'GetMap':
            if body.get('format') == 'opendrive':
                return True, '<?xml version="1.0"?><OpenDRIVE><header name="emulator"/></OpenDRIVE>'
            pts = [[s.radius * 100 * math.cos(a), -s.radius * 100 * math.sin(a), 0.0]
                   for a in np.linspace(0, 2 * math.pi, 24, endpoint=False)]
            return True, {'type': 'FeatureCollection', 'features': [
                {'type': 'Feature', 'properties': {'road_id': 0, 'lane_id': -1},
                 'geometry': {'type': 'LineString', 'coordinates': pts}}]}
        if msg_type == 'GetStartPoints':
            return True, [{'location': {'x': s.radius * 100, 'y': 0.0, 'z': 0.0},
                           'rotation': {'pitch': 0.0, 'yaw': -90.0, 'roll': 0.0}}]
        if msg_type in ('StopAllSensorsCommand_ID', 'StartAllSensorsCommand_ID',
                        'ActivateLicense', 'Status_ID', 'ImportMap', 'AutopilotControl',
                        'VehicleLightsConf', 'EgoVehicleConfig_ID', 'ScenarioConfig_ID',
                        'ScenarioInit_ID', 'MapCommand_ID', 'WaypointUpdate_ID',
                        'StreamData_ID', 'SpawnActorCommand_ID', 'UpdateActorCommand_ID',
                        'REPLAY_ConfigureTrajectoryCommand_ID', 'ClosedLoopConfigCommand_ID'):
            return True, 'complete'
        return False, f'unknown message type {msg_type}'

    # --- sensor streaming -------------------------------------------------------------------
    def _stream(self) -> None:
        period = 1.0 / self.rate
        next_t = time.monotonic()
        while not self._stop.is_set():
            self.scene.t += period
            with self._lock:
                streams = list(self.sensors.values())
            for stream in streams:
                try:
                    data = stream.samples(self.scene, period)
                    stream.send(data, self.scene.t)
                except Exception as exc:  # one sensor's failure must not stop the others
                    self.errors += 1
                    print(f'monodrive_sim: {stream.type} on {stream.port}: {exc!r}',
                          file=sys.stderr, flush=True)
            next_t += period
            delay = next_t - time.monotonic()
            if delay < -1.0:
                next_t = time.monotonic()
            self._stop.wait(max(0.0, delay))

    def serve_forever(self, duration: Optional[float] = None) -> None:
        end = None if not duration else time.monotonic() + duration
        while not (self._stop.is_set() or stop_requested()) and (
                end is None or time.monotonic() < end):
            self._stop.wait(0.2)


