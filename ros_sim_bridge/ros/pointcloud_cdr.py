"""sensor_msgs/PointCloud2 serialised straight to CDR from a numpy structured array.

For writers that want the bytes, not the message (bags; ``publisher.publish(cdr)`` takes
serialised bytes too): one copy of the points into the result, no rclpy message and no rclpy
serialisation pass over megabytes of point data.  The bytes are CDR little-endian with the
4-byte encapsulation header, the same message as ``rclpy.serialization.serialize_message`` of
:func:`~.pointcloud.to_pointcloud2` for the same points (tested; only the alignment padding
differs: zero here, uninitialised there).
"""
from __future__ import annotations

import struct
import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .pointcloud import _cached_fields, _host_order
from .stamps import ns_to_sec_nanosec

TYPE_NAME = 'sensor_msgs/msg/PointCloud2'
_ENCAPSULATION = b'\x00\x01\x00\x00'          # CDR, little-endian
_LITTLE = sys.byteorder == 'little'


@dataclass(frozen=True)
class CdrMessage:
    """A message already serialised: its ``pkg/msg/Name`` and its CDR as ``parts`` (buffers
    whose concatenation is the message: a writer that takes parts, like
    :meth:`~.bag.BagWriter.write`, never copies a big point array); ``data`` joins them."""
    type_name: str
    parts: tuple

    @property
    def data(self) -> bytes:
        return b''.join(self.parts)

    def __len__(self) -> int:
        return sum(memoryview(p).nbytes for p in self.parts)


class _Cdr:
    """Little-endian CDR into a bytearray; alignment counted after the encapsulation header."""

    def __init__(self):
        self.buf = bytearray(_ENCAPSULATION)

    def align(self, n: int) -> None:
        pad = -(len(self.buf) - 4) % n
        if pad:
            self.buf += bytes(pad)

    def u32(self, v: int) -> None:
        self.align(4)
        self.buf += struct.pack('<I', v)

    def i32(self, v: int) -> None:
        self.align(4)
        self.buf += struct.pack('<i', v)

    def u8(self, v: int) -> None:
        self.buf.append(v & 0xFF)

    def string(self, s: str) -> None:
        raw = s.encode('utf-8') + b'\0'
        self.u32(len(raw))
        self.buf += raw


@lru_cache(maxsize=64)
def _head_template(dtype: np.dtype, frame_id: str) -> tuple[bytes, int, int]:
    """(head, width offset, data length offset): the CDR of a 1-row PointCloud2 of ``dtype``
    points in ``frame_id`` up to its data, stamp and sizes 0 (row_step is just before the data
    length); the rest depends only on the layout and the frame."""
    c = _Cdr()
    c.i32(0)                                   # stamp: sec, nanosec (offsets 4, 8)
    c.u32(0)
    c.string(frame_id)
    c.u32(1)                                   # height
    width_at = len(c.buf)
    c.u32(0)                                   # width
    fields = _cached_fields(dtype)
    c.u32(len(fields))
    for f in fields:
        c.string(f.name)
        c.u32(f.offset)
        c.u8(f.datatype)
        c.u32(f.count)
    c.u8(0 if _LITTLE else 1)                  # is_bigendian
    c.u32(dtype.itemsize)                      # point_step
    c.u32(0)                                   # row_step
    c.u32(0)                                   # data length
    return bytes(c.buf), width_at, len(c.buf) - 4


_STAMP = struct.Struct('<iI')
_U32 = struct.Struct('<I')
_U32_U32 = struct.Struct('<II')


def pointcloud2_cdr(points: np.ndarray, frame_id: str, stamp_ns: int, *,
                    is_dense: bool = True) -> CdrMessage:
    """The CDR of a 1-row PointCloud2 holding ``points`` (fields from the dtype), in three
    parts: head, the points' own buffer (no copy when they are contiguous and in host order),
    ``is_dense``."""
    points = np.ascontiguousarray(points)
    if not _host_order(points.dtype):
        points = points.astype(points.dtype.newbyteorder('='))
    sec, nanosec = ns_to_sec_nanosec(stamp_ns, source='PointCloud2', field='stamp')
    template, width_at, length_at = _head_template(points.dtype, frame_id)
    head = bytearray(template)
    n, size = len(points), points.nbytes
    _STAMP.pack_into(head, 4, sec, nanosec)
    _U32.pack_into(head, width_at, n)
    _U32_U32.pack_into(head, length_at - 4, size, size)      # row_step, data length
    body = memoryview(points.view(np.uint8).reshape(-1)) if n else b''
    return CdrMessage(TYPE_NAME, (bytes(head), body, b'\x01' if is_dense else b'\x00'))
