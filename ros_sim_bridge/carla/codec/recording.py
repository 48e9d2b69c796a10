"""A whole recorder file: one-pass frame index, layout detection, frames decoded on demand.

Sans-IO: :class:`Recording` takes a buffer (``bytes``, ``mmap``); opening files is the
caller's business.  The index pass reads only packet headers and the 24 B of every FrameStart,
so seeking to a time is a ``searchsorted`` and a jump (SUPPLEMENT §5.2, §5.5).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator, Optional

import numpy as np

from ros_sim_bridge.core.binary import UNKNOWN_LAYOUT, CodecError
from ros_sim_bridge.core.damage import Damage
from .frame_index import index_packets
from .header import InfoHeader, decode_header
from .records import (DTYPES, FRAME_START, ID_TABLES, LATEST_TABLE, PACKET_HEADER, U16, Layout,
                      PacketDecoder, fits)

VECTORS = {'ue4': '<f4', 'ue5': '<f8', 'f4': '<f4', 'f8': '<f8', '<f4': '<f4', '<f8': '<f8'}
_SAMPLES = 8  # packets of each id >= 18 kept for telling the id tables apart
# packets the index remembers: events, and what CARLA writes only when an actor appears
# (bounding boxes, trigger volumes, traffic light times), so a seek rebuilds the world from them
_KEPT = frozenset((2, 3, 4, 5, 13, 16, 17))
_KEPT_IDS = np.array(sorted(_KEPT), np.uint8)
_PROBE_IDS = np.array([2, 6, 12, 13, 17], np.uint8)
# state packets a frame may leave out (the last one recorded still holds): Position, State,
# AnimVehicle, AnimWalker, VehicleLight, SceneLight
_STATE_IDS = (6, 7, 8, 9, 10, 11)
EVENTS = frozenset(('EventAdd', 'EventDel', 'EventParent', 'Collision'))


@dataclass
class Frame:
    """One frame: FrameStart fields and its packets decoded, by name (see records.FIXED_IDS)."""
    index: int
    id: int
    duration: float      # −1 on the last frame of a file (CARLA patches it only later)
    elapsed: float
    offset: int          # file offset of its FrameStart packet
    packets: dict = field(default_factory=dict)
    unknown: list = field(default_factory=list)   # (id, size) of packets skipped
    errors: list = field(default_factory=list)    # CodecError of packets that failed
    truncated: bool = False   # damage (or the end of the file) cut it short: no FrameEnd

    def get(self, name: str, default=None):
        return self.packets.get(name, default)


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    """``np.unique`` of an array already in ascending order (one comparison, no hashing)."""
    return x[np.append(True, x[1:] != x[:-1])] if len(x) else x


class Recording:
    """Index and decoder of one recorder file held in ``data``.

    ``vector`` ('ue4'/'ue5') and ``ids`` (a key of ``ID_TABLES``) force a layout; by default
    both are detected from record sizes and shapes.  Damage never raises after the header:
    ``damage`` lists each damaged region (offset, bytes skipped, why; see frame_index.py),
    reading resumes at the next plausible frame after it, ``cut`` tells where damage with no
    readable frame after it ended the readable part, ``problems`` lists every error found;
    everything before and after a damaged region stays readable.
    """

    def __init__(self, data, *, vector: Optional[str] = None, ids: Optional[str] = None,
                 native: bool = True):
        self.data = data
        self._native = native
        self.problems: list[CodecError] = []
        self.header: InfoHeader = decode_header(data, self.problems)
        # every error met decoding frames so far (packets dropped, strings not UTF-8), once
        self.decode_errors: dict[str, CodecError] = {}
        self.cut: Optional[CodecError] = None
        self._index()
        if vector is not None and vector.lower() not in VECTORS:
            raise ValueError(f'vector must be one of ue4, ue5, not {vector!r}')
        if ids is not None and ids not in ID_TABLES:
            raise ValueError(f'ids must be one of {", ".join(ID_TABLES)}, not {ids!r}')
        self._vector = VECTORS[vector.lower()] if vector else self._detect_vector()
        self._ids_forced = ids is not None
        self.layout = Layout(self._vector, ids or self._detect_ids())
        self.decoder = PacketDecoder(self.layout)
        self.unknown = Counter({pid: n for pid, n in self.packet_counts.items()
                                if self.layout.packet_name(pid) is None})

    # -- index ----------------------------------------------------------------------------
    def _index(self) -> None:
        """One walk over the packet headers (compiled when available, see native.py) checked
        and resynchronised after damage (frame_index.py), then numpy: frame starts, counts per
        id, the packets kept for seeking and the samples for layout detection."""
        data, n = self.data, len(self.data)
        table = index_packets(data, self.header.size, self._native)
        offsets, ids, sizes = table.offsets, table.ids, table.sizes
        self.damage: list[Damage] = table.damage
        self.cut = table.cut
        self.problems.extend(d.error for d in table.damage)
        self.end = table.end
        starts = offsets[ids == 0]          # every one checked: 24 B, plausible times
        counts = np.bincount(ids, minlength=256)
        self.packet_counts = {pid: int(c) for pid, c in enumerate(counts.tolist()) if c}
        frame_of = np.cumsum(ids == 0) - 1  # the first packet kept is always a FrameStart
        kept = np.isin(ids, _KEPT_IDS) & (sizes > 2)
        self.events = list(zip(frame_of[kept].tolist(), ids[kept].tolist(),
                               (offsets[kept] + 5).tolist(), sizes[kept].tolist()))
        # frames holding each state packet (positions, lights, animations): a jump finds the
        # latest one at or before its target without walking the frames in between
        self._state_frames = {pid: _sorted_unique(frame_of[ids == pid]) for pid in _STATE_IDS}
        probe = np.flatnonzero(np.isin(ids, _PROBE_IDS))[:64]
        self._probes = list(zip(ids[probe].tolist(), (offsets[probe] + 5).tolist(),
                                sizes[probe].tolist()))
        self._samples = {}
        for pid in np.flatnonzero(counts[18:]).tolist():
            rows = np.flatnonzero(ids == pid + 18)[:_SAMPLES]
            self._samples[pid + 18] = list(zip([pid + 18] * len(rows),
                                               (offsets[rows] + 5).tolist(),
                                               sizes[rows].tolist()))
        if len(starts):
            raw = np.frombuffer(data, np.uint8, count=n)
            fields = raw[(starts + 5)[:, None] + np.arange(FRAME_START.itemsize)]
            fsr = np.ascontiguousarray(fields).view(FRAME_START).reshape(-1)
        else:
            fsr = np.zeros(0, FRAME_START)
        self.offsets = starts
        self.frame_ids = fsr['id'].copy()
        self.durations = fsr['duration'].copy()
        self.elapsed = fsr['elapsed'].copy()
        # a frame ends after its last packet kept: its FrameEnd, or where damage cut it short
        last = np.append(np.flatnonzero(ids == 0)[1:] - 1, len(ids) - 1).astype(np.int64)
        self.ends = (offsets[last] + 5 + sizes[last]).astype(np.int64) if len(starts) else \
            np.zeros(0, np.int64)
        self.cut_short = frozenset(d.frame for d in table.damage if d.frame >= 0)

    # -- layout detection -----------------------------------------------------------------
    def _detect_vector(self) -> str:
        """Vector width from the record size of Position/Kinematics/BoundingBox (28 or 52 B),
        else from an EventAdd that decodes exactly with one width."""
        adds = []
        for pid, start, size in self._probes:
            body = memoryview(self.data)[start:start + size]
            if pid == 2:
                adds.append(body)
                continue
            if size < 2:
                continue
            (count,) = U16.unpack_from(body, 0)
            if not count:
                continue
            rec = (size - 2) / count
            for vector, dtypes in DTYPES.items():
                if rec == dtypes['Position'].itemsize:
                    return vector
            self.problems.append(CodecError(
                f'packet {pid}', f'records of {rec:g} B fit no layout (28 B UE4, 52 B UE5)',
                offset=start - 5, kind=UNKNOWN_LAYOUT))
        for body in adds:
            if len(body) > 2 and U16.unpack_from(body, 0)[0]:
                for vector in ('<f4', '<f8'):
                    if fits('EventAdd', body, Layout(vector)):
                        return vector
        return '<f4'

    def _detect_ids(self) -> str:
        """The id table under which the most packets of ids >= 18 decode exactly (SUPPLEMENT
        §5.3: validate the payload shape); the newest table when none or a tie."""
        if not self._samples:
            return LATEST_TABLE
        best, best_score = LATEST_TABLE, -1
        for table in reversed(list(ID_TABLES)):
            layout = Layout(self._vector, table)
            score = 0
            for pid, lst in self._samples.items():
                name = ID_TABLES[table].get(pid)
                if name is None:
                    continue
                ok = all(fits(name, memoryview(self.data)[s:s + z], layout) for _, s, z in lst)
                score += len(lst) if ok else -1000
            if score > best_score:
                best, best_score = table, score
        return best

    @property
    def layout_name(self) -> str:
        """The layout as the tools print it: the ids >= 18 table only where it mattered (a
        packet of CARLA's ids 18–99 in the file, or the table forced)."""
        if self._ids_forced or any(18 <= pid < 100 for pid in self.packet_counts):
            return self.layout.name
        return f"{'UE4' if self._vector == '<f4' else 'UE5'} vectors, no ids>=18 seen"

    # -- frames ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def skipped_bytes(self) -> int:
        """Bytes of damage not read (all regions, a cut tail included)."""
        return sum(d.skipped for d in self.damage)

    @property
    def duration(self) -> float:
        """Elapsed time of the last frame (what CARLA calls the recording's duration)."""
        return float(self.elapsed[-1]) if len(self.elapsed) else 0.0

    def frame_at(self, t: float) -> int:
        """Index of the frame with elapsed <= t (0 before the first)."""
        return max(int(np.searchsorted(self.elapsed, t, side='right')) - 1, 0)

    def last_with(self, name: str, i: int) -> int:
        """Index of the latest frame <= ``i`` holding a ``name`` packet (a state packet:
        Position, State, AnimVehicle, AnimWalker, VehicleLight, SceneLight), −1 if none."""
        frames = self._state_frames[self.layout.packet_id(name)]
        k = int(np.searchsorted(frames, i, side='right')) - 1
        return int(frames[k]) if k >= 0 else -1

    def packets(self, i: int) -> Iterator[tuple[int, int, int]]:
        """(id, data offset, size) of every packet of frame ``i`` after its FrameStart."""
        data, unpack = self.data, PACKET_HEADER.unpack_from
        off, end = int(self.offsets[i]) + 29, int(self.ends[i])
        while off + 5 <= end:
            pid, size = unpack(data, off)
            if pid == 0:
                return
            yield pid, off + 5, size
            off += 5 + size

    def frame(self, i: int, names: Optional[set] = None) -> Frame:
        """Frame ``i`` decoded (only the packets in ``names``, if given)."""
        if i < 0:
            i += len(self)
        frame = Frame(i, int(self.frame_ids[i]), float(self.durations[i]),
                      float(self.elapsed[i]), int(self.offsets[i]))
        mv = memoryview(self.data)
        ended = False
        for pid, start, size in self.packets(i):
            name = self.layout.packet_name(pid)
            if name is None:
                frame.unknown.append((pid, size))
                continue
            if name == 'FrameEnd':
                ended = True
                continue
            if names is not None and name not in names:
                continue
            self._decode_into(frame, mv, pid, name, start, size)
        frame.truncated = not ended and i in self.cut_short
        return frame

    def _decode_into(self, frame: Frame, mv, pid: int, name: str, start: int,
                     size: int) -> None:
        """Packet ``name`` at ``start`` added to ``frame.packets`` (several of a kind merged);
        what is wrong with it to ``frame.errors`` and :attr:`decode_errors`: the packet when
        it cannot be decoded, a string that is not UTF-8 (the rest of the packet kept)."""
        bad: list = []
        try:
            value = self.decoder.decode(name, mv[start:start + size],
                                        f'frame {frame.id} packet {pid} ({name})', start, bad)
        except CodecError as err:
            bad.append(err)
        else:
            old = frame.packets.get(name)
            if old is None:
                frame.packets[name] = value
            elif isinstance(old, list):
                old.extend(value)
            elif isinstance(old, np.ndarray) and old.dtype.names:
                frame.packets[name] = np.concatenate([old, value])
            else:
                frame.packets[name] = value
        frame.errors.extend(bad)
        for err in bad:
            self.decode_errors.setdefault(str(err), err)

    def event_frames(self, names=EVENTS) -> Iterator[Frame]:
        """Frames with events (EventAdd, EventDel, EventParent, Collision; with ``names``
        also BoundingBox, TriggerVolume, TrafficLightTime), only those packets decoded,
        straight from the index (no second walk over the file)."""
        mv = memoryview(self.data)
        current = None
        for i, pid, start, size in self.events:
            if i < 0:
                continue
            if current is None or current.index != i:
                if current is not None and (current.packets or current.errors):
                    yield current
                current = Frame(i, int(self.frame_ids[i]), float(self.durations[i]),
                                float(self.elapsed[i]), int(self.offsets[i]))
            name = self.layout.packet_name(pid)
            if name in names:
                self._decode_into(current, mv, pid, name, start, size)
        if current is not None and (current.packets or current.errors):
            yield current

    def frames(self, start: int = 0, stop: Optional[int] = None,
               names: Optional[set] = None) -> Iterator[Frame]:
        for i in range(start, len(self) if stop is None else min(stop, len(self))):
            yield self.frame(i, names)

    def summary(self) -> dict:
        return {'version': self.header.version, 'map': self.header.map_name,
                'date': self.header.date, 'frames': len(self), 'duration': self.duration,
                'layout': self.layout_name, 'packet_counts': self.packet_counts,
                'unknown_packets': dict(self.unknown),
                'cut': str(self.cut) if self.cut else None,
                'damage': [{'offset': d.offset, 'skipped': d.skipped, 'reason': d.reason,
                            'resumed': d.resumed} for d in self.damage],
                'skipped_bytes': self.skipped_bytes}


__all__ = ['Frame', 'Recording']
