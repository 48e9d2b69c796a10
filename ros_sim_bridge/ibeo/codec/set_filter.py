"""ECU Set Filter command (spec §20): command id 0x0005 inside a 0x2010 message, payload
big-endian although LUX commands in 0x2010 are little-endian (SUPPLEMENT §3.3).

Payload: UINT16 0x0005, UINT16 number of following UINT16 entries (2 per range), then the
ranges (first type, last type).  Example from §20: ``00 05 00 02 00 00 ff ff`` = all types.
The ECU answers with a 0x2020 whose data is 0x0005.

Not registered with the registry (0x2010 decodes as a LUX command there): call
:func:`is_set_filter` on a 0x2010 body first.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import BAD_VALUE, TRUNCATED, CodecError, unpack_from
from .header import encode_message

COMMAND_DATA_TYPE = 0x2010
REPLY_DATA_TYPE = 0x2020
SET_FILTER = 0x0005
NAME = 'ibeo_ecu_set_filter'
ALL_TYPES = ((0x0000, 0xFFFF),)
SCAN_TYPES = ((0x2202, 0x220F),)
OBJECT_TYPES = ((0x2220, 0x222F),)
_HEAD = struct.Struct('>HH')


@dataclass(frozen=True)
class SetFilter:
    ranges: tuple = ALL_TYPES

    def accepts(self, data_type: int) -> bool:
        return any(lo <= data_type <= hi for lo, hi in self.ranges)


def encode_set_filter(flt: SetFilter) -> bytes:
    """The 0x2010 body (§20)."""
    parts = [_HEAD.pack(SET_FILTER, 2 * len(flt.ranges))]
    for lo, hi in flt.ranges:
        if not (0 <= lo <= hi <= 0xFFFF):
            raise CodecError(NAME, f'range 0x{lo:X}..0x{hi:X} is not a UINT16 range',
                             field='ranges')
        parts.append(struct.pack('>HH', lo, hi))
    return b''.join(parts)


def set_filter_message(flt: SetFilter = SetFilter(), *, device_id: int = 0) -> bytes:
    """The complete message (header + body) to send after every (re)connect."""
    return encode_message(COMMAND_DATA_TYPE, encode_set_filter(flt), device_id=device_id)


def is_set_filter(body) -> bool:
    """True when a 0x2010 body is the big-endian ECU Set Filter (LUX ids are little-endian and
    none of them is 0x0500)."""
    return len(body) >= 2 and body[0] == 0x00 and body[1] == SET_FILTER


def decode_set_filter(body) -> SetFilter:
    cmd, n = unpack_from(_HEAD, body, 0, NAME, 'header')
    if cmd != SET_FILTER:
        raise CodecError(NAME, f'command id 0x{cmd:04X}, expected 0x0005', field='command_id',
                         offset=0, kind=BAD_VALUE)
    if n % 2:
        raise CodecError(NAME, f'{n} entries: ranges need an even number', field='count',
                         offset=2, kind=BAD_VALUE)
    if 4 + 2 * n > len(body):
        raise CodecError(NAME, f'{n} entries need bytes 4..{4 + 2 * n}, have {len(body)}',
                         field='ranges', offset=4, kind=TRUNCATED)
    values = struct.unpack_from(f'>{n}H', body, 4)
    ranges = tuple(zip(values[0::2], values[1::2]))
    for i, (lo, hi) in enumerate(ranges):
        if lo > hi:
            raise CodecError(NAME, f'range {i} 0x{lo:04X}..0x{hi:04X} is reversed',
                             field=f'ranges[{i}]', offset=4 + 4 * i, kind=BAD_VALUE)
    return SetFilter(ranges)


def is_set_filter_ack(body) -> bool:
    """True for the ECU's 0x2020 answer to Set Filter (data 0x0005, big-endian)."""
    return bytes(body[:2]) == b'\x00\x05'


def is_set_filter_reply(body) -> bool:
    """True for a 0x2020 answering Set Filter: 0x0005 (done) or 0x8005 (refused; the document
    names only 0x0005, the failure bit is the LUX convention of §7.1), both big-endian."""
    return len(body) >= 2 and body[0] & 0x7F == 0x00 and body[1] == SET_FILTER


def set_filter_reply_id(body) -> int:
    """The reply id of a Set Filter answer (big-endian UINT16: 0x0005 or 0x8005)."""
    return int.from_bytes(bytes(body[:2]), 'big')


def encode_set_filter_reply(success: bool = True) -> bytes:
    """The 0x2020 body an ECU answers Set Filter with (``00 05``; ``80 05`` when refused)."""
    return struct.pack('>H', SET_FILTER | (0 if success else 0x8000))


def parse_ranges(text: str) -> tuple:
    """Data-type ranges from what a user types: ids and ranges separated by commas or blanks,
    hex (``0x2205``) or decimal, a range as ``first-last`` or ``first..last``; ``all`` =
    0x0000..0xFFFF.  ``''`` gives () (= leave the device's filter alone).  ValueError names the
    bad item."""
    out = []
    for item in text.replace(',', ' ').split():
        if item.lower() == 'all':
            out.extend(ALL_TYPES)
            continue
        lo_text, sep, hi_text = item.replace('..', '-').partition('-')
        try:
            lo = int(lo_text, 0)
            hi = int(hi_text, 0) if sep else lo
        except ValueError:
            raise ValueError(f'{item!r} is not a data type (0x2205) or a range '
                             '(0x2200-0x22FF)') from None
        if not (0 <= lo <= hi <= 0xFFFF):
            raise ValueError(f'{item!r} is not a UINT16 range first <= last')
        out.append((lo, hi))
    return tuple(out)


def format_ranges(ranges) -> str:
    """``0x2205, 0x2280-0x2281`` (the inverse of :func:`parse_ranges`)."""
    return ', '.join(f'0x{lo:04X}' if lo == hi else f'0x{lo:04X}-0x{hi:04X}'
                     for lo, hi in ranges)
