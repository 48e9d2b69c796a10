"""NPC Vehicle Collision Data (``#VehicleCollision$``, simulator → client).

Spec: morai-sim-udp.txt "NPC Vehicle Collision Data"; SUPPLEMENT §1.3.  1156 bytes: 10 records
× 112 B from byte 34; each record is a colliding pair, two × 56 B vehicle blocks.  A pair whose
112 bytes are all zero is empty (inference).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import CodecError, BAD_VALUE, records
from .fields import all_zero, dtype_of, fill_records, xyz
from .framing import ID_VEHICLE_COLLISION, Layout, build_frame, select_layout

MESSAGE = 'NPC Vehicle Collision Data'
PAIRS = 10

#: One vehicle of a pair: obj_type, obj_id, pos xyz (m), heading (deg), size xyz (m),
#: velocity xyz (km/h), accel xyz (m/s²).  56 bytes.
VEHICLE_DTYPE = dtype_of([('obj_type', 'h'), ('obj_id', 'h'), *xyz('pos'), ('heading', 'f'),
                          *xyz('size'), *xyz('velocity'), *xyz('accel')])
LAYOUTS = (Layout('vcol1120', ID_VEHICLE_COLLISION, PAIRS * 2 * VEHICLE_DTYPE.itemsize),)
LAYOUT_NAMES = ('vcol1120',)


@dataclass
class VehicleCollisionData:
    layout: str
    pairs: np.ndarray           # shape (10, 2), VEHICLE_DTYPE: pairs[i, 0] hit pairs[i, 1]
    empty: np.ndarray           # shape (10,), bool: all-zero pair

    def present(self) -> np.ndarray:
        """Non-empty pairs, shape (k, 2)."""
        return self.pairs[~self.empty]


def decode_vehicle_collision(datagram) -> VehicleCollisionData:
    layout = select_layout(datagram, LAYOUTS, MESSAGE)
    flat = records(VEHICLE_DTYPE, datagram, layout.payload_offset, 2 * PAIRS, MESSAGE,
                   'pairs').copy()
    pairs = flat.reshape(PAIRS, 2)
    return VehicleCollisionData(layout.name, pairs, all_zero(flat).reshape(PAIRS, 2).all(axis=1))


def encode_vehicle_collision(pairs: Optional[np.ndarray], aux=(0, 0, 0)) -> bytes:
    """``pairs``: structured array of shape (k, 2), k ≤ 10, with VEHICLE_DTYPE field names."""
    if pairs is not None:
        pairs = np.asarray(pairs)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise CodecError(MESSAGE, f'pairs must have shape (k, 2), not {pairs.shape}',
                             field='pairs', kind=BAD_VALUE)
        pairs = pairs.reshape(-1)
    wire = fill_records(VEHICLE_DTYPE, 2 * PAIRS, pairs, MESSAGE, 'pairs')
    return build_frame(LAYOUTS[0], wire.tobytes(), MESSAGE, aux)
