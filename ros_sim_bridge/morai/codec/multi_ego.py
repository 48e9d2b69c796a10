"""Multi Ego Setting (``#MultiEgoSetting$``).

Spec: morai-sim-udp.txt "Multi Ego Setting"; SUPPLEMENT §1.2 (MORAI's define: client →
simulator on port 7604; the document describes it as an output, so both directions are
provided).  683 bytes: num_of_ego int32 @33, camera_index int32 @37 (the document's table says
2 bytes, but its 648-byte total needs 4 — MORAI's define uses int32), then 20 × 32-byte records
from @41.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field


import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError, pack
from .fields import check_int, dtype_of, fill_records, floats, xyz
from .framing import ID_MULTI_EGO, Layout, build_frame, select_layout

MESSAGE = 'Multi Ego Setting'
SLOTS = 20

#: ego_index int16, pos xyz (m), roll/pitch/heading (deg), velocity (km/h), gear int8
#: (1 P, 2 R, 3 N, 4 D), ctrl_mode int8 (1 keyboard, 16 auto per the document).  32 bytes.
MULTI_EGO_DTYPE = dtype_of([('ego_index', 'h'), *xyz('pos'), *floats('roll', 'pitch', 'heading',
                                                                      'velocity'),
                            ('gear', 'b'), ('ctrl_mode', 'b')])
_HEAD = struct.Struct('<ii')
LAYOUTS = (Layout('multi648', ID_MULTI_EGO, _HEAD.size + SLOTS * MULTI_EGO_DTYPE.itemsize),)
LAYOUT_NAMES = ('multi648',)


@dataclass
class MultiEgoSetting:
    num_of_ego: int = 0         # egos in use (first num_of_ego records), 0..20
    camera_index: int = 0       # ego the camera follows
    egos: np.ndarray = field(default_factory=lambda: np.zeros(SLOTS, MULTI_EGO_DTYPE))

    def active(self) -> np.ndarray:
        """The first ``num_of_ego`` records."""
        return self.egos[:self.num_of_ego]


def decode_multi_ego(datagram) -> MultiEgoSetting:
    layout = select_layout(datagram, LAYOUTS, MESSAGE)
    off = layout.payload_offset
    num, cam = _HEAD.unpack_from(datagram, off)
    if not 0 <= num <= SLOTS:
        raise CodecError(MESSAGE, f'num_of_ego {num} outside [0, {SLOTS}]', field='num_of_ego',
                         offset=off, kind=BAD_VALUE)
    egos = np.frombuffer(datagram, MULTI_EGO_DTYPE, SLOTS, off + _HEAD.size).copy()
    return MultiEgoSetting(num, cam, egos)


def encode_multi_ego(setting: MultiEgoSetting, aux=(0, 0, 0)) -> bytes:
    num = check_int(setting.num_of_ego, 0, SLOTS, MESSAGE, 'num_of_ego')
    check_int(setting.camera_index, -2**31, 2**31 - 1, MESSAGE, 'camera_index')
    egos = fill_records(MULTI_EGO_DTYPE, SLOTS, setting.egos, MESSAGE, 'egos')
    head = pack(_HEAD, (num, setting.camera_index), MESSAGE, ('num_of_ego', 'camera_index'))
    return build_frame(LAYOUTS[0], head + egos.tobytes(), MESSAGE, aux)
