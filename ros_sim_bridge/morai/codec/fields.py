"""Field tables and value checks shared by the MORAI message modules.

A layout is written once as a list of ``(name, code)`` pairs in wire order; :func:`struct_of`
and :func:`dtype_of` turn it into a little-endian ``struct.Struct`` (scalar messages) or a
packed numpy structured dtype (record arrays).  Codes: ``b`` int8, ``h`` int16, ``i`` int32,
``f`` float32, ``?`` bool (1 byte), ``<n>s`` fixed string.
"""
from __future__ import annotations

import math
import struct
from typing import Iterable, Sequence

import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError, encode_fixed_string, fixed_string

Fields = Sequence[tuple]

_NUMPY = {'b': '<i1', 'B': '<u1', 'h': '<i2', 'i': '<i4', 'f': '<f4', '?': '?'}


def struct_of(fields: Fields) -> struct.Struct:
    return struct.Struct('<' + ''.join(code for _, code in fields))


def dtype_of(fields: Fields) -> np.dtype:
    out = []
    for name, code in fields:
        out.append((name, 'S' + code[:-1] if code.endswith('s') else _NUMPY[code]))
    return np.dtype(out)


def names_of(fields: Fields) -> list:
    return [name for name, _ in fields]


def floats(*names: str) -> list:
    return [(name, 'f') for name in names]


def xyz(prefix: str) -> list:
    return floats(prefix + '_x', prefix + '_y', prefix + '_z')


# -- text fields ---------------------------------------------------------------------------

def decode_text(data, offset: int, length: int, message: str, field: str) -> str:
    """A fixed ASCII field: cut at the first NUL, drop trailing space padding."""
    return fixed_string(data, offset, length, message, field).rstrip(' ')


def encode_text(value, length: int, message: str, field: str, pad: bytes = b'\0',
                allow_empty: bool = True) -> bytes:
    """``value`` as ASCII padded with ``pad`` to ``length`` bytes; BAD_VALUE if it cannot be."""
    if not isinstance(value, str):
        raise CodecError(message, f'{value!r} is not a string', field=field, kind=BAD_VALUE)
    if '\0' in value:
        raise CodecError(message, f'{value!r} contains a NUL character', field=field,
                         kind=BAD_VALUE)
    if not value and not allow_empty:
        raise CodecError(message, 'must not be empty', field=field, kind=BAD_VALUE)
    if value != value.rstrip(' ') and pad == b' ':
        raise CodecError(message, f'{value!r} ends with spaces, which the space padding '
                         'would swallow', field=field, kind=BAD_VALUE)
    raw = encode_fixed_string(value, length, message, field)   # length / ASCII checks
    return raw.rstrip(b'\0').ljust(length, pad) if pad != b'\0' else raw


# -- value checks (all raise CodecError(kind=BAD_VALUE)) -------------------------------------

INT16 = (-2**15, 2**15 - 1)


def check_int(value, low: int, high: int, message: str, field: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise CodecError(message, f'{value!r} is not an integer', field=field, kind=BAD_VALUE)
    if not low <= value <= high:
        raise CodecError(message, f'{value} outside [{low}, {high}]', field=field,
                         kind=BAD_VALUE)
    return int(value)


def check_enum(value, allowed: Iterable[int], message: str, field: str, meaning: str = '') -> int:
    allowed = tuple(allowed)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value not in allowed:
        raise CodecError(message, f'{value!r} is not one of {allowed}'
                         + (f' ({meaning})' if meaning else ''), field=field, kind=BAD_VALUE)
    return int(value)


def check_float(value, message: str, field: str, low: float = -math.inf,
                high: float = math.inf, unit: str = '') -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                       np.floating)):
        raise CodecError(message, f'{value!r} is not a number', field=field, kind=BAD_VALUE)
    value = float(value)
    if not math.isfinite(value):
        raise CodecError(message, f'{value} is not finite', field=field, kind=BAD_VALUE)
    if not low <= value <= high:
        raise CodecError(message, f'{value}{unit} outside [{low}, {high}]{unit}', field=field,
                         kind=BAD_VALUE)
    if abs(value) > 3.4028234e38:
        raise CodecError(message, f'{value} does not fit a float32', field=field,
                         kind=BAD_VALUE)
    return value


def check_bool(value, message: str, field: str) -> bool:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer))
                                               and value in (0, 1)):
        return bool(value)
    raise CodecError(message, f'{value!r} is not a bool (True/False/0/1)', field=field,
                     kind=BAD_VALUE)


def all_zero(records: np.ndarray) -> np.ndarray:
    """Per record: True where every byte is zero (vectorised, no per-element loop)."""
    raw = np.frombuffer(np.ascontiguousarray(records).tobytes(), dtype=np.uint8)
    return ~raw.reshape(len(records), records.dtype.itemsize).any(axis=1)


def fill_records(dtype: np.dtype, count: int, source, message: str, field: str,
                 droppable: Iterable[str] = ()) -> np.ndarray:
    """``count`` zeroed records of ``dtype`` whose first rows take ``source``'s fields.

    ``source`` is a structured array (any field subset of ``dtype``; missing fields stay 0) or
    None.  More rows than ``count`` raise BAD_VALUE.  Fields in ``droppable`` (e.g. link_id for
    a layout without it) are ignored; other unknown fields raise BAD_VALUE.
    """
    out = np.zeros(count, dtype=dtype)
    if source is None:
        return out
    source = np.asarray(source)
    if source.dtype.names is None:
        raise CodecError(message, 'needs a numpy structured array', field=field, kind=BAD_VALUE)
    n = len(source)
    if n > count:
        raise CodecError(message, f'{n} records, the message holds {count}', field=field,
                         kind=BAD_VALUE)
    unknown = set(source.dtype.names) - set(dtype.names) - set(droppable)
    if unknown:
        raise CodecError(message, f'unknown record fields {sorted(unknown)}', field=field,
                         kind=BAD_VALUE)
    for name in source.dtype.names:
        if name not in dtype.names:
            continue
        column = source[name]
        if column.dtype.kind == 'f' and not np.all(np.isfinite(column)):
            raise CodecError(message, f'non-finite values in {name}', field=field,
                             kind=BAD_VALUE)
        target = out[name]
        if target.dtype.kind == 'S':
            maxlen = target.dtype.itemsize
            try:
                col = column.astype('S') if column.dtype.kind != 'S' else column
            except UnicodeEncodeError:
                raise CodecError(message, f'{name} is not ASCII', field=field,
                                 kind=BAD_VALUE) from None
            if col.dtype.itemsize > maxlen and np.any(np.char.str_len(col) > maxlen):
                raise CodecError(message, f'{name} longer than {maxlen} bytes', field=field,
                                 kind=BAD_VALUE)
            out[name][:n] = col
        else:
            if column.dtype.kind in 'iu':
                info = np.iinfo(target.dtype) if target.dtype.kind in 'iu' else None
                if info is not None and n and (column.min() < info.min or column.max() > info.max):
                    raise CodecError(message, f'{name} outside [{info.min}, {info.max}]',
                                     field=field, kind=BAD_VALUE)
            out[name][:n] = column
    return out
