"""Bounds-checked binary reading and writing shared by every codec.

Every failure raises :class:`CodecError`, which names the message, the field and the byte
offset, and carries a short ``kind`` that nodes count in their diagnostics.  Nothing in this
package touches sockets, files or rclpy (sans-IO).  numpy is imported by the functions that
work on arrays, when first called: what reads only headers and fixed layouts (``ibeo_idc
info``) does without it.
"""
from __future__ import annotations

import dataclasses
import math
import struct
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

if TYPE_CHECKING:
    import numpy as np

# Diagnostics categories (CodecError.kind).
TRUNCATED = 'truncated'      # fewer bytes than the layout needs
OVERSIZED = 'oversized'      # more bytes than any known layout
UNKNOWN_LAYOUT = 'unknown_layout'  # a size no known release uses
BAD_MAGIC = 'bad_magic'      # wrong magic word / identifier string / tail
BAD_CHECKSUM = 'bad_checksum'
BAD_VALUE = 'bad_value'      # a field outside what the spec allows
WRONG_SOURCE = 'wrong_source'  # valid packet, but not for us (e.g. another vehicle id)


class CodecError(ValueError):
    """Bytes or values that do not fit a protocol.

    ``message`` is the protocol message name, ``field`` the field (or None for the whole
    message), ``offset`` the byte offset where the problem is (or None), ``kind`` one of the
    module-level categories above.
    """

    def __init__(self, message: str, detail: str, *, field: Optional[str] = None,
                 offset: Optional[int] = None, kind: str = BAD_VALUE):
        self.message = message
        self.field = field
        self.offset = offset
        self.kind = kind
        self.detail = detail
        where = message
        if field:
            where += '.' + field
        if offset is not None:
            where += f' @{offset}'
        super().__init__(f'{where}: {detail}')


def require_length(data: bytes, message: str, *, exact: Optional[int] = None,
                   minimum: Optional[int] = None) -> None:
    """Raise TRUNCATED / OVERSIZED unless ``len(data)`` fits."""
    n = len(data)
    if exact is not None:
        if n < exact:
            raise CodecError(message, f'{n} bytes, layout needs {exact}', offset=n, kind=TRUNCATED)
        if n > exact:
            raise CodecError(message, f'{n} bytes, layout has {exact}', offset=exact, kind=OVERSIZED)
    if minimum is not None and n < minimum:
        raise CodecError(message, f'{n} bytes, at least {minimum} needed', offset=n, kind=TRUNCATED)


def unpack_from(fmt: struct.Struct, data, offset: int, message: str, field: str) -> tuple:
    """``fmt.unpack_from`` that raises CodecError(TRUNCATED) instead of struct.error."""
    end = offset + fmt.size
    if offset < 0 or end > len(data):
        raise CodecError(message, f'needs bytes {offset}..{end}, have {len(data)}',
                         field=field, offset=offset, kind=TRUNCATED)
    return fmt.unpack_from(data, offset)


def records(dtype: np.dtype, data, offset: int, count: int, message: str,
            field: str) -> np.ndarray:
    """``count`` structured records of ``dtype`` at ``offset``, bounds-checked, zero-copy."""
    import numpy as np
    if count < 0:
        raise CodecError(message, f'negative count {count}', field=field, offset=offset)
    end = offset + dtype.itemsize * count
    if offset < 0 or end > len(data):
        raise CodecError(message, f'{count} × {dtype.itemsize} B needs bytes {offset}..{end}, '
                         f'have {len(data)}', field=field, offset=offset, kind=TRUNCATED)
    return np.frombuffer(data, dtype=dtype, count=count, offset=offset)


def _scalar_runs(dtype: np.dtype, base: int = 0) -> Optional[list[tuple[int, int, int]]]:
    """(offset, scalar size, count) runs of ``dtype``'s fields in offset order, adjacent
    scalars of one size merged; None when a field is not a plain number (strings, objects)."""
    import numpy as np
    if dtype.names is None:
        if dtype.subdtype is not None:
            sub, shape = dtype.subdtype
            runs = _scalar_runs(sub, base)
            if runs is None or len(runs) != 1:
                return None
            n = int(np.prod(shape))
            return [(base, runs[0][1], runs[0][2] * n)]
        if dtype.kind not in 'biuf' or dtype.itemsize not in (1, 2, 4, 8):
            return None
        return [(base, dtype.itemsize, 1)]
    runs: list[tuple[int, int, int]] = []
    fields = sorted(dtype.fields.values(), key=lambda f: f[1])
    for sub, off, *_ in fields:
        inner = _scalar_runs(sub, base + off)
        if inner is None:
            return None
        for at, size, count in inner:
            if runs and runs[-1][1] == size and runs[-1][0] + size * runs[-1][2] == at:
                runs[-1] = (runs[-1][0], size, runs[-1][2] + count)
            else:
                runs.append((at, size, count))
    return runs


def to_host_order(wire: np.ndarray, host: np.ndarray | np.dtype) -> np.ndarray:
    """``wire`` records (e.g. a big-endian view from :func:`records`) as a new array of the
    same layout in ``host`` byte order: ``wire.astype(host)``, with the bytes no field covers
    (padding) zero, so equal records give equal bytes.  Done as one copy of 4-byte words over
    the whole array, swapped on the way, then, in place, the words that are not one 4-byte
    number put right (bytes swapped back, two 2-byte halves rotated, 8-byte halves exchanged):
    several times faster than numpy's field-by-field cast on big point arrays.  Falls back to
    ``astype`` for layouts it does not handle (strings, differing offsets, record sizes not a
    multiple of 4)."""
    import numpy as np
    host = np.dtype(host)
    runs = _scalar_runs(host)
    if (wire.ndim != 1 or wire.dtype.itemsize != host.itemsize or host.itemsize % 4
            or runs is None or wire.dtype.names != host.names
            or any(wire.dtype.fields[k][1] != host.fields[k][1] for k in host.names or ())):
        return wire.astype(host)
    order = _first_scalar_order(wire.dtype) or '='
    n, step = len(wire), host.itemsize
    out = np.empty(n, host)
    if n == 0:
        return out
    src = wire if wire.flags.c_contiguous else np.ascontiguousarray(wire)
    src_u8, out_u8 = src.view(np.uint8), out.view(np.uint8)
    words = np.ndarray((n, step // 4), np.uint32, out_u8)
    wire_word = np.dtype(np.uint32).newbyteorder(order)
    swapped = order != '=' and wire_word != np.dtype(np.uint32)
    # one pass: the words copied, swapped on the way when the wire order is not the host's
    # (the source may be unaligned)
    np.copyto(words, np.ndarray((n, step // 4), wire_word if swapped else np.uint32, src_u8))
    for op, w, arg in _word_fixups(tuple(runs), step, swapped, np.little_endian):
        col = words[:, w]
        if op == 'swap':                            # bytes (and padding): as they came
            col.byteswap(inplace=True)
            if arg != 0xFFFFFFFF:
                col &= arg
        elif op == 'mask':
            col &= arg
        elif op == 'rot16':                         # two 2-byte numbers
            col[...] = (col >> 16) | (col << 16)
        elif op == 'shr16':                         # 2-byte number, then padding
            col >>= 16
        elif op == 'shl16':                         # padding, then a 2-byte number
            col <<= 16
        elif op == 'pair':                          # an 8-byte number over words w, w + 1
            words[:, [w, w + 1]] = words[:, [w + 1, w]]
        else:                                       # 'copy': a mixed word, from the source
            at, size, count = arg
            kind = np.dtype(f'u{size}')
            np.ndarray((n, count), kind, out_u8, at, (step, size))[...] = \
                np.ndarray((n, count), kind.newbyteorder(order), src_u8, at, (step, size))
    return out


@lru_cache(maxsize=None)
def _word_fixups(runs: tuple, step: int, swapped: bool, little: bool) -> list:
    """The in-place operations that turn whole-word-swapped (or copied) records into the
    host layout with zero padding: (op, word index, argument) in the order to apply them."""
    owner = [None] * step                           # byte → (run start, size) covering it
    for at, size, count in runs:
        for k in range(count):
            for b in range(at + k * size, at + (k + 1) * size):
                owner[b] = (at + k * size, size)
    ops, copies = [], []
    for w in range(step // 4):
        cell = owner[4 * w:4 * w + 4]
        pad = [i for i, c in enumerate(cell) if c is None]
        keep = sum(0xFF << (8 * i if little else 8 * (3 - i)) for i in range(4) if i not in pad)
        sizes = [c[1] if c else 0 for c in cell]
        if not swapped:
            if pad:
                ops.append(('mask', w, keep))
        elif sizes == [4] * 4 and cell[0][0] == 4 * w:
            pass                                        # a 4-byte number: the swap did it
        elif sizes == [8] * 4:
            if cell[0][0] == 4 * w:                     # first half of an aligned 8-byte one
                ops.append(('pair', w, None))
            elif cell[0][0] != 4 * w - 4:
                copies.append(w)
        elif all(s in (0, 1) for s in sizes):
            ops.append(('swap', w, keep))
        elif little and sizes == [2, 2, 2, 2] and cell[0][0] == 4 * w:
            ops.append(('rot16', w, None))
        elif little and sizes == [2, 2, 0, 0] and cell[0][0] == 4 * w:
            ops.append(('shr16', w, None))
        elif little and sizes == [0, 0, 2, 2] and cell[2][0] == 4 * w + 2:
            ops.append(('shl16', w, None))
        else:
            copies.append(w)
    if copies:                                      # mixed words: their fields from the source
        for at, size, count in runs:
            for k in range(count):
                first = at + k * size
                if first // 4 in copies or (first + size - 1) // 4 in copies:
                    ops.append(('copy', first // 4, (first, size, 1)))
        for w in copies:
            cell = owner[4 * w:4 * w + 4]
            if None in cell:
                keep = sum(0xFF << (8 * i if little else 8 * (3 - i))
                           for i in range(4) if cell[i] is not None)
                ops.append(('mask', w, keep))
    return ops


def _first_scalar_order(dtype: np.dtype) -> str:
    """'<' or '>' of the first multi-byte field ('=' resolved to the host's)."""
    little = sys.byteorder == 'little'
    for name in dtype.names or ():
        sub = dtype.fields[name][0]
        sub = sub.subdtype[0] if sub.subdtype is not None else sub
        if sub.names is not None:
            order = _first_scalar_order(sub)
            if order:
                return order
        elif sub.itemsize > 1:
            order = sub.byteorder
            return ('<' if little else '>') if order in '=|' else order
    if dtype.names is None and dtype.itemsize > 1:
        return ('<' if little else '>') if dtype.byteorder in '=|' else dtype.byteorder
    return ''


def fixed_string(data, offset: int, length: int, message: str, field: str,
                 encoding: str = 'ascii', bad: Optional[list] = None) -> str:
    """A NUL-padded string in a fixed-length field (text after the first NUL is ignored).

    Text that is not ``encoding`` raises CodecError(BAD_VALUE); with a ``bad`` list it is
    decoded with U+FFFD for the undecodable bytes instead and the CodecError appended to
    ``bad`` (the field's length is intact, so what follows it still decodes)."""
    if offset < 0 or offset + length > len(data):
        raise CodecError(message, f'string of {length} B needs bytes {offset}..{offset + length}, '
                         f'have {len(data)}', field=field, offset=offset, kind=TRUNCATED)
    raw = bytes(data[offset:offset + length]).split(b'\0', 1)[0]
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if bad is None:
            raise CodecError(message, f'not {encoding}: {exc.reason}', field=field,
                             offset=offset + exc.start) from None
        text = raw.decode(encoding, 'replace')
        shown = text if len(text) <= 40 else text[:40] + '…'
        bad.append(CodecError(message, f'not {encoding}: {exc.reason}; read as {shown!r} '
                              '(U+FFFD for the bad bytes)', field=field,
                              offset=offset + exc.start))
        return text


def encode_fixed_string(value: str, length: int, message: str, field: str,
                        encoding: str = 'ascii') -> bytes:
    """``value`` NUL-padded to ``length`` bytes; CodecError if it does not fit."""
    try:
        raw = value.encode(encoding)
    except UnicodeEncodeError:
        raise CodecError(message, f'{value!r} is not {encoding}', field=field) from None
    if len(raw) > length:
        raise CodecError(message, f'{len(raw)} bytes do not fit the {length}-byte field',
                         field=field)
    return raw.ljust(length, b'\0')


def prefixed_string(data, offset: int, prefix: struct.Struct, message: str, field: str,
                    encoding: str = 'utf-8', bad: Optional[list] = None) -> tuple[str, int]:
    """A length-prefixed string; returns (text, offset after it).  ``bad``: as in
    :func:`fixed_string`."""
    (n,) = unpack_from(prefix, data, offset, message, field + '.length')
    start = offset + prefix.size
    text = fixed_string(data, start, n, message, field, encoding, bad) if n else ''
    return text, start + n


def encode_prefixed_string(value: str, prefix: struct.Struct, message: str, field: str,
                           encoding: str = 'utf-8') -> bytes:
    raw = value.encode(encoding)
    try:
        return prefix.pack(len(raw)) + raw
    except struct.error:
        raise CodecError(message, f'{len(raw)} bytes too long for its length prefix',
                         field=field) from None


def pack(fmt: struct.Struct, values: Sequence, message: str,
         fields: Iterable[str] = ()) -> bytes:
    """``fmt.pack`` that raises CodecError naming the message instead of struct.error."""
    try:
        return fmt.pack(*values)
    except struct.error as exc:
        names = ', '.join(fields)
        raise CodecError(message, f'value out of range for the wire ({exc}); fields: {names}'
                         if names else f'value out of range for the wire ({exc})') from None


def check_range(value, low, high, message: str, field: str, unit: str = '') -> None:
    """CodecError(BAD_VALUE) unless ``low <= value <= high``."""
    if not (low <= value <= high):
        raise CodecError(message, f'{value}{unit} outside [{low}, {high}]{unit}', field=field)


def first_non_finite(record) -> Optional[str]:
    """The name of the first float of a decoded ``record`` (a dataclass; in its tuples each
    element, ``name[i]``; in its numpy structured arrays the float fields of every row) that
    is NaN or ±Inf, None when all are finite: a value no pose, size or rate can be made of."""
    np = sys.modules.get('numpy')             # a record holds arrays only once it is imported
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            return f.name
        if isinstance(value, tuple):
            for i, item in enumerate(value):
                if isinstance(item, float) and not math.isfinite(item):
                    return f'{f.name}[{i}]'
        if np is not None and isinstance(value, np.ndarray) and value.dtype.names:
            for name in value.dtype.names:
                column = value[name]
                if column.dtype.kind == 'f' and not np.isfinite(column).all():
                    return f'{f.name}.{name}'
    return None


def require_finite(record, message: str) -> None:
    """CodecError(BAD_VALUE) naming the field when :func:`first_non_finite` finds one in
    ``record`` (of the message ``message``)."""
    bad = first_non_finite(record)
    if bad is not None:
        raise CodecError(message, f'{bad} is not a finite number', field=bad, kind=BAD_VALUE)
