"""Data-type registry and dispatch for Ibeo messages (spec §2.1).

Every message module registers its data type here at import time: a decoder
``decode(body, header) -> record``, the record class and its encoder ``encode(record) -> body``,
and the body size limits that :func:`~.framing.check_plausible` uses against false syncs.
:data:`KNOWN_TYPES` says which module registers each type, with its name and size limits:
a type's module (and numpy, which most of them use) is imported when a body of that type is
first decoded, so what only frames or indexes a stream (``ibeo_idc info``) imports none of
them; :func:`register` refuses a registration that differs from its line there.  New types
(ECU 0x2205/0x2280/0x2403 …, ``.idc`` index/trailer types) slot in by calling :func:`register`
from their own module and adding their line to :data:`KNOWN_TYPES`.

Unknown data types raise ``CodecError(kind=UNKNOWN_LAYOUT)`` so a node can count and skip them
(the framer already consumed them by size).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ros_sim_bridge.core.binary import BAD_VALUE, UNKNOWN_LAYOUT, CodecError
from ros_sim_bridge.core.framer import Frame
from .header import IbeoHeader, decode_header, encode_message

# Data types (spec §2.1 and section titles).
COMMAND = 0x2010
REPLY = 0x2020
ERRORS_WARNINGS = 0x2030
SCAN = 0x2202
OBJECTS = 0x2221
VEHICLE_STATE = 0x2805

#: Names of every type the document (and SUPPLEMENT §3.3) mentions; a name without a registered
#: decoder still raises UNKNOWN_LAYOUT, the name only improves diagnostics.
DATA_TYPE_NAMES: dict[int, str] = {
    0x1002: 'can_message', 0x1100: 'frame_end_separator',
    0x2010: 'lux_command', 0x2020: 'lux_command_reply', 0x2030: 'lux_errors_warnings',
    0x2202: 'lux_scan', 0x2204: 'ecu_scan_2204', 0x2205: 'ecu_scan_2205', 0x2209: 'ecu_scan_2209',
    0x2221: 'lux_objects', 0x2225: 'ecu_objects_2225', 0x2280: 'ecu_objects_2280',
    0x2281: 'ecu_objects_2281', 0x2291: 'reference_objects', 0x2403: 'ecu_image',
    0x2604: 'gps_wgs84', 0x2805: 'lux_vehicle_state', 0x2806: 'ecu_vehicle_state_2806',
    0x2807: 'ecu_vehicle_state_2807', 0x2808: 'ecu_vehicle_state_2808',
    0x2821: 'measurement_list', 0x2850: 'ecu_2850', 0x4001: 'object_association',
    0x6120: 'idc_trailer', 0x6130: 'frame_index', 0x6201: 'ecu_configuration_info',
    0x6503: 'labeled_objects', 0x6700: 'sysmon_can_status', 0x6701: 'sysmon_device_status',
    0x6705: 'sysmon_system_status', 0x6970: 'carriage_way', 0x7100: 'sensor_info',
    0x7110: 'meta_information_list', 0x7510: 'point_cloud_plane', 0x9000: 'time_record',
    0x9001: 'gps_imu', 0x9002: 'odometry',
}
for _t in range(0x6400, 0x6441):
    DATA_TYPE_NAMES.setdefault(_t, 'ecu_trace')

#: data type → (the module of this package that registers it, its name, minimum and maximum
#: body size or None), as that module's :func:`register` call says (checked there)
KNOWN_TYPES: dict[int, tuple[str, str, int, Optional[int]]] = {
    0x1002: ('can_message', 'can_message', 18, None),
    0x1100: ('frame_end', 'frame_end_separator', 32, None),
    0x2010: ('commands', 'lux_command', 4, 256),
    0x2020: ('commands', 'lux_command_reply', 2, 1024),
    0x2030: ('errors_warnings', 'lux_errors_warnings', 16, 80),
    0x2202: ('scan', 'lux_scan', 44, 655458),
    0x2204: ('scan_ecu', 'ecu_scan_2204', 24, 1845204),
    0x2205: ('scan_ecu', 'ecu_scan_2205', 24, 1872744),
    0x2221: ('objects', 'lux_objects', 10, None),
    0x2225: ('objects_ecu', 'ecu_objects_2225', 10, None),
    0x2280: ('objects_ecu', 'ecu_objects_2280', 10, None),
    0x2281: ('objects_ecu', 'ecu_objects_2281', 16, None),
    0x2291: ('objects_ecu', 'reference_objects_2291', 16, None),
    0x2403: ('image', 'ecu_image', 63, None),
    0x2604: ('gps_imu', 'gps_wgs84', 127, None),
    0x2805: ('vehicle_state', 'lux_vehicle_state', 46, 110),
    0x2806: ('vehicle_state_ecu', 'ecu_vehicle_state_2806', 86, None),
    0x2807: ('vehicle_state_ecu', 'ecu_vehicle_state_2807', 90, None),
    0x2808: ('vehicle_state_ecu', 'ecu_vehicle_state_2808', 204, None),
    0x2821: ('measurement_list', 'measurement_list', 16, None),
    0x4001: ('object_association', 'object_association', 20, None),
    0x6120: ('frame_end', 'idc_trailer', 0, None),
    0x6130: ('frame_index', 'frame_index', 128, None),
    0x6400: ('system_monitoring', 'ecu_trace_error', 2, None),
    0x6410: ('system_monitoring', 'ecu_trace_warning', 2, None),
    0x6420: ('system_monitoring', 'ecu_trace_note', 2, None),
    0x6430: ('system_monitoring', 'ecu_trace_debug', 2, None),
    0x6700: ('system_monitoring', 'sysmon_can_status', 16, None),
    0x6701: ('system_monitoring', 'sysmon_device_status', 14, None),
    0x6705: ('system_monitoring', 'sysmon_system_status', 15, None),
    0x6970: ('carriage_way', 'carriage_way', 8, None),
    0x7110: ('meta_information', 'meta_information_list', 4, None),
    0x7510: ('point_cloud_plane', 'point_cloud_plane', 48, None),
    0x9000: ('time_record', 'time_record', 24, None),
    0x9001: ('gps_imu', 'gps_imu', 413, None),
    0x9002: ('odometry', 'odometry', 146, None),
}
DATA_TYPE_NAMES.update((t, known[1]) for t, known in KNOWN_TYPES.items())


@dataclass(frozen=True)
class MessageType:
    data_type: int
    name: str
    decode: Callable[[Any, Optional[IbeoHeader]], Any]
    record: Optional[type] = None
    encode: Optional[Callable[[Any], bytes]] = None
    min_size: int = 0
    max_size: Optional[int] = None


_BY_TYPE: dict[int, MessageType] = {}
_BY_RECORD: dict[type, MessageType] = {}


def register(data_type: int, name: str, decode, *, record: Optional[type] = None,
             encode=None, min_size: int = 0, max_size: Optional[int] = None) -> MessageType:
    """Register a data type (called by each message module at import); ValueError when a
    type of :data:`KNOWN_TYPES` comes with another name or other size limits than its line."""
    known = KNOWN_TYPES.get(data_type)
    if known is not None and known[1:] != (name, min_size, max_size):
        raise ValueError(f'0x{data_type:04X} registered as {(name, min_size, max_size)}, '
                         f'KNOWN_TYPES says {known[1:]}')
    entry = MessageType(data_type, name, decode, record, encode, min_size, max_size)
    _BY_TYPE[data_type] = entry
    DATA_TYPE_NAMES[data_type] = name
    if record is not None:
        _BY_RECORD[record] = entry
    return entry


def _entry(data_type: int) -> Optional[MessageType]:
    """The registration of ``data_type``, its module imported first when it is known and not
    yet imported; None for a type without a decoder."""
    entry = _BY_TYPE.get(data_type)
    if entry is None and data_type in KNOWN_TYPES:
        importlib.import_module(f'{__package__}.{KNOWN_TYPES[data_type][0]}')
        entry = _BY_TYPE.get(data_type)
    return entry


def registered_types() -> list[int]:
    """Every data type with a decoder (:data:`KNOWN_TYPES` and any registered besides)."""
    return sorted(set(KNOWN_TYPES) | set(_BY_TYPE))


def type_name(data_type: int) -> str:
    return DATA_TYPE_NAMES.get(data_type, f'0x{data_type:04X}')


def size_limits(data_type: int) -> Optional[tuple[int, Optional[int]]]:
    """(minimum, maximum or None) body size of a registered type, None if unregistered
    (nothing imported)."""
    known = KNOWN_TYPES.get(data_type)
    if known is not None:
        return known[2], known[3]
    entry = _BY_TYPE.get(data_type)
    return None if entry is None else (entry.min_size, entry.max_size)


def decode_message(data_type: int, body, header: Optional[IbeoHeader] = None):
    """The typed record of one message body; CodecError(UNKNOWN_LAYOUT) for unregistered types."""
    entry = _entry(data_type)
    if entry is None:
        known = DATA_TYPE_NAMES.get(data_type)
        detail = (f'data type 0x{data_type:04X} ({known}) has no decoder yet' if known
                  else f'unknown data type 0x{data_type:04X}')
        raise CodecError('ibeo', detail + f'; {len(body)} body bytes skipped',
                         field='data_type', kind=UNKNOWN_LAYOUT)
    return entry.decode(body, header)


def decode_frame(frame: Frame):
    """(IbeoHeader, record) of a frame from :func:`~.framing.make_framer` (the header the
    framer decoded is reused; the body is decoded by the registry's decoder)."""
    header = frame.parsed if isinstance(frame.parsed, IbeoHeader) else decode_header(frame.header)
    return header, decode_message(header.data_type, frame.body, header)


def encode_record(record) -> tuple[int, bytes]:
    """(data type, body) of a record of a registered record class."""
    entry = _BY_RECORD.get(type(record))
    if entry is None or entry.encode is None:
        raise CodecError('ibeo', f'no encoder for {type(record).__name__}', kind=BAD_VALUE)
    return entry.data_type, entry.encode(record)


def encode_record_message(record, *, device_id: int = 0, ntp: int = 0) -> bytes:
    """Header + body for a record (a complete message)."""
    data_type, body = encode_record(record)
    return encode_message(data_type, body, device_id=device_id, ntp=ntp)
