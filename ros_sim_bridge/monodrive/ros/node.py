"""monoDrive client (executable ``monodrive_client``): the JSON control channel and every
sensor stream of a monoDrive simulator into ROS 2 (SUPPLEMENT §4).

| direction | name | type | notes |
|---|---|---|---|
| srv | ~/<command> (e.g. ~/get_version, ~/simulator_config) | ros_sim_bridge/MonoDriveCommand | one per message type (SUPPLEMENT §4.2) |
| srv | ~/raw_command | ros_sim_bridge/MonoDriveRawCommand | any type, any JSON body |
| srv | ~/replay_step | ros_sim_bridge/MonoDriveStep | REPLAY_StepSimulationCommand_ID |
| srv | ~/step_trajectory | ros_sim_bridge/MonoDriveStep | next frames of the trajectory file as state steps |
| sub | <prefix>/ego_control | ros_sim_bridge/MonoDriveEgoControl | EgoControl_ID, range-checked |
| pub | <prefix>/<sensor>/image, camera_info | Image (bgra8/rgba8/mono8), CameraInfo | Camera |
| pub | <prefix>/<sensor>/annotations | MarkerArray (2-D boxes, labels, 3-D boxes) | Camera annotation |
| pub | <prefix>/<sensor>/depth | Image 32FC1 (m) | DepthCamera |
| pub | <prefix>/<sensor>/semantic | Image mono8 | SemanticCamera |
| pub | <prefix>/<sensor>/points | PointCloud2 (one per revolution) | Lidar |
| pub | <prefix>/<sensor>/imu, fix, rpm, targets (+markers), collision, waypoint, ultrasonic | | |
| pub | <prefix>/state, <prefix>/vehicles/<name>/odom, <prefix>/state/markers, /tf | | State |
| pub | ~/raw | ros_sim_bridge/MonoDriveRaw | replies nobody waits for, unknown sensors |
| pub | /diagnostics, /tf_static | | |

Wiring only: the control channel is a :class:`~ros_sim_bridge.core.tcp.TcpClient` feeding a
sans-IO :class:`~ros_sim_bridge.monodrive.session.ClientSession`, whose replies reach the
waiting service callbacks through :class:`~ros_sim_bridge.core.request_reply.RequestReply`;
each sensor is another TcpClient feeding a
:class:`~ros_sim_bridge.monodrive.session.SensorSession`, whose records
(:mod:`ros_sim_bridge.monodrive.sensors`) :class:`SensorLink` hands to the conversions and
publishers of the table.
"""
from __future__ import annotations

import os
import re
import sys
import threading
import time
from typing import Any, Optional

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from nav_msgs.msg import Odometry
from sensor_msgs.msg import CameraInfo, Image, Imu, NavSatFix, PointCloud2
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.request_reply import RequestReply
from ros_sim_bridge.core.tcp import TcpClient
from ros_sim_bridge.monodrive import lidar_geometry, sensors
from ros_sim_bridge.monodrive import session as sess
from ros_sim_bridge.monodrive.codec import config as cfgmod
from ros_sim_bridge.monodrive.codec import control, messages, payloads, sensor
from ros_sim_bridge.monodrive.ros import conversions as convert
from ros_sim_bridge.msg import (MonoDriveCollision, MonoDriveEgoControl, MonoDriveRadarTargets,
                                MonoDriveRaw, MonoDriveRpm, MonoDriveState,
                                MonoDriveUltrasonic, MonoDriveWaypoint)
from ros_sim_bridge.srv import MonoDriveCommand, MonoDriveRawCommand, MonoDriveStep
from ros_sim_bridge.ros.clocks import STEADY
from ros_sim_bridge.ros.diagnostics import Diagnostics
from ros_sim_bridge.ros.geometry import transform as make_transform
from ros_sim_bridge.ros.params import (common_parameters, declare_parameters, non_negative_int,
                                       one_of, port, positive, positive_int, resolve_config_path)
from ros_sim_bridge.ros.pointcloud import CloudBuffer
from ros_sim_bridge.ros.pointcloud_cdr import pointcloud2_cdr
from ros_sim_bridge.ros.qos import DATA, LATCHED, TF
from ros_sim_bridge.ros.runner import run_node
from ros_sim_bridge.ros.stamps import ns_to_sec_nanosec, ns_to_stamp, seconds_to_stamp

#: header_size values (``-p header_size:=12`` arrives as '12': ros.params takes a number for a
#: string)
HEADER_SIZES = ('auto', '12', '16')


PARAMETERS = {
    'host': ('127.0.0.1', 'simulator address (control channel and, by default, sensors)'),
    'port': (8999, 'control port (2018 simulators: 8998)', port(what='TCP port')),
    'sensor_host': ('', "address of the sensor streams ('' = host)"),
    'request_timeout': (5.0, 's a command service waits for its reply', positive),
    'max_message_bytes': (control.DEFAULT_MAX_MESSAGE, 'largest control message accepted',
                          positive_int),
    'max_sample_bytes': (sensor.DEFAULT_MAX_SAMPLE, 'largest sensor message accepted',
                         positive_int),
    'min_backoff': (0.25, 's before the first reconnection attempt', positive),
    'max_backoff': (2.0, 's the doubling back-off grows to at most; each wait is still capped '
                    'at reconnect_within', positive),
    'reconnect_within': (0.5, 's between reconnection attempts at most, so a simulator that is '
                         'back is served within about that long (a link that was up for a '
                         'second or more is retried at once)', positive),
    'reply_magic': ('client', "magic of our requests: 'client' 0x6d6f6e6f (all simulators)"),
    # the package's files (config/monodrive/), as config/monodrive.yaml names them
    'simulator_config': ('monodrive/simulator.json',
                         'simulator JSON file (SimulatorConfig_ID); empty: none'),
    'weather_config': ('monodrive/weather.json', 'weather JSON file (WeatherConfig); empty: none'),
    'vehicle_config': ('monodrive/vehicle.json',
                       'ego vehicle JSON file (EgoVehicleConfig_ID); empty: none'),
    'scenario_config': ('', 'closed-loop scenario JSON file (ClosedLoopConfigCommand_ID)'),
    'trajectory_config': ('', 'replay trajectory JSON file (REPLAY_ConfigureTrajectoryCommand_ID)'),
    'sensors_config': ('monodrive/sensors.json',
                       'sensor list JSON file (REPLAY_ConfigureSensorsCommand_ID each)'),
    'send_trajectory': (True, 'send the trajectory file whole at start (replay mode)'),
    'connect_sensors': (True, 'connect to every configured sensor with a listen_port'),
    'header_size': ('auto', "sensor header: 'auto' (detected), 12 or 16 bytes (integer or "
                    'string)', one_of(*HEADER_SIZES)),
    'header_byte_order': ('big', "sensor header byte order: 'big' (2019+) or 'little' (2018)",
                          one_of('big', 'little')),
    'topic_prefix': ('monodrive', 'namespace of the sensor and state topics'),
    'map_frame': ('map', 'world frame (REP-103 axes of the Unreal world)'),
    'ego_frame': ('ego/base_link', 'frame the sensors are mounted on'),
    'vehicle_frame': ('{name}/base_link', 'frame of each State vehicle; {name} = its name'),
    'publish_tf': (True, 'publish map → vehicle frames on /tf and sensor mounts on /tf_static'),
    'lidar_max_packets': (4000, 'cut a lidar revolution after this many packets', positive_int),
    'ego_control_timeout': (1.0, 's an EgoControl message may wait to be sent', positive),
    **common_parameters(stamp_sources={'receive': 'host clock at reception',
                                       'sim': "the sample's game time"},
                        stamp_default='receive', stale_after=2.0, stale_what='a stream'),
    'max_annotation_boxes': (256, 'boxes of each kind (2-D, oriented) taken from one camera '
                             'annotation message; the rest are counted and logged',
                             non_negative_int),
    'annotation_depth': (1.0, 'm in front of a camera its 2-D annotation boxes are drawn at',
                         positive),
    'link_error_after': (5.0, 's a link (control or sensor) may be down, WARN reconnecting, '
                               'before /diagnostics says ERROR', positive),
}

CONFIG_KINDS = (('simulator_config', 'simulator'), ('weather_config', 'weather'),
                ('vehicle_config', 'vehicle'), ('scenario_config', 'scenario'),
                ('trajectory_config', 'trajectory'), ('sensors_config', 'sensors'))


def sim_stamp(game_time: float) -> tuple:
    """(sec, nanosec) of a sample's game time (finite: the header is checked; before the
    start of the simulation it is 0)."""
    t = seconds_to_stamp(max(0.0, game_time), source='monoDrive sensor', field='game_time')
    return t.sec, t.nanosec


def service_name(msg_type: str) -> str:
    """'REPLAY_StepSimulationCommand_ID' → 'replay_step_simulation_command' etc."""
    name = re.sub(r'_ID$', '', msg_type)
    name = re.sub(r'(?<=[a-z0-9])(?=[A-Z])', '_', name).lower()
    return re.sub(r'_+', '_', name)



def _under(prefix: str, name: str) -> str:
    """``prefix/name``, or ``name`` alone (relative to the node's namespace) for no prefix."""
    return f'{prefix.strip("/")}/{name}' if prefix.strip('/') else name

class SensorLink:
    """One sensor stream: its TCP client, its :class:`~ros_sim_bridge.monodrive.session.
    SensorSession` and the publishers of its kind (table above)."""

    def __init__(self, node: 'MonoDriveClientNode', config: dict):
        p = node.p
        self.node = node
        self.config = config
        try:
            self.sensor = cfg = sensors.sensor_config(config)
        except CodecError as err:       # refused at configuration, naming the field
            raise ValueError(f'sensors_config: the sensor on port {config.get("listen_port")}: '
                             f'{err}') from None
        self.kind, self.port, self.name = cfg.kind, cfg.port, cfg.name
        self.frame = ns = _under(p.topic_prefix, self.name)
        self.optical = self.frame + '_optical' if cfg.camera else self.frame
        self.session = sess.SensorSession(
            cfg, header_size=p.header_size if p.header_size == 'auto' else int(p.header_size),
            byte_order=p.header_byte_order, max_sample=p.max_sample_bytes,
            lidar_max_packets=p.lidar_max_packets, max_annotation_boxes=p.max_annotation_boxes)
        self.stats = node.diagnostics.stream(f'{self.kind} (tcp {self.port})',
                                             f'monodrive {self.kind}', stale_after=p.stale_after)
        self.stats.link_error_after = p.link_error_after
        self.stats.link_down('not connected yet')
        self.stats.set_count('sample_gaps', 0)
        self.stats.set_count('garbage_bytes', 0)    # skipped while resynchronising
        self._garbage = 0
        pub = lambda t, n: node.create_publisher(t, f'{ns}/{n}', DATA)  # noqa: E731
        self.pubs: dict[str, Any] = {name: pub(t, name)
                                     for name, t in _publications(cfg.kind).items()}
        if 'points' in self.pubs:
            self.geometry = cfg.geometry()
            self.cloud = CloudBuffer(lidar_geometry.POINT)
        if cfg.camera:
            self.annotations = convert.AnnotationCdr(self.optical, p.map_frame, cfg.width,
                                                     cfg.height, cfg.fov, p.annotation_depth)
        host = p.sensor_host or p.host
        self.client = TcpClient(host, self.port, self.session.framer, self.on_event,
                                name=f'monodrive-{self.name}', on_connect=self.on_connect,
                                on_disconnect=self.on_disconnect, min_backoff=p.min_backoff,
                                max_backoff=p.max_backoff, reconnect_within=p.reconnect_within,
                                read_size=1 << 20)

    # --- link (TcpClient thread) ------------------------------------------------------------
    def on_connect(self) -> None:
        self.session.connection_made()
        self.stats.link_up()
        self.node.get_logger().info(f'{self.kind} stream connected on port {self.port}')

    def on_disconnect(self, reason: str) -> None:
        self.stats.link_down(reason)
        self.node.diagnostics.log_limited(self.stats.name, 'link',
                                          f'{self.kind} stream on port {self.port}: {reason}; '
                                          'reconnecting')

    def on_event(self, event, now_ns: int) -> None:
        """One framed message (or the framer's CodecError); never raises (a failure is
        counted and logged)."""
        try:
            garbage = self.session.garbage_bytes
            if garbage != self._garbage:
                self._garbage = garbage
                self.stats.set_count('garbage_bytes', garbage)
            if isinstance(event, CodecError):
                self.node.diagnostics.bad_input(self.stats, event, now_ns)
                return
            self.stats.packet(len(event), now_ns)
            for ev in self.session.receive_message(event):
                if self.session.header_size is not None:
                    self.stats.extra['header_bytes'] = str(self.session.header_size)
                handler = self.HANDLERS.get(type(ev))
                if handler is None:          # a sample without a conversion: ~/raw
                    self.publish_raw(ev, now_ns)
                else:
                    handler(self, ev, now_ns)
        except Exception as exc:  # a bug must not end the receive thread quietly
            self.node.diagnostics.bad_input(self.stats, exc, now_ns)

    # --- session events -> publishers -------------------------------------------------------
    def stamp(self, header: sensor.SensorHeader, now_ns: int) -> tuple:
        """(sec, nanosec) of the sample: its game time or the receive time."""
        if self.node.p.stamp_source == 'sim':
            return sim_stamp(header.game_time)
        return ns_to_sec_nanosec(now_ns)

    def bad_input(self, ev: sess.BadInput, now_ns: int) -> None:
        self.node.diagnostics.bad_input(self.stats, ev.error, now_ns)

    def sample_gap(self, ev: sess.SampleGap, now_ns: int) -> None:
        """Diagnostics ``drops``: samples missing from the stream (``sample_count`` gaps)."""
        self.stats.set_drops(ev.total_missing)
        self.stats.set_count('sample_gaps', ev.total_gaps)
        self.node.diagnostics.log_limited(
            self.stats.name, 'sample gap',
            f'{self.stats.name}: samples missing before sample {ev.sample_count} '
            f'({ev.total_missing} missing in {ev.total_gaps} gaps so far)')

    def publish_raw(self, ev, now_ns: int) -> None:
        """A sample without a conversion (IMU 168-byte layout, LidarArray, …)."""
        h = ev.header
        self.node.raw_pub.publish(convert.raw(self.kind, self.port, self.stamp(h, now_ns),
                                              game_time=h.game_time,
                                              sample_count=h.sample_count, payload=ev.data))
        self.stats.publish()

    def publish_companion(self, ev: sensors.Companion, now_ns: int) -> None:
        """A JSON message beside the sensor's data, of a layout we do not know: ~/raw."""
        h = ev.header
        self.node.raw_pub.publish(convert.raw(self.kind, self.port, self.stamp(h, now_ns),
                                              game_time=h.game_time,
                                              sample_count=h.sample_count, payload=ev.data))
        self.stats.count('raw_json')

    def publish_pixels(self, ev: sensors.Pixels, now_ns: int) -> None:
        c, stamp = self.sensor, self.stamp(ev.header, now_ns)
        if ev.what == 'depth':
            msg = convert.depth_image(ev.data, c.width, c.height, stamp, self.optical)
        elif ev.what == 'semantic':
            msg = convert.semantic_image(ev.data, c.width, c.height, stamp, self.optical)
        else:
            msg = convert.camera_image(ev.data, c.width, c.height, c.channels, stamp,
                                       self.optical)
        self.pubs[ev.what].publish(msg)
        self.pubs['camera_info'].publish(convert.camera_info(c.width, c.height, c.fov, stamp,
                                                             self.optical))
        self.stats.publish()

    def publish_annotation(self, ev: sensors.Annotation, now_ns: int) -> None:
        ann = ev.value
        for err in ann.problems:
            self.node.diagnostics.bad_input(self.stats, err)
        self.pubs['annotations'].publish(self.annotations.markers(ann, self.stamp(ev.header,
                                                                                  now_ns)))
        self.stats.count('annotations')
        self.stats.publish()

    def publish_cloud(self, ev: sensors.Revolution, now_ns: int) -> None:
        data = ev.data
        n = lidar_geometry.count_points(data)
        points = self.cloud.points(n)
        lidar_geometry.decode_points(data, self.geometry, out=points)
        if self.node.p.stamp_source == 'sim':
            sec, nanosec = sim_stamp(ev.game_time)
            stamp_ns = sec * 1_000_000_000 + nanosec
        else:
            stamp_ns = now_ns
        cloud = pointcloud2_cdr(points, self.frame, stamp_ns)
        self.pubs['points'].publish(b''.join(cloud.parts))
        del points, cloud
        self.stats.publish()

    def publish_imu(self, ev: sensors.Imu, now_ns: int) -> None:
        self.pubs['imu'].publish(convert.imu(ev.value, self.stamp(ev.header, now_ns),
                                             self.frame))
        self.stats.publish()

    def publish_fix(self, ev: sensors.Gps, now_ns: int) -> None:
        self.pubs['fix'].publish(convert.nav_sat_fix(ev.value, self.stamp(ev.header, now_ns),
                                                     self.frame))
        self.stats.publish()

    def publish_rpm(self, ev: sensors.Rpm, now_ns: int) -> None:
        self.pubs['rpm'].publish(convert.rpm(ev.wheel, ev.speed, self.stamp(ev.header, now_ns),
                                             self.frame))
        self.stats.publish()

    def publish_state(self, ev: sensors.State, now_ns: int) -> None:
        self.node.publish_state(ev.value, ev.header, self.stamp(ev.header, now_ns))
        self.stats.publish()

    def count_radar_cube(self, ev: sensors.RadarCube, now_ns: int) -> None:
        self.stats.count('radar_cubes')             # the optional radar cube: not converted

    def publish_radar(self, ev: sensors.Radar, now_ns: int) -> None:
        targets, stamp = ev.value, self.stamp(ev.header, now_ns)
        for err in targets.problems:                # targets left out: counted, logged
            self.node.diagnostics.bad_input(self.stats, err, now_ns)
        self.pubs['targets'].publish(convert.radar(targets, stamp, self.frame))
        self.pubs['markers'].publish(convert.radar_markers(targets, stamp, self.frame))
        self.stats.publish()

    def publish_collision(self, ev: sensors.Collision, now_ns: int) -> None:
        self.pubs['collision'].publish(convert.collision(
            ev.value, ev.text, self.stamp(ev.header, now_ns), self.frame))
        self.stats.publish()

    def publish_waypoint(self, ev: sensors.Waypoint, now_ns: int) -> None:
        self.pubs['waypoint'].publish(convert.waypoint(ev.text, self.stamp(ev.header, now_ns),
                                                       self.frame))
        self.stats.publish()

    def publish_ultrasonic(self, ev: sensors.Ultrasonic, now_ns: int) -> None:
        self.pubs['ultrasonic'].publish(convert.ultrasonic(
            ev.value, ev.text, self.stamp(ev.header, now_ns), self.frame, raw=ev.ranges))
        self.stats.publish()

    HANDLERS = {sess.BadInput: bad_input, sess.SampleGap: sample_gap,
                sensors.Companion: publish_companion, sensors.Pixels: publish_pixels,
                sensors.Annotation: publish_annotation, sensors.Revolution: publish_cloud,
                sensors.Imu: publish_imu, sensors.Gps: publish_fix, sensors.Rpm: publish_rpm,
                sensors.State: publish_state, sensors.RadarCube: count_radar_cube,
                sensors.Radar: publish_radar, sensors.Collision: publish_collision,
                sensors.Waypoint: publish_waypoint, sensors.Ultrasonic: publish_ultrasonic}


def _publications(kind: str) -> dict:
    """A sensor's topics under ``<prefix>/<sensor>/``: name → message type (table above)."""
    if kind == 'Lidar':
        return {'points': PointCloud2}
    if kind == 'DepthCamera':
        out = {'depth': Image}
    elif kind == 'SemanticCamera':
        out = {'semantic': Image}
    elif sensors.is_camera(kind):
        out = {'image': Image}
    else:
        return {'IMU': {'imu': Imu}, 'GPS': {'fix': NavSatFix}, 'RPM': {'rpm': MonoDriveRpm},
                'Radar': {'targets': MonoDriveRadarTargets, 'markers': MarkerArray},
                'Collision': {'collision': MonoDriveCollision},
                'Waypoint': {'waypoint': MonoDriveWaypoint},
                'Ultrasonic': {'ultrasonic': MonoDriveUltrasonic}}.get(kind, {})
    return {**out, 'camera_info': CameraInfo, 'annotations': MarkerArray}


class MonoDriveClientNode(Node):
    NODE_NAME = 'monodrive_client'   # also the logger of start-up failures (ros/runner.py)
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.p = p = declare_parameters(self, self.PARAMETERS)
        self.diagnostics = Diagnostics(self, period=p.diagnostics_period)
        self.control_stats = self.diagnostics.stream(f'control (tcp {p.port})',
                                                     'monodrive control', expected=False)
        self.control_stats.link_error_after = p.link_error_after
        self.control_stats.link_down('not connected yet')
        self.raw_pub = self.create_publisher(MonoDriveRaw, '~/raw', DATA)
        self.state_pub = self.create_publisher(MonoDriveState, _under(p.topic_prefix, 'state'),
                                                DATA)
        self.state_markers = self.create_publisher(
            MarkerArray, _under(p.topic_prefix, 'state/markers'), DATA)
        self.tf_pub = self.create_publisher(TFMessage, '/tf', TF)
        self.tf_static = self.create_publisher(TFMessage, '/tf_static', LATCHED)
        self.odom_pubs: dict[str, Any] = {}
        self._odom_lock = threading.Lock()

        # --- configuration files (refused at start, naming file and line) ---------------
        self.session = sess.ClientSession(max_message=p.max_message_bytes,
                                          replay_timeout=max(p.request_timeout, 5.0))
        self.files: dict[str, cfgmod.ConfigFile] = {}
        for param, kind in CONFIG_KINDS:
            path = getattr(p, param)
            if not path:
                continue
            path = resolve_config_path(path)
            try:
                cfg = cfgmod.load_config(path, kind)
            except cfgmod.ConfigError as err:
                raise ValueError(f'{param}: {err}') from None
            self.files[kind] = cfg
            if kind == 'trajectory' and not p.send_trajectory:
                continue
            for msg_type, body in cfg.messages():
                self.session.remember(msg_type, body)
        traj = self.files.get('trajectory')
        self.trajectory = (sess.TrajectorySteps(traj.frames(), traj.layout == 'state_frames')
                           if traj is not None else None)

        # --- control channel ---------------------------------------------------------------
        self._lock = threading.Lock()
        self.replies = RequestReply()       # callers of the command services, by reference
        self.control = TcpClient(p.host, p.port, self.session.framer, self._on_control_event,
                                 name='monodrive-control', on_connect=self._on_connect,
                                 on_disconnect=self._on_disconnect,
                                 on_connect_failed=self._on_connect_failed,
                                 min_backoff=p.min_backoff, max_backoff=p.max_backoff,
                                 reconnect_within=p.reconnect_within)
        group = ReentrantCallbackGroup()
        # Not ``self._services``: that is rclpy Node's own list (the parameter services live
        # in it; replacing it left ros2 param list/get/set without an answer).
        self.command_services = []
        for msg_type in messages.MESSAGE_TYPES:
            self.command_services.append(self.create_service(
                MonoDriveCommand, f'~/{service_name(msg_type)}',
                lambda req, res, t=msg_type: self._command(t, req.json, res), callback_group=group))
        self.command_services.append(self.create_service(
            MonoDriveRawCommand, '~/raw_command',
            lambda req, res: self._command(req.type, req.json, res, validate=req.validate),
            callback_group=group))
        self.command_services.append(self.create_service(MonoDriveStep, '~/replay_step',
                                                  self._replay_step, callback_group=group))
        self.command_services.append(self.create_service(MonoDriveStep, '~/step_trajectory',
                                                  self._step_trajectory, callback_group=group))
        self.create_subscription(MonoDriveEgoControl, _under(p.topic_prefix, 'ego_control'),
                                 self._on_ego_control, DATA,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        # request timeouts and link supervision: on the steady clock, whatever use_sim_time says
        self.create_timer(0.1, self._tick, callback_group=MutuallyExclusiveCallbackGroup(),
                          clock=STEADY)

        # --- sensors ---------------------------------------------------------------------
        self.sensors: list[SensorLink] = []
        if 'sensors' in self.files and p.connect_sensors:
            for s in self.files['sensors'].sensors():
                if isinstance(s.get('listen_port'), int) and s.get('listen_port') > 0:
                    self.sensors.append(SensorLink(self, s))
        if p.publish_tf:
            self._publish_mounts()
        self.get_logger().info(
            f'monoDrive client for {p.host}:{p.port}; configuration: '
            + (', '.join(f'{k} ({os.path.basename(c.path)})' for k, c in self.files.items()) or 'none')
            + f'; sensors: {", ".join(f"{s.kind}:{s.port}" for s in self.sensors) or "none"}')
        self.control.start()
        for link in self.sensors:
            link.client.start()

    # --- control channel plumbing (TcpClient thread) ----------------------------------------
    def _on_connect(self) -> None:
        with self._lock:
            replays = self.session.connection_made(time.monotonic())
            self._flush()
        self.control_stats.link_up()
        for link in self.sensors:       # the simulator is back: its sensor ports may be too
            link.client.retry_now()
        self.get_logger().info(f'connected to the simulator at {self.p.host}:{self.p.port}'
                               + (f'; sending {len(replays)} configuration messages'
                                  if replays else ''),
                               throttle_duration_sec=5.0)   # a flapping link: not 3 lines/s

    def _on_connect_failed(self, why: str) -> None:
        self.get_logger().warn(f'simulator not reachable: {why}; retrying (at least every '
                               f'{self.p.reconnect_within:g} s)', throttle_duration_sec=10.0)

    def _on_disconnect(self, reason: str) -> None:
        with self._lock:
            self._dispatch(self.session.connection_lost(reason))
        self.control_stats.link_down(reason)
        self.diagnostics.log_limited('control', 'link', f'simulator link: {reason}; reconnecting')

    def _on_control_event(self, event, now_ns: int) -> None:
        try:
            if isinstance(event, CodecError):
                self.diagnostics.bad_input(self.control_stats, event, now_ns)
                return
            self.control_stats.packet(len(event.body) + len(event.header), now_ns)
            with self._lock:
                events = self.session.receive_frame(event)
                self._dispatch(events)
                self._flush()
        except Exception as exc:  # never end the receive thread quietly
            self.diagnostics.bad_input(self.control_stats, exc, now_ns)

    def _flush(self) -> None:
        """Send the next queued request if nothing is outstanding (lock held)."""
        data = self.session.data_to_send()
        if data and not self.control.send(data):
            self._dispatch(self.session.connection_lost('send failed'))

    def _dispatch(self, events) -> None:
        """Hand results to waiting callers; the rest to ~/raw and the log (lock held)."""
        now = ns_to_sec_nanosec(time.time_ns())
        for ev in events:
            if isinstance(ev, (sess.Reply, sess.Timeout, sess.Failed, sess.Refused)):
                req = ev.request
                if isinstance(ev, sess.Reply) and ev.message.success:
                    self._sensor_configured(req)
                if req.replay or not self.replies.resolve(req.reference, ev):
                    self._unwaited(ev)
            elif isinstance(ev, sess.BadInput):
                self.diagnostics.bad_input(self.control_stats, ev.error)
            elif isinstance(ev, (sess.Unsolicited, sess.LateReply)):
                self.raw_pub.publish(convert.control_raw(ev.message, self.p.port, now))
                what = 'late reply' if isinstance(ev, sess.LateReply) else 'unsolicited message'
                self.diagnostics.log_limited('control', what,
                                             f'{what} {ev.message.type}: {ev.message.text[:200]}',
                                             'info')
                key = 'unsolicited' if isinstance(ev, sess.Unsolicited) else 'late_replies'
                self.control_stats.count(key)

    def _sensor_configured(self, req: sess.Request) -> None:
        """A sensor's configuration was acknowledged: the simulator listens on its port now,
        so its link connects at once instead of at its next reconnection attempt (up to
        ``reconnect_within`` later; the waits of the control and sensor links would add up)."""
        ports = self.session.configured_ports(req)
        for link in self.sensors:
            if link.port in ports and not link.client.connected:
                link.client.retry_now()

    def _unwaited(self, ev) -> None:
        req = ev.request
        if isinstance(ev, sess.Reply):
            self.control_stats.publish()
            if not ev.message.success:
                self.diagnostics.log_limited('control', f'refused {req.type}',
                                             f'simulator refused {req.type}: {ev.message.text}')
        elif isinstance(ev, sess.Refused):
            self.diagnostics.log_limited('control', f'refused reply {req.type}',
                                         f'{req.type}: reply refused: {ev.error}')
        else:
            self.diagnostics.log_limited('control', f'{type(ev).__name__} {req.type}',
                                         f'{req.type}: no reply ({type(ev).__name__})')

    def _tick(self) -> None:
        with self._lock:
            self._dispatch(self.session.tick(time.monotonic()))
            self._flush()

    # --- services ---------------------------------------------------------------------------
    def call(self, msg_type: str, body: Any, *, validate: bool = True,
             timeout: Optional[float] = None) -> tuple[bool, str, str]:
        """Send one command and wait for its answer: (success, message, reply JSON).  Always
        returns within ``timeout`` (+ a few ms), whatever the link does."""
        start = time.monotonic()
        try:
            return self._call(msg_type, body, validate, timeout, start)
        finally:
            self._service_time(msg_type, time.monotonic() - start)

    def _service_time(self, msg_type: str, took: float) -> None:
        """How long commands took inside the node (/diagnostics: calls, slowest), and a log
        line for one over a second: a caller that waited longer lost the time outside."""
        self.control_stats.count('service_calls')
        self.control_stats.highest('service_slowest_ms', took * 1e3)
        if took > 1.0:
            self.diagnostics.log_limited('control', 'slow command',
                                         f'{msg_type} took {took:.2f} s in the node', 'info')

    def _call(self, msg_type: str, body: Any, validate: bool, timeout: Optional[float],
              start: float) -> tuple[bool, str, str]:
        timeout = self.p.request_timeout if timeout is None else timeout
        with self._lock:
            try:
                req = self.session.request(msg_type, body, start, timeout, validate=validate)
            except CodecError as err:
                return False, f'invalid body: {err}', ''
            waiter = self.replies.expect(req.reference)
            self._flush()
        with waiter:   # the session's tick times the request out at its deadline
            waiter.wait(start + timeout - time.monotonic(), poll=self._tick)
        if not waiter.done:
            with self._lock:
                self.session.cancel(req)
                self._flush()
            return False, f'no reply within {timeout:g} s', ''
        ev = waiter.reply
        if isinstance(ev, sess.Reply):
            self.control_stats.publish()
            return ev.message.success, ev.message.text, control.standard_json(ev.message.raw)
        if isinstance(ev, sess.Timeout):
            where = 'sent, no reply' if ev.sent else 'simulator not connected'
            return False, f'no reply within {timeout:g} s ({where})', ''
        if isinstance(ev, sess.Refused):
            return False, f'reply refused: {ev.error}', ''
        return False, f'link lost before the reply: {ev.reason}', ''

    def _command(self, msg_type: str, body_json: str, response, *, validate: bool = True):
        try:
            body = control.parse_json(body_json, msg_type) if body_json.strip() else {}
            return _answer(response, *self.call(msg_type, body, validate=validate))
        except CodecError as err:
            return _answer(response, False, str(err))
        except Exception as exc:   # a bug must not end the node: counted, answered
            self.diagnostics.bad_input(self.control_stats, exc)
            return _answer(response, False, f'{msg_type}: {type(exc).__name__}: {exc}')

    def _replay_step(self, request, response):
        return _answer(response, *self.call('REPLAY_StepSimulationCommand_ID',
                                            {'amount': int(request.amount)}))

    def _step_trajectory(self, request, response):
        steps = self.trajectory
        if steps is None:
            response.success, response.message = False, 'no trajectory_config file configured'
            return response
        ok, text, reply = True, '', ''
        for _ in range(max(1, int(request.amount))):
            frame = steps.next_frame()
            if frame is None:
                ok, text = False, f'end of the trajectory ({len(steps.frames)} frames)'
                break
            ok, text, reply = self.call(steps.MESSAGE, frame, validate=steps.validate)
            if not ok:
                break
            steps.acknowledged()
        return _answer(response, ok, text or f'frame {steps.cursor} of {len(steps.frames)}',
                       reply)

    def _on_ego_control(self, msg: MonoDriveEgoControl) -> None:
        body = {'forward_amount': float(msg.forward_amount),
                'right_amount': float(msg.right_amount),
                'brake_amount': float(msg.brake_amount), 'drive_mode': int(msg.drive_mode)}
        try:
            messages.validate('EgoControl_ID', body)
        except CodecError as err:
            self.diagnostics.bad_input(self.control_stats, err)
            return
        with self._lock:       # the newest command wins over one not sent yet
            self.session.ego_control(body, time.monotonic(), self.p.ego_control_timeout)
            self._flush()

    # --- state ------------------------------------------------------------------------------
    def publish_state(self, frame: payloads.StateFrame, header: sensor.SensorHeader, stamp):
        p = self.p
        stats = self.control_stats if not self.sensors else self._state_stats()
        for err in frame.problems:
            self.diagnostics.bad_input(stats, err)
        rows = convert.state_rows(frame)
        cut = [(name, len(b)) for name, b in zip(rows.names, rows.boxes)
               if len(b) > convert.BOXES_PER_VEHICLE]
        if cut:     # state/markers draws the first BOXES_PER_VEHICLE of a vehicle
            stats.count('state_boxes_not_drawn',
                        sum(n - convert.BOXES_PER_VEHICLE for _, n in cut))
            self.diagnostics.log_limited(
                stats.name, 'state boxes',
                f'State: {", ".join(f"{name!r} has {n} boxes" for name, n in cut)}; '
                f'{p.topic_prefix}/state/markers draws the first '
                f'{convert.BOXES_PER_VEHICLE} of each (the rest are counted in '
                '/diagnostics state_boxes_not_drawn)')
        self.state_pub.publish(convert.state(rows, header.game_time, header.sample_count,
                                             stamp, p.map_frame))
        children = []
        for i, (name, tags) in enumerate(zip(rows.names, rows.tags)):
            child = p.ego_frame if 'ego' in tags else p.vehicle_frame.format(name=name)
            self._odom_pub(name).publish(convert.odometry(rows, i, stamp, p.map_frame, child))
            children.append(child)
        self.state_markers.publish(convert.box_markers(rows, stamp, p.map_frame))
        if p.publish_tf and children:
            self.tf_pub.publish(convert.transforms(rows, children, stamp, p.map_frame))

    def _state_stats(self):
        for s in self.sensors:
            if s.kind == 'State':
                return s.stats
        return self.control_stats

    def _odom_pub(self, name: str):
        with self._odom_lock:
            pub = self.odom_pubs.get(name)
            if pub is None:
                safe = re.sub(r'[^A-Za-z0-9_]', '_', name) or 'unnamed'
                if safe[0].isdigit():
                    safe = 'v' + safe
                pub = self.create_publisher(
                    Odometry, _under(self.p.topic_prefix, f'vehicles/{safe}/odom'), DATA)
                self.odom_pubs[name] = pub
            return pub

    def _publish_mounts(self) -> None:
        stamp = ns_to_stamp(time.time_ns())
        transforms = []
        for s in self.sensors:
            t, q = convert.mount_pose(s.config)
            transforms.append(make_transform(stamp, self.p.ego_frame, s.frame, t, q))
            if s.optical != s.frame:   # camera optical frame: z forward, x right, y down
                transforms.append(make_transform(stamp, s.frame, s.optical, (0.0, 0.0, 0.0),
                                                 (0.5, -0.5, 0.5, -0.5)))
        if transforms:
            self.tf_static.publish(TFMessage(transforms=transforms))

    def close(self) -> None:
        self.control.stop()
        for s in self.sensors:
            s.client.stop()


def _answer(response, success: bool, message: str, reply_json: str = ''):
    """A service response rclpy can always send: its texts UTF-8 encodable (a lone surrogate
    is U+FFFD); ``reply_json`` is standard JSON with finite numbers (control.standard_json)."""
    response.success = bool(success)
    response.message = control.utf8_text(message)
    response.reply_json = control.utf8_text(reply_json)
    return response


def main(argv=None) -> int:
    return run_node(MonoDriveClientNode, argv)


if __name__ == '__main__':
    sys.exit(main())
