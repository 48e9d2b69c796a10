"""sensor_msgs/PointCloud2 serialised straight to CDR from a numpy structured array.

For writers that want the bytes, not the message (bags; ``publisher.publish(cdr)`` takes
serialised bytes too): one copy of the points into the result, no rclpy message and no rclpy
serialisation pass over megabytes of point data.  The bytes are CDR little-endian with the
4-byte encapsulation header, the same message as ``rclpy.serialization.serialize_message`` of
:func:`~.pointcloud.to_pointcloud2` for the same points (tested; only the alignment padding
differs: zero here, uninitialised there).
"""
from __future__ import annotations

import ctypes
import struct
import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ros_sim_bridge.core.native import new_bytes, rewrite_bytes

from .cdr_template import Slot, build
from .pointcloud import host_order, point_field_values
from .stamps import ns_to_sec_nanosec

TYPE_NAME = 'sensor_msgs/msg/PointCloud2'
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


@lru_cache(maxsize=64)
def _head_template(dtype: np.dtype, frame_id: str) -> tuple:
    """(head, stamp offset, width offset, row_step offset): the CDR of a 1-row PointCloud2 of
    ``dtype`` points in ``frame_id`` up to its data (:func:`.cdr_template.build`, the data
    length the last 4 bytes), stamp and sizes 0; the rest depends only on the layout and the
    frame."""
    tmpl = build(TYPE_NAME, {
        'header': {'stamp': Slot('stamp'), 'frame_id': frame_id}, 'height': 1,
        'width': Slot('width'), 'fields': point_field_values(dtype),
        'is_bigendian': not _LITTLE, 'point_step': dtype.itemsize,
        'row_step': Slot('row_step'), 'data': [], 'is_dense': Slot('dense')})
    at = {name: 4 + int(index.reshape(-1)[0]) * dtype_.itemsize
          for name, (dtype_, index) in tmpl.slots.items()}
    if at['dense'] != len(tmpl.data) - 1 or at['row_step'] != len(tmpl.data) - 9:
        raise AssertionError('PointCloud2 layout: row_step, data length, is_dense last')
    return tmpl.data[:-1], at['stamp'], at['width'], at['row_step']


_STAMP = struct.Struct('<iI')
#: dtype → whether it is in host byte order (:func:`.pointcloud.host_order`)
_HOST_ORDER: dict = {}
_U32 = struct.Struct('<I')
_U32_U32 = struct.Struct('<II')


def pointcloud2_cdr(points: np.ndarray, frame_id: str, stamp_ns: int, *,
                    is_dense: bool = True) -> CdrMessage:
    """The CDR of a 1-row PointCloud2 holding ``points`` (fields from the dtype), in three
    parts: head, the points' own buffer (no copy when they are contiguous and in host order),
    ``is_dense``."""
    points = np.ascontiguousarray(points)
    host = _HOST_ORDER.get(points.dtype)
    if host is None:                # the field walk costs 2.5 µs: once per layout
        host = _HOST_ORDER[points.dtype] = host_order(points.dtype)
    if not host:
        points = points.astype(points.dtype.newbyteorder('='))
    sec, nanosec = ns_to_sec_nanosec(stamp_ns, source='PointCloud2', field='stamp')
    template, stamp_at, width_at, row_step_at = _head_template(points.dtype, frame_id)
    head = bytearray(template)
    n, size = len(points), points.nbytes
    _STAMP.pack_into(head, stamp_at, sec, nanosec)
    _U32.pack_into(head, width_at, n)
    _U32_U32.pack_into(head, row_step_at, size, size)      # row_step, data length
    body = memoryview(points.view(np.uint8).reshape(-1)) if n else b''
    return CdrMessage(TYPE_NAME, (bytes(head), body, b'\x01' if is_dense else b'\x00'))


class CloudCdr:
    """PointCloud2 messages of ``dtype`` points in ``frame_id`` built where they are
    published: :meth:`points` gives a writable array of n points inside the bytes of a new
    message (a builder or decoder writes the points there, nothing copies them afterwards),
    :meth:`message` sets the stamp and sizes and hands the ``bytes`` over
    (``publisher.publish`` takes them as they are).  One message at a time, one thread."""

    def __init__(self, dtype: np.dtype, frame_id: str):
        self.dtype = np.dtype(dtype)
        if not host_order(self.dtype):
            raise ValueError(f'{self.dtype} is not in host byte order')
        self.frame_id = frame_id
        self._head, self._stamp_at, self._width_at, self._row_step_at = _head_template(
            self.dtype, frame_id)
        self._msg = None
        self._memory = None
        self._points = None
        self._last = None          # the last message handed over

    def points(self, n: int) -> np.ndarray:
        """A writable array of ``n`` points in a new message (the earlier one not handed over
        is dropped; an array of it keeps its memory until the array goes).  The message is
        the last one handed over when nothing holds that any more and it has the size
        (:func:`~ros_sim_bridge.core.native.rewrite_bytes`), else a new ``bytes``."""
        head = len(self._head)
        size = head + n * self.dtype.itemsize + 1
        at = None
        # two references: _last and the call's argument (an array of it left, or the
        # message itself held anywhere, makes more)
        if self._last is not None and len(self._last) == size and \
                sys.getrefcount(self._last) == 2:
            at = rewrite_bytes(self._last)
        if at is None:
            self._last, at = new_bytes(size)     # written here before anyone sees it
        msg = self._last
        memory = (ctypes.c_uint8 * size).from_address(at)
        memory.msg = msg                         # alive while a view of it is
        ctypes.memmove(at, self._head, head)
        # (frombuffer: not view(), whose dtype checks cost a microsecond)
        points = np.frombuffer(memory, self.dtype, n, head)
        self._msg, self._memory, self._points = msg, memory, points
        return points

    def holds(self, points: np.ndarray) -> bool:
        """True when ``points`` is the array last returned by :meth:`points`, its message not
        handed over yet."""
        return points is self._points and self._msg is not None

    def message(self, points: np.ndarray, stamp, *, is_dense: bool = True) -> bytes:
        """The message holding ``points`` (the array last returned by :meth:`points`), stamped
        ``stamp`` ((sec, nanosec))."""
        memory, msg = self._memory, self._msg
        if not self.holds(points):
            raise ValueError('points is not the array last returned by points()')
        self._msg = self._memory = self._points = None
        size = points.nbytes
        _STAMP.pack_into(memory, self._stamp_at, *stamp)
        _U32.pack_into(memory, self._width_at, len(points))
        _U32_U32.pack_into(memory, self._row_step_at, size, size)
        memory[len(memory) - 1] = 1 if is_dense else 0
        return msg
