"""ibeo LUX / SICK LD-MRS and Ibeo ECU / FUSION SYSTEM driver over TCP (executables
``ibeo_lux`` and ``ibeo_ecu``: the same node, ECU defaults in :mod:`.ecu_node`).

| direction | name | type | notes |
|---|---|---|---|
| pub | points | sensor_msgs/PointCloud2 | 0x2202; x y z horizontal_angle echo_width layer echo flags; ECU 0x2204/0x2205: :data:`.ecu_conversions.CLOUD_DTYPE` |
| pub | scan_info | ros_sim_bridge/LuxScanInfo | scan header of every 0x2202 |
| pub | objects | ros_sim_bridge/LuxObjectList | 0x2221, SI units, invalid velocities NaN |
| pub | objects/markers | visualization_msgs/MarkerArray | boxes, contours, labels, velocities |
| pub | vehicle_state | ros_sim_bridge/LuxVehicleState | 0x2805, ``valid`` per spec §5 |
| pub | vehicle_state/twist | geometry_msgs/TwistStamped | valid vehicle states only |
| pub | ECU topics | see :data:`.ecu_conversions.TOPICS` | every type :class:`.ecu_conversions.IbeoToRos` converts, as ``ibeo_idc to-bag`` writes it (ecu/scan_info, /tf_static, ecu/objects, vehicle_state/odometry, vehicle_state/fix, gps/fix, gps_imu/fix, imu/data, odometry, odometry/twist, image/compressed, image) |
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
"""
from __future__ import annotations

import collections
import math
import os
import sys
import threading
import time
from typing import Optional

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import CompressedImage, Image, Imu, NavSatFix, PointCloud2
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.framer import Rejected
from ros_sim_bridge.ibeo.codec import commands as cmd
from ros_sim_bridge.ibeo.codec import errors_warnings as lux_errors
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.codec import scan as lux_scan
from ros_sim_bridge.ibeo.codec import objects as lux_objects
from ros_sim_bridge.ibeo.codec import set_filter as sf
from ros_sim_bridge.ibeo.codec import vehicle_state as lux_vehicle
from ros_sim_bridge.ibeo.codec.header import DEFAULT_MAX_BODY
from ros_sim_bridge.ibeo.idc_playback import IdcPlayer
from ros_sim_bridge.ibeo.session import (BadMessage, LuxSession, Message, Reply, ReplyFailed,
                                         Scan, Skipped, UnpairedHalf, handled)
from ros_sim_bridge.core.ntp import unix_ns_to_ntp
from ros_sim_bridge.ibeo.ros import conversions as convert
from ros_sim_bridge.ibeo.ros import ecu_conversions as ecu
from ros_sim_bridge.ros.pointcloud import CloudBuffer, to_pointcloud2
from ros_sim_bridge.ros.stamps import ns_to_stamp, stamp_to_ns
from ros_sim_bridge.ros.diagnostics import Diagnostics, StreamStats
from ros_sim_bridge.msg import (IbeoObjectList, IbeoOdometry, IbeoScanInfo, LuxObjectList,
                                LuxScanInfo, LuxVehicleState)
from ros_sim_bridge.ros.runner import run_node
from ros_sim_bridge.ros.params import common_parameters, declare_parameters, positive
from ros_sim_bridge.ros.qos import DATA, LATCHED
from ros_sim_bridge.srv import (IbeoSeek, IbeoSetFilter, LuxCommand, LuxGetParameter, LuxGetStatus,
                                LuxSetNtpTime, LuxSetParameter)
from ros_sim_bridge.core.tcp import TcpClient

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
    'host': ('127.0.0.1', 'sensor address (a real LUX ships with 192.168.0.1, see the README)'),
    'port': (12002, 'sensor TCP port'),
    'frame_id': ('laser', 'scanner frame of points, scan_info, objects and markers (FLU)'),
    'vehicle_frame_id': ('base_link', 'frame of vehicle_state and vehicle_state/twist'),
    **common_parameters(stamp_sources={
        'receive': 'host clock at reception',
        'sensor': "the message's NTP time (falls back to receive time while the sensor clock "
                  'is unset)'},
        stamp_default='receive', stale_after=1.0, stale_what='the scan stream'),
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
                    'at 1 s (TcpClient reconnect_within), so a sensor that is back is served '
                    'within a second'),
    'max_message_bytes': (DEFAULT_MAX_BODY, 'largest message body accepted (bigger = corrupt)',
                          positive),
    'max_objects': (256, 'objects per 0x2221 published at most (the first ones; the rest are '
                    'counted and dropped, a warning is logged)'),
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

#: ECU outputs (keys of ecu_conversions.TOPICS) → message type; publishers made at start so
#: nothing is lost to discovery.  A topic the converter gains later gets its publisher on
#: first use.
ECU_TOPIC_TYPES = {
    'scan_info': IbeoScanInfo, 'objects': IbeoObjectList, 'vehicle_odometry': Odometry,
    'vehicle_fix': NavSatFix, 'gps_fix': NavSatFix, 'gps_imu_fix': NavSatFix, 'imu': Imu,
    'odometry': IbeoOdometry, 'odometry_twist': TwistStamped,
    'image_compressed': CompressedImage, 'image': Image,
}



class _Pending:
    """One command waiting for its reply."""

    def __init__(self, command_id: int):
        self.command_id = command_id
        self.event = threading.Event()
        self.reply: Optional[cmd.LuxReply] = None
        self.error = ''


#: Command services with no request data: service name → command id
SIMPLE_COMMANDS = {'reset': cmd.RESET, 'save_config': cmd.SAVE_CONFIG,
                   'reset_defaults': cmd.RESET_DEFAULTS, 'start_measure': cmd.START_MEASURE,
                   'stop_measure': cmd.STOP_MEASURE}


class IbeoLuxNode(Node):
    """Wiring: TCP → :class:`~ros_sim_bridge.ibeo.session.LuxSession` (framing, decoding,
    protocol state) → conversions → publishers; services → session commands."""

    #: node name and parameter table (the ``ibeo_ecu`` sibling has its own defaults)
    NODE_NAME = 'ibeo_lux'
    PARAMETERS = PARAMETERS
    DEVICE = 'LUX'

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.p = p = declare_parameters(self, self.PARAMETERS)
        self.filter_ranges = sf.parse_ranges(p.data_types)   # () = send no Set Filter
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
                                  max_body=p.max_message_bytes)
        self.hw = (f'ibeo file {os.path.basename(p.file)}' if p.source == 'file'
                   else f'ibeo {self.DEVICE} {p.host}:{p.port}')
        self._make_converters()
        self._make_publishers()
        self._make_diagnostics()
        self._make_services()
        self.client: Optional[TcpClient] = None
        self.player: Optional[IdcPlayer] = None
        if p.source == 'file':
            self._start_player()
            return
        self.client = TcpClient(p.host, p.port, self.session.framer, self._on_event,
                                name='ibeo-lux-tcp', on_connect=self._on_connect,
                                on_disconnect=self._on_disconnect,
                                on_connect_failed=self._on_connect_failed,
                                connect_timeout=p.connect_timeout, min_backoff=p.min_backoff,
                                max_backoff=p.max_backoff)
        self.get_logger().info(
            f'connecting to the {self.DEVICE} at {p.host}:{p.port} (stamps: {p.stamp_source}, '
            f'layers: {p.layers or "from the sensor"}, points: {self.point_builder}, '
            f'set filter: {sf.format_ranges(self.filter_ranges) or "none"})')
        self.client.start()

    def _make_converters(self) -> None:
        p = self.p
        self.builder = convert.CloudBuilder(
            p.layer_elevations_deg, first_echo_only=p.first_echo_only,
            drop_flags=convert.drop_mask(ground=p.drop_ground, dirt=p.drop_dirt,
                                         clutter=p.drop_clutter, transparent=p.drop_transparent))
        self.point_builder = ('compiled kernel' if self.builder.native else
                              'numpy (compiled kernel not installed)')
        self.cloud_buffer = CloudBuffer(convert.CLOUD_DTYPE)
        self.markers = convert.ObjectMarkers(lifetime_s=p.marker_lifetime)
        self.object_caps = convert.ObjectCaps(p.max_objects, p.max_contour_points)
        self._half = None                        # (cloud, header) of the waiting 8-layer half
        self.ecu = _LiveIbeoToRos(vehicle_frame=p.vehicle_frame_id,
                                  scanner_frame=p.scanner_frame_id, odom_frame=p.odom_frame_id,
                                  gps_frame=p.gps_frame_id, imu_frame=p.imu_frame_id,
                                  camera_frame=p.camera_frame_id, lux_frame=p.frame_id)
        self.static_transforms: dict = {}        # child frame → TransformStamped (ECU mounts)

    def _make_publishers(self) -> None:
        self.points_pub = self.create_publisher(PointCloud2, 'points', DATA)
        self.scan_info_pub = self.create_publisher(LuxScanInfo, 'scan_info', DATA)
        self.objects_pub = self.create_publisher(LuxObjectList, 'objects', DATA)
        self.markers_pub = self.create_publisher(MarkerArray, 'objects/markers', DATA)
        self.vehicle_pub = self.create_publisher(LuxVehicleState, 'vehicle_state', DATA)
        self.twist_pub = self.create_publisher(TwistStamped, 'vehicle_state/twist', DATA)
        # session events → handlers; decoded records by their codec record type
        self._handlers = {Scan: self._on_scan, UnpairedHalf: self._on_unpaired_half,
                          Reply: self._on_reply, ReplyFailed: self._on_reply_failed,
                          BadMessage: self._on_bad_message, Skipped: lambda ev, now_ns: None}
        self._record_handlers = {lux_objects.LuxObjectList: self._on_objects,
                                 lux_vehicle.LuxVehicleState: self._on_vehicle_state,
                                 lux_errors.LuxErrorsWarnings: self._on_errors}
        # ECU / FUSION outputs by topic; shared topics use the LUX publishers
        self._ecu_pubs = {ecu.TOPICS['points']: self.points_pub,
                          ecu.TOPICS['markers']: self.markers_pub,
                          ecu.TOPICS['vehicle_twist']: self.twist_pub}
        for key, msg_type in ECU_TOPIC_TYPES.items():
            self._ecu_pubs.setdefault(ecu.TOPICS[key],
                                      self.create_publisher(msg_type, ecu.TOPICS[key], DATA))
        self.tf_static_pub = self.create_publisher(TFMessage, ecu.TOPICS['tf_static'], LATCHED)

    def _make_diagnostics(self) -> None:
        """One stream per data type, the link, the sensor's error/warning registers."""
        p = self.p
        self.diagnostics = d = Diagnostics(self, period=p.diagnostics_period)
        self.stats = {
            registry.SCAN: d.stream('scan (0x2202)', self.hw, stale_after=p.stale_after),
            registry.OBJECTS: d.stream('objects (0x2221)', self.hw, stale_after=p.stale_after,
                                       expected=False),
            registry.VEHICLE_STATE: d.stream('vehicle state (0x2805)', self.hw,
                                             stale_after=p.stale_after, expected=False),
            registry.ERRORS_WARNINGS: d.stream('errors and warnings (0x2030)', self.hw,
                                               stale_after=p.stale_after, expected=False),
            registry.REPLY: d.stream('command replies (0x2020)', self.hw,
                                     stale_after=p.stale_after, expected=False),
        }
        where = (f'file {os.path.basename(p.file)}' if p.source == 'file'
                 else f'tcp {p.host}:{p.port}')
        self.link = StreamStats(f'{self.get_name()}: link {where}', self.hw,
                                stale_after=p.stale_after)
        d.add_source(self._link_status)
        d.add_source(self._sensor_status)
        d.add_source(self._device_statuses)
        self.device_status: dict[str, tuple[DiagnosticStatus, int]] = {}   # name → (st, ns)
        self.without_ros_form: collections.Counter = collections.Counter()
        self.filter_state = 'none sent' if not self.filter_ranges else 'not sent yet'
        self.filters_sent = 0
        self._lock = threading.Lock()            # counters shared with the diagnostics timer
        self.seen: dict[str, collections.Counter] = {'errors': collections.Counter(),
                                                     'warnings': collections.Counter()}
        self.last_errors: Optional[tuple[lux_errors.LuxErrorsWarnings, int]] = None
        self.stamp_fallbacks = 0
        self.invalid_vehicle_states = 0
        self.truncated_lists = 0
        self.dropped_objects = 0
        self.dropped_contour_points = 0
        self.last_status: Optional[cmd.LuxStatus] = None

    def _make_services(self) -> None:
        """Commands: one outstanding at a time; the TCP thread hands the reply over."""
        self._command_lock = threading.Lock()
        self._pending: Optional[_Pending] = None
        group = ReentrantCallbackGroup()
        for name, command_id in SIMPLE_COMMANDS.items():
            self.create_service(LuxCommand, f'~/{name}',
                                lambda req, res, c=command_id: self._srv_simple(c, res),
                                callback_group=group)
        for srv_type, name, callback in (
                (IbeoSetFilter, 'set_filter', self._srv_set_filter),
                (LuxGetStatus, 'get_status', self._srv_get_status),
                (LuxGetParameter, 'get_parameter', self._srv_get_parameter),
                (LuxSetParameter, 'set_parameter', self._srv_set_parameter),
                (LuxSetNtpTime, 'set_ntp_time', self._srv_set_ntp_time)):
            self.create_service(srv_type, f'~/{name}', callback, callback_group=group)
        self.add_on_set_parameters_callback(self._on_set_parameters)   # data_types at run time
        self.create_service(Trigger, '~/pause', self._srv_pause)
        self.create_service(Trigger, '~/resume', self._srv_resume)
        self.create_service(IbeoSeek, '~/seek', self._srv_seek)

    # --- transport → session -------------------------------------------------------------
    def _on_event(self, event, now_ns: int) -> None:
        if isinstance(event, CodecError):          # framing: garbage, false sync, oversized
            self.diagnostics.bad_input(self.link, event, now_ns)
            return
        frame = event.frame if isinstance(event, Rejected) else event
        size = len(frame.header) + len(frame.body)
        self.link.packet(size, now_ns)
        stats = self._stats_for(frame.parsed.data_type)
        if stats is not None:
            stats.packet(size, now_ns)
        for ev in self.session.handle(event, now_ns):
            self._dispatch(ev, now_ns, stats)

    def _stats_for(self, data_type: int) -> Optional[StreamStats]:
        """The stream of a decoded data type (an ECU type's on first sight), None for the
        types skipped by size (counted on the link)."""
        stats = self.stats.get(data_type)
        if stats is None and handled(data_type):
            stats = self.diagnostics.stream(
                f'{registry.type_name(data_type)} (0x{data_type:04X})', self.hw,
                stale_after=self.p.stale_after, expected=False)
            self.stats[data_type] = stats
        return stats

    def _dispatch(self, ev, now_ns: int, stats: Optional[StreamStats]) -> None:
        try:
            if isinstance(ev, Message):
                self._record_handlers.get(type(ev.record), self._on_ecu)(ev, now_ns, stats)
            else:
                self._handlers[type(ev)](ev, now_ns)
        except Exception as exc:  # never let one message end the receive thread
            if not self.context.ok():   # shutting down (Ctrl-C): publishers are gone
                return
            where = stats if stats is not None else self.link
            where.error('internal_error', repr(exc), now_ns)
            self.diagnostics.log_limited(where.name, 'internal_error',
                                         f'{where.name}: failed to handle a message: {exc!r}',
                                         'error')

    def _stamp(self, ntp: int, now_ns: int):
        ns, fell_back = self.session.stamp_ns(ntp, now_ns, self.p.stamp_source)
        if fell_back:
            self.stamp_fallbacks += 1
            self.diagnostics.log_limited('stamp', 'unset_clock', 'stamp_source is sensor but the '
                                         'sensor clock is unset: using the receive time')
        return ns_to_stamp(ns)

    # --- session events → conversions → publishers ---------------------------------------
    def _on_bad_message(self, ev: BadMessage, now_ns: int) -> None:
        self.diagnostics.bad_input(self._stats_for(ev.header.data_type), ev.error, now_ns)

    def _on_scan(self, ev: Scan, now_ns: int) -> None:
        scan, wire = ev.scan, ev.wire
        hdr = Header(stamp=self._stamp(scan.start_ntp, now_ns), frame_id=self.p.frame_id)
        if ev.pairing == 'single':
            cloud = self.builder.build_wire(scan, wire, eight_layer=ev.eight_layer,
                                            beam_tilt=ev.beam_tilt,
                                            alloc=self.cloud_buffer.points)
            n = len(cloud)
            msg = self.cloud_buffer.message(cloud, hdr, is_dense=not self.builder.nan_points)
            del cloud                              # the buffer is reused for the next scan
            self.points_pub.publish(msg)
            published = 2
        else:
            cloud = self.builder.build_wire(scan, wire, eight_layer=True, beam_tilt=ev.beam_tilt)
            n = len(cloud)
            published = 1
            if ev.pairing == 'second' and self._half is not None:
                (first, first_hdr), self._half = self._half, None
                both = convert.concatenate(first, cloud)
                self.points_pub.publish(to_pointcloud2(both, first_hdr,
                                                       is_dense=convert.is_dense(both)))
                published += 1
            else:
                self._half = (cloud, hdr)
        self.scan_info_pub.publish(convert.scan_info(
            scan, hdr, device_id=ev.header.device_id, scan_points=len(wire), published_points=n,
            eight_layer=ev.eight_layer, beam_tilt=ev.beam_tilt,
            sensor_time_offset=self.session.time_offset_s or 0.0))
        self.stats[registry.SCAN].publish(published)

    def _on_unpaired_half(self, ev: UnpairedHalf, now_ns: int) -> None:
        """The waiting half gets no partner: publish it alone."""
        half, self._half = self._half, None
        if half is not None:
            self.points_pub.publish(to_pointcloud2(half[0], half[1],
                                                   is_dense=convert.is_dense(half[0])))
            self.stats[registry.SCAN].publish(1)

    def _on_objects(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        lst = ev.record
        hdr = Header(stamp=self._stamp(lst.scan_start_ntp, now_ns), frame_id=self.p.frame_id)
        lst = convert.cap_objects(lst, self.object_caps)
        if lst.truncated:
            self._count_truncation(lst, stats)
        contours = convert.contour_points(lst)     # shared by the list and its markers
        self.objects_pub.publish(convert.object_list(lst, hdr, device_id=ev.header.device_id,
                                                     contours=contours))
        published = 1
        if self.p.publish_markers:
            self.markers_pub.publish(self.markers.update(lst, hdr, contours=contours))
            published += 1
        stats.publish(published)

    def _count_truncation(self, lst, stats: StreamStats) -> None:
        with self._lock:
            self.truncated_lists += 1
            self.dropped_objects += lst.dropped_objects
            self.dropped_contour_points += lst.dropped_points
        stats.extra['truncated_lists'] = str(self.truncated_lists)
        stats.extra['dropped_objects'] = str(self.dropped_objects)
        stats.extra['dropped_contour_points'] = str(self.dropped_contour_points)
        self.diagnostics.log_limited(
            'objects', 'truncated', f'object list over the caps: {lst.dropped_objects} objects '
            f'beyond max_objects={self.object_caps.max_objects} and {lst.dropped_points} contour '
            f'points beyond max_contour_points={self.object_caps.max_contour_points} dropped')

    def _on_vehicle_state(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        vs = ev.record
        hdr = Header(stamp=self._stamp(vs.timestamp_ntp, now_ns),
                     frame_id=self.p.vehicle_frame_id)
        self.vehicle_pub.publish(convert.vehicle_state(vs, hdr, device_id=ev.header.device_id))
        if vs.valid:
            self.twist_pub.publish(convert.vehicle_twist(vs, hdr))
            stats.publish(2)
        else:
            with self._lock:
                self.invalid_vehicle_states += 1
            stats.extra['invalid'] = str(self.invalid_vehicle_states)
            stats.extra['last_invalid_flags'] = ', '.join(vs.error_names)
            self.diagnostics.log_limited('vehicle', 'invalid', 'invalid vehicle state (error '
                                         f'flags {", ".join(vs.error_names)}): not used for '
                                         'vehicle_state/twist')
            stats.publish(1)

    def _on_errors(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        ew = ev.record
        with self._lock:
            self.last_errors = (ew, now_ns)
            for n in ew.error_names:
                self.seen['errors'][n] += 1
            for n in ew.warning_names:
                self.seen['warnings'][n] += 1
        if ew.has_error:
            self.diagnostics.log_limited('sensor', 'error', 'sensor errors: '
                                         + ', '.join(ew.error_names), 'error')
        stats.publish()

    # --- ECU / FUSION records: the converter of ibeo_idc to-bag ----------------------------
    def _on_ecu(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        pairs = self.ecu.convert(ev.header, ev.record)
        if not pairs:                           # frame end, measurement list, index, ...
            key = f'0x{ev.header.data_type:04X} {registry.type_name(ev.header.data_type)}'
            with self._lock:
                self.without_ros_form[key] += 1
            stats.extra['without_ros_form'] = str(self.without_ros_form[key])
            return
        stamp = self._ecu_restamp(ev.header.ntp, now_ns)
        published = 0
        for topic, msg in pairs:
            if stamp is not None:
                _restamp(msg, stamp)
            if topic == ecu.TOPICS['diagnostics']:
                with self._lock:
                    for st in msg.status:
                        self.device_status[st.name] = (st, now_ns)
                continue
            if topic == ecu.TOPICS['tf_static']:
                for t in msg.transforms:          # latched: every mount seen so far, in one
                    self.static_transforms[t.child_frame_id] = t
                self.tf_static_pub.publish(TFMessage(
                    transforms=list(self.static_transforms.values())))
            elif topic == ecu.TOPICS['markers'] and not self.p.publish_markers:
                continue
            else:
                pub = self._ecu_pubs.get(topic)
                if pub is None:                   # a type the converter learnt later
                    pub = self._ecu_pubs[topic] = self.create_publisher(type(msg), topic, DATA)
                pub.publish(msg)
            published += 1
        stats.publish(published)

    def _ecu_restamp(self, ntp: int, now_ns: int):
        """None: keep the converter's stamps (the messages' NTP times, as in ``to-bag``); else
        the stamp to put on every message (receive time; the fallback while the clock is
        unset)."""
        if self.p.stamp_source == 'sensor':
            if self.session.clock_is_set(ntp):
                return None
            self.stamp_fallbacks += 1
            self.diagnostics.log_limited('stamp', 'unset_clock', 'stamp_source is sensor but '
                                         'the sensor clock is unset: using the receive time')
        return ns_to_stamp(now_ns)

    def _on_reply(self, ev: Reply, now_ns: int) -> None:
        pending = self._pending
        if ev.solicited and pending is not None and ev.reply.command_id == pending.command_id:
            pending.reply = ev.reply
            pending.event.set()
            self.stats[registry.REPLY].publish()

    def _on_reply_failed(self, ev: ReplyFailed, now_ns: int) -> None:
        pending = self._pending
        if pending is not None and ev.command_id == pending.command_id:
            pending.error = f'malformed reply: {ev.error}'
            pending.event.set()

    # --- link ----------------------------------------------------------------------------
    def _on_connect(self) -> None:
        """On the TCP thread before it reads: replies can only be waited for elsewhere."""
        self.session.connection_made()
        self.get_logger().info(f'connected to {self.p.host}:{self.p.port} '
                               f'(connection {self.client.connects})')
        threading.Thread(target=self._connected_tasks, name='ibeo-lux-connect',
                         daemon=True).start()

    def _connected_tasks(self) -> None:
        log = self.get_logger()
        if self.filter_ranges:
            self._send_filter(self.filter_ranges)
        if self.p.start_measure_on_connect:
            reply, err = self._command(cmd.encode_start_measure(), cmd.START_MEASURE)
            if reply is None or not reply.success:
                log.warning(f'start measure: {err or "refused by the sensor"}')
        if self.p.layers == 0:
            self._probe_layers(log)

    def _probe_layers(self, log) -> None:
        """Ask DeviceType (and BeamTilt on an 8-layer unit): the session decides the layers."""
        s = self.session
        reply, err = self._command(cmd.encode_get_parameter(cmd.DEVICE_TYPE),
                                   cmd.GET_PARAMETER)
        eight = s.apply_device_type(reply)
        if eight is None:
            log.warning(f'could not read DeviceType (0x{cmd.DEVICE_TYPE:04X}): '
                        f'{err or "refused"}; assuming 4 layers (set the layers parameter)')
            return
        if eight:
            reply, _ = self._command(cmd.encode_get_parameter(cmd.BEAM_TILT), cmd.GET_PARAMETER)
            s.apply_beam_tilt(reply)
        log.info(f'device type 0x{s.device_type:02X} '
                 f'({cmd.DEVICE_TYPES.get(s.device_type, "unknown")}): '
                 f'{8 if eight else 4} layers' + (f', beam tilt {s.beam_tilt:.4f} rad'
                                                  if eight else ''))

    def _on_connect_failed(self, why: str) -> None:
        self.get_logger().warn(f'{self.DEVICE} not reachable: {why}; retrying (at least once a '
                               'second)', throttle_duration_sec=10.0)

    def _on_disconnect(self, reason: str) -> None:
        self.get_logger().warning(f'link to {self.p.host}:{self.p.port} lost: {reason}; '
                                  'reconnecting')
        self._reply_failed_all(f'link lost: {reason}')
        for ev in self.session.connection_lost():
            self._dispatch(ev, time.time_ns(), None)
        if self.p.publish_markers and self.markers.shown:
            self.markers_pub.publish(self.markers.clear(
                Header(stamp=ns_to_stamp(time.time_ns()), frame_id=self.p.frame_id)))

    def _reply_failed_all(self, text: str) -> None:
        pending = self._pending
        if pending is not None:
            pending.error = text
            pending.event.set()

    # --- commands ------------------------------------------------------------------------
    def _command(self, body: Optional[bytes], command_id: int, *, reply: bool = True,
                 message=None, name: str = '') -> tuple[Optional[cmd.LuxReply], str]:
        """Send one 0x2010 and wait for its 0x2020: (reply, '') or (None, why not).
        ``message``: a callable giving the complete message instead (it sets the session's
        awaited reply itself, as :meth:`LuxSession.send_set_filter`)."""
        timeout = float(self.p.command_timeout)
        name = name or cmd.COMMAND_NAMES.get(command_id, f'0x{command_id:04X}')
        if self.client is None:
            return None, (f'{name}: no sensor to command: playing the recording '
                          f'{self.p.file} (source:=file)')
        if not self._command_lock.acquire(timeout=timeout):
            return None, f'{name}: another command is still waiting for its reply'
        try:
            if not self.client.connected:
                return None, (f'{name}: not connected to {self.p.host}:{self.p.port}'
                              + (f' ({self.client.last_failure})' if self.client.last_failure
                                 else ''))
            pending = _Pending(command_id)
            self._pending = pending
            data = message() if message is not None else \
                self.session.send_command(command_id, body, expect_reply=reply)
            if not self.client.send(data):
                return None, f'{name}: send failed ({self.client.last_failure})'
            if not reply:
                return None, ''
            if not pending.event.wait(timeout):
                return None, f'{name}: no reply within {timeout:.1f} s'
            if pending.reply is None:
                return None, f'{name}: {pending.error}'
            return pending.reply, ''
        finally:
            self.session.command_done()
            self._pending = None
            self._command_lock.release()

    @staticmethod
    def _result(res, reply: Optional[cmd.LuxReply], err: str, what: str):
        """Fill success/message of a response; True when the sensor accepted the command."""
        if reply is None:
            res.success, res.message = False, err
        elif not reply.success:
            res.success = False
            res.message = f'sensor refused {what} (reply 0x{reply.reply_id:04X})'
        else:
            res.success, res.message = True, f'{what}: ok'
        return res.success

    def _srv_simple(self, command_id: int, res):
        name = cmd.COMMAND_NAMES[command_id]
        res.command_id = command_id
        body = cmd.encode_command(command_id)
        if command_id == cmd.RESET:                 # §7.1.1: no reply
            reply, err = self._command(body, command_id, reply=False)
            res.success = not err
            res.message = err or 'reset sent (the LUX does not reply to Reset; it restarts)'
            return res
        reply, err = self._command(body, command_id)
        res.reply_id = reply.reply_id if reply is not None else 0
        self._result(res, reply, err, name)
        return res

    def _send_filter(self, ranges: tuple) -> tuple[Optional[cmd.LuxReply], str]:
        """Send the ECU Set Filter, check and log its answer (spec §20)."""
        text = sf.format_ranges(ranges)
        flt = sf.SetFilter(tuple(ranges))
        reply, err = self._command(None, sf.SET_FILTER, name='set filter',
                                   message=lambda: self.session.send_set_filter(flt))
        self.filters_sent += 1
        log = self.get_logger()
        if reply is not None and reply.success:
            self.filter_state = f'accepted: {text}'
            log.info(f'set filter {text}: accepted by the device')
        else:
            why = err or f'set filter: refused by the device (reply 0x{reply.reply_id:04X})'
            self.filter_state = f'failed: {text}: {why}'
            log.warning(f'{why} (data types {text})')     # err starts with the command's name
        return reply, err

    def _on_set_parameters(self, params) -> SetParametersResult:
        """``data_types`` may change at run time: checked, kept, sent at once when connected."""
        for prm in params:
            if prm.name != 'data_types':
                continue
            try:
                if not isinstance(prm.value, str):
                    raise ValueError('data_types is a string, e.g. "0x2205, 0x2280"')
                ranges = sf.parse_ranges(prm.value)
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            self.filter_ranges = ranges
            if ranges and self.client.connected:
                threading.Thread(target=self._send_filter, args=(ranges,),
                                 name='ibeo-set-filter', daemon=True).start()
        return SetParametersResult(successful=True)

    def _srv_set_filter(self, req, res):
        try:
            starts, ends = list(req.range_starts), list(req.range_ends)
            if starts or ends:
                if len(starts) != len(ends):
                    raise ValueError(f'{len(starts)} range_starts but {len(ends)} range_ends')
                ranges = tuple(zip(starts, ends))
                bad = [f'0x{a:04X}..0x{b:04X}' for a, b in ranges if a > b]
                if bad:
                    raise ValueError('reversed range ' + ', '.join(bad))
            else:
                ranges = sf.parse_ranges(req.data_types) or sf.ALL_TYPES
        except ValueError as exc:
            res.success, res.message = False, str(exc)
            return res
        res.data_types = sf.format_ranges(ranges)
        reply, err = self._send_filter(ranges)
        res.reply_id = reply.reply_id if reply is not None else 0
        if self._result(res, reply, err, f'set filter {res.data_types}'):
            self.filter_ranges = ranges           # sent again after every reconnect
        return res

    def _srv_get_status(self, req, res):
        reply, err = self._command(cmd.encode_get_status(), cmd.GET_STATUS)
        if self._result(res, reply, err, 'get_status') and reply.status is not None:
            s = reply.status
            self.last_status = s
            res.firmware_version = s.firmware_version_str
            res.fpga_version = s.fpga_version_str
            res.firmware_version_raw = s.firmware_version
            res.fpga_version_raw = s.fpga_version
            res.scanner_status = s.scanner_status
            res.scanner_status_names = s.status_names
            res.temperature = float(s.temperature_c)
            res.temperature_raw = s.temperature_raw
            res.serial_number = s.serial_number
            res.fpga_date = s.fpga_date
            res.dsp_date = s.dsp_date
            res.message = (f'firmware {s.firmware_version_str}, FPGA {s.fpga_version_str}, '
                           f'{s.temperature_c:.1f} °C, serial {s.serial_number}')
        return res

    @staticmethod
    def _parameter(req) -> cmd.Parameter:
        return cmd.parameter(req.name.strip() if req.name.strip() else int(req.index))

    def _srv_get_parameter(self, req, res):
        try:
            p = self._parameter(req)
        except CodecError as exc:
            res.success, res.message = False, str(exc.detail)
            return res
        res.index, res.name, res.kind = p.index, p.name, p.kind
        res.unit = units.parameter_si_unit(p)
        reply, err = self._command(cmd.encode_get_parameter(p.index), cmd.GET_PARAMETER)
        if not self._result(res, reply, err, f'get_parameter {p.name} (0x{p.index:04X})'):
            return res
        value = reply.parameter
        if value is None or value.index != p.index:
            res.success = False
            res.message = (f'reply for parameter 0x{value.index:04X}, asked 0x{p.index:04X}'
                           if value is not None else 'reply without a parameter')
            return res
        res.raw = int(value.raw)
        res.value, res.value_text, res.unit = convert.parameter_reply_value(p, value.value)
        res.message = f'{p.name} = {res.value_text}{" " + res.unit if res.unit else ""}'
        return res

    def _srv_set_parameter(self, req, res):
        try:
            p = self._parameter(req)
            res.index, res.name = p.index, p.name
            raw = convert.parameter_request_raw(p, req.value, req.value_text, req.raw)
        except (CodecError, ValueError) as exc:
            res.success = False
            res.message = str(getattr(exc, 'detail', exc))
            return res
        res.raw = raw
        reply, err = self._command(cmd.encode_set_parameter(p.index, raw, raw=True),
                                   cmd.SET_PARAMETER)
        self._result(res, reply, err, f'set_parameter {p.name} (0x{p.index:04X}) = 0x{raw:X}')
        return res

    def _srv_set_ntp_time(self, req, res):
        ns = time.time_ns() if req.use_host_time else stamp_to_ns(req.time)
        seconds, fraction = unix_ns_to_ntp(ns)
        res.seconds, res.fraction = seconds & 0xFFFFFFFF, fraction
        reply, err = self._command(cmd.encode_set_ntp_time(res.seconds, fraction),
                                   cmd.SET_NTP_TIMESTAMP_SYNC)
        self._result(res, reply, err, 'set_ntp_time')
        return res

    # --- file playback (source:=file) ----------------------------------------------------
    def _start_player(self) -> None:
        p, log = self.p, self.get_logger()
        self.player = IdcPlayer(p.file, self._on_file_message, rate=p.rate, loop=p.loop,
                                start_offset=p.start_offset, paused=p.start_paused,
                                max_body=p.max_message_bytes,
                                on_jump=self._on_jump, on_end=self._on_end,
                                on_damage=self._on_damage, on_error=self._on_player_error,
                                name='ibeo-idc-playback')
        pl = self.player
        self.playback = pl.playback     # supervised like a TCP link (diagnostics watch it)
        log.info(f'playing {p.file}: {len(pl.entries)} messages, {pl.duration_s:.3f} s, from '
                 f'{pl.time_of(pl.start_index):.3f} s at ×{p.rate:g}'
                 + (' (looping)' if p.loop else '') + (' (paused)' if p.start_paused else '')
                 + (f'; {len(pl.damages)} damaged region(s), '
                    f'{sum(d.skipped for d in pl.damages)} bytes skipped' if pl.damages else '')
                 + (f'; layers {p.layers}' if p.layers else
                    '; layers 0: 4 layers assumed (no sensor to ask; set layers:=8 for an '
                    '8-layer recording)'))
        self.session.connection_made()
        pl.start()

    def _on_file_message(self, raw: bytes, entry) -> None:
        """One recorded message, on the playback thread: the bytes a TCP read would give."""
        now_ns = time.time_ns()
        for event in self.session.framer.feed(raw):
            self._on_event(event, now_ns)

    def _on_jump(self) -> None:
        """A seek or a loop: the stream is discontinuous, as after a reconnect."""
        for ev in self.session.connection_lost():
            self._dispatch(ev, time.time_ns(), None)
        self.session.connection_made()

    def _on_end(self, looping: bool) -> None:
        pl = self.player
        if looping:
            self.get_logger().info(f'end of {self.p.file}: looping (loop {pl.playback.loops})')
            return
        for ev in self.session.connection_lost():     # a waiting 8-layer half goes out alone
            self._dispatch(ev, time.time_ns(), None)
        self.get_logger().info(f'end of {self.p.file}: {pl.playback.handed} messages played; '
                               'finished (the node stays up: ~/seek or ~/resume plays again)')

    def _on_damage(self, damage) -> None:
        text = (f'{self.p.file}: {damage.skipped} damaged bytes skipped at byte '
                f'{damage.offset} ({damage.reason})')
        self.link.error('damaged_file', text)
        self.diagnostics.log_limited(self.link.name, 'damaged_file', text)

    def _on_player_error(self, entry, exc: BaseException) -> None:
        at = f' (message at byte {entry.offset})' if entry is not None else ''
        self.link.error('internal_error', repr(exc))
        self.diagnostics.log_limited(self.link.name, 'internal_error',
                                     f'{self.link.name}: playback failed{at}: {exc!r}', 'error')

    def _no_file(self, res):
        res.success = False
        res.message = ('not playing a file: playback services work with source:=file '
                       f'(this node reads the sensor at {self.p.host}:{self.p.port})')
        return res

    def _srv_pause(self, req, res):
        if self.player is None:
            return self._no_file(res)
        t = self.player.pause()
        res.success, res.message = True, f'paused before {t:.3f} s'
        return res

    def _srv_resume(self, req, res):
        if self.player is None:
            return self._no_file(res)
        t = self.player.resume()
        res.success, res.message = True, f'playing from {t:.3f} s'
        return res

    def _srv_seek(self, req, res):
        if self.player is None:
            return self._no_file(res)
        if not math.isfinite(req.time):
            res.success, res.message = False, f'time must be finite, not {req.time}'
            return res
        res.time = self.player.seek(req.time)
        res.success = True
        res.message = (f'at {res.time:.3f} s of {self.player.duration_s:.3f} s'
                       + (' (paused)' if self.player.state == 'paused' else ''))
        return res

    def _file_status(self) -> list[DiagnosticStatus]:
        pl, st = self.player, self.link.status()
        state = pl.state
        bad = st.message.startswith('bad input')
        if state != 'playing' and not bad:
            st.level = DiagnosticStatus.OK            # silence is what was asked for
        if state == 'finished':
            st.message = (f'finished: end of file ({pl.playback.handed} messages played)'
                          + (f'; {st.message}' if bad else ''))
        elif state == 'paused':
            st.message = f'paused before {pl.time_of(pl.position):.3f} s'
        ss = self.session
        with self._lock:
            counters = [('skipped_messages', str(sum(ss.skipped.values()))),
                        ('invalid_vehicle_states', str(self.invalid_vehicle_states)),
                        ('unpaired_mirror_sides', str(ss.unpaired_halves))]
        values = [
            ('source', 'file'), ('file', self.p.file), ('state', state),
            ('position', f'{pl.position}/{len(pl.entries)}'),
            ('time_s', f'{pl.time_of(pl.position):.3f}'),
            ('duration_s', f'{pl.duration_s:.3f}'), ('rate', f'{self.p.rate:g}'),
            ('loop', str(self.p.loop).lower()), ('loops', str(pl.playback.loops)),
            ('messages_played', str(pl.playback.handed)),
            ('damaged_regions', str(pl.damages_reported)),
            ('damaged_bytes', str(pl.bytes_skipped_reported)),
            ('damaged_regions_in_file', str(len(pl.damages))),
            ('chain_breaks_in_file', str(len(pl.chain_breaks))),
            ('garbage_bytes', str(ss.framer.garbage_bytes)),
            *counters,
            ('stamp_source', self.p.stamp_source),
            ('layers', str(8 if ss.eight_layer else 4)),
            ('point_builder', self.point_builder),
        ]
        values += [(f'skipped.{k}', str(v)) for k, v in sorted(ss.skipped.items())]
        st.values = list(st.values) + [KeyValue(key=k, value=v) for k, v in values]
        return [st]

    # --- diagnostics ---------------------------------------------------------------------
    def _link_status(self) -> list[DiagnosticStatus]:
        c = self.client
        if c is None:
            return self._file_status()
        st = self.link.status()
        if not c.connected:
            st.level = DiagnosticStatus.ERROR
            st.message = 'not connected' + (f': {c.last_failure}' if c.last_failure else '')
        ss = self.session
        skipped = sorted(ss.skipped.items())
        with self._lock:
            counters = [('skipped_messages', str(sum(n for _, n in skipped))),
                        ('invalid_vehicle_states', str(self.invalid_vehicle_states)),
                        ('unpaired_mirror_sides', str(ss.unpaired_halves)),
                        ('commands_sent', str(ss.commands_sent)),
                        ('unsolicited_replies', str(ss.unsolicited_replies)),
                        ('false_syncs', str(ss.framer.false_syncs))]
        eight = ss.eight_layer
        values = [
            ('connected', str(c.connected).lower()), ('connects', str(c.connects)),
            ('failures', str(c.failures)), ('last_failure', c.last_failure),
            ('bytes_received', str(c.bytes_received)),
            ('garbage_bytes', str(c.framer.garbage_bytes)),
            *counters,
            ('stamp_source', self.p.stamp_source),
            ('stamp_fallbacks', str(self.stamp_fallbacks)),
            ('time_offset_s', '' if ss.time_offset_s is None else f'{ss.time_offset_s:.6f}'),
            ('sensor_clock', {None: 'unknown', True: 'set',
                              False: 'unset (counts from power-up)'}[ss.sensor_clock_set]),
            ('layers', ('8' if eight else '4') + (' (configured)' if self.p.layers else
                                                  ' (from DeviceType)' if ss.device_type
                                                  is not None else ' (not detected yet)')),
            ('device_type', '' if ss.device_type is None else
             f'0x{ss.device_type:02X} {cmd.DEVICE_TYPES.get(ss.device_type, "")}'),
            ('beam_tilt_rad', f'{ss.beam_tilt:.5f}' if eight else ''),
            ('point_builder', self.point_builder),
            ('set_filter', self.filter_state),
            ('set_filters_sent', str(self.filters_sent)),
        ]
        if self.last_status is not None:
            s = self.last_status
            values += [('firmware', s.firmware_version_str), ('fpga', s.fpga_version_str),
                       ('temperature_c', f'{s.temperature_c:.1f}'), ('serial', s.serial_number)]
        values += [(f'skipped.{k}', str(v)) for k, v in skipped]
        with self._lock:
            values += [(f'without_ros_form.{k}', str(v))
                       for k, v in sorted(self.without_ros_form.items())]
        st.values = list(st.values) + [KeyValue(key=k, value=v) for k, v in values]
        return [st]

    def _sensor_status(self) -> list[DiagnosticStatus]:
        with self._lock:
            last = self.last_errors
            seen = {k: dict(v) for k, v in self.seen.items()}
        ew, age = (None, None) if last is None else (last[0], (time.time_ns() - last[1]) / 1e9)
        return convert.errors_statuses(ew, name_prefix=f'{self.get_name()}: ',
                                       hardware_id=self.hw, age_s=age,
                                       hold_s=self.p.errors_hold, seen=seen)

    def _device_statuses(self) -> list[DiagnosticStatus]:
        """The last ECU device status / system monitoring / trace of each name, with its
        age; one not repeated within 5 × stale_after is STALE."""
        now = time.time_ns()
        out = []
        with self._lock:
            items = list(self.device_status.values())
        for st, t in items:
            age = (now - t) / 1e9
            name = st.name[len('ibeo: '):] if st.name.startswith('ibeo: ') else st.name
            copy = DiagnosticStatus(level=st.level, name=f'{self.get_name()}: {name}',
                                    message=st.message, hardware_id=st.hardware_id,
                                    values=list(st.values) + [KeyValue(key='age_s',
                                                                       value=f'{age:.1f}')])
            if age > 5 * self.p.stale_after:
                copy.level, copy.message = DiagnosticStatus.STALE, f'stale ({age:.0f} s): ' \
                    + st.message
            out.append(copy)
        return out

    def close(self) -> None:
        if self.client is not None:
            self.client.stop()
        if self.player is not None:
            self.player.close()
        self._reply_failed_all('driver shutting down')


class _LiveIbeoToRos(ecu.IbeoToRos):
    """The converter of ``ibeo_idc to-bag`` with the node's relative topic names (the node's
    namespace applies, as to every other topic of the node)."""

    def topic(self, key: str) -> str:
        return ecu.TOPICS[key]


def _restamp(msg, stamp) -> None:
    """Put ``stamp`` on a message's header, a MarkerArray's markers or a TFMessage's
    transforms."""
    if hasattr(msg, 'header'):
        msg.header.stamp = stamp
    for inner in (getattr(msg, 'markers', None) or getattr(msg, 'transforms', None) or ()):
        inner.header.stamp = stamp


def main(argv=None) -> int:
    return run_node(IbeoLuxNode, argv)


if __name__ == '__main__':
    sys.exit(main())
