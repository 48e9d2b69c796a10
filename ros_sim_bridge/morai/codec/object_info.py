"""Object Info (``#MoraiObjInfo$``, simulator → client): the 20 objects nearest the ego.

Spec: morai-sim-udp.txt "Object Info"; SUPPLEMENT §1.3–1.4.  Layouts (records start at 30, or
at 38 after sec/nsec int32):

==========  ===========  =====  ==========================================
name        data_length  total  payload
==========  ===========  =====  ==========================================
obj68       1360         1392   20 × 68-byte records
obj68_ts    1368         1400   sec, nsec, 20 × 68-byte records
obj106      2120         2152   20 × 106-byte records (68 + link_id[38])
obj106_ts   2128         2160   sec, nsec, 20 × 106-byte records
==========  ===========  =====  ==========================================

The document's "1472 bytes" is a buffer size no release sends; it is rejected as
UNKNOWN_LAYOUT.  Empty slots have ``obj_id == 0`` (SUPPLEMENT §1.3).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import pack, records
from .fields import dtype_of, fill_records, floats, xyz
from .framing import ID_OBJECT_INFO, Layout, build_frame, layout_by_name, select_layout

MESSAGE = 'Object Info'
SLOTS = 20

# Object types (ObjType)
OBJ_TYPE_EGO = -1
OBJ_TYPE_PEDESTRIAN = 0
OBJ_TYPE_NPC_VEHICLE = 1
OBJ_TYPE_OBSTACLE = 2

_FIELDS_68 = [('obj_id', 'h'), ('obj_type', 'h'), *xyz('pos'), ('heading', 'f'), *xyz('size'),
              *floats('overhang', 'wheelbase', 'rear_overhang'), *xyz('velocity'),
              *xyz('accel')]
_FIELDS_106 = _FIELDS_68 + [('link_id', '38s')]
RECORD_DTYPE_68 = dtype_of(_FIELDS_68)      # 68 B wire record
RECORD_DTYPE_106 = dtype_of(_FIELDS_106)    # 106 B wire record
#: The dtype every decode returns (link_id is b'' for 68-byte layouts).  Units: pos m (map
#: ENU), heading deg, size m (x length, y width, z height), overhang/wheelbase/rear_overhang m,
#: velocity km/h, accel m/s².
OBJECT_DTYPE = RECORD_DTYPE_106

_STAMP = struct.Struct('<ii')
_RECORD = {'obj68': RECORD_DTYPE_68, 'obj68_ts': RECORD_DTYPE_68,
           'obj106': RECORD_DTYPE_106, 'obj106_ts': RECORD_DTYPE_106}
_STAMPED = {'obj68_ts', 'obj106_ts'}

LAYOUTS = tuple(
    Layout(name, ID_OBJECT_INFO, SLOTS * _RECORD[name].itemsize
           + (_STAMP.size if name in _STAMPED else 0))
    for name in ('obj68', 'obj68_ts', 'obj106', 'obj106_ts'))
LAYOUT_NAMES = tuple(lay.name for lay in LAYOUTS)
DEFAULT_LAYOUT = 'obj106_ts'


@dataclass
class ObjectInfo:
    """Decoded Object Info: all 20 slots plus which of them are empty."""
    layout: str
    sec: Optional[int]          # sim time, s (``*_ts`` layouts; else None)
    nsec: Optional[int]         # sim time, ns
    objects: np.ndarray         # shape (20,), OBJECT_DTYPE
    empty: np.ndarray           # shape (20,), bool: slot unused (obj_id == 0)

    def present(self) -> np.ndarray:
        """The non-empty slots, in wire order."""
        return self.objects[~self.empty]


def decode_object_info(datagram) -> ObjectInfo:
    layout = select_layout(datagram, LAYOUTS, MESSAGE)
    offset = layout.payload_offset
    sec = nsec = None
    if layout.name in _STAMPED:
        sec, nsec = _STAMP.unpack_from(datagram, offset)
        offset += _STAMP.size
    wire = records(_RECORD[layout.name], datagram, offset, SLOTS, MESSAGE, 'objects')
    if wire.dtype == OBJECT_DTYPE:
        objects = wire.copy()
    else:
        objects = np.zeros(SLOTS, dtype=OBJECT_DTYPE)
        for name in wire.dtype.names:
            objects[name] = wire[name]
    return ObjectInfo(layout.name, sec, nsec, objects, objects['obj_id'] == 0)


def encode_object_info(objects: Optional[np.ndarray], layout: str = DEFAULT_LAYOUT,
                       sec: int = 0, nsec: int = 0, aux=(0, 0, 0)) -> bytes:
    """Up to 20 records (a structured array with OBJECT_DTYPE field names; missing fields 0),
    padded with empty slots."""
    lay = layout_by_name(LAYOUTS, layout, MESSAGE)
    wire = fill_records(_RECORD[lay.name], SLOTS, objects, MESSAGE, 'objects',
                        droppable=('link_id',))
    stamp = pack(_STAMP, (sec, nsec), MESSAGE, ('sec', 'nsec')) if lay.name in _STAMPED else b''
    return build_frame(lay, stamp + wire.tobytes(), MESSAGE, aux)
