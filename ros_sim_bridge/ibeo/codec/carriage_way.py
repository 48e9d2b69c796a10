"""Carriage ways, data type 0x6970 (spec §26; big-endian): a road map of carriage ways →
segments → lanes → lane segments.  Lane segments (86 bytes each: ids of the neighbours, marking
and border types, a WGS84 support point [deg], offsets to the left/right markings [m]) are
decoded per lane in one go into :data:`LANE_SEGMENT_DTYPE`; the levels above are dataclasses."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ros_sim_bridge.core.binary import TRUNCATED, CodecError, pack, records, unpack_from
from . import registry

CARRIAGE_WAY_6970 = 0x6970
NAME = 'ibeo_carriage_way'
_U64 = struct.Struct('>Q')
_WAY = struct.Struct('>QHBQ')                  # id, national id, type, number of segments
_SEGMENT = struct.Struct('>QBQQ')              # id, number of lanes, next id, previous id
_LANE = struct.Struct('>BQBBBBBQ')             # id, lane id, type, next, prev, left, right, n
_LS = [('id', 'u8'), ('next_id', 'u8'), ('previous_id', 'u8'), ('left_id', 'u8'),
       ('right_id', 'u8'), ('marking_left', 'u1'), ('marking_right', 'u1'),
       ('border_left', 'u1'), ('border_right', 'u1'), ('next_in_new_segment', 'u1'),
       ('previous_in_new_segment', 'u1'), ('longitude_deg', 'f8'), ('latitude_deg', 'f8'),
       ('course_angle_deg', 'f8'), ('offset_left_x', 'f4'), ('offset_left_y', 'f4'),
       ('offset_right_x', 'f4'), ('offset_right_y', 'f4')]
WIRE_LANE_SEGMENT_DTYPE = np.dtype([(n, ('>' + t) if t not in ('u1',) else t) for n, t in _LS])
LANE_SEGMENT_DTYPE = np.dtype(_LS)
assert WIRE_LANE_SEGMENT_DTYPE.itemsize == 86


@dataclass(frozen=True, eq=False)
class Lane:
    id: int
    lane_id: int
    type: int                                  # 1 forward, 2 backward, 3 exit, 4 oncoming, ...
    next_lane: int
    previous_lane: int
    left_lane: int
    right_lane: int
    segments: np.ndarray = field(default_factory=lambda: np.zeros(0, LANE_SEGMENT_DTYPE))


@dataclass(frozen=True, eq=False)
class CarriageWaySegment:
    id: int
    next_id: int
    previous_id: int
    lanes: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class CarriageWay:
    id: int
    national_id: int
    type: int                                  # 1 motorway, 2 trunk, 3 primary, ...
    segments: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class CarriageWayList:
    ways: list = field(default_factory=list)
    DATA_TYPE = CARRIAGE_WAY_6970


def _check(count: int, size: int, body, pos: int, what: str) -> None:
    if count * size > len(body) - pos:
        raise CodecError(NAME, f'{count} {what} need at least {count * size} bytes, have '
                         f'{len(body) - pos}', field=what, offset=pos, kind=TRUNCATED)


def decode_carriage_ways(body, header=None) -> CarriageWayList:
    (n_ways,) = unpack_from(_U64, body, 0, NAME, 'number_of_carriage_ways')
    pos, ways = 8, []
    _check(n_ways, _WAY.size, body, pos, 'carriage_ways')
    for w in range(n_ways):
        wid, national, wtype, n_seg = unpack_from(_WAY, body, pos, NAME, f'carriage_ways[{w}]')
        pos += _WAY.size
        _check(n_seg, _SEGMENT.size, body, pos, f'carriage_ways[{w}].segments')
        segments = []
        for s in range(n_seg):
            where = f'carriage_ways[{w}].segments[{s}]'
            sid, n_lanes, nxt, prev = unpack_from(_SEGMENT, body, pos, NAME, where)
            pos += _SEGMENT.size
            lanes = []
            for k in range(n_lanes):
                lid, lane_id, ltype, ln, lp, ll, lr, n_ls = unpack_from(
                    _LANE, body, pos, NAME, f'{where}.lanes[{k}]')
                pos += _LANE.size
                _check(n_ls, 86, body, pos, f'{where}.lanes[{k}].segments')
                ls = records(WIRE_LANE_SEGMENT_DTYPE, body, pos, n_ls, NAME,
                             f'{where}.lanes[{k}].segments')
                pos += 86 * n_ls
                lanes.append(Lane(lid, lane_id, ltype, ln, lp, ll, lr,
                                  ls.astype(LANE_SEGMENT_DTYPE)))
            segments.append(CarriageWaySegment(sid, nxt, prev, lanes))
        ways.append(CarriageWay(wid, national, wtype, segments))
    return CarriageWayList(ways)


def encode_carriage_ways(lst: CarriageWayList) -> bytes:
    parts = [_U64.pack(len(lst.ways))]
    for w in lst.ways:
        parts.append(pack(_WAY, (w.id, w.national_id, w.type, len(w.segments)), NAME))
        for s in w.segments:
            parts.append(pack(_SEGMENT, (s.id, len(s.lanes), s.next_id, s.previous_id), NAME))
            for ln in s.lanes:
                parts.append(pack(_LANE, (ln.id, ln.lane_id, ln.type, ln.next_lane,
                                          ln.previous_lane, ln.left_lane, ln.right_lane,
                                          len(ln.segments)), NAME))
                parts.append(np.asarray(ln.segments).astype(WIRE_LANE_SEGMENT_DTYPE).tobytes())
    return b''.join(parts)


registry.register(CARRIAGE_WAY_6970, 'carriage_way', decode_carriage_ways,
                  record=CarriageWayList, encode=encode_carriage_ways, min_size=8)
