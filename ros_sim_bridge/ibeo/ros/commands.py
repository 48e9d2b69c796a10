"""Sensor commands of the ibeo nodes (:mod:`.node`, spec §7 and the ECU Set Filter §20):
one 0x2010 outstanding at a time, sent from a service callback (or the connect thread) and
paired with its 0x2020, which the TCP thread hands over; the command services; what is sent
after every (re)connect (Set Filter, Start Measure, the layer probe).
"""
from __future__ import annotations

import threading
import time
from typing import Optional

from rcl_interfaces.msg import SetParametersResult

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.ntp import unix_ns_to_ntp
from ros_sim_bridge.core.request_reply import Busy, RequestReply
from ros_sim_bridge.core.tcp import TcpClient
from ros_sim_bridge.ibeo.codec import commands as cmd
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import set_filter as sf
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.session import LuxSession, Reply, ReplyFailed, answered_value
from ros_sim_bridge.ibeo.ros import conversions as convert
from ros_sim_bridge.ros.diagnostics import log
from ros_sim_bridge.ros.stamps import stamp_to_ns

#: Command services with no request data: service name → command id
SIMPLE_COMMANDS = {'reset': cmd.RESET, 'save_config': cmd.SAVE_CONFIG,
                   'reset_defaults': cmd.RESET_DEFAULTS, 'start_measure': cmd.START_MEASURE,
                   'stop_measure': cmd.STOP_MEASURE}
#: whether the sensor streams after a command done: Stop Measure silences it on purpose (the
#: data timeout waits), Start Measure and Reset (it restarts measuring) end that
MEASURING_AFTER = {cmd.START_MEASURE: True, cmd.RESET: True, cmd.STOP_MEASURE: False}


class CommandServices:
    """The sensor commands of :class:`~.node.IbeoLuxNode` and their services (the node's
    service table calls the ``srv_*`` methods): one 0x2010 outstanding at a time
    (``replies``, a one-at-a-time :class:`~ros_sim_bridge.core.request_reply.RequestReply`
    keyed by command id), paired with the 0x2020 the TCP thread hands over (:meth:`on_reply`);
    what is sent after every (re)connect (:meth:`connected_tasks`).  ``client`` is the node's
    TcpClient, set once made (None playing a file: every command answers an error)."""

    def __init__(self, p, *, session: LuxSession, stats: dict, diagnostics, link, logger,
                 filter_ranges: tuple):
        self.p = p
        self.session = session
        self.stats = stats                       # data type → its StreamStats (REPLY counted)
        self.diagnostics = diagnostics
        self.link = link                         # the link's stream: key of the per-link lines
        self.logger = logger
        self.client: Optional[TcpClient] = None
        self.replies = RequestReply(one_at_a_time=True)
        #: the ECU Set Filter sent after every connect (() none), its state and count (shown
        #: on the link status), the last Get Status answer
        self.filter_ranges = filter_ranges
        self.filter_state = 'none sent' if not filter_ranges else 'not sent yet'
        self.filters_sent = 0
        self.last_status: Optional[cmd.LuxStatus] = None

    def on_reply(self, ev: Reply, now_ns: int) -> None:
        if ev.solicited and self.replies.resolve(ev.reply.command_id, ev.reply):
            self.stats[registry.REPLY].publish()

    def on_reply_failed(self, ev: ReplyFailed, now_ns: int) -> None:
        self.replies.fail(ev.command_id, f'malformed reply: {ev.error}')

    def _log_per_link(self, kind: str, text: str, level: str = 'warning') -> None:
        """A line of what is done on each (re)connect: rate-limited per ``kind``, as a sensor
        that hangs up at once is connected about twice a second."""
        self.diagnostics.log_limited(self.link.name, kind, text, level)

    def connected_tasks(self) -> None:
        """After every (re)connect, on a thread of its own: Set Filter, Start Measure, the
        layer probe."""
        if self.filter_ranges:
            self._send_filter(self.filter_ranges)
        if self.p.start_measure_on_connect:
            reply, err = self._command(cmd.encode_start_measure(), cmd.START_MEASURE)
            if reply is None or not reply.success:
                self._log_per_link('start_measure',
                                   f'start measure: {err or "refused by the sensor"}')
            else:
                self._expect_data(True)
        if self.p.layers == 0:
            self._probe_layers()

    def _probe_layers(self) -> None:
        """Ask DeviceType (and BeamTilt on an 8-layer unit): the session decides the layers."""
        s = self.session
        reply, err = self._command(cmd.encode_get_parameter(cmd.DEVICE_TYPE),
                                   cmd.GET_PARAMETER)
        eight = s.apply_device_type(reply)
        if eight is None:
            self._log_per_link('device_type', f'could not read DeviceType '
                               f'(0x{cmd.DEVICE_TYPE:04X}): '
                               f'{err or answered_value(reply, cmd.DEVICE_TYPE)[1]}; assuming 4 '
                               'layers (set the layers parameter)')
            return
        if eight:
            reply, err = self._command(cmd.encode_get_parameter(cmd.BEAM_TILT),
                                       cmd.GET_PARAMETER)
            why = s.apply_beam_tilt(reply)
            if why:
                self._log_per_link('beam_tilt', f'could not read BeamTilt '
                                   f'(0x{cmd.BEAM_TILT:04X}): {err or why}; using the '
                                   f'beam_tilt parameter, {s.beam_tilt:.4f} rad')
        self._log_per_link('layers', f'device type 0x{s.device_type:02X} '
                           f'({cmd.DEVICE_TYPES.get(s.device_type, "unknown")}): '
                           f'{8 if eight else 4} layers' + (f', beam tilt {s.beam_tilt:.4f} rad'
                                                            if eight else ''), 'info')

    def _expect_data(self, measuring: bool) -> None:
        """The link's data timeout is on while the sensor measures, off while it was told
        to stop (its silence is no sign of a dead link then)."""
        self.client.data_timeout = self.p.data_timeout if measuring else 0.0

    def fail_all(self, text: str) -> None:
        """The link is lost or the node closes: every waiting command fails with ``text``."""
        self.replies.fail_all(text)

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
        try:
            waiter = self.replies.expect(command_id, turn_timeout=timeout)
        except Busy:
            return None, f'{name}: another command is still waiting for its reply'
        try:
            if not self.client.connected:
                return None, (f'{name}: not connected to {self.p.host}:{self.p.port}'
                              + (f' ({self.client.last_failure})' if self.client.last_failure
                                 else ''))
            data = message() if message is not None else \
                self.session.send_command(command_id, body, expect_reply=reply)
            if not self.client.send(data):
                return None, f'{name}: send failed ({self.client.last_failure})'
            if not reply:
                return None, ''
            if not waiter.wait(timeout):
                return None, f'{name}: no reply within {timeout:.1f} s'
            if waiter.reply is None:
                return None, f'{name}: {waiter.error}'
            return waiter.reply, ''
        finally:
            self.session.command_done()
            waiter.close()

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

    def srv_simple(self, command_id: int, res):
        name = cmd.COMMAND_NAMES[command_id]
        res.command_id = command_id
        body = cmd.encode_command(command_id)
        if command_id == cmd.RESET:                 # §7.1.1: no reply
            reply, err = self._command(body, command_id, reply=False)
            res.success = not err
            res.message = err or 'reset sent (the LUX does not reply to Reset; it restarts)'
        else:
            reply, err = self._command(body, command_id)
            res.reply_id = reply.reply_id if reply is not None else 0
            self._result(res, reply, err, name)
        if res.success and command_id in MEASURING_AFTER:
            self._expect_data(MEASURING_AFTER[command_id])
        return res

    def _send_filter(self, ranges: tuple, asked: bool = False
                     ) -> tuple[Optional[cmd.LuxReply], str]:
        """Send the ECU Set Filter, check and log its answer (spec §20): rate-limited when
        sent on (re)connect; every time when ``asked`` (the service, a run-time data_types),
        one line per user request."""
        def log_line(kind: str, text: str, level: str = 'warning') -> None:
            if asked:
                log(self.logger, level, text)
            else:
                self._log_per_link(kind, text, level)

        text = sf.format_ranges(ranges)
        flt = sf.SetFilter(tuple(ranges))
        reply, err = self._command(None, sf.SET_FILTER, name='set filter',
                                   message=lambda: self.session.send_set_filter(flt))
        self.filters_sent += 1
        if reply is not None and reply.success:
            self.filter_state = f'accepted: {text}'
            log_line('set_filter', f'set filter {text}: accepted by the device', 'info')
        else:
            why = err or f'set filter: refused by the device (reply 0x{reply.reply_id:04X})'
            self.filter_state = f'failed: {text}: {why}'
            # err starts with the command's name
            log_line('set_filter_failed', f'{why} (data types {text})')
        return reply, err

    def on_set_parameters(self, params) -> SetParametersResult:
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
            if ranges and self.client is not None and self.client.connected:   # file: none
                threading.Thread(target=self._send_filter, args=(ranges, True),
                                 name='ibeo-set-filter', daemon=True).start()
        return SetParametersResult(successful=True)

    def srv_set_filter(self, req, res):
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
        reply, err = self._send_filter(ranges, asked=True)
        res.reply_id = reply.reply_id if reply is not None else 0
        if self._result(res, reply, err, f'set filter {res.data_types}'):
            self.filter_ranges = ranges           # sent again after every reconnect
        return res

    def srv_get_status(self, req, res):
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

    def srv_get_parameter(self, req, res):
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

    def srv_set_parameter(self, req, res):
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

    def srv_set_ntp_time(self, req, res):
        ns = time.time_ns() if req.use_host_time else stamp_to_ns(req.time)
        seconds, fraction = unix_ns_to_ntp(ns)
        res.seconds, res.fraction = seconds & 0xFFFFFFFF, fraction
        reply, err = self._command(cmd.encode_set_ntp_time(res.seconds, fraction),
                                   cmd.SET_NTP_TIMESTAMP_SYNC)
        self._result(res, reply, err, 'set_ntp_time')
        return res
