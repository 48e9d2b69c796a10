"""sensor_msgs/PointCloud2 straight from a numpy structured array, and back.

The fields are the dtype's fields (name, offset, type); ``data`` is the array's bytes, with no
per-point Python work and one copy at most: :func:`to_pointcloud2` copies the points into the
message once, :class:`CloudBuffer` lets a builder write them into a reused message directly.
(sensor_msgs_py is not available everywhere, so this is self-contained.)
"""
from __future__ import annotations

import array
import functools
import sys

import numpy as np

_LITTLE = sys.byteorder == 'little'
#: numpy type → sensor_msgs/PointField ``datatype`` (PointField.msg: INT8 = 1 … FLOAT64 = 8)
POINT_FIELD_TYPES = {np.dtype(name): k for k, name in enumerate(
    ('int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float32', 'float64'), 1)}


def host_order(dtype: np.dtype) -> bool:
    """Whether every field of the structured ``dtype`` is in the host's byte order."""
    return all(dtype.fields[n][0].base.byteorder in ('=', '|', '<' if _LITTLE else '>')
               for n in dtype.names)


def point_field_values(dtype: np.dtype) -> list:
    """sensor_msgs/PointField values (name, offset, datatype, count: a sub-array's size) of
    each field of a structured dtype; TypeError for a type PointField has not."""
    fields = []
    for name in dtype.names:
        ftype, offset = dtype.fields[name][:2]
        base, count = (ftype.base, int(np.prod(ftype.shape))) if ftype.shape else (ftype, 1)
        kind = POINT_FIELD_TYPES.get(base.newbyteorder('='))
        if kind is None:
            raise TypeError(f'field {name!r} of type {ftype} has no PointField type')
        fields.append({'name': name, 'offset': offset, 'datatype': kind, 'count': count})
    return fields


_TO_FIELD, _host_order = POINT_FIELD_TYPES, host_order
_FROM_FIELD = {v: k for k, v in _TO_FIELD.items()}


def point_fields(dtype: np.dtype) -> list[PointField]:
    """PointFields for a structured dtype (scalar fields, or sub-arrays as ``count``)."""
    from sensor_msgs.msg import PointField     # not imported by the CDR writers' start-up
    return [PointField(**value) for value in point_field_values(dtype)]


_cached_fields = functools.lru_cache(maxsize=32)(point_fields)


def _set_data(msg: PointCloud2, data: array.array) -> None:
    """msg.data = data without the setter's copy (rosidl keeps the field in ``_data`` and the
    setter only wraps the value in a new array.array when field checks are off)."""
    if isinstance(getattr(type(msg), 'data', None), property) and hasattr(msg, '_data'):
        msg._data = data
    else:  # another rosidl generator: the documented way
        msg.data = data


def _fill(msg: PointCloud2, header, dtype: np.dtype, n: int, is_dense: bool) -> PointCloud2:
    msg.header = header
    msg.height = 1
    msg.width = n
    msg.fields = list(_cached_fields(dtype))
    msg.is_bigendian = not _LITTLE            # the dtype is in host order (checked by callers)
    msg.point_step = dtype.itemsize
    msg.row_step = dtype.itemsize * n
    msg.is_dense = is_dense
    return msg


def to_pointcloud2(points: np.ndarray, header, *, is_dense: bool = True) -> PointCloud2:
    """A 1-row (unorganised) PointCloud2 holding a copy of ``points`` (a structured array;
    fields in another byte order are converted to the host's)."""
    points = np.ascontiguousarray(points)
    if not _host_order(points.dtype):
        points = points.astype(points.dtype.newbyteorder('='))
    data = array.array('B')
    data.frombytes(points.view(np.uint8).reshape(-1))
    from sensor_msgs.msg import PointCloud2
    msg = PointCloud2()
    _set_data(msg, data)
    return _fill(msg, header, points.dtype, len(points), is_dense)


class CloudBuffer:
    """One reusable PointCloud2 whose data array a builder writes the points into directly.

    rclpy serialises a message inside ``publish``, so once publish returns the buffer is free
    for the next cloud: no per-cloud allocation (and page faults) of megabyte arrays, and no
    copy between the point array and the message.  Use from one thread::

        points = buf.points(n)          # fill it in place
        pub.publish(buf.message(points, header)); del points
    """

    def __init__(self, dtype: np.dtype):
        self.dtype = np.dtype(dtype)
        if not _host_order(self.dtype):
            raise ValueError(f'{self.dtype} is not in host byte order')
        self.data = array.array('B')
        from sensor_msgs.msg import PointCloud2
        self.msg = PointCloud2()
        _set_data(self.msg, self.data)

    def points(self, n: int) -> np.ndarray:
        """A writable array of ``n`` points inside the message buffer.  Every earlier array from
        here must be gone (the buffer is resized in place)."""
        need = n * self.dtype.itemsize
        have = len(self.data)
        if have < need:
            self.data.frombytes(bytes(need - have))
        elif have > need:
            del self.data[need:]
        return np.frombuffer(self.data, self.dtype, count=n) if n else np.empty(0, self.dtype)

    def message(self, points: np.ndarray, header, *, is_dense: bool = True) -> PointCloud2:
        """The message holding ``points`` (the array last returned by :meth:`points`)."""
        if points.dtype != self.dtype or len(points) * self.dtype.itemsize != len(self.data):
            raise ValueError('points is not the array last returned by points()')
        _set_data(self.msg, self.data)
        return _fill(self.msg, header, self.dtype, len(points), is_dense)


def from_pointcloud2(msg: PointCloud2) -> np.ndarray:
    """The structured array a PointCloud2 carries (fields by name and offset)."""
    order = '>' if msg.is_bigendian else '<'
    names, formats, offsets = [], [], []
    for f in msg.fields:
        base = _FROM_FIELD[f.datatype].newbyteorder(order)
        names.append(f.name)
        formats.append((base, (f.count,)) if f.count > 1 else base)
        offsets.append(f.offset)
    dtype = np.dtype({'names': names, 'formats': formats, 'offsets': offsets,
                      'itemsize': msg.point_step})
    return np.frombuffer(bytes(msg.data), dtype=dtype, count=msg.width * msg.height)
