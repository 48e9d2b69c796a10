"""The state of one connection to an ibeo LUX, without ROS or sockets (h11 style).

Bytes in, events out, bytes to send::

    session = LuxSession(layers=0)
    session.connection_made()                    # after every (re)connect
    out = session.send_command(cmd.GET_PARAMETER, cmd.encode_get_parameter(
        cmd.DEVICE_TYPE))                        # bytes for the socket; the reply is awaited
    for event in session.receive_data(chunk, now_ns):
        ...                                      # Scan, ObjectList, VehicleState, Reply, ...

What it holds (interface spec §2.4, §7; SUPPLEMENT §3.3):

* framing: the Ibeo framer (header and body decoded once; false syncs resynchronised);
* command/reply pairing: one command outstanding; its 0x2020 (matched by
  :attr:`~.codec.commands.LuxReply.command_id`) is a :class:`Reply` with ``solicited`` True, a
  malformed one a :class:`ReplyFailed`; every other reply is counted as unsolicited;
* the layer probe: :meth:`apply_device_type` / :meth:`apply_beam_tilt` turn the DeviceType
  (0x3301) and BeamTilt (0x3302) parameter replies into the 4/8-layer decision;
* mirror-side pairing of 8-layer scans: two consecutive scans of opposite mirror sides whose
  scan numbers follow each other (16-bit wrap) form one frame (:attr:`Scan.pairing`); a half
  whose partner never came is reported (:class:`UnpairedHalf`) and counted;
* the sensor clock: NTP seconds before 2000 mean an unset clock (counting from power-up);
  :meth:`stamp_ns` picks sensor or receive time by that rule; a data message whose header
  time is invalid (:class:`~ros_sim_bridge.core.ntp.DeviceNtpTimeChecks`: 0, all ones, a jump
  from its header device's last valid time; a recording's messages come with the verdict of
  the whole file instead) is an :class:`InvalidTime` event before it, counted, and its
  receive time is its stamp (a recording's: a valid neighbour's time); a clock set the
  sensor acknowledged may step the times at once;
* the ECU Set Filter (spec §20): :meth:`send_set_filter` sends the big-endian 0x2010; the
  ECU's big-endian 0x2020 answer (``00 05``) becomes a :class:`Reply` whose ``reply`` has
  command id 0x0005 (0x8005 when refused), paired like a LUX reply;
* every registered data type (LUX and ECU / FUSION, :mod:`.codec.registry`) becomes a
  :class:`Message`; counts of what was skipped (unregistered data types, by type) and of bad
  input.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.framer import Frame, Rejected
from ros_sim_bridge.core.ntp import (MAX_TIME_JUMP_S, NTP_UNIX_OFFSET, CheckedTime,
                                     DeviceNtpTimeChecks, ntp64_is_unset, ntp64_to_unix_ns)
from ros_sim_bridge.ibeo.codec import commands as cmd
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan as lux_scan
from ros_sim_bridge.ibeo.codec import set_filter as sf
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.codec.framing import body_decoder, make_framer
from ros_sim_bridge.ibeo.codec.header import DEFAULT_MAX_BODY, IbeoHeader, encode_message

#: Sensor clocks before 2000-01-01 are unset (seconds since power-up), SUPPLEMENT §3.3.
NTP_2000 = NTP_UNIX_OFFSET + 946_684_800
STAMP_SOURCES = ('receive', 'sensor')
#: Commands that set the sensor clock (§7.1.9): the header times step once they succeeded.
SET_CLOCK_COMMANDS = frozenset((cmd.SET_NTP_SECONDS, cmd.SET_NTP_FRACTION,
                                cmd.SET_NTP_TIMESTAMP_SYNC))
#: At most this many unknown data types are counted by name (:attr:`LuxSession.skipped`); the
#: others together under :data:`OTHER_TYPES`, so a stream of every type of the Ibeo range does
#: not make 36,864 keys.
MAX_SKIPPED_KINDS = 64
OTHER_TYPES = 'other types'
#: The LUX data types (spec §3–§7); every other registered type (ECU / FUSION, §8 on) is a
#: :class:`Message` too, unregistered types are skipped by size and counted.
HANDLED_TYPES = (registry.SCAN, registry.OBJECTS, registry.VEHICLE_STATE,
                 registry.ERRORS_WARNINGS, registry.REPLY)


def handled(data_type: int) -> bool:
    """True for a data type the session decodes (a registered one)."""
    return data_type in HANDLED_TYPES or registry.size_limits(data_type) is not None


def sent_ns(event) -> Optional[int]:
    """The sender's time of a framer event (ns, Unix epoch, negative for a clock counting from
    power-up): its data header's NTP time, "time when this message was created" (spec §2.4);
    None for a CodecError or a header whose NTP time is 0 or all ones.  Spaces the receive
    times of the messages of one read (:mod:`ros_sim_bridge.core.receive_times`)."""
    if isinstance(event, CodecError):
        return None
    frame = event.frame if isinstance(event, Rejected) else event
    ntp = frame.parsed.ntp
    return None if ntp64_is_unset(ntp) else ntp64_to_unix_ns(ntp)


def answered_value(reply: Optional[cmd.LuxReply], index: int) -> tuple[Any, str]:
    """(value, '') of a GetParameter reply that answers parameter ``index``; (None, why not)
    for no reply, a refusal, or a reply for another parameter (its value, an IP address or a
    float32 NaN, is no answer to the question)."""
    if reply is None:
        return None, 'no reply'
    if not reply.success or reply.parameter is None:
        return None, f'refused (reply 0x{reply.reply_id:04X})'
    if reply.parameter.index != index:
        return None, f'the reply is for parameter 0x{reply.parameter.index:04X}'
    return reply.parameter.value, ''


# --- events -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scan:
    """A 0x2202: ``scan`` (LuxScan, no points), ``wire`` (WIRE_POINT_DTYPE view), the layer
    decision at that moment, and ``pairing``: 'single' (4 layers, or merging off),
    'first' (an 8-layer half waiting for its partner), 'second' (completes the waiting half).
    ``time_valid``: its header time; ``neighbour_ntp``: an invalid one's replacement when
    known (a recording: a valid neighbour's time; live: None)."""
    header: IbeoHeader
    scan: lux_scan.LuxScan
    wire: np.ndarray
    eight_layer: bool
    beam_tilt: float
    pairing: str = 'single'
    time_valid: bool = True
    neighbour_ntp: Optional[int] = None


@dataclass(frozen=True)
class UnpairedHalf:
    """The waiting 8-layer half will get no partner (a new half began, or the link dropped)."""
    scan: lux_scan.LuxScan


@dataclass(frozen=True)
class Message:
    """A decoded message other than a 0x2202 scan or a 0x2020 reply: 0x2221, 0x2805, 0x2030 or
    an ECU / FUSION type (``record`` is the codec's record); ``time_valid`` and
    ``neighbour_ntp`` as :class:`Scan`'s."""
    header: IbeoHeader
    record: Any
    time_valid: bool = True
    neighbour_ntp: Optional[int] = None


@dataclass(frozen=True)
class InvalidTime:
    """The data message after this event has an invalid header time (``why``): its
    ``time_valid`` is False; it is not used for the sensor clock (``neighbour_ntp``: its
    replacement, as the message's)."""
    header: IbeoHeader
    why: str
    neighbour_ntp: Optional[int] = None


@dataclass(frozen=True)
class Reply:
    """A 0x2020; ``solicited``: it answers the outstanding command."""
    header: IbeoHeader
    reply: cmd.LuxReply
    solicited: bool


@dataclass(frozen=True)
class ReplyFailed:
    """A 0x2020 for the outstanding command that did not decode."""
    command_id: int
    error: CodecError


@dataclass(frozen=True)
class BadMessage:
    """A message of a handled type whose body failed to decode (the framer resynchronised)."""
    header: IbeoHeader
    error: CodecError


@dataclass(frozen=True)
class Skipped:
    """A message of a type without a handler, skipped by size (``key``: '0x2209 name', or
    :data:`OTHER_TYPES` once :data:`MAX_SKIPPED_KINDS` types are counted)."""
    header: IbeoHeader
    key: str


Event = Union[Scan, UnpairedHalf, Message, InvalidTime, Reply, ReplyFailed, BadMessage,
              Skipped, CodecError]


class LuxSession:
    """Protocol state of one LUX link (see the module docstring).

    ``layers``: 0 asks the sensor (:meth:`apply_device_type`), else 4 or 8; ``beam_tilt``
    (rad) until the sensor reports BeamTilt; ``merge_mirror_sides`` pairs 8-layer halves;
    ``max_time_jump`` (s) bounds a valid header time's step (:class:`DeviceNtpTimeChecks`).
    """

    def __init__(self, *, layers: int = 0,
                 beam_tilt: float = lux_scan.DEFAULT_8_LAYER_BEAM_TILT_RAD,
                 merge_mirror_sides: bool = True, max_body: int = DEFAULT_MAX_BODY,
                 max_time_jump: float = MAX_TIME_JUMP_S):
        if layers not in (0, 4, 8):
            raise ValueError(f'layers must be 0 (ask the sensor), 4 or 8, not {layers}')
        self.layers = layers
        self.beam_tilt = float(beam_tilt)
        self.merge_mirror_sides = bool(merge_mirror_sides)
        self.framer = make_framer(max_body)
        self.device_type: Optional[int] = None
        self.detected_eight: Optional[bool] = None
        self.sensor_clock_set: Optional[bool] = None
        self.time_offset_s: Optional[float] = None
        self.header_times = DeviceNtpTimeChecks(max_time_jump)
        self.invalid_times = 0
        self.last_invalid_time = ''          # '<type> device <id>: <why>' of the last one
        self.pending_command: Optional[int] = None
        self.skipped: collections.Counter[str] = collections.Counter()
        self.unsolicited_replies = 0
        self.unpaired_halves = 0
        self.commands_sent = 0
        self._half: Optional[lux_scan.LuxScan] = None

    # --- link ----------------------------------------------------------------------------
    def connection_made(self) -> None:
        """A new connection: the old stream's tail and any waiting half are meaningless."""
        self.framer.reset()
        self.header_times.reset()
        self.pending_command = None
        self._half = None

    def connection_lost(self) -> list[Event]:
        """The link dropped: the waiting half (if any) will get no partner."""
        self.pending_command = None
        return self._flush_half()

    # --- commands ------------------------------------------------------------------------
    def send_command(self, command_id: int, body: Optional[bytes] = None, *,
                     expect_reply: bool = True) -> bytes:
        """The 0x2010 message to send for a command (``body`` from the codec's encoders, the
        bare command by default); its reply is awaited when ``expect_reply`` (Reset has
        none, §7.1.1)."""
        self.pending_command = command_id if expect_reply else None
        self.commands_sent += 1
        return encode_message(registry.COMMAND, cmd.encode_command(command_id)
                              if body is None else body)

    def send_set_filter(self, flt: sf.SetFilter) -> bytes:
        """The ECU Set Filter message (§20, big-endian payload in a 0x2010); its ``00 05``
        answer is awaited as the reply of command 0x0005."""
        self.pending_command = sf.SET_FILTER
        self.commands_sent += 1
        return sf.set_filter_message(flt)

    def command_done(self) -> None:
        """Stop awaiting the outstanding command's reply (answered, timed out or abandoned)."""
        self.pending_command = None

    # --- the layer probe -----------------------------------------------------------------
    @property
    def eight_layer(self) -> bool:
        """The layer decision: configured, else detected (4 layers until detected)."""
        return self.layers == 8 if self.layers else bool(self.detected_eight)

    def apply_device_type(self, reply: Optional[cmd.LuxReply]) -> Optional[bool]:
        """Use a GetParameter(DeviceType) reply: True/False for 8/4 layers, None (and 4
        layers assumed) when the sensor did not answer with its value (:func:`answered_value`)."""
        value, _ = answered_value(reply, cmd.DEVICE_TYPE)
        if value is None:
            self.detected_eight = False
            return None
        self.device_type = int(value)
        self.detected_eight = self.device_type in cmd.EIGHT_LAYER_DEVICE_TYPES
        return self.detected_eight

    def apply_beam_tilt(self, reply: Optional[cmd.LuxReply]) -> str:
        """Use a GetParameter(BeamTilt) reply (its table unit to rad with
        :func:`units.parameter_to_si`); a missing or zero value keeps the configured tilt.
        Returns why the configured tilt stays ('' when the sensor's was taken)."""
        value, why = answered_value(reply, cmd.BEAM_TILT)
        if value is None:
            return why
        if not value:
            return 'the sensor reports 0'
        self.beam_tilt = float(units.parameter_to_si(cmd.parameter(cmd.BEAM_TILT), value))
        return ''

    # --- time ----------------------------------------------------------------------------
    @staticmethod
    def clock_is_set(ntp: int) -> bool:
        return (ntp >> 32) >= NTP_2000

    def stamp_ns(self, ntp: int, now_ns: int, source: str, time_valid: bool = True,
                 neighbour_ntp: Optional[int] = None) -> tuple[int, bool]:
        """(stamp ns, fell back): with ``source`` 'sensor' the sensor time ``ntp`` when the
        message's header time is valid, else ``neighbour_ntp`` (a recording's replacement)
        when given, else the receive time; the receive time as well (fell back True) while
        that sensor time says the clock is unset."""
        if source != 'sensor' or not (time_valid or neighbour_ntp is not None):
            return now_ns, False
        ntp = ntp if time_valid else neighbour_ntp
        if self.clock_is_set(ntp):
            return ntp64_to_unix_ns(ntp), False
        return now_ns, True

    def _note_clock(self, ntp: int, now_ns: int) -> None:
        self.sensor_clock_set = self.clock_is_set(ntp)
        self.time_offset_s = (ntp64_to_unix_ns(ntp) - now_ns) / 1e9

    def decode_points_into(self, points_out) -> None:
        """ECU scans in vehicle coordinates get their points decoded into ``points_out(n)``
        (:func:`~.codec.framing.body_decoder`), e.g. inside the message that publishes them."""
        self.framer.check_body = body_decoder(points_out)

    # --- data ----------------------------------------------------------------------------
    def receive_data(self, data: bytes, now_ns: int) -> list[Event]:
        """Events of the bytes received (framed, decoded, paired)."""
        out: list[Event] = []
        for event in self.framer.feed(data):
            out += self.handle(event, now_ns)
        return out

    def handle(self, event, now_ns: int, checked: Optional[CheckedTime] = None
               ) -> list[Event]:
        """Events of one framer event (for a transport that runs :attr:`framer` itself);
        ``checked``: a recorded message's header time as its whole file was judged (used
        instead of the live check)."""
        if isinstance(event, CodecError):
            return [event]
        frame: Frame = event.frame if isinstance(event, Rejected) else event
        header: IbeoHeader = frame.parsed
        dtype = header.data_type
        if not handled(dtype):
            key = f'0x{dtype:04X} {registry.type_name(dtype)}'
            if key not in self.skipped and len(self.skipped) >= MAX_SKIPPED_KINDS:
                key = OTHER_TYPES
            self.skipped[key] += 1
            return [Skipped(header, key)]
        if isinstance(event, Rejected):
            out: list[Event] = [BadMessage(header, event.error)]
            if dtype == registry.REPLY and len(frame.body) >= 2:
                command_id = cmd.LuxReply(int.from_bytes(frame.body[:2], 'little')).command_id
                if command_id == self.pending_command:
                    out.append(ReplyFailed(command_id, event.error))
            return out
        if dtype == registry.REPLY and self.pending_command == sf.SET_FILTER \
                and sf.is_set_filter_reply(frame.body):
            # big-endian ECU answer: as a LUX reply object, id 0x0005 / 0x8005
            reply = cmd.LuxReply(sf.set_filter_reply_id(frame.body), bytes(frame.body[2:]))
            return [Reply(header, reply, True)]
        if dtype == registry.REPLY:
            reply = frame.record
            solicited = self.pending_command is not None \
                and reply.command_id == self.pending_command
            if not solicited:
                self.unsolicited_replies += 1
            elif reply.success and reply.command_id in SET_CLOCK_COMMANDS:
                self.header_times.expect_step()  # the sensor's clock was set: it may step
            return [Reply(header, reply, solicited)]
        if checked is None:
            why = self.header_times.why_invalid(header.device_id, header.ntp, now_ns)
        else:                                    # a recording: its whole file's verdict
            why = checked.why
        neighbour = checked.ntp if why is not None and checked is not None else None
        if why is None:                          # data messages carry the sensor clock
            self._note_clock(header.ntp, now_ns)
            out = []
        else:
            self.invalid_times += 1
            self.last_invalid_time = (f'0x{dtype:04X} {registry.type_name(dtype)} device '
                                      f'{header.device_id}: {why}')
            out = [InvalidTime(header, why, neighbour)]
        if dtype == registry.SCAN:
            scan, wire = frame.record
            return out + self._scan(header, scan, wire, why is None, neighbour)
        return out + [Message(header, frame.record, why is None, neighbour)]

    def _scan(self, header: IbeoHeader, scan: lux_scan.LuxScan, wire, time_valid: bool,
              neighbour_ntp: Optional[int]) -> list[Event]:
        eight = self.eight_layer
        tilt = self.beam_tilt if eight else 0.0
        if not (eight and self.merge_mirror_sides):
            return [Scan(header, scan, wire, eight, tilt, 'single', time_valid, neighbour_ntp)]
        half = self._half
        if half is not None and half.mirror_side != scan.mirror_side \
                and (scan.scan_number - half.scan_number) & 0xFFFF == 1:   # 16-bit wrap
            self._half = None
            return [Scan(header, scan, wire, eight, tilt, 'second', time_valid, neighbour_ntp)]
        out = self._flush_half()
        self._half = scan
        return out + [Scan(header, scan, wire, eight, tilt, 'first', time_valid, neighbour_ntp)]

    def _flush_half(self) -> list[Event]:
        half, self._half = self._half, None
        if half is None:
            return []
        self.unpaired_halves += 1
        return [UnpairedHalf(half)]


__all__ = ['LuxSession', 'answered_value', 'Scan', 'UnpairedHalf', 'Message', 'InvalidTime',
           'Reply', 'ReplyFailed', 'BadMessage', 'Skipped', 'Event', 'NTP_2000',
           'MAX_SKIPPED_KINDS', 'OTHER_TYPES', 'STAMP_SOURCES', 'HANDLED_TYPES', 'handled',
           'sent_ns']
