"""Data type → conversion → publisher for the ibeo nodes (:mod:`.node`): the events of one
TCP read or one played message go through the session; each decoded record goes to its
handler (LUX 0x2202 / 0x2221 / 0x2805 / 0x2030 through :mod:`.conversions`, every ECU / FUSION
type through :class:`~.ecu_conversions.IbeoToRos`, the converter of ``ibeo_idc to-bag``),
stamped by ``stamp_source`` (a record's own time judged beside its header time, as ``to-bag``
judges it: :mod:`~ros_sim_bridge.ibeo.record_times`; a receive time is the stamp slot of the
same conversion, filled here), published as CDR bytes (:mod:`.lux_cdr`, :mod:`.ecu_cdr`), counted
in its diagnostics stream.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from geometry_msgs.msg import TransformStamped
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.framer import Rejected
from ros_sim_bridge.core.memory import reuse_freed_memory
from ros_sim_bridge.core.ntp import CheckedTime
from ros_sim_bridge.ibeo.codec import (meta_information, objects_ecu, registry, scan_ecu,
                                       system_monitoring)
from ros_sim_bridge.ibeo.record_times import checked_record_time
from ros_sim_bridge.ibeo.codec import errors_warnings as lux_errors
from ros_sim_bridge.ibeo.codec import objects as lux_objects
from ros_sim_bridge.ibeo.codec import vehicle_state as lux_vehicle
from ros_sim_bridge.ibeo.session import (BadMessage, InvalidTime, LuxSession, Message, Scan,
                                         Skipped, UnpairedHalf, handled)
from ros_sim_bridge.ibeo.ros import conversions as convert
from ros_sim_bridge.ibeo.ros import ecu_conversions as ecu
from ros_sim_bridge.ibeo.ros import lux_cdr
from ros_sim_bridge.ros.diagnostics import Diagnostics, StreamStats
from ros_sim_bridge.ros.pointcloud import host_order
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage, CloudCdr, pointcloud2_cdr
from ros_sim_bridge.ros.qos import DATA, LATCHED
from ros_sim_bridge.ros.stamps import ns_to_sec_nanosec, ns_to_stamp

#: data types sent on events or on request only (replies, 0x2030 while errors or warnings
#: last, ECU traces, meta information): their silence is no fault
EVENT_TYPES = frozenset((registry.REPLY, registry.ERRORS_WARNINGS,
                         meta_information.META_INFORMATION_7110, *system_monitoring.TRACE_TYPES))
#: the ECU object fields beside the box centre that a NaN or ±Inf in is counted
#: (``objects_with_non_finite_values``), those of the list's type
_OBJECT_VALUE_FIELDS = ('box_size_x', 'box_size_y', 'course_angle', 'absolute_velocity_x',
                        'absolute_velocity_y', 'relative_velocity_x', 'relative_velocity_y')


@functools.lru_cache(maxsize=None)
def _object_number_fields(dtype: np.dtype) -> tuple:
    """The fields of an ECU object dtype that its box centre (:meth:`~.objects_ecu.
    EcuObjectList.box_centers`) and :data:`_OBJECT_VALUE_FIELDS` are made of: all finite,
    nothing to count."""
    return tuple(f for f in ('box_center_x', 'box_center_y', 'reference_point_x',
                             'reference_point_y', 'center_of_gravity_x', 'center_of_gravity_y',
                             *_OBJECT_VALUE_FIELDS) if f in dtype.names)


class DataDispatch:
    """Data type → conversion → publisher: :meth:`on_event` for every framer event (a TCP
    read's or a played message's), :meth:`dispatch` for every session event.  Builds the
    converters; publishes on ``pubs``; counts in ``counters`` and the per data type streams
    ``stats`` (shared with the diagnostics and the commands)."""

    def __init__(self, p, *, session: LuxSession, diagnostics: Diagnostics, link: StreamStats,
                 stats: dict, counters: 'DataCounters', pubs: 'Publishers', hw: str,
                 handlers: dict, context_ok: Callable[[], bool]):
        self.p = p
        self.session = session
        self.diagnostics = diagnostics
        self.link = link                         # the link's stream (TCP or file)
        self.stats = stats                       # data type → its StreamStats
        self.counters = counters
        self.pubs = pubs
        self.hw = hw                             # hardware id of the streams
        self.context_ok = context_ok             # False once shutting down (Ctrl-C)
        self.builder = convert.CloudBuilder(
            p.layer_elevations_deg, first_echo_only=p.first_echo_only,
            drop_flags=convert.drop_mask(ground=p.drop_ground, dirt=p.drop_dirt,
                                         clutter=p.drop_clutter, transparent=p.drop_transparent))
        self.point_builder = ('compiled kernel' if self.builder.native else
                              'numpy (compiled kernel not installed)')
        # each scan's message is a new buffer of up to 1.7 MB: pages of the freed ones reused
        # (not mapped afresh: a page fault per 4 kB, more than the points cost to build)
        reuse_freed_memory()
        self.cloud_cdr = CloudCdr(convert.CLOUD_DTYPE, p.frame_id)
        self.markers = lux_cdr.LuxMarkers(lifetime_s=p.marker_lifetime)
        self.object_caps = convert.ObjectCaps(p.max_objects, p.max_contour_points)
        self.ecu = self.ecu_converter()
        if host_order(scan_ecu.POINT_DTYPE):     # ECU scans in vehicle coordinates: their
            # points decoded into the message that publishes them (no copy afterwards)
            self.ecu.cloud_cdr = CloudCdr(scan_ecu.POINT_DTYPE, p.vehicle_frame_id)
            session.decode_points_into(self.ecu.cloud_cdr.points)
        self._half = None                        # (cloud, stamp) of the waiting 8-layer half
        self.static_transforms: dict = {}        # child frame → TransformStamped (ECU mounts)
        # session events → handlers (``handlers``: the command replies'); decoded records by
        # their codec record type
        self._handlers = {Scan: self._on_scan, UnpairedHalf: self._on_unpaired_half,
                          BadMessage: self._on_bad_message, InvalidTime: self._on_invalid_time,
                          Skipped: lambda ev, now_ns: None, **handlers}
        self._record_handlers = {lux_objects.LuxObjectList: self._on_objects,
                                 lux_vehicle.LuxVehicleState: self._on_vehicle_state,
                                 lux_errors.LuxErrorsWarnings: self._on_errors}

    def ecu_converter(self) -> '_LiveIbeoToRos':
        """A converter of the ECU / FUSION types with the node's frames."""
        p = self.p
        return _LiveIbeoToRos(vehicle_frame=p.vehicle_frame_id, scanner_frame=p.scanner_frame_id,
                              odom_frame=p.odom_frame_id, gps_frame=p.gps_frame_id,
                              imu_frame=p.imu_frame_id, camera_frame=p.camera_frame_id,
                              lux_frame=p.frame_id, max_jump_s=p.max_time_jump)

    def publish_mount(self, parent: str, child: str, stamp_ns: int) -> None:
        """``parent`` → ``child`` (identity) on /tf_static, latched with the ECU mounts."""
        mount = TransformStamped()
        mount.header = Header(stamp=ns_to_stamp(stamp_ns), frame_id=parent)
        mount.child_frame_id = child
        mount.transform.rotation.w = 1.0
        self.static_transforms[mount.child_frame_id] = mount
        topic = ecu.TOPICS['tf_static']
        pub = self.pubs.ecu.get(topic) or self.pubs.ecu_publisher(topic, TFMessage)
        pub.publish(TFMessage(transforms=list(self.static_transforms.values())))

    def clear_markers(self, stamp_ns: int) -> None:
        """The link is down: the object markers shown are deleted."""
        if self.p.publish_markers and self.markers.shown:
            stamp = ns_to_stamp(stamp_ns)
            self.pubs.markers.publish(self.markers.clear((stamp.sec, stamp.nanosec),
                                                         self.p.frame_id).data)

    # --- transport → session -------------------------------------------------------------
    def on_event(self, event, now_ns: int, checked: Optional[CheckedTime] = None) -> None:
        """One framer event (``checked``: a played message's verdict, :meth:`LuxSession.
        handle`)."""
        if isinstance(event, CodecError):          # framing: garbage, false sync, oversized
            self.diagnostics.bad_input(self.link, event, now_ns)
            return
        frame = event.frame if isinstance(event, Rejected) else event
        size = len(frame.header) + len(frame.body)
        self.link.packet(size, now_ns)
        stats = self._stats_for(frame.parsed.data_type)
        if stats is not None:
            stats.packet(size, now_ns)
        for ev in self.session.handle(event, now_ns, checked):
            self.dispatch(ev, now_ns, stats)

    def _stats_for(self, data_type: int) -> Optional[StreamStats]:
        """The stream of a decoded data type (an ECU type's on first sight), None for the
        types skipped by size (counted on the link)."""
        stats = self.stats.get(data_type)
        if stats is None and handled(data_type):
            stats = self.stats[data_type] = self.type_stream(data_type,
                                                              registry.type_name(data_type))
        return stats

    def type_stream(self, data_type: int, label: str, expected: bool = False) -> StreamStats:
        """The diagnostics stream of a data type: WARN while ``expected`` and silent; over TCP
        also once its data stopped coming, unless the type comes on events only
        (:data:`EVENT_TYPES`)."""
        return self.diagnostics.stream(
            f'{label} (0x{data_type:04X})', self.hw, stale_after=self.p.stale_after,
            expected=expected,
            periodic=self.p.source == 'tcp' and data_type not in EVENT_TYPES)

    def dispatch(self, ev, now_ns: int, stats: Optional[StreamStats]) -> None:
        try:
            if isinstance(ev, Message):
                self._record_handlers.get(type(ev.record), self._on_ecu)(ev, now_ns, stats)
            else:
                self._handlers[type(ev)](ev, now_ns)
        except Exception as exc:  # never let one message end the receive thread
            if not self.context_ok():   # shutting down (Ctrl-C): publishers are gone
                return
            where = stats if stats is not None else self.link
            where.error('internal_error', repr(exc), now_ns)
            self.diagnostics.log_limited(where.name, 'internal_error',
                                         f'{where.name}: failed to handle a message: {exc!r}',
                                         'error')

    def _stamp(self, ntp: int, now_ns: int, ev, checked: bool = False) -> tuple:
        """The stamp (sec, nanosec) of event ``ev`` whose sensor time is ``ntp``
        (:meth:`LuxSession.stamp_ns`); ``checked``: ``ntp`` was judged beside the checked
        header time (a recording's replacement of an invalid one too) and is used as it is."""
        ns, fell_back = self.session.stamp_ns(ntp, now_ns, self.p.stamp_source,
                                              checked or ev.time_valid, ev.neighbour_ntp)
        if fell_back:
            self._count_fallback()
        return ns_to_sec_nanosec(ns, source='ibeo', field='stamp')

    def _count_fallback(self) -> None:
        self.counters.stamp_fallbacks += 1
        self.diagnostics.log_limited('stamp', 'unset_clock', 'stamp_source is sensor but the '
                                     'sensor clock is unset: using the receive time')

    def _record_stamp(self, record, now_ns: int, ev):
        """The stamp of a LUX record with a time of its own (scan, object list, vehicle state):
        that time when valid beside its message's checked header time, else the header time,
        and the record time counted (as :meth:`_on_ecu` counts an ECU record's)."""
        header_ntp = _checked_header_ntp(ev)
        if header_ntp is None:                     # live, an invalid header time: not judged
            return self._stamp(ev.header.ntp, now_ns, ev)
        own = checked_record_time(record, header_ntp, self.p.max_time_jump)
        if own.why is not None:
            self.count_invalid_record_time(ev.header, own.why)
        return self._stamp(own.ntp, now_ns, ev, checked=True)

    # --- session events → conversions → publishers ---------------------------------------
    def _on_invalid_time(self, ev: InvalidTime, now_ns: int) -> None:
        """A data message with an invalid header time follows: counted by the session (link
        status), logged here; the message is published, stamped with its receive time (a
        recording's with stamp_source sensor: its record time when valid beside a valid
        neighbour's time, else that time)."""
        h = ev.header
        stamp = ("its record time or a valid neighbour's time" if ev.neighbour_ntp is not None
                 and self.p.stamp_source == 'sensor' else 'its receive time')
        self.diagnostics.log_limited(
            'stamp', 'invalid_time', f'0x{h.data_type:04X} {registry.type_name(h.data_type)} '
            f'from device {h.device_id}: invalid header time 0x{h.ntp:016X} ({ev.why}): '
            f'published with {stamp} as stamp')

    def _on_bad_message(self, ev: BadMessage, now_ns: int) -> None:
        self.diagnostics.bad_input(self._stats_for(ev.header.data_type), ev.error, now_ns)

    def _on_scan(self, ev: Scan, now_ns: int) -> None:
        scan, wire = ev.scan, ev.wire
        stamp = self._record_stamp(scan, now_ns, ev)
        if ev.pairing == 'single':               # the points built inside the message's bytes
            # the scan info first, the points last: the small work before the big one
            kept = self.builder.select(wire)
            info = self._scan_info(ev, stamp, len(kept))
            cloud = self.builder.build_wire(scan, kept, eight_layer=ev.eight_layer,
                                            beam_tilt=ev.beam_tilt, alloc=self.cloud_cdr.points,
                                            selected=True)
            cdr = self.cloud_cdr.message(cloud, stamp, is_dense=not self.builder.nan_points)
            del cloud
            self.pubs.points.publish(cdr)
            self.pubs.scan_info.publish(info)
            self.stats[registry.SCAN].publish(2)
            return
        else:
            cloud = self.builder.build_wire(scan, wire, eight_layer=True, beam_tilt=ev.beam_tilt)
            n = len(cloud)
            published = 1
            if ev.pairing == 'second' and self._half is not None:
                (first, first_stamp), self._half = self._half, None
                both = convert.concatenate(first, cloud)
                self._publish_cloud(both, first_stamp)
                published += 1
            else:
                self._half = (cloud, stamp)
        self.pubs.scan_info.publish(self._scan_info(ev, stamp, n))
        self.stats[registry.SCAN].publish(published)

    def _scan_info(self, ev: Scan, stamp, published_points: int) -> bytes:
        """The LuxScanInfo of a scan event, ``published_points`` of its points in its cloud."""
        return lux_cdr.scan_info(
            ev.scan, stamp, self.p.frame_id, device_id=ev.header.device_id,
            scan_points=len(ev.wire), published_points=published_points,
            eight_layer=ev.eight_layer, beam_tilt=ev.beam_tilt,
            sensor_time_offset=self.session.time_offset_s or 0.0).data

    def _publish_cloud(self, cloud, stamp) -> None:
        self.pubs.points.publish(pointcloud2_cdr(
            cloud, self.p.frame_id, stamp[0] * 1_000_000_000 + stamp[1],
            is_dense=convert.is_dense(cloud)).data)

    def _on_unpaired_half(self, ev: UnpairedHalf, now_ns: int) -> None:
        """The waiting half gets no partner: publish it alone."""
        half, self._half = self._half, None
        if half is not None:
            self._publish_cloud(*half)
            self.stats[registry.SCAN].publish(1)

    def _on_objects(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        lst, frame = ev.record, self.p.frame_id
        stamp = self._record_stamp(lst, now_ns, ev)
        lst = convert.cap_objects(lst, self.object_caps)
        if lst.truncated:
            self._count_truncation(lst, stats)
        if self.p.publish_markers:      # the list and its markers made in one buffer
            objects, markers = lux_cdr.object_list_and_markers(
                lst, stamp, frame, self.markers, device_id=ev.header.device_id)
            self.pubs.objects.publish(objects.data)
            self.pubs.markers.publish(markers.data)
            stats.publish(2)
        else:
            self.pubs.objects.publish(lux_cdr.object_list(
                lst, stamp, frame, device_id=ev.header.device_id).data)
            stats.publish(1)

    def _count_truncation(self, lst, stats: StreamStats) -> None:
        """An object list cut to the caps: counted on its type's stream (each ECU list type
        has its own) and logged."""
        for key, n in (('truncated_lists', 1), ('dropped_objects', lst.dropped_objects),
                       ('dropped_contour_points', lst.dropped_points)):
            stats.count(key, n)
        self.diagnostics.log_limited(
            'objects', 'truncated', f'object list over the caps: {lst.dropped_objects} objects '
            f'beyond max_objects={self.object_caps.max_objects} and {lst.dropped_points} contour '
            f'points beyond max_contour_points={self.object_caps.max_contour_points} dropped')

    def _on_vehicle_state(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        vs, frame = ev.record, self.p.vehicle_frame_id
        stamp = self._record_stamp(vs, now_ns, ev)
        self.pubs.vehicle.publish(lux_cdr.vehicle_state(vs, stamp, frame,
                                                       device_id=ev.header.device_id).data)
        if vs.valid:
            self.pubs.twist.publish(lux_cdr.vehicle_twist(vs, stamp, frame).data)
            stats.publish(2)
        else:
            with self.counters.lock:
                self.counters.invalid_vehicle_states += 1
            stats.count('invalid')
            stats.extra['last_invalid_flags'] = ', '.join(vs.error_names)
            self.diagnostics.log_limited('vehicle', 'invalid', 'invalid vehicle state (error '
                                         f'flags {", ".join(vs.error_names)}): not used for '
                                         'vehicle_state/twist')
            stats.publish(1)

    def _on_errors(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        ew = ev.record
        with self.counters.lock:
            self.counters.last_errors = (ew, now_ns)
            for n in ew.error_names:
                self.counters.seen['errors'][n] += 1
            for n in ew.warning_names:
                self.counters.seen['warnings'][n] += 1
        if ew.has_error:
            self.diagnostics.log_limited('sensor', 'error', 'sensor errors: '
                                         + ', '.join(ew.error_names), 'error')
        stats.publish()

    # --- ECU / FUSION records: the converter of ibeo_idc to-bag ----------------------------
    def _on_ecu(self, ev: Message, now_ns: int, stats: StreamStats) -> None:
        header, checked = ev.header, _checked_header_ntp(ev)
        if checked is not None and checked != header.ntp:
            header = dataclasses.replace(header, ntp=checked)
        record = ev.record
        if isinstance(record, objects_ecu.EcuObjectList):     # the LUX caps, on ECU lists too
            capped = ecu.cap_object_list(record, self.object_caps.max_objects,
                                         self.object_caps.max_contour_points)
            if capped.dropped_objects or capped.dropped_points:
                self._count_truncation(capped, stats)
            record = capped.record
        try:
            stamp, fell_back = self._ecu_restamp(ev, now_ns)
            pairs, error = self.ecu.convert(header, record, stamp), None
        except CodecError as exc:      # a time no ROS stamp holds (StampError): as to-bag does
            pairs, error, fell_back = [], exc, False
        if self.ecu.invalid_time is not None and checked is not None:   # judged before that
            self.count_invalid_record_time(ev.header, self.ecu.invalid_time)
        if error is not None:
            self.diagnostics.bad_input(stats, error, now_ns)
            return
        if isinstance(ev.record, scan_ecu.EcuScan) and ev.record.non_finite:
            self._count_non_finite_points(ev, stats)
        for exc in self.ecu.refused:   # a transform, odometry, IMU or twist of NaN / ±Inf
            self.diagnostics.bad_input(stats, exc, now_ns)
        if not pairs and not self.ecu.refused:  # frame end, measurement list, index, ...
            key = f'0x{ev.header.data_type:04X} {registry.type_name(ev.header.data_type)}'
            with self.counters.lock:
                self.counters.without_ros_form[key] += 1
            stats.count('without_ros_form')
            return
        if fell_back:
            self._count_fallback()
        published = 0
        for topic, msg in pairs:
            if topic == ecu.TOPICS['diagnostics']:
                with self.counters.lock:
                    for st in msg.status:
                        self.counters.device_status[st.name] = (st, now_ns)
                continue
            if topic == ecu.TOPICS['tf_static']:
                for t in msg.transforms:          # latched: every mount seen so far, in one
                    self.static_transforms[t.child_frame_id] = t
                msg = TFMessage(transforms=list(self.static_transforms.values()))
            elif topic == ecu.TOPICS['markers'] and not self.p.publish_markers:
                continue
            elif topic == ecu.TOPICS['objects']:
                self._count_unusual_objects(record, stats)
            pub = self.pubs.ecu.get(topic)
            if pub is None:                       # not made at start (see node.ECU_TOPIC_TYPES)
                pub = self.pubs.ecu_publisher(topic, ecu.message_type(msg))
            pub.publish(msg.data if isinstance(msg, CdrMessage) else msg)
            published += 1
        stats.publish(published)

    def count_invalid_record_time(self, header, why: str) -> None:
        """A record's own time was invalid beside its message's checked header time, which
        stamped its messages instead (with stamp_source sensor; receive: the receive time did
        anyway): counted on the link and logged."""
        what = (f'0x{header.data_type:04X} {registry.type_name(header.data_type)} from device '
                f'{header.device_id}')
        with self.counters.lock:
            self.counters.invalid_record_times += 1
            self.counters.last_invalid_record_time = f'{what}: {why}'
        stamp = ('its header time used instead' if self.p.stamp_source == 'sensor'
                 else 'stamped with the receive time (stamp_source receive)')
        self.diagnostics.log_limited('stamp', 'invalid_record_time',
                                     f'{what}: invalid record time ({why}): {stamp}')

    def _count_on_stream(self, stats: StreamStats, key: str, n: int, text: str) -> None:
        """``n`` more of ``key`` on the stream ``stats`` (its /diagnostics status shows that
        stream's total) and a rate-limited warning ``text``."""
        stats.count(key, n)
        self.diagnostics.log_limited(stats.name, key, text)

    def _count_non_finite_points(self, ev: Message, stats: StreamStats) -> None:
        """ECU scan points with a NaN or infinite x, y or z (the decoder's count): published,
        the cloud not dense; counted and logged."""
        n = ev.record.non_finite
        self._count_on_stream(stats, 'non_finite_points', n,
                              f'0x{ev.header.data_type:04X} scan with {n} point(s) whose x, y '
                              'or z is NaN or infinite: published as sent, the cloud not dense')

    def _count_unusual_objects(self, lst, stats: StreamStats) -> None:
        """ECU objects without a finite box centre: published in the list as sent, drawn
        without box and label (their contour only); those with one but a NaN or infinite box
        size, course angle or velocity: published as sent, the box drawn 5 cm wide / unturned
        where not given; each counted and logged."""
        o = lst.objects
        if not len(o):
            return
        fields = _object_number_fields(o.dtype)
        total = o[fields[0]].astype(np.float64)
        for name in fields[1:]:
            total += o[name]         # float32s: their sum in float64 is finite if each is
        if np.isfinite(total).all():
            return
        placed = np.isfinite(lst.box_centers()).all(axis=1)
        n = len(o) - int(placed.sum())
        if n:
            self._count_on_stream(stats, 'objects_without_centre', n,
                                  f'{n} ECU object(s) without a finite box centre: in the '
                                  'object list as sent, no box or label marker')
        finite = np.isfinite(np.stack([o[f] for f in _OBJECT_VALUE_FIELDS
                                       if f in o.dtype.names], 1)).all(axis=1)
        k = int((placed & ~finite).sum())
        if k:
            self._count_on_stream(stats, 'objects_with_non_finite_values', k,
                                  f'{k} ECU object(s) with a NaN or infinite box size, course '
                                  'angle or velocity: in the object list as sent, the box '
                                  'marker 5 cm / unturned where not given')

    def _ecu_restamp(self, ev: Message, now_ns: int) -> tuple:
        """(None, False): the converter's stamps (the messages' NTP times judged beside the
        checked header time, a recording's replacement of an invalid one too, as in
        ``to-bag``); else (the stamp slot of every message: :meth:`_stamp` of the header time,
        the receive time; whether that fell back from an unset sensor clock, counted once
        something is published)."""
        checked = _checked_header_ntp(ev)
        if self.p.stamp_source == 'sensor' and checked is not None \
                and self.session.clock_is_set(checked):
            return None, False
        ns, fell_back = self.session.stamp_ns(ev.header.ntp, now_ns, self.p.stamp_source,
                                              ev.time_valid, ev.neighbour_ntp)
        return ns_to_sec_nanosec(ns, source='ibeo', field='stamp'), fell_back




class Publishers:
    """The node's topics, relative to ``topic_prefix`` (absolute names such as /tf_static as
    they are): the LUX ones (:meth:`~.node.IbeoLuxNode._make_publishers` fills them) and the
    ECU outputs by topic, made at start or on first use (:meth:`ecu_publisher`)."""

    def __init__(self, node, topic_prefix: str):
        self._node = node
        self.prefix = topic_prefix.strip('/')
        self.points = self.scan_info = self.objects = self.markers = None
        self.vehicle = self.twist = None
        self.ecu: dict = {}                  # ECU output topic → publisher

    def topic(self, name: str) -> str:
        """``topic_prefix/name`` for a relative ``name`` (``name`` alone with no prefix)."""
        return f'{self.prefix}/{name}' if self.prefix and not name.startswith('/') else name

    def make(self, msg_type, name: str, qos=DATA):
        """A publisher of topic ``name`` under ``topic_prefix``."""
        return self._node.create_publisher(msg_type, self.topic(name), qos)

    def ecu_publisher(self, topic: str, msg_type):
        """The publisher of an ECU output topic (relative: under ``topic_prefix``), made now
        (/tf_static latched)."""
        qos = LATCHED if topic == ecu.TOPICS['tf_static'] else DATA
        pub = self.ecu[topic] = self.make(msg_type, topic, qos)
        return pub


@dataclass
class DataCounters:
    """What the data path counts beyond the streams' own counters, read by the diagnostics
    (:class:`~.status.StatusReports`); under ``lock``."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stamp_fallbacks: int = 0
    invalid_vehicle_states: int = 0
    invalid_record_times: int = 0            # records' own times not used (why: last)
    last_invalid_record_time: str = ''
    without_ros_form: collections.Counter = field(default_factory=collections.Counter)
    seen: dict = field(default_factory=lambda: {'errors': collections.Counter(),
                                                'warnings': collections.Counter()})
    last_errors: Optional[tuple] = None      # (LuxErrorsWarnings, receive ns)
    device_status: dict = field(default_factory=dict)     # name → (DiagnosticStatus, ns)


class _LiveIbeoToRos(ecu.IbeoToRos):
    """The converter of ``ibeo_idc to-bag`` with relative topic names: the node puts them
    under its ``topic_prefix`` and namespace, as every other topic of the node."""

    def topic(self, key: str) -> str:
        return ecu.TOPICS[key]


def _checked_header_ntp(ev) -> Optional[int]:
    """The header time a record's own time is judged by: the header's when valid, a
    recording's replacement of an invalid one (as ``to-bag`` has it); None live for an invalid
    one (the message is stamped with its receive time, its record time not judged)."""
    return ev.header.ntp if ev.time_valid else ev.neighbour_ntp
