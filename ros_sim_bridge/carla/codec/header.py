"""The info header at the start of every CARLA recorder file (SUPPLEMENT §5.2).

``u16 version`` (always 1 so far), string magic ``CARLA_RECORDER``, ``i64 date`` (Unix seconds
since 1970, not 1900 as the document says), string map name; a string is ``u16 length`` +
UTF-8 bytes without terminator.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

from ros_sim_bridge.core.binary import (BAD_MAGIC, BAD_VALUE, TRUNCATED, CodecError,
                                        encode_prefixed_string, prefixed_string, unpack_from)

MAGIC = 'CARLA_RECORDER'
SUPPORTED_VERSIONS = (1,)
U16 = struct.Struct('<H')
I64 = struct.Struct('<q')


@dataclass(frozen=True)
class InfoHeader:
    version: int
    magic: str
    date: int          # Unix seconds (UTC)
    map_name: str
    size: int = 0      # bytes the header takes in the file


def read_string(data, offset: int, message: str, field: str,
                bad: Optional[list] = None) -> tuple[str, int]:
    """A recorder string (``u16`` length + UTF-8) at ``offset``; (text, offset after it).
    Not UTF-8: CodecError, or with a ``bad`` list U+FFFD in place of the bad bytes and the
    CodecError appended to ``bad`` (core.binary.fixed_string)."""
    return prefixed_string(data, offset, U16, message, field, bad=bad)


def encode_string(text: str, message: str = 'string', field: str = 'text') -> bytes:
    return encode_prefixed_string(text, U16, message, field)


def decode_header(data, bad: Optional[list] = None) -> InfoHeader:
    """The info header at the start of ``data``; CodecError on an empty or short file, a wrong
    magic or version.  A map name that is not UTF-8 is read as in :func:`read_string`."""
    n = len(data)
    if n == 0:
        raise CodecError('InfoHeader', 'empty recording, no CARLA header', offset=0,
                         kind=TRUNCATED)
    try:
        return _decode_header(data, bad)
    except CodecError as err:
        if err.kind != TRUNCATED:
            raise
        raise CodecError('InfoHeader', f'recording of {n} B is shorter than its CARLA header '
                         f'(version, magic, date, map name): {err.detail}', field=err.field,
                         offset=err.offset, kind=TRUNCATED) from None


def _decode_header(data, bad: Optional[list]) -> InfoHeader:
    n = len(data)
    (version,) = unpack_from(U16, data, 0, 'InfoHeader', 'version')
    (mlen,) = unpack_from(U16, data, 2, 'InfoHeader', 'magic.length')
    if mlen == len(MAGIC) and 4 + mlen > n and MAGIC.encode().startswith(bytes(data[4:n])):
        raise CodecError('InfoHeader', f'needs bytes 4..{4 + mlen}, have {n}',
                         field='magic', offset=4, kind=TRUNCATED)
    if mlen != len(MAGIC) or bytes(data[4:4 + mlen]) != MAGIC.encode():
        got = bytes(data[4:4 + min(mlen, 32)])
        raise CodecError('InfoHeader', f'magic is {got!r}, not {MAGIC!r}: not a CARLA recorder '
                         'file', field='magic', offset=2, kind=BAD_MAGIC)
    if version not in SUPPORTED_VERSIONS:
        raise CodecError('InfoHeader', f'header version {version} is not supported (supported: '
                         + ', '.join(map(str, SUPPORTED_VERSIONS)) + ')', field='version',
                         offset=0, kind=BAD_VALUE)
    offset = 4 + mlen
    (date,) = unpack_from(I64, data, offset, 'InfoHeader', 'date')
    map_name, end = read_string(data, offset + 8, 'InfoHeader', 'map', bad)
    return InfoHeader(version, MAGIC, date, map_name, end)


def encode_header(date: int, map_name: str, version: int = 1) -> bytes:
    return (U16.pack(version) + encode_string(MAGIC) + I64.pack(int(date))
            + encode_string(map_name, 'InfoHeader', 'map'))
