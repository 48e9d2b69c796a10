"""Sensor channel framing and the sample header (SUPPLEMENT §4.1).

One TCP connection per sensor, no magic word.  Each framed message: ``u32 length`` (the header
included), ``u32 time``, ``f32 game_time`` (s since start) — 12 bytes, big-endian (2019 – May
2020; the 2018 client read them little-endian) — plus ``u32 sample_count`` in the 16-byte
header of June 2020 on.  Which generation arrived is detected from the first message of a
connection (:class:`HeaderDetector`) unless configured.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ros_sim_bridge.core.binary import OVERSIZED, TRUNCATED, UNKNOWN_LAYOUT, CodecError

MESSAGE = 'monoDrive sensor'
HEADER_12 = {'big': struct.Struct('>IIf'), 'little': struct.Struct('<IIf')}
HEADER_16 = {'big': struct.Struct('>IIfI'), 'little': struct.Struct('<IIfI')}
LENGTH = {'big': struct.Struct('>I'), 'little': struct.Struct('<I')}
GAME_TIME = {'big': struct.Struct('>f'), 'little': struct.Struct('<f')}
DEFAULT_MAX_SAMPLE = 64 << 20   # a 4096×4096 bgra frame is 64 MiB; larger is refused
#: s a sample's game time may lie after the one before it and still be taken as its successor
#: while resynchronising (game time does not run back within a connection)
RESYNC_HORIZON_S = 60.0
#: game times a resync takes for a header's (s since the simulation started; 0 exactly, or from
#: a millisecond to 115 days — a random 32-bit word is one of them about one time in 15)
MIN_GAME_TIME, MAX_GAME_TIME = 1e-3, 1e7


@dataclass(frozen=True)
class SensorHeader:
    length: int              # bytes of the whole message, header included
    time: int                # u32 wall-clock time the simulator stamped (as sent)
    game_time: float         # s since the simulation started
    sample_count: Optional[int]  # 16-byte header only
    size: int                # 12 or 16


class SensorFramer:
    """Split a sensor stream into whole messages (header included) by their length field.

    A length below 12 or above ``max_sample`` is refused (CodecError, nothing allocated; one
    error per run of refused bytes) and the framer resynchronises: the bytes from there on are
    searched for a header that is *confirmed* — its length in range, its game time finite and
    not negative, and either

    * the header its length points to has arrived and is plausible too (length in range, game
      time from the candidate's to :data:`RESYNC_HORIZON_S` later), or
    * its message ends exactly where the bytes received so far end (a sample sent on its own)
      and its game time is plausible after the last framed message's (from it to
      :data:`RESYNC_HORIZON_S` later; any, before the first message of the connection).

    A candidate that cannot be decided yet (the bytes its length points to have not arrived)
    is kept while later candidates are tried; the first confirmed one wins and everything
    before it is skipped.  Garbage that happens to hold a plausible length (a random 4-byte
    word does one time in 64) is therefore not framed as a message — it would swallow the
    valid samples behind it and feed its ``sample_count`` to the gap counter.
    ``garbage_bytes`` counts every byte skipped.  Sans-IO, never raises.

    Two ways in, same events out: ``feed(bytes)``, or the buffered protocol of
    ``asyncio.BufferedProtocol`` — ``get_buffer()`` for the reader to ``recv_into`` and
    ``buffer_updated(n)``.  Through the latter a message of ``direct_from`` bytes or more (a
    camera frame) is read straight into its own bytearray, which becomes the event: the
    kernel's copy is the only one.  Smaller messages arrive through a ``read_size`` chunk
    buffer and come out as ``bytes``.
    """

    def __init__(self, name: str = MESSAGE, max_sample: int = DEFAULT_MAX_SAMPLE,
                 byte_order: str = 'big', *, read_size: int = 1 << 16,
                 direct_from: int = 1 << 16):
        if byte_order not in LENGTH:
            raise ValueError(f"byte_order must be 'big' or 'little', not {byte_order!r}")
        self.name = name
        self.max_sample = max_sample
        self.direct_from = max(1, direct_from)
        self.byte_order = byte_order
        self._length = LENGTH[byte_order]
        self._game_time = GAME_TIME[byte_order]
        self._chunk = bytearray(max(16, read_size))   # where small reads land
        self._buf = bytearray()           # unframed bytes (less than one small message)
        self._need = 0                    # length of the message being filled (0: none)
        self._msg: Optional[bytearray] = None   # a large message being filled in place
        self._filled = 0
        self._refusing = False            # resynchronising after a refused length field
        self._scanned = 0                 # resync: buffer offsets below this were examined
        self._pending: list[int] = []     # ... and these of them could not be decided yet
        self._last_game_time: Optional[float] = None   # of the last message framed
        self.garbage_bytes = 0

    def reset(self) -> None:
        self._buf.clear()
        self._need = 0
        self._msg = None
        self._filled = 0
        self._refusing = False
        self._scanned, self._pending = 0, []
        self._last_game_time = None

    @property
    def buffered(self) -> int:
        return len(self._buf) + self._filled

    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """Where the next read goes: the rest of a large message, else the chunk buffer."""
        if self._msg is not None:
            return memoryview(self._msg)[self._filled:]
        return memoryview(self._chunk)

    def buffer_updated(self, nbytes: int) -> list:
        """``nbytes`` were written at the start of the last :meth:`get_buffer`; the events."""
        if self._msg is not None:
            self._filled += nbytes
            if self._filled < len(self._msg):
                return []
            msg, self._msg, self._filled, self._need = self._msg, None, 0, 0
            self._framed(msg)
            return [msg]
        self._buf += memoryview(self._chunk)[:nbytes]
        return self._frame()

    def feed(self, data) -> list:
        events: list = []
        with memoryview(data) as view:
            view = view.cast('B') if view.format != 'B' or view.ndim != 1 else view
            while len(view):
                buf = self.get_buffer()
                n = min(len(buf), len(view))
                buf[:n] = view[:n]
                buf.release()
                events += self.buffer_updated(n)
                view = view[n:]
        return events

    def _frame(self) -> list:
        events: list = []
        while True:
            if self._refusing:
                start = self._resync()
                if start is None:
                    break
                self._refusing = False
            if not self._need:
                if len(self._buf) < 4:
                    break
                (n,) = self._length.unpack_from(self._buf, 0)
                if n < 12 or n > self.max_sample:
                    events.append(CodecError(
                        self.name, f'length field {n} outside [12, {self.max_sample}]; '
                        'resynchronising', field='length', offset=0,
                        kind=OVERSIZED if n > self.max_sample else TRUNCATED))
                    self._refusing = True
                    self._scanned, self._pending = 1, []    # offset 0 holds the refused length
                    continue
                self._need = n
            if len(self._buf) < self._need:
                if self._need >= self.direct_from:
                    # the rest of this message goes straight into its own buffer
                    self._msg = bytearray(self._need)
                    self._msg[:len(self._buf)] = self._buf
                    self._filled = len(self._buf)
                    self._buf.clear()
                break
            with memoryview(self._buf) as view:
                msg = bytes(view[:self._need])
            del self._buf[:self._need]
            self._need = 0
            self._framed(msg)
            events.append(msg)
        return events

    def _framed(self, msg) -> None:
        (self._last_game_time,) = self._game_time.unpack_from(msg, 8)

    def _skip(self, n: int) -> None:
        """Resync: the first ``n`` buffered bytes are garbage."""
        if n:
            del self._buf[:n]
            self.garbage_bytes += n
            self._scanned -= n
            self._pending = [p - n for p in self._pending if p >= n]

    def _resync(self) -> Optional[int]:
        """Skip to the first confirmed header (class docstring); None while there is none yet
        (the undecided candidates and the last 11 bytes are kept for the next read)."""
        size = len(self._buf)
        last = size - 12                  # the last offset a whole header fits at
        fresh = range(self._scanned, last + 1)
        if self._pending or len(fresh):
            accepted, undecided = self._examine(fresh)
            if accepted is not None:
                self._skip(accepted)
                self._scanned, self._pending = 0, []
                return 0
            self._pending = undecided
            self._scanned = max(self._scanned, last + 1)
        keep = self._pending[0] if self._pending else max(0, self._scanned)
        self._skip(min(keep, size))
        return None

    def _examine(self, fresh: range) -> tuple[Optional[int], list[int]]:
        """(first confirmed offset or None, offsets still undecided) among the pending
        candidates and the ``fresh`` offsets; vectorised, a frame of garbage is megabytes."""
        buf = np.frombuffer(self._buf, np.uint8)
        size = len(buf)
        try:
            shifts = (24, 16, 8, 0) if self.byte_order == 'big' else (0, 8, 16, 24)

            def word(at: np.ndarray) -> np.ndarray:
                out = buf[at].astype(np.uint32) << shifts[0]
                for k in (1, 2, 3):
                    out |= buf[at + k].astype(np.uint32) << shifts[k]
                return out

            def header(at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                """(plausible, length, game time) of the headers at ``at`` (all arrived)."""
                n = word(at).astype(np.int64)
                with np.errstate(invalid='ignore'):        # NaN bit patterns
                    gt = word(at + 8).view(np.float32).astype(np.float64)
                    ok = ((n >= 12) & (n <= self.max_sample)
                          & ((gt == 0.0) | ((gt >= MIN_GAME_TIME) & (gt <= MAX_GAME_TIME))))
                return ok, n, gt

            def follows(at: np.ndarray, n: np.ndarray, gt: np.ndarray) -> tuple:
                """For headers at ``at`` (lengths ``n``, game times ``gt``): whether the next
                header has arrived; whether it is plausible with a game time that follows;
                its offset, game time and length."""
                nxt = at + n
                arrived = nxt + 12 <= size
                good = np.zeros(len(at), bool)
                g2 = np.zeros(len(at))
                n2 = np.zeros(len(at), np.int64)
                if arrived.any():
                    ok, m, g = header(nxt[arrived])
                    g1 = gt[arrived]
                    good[arrived] = ok & (g >= g1) & (g <= g1 + RESYNC_HORIZON_S)
                    g2[arrived], n2[arrived] = g, m
                return arrived, good, nxt, g2, n2

            at = np.arange(fresh.start, fresh.stop, dtype=np.int64)
            if len(at):
                # the length test first (cheap, and it leaves ~1/64 of random bytes)
                n = word(at)
                at = at[(n >= 12) & (n <= self.max_sample)]
            at = np.concatenate([np.asarray(self._pending, np.int64), at])
            ok, n, gt = header(at)
            at, n, gt = at[ok], n[ok], gt[ok]
            arrived, good, nxt, g2, n2 = follows(at, n, gt)
            # a run of three plausible headers, or of two that ends where the bytes end
            nxt2 = nxt + n2
            arrived2, good2, _, _, _ = follows(nxt, n2, g2)
            confirmed = good & ((nxt2 == size) | good2)
            decided = ~good | arrived2 | (nxt2 == size)
            undecided = np.where(arrived, good & ~decided, True)
            # the message ends where the bytes end: a sample sent on its own
            ends = nxt == size
            t = self._last_game_time
            if t is None:
                confirmed |= ends
            else:
                confirmed |= ends & (gt >= t) & (gt <= t + RESYNC_HORIZON_S)
            hits = np.flatnonzero(confirmed)
            if len(hits):
                return int(at[hits[0]]), []
            return None, at[undecided].tolist()
        finally:
            del buf


def decode_header(message: bytes, size: int, byte_order: str = 'big') -> SensorHeader:
    """The 12- or 16-byte header at the start of ``message``."""
    if size not in (12, 16):
        raise ValueError('a sensor header is 12 or 16 bytes')
    if len(message) < size:
        raise CodecError(MESSAGE, f'{len(message)} bytes, the header needs {size}',
                         kind=TRUNCATED, offset=len(message))
    fmt = (HEADER_16 if size == 16 else HEADER_12)[byte_order]
    values = fmt.unpack_from(message, 0)
    return SensorHeader(values[0], values[1], values[2],
                        values[3] if size == 16 else None, size)


def encode_header(payload_size: int, time: int, game_time: float,
                  sample_count: Optional[int] = None, byte_order: str = 'big') -> bytes:
    """A header for ``payload_size`` bytes; 16 bytes with ``sample_count``, else 12."""
    if sample_count is None:
        return HEADER_12[byte_order].pack(12 + payload_size, time, game_time)
    return HEADER_16[byte_order].pack(16 + payload_size, time, game_time, sample_count)


class HeaderDetector:
    """Which header generation a connection sends, decided on its first message and kept.

    ``expected``: payload sizes the sensor's format allows (e.g. 1206 for lidar) — the header
    size is ``length − payload``.  Else a JSON sensor is recognised by ``{``/``[`` after the
    header.  Else the 16-byte header wins when its ``sample_count`` is plausible (the first
    sample count of a connection is small; a payload's first 4 bytes rarely are).
    """

    def __init__(self, size: Union[int, str] = 'auto', byte_order: str = 'big'):
        if size not in ('auto', 12, 16):
            raise ValueError("header size must be 'auto', 12 or 16")
        self.configured = size
        self.byte_order = byte_order
        self.size: Optional[int] = None if size == 'auto' else int(size)

    def reset(self) -> None:
        self.size = None if self.configured == 'auto' else int(self.configured)

    def detect(self, message: bytes, expected: tuple[int, ...] = (), json_payload=False) -> int:
        n = len(message)
        for size in (16, 12):
            if n - size in expected:
                return size
        if json_payload:
            for size in (12, 16):
                if n > size and message[size:size + 1] in (b'{', b'['):
                    return size
        if n >= 16:
            (count,) = struct.unpack_from('>I' if self.byte_order == 'big' else '<I',
                                          message, 12)
            if count < 1 << 24:
                return 16
        return 12

    def split(self, message: bytes, expected: tuple[int, ...] = (), json_payload=False
              ) -> tuple[SensorHeader, memoryview]:
        """(header, payload view) of one message; the first message fixes the generation."""
        if self.size is None:
            self.size = self.detect(message, expected, json_payload)
        header = decode_header(message, self.size, self.byte_order)
        if header.length != len(message):
            raise CodecError(MESSAGE, f'length field {header.length} but {len(message)} '
                             'bytes framed', field='length', kind=UNKNOWN_LAYOUT)
        if not math.isfinite(header.game_time):
            raise CodecError(MESSAGE, f'game_time {header.game_time}', field='game_time')
        return header, memoryview(message)[self.size:]


class SampleGaps:
    """Samples missing from a stream, from the 16-byte header's ``sample_count``.

    The simulator numbers its samples 1, 2, 3 …; every framed message of one sample (a
    camera's image and annotation, a lidar revolution's packets) carries the same number.  A
    jump from n to n + k counts k − 1 missing samples; a number that goes back (the simulator
    restarted its count, e.g. after a reconnect) starts counting afresh.  12-byte headers carry
    no count: nothing is counted.
    """

    def __init__(self):
        self.last: Optional[int] = None
        self.missing = 0          # samples numbered by the simulator that never arrived
        self.gaps = 0             # places where one or more were missing
        self.restarts = 0         # times the count went back

    def reset(self) -> None:
        """A new connection: its first sample sets the count (nothing counted across it)."""
        self.last = None

    def update(self, sample_count: Optional[int]) -> int:
        """The samples missing just before this one (0 when none or unknown)."""
        if sample_count is None:
            return 0
        last, self.last = self.last, sample_count
        if last is None or sample_count == last or sample_count == last + 1:
            return 0
        if sample_count < last:
            self.restarts += 1
            return 0
        missing = sample_count - last - 1
        self.missing += missing
        self.gaps += 1
        return missing
