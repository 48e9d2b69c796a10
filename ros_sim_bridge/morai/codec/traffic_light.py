"""Get TrafficLight Status (``#TrafficLight$``, data_length 16, simulator → client).

Spec: morai-sim-udp.txt "Get TrafficLight Status"; SUPPLEMENT §1.3.  48 bytes: index char[12]
@30, type int16 @42, status int16 @44.  Set TrafficLight Ctrl shares the identifier with
data_length 14 (see :mod:`.commands`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import pack
from .fields import INT16, check_int, decode_text, encode_text
from .framing import ID_TRAFFIC_LIGHT, Layout, build_frame, select_layout

MESSAGE = 'Get TrafficLight Status'
INDEX_LENGTH = 12

# Status bits (combinations are bitwise OR); -1 = off.
TL_RED = 1
TL_YELLOW = 4
TL_GREEN = 16
TL_GREEN_LEFT = 32
TL_OFF = -1
TL_STATUS_BITS = TL_RED | TL_YELLOW | TL_GREEN | TL_GREEN_LEFT
# Types
TL_TYPE_RYG = 0
TL_TYPE_RYG_LEFT = 1
TL_TYPE_RYG_LEFT_GREEN = 2
TL_TYPE_YYY = 100

_BODY = struct.Struct('<hh')
LAYOUTS = (Layout('tl16', ID_TRAFFIC_LIGHT, INDEX_LENGTH + _BODY.size),)
LAYOUT_NAMES = ('tl16',)
SET_DATA_LENGTH = INDEX_LENGTH + 2


@dataclass
class TrafficLightStatus:
    index: str = ''          # traffic light id (≤ 12 ASCII chars)
    type: int = TL_TYPE_RYG  # 0 R/Y/G, 1 R/Y/G+left, 2 R/Y/G+left+G, 100 Y/Y/Y
    status: int = TL_RED     # bitwise OR of TL_RED/TL_YELLOW/TL_GREEN/TL_GREEN_LEFT, -1 off


def decode_traffic_light_status(datagram) -> TrafficLightStatus:
    layout = select_layout(datagram, LAYOUTS, MESSAGE,
                           hints={SET_DATA_LENGTH: 'Set TrafficLight Ctrl (client → simulator)'})
    off = layout.payload_offset
    index = decode_text(datagram, off, INDEX_LENGTH, MESSAGE, 'index')
    tl_type, status = _BODY.unpack_from(datagram, off + INDEX_LENGTH)
    return TrafficLightStatus(index, tl_type, status)


def encode_traffic_light_status(status: TrafficLightStatus, aux=(0, 0, 0)) -> bytes:
    index = encode_text(status.index, INDEX_LENGTH, MESSAGE, 'index')
    check_int(status.type, *INT16, MESSAGE, 'type')
    check_int(status.status, *INT16, MESSAGE, 'status')
    body = pack(_BODY, (status.type, status.status), MESSAGE, ('type', 'status'))
    return build_frame(LAYOUTS[0], index + body, MESSAGE, aux)
