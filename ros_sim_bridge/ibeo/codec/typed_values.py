"""Ibeo typed key/value entries (big-endian): the object properties of 0x2281/0x2291 (spec §12)
and the measurements of a measurement list 0x2821 (spec §13/§21).

Entry = key (UINT16) + type id (UINT8) + value whose size the type id gives (§21 table);
strings (type 12) are NUL-terminated ASCII (§21: "null terminated character array").
"""
from __future__ import annotations

import struct
from typing import Any

from ros_sim_bridge.core.binary import BAD_VALUE, TRUNCATED, CodecError, unpack_from

VOID, FLOAT, DOUBLE, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL, STRING = \
    range(13)
TYPE_NAMES = ('void', 'float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32',
              'uint32', 'int64', 'uint64', 'bool', 'string')
_FORMATS = {FLOAT: '>f', DOUBLE: '>d', INT8: '>b', UINT8: '>B', INT16: '>h', UINT16: '>H',
            INT32: '>i', UINT32: '>I', INT64: '>q', UINT64: '>Q', BOOL: '>?'}
_STRUCTS = {k: struct.Struct(v) for k, v in _FORMATS.items()}
_ENTRY = struct.Struct('>HB')
ENTRY_HEAD_SIZE = _ENTRY.size      # 3


def read_cstring(data, offset: int, message: str, field: str) -> tuple[str, int]:
    """A NUL-terminated ASCII string at ``offset``: (text, offset after the NUL)."""
    end = bytes(data[offset:]).find(b'\0') if offset <= len(data) else -1
    if end < 0:
        raise CodecError(message, 'string without its terminating NUL before the end',
                         field=field, offset=offset, kind=TRUNCATED)
    raw = bytes(data[offset:offset + end])
    try:
        return raw.decode('ascii'), offset + end + 1
    except UnicodeDecodeError as exc:
        raise CodecError(message, f'not ascii: {exc.reason}', field=field,
                         offset=offset + exc.start) from None


def read_entries(data, offset: int, count: int, message: str,
                 field: str) -> tuple[list[tuple[int, int, Any]], int]:
    """``count`` entries from ``offset``: ([(key, type id, value)], offset after them).
    CodecError(TRUNCATED) past the end, (BAD_VALUE) for an unknown type id (its size is
    unknown, so nothing after it can be read)."""
    if count * ENTRY_HEAD_SIZE > len(data) - offset:
        raise CodecError(message, f'{count} entries need at least {count * ENTRY_HEAD_SIZE} '
                         f'bytes, have {len(data) - offset}', field=field, offset=offset,
                         kind=TRUNCATED)
    out = []
    for i in range(count):
        key, type_id = unpack_from(_ENTRY, data, offset, message, f'{field}[{i}]')
        offset += ENTRY_HEAD_SIZE
        if type_id == VOID:
            value = None
        elif type_id == STRING:
            value, offset = read_cstring(data, offset, message, f'{field}[{i}].value')
        elif type_id in _STRUCTS:
            st = _STRUCTS[type_id]
            (value,) = unpack_from(st, data, offset, message, f'{field}[{i}].value')
            offset += st.size
        else:
            raise CodecError(message, f'type id {type_id} unknown (0..12)',
                             field=f'{field}[{i}].type', offset=offset - 1, kind=BAD_VALUE)
        out.append((key, type_id, value))
    return out, offset


def encode_entries(entries) -> bytes:
    """The bytes of [(key, type id, value)] (no count in front)."""
    parts = []
    for key, type_id, value in entries:
        parts.append(_ENTRY.pack(key, type_id))
        if type_id == STRING:
            parts.append(str(value).encode('ascii') + b'\0')
        elif type_id != VOID:
            parts.append(_STRUCTS[type_id].pack(value))
    return b''.join(parts)
