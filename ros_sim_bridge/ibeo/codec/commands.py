"""ibeo LUX commands (0x2010) and command replies (0x2020), spec §7; little-endian.

Command body: command id (u16), reserved (u16), command data.  Reply body: reply id (u16) and
reply data; reply id = command id on success, command id | 0x8000 on failure (§7).
Reset gets no reply (§7.1.1).  Parameters (§7.2) are addressed by index or by the spec's
names (case, spaces and underscores ignored: ``'Scan frequency'`` = ``'scan_frequency'``) and
typed in the unit the §7.2 table states (the units rule): the wire's fixed point is undone
(1/32 deg → deg, 1/256 Hz → Hz, BeamTilt 1/10000 rad → rad), lengths stay cm, IP addresses are
dotted strings.  Their factors to SI (deg → rad, cm → m) are ``units.PARAMETER_UNITS_TO_SI``,
applied at the service boundary (``ibeo/ros/conversions.py``) and by the session.

SetNTPTimestampSync (0x0034): seconds at offset 6 and fraction at offset 10 — the document's
table puts both at 6, a typo (SUPPLEMENT §3.3).  Older firmware's 0x0030/0x0031 (seconds /
fraction separately, value at offset 6) decode too.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Optional, Union

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError, pack, unpack_from
from ros_sim_bridge.core.ntp import unix_ns_to_ntp
from . import registry
from .scan import SCANNER_STATUS_BITS, bit_names

COMMAND_DATA_TYPE = registry.COMMAND
REPLY_DATA_TYPE = registry.REPLY
NAME_CMD = 'ibeo_command'
NAME_REPLY = 'ibeo_reply'

RESET = 0x0000
GET_STATUS = 0x0001
SAVE_CONFIG = 0x0004
SET_PARAMETER = 0x0010
GET_PARAMETER = 0x0011
RESET_DEFAULTS = 0x001A
START_MEASURE = 0x0020
STOP_MEASURE = 0x0021
SET_NTP_SECONDS = 0x0030          # older firmware
SET_NTP_FRACTION = 0x0031         # older firmware
SET_NTP_TIMESTAMP_SYNC = 0x0034
ECU_SET_FILTER = 0x0005           # ECU only, big-endian payload (§20)
FAILED = 0x8000

COMMAND_NAMES = {RESET: 'reset', GET_STATUS: 'get_status', SAVE_CONFIG: 'save_config',
                 SET_PARAMETER: 'set_parameter', GET_PARAMETER: 'get_parameter',
                 RESET_DEFAULTS: 'reset_defaults', START_MEASURE: 'start_measure',
                 STOP_MEASURE: 'stop_measure', SET_NTP_SECONDS: 'set_ntp_seconds',
                 SET_NTP_FRACTION: 'set_ntp_fraction',
                 SET_NTP_TIMESTAMP_SYNC: 'set_ntp_timestamp_sync',
                 ECU_SET_FILTER: 'ecu_set_filter'}

_CMD = struct.Struct('<HH')
_U16 = struct.Struct('<H')
_SET_PARAM = struct.Struct('<HHHI')
_GET_PARAM = struct.Struct('<HHH')
_NTP_SYNC = struct.Struct('<HHHII')
_NTP_OLD = struct.Struct('<HHHI')
_PARAM_REPLY = struct.Struct('<HHI')
_STATUS_REPLY = struct.Struct('<HHHHIHHHH3H3H')   # 32 bytes (§7.1.2)


# --- parameters (§7.2) ---------------------------------------------------------------------

#: One count of the §7.2 angles: "In 1/32°" (deg per count).
DEG_32 = 1.0 / 32.0

#: Integer parameter kinds: wire value range, and the bits they occupy in the 32-bit field.
KIND_LIMITS = {'u32': (0, 0xFFFFFFFF), 'u16': (0, 0xFFFF), 'i16': (-0x8000, 0x7FFF),
               'i14': (-0x2000, 0x1FFF)}
KIND_MASK = {'u32': 0xFFFFFFFF, 'u16': 0xFFFF, 'i16': 0xFFFF, 'i14': 0x3FFF}


@dataclass(frozen=True)
class Parameter:
    """One §7.2 parameter as the table describes it: ``kind`` is the wire type (u16, i16, u32,
    f32, ip, i14); ``unit`` the table's unit and ``scale`` the value of one wire count in it
    (value = raw × scale: "In 1/32°" is scale 1/32, unit deg; None = a plain integer)."""
    index: int
    name: str
    kind: str
    scale: Optional[float] = None
    unit: str = ''
    note: str = ''


PARAMETERS: dict[int, Parameter] = {p.index: p for p in (
    Parameter(0x1000, 'IP address', 'ip', note='restart needed'),
    Parameter(0x1001, 'TCP Port', 'u16', note='restart needed'),
    Parameter(0x1002, 'Subnet Mask', 'ip', note='restart needed'),
    Parameter(0x1003, 'Standard gateway', 'ip', note='restart needed'),
    Parameter(0x1004, 'Customer Processing Switch 0', 'u16',
              note='bit0 dirt+rain detection; bits 3/2 time sync mode'),
    Parameter(0x1010, 'CAN Base ID', 'u32', note='<= 0x7F0'),
    Parameter(0x1011, 'CAN Baud Rate', 'u16', unit='kBd', note='restart needed'),
    Parameter(0x1012, 'Data Output Flag', 'u16',
              note='bit set = output disabled: 0 scan, 2 objects, 3 vehicle, 4 errors (ETH)'),
    Parameter(0x1013, 'maxObjectsViaCAN', 'u16'),
    Parameter(0x1014, 'ContourPointDensity', 'u16'),
    Parameter(0x1015, 'ObjectPriorizationCriterion', 'u16'),
    Parameter(0x1016, 'CAN object data options', 'u16'),
    Parameter(0x1017, 'Minimum Object Age', 'u16'),
    Parameter(0x1018, 'Maximum Prediction Age', 'u16'),
    Parameter(0x1019, 'Interface Flags', 'u16', note='restart needed'),
    Parameter(0x1100, 'Start angle', 'i16', DEG_32, 'deg', note='1/32 deg, 1600..-1919'),
    Parameter(0x1101, 'End angle', 'i16', DEG_32, 'deg', note='1/32 deg, 1599..-1920'),
    Parameter(0x1102, 'Scan frequency', 'u16', 1.0 / 256.0, 'Hz', note='3200/6400/12800'),
    Parameter(0x1103, 'Sync angle offset', 'i14', DEG_32, 'deg', note='INT14, bits 14/15 ignored'),
    Parameter(0x1104, 'angular resolution type', 'u16', note='0 focused, 1 constant'),
    Parameter(0x1105, 'angleTicksPerRotation', 'u16', note='read only'),
    Parameter(0x1200, 'SensorMounting_X', 'i16', 1.0, 'cm'),
    Parameter(0x1201, 'SensorMounting_Y', 'i16', 1.0, 'cm'),
    Parameter(0x1202, 'SensorMounting_Z', 'i16', 1.0, 'cm'),
    Parameter(0x1203, 'SensorMounting_Yaw', 'i16', DEG_32, 'deg'),
    Parameter(0x1204, 'SensorMounting_Pitch', 'i16', DEG_32, 'deg'),
    Parameter(0x1205, 'SensorMounting_Roll', 'i16', DEG_32, 'deg'),
    Parameter(0x1206, 'VehicleFrontToFrontAxle', 'u16', 1.0, 'cm'),
    Parameter(0x1207, 'FrontAxleToRearAxle', 'u16', 1.0, 'cm'),
    Parameter(0x1208, 'RearAxleToVehicleRear', 'u16', 1.0, 'cm'),
    Parameter(0x1209, 'VehicleWidth', 'u16', 1.0, 'cm'),
    Parameter(0x120A, 'steerRatioType', 'u16'),
    Parameter(0x120C, 'SteerRatioPoly0', 'f32'),
    Parameter(0x120D, 'SteerRatioPoly1', 'f32'),
    Parameter(0x120E, 'SteerRatioPoly2', 'f32'),
    Parameter(0x120F, 'SteerRatioPoly3', 'f32'),
    Parameter(0x1210, 'Vehicle Motion Data Flags', 'u16'),
    Parameter(0x3301, 'DeviceType', 'u16', note='0x06 LUX3, 0x10 LUX4, 0x11 LUX4HD, '
              '0x18 LUX4 8 lines, 0x19 LUX4HD 8 lines'),
    # Not in the document: beam tilt of 8-layer units, int16 / 10000 rad (SUPPLEMENT §3.2).
    Parameter(0x3302, 'BeamTilt', 'i16', 1e-4, 'rad', note='not in the document, 1/10000 rad'),
)}

DEVICE_TYPES = {0x06: 'LUX3', 0x10: 'LUX4', 0x11: 'LUX4HD', 0x18: 'LUX4_8Lines',
                0x19: 'LUX4HD_8Lines'}
EIGHT_LAYER_DEVICE_TYPES = (0x18, 0x19)


def _norm(name: str) -> str:
    return re.sub(r'[^0-9a-z]', '', name.lower())


_BY_NAME = {_norm(p.name): p for p in PARAMETERS.values()}


def parameter(key: Union[int, str]) -> Parameter:
    """The Parameter for an index or a name; CodecError(BAD_VALUE) if unknown by name.

    An unknown *index* gives a plain u32 Parameter (sensors have more than §7.2 lists)."""
    if isinstance(key, str):
        p = _BY_NAME.get(_norm(key))
        if p is None:
            raise CodecError(NAME_CMD, f'unknown parameter name {key!r}', field='parameter',
                             kind=BAD_VALUE)
        return p
    p = PARAMETERS.get(key)
    return p if p is not None else Parameter(key, f'0x{key:04X}', 'u32')


#: The parameters a driver reads on connect to tell 4 from 8 layers (the layer probe).
DEVICE_TYPE = parameter('DeviceType').index
BEAM_TILT = parameter('BeamTilt').index


def parameter_from_raw(p: Parameter, raw: int):
    """The value in the table's unit (``p.unit``) from the 32-bit wire value."""
    raw &= 0xFFFFFFFF
    if p.kind == 'ip':
        return '.'.join(str((raw >> s) & 0xFF) for s in (24, 16, 8, 0))
    if p.kind == 'f32':
        return struct.unpack('<f', struct.pack('<I', raw))[0]
    if p.kind == 'u32':
        v = raw
    elif p.kind == 'u16':
        v = raw & 0xFFFF
    elif p.kind == 'i16':
        v = raw & 0xFFFF
        v = v - 0x10000 if v & 0x8000 else v
    elif p.kind == 'i14':
        v = raw & 0x3FFF
        v = v - 0x4000 if v & 0x2000 else v
    else:
        raise CodecError(NAME_CMD, f'unknown parameter kind {p.kind}', field=p.name)
    return v * p.scale if p.scale is not None else v


def raw_from_request(p: Parameter, value: float = 0.0, text: str = '', raw: bool = False
                     ) -> int:
    """The 32-bit wire value a SetParameter request means: ``raw`` takes ``value`` as the wire
    value; else ``text`` (stripped, when given: an IP address for 'ip' parameters, a number
    otherwise) or ``value``, in the table's unit, typed by :func:`parameter_to_raw`.  CodecError
    or ValueError when it cannot be sent (an IP address given as a number, text not a number).
    SI requests go through ``ibeo/ros/conversions.parameter_request_raw``."""
    if raw:                  # a whole number a 32-bit word holds, signed or not
        if not (math.isfinite(value) and value == int(value) and -2**31 <= value < 2**32):
            raise CodecError(NAME_CMD, f'{value!r}: not a 32-bit wire value (a whole number '
                             'from -2^31 to 2^32 - 1)', field=p.name, kind=BAD_VALUE)
        return int(value) & 0xFFFFFFFF
    text = text.strip()
    if text:
        return parameter_to_raw(p, text if p.kind == 'ip' else float(text))
    if p.kind == 'ip':
        raise CodecError(NAME_CMD, 'an IP address goes in value_text', field=p.name,
                         kind=BAD_VALUE)
    return parameter_to_raw(p, value)


def parameter_to_raw(p: Parameter, value) -> int:
    """32-bit wire value from a value in the table's unit (2-byte values in the low half,
    §7.1.4)."""
    def bad(detail):
        return CodecError(NAME_CMD, f'{value!r}: {detail}', field=p.name, kind=BAD_VALUE)
    if p.kind == 'ip':
        parts = str(value).split('.')
        if len(parts) != 4 or not all(x.isdigit() and int(x) < 256 for x in parts):
            raise bad('not a dotted IPv4 address')
        a, b, c, d = (int(x) for x in parts)
        return (a << 24) | (b << 16) | (c << 8) | d
    if p.kind == 'f32':
        if not math.isfinite(float(value)):
            raise bad('not a finite number')
        try:
            return struct.unpack('<I', struct.pack('<f', float(value)))[0]
        except OverflowError:
            raise bad('outside the float32 range') from None
    try:
        v = int(round(value / p.scale)) if p.scale is not None else int(value)
    except (TypeError, ValueError, OverflowError):
        raise bad('not a number') from None
    limits = KIND_LIMITS[p.kind]
    if not limits[0] <= v <= limits[1]:
        raise bad(f'wire value {v} outside {limits}')
    return v & KIND_MASK[p.kind]


@dataclass(frozen=True)
class ParameterValue:
    """A parameter read back: index, spec name, raw 32-bit wire value, typed value in the
    table's unit (``parameter(index).unit``)."""
    index: int
    name: str
    raw: int
    value: object

    @classmethod
    def from_raw(cls, index: int, raw: int) -> 'ParameterValue':
        p = parameter(index)
        return cls(index, p.name, raw, parameter_from_raw(p, raw))


# --- commands (0x2010) ---------------------------------------------------------------------

@dataclass(frozen=True)
class LuxCommand:
    """A decoded 0x2010 command (what the emulator receives)."""
    command_id: int
    parameter_index: Optional[int] = None
    parameter_raw: Optional[int] = None
    ntp_seconds: Optional[int] = None
    ntp_fraction: Optional[int] = None
    data: bytes = b''               # command data after id/reserved, as received

    DATA_TYPE = COMMAND_DATA_TYPE

    @property
    def name(self) -> str:
        return COMMAND_NAMES.get(self.command_id, f'0x{self.command_id:04X}')

    @property
    def parameter(self) -> Optional[ParameterValue]:
        if self.parameter_index is None or self.parameter_raw is None:
            return None
        return ParameterValue.from_raw(self.parameter_index, self.parameter_raw)


def encode_command(command_id: int, data: bytes = b'') -> bytes:
    """A 0x2010 body: id, reserved 0, data."""
    return pack(_CMD, (command_id, 0), NAME_CMD, ('command_id',)) + bytes(data)


def encode_reset() -> bytes:
    return encode_command(RESET)


def encode_get_status() -> bytes:
    return encode_command(GET_STATUS)


def encode_save_config() -> bytes:
    return encode_command(SAVE_CONFIG)


def encode_reset_defaults() -> bytes:
    return encode_command(RESET_DEFAULTS)


def encode_start_measure() -> bytes:
    return encode_command(START_MEASURE)


def encode_stop_measure() -> bytes:
    return encode_command(STOP_MEASURE)


def encode_set_parameter(key: Union[int, str], value, *, raw: bool = False) -> bytes:
    """SetParameter (§7.1.4): ``value`` in the table's unit, or the 32-bit wire value with
    raw=True."""
    p = parameter(key)
    wire = int(value) & 0xFFFFFFFF if raw else parameter_to_raw(p, value)
    return pack(_SET_PARAM, (SET_PARAMETER, 0, p.index, wire), NAME_CMD)


def encode_get_parameter(key: Union[int, str]) -> bytes:
    """GetParameter (§7.1.5)."""
    return pack(_GET_PARAM, (GET_PARAMETER, 0, parameter(key).index), NAME_CMD)


def encode_set_ntp_time(seconds: int, fraction: int = 0) -> bytes:
    """SetNTPTimestampSync (§7.1.9, fraction at offset 10)."""
    return pack(_NTP_SYNC, (SET_NTP_TIMESTAMP_SYNC, 0, 0, seconds, fraction), NAME_CMD,
                ('id', 'reserved', 'reserved', 'seconds', 'fraction'))


def encode_set_ntp_time_unix_ns(ns: int) -> bytes:
    return encode_set_ntp_time(*unix_ns_to_ntp(ns))


def encode_ecu_set_filter(first_type: int = 0x0000, last_type: int = 0xFFFF) -> bytes:
    """ECU Set Filter (§20, id 0x0005): big-endian although it travels in 0x2010
    (SUPPLEMENT §3.3); ``0x0000..0xFFFF`` = all types.  Not for a LUX."""
    return struct.pack('>HHHH', ECU_SET_FILTER, 2, first_type, last_type)


def encode_command_record(c: LuxCommand) -> bytes:
    if c.command_id == SET_PARAMETER and c.parameter_index is not None:
        return encode_set_parameter(c.parameter_index, c.parameter_raw or 0, raw=True)
    if c.command_id == GET_PARAMETER and c.parameter_index is not None:
        return encode_get_parameter(c.parameter_index)
    if c.command_id == ECU_SET_FILTER:
        return struct.pack('>HH', ECU_SET_FILTER, 2) + bytes(c.data)
    if c.command_id == SET_NTP_TIMESTAMP_SYNC and c.ntp_seconds is not None:
        return encode_set_ntp_time(c.ntp_seconds, c.ntp_fraction or 0)
    return encode_command(c.command_id, c.data)


def decode_command(body, header=None) -> LuxCommand:
    """Decode a 0x2010 body; TRUNCATED when a known command lacks its data."""
    cid, _ = unpack_from(_CMD, body, 0, NAME_CMD, 'command_id')
    data = bytes(body[4:])
    if bytes(body[:4]) == b'\x00\x05\x00\x02':    # ECU Set Filter, big-endian (§20)
        return LuxCommand(ECU_SET_FILTER, data=data)
    if cid == SET_PARAMETER:
        _, _, index, raw = unpack_from(_SET_PARAM, body, 0, NAME_CMD, 'set_parameter')
        return LuxCommand(cid, parameter_index=index, parameter_raw=raw, data=data)
    if cid == GET_PARAMETER:
        _, _, index = unpack_from(_GET_PARAM, body, 0, NAME_CMD, 'get_parameter')
        return LuxCommand(cid, parameter_index=index, data=data)
    if cid == SET_NTP_TIMESTAMP_SYNC:
        _, _, _, sec, frac = unpack_from(_NTP_SYNC, body, 0, NAME_CMD, 'set_ntp_timestamp_sync')
        return LuxCommand(cid, ntp_seconds=sec, ntp_fraction=frac, data=data)
    if cid == SET_NTP_SECONDS:
        _, _, _, sec = unpack_from(_NTP_OLD, body, 0, NAME_CMD, 'set_ntp_seconds')
        return LuxCommand(cid, ntp_seconds=sec, data=data)
    if cid == SET_NTP_FRACTION:
        _, _, _, frac = unpack_from(_NTP_OLD, body, 0, NAME_CMD, 'set_ntp_fraction')
        return LuxCommand(cid, ntp_fraction=frac, data=data)
    return LuxCommand(cid, data=data)


# --- replies (0x2020) ----------------------------------------------------------------------

def version_string(v: int) -> str:
    """0x1230 → '1.2.3', 0x123B → '1.2.3b' (§7.1.2)."""
    s = f'{v >> 12:X}.{(v >> 8) & 0xF:X}.{(v >> 4) & 0xF:X}'
    low = v & 0xF
    return s + ('' if low == 0 else format(low, 'x'))


def temperature_c(raw: int) -> float:
    """§7.1.2: T[°C] = −(raw − 579.2364) / 3.63."""
    return -(raw - 579.2364) / 3.63


def temperature_raw(celsius: float) -> int:
    return int(round(579.2364 - 3.63 * celsius))


def _bcd_stamp(words) -> str:
    y, md, hm = words
    return f'{y:04X}-{md >> 8:02X}-{md & 0xFF:02X} {hm >> 8:02X}:{hm & 0xFF:02X}'


@dataclass(frozen=True)
class LuxStatus:
    """GetStatus reply data (§7.1.2)."""
    firmware_version: int
    fpga_version: int
    scanner_status: int
    reserved_internal: int = 0
    temperature_raw: int = 0
    serial_number_0: int = 0        # YYCW (0x0740 = 2007, week 40)
    serial_number_1: int = 0        # counter
    reserved_internal_2: int = 0
    fpga_timestamp: tuple = (0, 0, 0)   # YYYY MMDD hhmm, decimal (BCD) coded
    dsp_timestamp: tuple = (0, 0, 0)

    @property
    def temperature_c(self) -> float:
        return temperature_c(self.temperature_raw)

    @property
    def firmware_version_str(self) -> str:
        return version_string(self.firmware_version)

    @property
    def fpga_version_str(self) -> str:
        return version_string(self.fpga_version)

    @property
    def serial_number(self) -> str:
        return f'{self.serial_number_0:04X}-{self.serial_number_1:05d}'

    @property
    def fpga_date(self) -> str:
        return _bcd_stamp(self.fpga_timestamp)

    @property
    def dsp_date(self) -> str:
        return _bcd_stamp(self.dsp_timestamp)

    @property
    def status_names(self) -> list[str]:
        return bit_names(self.scanner_status, SCANNER_STATUS_BITS)


@dataclass(frozen=True)
class LuxReply:
    """A 0x2020 reply.  ``status`` for GetStatus, ``parameter`` for GetParameter (success only);
    ``data`` is the reply data after the id as received."""
    reply_id: int
    data: bytes = b''
    status: Optional[LuxStatus] = None
    parameter: Optional[ParameterValue] = None

    DATA_TYPE = REPLY_DATA_TYPE

    @property
    def command_id(self) -> int:
        return self.reply_id & ~FAILED & 0xFFFF

    @property
    def success(self) -> bool:
        return not self.reply_id & FAILED

    @property
    def name(self) -> str:
        return COMMAND_NAMES.get(self.command_id, f'0x{self.command_id:04X}')


def decode_reply(body, header=None) -> LuxReply:
    """Decode a 0x2020 body (§7.1); TRUNCATED when a successful GetStatus/GetParameter reply
    is too short.  Failed replies keep whatever data they carry undecoded."""
    (rid,) = unpack_from(_U16, body, 0, NAME_REPLY, 'reply_id')
    data = bytes(body[2:])
    if rid == GET_STATUS:
        (_, fw, fpga, status, res, temp, s0, s1, res2, f0, f1, f2, d0, d1,
         d2) = unpack_from(_STATUS_REPLY, body, 0, NAME_REPLY, 'get_status')
        return LuxReply(rid, data, status=LuxStatus(fw, fpga, status, res, temp, s0, s1, res2,
                                                    (f0, f1, f2), (d0, d1, d2)))
    if rid == GET_PARAMETER:
        _, index, raw = unpack_from(_PARAM_REPLY, body, 0, NAME_REPLY, 'get_parameter')
        return LuxReply(rid, data, parameter=ParameterValue.from_raw(index, raw))
    return LuxReply(rid, data)


def encode_reply(r: LuxReply) -> bytes:
    if r.status is not None and r.success:
        s = r.status
        return pack(_STATUS_REPLY, (r.reply_id, s.firmware_version, s.fpga_version,
                                    s.scanner_status, s.reserved_internal, s.temperature_raw,
                                    s.serial_number_0, s.serial_number_1, s.reserved_internal_2,
                                    *s.fpga_timestamp, *s.dsp_timestamp), NAME_REPLY)
    if r.parameter is not None and r.success:
        return pack(_PARAM_REPLY, (r.reply_id, r.parameter.index, r.parameter.raw), NAME_REPLY)
    return pack(_U16, (r.reply_id,), NAME_REPLY) + bytes(r.data)


def ack(command_id: int) -> LuxReply:
    """The success reply without data (SaveConfig, SetParameter, ResetDefaults, Start/Stop, NTP)."""
    return LuxReply(command_id)


def failure(command_id: int) -> LuxReply:
    return LuxReply(command_id | FAILED)


def status_reply(status: LuxStatus) -> LuxReply:
    return LuxReply(GET_STATUS, status=status)


def parameter_reply(index: int, raw: int) -> LuxReply:
    return LuxReply(GET_PARAMETER, parameter=ParameterValue.from_raw(index, raw))


registry.register(COMMAND_DATA_TYPE, 'lux_command', decode_command, record=LuxCommand,
                  encode=encode_command_record, min_size=_CMD.size, max_size=256)
registry.register(REPLY_DATA_TYPE, 'lux_command_reply', decode_reply, record=LuxReply,
                  encode=encode_reply, min_size=_U16.size, max_size=1024)
