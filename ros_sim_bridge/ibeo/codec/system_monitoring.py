"""System monitoring 0x6700 (CAN status), 0x6701 (device status), 0x6705 (system status) and
trace messages 0x6400–0x6430 (spec §35–§37, §19; big-endian).

State values 0 initialization, 1 OK, 2 warning, 3 error.  The document gives "state
information" 2 bytes in 0x6700/0x6701 but types it UINT8 with bits 0..7: it is read as the
big-endian UINT16 of those 2 bytes (bits 0..7 in its low byte).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import pack, unpack_from
from . import registry
from .fixed_layout import FixedLayout
from .typed_values import read_cstring

CAN_STATUS_6700 = 0x6700
DEVICE_STATUS_6701 = 0x6701
SYSTEM_STATUS_6705 = 0x6705
TRACE_TYPES = {0x6400: 'error', 0x6410: 'warning', 0x6420: 'note', 0x6430: 'debug'}

STATES = {0: 'initialization', 1: 'ok', 2: 'warning', 3: 'error'}
DEVICE_TYPES = {0: 'unknown', 1: 'scanner', 2: 'camera', 4: 'wgs84', 5: 'gps', 6: 'imu'}
#: State-information bits of 0x6700/0x6701 (§35/§36).
STATE_INFO_BITS = {0x01: 'initializing', 0x08: 'error_in_past', 0x10: 'drop_rate_high',
                   0x20: 'jitter_high', 0x80: 'timeout'}
#: State-information bits of 0x6705 (§37).
SYSTEM_INFO_BITS = {0x01: 'latency_high', 0x08: 'memory_warning', 0x20: 'device_timeout',
                    0x40: 'memory_error'}


def bit_names(value: int, table: dict) -> list[str]:
    return [name for bit, name in table.items() if value & bit]


@dataclass(frozen=True)
class CanStatus:
    """§35: device id, CAN message id, state, state information, last update (ms since 1970)."""
    device_id: int = 0
    message_id: int = 0
    state: int = 0
    state_information: int = 0
    update_missing_ms: int = 0
    DATA_TYPE = CAN_STATUS_6700


@dataclass(frozen=True)
class DeviceStatus:
    """§36: device id, device type, type information, state, state information, last update
    (ms since 1970)."""
    device_id: int = 0
    device_type: int = 0
    type_information: int = 0
    state: int = 0
    state_information: int = 0
    update_missing_ms: int = 0
    DATA_TYPE = DEVICE_STATUS_6701


@dataclass(frozen=True)
class SystemStatus:
    """§37: last update (ms since 1970), state, state information, CPU/RAM/HDD usage and the
    memory warning/error levels (percent)."""
    last_update_ms: int = 0
    state: int = 0
    state_information: int = 0
    cpu_usage: int = 0
    ram_usage: int = 0
    hdd_usage: int = 0
    memory_warning_level: int = 0
    memory_error_level: int = 0
    DATA_TYPE = SYSTEM_STATUS_6705


@dataclass(frozen=True)
class TraceMessage:
    """§19: trace level (1 error, 2 warning, 3 note, 4 debug) and the text.  The data type
    (0x6400/0x6410/0x6420/0x6430) is the record's ``data_type``."""
    data_type: int
    level: int
    text: str


LAYOUT_6700 = FixedLayout(CAN_STATUS_6700, 'sysmon_can_status', '>BIBHQ', CanStatus).register()
LAYOUT_6701 = FixedLayout(DEVICE_STATUS_6701, 'sysmon_device_status', '>BBBBHQ',
                          DeviceStatus).register()
LAYOUT_6705 = FixedLayout(SYSTEM_STATUS_6705, 'sysmon_system_status', '>Q7B',
                          SystemStatus).register()
assert (LAYOUT_6700.size, LAYOUT_6701.size, LAYOUT_6705.size) == (16, 14, 15)

_LEVEL = struct.Struct('>B')


def _trace_decoder(data_type: int):
    def decode(body, header=None) -> TraceMessage:
        (level,) = unpack_from(_LEVEL, body, 0, 'ecu_trace', 'level')
        text, _ = read_cstring(body, 1, 'ecu_trace', 'text')
        return TraceMessage(data_type, level, text)
    return decode


def encode_trace(msg: TraceMessage) -> bytes:
    return pack(_LEVEL, (msg.level,), 'ecu_trace') + msg.text.encode('ascii') + b'\0'


for _type, _level in TRACE_TYPES.items():
    # The record class is shared by the four types: encode with ``encode_trace`` and the
    # message's own data type (registered without a record class for that reason).
    registry.register(_type, f'ecu_trace_{_level}', _trace_decoder(_type), min_size=2)
