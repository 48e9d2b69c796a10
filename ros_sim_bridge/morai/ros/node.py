"""MORAI SIM UDP bridge (executable ``morai_bridge``): every message of the interface, both ways.

Simulator → ROS (one UDP port each, ``listen_port.<type>``; 0 or -1 = not opened, and then its
topics do not exist).  Topic names are relative to ``topic_prefix`` (default ``morai``):

| type (listen_port.*) | topic | message | frame |
|---|---|---|---|
| ego_status | ego_status | ros_sim_bridge/MoraiEgoVehicleStatus | map (SI: m/s, rad) |
| | odom | nav_msgs/Odometry | map → base_link (ENU, m, m/s, rad) |
| | /tf | tf2_msgs/TFMessage | map → base_link |
| object_info | objects | ros_sim_bridge/MoraiObjectStatusList | map (occupied slots only) |
| | object_markers | visualization_msgs/MarkerArray | map (CUBE per object, id = obj_id) |
| multi_ego_setting | multi_ego_setting | ros_sim_bridge/MoraiMultiEgoSetting | map |
| traffic_light_status | traffic_light_status | ros_sim_bridge/MoraiGetTrafficLightStatus | — |
| collision | collision | ros_sim_bridge/MoraiCollisionData | map |
| | collision_markers | visualization_msgs/MarkerArray | map (SPHERE per hit object) |
| vehicle_collision | vehicle_collision | ros_sim_bridge/MoraiVehicleCollisionData | map |
| | vehicle_collision_markers | visualization_msgs/MarkerArray | map (both vehicles) |
| intersection_status | intersection_status | ros_sim_bridge/MoraiIntersectionStatus | — |
| (all) | /diagnostics | diagnostic_msgs/DiagnosticArray | one status per type |

ROS → simulator (datagrams to ``sim_host``:``sim_port.<type>``): topics ``ctrl_cmd``
(MoraiCtrlCmd) and ``lamps`` (MoraiLamps); services ``set_traffic_light``,
``set_intersection_status``, ``scenario_load``, ``save_sensor_data``, ``sensor_control``,
``set_multi_ego_setting``, which answer once the datagram is sent, or with success = false and
the reason when a value does not fit the wire (nothing is sent then).

Units: every ``Morai*`` message and service is SI / REP-103 (m, m/s, m/s², rad, rad/s, s); the
conversion layer converts from and to the wire's km/h, deg and deg/s (ros/conversions.py).

Layouts are detected per datagram from ``data_length`` and the size (codec); bad datagrams are
counted per type and kind in /diagnostics and logged rate-limited; an unknown layout is logged
once per (data_length, size) pair.
"""
from __future__ import annotations

import collections
import functools
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry
from rclpy.node import Node
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.codec.framing import UnknownLayout
from ros_sim_bridge.morai.session import SimTime
from ros_sim_bridge.core.binary import UNKNOWN_LAYOUT, CodecError, require_finite
from ros_sim_bridge.morai.ros import conversions as convert
from ros_sim_bridge.ros.clocks import STEADY
from ros_sim_bridge.ros.stamps import MAX_NS, ns_to_stamp
from ros_sim_bridge.ros.diagnostics import Diagnostics, StreamStats
from ros_sim_bridge.msg import (MoraiCollisionData, MoraiCtrlCmd, MoraiEgoVehicleStatus,
                                MoraiGetTrafficLightStatus, MoraiIntersectionStatus, MoraiLamps,
                                MoraiMultiEgoSetting, MoraiObjectStatusList,
                                MoraiVehicleCollisionData)
from ros_sim_bridge.ros.runner import run_node
from ros_sim_bridge.ros.params import common_parameters, declare_parameters, port, positive_int
from ros_sim_bridge.ros.qos import DATA, TF
from ros_sim_bridge.srv import (MoraiSaveSensorData, MoraiScenarioLoad, MoraiSensorControl,
                                MoraiSetIntersectionStatus, MoraiSetMultiEgoSetting,
                                MoraiSetTrafficLight)
from ros_sim_bridge.core.udp import UdpEndpoint, UdpReceiver, is_loopback

TYPES = morai.MESSAGE_TYPES
#: Simulator → client types, in the table's order.  Multi Ego Setting goes both ways: MORAI's
#: define sends it to the simulator (port 7604), the document lists it as an output.
INBOUND = tuple(n for n, m in TYPES.items() if m.direction == morai.FROM_SIM) + (
    'multi_ego_setting',)
OUTBOUND = tuple(n for n, m in TYPES.items() if m.direction == morai.TO_SIM)
#: Listen-port defaults: MORAI's example ports (SUPPLEMENT §1.5).  Multi Ego Setting is off: on
#: the simulator's machine its port 7604 belongs to the simulator.
LISTEN_DEFAULTS = {n: (0 if n == 'multi_ego_setting' else TYPES[n].port) for n in INBOUND}

#: Command topics and services: codec type → (kind, ROS name, ROS type).
COMMAND_INTERFACES = {
    'ctrl_cmd': ('topic', 'ctrl_cmd', MoraiCtrlCmd),
    'lamp_control': ('topic', 'lamps', MoraiLamps),
    'set_traffic_light': ('service', 'set_traffic_light', MoraiSetTrafficLight),
    'set_intersection': ('service', 'set_intersection_status', MoraiSetIntersectionStatus),
    'scenario_load': ('service', 'scenario_load', MoraiScenarioLoad),
    'save_sensor_data': ('service', 'save_sensor_data', MoraiSaveSensorData),
    'sensor_control': ('service', 'sensor_control', MoraiSensorControl),
    'multi_ego_setting': ('service', 'set_multi_ego_setting', MoraiSetMultiEgoSetting),
}

#: a UDP port, or 0 / -1: the stream or command is not used
PORT_OR_OFF = port(off=(0, -1), what='UDP port')

PARAMETERS = {
    'bind_address': ('127.0.0.1', 'local address the listen ports bind to (0.0.0.0: all)'),
    **{f'listen_port.{n}': (port, f'UDP port {TYPES[n].title} arrives on (0 or -1: not opened)',
                            PORT_OR_OFF)
       for n, port in LISTEN_DEFAULTS.items()},
    'sim_host': ('127.0.0.1', 'host (address or name) of the simulator for commands'),
    **{f'sim_port.{n}': (TYPES[n].port, f'simulator port for {TYPES[n].title} '
                                        '(0 or -1: refuse the command)', PORT_OR_OFF)
       for n in OUTBOUND},
    'receive_buffer_bytes': (4 << 20, 'SO_RCVBUF per listen port', positive_int),
    'topic_prefix': ('morai', 'namespace of the topics and services'),
    'map_frame': ('map', 'ENU map frame of MORAI positions'),
    'base_frame': ('base_link', 'ego body frame (x forward, y left, z up)'),
    'publish_tf': (True, 'publish map → base_frame on /tf'),
    'object_labels': (False, 'also publish a text label per object marker'),
    **common_parameters(stamp_sources={'sim': "the packet's sec/nsec where the layout has "
                                              'them, else the receive time',
                                       'receive': 'host clock at reception'},
                        stamp_default='sim', stale_after=2.0, stale_what='a message type'),
    'log_interval': (5.0, 's between two logs of the same kind of bad input per type'),
    'latency_window': (4096, 'datagrams per type in the latency percentiles of /diagnostics',
                       positive_int),
}


class Latency:
    """Receive → publish times (ns) of the last ``window`` datagrams of one type."""

    def __init__(self, window: int):
        self.to_publish: collections.deque = collections.deque(maxlen=window)
        self.to_done: collections.deque = collections.deque(maxlen=window)
        self.count = 0

    def add(self, to_publish_ns: int, to_done_ns: int) -> None:
        self.to_publish.append(to_publish_ns)
        self.to_done.append(to_done_ns)
        self.count += 1

    def values(self) -> dict[str, str]:
        out = {'latency_samples': str(self.count)}
        for key, samples in (('latency', self.to_publish), ('latency_done', self.to_done)):
            data = sorted(samples)
            if not data:
                continue
            n = len(data)
            for label, q in (('p50', 0.50), ('p99', 0.99)):
                out[f'{key}_{label}_us'] = f'{data[min(n - 1, int(q * n))] / 1e3:.1f}'
            out[f'{key}_max_us'] = f'{data[-1] / 1e3:.1f}'
        return out


@dataclass
class Inbound:
    """One simulator → client message type: its port, counters and publish step."""
    name: str
    port: int
    stats: StreamStats
    convert: Callable
    latency: Latency
    endpoint: Optional[UdpEndpoint] = None
    unknown: set = field(default_factory=set)     # (data_length, size) listed, at most
    #                                               UNKNOWN_LISTED; the others counted on stats


#: distinct unknown (data_length, size) pairs of one type listed in /diagnostics and logged
#: once each; more are counted and logged rate-limited (a hostile sender varies data_length)
UNKNOWN_LISTED = 16


@dataclass
class Outbound:
    """One client → simulator command: destination and counters (``sent``, ``refused`` on
    ``stats``)."""
    name: str
    port: int
    stats: StreamStats


class MoraiBridgeNode(Node):
    NODE_NAME = 'morai_bridge'   # also the logger of start-up failures (ros/runner.py)
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.p = p = declare_parameters(self, self.PARAMETERS)
        self.sim_time = SimTime(MAX_NS)     # one time base for every topic (stamp_source sim)
        try:
            self.sim_ip = socket.gethostbyname(p.sim_host)
        except OSError as exc:
            raise ValueError(f'sim_host {p.sim_host!r} does not resolve: {exc}') from None
        self.diagnostics = Diagnostics(self, period=p.diagnostics_period,
                                       log_interval=p.log_interval)
        prefix = p.topic_prefix.strip('/')
        self._name = (lambda n: f'{prefix}/{n}') if prefix else (lambda n: n)
        self.receiver = UdpReceiver('morai-udp', on_error=self.diagnostics.receive_failed)
        self.inbound: dict[str, Inbound] = {}
        self.outbound: dict[str, Outbound] = {}
        self.tx: Optional[UdpEndpoint] = None
        try:
            self._open_inbound()
            self._open_outbound()
        except BaseException:
            self.close()
            raise
        self.receiver.start()
        self.stats_timer = self.create_timer(p.diagnostics_period, self._refresh_stats,
                                             clock=STEADY)
        self.get_logger().info(
            f'MORAI bridge: listening on {p.bind_address} for '
            + (', '.join(f'{s.name} (udp {s.port})' for s in self.inbound.values()) or 'nothing')
            + f'; commands to {p.sim_host} ('
            + ', '.join(f'{o.name} {o.port}' for o in self.outbound.values() if o.port > 0)
            + ')')

    # -- setup ---------------------------------------------------------------------------------
    def _pub(self, msg_type, name: str, qos=DATA):
        return self.create_publisher(msg_type, self._name(name), qos)

    def _open_inbound(self) -> None:
        p = self.p
        events = convert.EventsCdr(p.map_frame)
        publishers = {
            'ego_status': lambda: self._ego_status_step(
                self._pub(MoraiEgoVehicleStatus, 'ego_status'), self._pub(Odometry, 'odom'),
                self.create_publisher(TFMessage, '/tf', TF) if p.publish_tf else None),
            'object_info': lambda: self._object_info_step(
                self._pub(MoraiObjectStatusList, 'objects'),
                self._pub(MarkerArray, 'object_markers')),
            'multi_ego_setting': lambda: self._simple_step(
                self._pub(MoraiMultiEgoSetting, 'multi_ego_setting'), events.multi_ego),
            'traffic_light_status': lambda: self._simple_step(
                self._pub(MoraiGetTrafficLightStatus, 'traffic_light_status'),
                events.traffic_light),
            'collision': lambda: self._marked_step(
                self._pub(MoraiCollisionData, 'collision'),
                self._pub(MarkerArray, 'collision_markers'),
                events.collision, events.collision_markers),
            'vehicle_collision': lambda: self._marked_step(
                self._pub(MoraiVehicleCollisionData, 'vehicle_collision'),
                self._pub(MarkerArray, 'vehicle_collision_markers'),
                events.vehicle_collision, events.vehicle_collision_markers),
            'intersection_status': lambda: self._simple_step(
                self._pub(MoraiIntersectionStatus, 'intersection_status'),
                events.intersection),
        }
        ports = {}
        for name in INBOUND:
            port = int(getattr(p, f'listen_port_{name}'))
            if port <= 0:
                continue
            if port in ports:
                raise ValueError(f'listen_port.{name} = {port} is also listen_port.{ports[port]}'
                                 ': one port per message type')
            ports[port] = name
            try:
                endpoint = UdpEndpoint(p.bind_address, port, name=f'morai {name}',
                                       receive_buffer=p.receive_buffer_bytes)
            except OSError as exc:
                hint = ' (ports below 1024 need privileges)' if port < 1024 else ''
                # OSError: the node runner turns it into one log line and exit 1 (issue #14)
                raise OSError(exc.errno, f'listen_port.{name} = {port}{hint}: '
                              f'{exc.strerror}') from None
            stats = self.diagnostics.stream(f'{name} (udp {port})', f'morai {TYPES[name].title}',
                                            stale_after=p.stale_after)
            stream = Inbound(name, port, stats, publishers[name](), Latency(p.latency_window),
                             endpoint)
            self.receiver.add(endpoint, functools.partial(self._on_datagram, stream))
            self.inbound[name] = stream

    def _open_outbound(self) -> None:
        p = self.p
        tx_bind = p.bind_address if (is_loopback(self.sim_ip)
                                     or not is_loopback(p.bind_address)) else '0.0.0.0'
        self.tx = UdpEndpoint(tx_bind, 0, name='morai commands', receive_buffer=1 << 16)
        for name in OUTBOUND:
            port = int(getattr(p, f'sim_port_{name}'))
            kind, ros_name, ros_type = COMMAND_INTERFACES[name]
            where = f'{p.sim_host}:{port}' if port > 0 else 'not configured'
            stats = self.diagnostics.stream(f'{name} (udp → {where})',
                                            f'morai {TYPES[name].title}',
                                            stale_after=p.stale_after, expected=False,
                                            outbound=True)
            stats.set_count('sent', 0)
            stats.set_count('refused', 0)
            out = Outbound(name, port, stats)
            self.outbound[name] = out
            if kind == 'topic':
                self.create_subscription(ros_type, self._name(ros_name),
                                         functools.partial(self._on_command_msg, out), DATA)
            else:
                self.create_service(ros_type, self._name(ros_name),
                                    functools.partial(self._on_command_srv, out))

    # -- publish steps: codec value → conversions → [(publisher, message)] --------------------
    def _ego_status_step(self, status_pub, odom_pub, tf_pub):
        cdr = convert.EgoCdr(self.p.map_frame, self.p.base_frame)

        def step(st: morai.EgoVehicleStatus, stamp):
            pose = convert.ego_pose(st)
            out = [(status_pub, cdr.status(st, stamp)),
                   (odom_pub, cdr.odometry(st, stamp, pose))]
            if tf_pub is not None:
                out.append((tf_pub, cdr.transform(stamp, pose)))
            return out
        return step

    def _object_info_step(self, list_pub, marker_pub):
        cdr = convert.ObjectsCdr(self.p.map_frame, self.p.object_labels)

        def step(info: morai.ObjectInfo, stamp):
            return [(list_pub, cdr.object_list(info, stamp)),
                    (marker_pub, cdr.markers(info, stamp))]
        return step

    @staticmethod
    def _marked_step(pub, marker_pub, to_msg, to_markers):
        def step(value, stamp):
            return [(pub, to_msg(value, stamp)), (marker_pub, to_markers(value, stamp))]
        return step

    @staticmethod
    def _simple_step(pub, to_msg):
        def step(value, stamp):
            return [(pub, to_msg(value, stamp))]
        return step

    # -- receive thread: transport → codec → conversions → publishers --------------------------
    def _on_datagram(self, stream: Inbound, data: bytes, now_ns: int) -> None:
        stats = stream.stats
        stats.packet(len(data), now_ns)
        stats.set_drops(stream.endpoint.kernel_drops)
        try:
            value = TYPES[stream.name].decode(data)
        except CodecError as err:
            self._bad_input(stream, err, data, now_ns)
            return
        layout = getattr(value, 'layout', None)
        if layout is not None:
            stats.extra['layout'] = layout
        try:                         # NaN/Inf would reach /tf, odometry and the markers
            require_finite(value, TYPES[stream.name].title)
        except CodecError as err:
            self.diagnostics.bad_input(stats, err, now_ns)
            return
        try:
            stamp = self._stamp(value, now_ns)
        except CodecError as err:    # a sim time no stamp can hold: bad input, not published
            self.diagnostics.bad_input(stats, err, now_ns)
            return
        messages = stream.convert(value, stamp)
        t_publish = time.time_ns()
        for publisher, msg in messages:
            publisher.publish(msg)
        stream.latency.add(t_publish - now_ns, time.time_ns() - now_ns)
        stats.publish(len(messages))

    def _stamp(self, value, now_ns: int) -> Time:
        """stamp_source sim: the link's sim time (morai/session.py: the packet's own, or the
        sim time now; CodecError when sec or nsec is out of range).  stamp_source receive:
        receive time."""
        if self.p.stamp_source != 'sim':
            return ns_to_stamp(now_ns)
        return ns_to_stamp(self.sim_time.stamp_ns(value, now_ns))

    def _bad_input(self, stream: Inbound, err: CodecError, data: bytes, now_ns: int) -> None:
        if err.kind != UNKNOWN_LAYOUT:
            self.diagnostics.bad_input(stream.stats, err, now_ns)
            return
        # An unknown layout is reported once per (data_length, size), with its sizes.
        stream.stats.error(err.kind, str(err), now_ns)
        data_length = err.data_length if isinstance(err, UnknownLayout) else None
        key = (data_length, len(data))
        if key in stream.unknown:
            return
        if len(stream.unknown) >= UNKNOWN_LISTED:   # a sender varying data_length: counted,
            stream.stats.count('unknown_layouts_not_listed')   # logged rate-limited
            self.diagnostics.log_limited(
                stream.stats.name, 'unknown_layouts', f'{stream.stats.name}: more unknown '
                f'layouts than the {UNKNOWN_LISTED} listed (data_length {data_length} in a '
                f'{len(data)}-byte datagram); counted as unknown_layout')
            return
        stream.unknown.add(key)
        stream.stats.extra['unknown_layouts'] = ' '.join(
            f'{dl}/{size}' for dl, size in sorted(stream.unknown, key=str))
        known = ', '.join(str(n) for n in TYPES[stream.name].data_lengths)
        self.get_logger().warning(
            f'{stream.stats.name}: unknown layout, data_length {data_length} in a {len(data)}-byte '
            f'datagram (known data_length: {known}); not decoded, counted as unknown_layout: '
            f'{err}')

    # -- commands: ROS → conversions → codec → transport ---------------------------------------
    def send_command(self, name: str, ros_value) -> tuple[bool, str]:
        """Validate, encode and send one command; (sent, text).  Nothing is sent on a refusal."""
        out = self.outbound[name]
        title = TYPES[name].title
        if out.port <= 0:
            err = CodecError(title, f'not sent: sim_port.{name} is {out.port} (not configured)',
                             kind='not_configured')
            return self._refuse(out, err)
        try:
            value = convert.COMMANDS[name](ros_value)
            data = TYPES[name].encode(value)
        except CodecError as err:
            return self._refuse(out, err)
        except (ValueError, TypeError, OverflowError) as exc:
            return self._refuse(out, CodecError(title, str(exc)))
        address = (self.sim_ip, out.port)
        try:
            try:
                self.tx.send(data, address)
            except ConnectionRefusedError:   # ICMP of an earlier datagram: send again once
                self.tx.send(data, address)
        except OSError as exc:
            out.stats.error('send_failed', f'{exc!r}')
            self.diagnostics.log_limited(out.stats.name, 'send_failed',
                                         f'{out.stats.name}: send failed: {exc!r}', 'error')
            return False, f'{title}: sending to {self.p.sim_host}:{out.port} failed: {exc}'
        out.stats.count('sent')                   # with the bytes, not at the next refresh
        out.stats.packet(len(data))
        return True, (f'sent {title} ({len(data)} bytes) to {self.p.sim_host}:{out.port}: '
                      f'{convert.describe(value)}')

    def _refuse(self, out: Outbound, err: CodecError) -> tuple[bool, str]:
        out.stats.count('refused')
        self.diagnostics.bad_input(out.stats, err)
        return False, f'refused, nothing sent: {err}'

    def _on_command_msg(self, out: Outbound, msg) -> None:
        self.send_command(out.name, msg)

    def _on_command_srv(self, out: Outbound, request, response):
        response.success, response.message = self.send_command(out.name, request)
        return response

    # -- diagnostics ---------------------------------------------------------------------------
    def _refresh_stats(self) -> None:
        for stream in self.inbound.values():
            stream.stats.extra.update(stream.latency.values())

    def close(self) -> None:
        self.receiver.stop()            # closes every listen endpoint
        if self.tx is not None:
            self.tx.close()
            self.tx = None


def main(argv=None) -> int:
    return run_node(MoraiBridgeNode, argv)


if __name__ == '__main__':
    sys.exit(main())
