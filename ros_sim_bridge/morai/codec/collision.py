"""Collision Data (``#CollisionData$``, simulator → client): up to 5 objects the ego hit.

Spec: morai-sim-udp.txt "Collision Data"; SUPPLEMENT §1.2–1.4.  5 records × 28 B from byte 31
(``col140``, 173 bytes, the document's form) or after sec/nsec int32 from byte 39 (``col148``,
181 bytes, current builds).  A slot whose 28 bytes are all zero is empty (inference: the
sources do not say how unused slots look).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import pack, records
from .fields import all_zero, dtype_of, fill_records, xyz
from .framing import ID_COLLISION, Layout, build_frame, layout_by_name, select_layout

MESSAGE = 'Collision Data'
SLOTS = 5

#: obj_type (0 pedestrian, 1 NPC vehicle, 2 static object, -1 ego), obj_id, pos xyz (m,
#: relative to the ego), global_offset xyz (m, map frame).  28 bytes.
COLLISION_DTYPE = dtype_of([('obj_type', 'h'), ('obj_id', 'h'), *xyz('pos'),
                            *xyz('global_offset')])
_STAMP = struct.Struct('<ii')
LAYOUTS = (Layout('col140', ID_COLLISION, SLOTS * COLLISION_DTYPE.itemsize),
           Layout('col148', ID_COLLISION, _STAMP.size + SLOTS * COLLISION_DTYPE.itemsize))
LAYOUT_NAMES = tuple(lay.name for lay in LAYOUTS)
DEFAULT_LAYOUT = 'col148'


@dataclass
class CollisionData:
    layout: str
    sec: Optional[int]          # sim time, s (col148; else None)
    nsec: Optional[int]         # sim time, ns
    records: np.ndarray         # shape (5,), COLLISION_DTYPE
    empty: np.ndarray           # shape (5,), bool: all-zero slot

    def present(self) -> np.ndarray:
        return self.records[~self.empty]


def decode_collision(datagram) -> CollisionData:
    layout = select_layout(datagram, LAYOUTS, MESSAGE)
    offset = layout.payload_offset
    sec = nsec = None
    if layout.name == 'col148':
        sec, nsec = _STAMP.unpack_from(datagram, offset)
        offset += _STAMP.size
    recs = records(COLLISION_DTYPE, datagram, offset, SLOTS, MESSAGE, 'records').copy()
    return CollisionData(layout.name, sec, nsec, recs, all_zero(recs))


def encode_collision(recs: Optional[np.ndarray], layout: str = DEFAULT_LAYOUT, sec: int = 0,
                     nsec: int = 0, aux=(0, 0, 0)) -> bytes:
    lay = layout_by_name(LAYOUTS, layout, MESSAGE)
    wire = fill_records(COLLISION_DTYPE, SLOTS, recs, MESSAGE, 'records')
    stamp = pack(_STAMP, (sec, nsec), MESSAGE, ('sec', 'nsec')) if lay.name == 'col148' else b''
    return build_frame(lay, stamp + wire.tobytes(), MESSAGE, aux)
