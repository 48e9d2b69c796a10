"""The packet table of a recorder file, with damage found, reported and skipped (SUPPLEMENT
§5.2–5.3, §5.6).

The walk (:mod:`.native`, compiled or Python) only follows packet sizes.  This module checks
that what it found is a recording, vectorised over each chunk of the walk: frames of
``FrameStart`` (id 0, 24 B) … ``FrameEnd`` (id 1, 0 B) with no packet outside a frame; no
packet of an absurd size; every FrameStart's duration finite (−1 or 0..1 h) and its elapsed time
continuing the previous frame's (elapsed = previous elapsed + previous duration, SUPPLEMENT
§5.6, within :data:`ELAPSED_SLACK` and half the previous duration, so that a lost frame shows
while rounding or a writer's drift does not); the walk not stopping before the end of the file.

At the first impossible packet it resynchronises: CARLA writes no magic per frame, but a
FrameStart's header is always the 5 bytes ``00 18 00 00 00``.  ``find`` (C speed) looks for
them from the start of the last frame kept (a damaged size may have swallowed the next
FrameStart); a hit counts when its duration and elapsed
time are plausible after the last good frame and its packets lead to a FrameEnd.  Reading goes
on from there and a :class:`Damage` says where readable packets stopped, how many bytes were
skipped and why.  What lies before the damage is kept (the frame it hit keeps its packets up to
the damage and is marked cut short); what lies after the resync point is indexed as in an
undamaged file.  With no plausible FrameStart after the damage, the rest of the file is lost:
the recording is *cut* there.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import (BAD_VALUE, OVERSIZED, TRUNCATED, UNKNOWN_LAYOUT,
                                        CodecError)
from ros_sim_bridge.core.damage import Damage
from .native import walk
from .records import FIXED_IDS, FRAME_START, FRAME_START_STRUCT, ID_TABLES, PACKET_HEADER, \
    USER_IDS

FRAME_START_HEADER = PACKET_HEADER.pack(0, FRAME_START.itemsize)   # 00 18 00 00 00
FRAME_START_PACKET = PACKET_HEADER.size + FRAME_START.itemsize     # 29 B
MIN_FRAME = FRAME_START_PACKET + PACKET_HEADER.size                # 34 B: FrameStart + FrameEnd
MAX_DURATION = 3600.0     # s; a frame longer than an hour is not a frame
MAX_ELAPSED = 1e9         # s; about 32 years of recording
ELAPSED_SLACK = 1e-4      # s a FrameStart may lie off previous elapsed + previous duration,
DURATION_SLACK = 0.5      # plus this share of the previous duration (a lost frame: a whole one)
BACKWARDS = 1e-6          # s an elapsed time may go back (rounding)
FRAME_ALLOWANCE = 1.0     # s each frame lost in a damaged region may have lasted, at least
MAX_PACKET = 1 << 28      # B; no packet of any release comes near (u16 counts of records)
MAX_UNKNOWN = 1 << 20     # B; ids neither CARLA's (<= 24 so far) nor users' (>= 100)
KNOWN_MAX = max(list(FIXED_IDS) + [pid for t in ID_TABLES.values() for pid in t])
FIRST_CHUNK = 1 << 12     # packets walked before the first check (grows ×4 up to MAX_CHUNK)
MAX_CHUNK = 1 << 20
MAX_CANDIDATE_PACKETS = 1 << 16   # packets of one resync candidate walked before giving up


@dataclass
class PacketTable:
    """Every packet kept (in file order), where the readable part ends and the damage."""
    offsets: np.ndarray        # int64 file offset of each packet header
    ids: np.ndarray            # uint8
    sizes: np.ndarray          # uint32 bytes of data after the 5-B header
    end: int                   # the file's length, or where it is cut
    damage: list               # Damage, in file order
    cut: Optional[CodecError]  # the error of the last damage when nothing after it was readable


@dataclass
class _State:
    """What the check carries from one chunk of the walk to the next."""
    inside: bool = False       # a frame is open (its FrameEnd not seen yet)
    last_start: int = -1       # offset of the last FrameStart kept (the open frame's, if any)
    frames: int = 0            # FrameStarts kept so far
    frame_id: int = -1         # CARLA's id of the last frame kept (−1: none yet)
    elapsed: float = math.nan  # of the last FrameStart kept (nan: none to continue from)
    duration: float = math.nan
    floor: float = math.nan    # elapsed of the last frame whose time continued the one before
    longest: float = 0.0       # the longest frame duration seen


def index_packets(data, start: int, native: bool = True) -> PacketTable:
    """Walk ``data`` from ``start`` (the end of the info header) to its end, skipping damage."""
    n = len(data)
    raw = np.frombuffer(data, np.uint8, count=n) if n else np.zeros(0, np.uint8)
    find = data.find if hasattr(data, 'find') else bytes(data).find
    kept: list = []
    damage: list = []
    cut = None
    st = _State()
    pos, cap = start, FIRST_CHUNK
    while True:
        o, i, s, end = walk(data, pos, native, cap)
        k, why, kind = _first_violation(raw, o, i, s, st)
        if k:
            kept.append((o[:k], i[:k], s[:k]))
        if why is None:
            if len(o) == cap:
                pos, cap = end, min(cap * 4, MAX_CHUNK)
                continue
            if end == n:
                if st.inside:   # the file ends cleanly after a packet, but inside a frame
                    cut = _cut(damage, n, n, 'the file ends before this frame\'s FrameEnd',
                               st, None)
                    break
                swallowed = _swallowed_last(data, find, st)
                if swallowed is None:
                    break
                # the last frame kept promised a next one (its duration is not CARLA's −1)
                # and that FrameStart lies inside one of its packets: a damaged size
                bad, resume = _trim(kept, swallowed), swallowed
                pid, size = PACKET_HEADER.unpack_from(data, bad)
                err = CodecError(f'frame {st.frame_id} packet {pid}', f'packet of {size} B runs '
                                 f'over the next frame\'s FrameStart @{resume}: '
                                 f'{resume - bad} B skipped, reading resumed there',
                                 offset=bad, kind=OVERSIZED)
                damage.append(Damage(bad, resume - bad, f'packet of {size} B runs over the next '
                                     'frame\'s FrameStart', st.frames - 1, resume, err))
                st = _State(frames=st.frames, frame_id=st.frame_id, longest=st.longest,
                            floor=st.floor)
                pos, cap = resume, FIRST_CHUNK
                continue
            bad = end
            if end + PACKET_HEADER.size > n:
                pid, why = None, f'{n - end} B left, a packet header needs 5'
            else:
                pid, size = PACKET_HEADER.unpack_from(data, end)
                why = f'packet of {size} B overruns the file ({n - end - 5} B left)'
            kind = OVERSIZED
        else:
            bad, pid = int(o[k]), int(i[k])
        # search from the last frame kept: the damage may have begun inside it, a damaged size
        # swallowing the next FrameStart (the walk then ends that frame at a chance 01 00 00
        # 00 00 further on, or sees the next frame's time jump)
        scan = st.last_start + FRAME_START_PACKET if st.last_start >= 0 else bad
        resume = _find_frame_start(data, find, scan, bad, st)
        if resume is None:
            cut = _cut(damage, bad, n, why, st, pid)
            break
        label = _where(st, pid)
        hit = st.frames - 1 if st.inside else -1
        if resume < bad:        # a damaged packet's size swallowed the next frame's start
            bad, hit = _trim(kept, resume), st.frames - 1
        err = CodecError(label, f'{why}: {resume - bad} B skipped, reading resumed at the '
                         f'FrameStart @{resume}', offset=bad, kind=kind)
        damage.append(Damage(bad, resume - bad, why, hit, resume, err))
        st = _State(frames=st.frames, frame_id=st.frame_id, longest=st.longest,
                    floor=st.floor)
        pos, cap = resume, FIRST_CHUNK
    if kept:
        offsets = np.concatenate([p[0] for p in kept])
        ids = np.concatenate([p[1] for p in kept])
        sizes = np.concatenate([p[2] for p in kept])
    else:
        offsets, ids, sizes = (np.zeros(0, np.int64), np.zeros(0, np.uint8),
                               np.zeros(0, np.uint32))
    return PacketTable(offsets, ids, sizes, n if cut is None else cut.offset, damage, cut)


def _where(st: _State, pid) -> str:
    """The CodecError message naming the frame (CARLA's frame id) and the packet."""
    frame = ('before the first frame' if st.frame_id < 0 else f'frame {st.frame_id}'
             if st.inside else f'after frame {st.frame_id}')
    return f'{frame} packet {pid}' if pid is not None else f'{frame} packet header'


def _cut(damage: list, bad: int, n: int, why: str, st: _State, pid) -> CodecError:
    label = _where(st, pid) if bad < n else f'frame {st.frame_id}'
    err = CodecError(label, f'{why}: the recording is cut here, {st.frames} frames before it '
                     'kept', offset=bad, kind=TRUNCATED)
    damage.append(Damage(bad, n - bad, why, st.frames - 1 if st.inside else -1, None, err))
    return err


def _trim(kept: list, resume: int) -> int:
    """Drop the kept packets that end after ``resume``; the end of the last one left."""
    while kept:
        o, i, s = kept[-1]
        j = int(np.searchsorted(o + 5 + s, resume, side='right'))
        if j == len(o):
            break
        if j == 0:
            kept.pop()
            continue
        kept[-1] = (o[:j], i[:j], s[:j])
        break
    o, _, s = kept[-1]          # never empty: the open frame's FrameStart ends before resume
    return int(o[-1]) + 5 + int(s[-1])


def _first_violation(raw: np.ndarray, o, i, s, st: _State):
    """(index of the first impossible packet of the chunk or its length, why, kind); ``st``
    advanced over the packets before it."""
    m = len(o)
    if m == 0:
        return 0, None, None
    # FrameStarts and FrameEnds alternate (a FrameStart first outside a frame), have 24 and
    # 0 B, a FrameStart follows every FrameEnd; no packet has an absurd size
    marks = np.flatnonzero(i < 2)
    mi, ms = i[marks], s[marks]
    found = []
    wrong = np.flatnonzero(mi != ((np.arange(len(marks)) + int(st.inside)) & 1))
    if len(wrong):
        found.append(int(marks[wrong[0]]))
    sized = np.flatnonzero(np.where(mi == 0, ms != FRAME_START.itemsize, ms != 0))
    if len(sized):
        found.append(int(marks[sized[0]]))
    after_end = marks[mi == 1] + 1
    after_end = after_end[after_end < m]
    outside = after_end[i[after_end] != 0]
    if len(outside):
        found.append(int(outside[0]))
    if not st.inside and i[0] != 0:
        found.append(0)
    big = np.flatnonzero(s > MAX_UNKNOWN)
    if len(big):
        absurd = big[(s[big] > MAX_PACKET) | ((i[big] > KNOWN_MAX) & (i[big] < USER_IDS))]
        if len(absurd):
            found.append(int(absurd[0]))
    k = min(found) if found else m
    why = kind = None
    if k < m:
        pid, size = int(i[k]), int(s[k])
        if pid < 2 and size != (FRAME_START.itemsize if pid == 0 else 0):
            kind = UNKNOWN_LAYOUT
            why = (f'FrameStart of {size} B (24 expected)' if pid == 0 else
                   f'FrameEnd of {size} B (0 expected)')
        elif pid >= 2 and (size > MAX_PACKET or (KNOWN_MAX < pid < USER_IDS
                                                 and size > MAX_UNKNOWN)):
            kind, why = OVERSIZED, f'packet {pid} of {size} B: absurd size'
        elif pid == 0:
            kind, why = BAD_VALUE, 'FrameStart before the FrameEnd of the frame it is in'
        elif pid == 1:
            kind, why = BAD_VALUE, 'FrameEnd outside a frame'
        else:
            kind, why = BAD_VALUE, f'packet {pid} outside a frame (not after a FrameStart)'
    at = marks[(mi == 0) & (marks < k)]
    if len(at):
        fields = raw[(o[at] + 5)[:, None] + np.arange(FRAME_START.itemsize)]
        fs = np.ascontiguousarray(fields).view(FRAME_START).reshape(-1)
        d, e, fid = fs['duration'], fs['elapsed'], fs['id']
        prev_e = np.append(st.elapsed, e[:-1])
        prev_d = np.append(st.duration, d[:-1])
        with np.errstate(invalid='ignore', over='ignore'):
            values = (np.isfinite(d) & ((d == -1.0) | ((d >= 0) & (d <= MAX_DURATION)))
                      & np.isfinite(e) & (np.abs(e) <= MAX_ELAPSED)
                      & (np.isnan(prev_e) | (e >= prev_e - BACKWARDS)))
            # elapsed = previous elapsed + previous duration (unknown after a −1)
            continues = (np.isnan(prev_e) | (prev_d < 0)
                         | (np.abs(e - prev_e - prev_d)
                            <= ELAPSED_SLACK + DURATION_SLACK * prev_d + 1e-9 * np.abs(e)))
        ok = values & continues
        confirmed = ok & ~np.isnan(prev_e) & (prev_d >= 0)
        if not ok.all():
            j = int(np.argmin(ok))
            k, kind = int(at[j]), BAD_VALUE
            why = _frame_values(float(d[j]), float(e[j]), float(prev_e[j]), float(prev_d[j]))
            at = at[:j]
            d, e, confirmed = d[:j], e[:j], confirmed[:j]
        if len(at):
            st.frames += len(at)
            if confirmed.any():
                st.floor = float(e[np.flatnonzero(confirmed)[-1]])
            st.elapsed, st.duration = float(e[-1]), float(d[-1])
            st.frame_id = int(fid[len(at) - 1])
            longest = d[np.isfinite(d) & (d >= 0)]
            if len(longest):
                st.longest = max(st.longest, float(longest.max()))
            st.last_start = int(o[at[-1]])
    last = int(np.searchsorted(marks, k)) - 1       # the last FrameStart/End kept
    if last >= 0:
        st.inside = bool(mi[last] == 0)
    return k, why, kind


def _frame_values(d: float, e: float, prev_e: float, prev_d: float) -> str:
    if not (math.isfinite(d) and (d == -1.0 or 0 <= d <= MAX_DURATION)):
        return f'FrameStart duration {d!r} s is not a frame\'s'
    if not (math.isfinite(e) and abs(e) <= MAX_ELAPSED):
        return f'FrameStart elapsed time {e!r} s is not a recording\'s'
    if e < prev_e:
        return f'elapsed time goes back from {prev_e:.6g} s to {e:.6g} s'
    return (f'elapsed time {e:.9g} s is not the previous frame\'s {prev_e:.9g} s + its duration '
            f'{prev_d:.9g} s: frames missing or times damaged')


def _swallowed_last(data, find, st: _State) -> Optional[int]:
    """At a clean end of the file: the offset of a FrameStart hidden inside the last frame
    kept, when that frame's duration says another frame followed (CARLA leaves −1 on the last
    one) and the hidden one's elapsed time is exactly its elapsed + duration; else None."""
    if st.last_start < 0 or math.isnan(st.elapsed) or not st.duration >= 0:
        return None
    n = len(data)
    expected = st.elapsed + st.duration
    pos = st.last_start + FRAME_START_PACKET
    while True:
        at = find(FRAME_START_HEADER, pos)
        if at < 0 or at + FRAME_START_PACKET > n:
            return None
        _, _, e = FRAME_START_STRUCT.unpack_from(data, at + 5)
        if abs(e - expected) <= ELAPSED_SLACK and _plausible_frame(data, at, at, st, n):
            return at
        pos = at + 1


def _find_frame_start(data, find, scan: int, bad: int, st: _State) -> Optional[int]:
    """Offset of the first plausible FrameStart at or after ``scan``, or None.  Plausible: its
    header is ``00 18 00 00 00``, its duration a frame's, its elapsed time not before the last
    frame's whose time was confirmed by the one before it (a single damaged elapsed time must
    not hide the rest of the file), not further after the last frame's than the frames that
    fit in the bytes skipped could
    last (each the longest duration seen, at least :data:`FRAME_ALLOWANCE`: the last duration
    may be the damaged field), and its packets lead to a FrameEnd (or exactly to the end of
    the file)."""
    n = len(data)
    pos = scan
    while True:
        at = find(FRAME_START_HEADER, pos)
        if at < 0 or at + FRAME_START_PACKET > n:
            return None
        if _plausible_frame(data, at, bad, st, n):
            return at
        pos = at + 1


def _plausible_frame(data, at: int, bad: int, st: _State, n: int) -> bool:
    _, d, e = FRAME_START_STRUCT.unpack_from(data, at + 5)
    if not (math.isfinite(d) and (d == -1.0 or 0 <= d <= MAX_DURATION)):
        return False
    if not (math.isfinite(e) and abs(e) <= MAX_ELAPSED):
        return False
    if not math.isnan(st.floor) and e < st.floor - BACKWARDS:
        return False
    if not math.isnan(st.elapsed):
        frames = max(at - bad, 0) // MIN_FRAME + 1      # frames that fit in the skipped bytes
        if e > (st.elapsed + max(st.duration, 0.0)
                + frames * max(st.longest, FRAME_ALLOWANCE) + ELAPSED_SLACK):
            return False
    unpack = PACKET_HEADER.unpack_from
    off = at + FRAME_START_PACKET
    for _ in range(MAX_CANDIDATE_PACKETS):
        if off == n:
            return True
        if off + 5 > n:
            return False
        pid, size = unpack(data, off)
        if pid == 1:
            return size == 0
        if (pid == 0 or size > n - off - 5 or size > MAX_PACKET
                or (KNOWN_MAX < pid < USER_IDS and size > MAX_UNKNOWN)):
            return False
        off += 5 + size
    return False


__all__ = ['PacketTable', 'index_packets']
