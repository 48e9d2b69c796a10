"""Get Intersection Status (``#IntStatus$``, simulator → client).

Spec: morai-sim-udp.txt "Get Intersection Status"; SUPPLEMENT §1.3.  37 bytes: index int16 @27,
status int16 @29, status_time float32 @31.  (Set Intersection Status is in :mod:`.commands`.)
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import pack
from .fields import INT16, check_float, check_int
from .framing import ID_INTERSECTION_STATUS, Layout, build_frame, select_layout

MESSAGE = 'Get Intersection Status'
_BODY = struct.Struct('<hhf')
LAYOUTS = (Layout('int8', ID_INTERSECTION_STATUS, _BODY.size),)
LAYOUT_NAMES = ('int8',)


@dataclass
class IntersectionStatus:
    index: int = 0            # intersection id
    status: int = 0           # current signal phase of the intersection (simulator-defined)
    status_time: float = 0.0  # s the intersection has held this status (unit: inference)


def decode_intersection_status(datagram) -> IntersectionStatus:
    layout = select_layout(datagram, LAYOUTS, MESSAGE)
    return IntersectionStatus(*_BODY.unpack_from(datagram, layout.payload_offset))


def encode_intersection_status(status: IntersectionStatus, aux=(0, 0, 0)) -> bytes:
    check_int(status.index, *INT16, MESSAGE, 'index')
    check_int(status.status, *INT16, MESSAGE, 'status')
    check_float(status.status_time, MESSAGE, 'status_time')
    body = pack(_BODY, (status.index, status.status, status.status_time), MESSAGE,
                ('index', 'status', 'status_time'))
    return build_frame(LAYOUTS[0], body, MESSAGE, aux)
