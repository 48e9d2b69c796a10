"""``.idc`` recordings: Ibeo messages (spec §2.4 header + body) back to back in a file, each
header carrying the body size of the previous message ("size of previous message", the Ibeo
SDK's ``sizeOfPrevMessage``: without the header), usually ending with an IDC trailer 0x6120.

ROS-free.  :class:`IdcReader` memory-maps the file and builds a one-pass index (offset, data
type, device, NTP time, size) that serves sequential reads, seek by index or time and backward
steps along the previous-size chain.  Damage (garbage, a corrupt header, a size that runs past
the end of the file) is skipped by resynchronising on the next magic word that starts a
confirmed message; every skipped region is reported as :class:`Damage` (where, how many bytes,
why).  A broken previous-size chain between two intact, adjacent messages is reported as a
:class:`ChainBreak` and costs nothing (a previous size of 0 counts as "not set", as in live
captures written to a file).  :class:`IdcWriter` writes files (tests, demo, bench).

A candidate message is accepted when its header is plausible
(:func:`~ros_sim_bridge.ibeo.codec.framing.check_plausible`, body below ``max_body``, inside the
file) and one of these confirms it: it ends at the end of the file; a magic word follows it;
the next header's previous-size field equals its size (the next magic word is the damaged
part); its own previous-size field links it to the intact message right before it; or its
registered decoder accepts the body.  When no magic word follows it, the magic words inside
its declared body (one starting in its last three bytes included) are looked at first, as the
live framer's window search does: one whose header says the body ends there marks the size
field as corrupt; a plausible header
(:func:`~ros_sim_bridge.ibeo.codec.framing.plausible_header`, the live framer's window test)
whose message runs past the declared end marks the message as cut short (a sender or writer
interrupted and restarted, a re-sent message right after the cut copy).  Either way the
message is reported as damage and the search goes on at that magic word (a cut message: at
the first magic word after its own, as in the live framer), so the messages after it are
kept; messages nested wholly inside a body are payload.
"""
from __future__ import annotations

import bisect
import itertools
import mmap
import os
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.damage import Damage
from ros_sim_bridge.core.ntp import (MAX_TIME_JUMP_S, NTP_UNIX_OFFSET, CheckedTimes,
                                     check_ntp_times, why_invalid_beside)
from .codec import registry
from .codec.framing import check_plausible, implausible, plausible_header
from .codec.header import (DEFAULT_MAX_BODY, HEADER_SIZE, HEADER_STRUCT, MAGIC, MAGIC_BYTES,
                           IbeoHeader, decode_header, encode_message)
from .record_times import (RECORD_TIME_TYPES, TIME_FIRST, checked_record_time,
                           leading_time)

_U32 = struct.Struct('>I')
IDC_TRAILER = 0x6120


@dataclass(frozen=True)
class IdcEntry:
    """One message of the index: header offset in the file, data type, device id, NTP64 time,
    body size and the header's previous-size field."""
    offset: int
    data_type: int
    device_id: int
    ntp: int
    size: int
    previous_size: int

    @property
    def body_offset(self) -> int:
        return self.offset + HEADER_SIZE

    @property
    def end(self) -> int:
        return self.offset + HEADER_SIZE + self.size


@dataclass(frozen=True)
class ChainBreak:
    """The header at ``offset`` says the previous body had ``found`` bytes, it had ``expected``."""
    offset: int
    expected: int
    found: int


@dataclass
class IdcSummary:
    """What ``ibeo_idc info`` prints."""
    path: str
    file_size: int
    messages: int
    types: Counter = field(default_factory=Counter)
    devices: Counter = field(default_factory=Counter)
    first_ntp: Optional[int] = None
    last_ntp: Optional[int] = None
    #: messages on the power-up clock (before 1970) in a file whose clock was set later:
    #: not in the span (a power-up time and a date make no duration)
    unset_clock_messages: int = 0
    #: messages whose header time is invalid (:func:`~ros_sim_bridge.core.ntp.check_ntp_times`:
    #: 0, all ones, a jump), and (offset, data type, why) of the first ten: not in the span
    invalid_times: int = 0
    invalid_time_examples: list = field(default_factory=list)
    #: messages whose record's own time is invalid beside its checked header time
    #: (:mod:`.record_times`), and (offset, data type, why) of the first ten
    invalid_record_times: int = 0
    invalid_record_time_examples: list = field(default_factory=list)
    damages: list = field(default_factory=list)
    chain_breaks: list = field(default_factory=list)

    @property
    def duration_s(self) -> float:
        if self.first_ntp is None:
            return 0.0
        return (self.last_ntp - self.first_ntp) / 4294967296.0

    @property
    def bytes_skipped(self) -> int:
        return sum(d.skipped for d in self.damages)


class IdcReader:
    """Read an ``.idc`` file (context manager).  ``entries`` is the index, ``damages`` and
    ``chain_breaks`` what the indexing pass found (built on first use)."""

    def __init__(self, path: Union[str, Path], *, max_body: int = DEFAULT_MAX_BODY):
        self.path = Path(path)
        self.max_body = max_body
        self._file = open(self.path, 'rb')
        self.file_size = os.fstat(self._file.fileno()).st_size
        self._data = (mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
                      if self.file_size else b'')
        self._entries: Optional[list[IdcEntry]] = None
        self.damages: list[Damage] = []
        self.chain_breaks: list[ChainBreak] = []
        self._times: Optional[list[int]] = None

    # --- life cycle ---------------------------------------------------------------------
    def close(self) -> None:
        if isinstance(self._data, mmap.mmap):
            try:
                self._data.close()
            except BufferError:       # a caller still holds a view: the GC unmaps it later
                pass
        self._data = b''
        self._file.close()

    def __enter__(self) -> 'IdcReader':
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- index --------------------------------------------------------------------------
    @property
    def entries(self) -> list[IdcEntry]:
        if self._entries is None:
            self._entries = self._build_index()
        return self._entries

    def __len__(self) -> int:
        return len(self.entries)

    def _candidate(self, pos: int, prev: Optional[IdcEntry] = None
                   ) -> tuple[Optional[IdcEntry], str, int]:
        """(the message at ``pos``, '', its end) if it is confirmed, else (None, why not,
        where the search for the next message starts)."""
        data, n = self._data, self.file_size
        if pos + HEADER_SIZE > n:
            return None, f'{n - pos} bytes left, a header needs {HEADER_SIZE}', pos + 1
        # the common case first, in one unpack: a plausible header and a magic word (or the
        # file's end) where its body ends; anything else takes the checks below
        magic, previous_size, size, _, device, data_type, ntp = HEADER_STRUCT.unpack_from(data, pos)
        end = pos + HEADER_SIZE + size
        if (magic == MAGIC and size <= self.max_body and end <= n
                and (end == n or data[end:end + 4] == MAGIC_BYTES)
                and implausible(data_type, size) is None):
            return IdcEntry(pos, data_type, device, ntp, size, previous_size), '', end
        if data[pos:pos + 4] != MAGIC_BYTES:
            found = bytes(data[pos:pos + 4])
            hint = (': the file is hex text (e.g. a .hexlog capture), not a binary .idc; '
                    'convert it with ibeo_idc from-hex or play it with ibeo_lux_sim --replay'
                    ) if found.upper() == b'AFFE' else ''
            return None, (f'no magic word 0x{MAGIC_BYTES.hex().upper()} (found '
                          f'{found.hex(" ")}){hint}'), pos + 1
        try:
            h = decode_header(data, pos)
            check_plausible(h)
        except CodecError as exc:
            return None, str(exc), pos + 1
        if h.size > self.max_body:
            return (None, f'declared size {h.size} above the {self.max_body}-byte limit',
                    pos + 1)
        end = pos + HEADER_SIZE + h.size
        if end > n:
            return (None, f'declared size {h.size} runs {end - n} bytes past the end of the file',
                    pos + 1)
        entry = IdcEntry(pos, h.data_type, h.device_id, h.ntp, h.size, h.previous_size)
        if end == n or data[end:end + 4] == MAGIC_BYTES:
            return entry, '', end
        # Nothing starts where this message says it ends.  A message inside the declared body
        # that names the real end of this one: the size field is corrupt (go on there).  A
        # plausible header inside it whose message runs past its declared end: this message was
        # cut short (its sender or writer interrupted and restarted), the live framer's window
        # rule (:class:`~ros_sim_bridge.core.framer.MagicFramer` ``search_window``): the search
        # goes on after its magic word, so the messages inside the window are kept too.
        # Trusting the size would swallow them.
        stop = end + len(MAGIC_BYTES) - 1   # a magic word starting inside the body counts
        q = data.find(MAGIC_BYTES, pos + 4, stop)
        while q >= 0:
            body = q - pos - HEADER_SIZE
            if body >= 0 and q + 8 <= n and _U32.unpack_from(data, q + 4)[0] == body:
                return None, (f'declared size {h.size}, but the message at {q} says this '
                              f'body has {body} bytes'), q
            inner = plausible_header(data, q, self.max_body)
            if inner is not None and q + HEADER_SIZE + inner.size > end:
                return None, (f'declared size {h.size}, but the message at {q} runs past its '
                              'declared end and no header stands there: cut short; the '
                              'search goes on after its magic word'), pos + 1
            q = data.find(MAGIC_BYTES, q + 1, stop)   # nested wholly inside: payload
        if end + 8 <= n and _U32.unpack_from(data, end + 4)[0] == h.size:
            return entry, '', end         # the next header's magic word is the damaged part
        if prev is not None and prev.end == pos and h.previous_size == prev.size:
            return entry, '', end         # linked to the intact message before it
        if h.data_type in registry.registered_types():
            try:
                registry.decode_message(h.data_type, data[pos + HEADER_SIZE:end], h)
                return entry, '', end
            except CodecError as exc:
                return None, f'unconfirmed: no magic word follows and the body does not ' \
                             f'decode ({exc})', pos + 1
        return None, 'unconfirmed: no magic word follows its declared end', pos + 1

    def _build_index(self) -> list[IdcEntry]:
        data, n = self._data, self.file_size
        entries: list[IdcEntry] = []
        pos = 0
        damage_at, damage_reason = None, ''
        while pos < n:
            entry, why, resume = self._candidate(pos, entries[-1] if entries else None)
            if entry is None:
                if damage_at is None:
                    damage_at, damage_reason = pos, why
                nxt = data.find(MAGIC_BYTES, resume)
                pos = n if nxt < 0 else nxt
                continue
            if damage_at is not None:
                self.damages.append(Damage(damage_at, pos - damage_at, damage_reason,
                                           resumed=pos))
                damage_at = None
            elif (entries and entries[-1].end == pos and entry.previous_size
                  and entry.previous_size != entries[-1].size):   # 0: not set (live capture)
                self.chain_breaks.append(ChainBreak(pos, entries[-1].size, entry.previous_size))
            entries.append(entry)
            pos = entry.end
        if damage_at is not None:
            self.damages.append(Damage(damage_at, n - damage_at, damage_reason))
        return entries

    # --- access -------------------------------------------------------------------------
    def body(self, entry: IdcEntry) -> memoryview:
        """The body bytes of ``entry``: a view into the mapped file, no copy (the decoders copy
        what they keep; a view still alive at :meth:`close` keeps the mapping until it goes)."""
        return memoryview(self._data)[entry.body_offset:entry.end]

    def header(self, entry: IdcEntry) -> IbeoHeader:
        return IbeoHeader(data_type=entry.data_type, size=entry.size, device_id=entry.device_id,
                          ntp=entry.ntp, previous_size=entry.previous_size)

    def raw(self, entry: IdcEntry) -> bytes:
        """Header + body bytes of ``entry`` as in the file."""
        return bytes(self._data[entry.offset:entry.end])

    def decode(self, entry: IdcEntry):
        """The typed record of ``entry``; CodecError (e.g. UNKNOWN_LAYOUT) when it has none."""
        return registry.decode_message(entry.data_type, self.body(entry), self.header(entry))

    def __iter__(self) -> Iterator[IdcEntry]:
        return iter(self.entries)

    def __getitem__(self, i: int) -> IdcEntry:
        return self.entries[i]

    def index_at_time(self, ntp: int) -> int:
        """Index of the first message (in file order) by which the recording's NTP times have
        reached ``ntp``: the latest time up to each message is searched, so times that go back
        (a device whose clock is behind another's, a clock set back) do not mislead it."""
        if self._times is None:
            self._times = list(itertools.accumulate((e.ntp for e in self.entries), max))
        return bisect.bisect_left(self._times, ntp)

    def index_of_offset(self, offset: int) -> int:
        """Index of the message whose header is at ``offset`` (ValueError if none)."""
        offsets = [e.offset for e in self.entries]
        i = bisect.bisect_left(offsets, offset)
        if i == len(offsets) or offsets[i] != offset:
            raise ValueError(f'no message at offset {offset}')
        return i

    def previous(self, entry: IdcEntry) -> Optional[IdcEntry]:
        """The message before ``entry`` found by the previous-size chain alone (no index), or
        None at the start of the file or when the chain is broken there."""
        if entry.offset == 0:
            return None
        at = entry.offset - HEADER_SIZE - entry.previous_size
        if at < 0:
            return None
        cand, _, _ = self._candidate(at)
        return cand if cand is not None and cand.end == entry.offset else None

    def checked_times(self, max_jump_s: float = MAX_TIME_JUMP_S) -> CheckedTimes:
        """The header time to use for each entry (:func:`~ros_sim_bridge.core.ntp.
        check_ntp_times`, each header device id's clock on its own: an invalid one replaced by
        a neighbouring valid one of its device; the IDC trailer, written with time 0, is not
        checked)."""
        return check_ntp_times([None if e.data_type == IDC_TRAILER else e.ntp
                                for e in self.entries], max_jump_s,
                               [e.device_id for e in self.entries])

    def invalid_time_examples(self, checked: CheckedTimes) -> list[tuple[int, int, str]]:
        """(offset, data type, why) of the first invalid header times of ``checked``."""
        return [(self.entries[i].offset, self.entries[i].data_type, why)
                for i, why in checked.reasons]

    def invalid_record_times(self, checked: CheckedTimes, max_jump_s: float = MAX_TIME_JUMP_S
                             ) -> list[tuple[int, int, str]]:
        """(offset, data type, why) of every message whose record's own time is invalid
        beside its header time of ``checked`` (:mod:`.record_times`); a body that does not
        decode is left out (``to-bag`` counts it as such)."""
        out = []
        for e, ntp in zip(self.entries, checked.times):
            if e.data_type not in RECORD_TIME_TYPES:
                continue
            if e.data_type in TIME_FIRST:            # no need to decode a scan for it
                own_ntp = leading_time(e.data_type, self.body(e))
                why = None if own_ntp is None else why_invalid_beside(own_ntp, ntp, max_jump_s)
            else:
                try:
                    why = checked_record_time(self.decode(e), ntp, max_jump_s).why
                except CodecError:
                    continue
            if why is not None:
                out.append((e.offset, e.data_type, why))
        return out

    def summary(self, max_jump_s: float = MAX_TIME_JUMP_S) -> IdcSummary:
        s = IdcSummary(str(self.path), self.file_size, len(self.entries),
                       damages=list(self.damages), chain_breaks=list(self.chain_breaks))
        for e in self.entries:
            s.types[e.data_type] += 1
            s.devices[e.device_id] += 1
        checked = self.checked_times(max_jump_s)
        s.invalid_times = len(checked.why)
        s.invalid_time_examples = self.invalid_time_examples(checked)
        records = self.invalid_record_times(checked, max_jump_s)
        s.invalid_record_times, s.invalid_record_time_examples = len(records), records[:10]
        times = [e.ntp for i, e in enumerate(self.entries)
                 if e.data_type != IDC_TRAILER and i not in checked.why]
        dated = [t for t in times if (t >> 32) >= NTP_UNIX_OFFSET]
        if dated and len(dated) < len(times):     # the clock was set during the recording
            s.unset_clock_messages = len(times) - len(dated)
            times = dated
        if times:
            s.first_ntp, s.last_ntp = min(times), max(times)
        return s


def hex_messages(lines: Iterable[bytes]) -> Iterator[tuple[int, Optional[bytes], str]]:
    """(line number, message bytes or None, why not) for every non-blank line of a hex log
    (one complete Ibeo message per line: 24-byte header + body, hex digits, spaces allowed
    between bytes).  A line is a message when it is hex, starts with the magic word and its
    header's size field matches its length."""
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        try:
            data = bytes.fromhex(line.decode('ascii'))
        except (UnicodeDecodeError, ValueError):
            yield number, None, 'not hex text'
            continue
        if len(data) < HEADER_SIZE or data[:4] != MAGIC_BYTES:
            yield number, None, (f'{len(data)} bytes, not an Ibeo message (a {HEADER_SIZE}-byte '
                                 f'header starting {MAGIC_BYTES.hex().upper()})')
            continue
        size = decode_header(data).size
        if size != len(data) - HEADER_SIZE:
            yield number, None, (f'the header says {size} body bytes, the line holds '
                                 f'{len(data) - HEADER_SIZE}')
            continue
        yield number, data, ''


class IdcWriter:
    """Write an ``.idc`` file: messages back to back with the previous-size chain, the IDC
    trailer 0x6120 on :meth:`close` (unless ``trailer=False``)."""

    def __init__(self, path: Union[str, Path], *, trailer: bool = True):
        self.path = Path(path)
        self._file = open(self.path, 'wb')
        self._previous = 0
        self._trailer = trailer
        self.messages = 0
        self.bytes = 0

    def write(self, data_type: int, body: bytes, *, device_id: int = 0, ntp: int = 0) -> int:
        """Append one message; returns its offset."""
        at = self.bytes
        msg = encode_message(data_type, body, device_id=device_id, ntp=ntp,
                             previous_size=self._previous)
        self._file.write(msg)
        self._previous = len(body)
        self.messages += 1
        self.bytes += len(msg)
        return at

    def write_record(self, record, *, device_id: int = 0, ntp: int = 0) -> int:
        data_type, body = registry.encode_record(record)
        return self.write(data_type, body, device_id=device_id, ntp=ntp)

    def close(self) -> None:
        if self._file.closed:
            return
        if self._trailer:
            self.write(IDC_TRAILER, b'', ntp=0)
        self._file.close()

    def __enter__(self) -> 'IdcWriter':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
