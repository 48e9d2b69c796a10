"""MORAI SIM UDP framing: identifier string, ``data_length``, ``aux_data``, payload, tail.

SUPPLEMENT §1.1 (offsets) and §1.4 (how receivers choose a layout)::

    offset 0      N bytes  ASCII identifier '#...$' (no NUL)
    offset N      int32    data_length = payload bytes
    offset N+4    3×int32  aux_data (zeros, ignored)
    offset N+16   L bytes  payload, packed little-endian
    offset N+16+L 2 bytes  tail b'\\r\\n'          total = N + 18 + L

A message type has one or more :class:`Layout` (release forms).  :func:`select_layout` checks
the identifier (BAD_MAGIC), reads ``data_length``, picks the layout whose (data_length, total)
pair matches the datagram exactly, checks the tail (BAD_MAGIC) and never guesses: an unknown
``data_length`` raises UNKNOWN_LAYOUT naming the sizes; a known one with the wrong datagram
size raises TRUNCATED / OVERSIZED.  An unknown layout is an :class:`UnknownLayout`, which
carries the ``data_length`` read, so a receiver can report it without parsing again.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from ros_sim_bridge.core.binary import (BAD_MAGIC, OVERSIZED, TRUNCATED, UNKNOWN_LAYOUT, CodecError, pack,
                      unpack_from)

TAIL = b'\r\n'
_INT32 = struct.Struct('<i')
_AUX = struct.Struct('<3i')
HEADER_EXTRA = 4 + 12           # data_length + aux_data after the identifier
FRAME_OVERHEAD = HEADER_EXTRA + len(TAIL)   # total = len(identifier) + 18 + data_length

# Identifier strings (SUPPLEMENT §1.2).  Get and Set TrafficLight share one string.
ID_CTRL_CMD = b'#MoraiCtrlCmd$'
ID_EGO_STATUS = b'#MoraiInfo$'
ID_OBJECT_INFO = b'#MoraiObjInfo$'
ID_MULTI_EGO = b'#MultiEgoSetting$'
ID_TRAFFIC_LIGHT = b'#TrafficLight$'
ID_COLLISION = b'#CollisionData$'
ID_VEHICLE_COLLISION = b'#VehicleCollision$'
ID_INTERSECTION_STATUS = b'#IntStatus$'
ID_SET_INTERSECTION = b'#SetIntStatus$'
ID_SCENARIO_LOAD = b'#ScenarioLoad$'
ID_SAVE_SENSOR_DATA = b'#SaveSensorData$'
ID_SENSOR_CONTROL = b'#SensorControl$'
ID_LAMP_CONTROL = b'#LampControl$'


class UnknownLayout(CodecError):
    """UNKNOWN_LAYOUT: a ``data_length`` no known layout has (SUPPLEMENT §1.4), kept in
    :attr:`data_length`."""

    def __init__(self, message: str, detail: str, *, data_length: int,
                 offset: Optional[int] = None):
        super().__init__(message, detail, field='data_length', offset=offset,
                         kind=UNKNOWN_LAYOUT)
        self.data_length = data_length


@dataclass(frozen=True)
class Layout:
    """One release form of a message: its payload size, datagram size and whether it has a tail."""
    name: str
    identifier: bytes
    data_length: int
    tail: bool = True

    @property
    def payload_offset(self) -> int:
        return len(self.identifier) + HEADER_EXTRA

    @property
    def total(self) -> int:
        return self.payload_offset + self.data_length + (len(TAIL) if self.tail else 0)


def peek_identifier(datagram) -> Optional[bytes]:
    """The leading ``#...$`` identifier (at most 32 bytes scanned), or None if there is none."""
    head = bytes(datagram[:32])
    if not head.startswith(b'#'):
        return None
    end = head.find(b'$')
    return head[:end + 1] if end > 0 else None


def read_data_length(datagram, identifier: bytes, message: str) -> int:
    """Check the identifier and return ``data_length`` (BAD_MAGIC / TRUNCATED on failure)."""
    n = len(identifier)
    head = bytes(datagram[:n])
    if not head:
        raise CodecError(message, 'empty datagram', field='identifier', offset=0,
                         kind=TRUNCATED)
    if head != identifier[:len(head)]:
        found = peek_identifier(datagram)
        raise CodecError(message, f'identifier {found or head!r} is not {identifier!r}',
                         field='identifier', offset=0, kind=BAD_MAGIC)
    if len(head) < n:
        raise CodecError(message, f'{len(head)} bytes end inside the identifier',
                         field='identifier', offset=len(head), kind=TRUNCATED)
    (data_length,) = unpack_from(_INT32, datagram, n, message, 'data_length')
    return data_length


def select_layout(datagram, layouts: Sequence[Layout], message: str,
                  hints: Optional[Mapping[int, str]] = None) -> Layout:
    """The layout of ``layouts`` (one identifier) that this datagram is, or CodecError.

    ``hints`` maps data_length values of *other* messages sharing the identifier to their names
    (for a clearer UNKNOWN_LAYOUT text, e.g. Set vs Get TrafficLight).
    """
    identifier = layouts[0].identifier
    data_length = read_data_length(datagram, identifier, message)
    size = len(datagram)
    candidates = [lay for lay in layouts if lay.data_length == data_length]
    if not candidates:
        known = ', '.join(f'{lay.data_length}/{lay.total}' for lay in layouts)
        detail = (f'data_length {data_length} in a {size}-byte datagram matches no known '
                  f'layout (known data_length/total: {known})')
        if hints and data_length in hints:
            detail += f'; data_length {data_length} is {hints[data_length]}'
        raise UnknownLayout(message, detail, data_length=data_length, offset=len(identifier))
    for lay in candidates:
        if lay.total == size:
            if lay.tail and bytes(datagram[size - 2:]) != TAIL:
                raise CodecError(message, f'tail {bytes(datagram[size - 2:])!r} is not '
                                 f'{TAIL!r} (layout {lay.name})', field='tail',
                                 offset=size - 2, kind=BAD_MAGIC)
            return lay
    totals = sorted(lay.total for lay in candidates)
    names = '/'.join(str(t) for t in totals)
    if size > totals[-1]:
        raise CodecError(message, f'{size} bytes, data_length {data_length} means {names}',
                         offset=totals[-1], kind=OVERSIZED)
    raise CodecError(message, f'{size} bytes, data_length {data_length} means {names}',
                     offset=size, kind=TRUNCATED)


def build_frame(layout: Layout, payload: bytes, message: str,
                aux: Sequence[int] = (0, 0, 0)) -> bytes:
    """Identifier + data_length + aux + payload (+ tail) for ``layout``."""
    if len(payload) != layout.data_length:
        raise CodecError(message, f'payload of {len(payload)} B, layout {layout.name} has '
                         f'{layout.data_length} B')
    head = layout.identifier + _INT32.pack(layout.data_length) + pack(
        _AUX, tuple(aux), message, ('aux_data',))
    return head + payload + (TAIL if layout.tail else b'')


def layout_by_name(layouts: Sequence[Layout], name: str, message: str) -> Layout:
    for lay in layouts:
        if lay.name == name:
            return lay
    raise CodecError(message, f'unknown layout {name!r}; known: '
                     + ', '.join(lay.name for lay in layouts), field='layout')
