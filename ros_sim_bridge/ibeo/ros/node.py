"""ibeo LUX / SICK LD-MRS and Ibeo ECU / FUSION SYSTEM driver over TCP (executables
``ibeo_lux`` and ``ibeo_ecu``: the same node, ECU defaults in :mod:`.ecu_node`).

Topic names are relative to ``topic_prefix`` (default ``ibeo``: ``ros2 run`` publishes
/ibeo/points; the launch files run the node in namespace /ibeo, where the prefix is left out,
so the names are the same), services are private (``~/``):

| direction | name | type | notes |
|---|---|---|---|
| pub | points | sensor_msgs/PointCloud2 | 0x2202; x y z horizontal_angle echo_width layer echo flags; ECU 0x2204/0x2205: :data:`.ecu_conversions.CLOUD_DTYPE` |
| pub | scan_info | ros_sim_bridge/LuxScanInfo | scan header of every 0x2202 |
| pub | objects | ros_sim_bridge/LuxObjectList | 0x2221, SI units, invalid velocities NaN |
| pub | objects/markers | visualization_msgs/MarkerArray | boxes, contours, labels, velocities |
| pub | vehicle_state | ros_sim_bridge/LuxVehicleState | 0x2805, ``valid`` per spec §5 |
| pub | vehicle_state/twist | geometry_msgs/TwistStamped | valid vehicle states only |
| pub | ECU topics | :data:`ECU_TOPIC_TYPES` | every type :class:`.ecu_conversions.IbeoToRos` converts, as ``ibeo_idc to-bag`` writes it (ecu/scan_info, /tf_static, ecu/objects, vehicle_state/odometry, vehicle_state/fix, gps/fix, gps_imu/fix, imu/data, odometry, odometry/twist, image/compressed, image); made at start by ``ibeo_ecu``, on first use by ``ibeo_lux``, for the recording's types with ``source:=file`` |
| pub | /tf_static | tf2_msgs/TFMessage (latched) | ``parent_frame_id`` → ``frame_id`` when set, with the ECU mounts |
| pub | /diagnostics | diagnostic_msgs/DiagnosticArray | link, per type, sensor errors/warnings, ECU device status / system monitoring / traces |
| srv | ~/set_filter | ros_sim_bridge/IbeoSetFilter | ECU Set Filter (§20); also sent after every (re)connect from ``data_types`` |
| srv | ~/reset, ~/save_config, ~/reset_defaults, ~/start_measure, ~/stop_measure | ros_sim_bridge/LuxCommand | |
| srv | ~/get_status | ros_sim_bridge/LuxGetStatus | |
| srv | ~/get_parameter, ~/set_parameter | ros_sim_bridge/LuxGetParameter, LuxSetParameter | by index or name |
| srv | ~/set_ntp_time | ros_sim_bridge/LuxSetNtpTime | |
| srv | ~/pause, ~/resume | std_srvs/Trigger | ``source:=file`` playback |
| srv | ~/seek | ros_sim_bridge/IbeoSeek | ``source:=file`` playback |

Transport → session → conversions → publishers: the shared TcpClient (reconnect with
back-off) feeds the session's Ibeo framer (header and body decoded once, false syncs
resynchronised); :class:`~ros_sim_bridge.ibeo.session.LuxSession` turns frames into events
(scans paired by mirror side, records, replies, skips) which the node hands to conversions and
publishers on the TCP thread.  Commands are sent from service callbacks (a reentrant callback
group): the session encodes them and pairs the reply, which the TCP thread hands over.
ECU / FUSION records go through :class:`~.ecu_conversions.IbeoToRos` (the converter of
``ibeo_idc to-bag``), so a bag recorded from the node holds what a converted ``.idc`` holds.

``source:=file`` plays an ``.idc`` recording instead of the TCP link
(:class:`~ros_sim_bridge.ibeo.idc_playback.IdcPlayer`: paced by the messages' NTP times, rate
factor, loop, start offset, pause/resume/seek services): its message bytes go through the same
framer → session → conversions → publishers path, so a LUX recording publishes what the live
sensor would.  Commands to the sensor answer an error in file mode.

This module is the tables (parameters, publishers, services) and the wiring of the parts, each
one concept given what it uses when made: :class:`~.dispatch.DataDispatch` (data type
→ conversion → publisher, stamps, its :class:`~.dispatch.DataCounters` and
:class:`~.dispatch.Publishers`), :class:`~.status.StatusReports` (diagnostics sources),
:class:`~.commands.CommandServices` (the sensor commands and their services),
:class:`~.playback.FilePlayback` (``source:=file`` and its services).
"""
from __future__ import annotations

import math
import os
import sys
import threading
import time
from typing import Optional

from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import CompressedImage, Image, Imu, NavSatFix, PointCloud2
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S
from ros_sim_bridge.core.receive_times import ReadTimes
from ros_sim_bridge.core.tcp import TcpClient
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan as lux_scan
from ros_sim_bridge.ibeo.codec import set_filter as sf
from ros_sim_bridge.ibeo.codec.header import DEFAULT_MAX_BODY
from ros_sim_bridge.ibeo.idc_playback import IdcPlayer
from ros_sim_bridge.ibeo.session import LuxSession, Reply, ReplyFailed, sent_ns
from ros_sim_bridge.ibeo.ros import ecu_conversions as ecu
from ros_sim_bridge.ibeo.ros.commands import SIMPLE_COMMANDS, CommandServices
from ros_sim_bridge.ibeo.ros.dispatch import DataCounters, DataDispatch, Publishers
from ros_sim_bridge.ibeo.ros.playback import FilePlayback, recording_outputs
from ros_sim_bridge.ibeo.ros.status import StatusReports
from ros_sim_bridge.msg import (IbeoObjectList, IbeoOdometry, IbeoScanInfo, LuxObjectList,
                                LuxScanInfo, LuxVehicleState)
from ros_sim_bridge.ros.diagnostics import Diagnostics, StreamStats
from ros_sim_bridge.ros.params import (common_parameters, declare_parameters, non_negative, port,
                                       positive)
from ros_sim_bridge.ros.runner import run_node
from ros_sim_bridge.srv import (IbeoSeek, IbeoSetFilter, LuxCommand, LuxGetParameter, LuxGetStatus,
                                LuxSetNtpTime, LuxSetParameter)

SOURCES = ('tcp', 'file')


def _ranges_check(value) -> Optional[str]:
    try:
        sf.parse_ranges(value)
    except ValueError as exc:
        return f'is not a list of data types: {exc}'
    return None


PARAMETERS = {
    'source': ('tcp', "'tcp': the sensor at host:port; 'file': play the .idc recording file"),
    'file': ('', '.idc recording played with source:=file'),
    'rate': (1.0, 'source:=file: playback speed, recording seconds per wall second (0: as '
                  'fast as possible)'),
    'loop': (False, 'source:=file: start again at start_offset after the last message'),
    'start_offset': (0.0, 'source:=file: s after the first message to start at; negative: '
                          'before the last'),
    'start_paused': (False, 'source:=file: wait for ~/resume before playing'),
    'host': ('127.0.0.1', 'sensor address (a real LUX ships with 192.168.0.1, see docs/ibeo.md)'),
    'port': (12002, 'sensor TCP port', port(what='TCP port')),
    'topic_prefix': ('ibeo', "namespace of the topics, relative to the node's; '' none (the "
                             'launch files leave it out in the namespace of the same name)'),
    'frame_id': ('laser', 'scanner frame of points, scan_info, objects and markers (FLU)'),
    'vehicle_frame_id': ('base_link', 'frame of vehicle_state and vehicle_state/twist'),
    'parent_frame_id': ('', "frame the scanner sits at the origin of: /tf_static parent_frame_id "
                            "→ frame_id (identity, latched); '' none (a robot's URDF places it)"),
    **common_parameters(stamp_sources={
        'receive': 'host clock at reception',
        'sensor': "the message's NTP time (falls back to receive time while the sensor clock "
                  'is unset)'},
        stamp_default='receive', stale_after=1.0, stale_what="a data type's stream"),
    'max_time_jump': (MAX_TIME_JUMP_S, 's a header time may lie before or after the last valid '
                      'one of its device (after it: plus the time since it arrived) before it '
                      'is invalid: counted, stamped with the receive time (source:=file: the '
                      'whole file is checked, an invalid time replaced by a valid one)',
                      positive),
    'layers': (0, '0: ask the sensor (DeviceType 0x3301, BeamTilt 0x3302) on connect; 4 or 8'),
    'layer_elevations_deg': ([-1.2, -0.4, 0.4, 1.2], 'elevation of layers 0..3 (deg, layer 0 '
                             'lowest; SUPPLEMENT §3.2)'),
    'beam_tilt': (float(lux_scan.DEFAULT_8_LAYER_BEAM_TILT_RAD),
                  'rad; 8-layer mirror tilt when the sensor does not report BeamTilt'),
    'merge_mirror_sides': (True, '8-layer units: one cloud from two consecutive mirror sides'),
    'drop_ground': (False, 'drop points flagged ground'),
    'drop_dirt': (False, 'drop points flagged dirt'),
    'drop_clutter': (False, 'drop points flagged clutter (atmospheric: rain, fog, spray)'),
    'drop_transparent': (False, 'drop points flagged transparent'),
    'first_echo_only': (False, 'keep echo 0 only'),
    'start_measure_on_connect': (True, 'send Start Measure after every (re)connect'),
    'command_timeout': (2.0, 's a command service waits for the reply'),
    'connect_timeout': (2.0, 's per connection attempt'),
    'min_backoff': (0.25, 's before the first reconnect attempt'),
    'max_backoff': (8.0, 's the doubling back-off grows to at most; each wait is still capped '
                    'at reconnect_within'),
    'reconnect_within': (0.5, 's between reconnect attempts at most, so a sensor that is back '
                         'is served within about that long (a link that was up for a second '
                         'or more is retried at once)', positive),
    'data_timeout': (2.5, 's without a byte on a connected link before it is taken for dead '
                     '(a sensor whose power was cut, a frozen ECU), closed and rebuilt; '
                     'waits while measuring is stopped through ~/stop_measure; 0: off',
                     non_negative),
    'max_message_bytes': (DEFAULT_MAX_BODY, 'largest message body accepted; a well-framed '
                          'bigger one is skipped by its size and counted as oversized',
                          positive),
    'max_objects': (256, 'objects per object list (LUX 0x2221, ECU 0x2225/0x2280/0x2281/0x2291) '
                    'published at most (the first ones; the rest are counted and dropped, a '
                    'warning is logged)'),
    'max_contour_points': (64, 'contour points per object published at most (the first ones; '
                           'the rest are counted and dropped, a warning is logged)'),
    'publish_markers': (True, 'publish objects/markers'),
    'marker_lifetime': (0.0, 's markers live without an update in RViz (0 = until deleted)'),
    'errors_hold': (1.0, 's a 0x2030 error/warning report stays active (sensor repeats it)'),
    'data_types': ('', 'ECU Set Filter (spec §20) sent after every (re)connect: the data types '
                   'wanted, ids and ranges such as "0x2205, 0x2280-0x2281, 0x9001" or "all"; '
                   "empty: none sent, the device's filter is left alone (a LUX has none)",
                   _ranges_check),
    'scanner_frame_id': ('ibeo_scanner_{device_id}', 'ECU scans in scanner coordinates: frame '
                         'of each scanner ({device_id} is replaced); /tf_static links it to '
                         'vehicle_frame_id by its mounting pose'),
    'odom_frame_id': ('odom', 'frame of the ECU vehicle_state/odometry (0x2806/0x2807)'),
    'gps_frame_id': ('gps', 'frame of gps/fix, gps_imu/fix and vehicle_state/fix'),
    'imu_frame_id': ('imu', 'frame of imu/data (0x9001)'),
    'camera_frame_id': ('camera', 'frame of image and image/compressed (0x2403)'),
}

#: ECU outputs (keys of ecu_conversions.TOPICS) → message type: the publishers ``ibeo_ecu``
#: makes at start (nothing lost to discovery).  ``ibeo_lux`` makes none of them at start (a LUX
#: sends no ECU type; one that arrives anyway gets its publisher on first use);
#: ``source:=file`` makes those of the data types the recording holds.
ECU_TOPIC_TYPES = {
    'scan_info': IbeoScanInfo, 'objects': IbeoObjectList, 'vehicle_odometry': Odometry,
    'vehicle_fix': NavSatFix, 'gps_fix': NavSatFix, 'gps_imu_fix': NavSatFix, 'imu': Imu,
    'odometry': IbeoOdometry, 'odometry_twist': TwistStamped,
    'image_compressed': CompressedImage, 'image': Image, 'tf_static': TFMessage,
}


class IbeoLuxNode(Node):
    """Wiring: TCP or file (:class:`~.playback.FilePlayback`) →
    :class:`~ros_sim_bridge.ibeo.session.LuxSession` (framing, decoding, protocol state) →
    :class:`~.dispatch.DataDispatch` (conversions → publishers); services → session commands
    (:class:`~.commands.CommandServices`) and file playback; diagnostics from
    :class:`~.status.StatusReports`."""

    #: node name and parameter table (the ``ibeo_ecu`` sibling has its own defaults)
    NODE_NAME = 'ibeo_lux'
    PARAMETERS = PARAMETERS
    DEVICE = 'LUX'
    #: the per-type /diagnostics statuses made at start, (data type, label, WARN while no data
    #: came); the other types get theirs on first sight
    TYPE_STREAMS = ((registry.SCAN, 'scan', True), (registry.OBJECTS, 'objects', False),
                    (registry.VEHICLE_STATE, 'vehicle state', False),
                    (registry.ERRORS_WARNINGS, 'errors and warnings', False),
                    (registry.REPLY, 'command replies', False))
    #: make every ECU publisher at start (tcp); else only on first use
    ECU_PUBLISHERS_AT_START = False

    # --- the parts (made in __init__) ---------------------------------------------------------
    p: object                       # the parameters (declare_parameters)
    session: LuxSession             # framing, decoding, protocol state (ROS-free)
    hw: str                         # hardware id of every status
    client: Optional[TcpClient]     # source:=tcp
    player: Optional[IdcPlayer]     # source:=file
    diagnostics: Diagnostics
    link: StreamStats               # the link's stream (TCP or file)
    stats: dict                     # data type → its StreamStats
    counters: DataCounters          # what the data path counts (read by the diagnostics)
    pubs: Publishers                # the topics
    commands: CommandServices       # sensor commands, one outstanding; Set Filter; services
    data: DataDispatch              # session events → conversions → publishers
    file_playback: FilePlayback     # source:=file (its player) and the playback services
    status: StatusReports           # the diagnostics sources

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.p = p = declare_parameters(self, self.PARAMETERS, dynamic=('data_types',))
        filter_ranges = sf.parse_ranges(p.data_types)   # () = send no Set Filter
        if p.max_objects < 0 or p.max_contour_points < 0:
            raise ValueError('max_objects and max_contour_points must be >= 0')
        if p.source not in SOURCES:
            raise ValueError(f"parameter source: 'tcp' or 'file', not {p.source!r}")
        if p.source == 'file' and not p.file:
            raise ValueError('parameter file: the .idc recording to play is required with '
                             'source:=file')
        if not math.isfinite(p.rate) or p.rate < 0:
            raise ValueError(f'parameter rate must be a finite number >= 0 (0: as fast as '
                             f'possible), not {p.rate}')
        if not math.isfinite(p.start_offset):
            raise ValueError(f'parameter start_offset must be a finite number of seconds, not '
                             f'{p.start_offset}')
        self.session = LuxSession(layers=p.layers, beam_tilt=p.beam_tilt,
                                  merge_mirror_sides=p.merge_mirror_sides,
                                  max_body=p.max_message_bytes,
                                  max_time_jump=p.max_time_jump)
        self.hw = (f'ibeo file {os.path.basename(p.file)}' if p.source == 'file'
                   else f'ibeo {self.DEVICE} {p.host}:{p.port}')
        self.client = None
        self.diagnostics = Diagnostics(self, period=p.diagnostics_period)
        where = (f'file {os.path.basename(p.file)}' if p.source == 'file'
                 else f'tcp {p.host}:{p.port}')
        self.link = StreamStats(f'{self.get_name()}: link {where}', self.hw,
                                stale_after=p.stale_after)
        self.stats = {}
        self.counters = DataCounters()
        self.pubs = Publishers(self, p.topic_prefix)
        self.commands = CommandServices(p, session=self.session, stats=self.stats,
                                        diagnostics=self.diagnostics, link=self.link,
                                        logger=self.get_logger(), filter_ranges=filter_ranges)
        self.data = DataDispatch(p, session=self.session, diagnostics=self.diagnostics,
                                 link=self.link, stats=self.stats, counters=self.counters,
                                 pubs=self.pubs, hw=self.hw, context_ok=self.context.ok,
                                 handlers={Reply: self.commands.on_reply,
                                           ReplyFailed: self.commands.on_reply_failed})
        self.file_playback = FilePlayback(p, session=self.session, data=self.data,
                                          link=self.link, diagnostics=self.diagnostics,
                                          logger=self.get_logger())
        self.player = self.file_playback.player
        self._make_publishers()
        self._make_diagnostics()
        self._make_services()
        if self.player is not None:
            self.file_playback.start()
            return
        # messages of one read: receive times spaced by their header NTP times (core.receive_times)
        self.read_times = ReadTimes(sent_ns)
        self._loss_logged = False       # the last link line logged says the link was lost
        self.client = TcpClient(p.host, p.port, self.session.framer, self.data.on_event,
                                receive_times=self.read_times,
                                name='ibeo-lux-tcp', on_connect=self._on_connect,
                                on_disconnect=self._on_disconnect,
                                on_connect_failed=self._on_connect_failed,
                                connect_timeout=p.connect_timeout, min_backoff=p.min_backoff,
                                max_backoff=p.max_backoff, reconnect_within=p.reconnect_within,
                                data_timeout=p.data_timeout)
        self.status.client = self.commands.client = self.client
        self.get_logger().info(
            f'connecting to the {self.DEVICE} at {p.host}:{p.port} (stamps: {p.stamp_source}, '
            f'layers: {p.layers or "from the sensor"}, points: {self.data.point_builder}, '
            f'set filter: {sf.format_ranges(filter_ranges) or "none"})')
        self.client.start()

    def _make_publishers(self) -> None:
        """The table of topics: the LUX data types', then the ECU outputs."""
        pubs = self.pubs
        pubs.points = pubs.make(PointCloud2, 'points')
        pubs.scan_info = pubs.make(LuxScanInfo, 'scan_info')
        pubs.objects = pubs.make(LuxObjectList, 'objects')
        pubs.markers = pubs.make(MarkerArray, 'objects/markers')
        pubs.vehicle = pubs.make(LuxVehicleState, 'vehicle_state')
        pubs.twist = pubs.make(TwistStamped, 'vehicle_state/twist')
        # ECU / FUSION outputs by topic; shared topics use the LUX publishers
        pubs.ecu.update({ecu.TOPICS['points']: pubs.points, ecu.TOPICS['markers']: pubs.markers,
                         ecu.TOPICS['vehicle_twist']: pubs.twist})
        if self.player is not None:
            ecu_outputs = recording_outputs(self.player.reader, self.player.entries,
                                            self.data.ecu_converter())
        elif self.ECU_PUBLISHERS_AT_START:
            ecu_outputs = {ecu.TOPICS[key]: t for key, t in ECU_TOPIC_TYPES.items()}
        else:
            ecu_outputs = {}
        for topic, msg_type in ecu_outputs.items():
            pubs.ecu_publisher(topic, msg_type)
        if self.p.parent_frame_id:      # parent_frame_id → frame_id, latched with ECU mounts
            self.data.publish_mount(self.p.parent_frame_id, self.p.frame_id, time.time_ns())

    def _make_diagnostics(self) -> None:
        """One stream per data type, the link, the sensor's error/warning registers."""
        for data_type, label, expected in self.TYPE_STREAMS:
            self.stats[data_type] = self.data.type_stream(data_type, label, expected=expected)
        self.status = StatusReports(self.p, name=self.get_name(), hw=self.hw,
                                    session=self.session, link=self.link, stats=self.stats,
                                    counters=self.counters, client=self.client,
                                    player=self.player, point_builder=self.data.point_builder,
                                    commands=self.commands)
        for source in self.status.sources():
            self.diagnostics.add_source(source)

    def _make_services(self) -> None:
        """Commands: one outstanding at a time (they wait for the reply the TCP thread hands
        over: a reentrant group); the playback controls."""
        commands, playback = self.commands, self.file_playback
        group = ReentrantCallbackGroup()
        for name, command_id in SIMPLE_COMMANDS.items():
            self.create_service(LuxCommand, f'~/{name}',
                                lambda req, res, c=command_id: commands.srv_simple(c, res),
                                callback_group=group)
        for srv_type, name, callback in (
                (IbeoSetFilter, 'set_filter', commands.srv_set_filter),
                (LuxGetStatus, 'get_status', commands.srv_get_status),
                (LuxGetParameter, 'get_parameter', commands.srv_get_parameter),
                (LuxSetParameter, 'set_parameter', commands.srv_set_parameter),
                (LuxSetNtpTime, 'set_ntp_time', commands.srv_set_ntp_time)):
            self.create_service(srv_type, f'~/{name}', callback, callback_group=group)
        self.add_on_set_parameters_callback(commands.on_set_parameters)  # data_types at run time
        self.create_service(Trigger, '~/pause', playback.srv_pause)
        self.create_service(Trigger, '~/resume', playback.srv_resume)
        self.create_service(IbeoSeek, '~/seek', playback.srv_seek)

    # --- link ----------------------------------------------------------------------------
    def _on_connect(self) -> None:
        """On the TCP thread before it reads: replies can only be waited for elsewhere."""
        self.read_times.start(time.time_ns())
        self.session.connection_made()
        for stats in tuple(self.stats.values()):
            stats.link_up()
        text = f'connected to {self.p.host}:{self.p.port} (connection {self.client.connects})'
        if self._loss_logged:          # the log's last word on the link was its loss: always
            self._loss_logged = False  # (else rate-limited: a peer that hangs up at once)
            self.get_logger().info(text)
        else:
            self.diagnostics.log_limited(self.link.name, 'connected', text, 'info')
        threading.Thread(target=self.commands.connected_tasks, name='ibeo-lux-connect',
                         daemon=True).start()

    def _on_connect_failed(self, why: str) -> None:
        self._type_streams_down(why)
        self.get_logger().warn(f'{self.DEVICE} not reachable: {why}; retrying (at least every '
                               f'{self.p.reconnect_within:g} s)', throttle_duration_sec=10.0)

    def _on_disconnect(self, reason: str) -> None:
        # rate-limited per reason: a sensor that accepts and then hangs up or stays silent
        # loses every link the same way, about twice a second
        self._loss_logged = self.diagnostics.log_limited(
            self.link.name, f'lost: {reason}',
            f'link to {self.p.host}:{self.p.port} lost: {reason}; reconnecting')
        self._type_streams_down(reason)
        self.commands.fail_all(f'link lost: {reason}')
        for ev in self.session.connection_lost():
            self.data.dispatch(ev, time.time_ns(), None)
        self.data.clear_markers(time.time_ns())

    def _type_streams_down(self, reason: str) -> None:
        """The link is down: each data type stream that is expected or had data says so
        (WARN 'reconnecting', ERROR after ``link_error_after`` s) until the next connect."""
        now = time.time_ns()
        for stats in tuple(self.stats.values()):
            if stats.expected or stats.packets:
                stats.link_down(reason, now)

    def close(self) -> None:
        if self.client is not None:
            self.client.stop()
        if self.player is not None:
            self.player.close()
        self.commands.fail_all('driver shutting down')


def main(argv=None) -> int:
    return run_node(IbeoLuxNode, argv)


if __name__ == '__main__':
    sys.exit(main())
