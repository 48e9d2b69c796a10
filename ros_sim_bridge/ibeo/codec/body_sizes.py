"""Where the variable parts of an ECU scan (0x2204 / 0x2205) and an ECU object list (0x2225,
0x2280, 0x2281, 0x2291) lie, from their counts, without numpy: the walk their decoders
(:mod:`.scan_ecu`, :mod:`.objects_ecu`) start with, and all that a record's time and whether
its body decodes need (:mod:`~ros_sim_bridge.ibeo.record_times`: ``ibeo_idc info`` imports
neither numpy nor those decoders).  The decoders check their numpy layouts against the sizes
here when they are imported.
"""
from __future__ import annotations

import struct
from typing import Optional

from ros_sim_bridge.core.binary import TRUNCATED, CodecError, unpack_from
from .typed_values import read_entries

SCAN_2204, SCAN_2205 = 0x2204, 0x2205
#: scan header (§8/§9): start time (NTP64), end offset, flags, scan number, points, scanner
#: infos
SCAN_HEADER = struct.Struct('>QIIHHB3x')
SCANNER_INFO_SIZE = {SCAN_2204: 40, SCAN_2205: 148}
SCAN_POINT_SIZE = 28

OBJECTS_2225, OBJECTS_2280, OBJECTS_2281, REFERENCE_OBJECTS_2291 = 0x2225, 0x2280, 0x2281, 0x2291
OBJECTS_NAME = 'ibeo_ecu_objects'
LIST_HEAD_2225 = struct.Struct('>QH')                 # mid-scan time, object count
LIST_HEAD_2281 = struct.Struct('>QBBHBxH')            # + list id, device type, interface version, flags
#: object list type → (list header, wire object size, offset of its contour point count,
#: whether each object is followed by its properties)
OBJECT_LAYOUT = {OBJECTS_2225: (LIST_HEAD_2225, 132, 130, False), OBJECTS_2280: (LIST_HEAD_2225, 170, 130, False),
                 OBJECTS_2281: (LIST_HEAD_2281, 164, 122, True),
                 REFERENCE_OBJECTS_2291: (LIST_HEAD_2281, 164, 122, True)}
CONTOUR_POINT_SIZE = 8
_U16 = struct.Struct('>H')


def scan_body_size(data_type: int, body) -> Optional[int]:
    """The body size a 0x2204 / 0x2205 scan header's counts need (header, scanner infos,
    points): the decoder takes a body of at least that; None when the body is shorter than the
    header."""
    if len(body) < SCAN_HEADER.size:
        return None
    *_, n_points, n_infos = SCAN_HEADER.unpack_from(body, 0)
    return SCAN_HEADER.size + n_infos * SCANNER_INFO_SIZE[data_type] + n_points * SCAN_POINT_SIZE


def list_head(data_type: int, body) -> tuple:
    """The list header values of an object list body; CodecError (TRUNCATED) when the body
    cannot hold the fixed parts of the objects it counts."""
    head_st, size = OBJECT_LAYOUT[data_type][:2]
    head = unpack_from(head_st, body, 0, OBJECTS_NAME, 'list_header')
    count, n, pos = head[-1], len(body), head_st.size
    if count * size > n - pos:
        raise CodecError(OBJECTS_NAME, f'{count} objects need at least {count * size} bytes, '
                         f'have {n - pos}', field='objects', offset=pos, kind=TRUNCATED)
    return head


def object_cut(i: int, count: int, pos: int, size: int, n: int) -> CodecError:
    """Object ``i`` of ``count`` at ``pos`` (``size`` bytes) runs past the body's ``n``."""
    return CodecError(OBJECTS_NAME, f'object {i} of {count} needs bytes {pos}..{pos + size}, '
                      f'have {n}', field=f'objects[{i}]', offset=pos, kind=TRUNCATED)


def contour_cut(i: int, k: int, end: int, n: int) -> CodecError:
    """Object ``i``'s contour of ``k`` points, ending at ``end``, runs past the body's ``n``."""
    return CodecError(OBJECTS_NAME, f'contour of object {i} ({k} points) needs bytes up to '
                      f'{end}, have {n}', field=f'objects[{i}].contour',
                      offset=end - CONTOUR_POINT_SIZE * k, kind=TRUNCATED)


def walk_objects(data_type: int, body) -> tuple[tuple, list, list, list]:
    """(list header values, each object's offset, each object's contour point count, each
    object's properties (0x2281 / 0x2291; else empty)) of an object list body; CodecError
    (TRUNCATED, BAD_VALUE from a property) where the decoder refuses the body."""
    head_st, size, cnt_at, has_props = OBJECT_LAYOUT[data_type]
    head = list_head(data_type, body)
    count, n, pos = head[-1], len(body), head_st.size
    offsets, counts, properties = [], [], []
    for i in range(count):        # variable-length objects: one walk for the offsets
        if pos + size > n:
            raise object_cut(i, count, pos, size, n)
        k = body[pos + cnt_at]
        offsets.append(pos)
        counts.append(k)
        pos += size + CONTOUR_POINT_SIZE * k
        if pos > n:
            raise contour_cut(i, k, pos, n)
        if has_props:
            (m,) = unpack_from(_U16, body, pos, OBJECTS_NAME, f'objects[{i}].properties.length')
            props, pos = read_entries(body, pos + 2, m, OBJECTS_NAME,
                                      f'objects[{i}].properties')
            properties.append(props)
    return head, offsets, counts, properties
