"""Ibeo data header (interface spec §2.4): 24 bytes, big-endian, in front of every message.

=====  ======  ==========================================================
offset  type    field
=====  ======  ==========================================================
0       u32     magic word 0xAFFEC0C2
4       u32     size of the previous message (files only; 0 live)
8       u32     size of this message's body (header excluded)
12      u8      reserved
13      u8      device id
14      u16     data type
16      NTP64   time the message was created
=====  ======  ==========================================================

The stream framer built on it is in :mod:`.framing` (it needs the registry's size limits;
this module imports nothing of the codec's own).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import BAD_MAGIC, CodecError, pack, unpack_from
from ros_sim_bridge.core.ntp import ntp64_to_unix_ns

MAGIC = 0xAFFEC0C2
MAGIC_BYTES = MAGIC.to_bytes(4, 'big')
HEADER_SIZE = 24
#: Bodies up to 16 MiB, live and in files: a FUSION 0x2205 can reach ~1.84 MB (65,535 points ×
#: 28 B), a 0x2280 of 65,535 objects without contours ~11.1 MB, an image more.  A well-framed
#: message above the limit is skipped by its size (:mod:`.framing`).
DEFAULT_MAX_BODY = 16 << 20
#: Every data type the documents name lies in 0x1000..0x9FFF (0x1002 CAN … 0x9002 odometry).
PLAUSIBLE_TYPES = range(0x1000, 0xA000)

#: §2.4 header: magic, size of previous message, size, reserved, device id, data type, NTP64
HEADER_STRUCT = struct.Struct('>IIIBBHQ')
_NAME = 'ibeo_header'


@dataclass(frozen=True)
class IbeoHeader:
    """One decoded data header. ``ntp`` is the raw NTP64 value (seconds << 32 | fraction)."""
    data_type: int
    size: int
    device_id: int = 0
    ntp: int = 0
    previous_size: int = 0
    reserved: int = 0

    @property
    def stamp_ns(self) -> int:
        """Header time as Unix ns (meaningless, possibly negative, if the sensor clock is unset)."""
        return ntp64_to_unix_ns(self.ntp)

    @property
    def ntp_seconds(self) -> float:
        """Header time as NTP seconds (float): useful when the sensor clock counts from power-up."""
        return self.ntp / 4294967296.0


def decode_header(data, offset: int = 0) -> IbeoHeader:
    """The header at ``offset`` of ``data`` (§2.4); CodecError(BAD_MAGIC) on a wrong magic word."""
    magic, prev, size, reserved, device, dtype, ntp = unpack_from(
        HEADER_STRUCT, data, offset, _NAME, 'header')
    if magic != MAGIC:
        raise CodecError(_NAME, f'magic 0x{magic:08X}, expected 0x{MAGIC:08X}', field='magic',
                         offset=offset, kind=BAD_MAGIC)
    return IbeoHeader(dtype, size, device, ntp, prev, reserved)   # (positional: faster)


def encode_header(header: IbeoHeader) -> bytes:
    return pack(HEADER_STRUCT, (MAGIC, header.previous_size, header.size, header.reserved,
                          header.device_id, header.data_type, header.ntp), _NAME,
                ('magic', 'previous_size', 'size', 'reserved', 'device_id', 'data_type', 'ntp'))


def encode_message(data_type: int, body: bytes, *, device_id: int = 0, ntp: int = 0,
                   previous_size: int = 0) -> bytes:
    """Header + body: one complete Ibeo message ready for the wire or a file."""
    return encode_header(IbeoHeader(data_type=data_type, size=len(body), device_id=device_id,
                                    ntp=ntp, previous_size=previous_size)) + bytes(body)


__all__ = ['MAGIC', 'MAGIC_BYTES', 'HEADER_SIZE', 'HEADER_STRUCT', 'DEFAULT_MAX_BODY',
           'PLAUSIBLE_TYPES', 'IbeoHeader', 'decode_header', 'encode_header', 'encode_message']
