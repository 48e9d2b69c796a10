"""CAN message over Ethernet, data type 0x1002 (spec §30; big-endian like the ECU types):
byte 0 = version (low nibble, 0) | length 1..8 (high nibble), the data bytes, message type,
CAN id (UINT16, bit 15 set), device time [µs], receive time NTP64, device id."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import BAD_VALUE, TRUNCATED, CodecError, pack, unpack_from
from . import registry

CAN_MESSAGE_1002 = 0x1002
NAME = 'ibeo_can_message'
_TAIL = struct.Struct('>BHIQB')                # after the data bytes, 16 bytes
CAN_ID_FLAG = 0x8000


@dataclass(frozen=True)
class CanMessage:
    data: bytes
    can_id: int                                # 11-bit identifier (bit 15 removed)
    device_time_us: int = 0
    receive_ntp: int = 0
    device_id: int = 0
    version: int = 0
    message_type: int = 0
    DATA_TYPE = CAN_MESSAGE_1002


def decode_can_message(body, header=None) -> CanMessage:
    if len(body) < 1:
        raise CodecError(NAME, 'empty body', field='version_length', offset=0, kind=TRUNCATED)
    version, length = body[0] & 0x0F, body[0] >> 4
    if not 1 <= length <= 8:
        raise CodecError(NAME, f'length {length} outside 1..8', field='length', offset=0,
                         kind=BAD_VALUE)
    mtype, can_id, dev_time, ntp, dev = unpack_from(_TAIL, body, 1 + length, NAME, 'tail')
    return CanMessage(bytes(body[1:1 + length]), can_id & 0x7FFF, dev_time, ntp, dev, version,
                      mtype)


def encode_can_message(m: CanMessage) -> bytes:
    if not 1 <= len(m.data) <= 8:
        raise CodecError(NAME, f'{len(m.data)} data bytes, 1..8 allowed', field='data')
    return bytes([(len(m.data) << 4) | (m.version & 0x0F)]) + bytes(m.data) + pack(
        _TAIL, (m.message_type, (m.can_id & 0x7FFF) | CAN_ID_FLAG, m.device_time_us,
                m.receive_ntp, m.device_id), NAME)


registry.register(CAN_MESSAGE_1002, 'can_message', decode_can_message, record=CanMessage,
                  encode=encode_can_message, min_size=1 + 1 + _TAIL.size)
