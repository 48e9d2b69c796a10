"""sensor_msgs/PointCloud2 straight from a numpy structured array, and back.

The fields are the dtype's fields (name, offset, type); ``data`` is the array's bytes, with no
per-point Python work.  (sensor_msgs_py is not available everywhere, so this is self-contained.)
"""
from __future__ import annotations

import sys

import numpy as np
from sensor_msgs.msg import PointCloud2, PointField

_TO_FIELD = {
    np.dtype('int8'): PointField.INT8, np.dtype('uint8'): PointField.UINT8,
    np.dtype('int16'): PointField.INT16, np.dtype('uint16'): PointField.UINT16,
    np.dtype('int32'): PointField.INT32, np.dtype('uint32'): PointField.UINT32,
    np.dtype('float32'): PointField.FLOAT32, np.dtype('float64'): PointField.FLOAT64,
}
_FROM_FIELD = {v: k for k, v in _TO_FIELD.items()}
_LITTLE = sys.byteorder == 'little'


def point_fields(dtype: np.dtype) -> list[PointField]:
    """PointFields for a structured dtype (scalar fields, or sub-arrays as ``count``)."""
    fields = []
    for name in dtype.names:
        ftype, offset = dtype.fields[name][:2]
        base, count = (ftype.base, int(np.prod(ftype.shape))) if ftype.shape else (ftype, 1)
        key = base.newbyteorder('=')
        if key not in _TO_FIELD:
            raise TypeError(f'field {name!r} of type {ftype} has no PointField type')
        fields.append(PointField(name=name, offset=offset, datatype=_TO_FIELD[key], count=count))
    return fields


def to_pointcloud2(points: np.ndarray, header, *, is_dense: bool = True) -> PointCloud2:
    """A 1-row (unorganised) PointCloud2 holding ``points`` (a structured array)."""
    points = np.ascontiguousarray(points)
    dtype = points.dtype
    if any(dtype.fields[n][0].base.byteorder not in ('=', '|', '<' if _LITTLE else '>')
           for n in dtype.names):
        dtype = dtype.newbyteorder('=')
        points = points.astype(dtype)
    msg = PointCloud2()
    msg.header = header
    msg.height = 1
    msg.width = len(points)
    msg.fields = point_fields(dtype)
    msg.is_bigendian = not _LITTLE
    msg.point_step = dtype.itemsize
    msg.row_step = dtype.itemsize * len(points)
    msg.data = points.tobytes()
    msg.is_dense = is_dense
    return msg


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
