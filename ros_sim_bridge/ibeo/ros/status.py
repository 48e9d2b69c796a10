"""Diagnostics of the ibeo nodes (:mod:`.node`): the link (TCP or file playback) with its
counters, the sensor's error / warning registers (0x2030), the ECU device status / system
monitoring / trace messages by name.  The per data type streams are
:class:`~ros_sim_bridge.ros.diagnostics.StreamStats` the node keeps in ``stats``; the data
path's counters are :class:`~.dispatch.DataCounters`.
"""
from __future__ import annotations

import time

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from ros_sim_bridge.ibeo.codec import commands as cmd
from ros_sim_bridge.ibeo.ros import conversions as convert


class StatusReports:
    """The diagnostics sources of :class:`~.node.IbeoLuxNode` (:meth:`sources`): the link (TCP
    ``client`` or file ``player``) with the data path's ``counters`` and the commands' state
    (``commands``: the node's ``filter_state``, ``filters_sent``, ``last_status``), the sensor's
    errors and warnings, the ECU device statuses."""

    def __init__(self, p, *, name: str, hw: str, session, link, stats: dict, counters,
                 client, player, point_builder: str, commands):
        self.p = p
        self.name = name                         # the node's: prefix of the status names
        self.hw = hw
        self.session = session
        self.link = link
        self.stats = stats                       # data type → its StreamStats
        self.counters = counters                 # dispatch.DataCounters
        self.client = client                     # TcpClient, or None playing a file
        self.player = player                     # IdcPlayer, or None over TCP
        self.point_builder = point_builder
        self.commands = commands

    def sources(self) -> tuple:
        """What :class:`~ros_sim_bridge.ros.diagnostics.Diagnostics` polls, in order."""
        return self._link_status, self._sensor_status, self._device_statuses

    def _link_stream_status(self) -> DiagnosticStatus:
        """The link's StreamStats status, its ``published`` the messages published in all
        (the per data type streams count them; the link itself publishes nothing)."""
        st = self.link.status()
        total = str(sum(s.published for s in tuple(self.stats.values())))
        for kv in st.values:
            if kv.key == 'published':
                kv.value = total
        return st

    def _file_status(self) -> list[DiagnosticStatus]:
        pl, st = self.player, self._link_stream_status()
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
        counters = self._data_counters(sum(ss.skipped.values()))
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

    def _data_counters(self, skipped: int) -> list[tuple[str, str]]:
        """The link's counters of the data received, TCP or file."""
        ss = self.session
        with self.counters.lock:
            return [('skipped_messages', str(skipped)),
                    ('false_syncs', str(ss.framer.false_syncs)),
                    ('invalid_vehicle_states', str(self.counters.invalid_vehicle_states)),
                    ('unpaired_mirror_sides', str(ss.unpaired_halves)),
                    ('invalid_header_times', str(ss.invalid_times)),
                    ('last_invalid_header_time', ss.last_invalid_time),
                    ('invalid_record_times', str(self.counters.invalid_record_times)),
                    ('last_invalid_record_time', self.counters.last_invalid_record_time)]

    # --- diagnostics ---------------------------------------------------------------------
    def _link_status(self) -> list[DiagnosticStatus]:
        c = self.client
        if c is None:
            return self._file_status()
        st = self._link_stream_status()
        if not c.connected:
            st.level = DiagnosticStatus.ERROR
            st.message = 'not connected' + (f': {c.last_failure}' if c.last_failure else '')
        elif c.silent:          # reconnected after a data timeout, and still nothing came
            st.level = DiagnosticStatus.ERROR
            st.message = f'silent: {c.last_failure}; link rebuilt, no data since'
        ss = self.session
        skipped = sorted(ss.skipped.items())
        counters = self._data_counters(sum(n for _, n in skipped)) + [
            ('commands_sent', str(ss.commands_sent)),
            ('unsolicited_replies', str(ss.unsolicited_replies)),
            ('awaiting', ss.framer.awaiting)]
        eight = ss.eight_layer
        values = [
            ('connected', str(c.connected).lower()), ('connects', str(c.connects)),
            ('failures', str(c.failures)), ('last_failure', c.last_failure),
            ('data_timeout_s', f'{c.data_timeout:g}'), ('data_timeouts', str(c.data_timeouts)),
            ('bytes_received', str(c.bytes_received)),
            ('garbage_bytes', str(c.framer.garbage_bytes)),
            *counters,
            ('stamp_source', self.p.stamp_source),
            ('stamp_fallbacks', str(self.counters.stamp_fallbacks)),
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
            ('set_filter', self.commands.filter_state),
            ('set_filters_sent', str(self.commands.filters_sent)),
        ]
        if self.commands.last_status is not None:
            s = self.commands.last_status
            values += [('firmware', s.firmware_version_str), ('fpga', s.fpga_version_str),
                       ('temperature_c', f'{s.temperature_c:.1f}'), ('serial', s.serial_number)]
        values += [(f'skipped.{k}', str(v)) for k, v in skipped]
        with self.counters.lock:
            values += [(f'without_ros_form.{k}', str(v))
                       for k, v in sorted(self.counters.without_ros_form.items())]
        st.values = list(st.values) + [KeyValue(key=k, value=v) for k, v in values]
        return [st]

    def _sensor_status(self) -> list[DiagnosticStatus]:
        with self.counters.lock:
            last = self.counters.last_errors
            seen = {k: dict(v) for k, v in self.counters.seen.items()}
        ew, age = (None, None) if last is None else (last[0], (time.time_ns() - last[1]) / 1e9)
        return convert.errors_statuses(ew, name_prefix=f'{self.name}: ',
                                       hardware_id=self.hw, age_s=age,
                                       hold_s=self.p.errors_hold, seen=seen)

    def _device_statuses(self) -> list[DiagnosticStatus]:
        """The last ECU device status / system monitoring / trace of each name, with its
        age; WARN while the link to the ECU is down (what it says is the last word before),
        STALE once not repeated within 5 × stale_after."""
        now = time.time_ns()
        down = self.client is not None and not self.client.connected
        out = []
        with self.counters.lock:
            items = list(self.counters.device_status.values())
        for st, t in items:
            age = (now - t) / 1e9
            name = st.name[len('ibeo: '):] if st.name.startswith('ibeo: ') else st.name
            copy = DiagnosticStatus(level=st.level, name=f'{self.name}: {name}',
                                    message=st.message, hardware_id=st.hardware_id,
                                    values=list(st.values) + [KeyValue(key='age_s',
                                                                       value=f'{age:.1f}')])
            if age > 5 * self.p.stale_after:
                copy.level, copy.message = DiagnosticStatus.STALE, f'stale ({age:.0f} s): ' \
                    + st.message
            elif down:
                copy.level = max(copy.level, DiagnosticStatus.WARN)
                copy.message = f'link down, last heard {age:.0f} s ago: {st.message}'
            out.append(copy)
        return out
