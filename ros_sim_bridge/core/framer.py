"""Sans-IO framing of a byte stream into messages that start with a magic word.

Used for TCP protocols (ibeo data header, monoDrive control channel).  The framer keeps the
partial data between ``feed`` calls, so a header or magic word split across two reads survives.
It never raises: garbage, implausible headers and oversized frames come back as
:class:`~ros_sim_bridge.core.binary.CodecError` values in the event list, in stream order, and
the framer resynchronises on the next magic word (searching from the byte after a false sync;
the bytes skipped up to it belong to that false sync: one error, counted in ``false_syncs``).

Two optional checks find false syncs that a plausible header alone does not show (a message
cut short by its sender, whose declared body swallows the valid messages after it; issue #10
defect 5): ``check_body`` decodes each complete body (a :class:`Rejected` event when it fails)
and ``search_window`` looks inside a declared body for a plausible header whose message runs
past the body's end.  Such a header alone proves nothing (payload may hold the magic word and a
plausible header by chance, issue #26): the message is given up only when the bytes at its
declared end are no plausible header; a complete message followed by one is handed on whatever
its body holds.  Either way, when a message may start inside the failed one the search
resumes at the byte after the failed message's magic word, so the messages inside the window
are framed and nothing valid is lost; a failed message without one is skipped whole (a
well-framed message with a bad body: one error, its bytes are no garbage).

A well-framed message above ``max_body`` (its header arrives where the previous message ended)
is, with ``skip_oversized``, skipped by its declared size: one OVERSIZED event, its body dropped
as it arrives, never buffered or searched for magic words byte by byte.  Only a message that
starts inside that body and is confirmed (its body decodes, or a plausible header follows it;
one running past the body's end only when no plausible header stands at that end) shows the
header was wrong or the message cut short: the skip ends there.

With ``search_window``, a message that comes out whole but cut short by its sender (its
declared size filled by the first bytes of the next message's header, the read ending right
there) shows when the next bytes are no magic word: a plausible header then starts in the last
bytes of that message and runs on into them.  The search resumes at it (one TRUNCATED event),
so the next message is framed, not lost; the message before was handed on already.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from ros_sim_bridge.core.binary import BAD_MAGIC, OVERSIZED, TRUNCATED, CodecError


@dataclass(frozen=True)
class Frame:
    """One complete message: its header bytes and its body bytes (a copy; with the framer's
    ``views``, a read-only memoryview, no copy: of the read when that read, ``bytes``, held
    the whole body, or of the buffer that collected a large one, never changed afterwards).

    ``parsed``: the decoded header when ``body_size`` returned one (else None); ``record``:
    what ``check_body`` returned (else None), so that nothing is decoded twice.
    """
    header: bytes
    body: bytes
    parsed: Any = None
    record: Any = None


@dataclass(frozen=True)
class Rejected:
    """A complete frame whose body ``check_body`` refused (``error`` says why).  The framer
    skipped it whole, or, when its bytes after the magic word hold a plausible header (a false
    sync), resumed its search at the byte after its magic word."""
    frame: Frame
    error: CodecError


Event = Union[Frame, Rejected, CodecError]


class MagicFramer:
    """Split a stream into frames ``magic | rest of header | body``.

    ``magic`` is one magic word, or a sequence of equally long ones that are all accepted
    (monoDrive replies carry either of two, SUPPLEMENT §4.1); the frame's header says which.
    ``body_size(header) -> int`` reads the body length from a complete header and may raise
    CodecError when the header is implausible (then the search resumes one byte further on);
    it may return a decoded header with an int ``size`` attribute instead, handed on as
    :attr:`Frame.parsed`.  Bodies larger than ``max_body`` are refused as OVERSIZED before any
    of them is buffered.

    ``check_body(frame) -> record`` (optional) decodes a complete frame; a CodecError from it
    makes a :class:`Rejected` event and the frame is skipped whole, or, when a plausible header
    starts in its bytes after its magic word (a false sync), the search resumes from the byte
    after its magic.
    ``search_window`` (optional): a plausible header starting inside the header's own bytes
    after its magic word (a header cut short by its sender), or one inside the body whose
    message would end beyond the body's end when the bytes at the body's end are no plausible
    header (:meth:`_boundary`), marks a false sync (CodecError TRUNCATED, resync from the byte
    after the magic); a plausible header nested wholly inside the body, or running past a body
    followed by a plausible header, is payload and left alone.  So the body is searched only
    once all of it is in, and only when the bytes after it are not (yet) a complete plausible
    header: a message followed by one costs no search, whatever its size.
    ``skip_oversized`` (optional): a header above ``max_body`` that comes in sync (at the
    stream's start or where the previous message ended) is one OVERSIZED event and its body is
    dropped by its declared size (:meth:`_skip_oversized`), unless, with ``search_window``, a
    plausible header starts inside its own bytes (:meth:`_header_cut_short`); out of sync it
    is a false sync like any implausible header.  ``describe(parsed) -> str`` (optional) names a message in
    error texts (e.g. its data type).  ``views`` (optional): a body that lies whole in one
    read of ``bytes`` is handed on as a read-only memoryview of it (:class:`Frame`), one of at
    least :attr:`VIEW_MIN` bytes collected over several reads as one of the buffer that
    collected it (the framer goes on in a new buffer), for consumers that take any buffer.
    """

    #: with ``views``, a body of at least this many bytes that was collected over several
    #: reads is handed on as a view of the buffer that collected it (no copy out of it)
    VIEW_MIN = 1 << 16

    def __init__(self, name: str, magic: Union[bytes, Sequence[bytes]], header_size: int,
                 body_size: Callable[[bytes], Any], max_body: int, *,
                 check_body: Optional[Callable[[Frame], Any]] = None,
                 search_window: bool = False, skip_oversized: bool = False,
                 describe: Callable[[Any], str] = lambda parsed: 'a', views: bool = False):
        self.name = name
        self.magics = (magic,) if isinstance(magic, (bytes, bytearray)) else tuple(magic)
        if not self.magics or len({len(m) for m in self.magics}) != 1:
            raise ValueError('magic words must be given and be of one length')
        self.magic = self.magics[0]
        # a body's search for the magic word: re's literal search, several times faster than
        # bytes.find on megabytes of payload (CPython 3.11: 0.6 ns a byte)
        self._magic_at = re.compile(re.escape(self.magic)).search
        self.header_size = header_size
        self.body_size = body_size
        self.max_body = max_body
        self.check_body = check_body
        self.search_window = search_window
        self.skip_oversized = skip_oversized
        self.describe = describe
        self.views = views
        self._buf = bytearray()     # from the magic word of the message being collected on
        # (header bytes, body size, parsed header) of the message being collected
        self._pending: Optional[tuple[bytes, int, Any]] = None
        self._window_from = 0       # where the window search goes on in _buf
        self._crossing: Optional[int] = None  # where in _buf a plausible header inside the
        # pending body starts whose message runs past its end: the body's end decides
        self._in_sync = True        # _buf starts where the previous message ended
        self._skip_left = 0         # body bytes of an oversized message still to drop
        self._false_sync_bytes = False  # bytes up to the next magic: a reported false sync
        self._garbage_run = False   # garbage skipped up to the buffer's end, reported: the
        # next read's bytes up to a magic word are the same run, not another error
        self._tail = b''            # the last header_size - 1 bytes of the message just framed
        # (search_window): where the next header starts when its sender cut that message short
        self.garbage_bytes = 0   # bytes skipped while searching for the magic word
        # headers and messages given up as false syncs (implausible, cut short, rejected)
        self.false_syncs = 0

    def reset(self) -> None:
        """Forget partial data (after a reconnect the old stream's tail is meaningless)."""
        self._buf.clear()
        self._pending = None
        self._window_from = 0
        self._crossing = None
        self._in_sync = True
        self._skip_left = 0
        self._false_sync_bytes = False
        self._garbage_run = False
        self._tail = b''

    @property
    def buffered(self) -> int:
        return len(self._buf)

    @property
    def awaiting(self) -> str:
        """The message whose declared body is being collected or skipped and how much of it
        arrived ('' between messages), for diagnostics (a legal size cut short by its sender
        holds the messages after it until that much has come); safe to read from another
        thread."""
        pending, left = self._pending, self._skip_left
        if pending is not None:
            got = min(pending[1], max(0, len(self._buf) - self.header_size))
            return (f'{self.describe(pending[2])} message: {pending[1]:,} body bytes, '
                    f'{got:,} arrived')
        return f"the oversized message's last {left:,} body bytes (skipped)" if left else ''

    def cut_short(self) -> Optional[CodecError]:
        """Call when the stream ended (the peer closed, the link was given up, the file ended):
        the message it ended inside, as a TRUNCATED CodecError saying how much of it arrived;
        None when it ended between messages (or inside bytes that are not yet a magic word).
        Does not reset."""
        hs = self.header_size
        if self._skip_left:
            return None                          # counted as oversized already
        if self._pending is not None:
            size = self._pending[1]
            got = max(0, len(self._buf) - hs)
            return CodecError(self.name, f'stream ended inside a message: {got} of its {size} '
                              'body bytes arrived (cut short where the stream ended)',
                              field='body', offset=hs + got, kind=TRUNCATED)
        if len(self._buf) and any(self._buf.startswith(m) for m in self.magics):
            return CodecError(self.name, f'stream ended inside a message header: '
                              f'{len(self._buf)} of its {hs} bytes arrived (cut short where '
                              'the stream ended)', field='header', offset=len(self._buf),
                              kind=TRUNCATED)
        if self._tail and self._buf:             # held for _resumed_in_tail to decide
            return CodecError(self.name, f'stream ended inside a message header begun in the '
                              f'last bytes of the message before ({len(self._buf)} more bytes '
                              'arrived; cut short where the stream ended)', field='header',
                              kind=TRUNCATED)
        return None

    def _search(self, data, start: int, stop: int) -> int:
        """``data.find(self.magic, start, stop)``: where the first magic word wholly inside
        ``data[start:stop]`` starts, -1 for none."""
        found = self._magic_at(data, start, max(start, stop))
        return -1 if found is None else found.start()

    def _parse(self, raw: bytes) -> tuple[int, Any]:
        """(body size, parsed header or None); CodecError when implausible."""
        parsed = self.body_size(raw)
        if isinstance(parsed, int):
            return parsed, None
        return int(parsed.size), parsed

    def feed(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        if type(data) is bytes and not self._skip_left and self._crossing is None:
            used = self._in_place(data, events)
            if used:
                if used == len(data) and (not self._buf or self._pending is not None):
                    return events                # (a pending header: it is the buffer)
                data = memoryview(data)[used:]
        self._buf += data
        hs = self.header_size
        while True:
            if self._skip_left:
                if not self._skip_oversized(events):
                    return events
                continue
            if self._pending is None:
                if not self._sync(events):
                    return events
                header = bytes(self._buf[:hs])
                try:
                    size, parsed = self._parse(header)
                except CodecError as err:
                    events.append(err)
                    self._false_sync()       # search on from the next byte
                    continue
                if self.skip_oversized and self._in_sync and size > self.max_body:
                    if self.search_window:
                        cut = self._header_cut_short(size, events)
                        if cut is None:
                            return events            # the next bytes decide
                        if cut:
                            continue
                    events.append(CodecError(
                        self.name, f'{self.describe(parsed)} message of {size} body bytes is '
                        f'above the limit of {self.max_body}: skipped by its declared size',
                        field='size', kind=OVERSIZED))
                    self._consume(hs)
                    self._tail = b''             # its body goes unseen: nothing to look back on
                    self._skip_left = size
                    continue
                if size < 0 or size > self.max_body:
                    events.append(CodecError(self.name, f'header announces {size} body bytes '
                                             f'(limit {self.max_body}); resynchronising',
                                             field='size', offset=0, kind=OVERSIZED))
                    self._false_sync()
                    continue
                self._pending = (header, size, parsed)
                # the window starts after the magic word: a header cut short by its sender
                # holds the next message's magic word (and header) in its own bytes
                self._window_from = len(self.magic)
            header, size, parsed = self._pending
            end = hs + size
            if self.search_window and self._crossing is None:
                # the header's own bytes first (a header cut short by its sender); the body
                # only once all of it is in, and only when no plausible header follows it
                if self._false_sync_in_window(hs, events):
                    continue
                if len(self._buf) < end:
                    return events
                if not self._followed_by_header(end) and \
                        self._false_sync_in_window(end, events):
                    continue
            if len(self._buf) < end:
                return events
            if self._crossing is not None:
                boundary = self._boundary(end)
                if boundary is None:
                    return events                # the next bytes decide
                if not boundary:
                    events.append(self._cut_error(self._crossing))
                    self._false_sync()
                    continue
            if self.views and size >= self.VIEW_MIN:
                # the buffer is handed on with the body (a view of it, never resized again);
                # the bytes after the message go on in a new one
                held = self._buf
                event = self._checked(Frame(header, memoryview(held).toreadonly()[hs:end],
                                            parsed))
                events.append(event)
                if not isinstance(event, Rejected):
                    self._buf = held[end:]
                    self._consume(0, tail=held[max(0, end - hs + 1):end])
                    continue
                self._buf = bytearray(held)      # the loop's handling, on a copy
            else:
                with memoryview(self._buf) as view:   # one copy of the body, not two
                    body = bytes(view[hs:end])
                event = self._checked(Frame(header, body, parsed))
                events.append(event)
            if isinstance(event, Rejected) and self._may_hold_message(end):
                self._false_sync()
            else:
                self._consume(end)

    def _in_place(self, data: bytes, events: list[Event]) -> int:
        """Frame the whole messages at the front of ``data`` (an immutable read) where they
        lie: no copy into the buffer; each body a copy of its bytes, or with ``views`` a
        read-only view of ``data`` (no copy at all).  The first one's header may be the whole
        buffer (the read before ended with it).  Only what :meth:`feed`'s loop would frame
        without a search: a magic word inside a header's own bytes, an implausible or
        oversized header, or a body that holds a magic word and is not followed by a complete
        plausible header in ``data`` stops here, and the loop takes the bytes from there on (a
        header parsed here is its pending one, not parsed again); a body ``check_body``
        refuses goes to the buffer and is handled as the loop handles it.  Returns how many
        bytes of ``data`` were taken."""
        hs, magic, m = self.header_size, self.magic, len(self.magic)
        at, header, known = 0, None, None       # known: the next header, parsed already
        if self._pending is not None:
            header, size, parsed = self._pending
            if len(self._buf) != hs or (header + data[:m - 1]).find(magic, m) >= 0:
                return 0
            start = 0                            # the header is the buffer
        elif self._buf:
            return 0
        while True:
            if header is None:
                if len(data) - at < hs or not data.startswith(self.magics, at) or \
                        data.find(magic, at + m, at + hs + m - 1) >= 0:
                    return at
                header = data[at:at + hs]
                if known is not None:
                    size, parsed = known
                else:
                    try:
                        size, parsed = self._parse(header)
                    except CodecError:
                        return at
                    if not 0 <= size <= self.max_body:
                        return at
                # as the loop leaves a header it parsed (in sync, after its magic word)
                self._tail = b''
                self._false_sync_bytes = self._garbage_run = False
                self._pending = (header, size, parsed)
                self._window_from = m
                start = at + hs
            end = start + size
            if len(data) < end:
                if start == len(data) and not self._buf:
                    # only its header came (searched above): held as the loop holds it
                    self._buf += data[at:]
                    return len(data)
                return at
            known = None
            if self.search_window:
                after = data[end:end + hs]
                if len(after) == hs and after.startswith(self.magics):
                    known = self._parsed_plausible(after)
                if known is None and self._search(data, start, end + m - 1) >= 0:
                    return at
            body = memoryview(data)[start:end] if self.views else data[start:end]
            event = self._checked(Frame(header, body, parsed))
            events.append(event)
            if isinstance(event, Rejected):      # the loop's handling, on the buffer
                self._buf += memoryview(data)[at if start else 0:]
                if self._may_hold_message(hs + size):
                    self._false_sync()
                else:
                    self._consume(hs + size)
                return len(data)
            self._buf.clear()                    # (the header, when it was the buffer)
            self._consume(0, tail=(data[end - hs + 1:end] if size >= hs - 1 else
                                   (header + data[start:end])[1 - hs:]))
            at, header = end, None

    def finish(self) -> list[Event]:
        """Call when the stream ended (before :meth:`cut_short`): a complete message held only
        until the bytes after it show its end is a boundary (:meth:`_boundary`) is handed on,
        the stream's end being its boundary; a message the stream ended inside is given up
        (its TRUNCATED error, as :meth:`cut_short` words it) and the search resumes after its
        magic word, so the complete messages that arrived inside its declared size (a message
        cut short by its sender, then the link lost) are framed too.  [] when nothing was
        held."""
        events: list[Event] = []
        while self._pending is not None:
            header, size, parsed = self._pending
            end = self.header_size + size
            if len(self._buf) >= end:
                if self._crossing is None:
                    break
                events.append(self._checked(Frame(header, bytes(self._buf[self.header_size:end]),
                                                  parsed)))
                self._consume(end)
            else:
                events.append(self.cut_short())
                self._false_sync()
            events += self.feed(b'')
        return events

    def _boundary(self, end: int) -> Optional[bool]:
        """Whether a plausible header starts at ``end`` in the buffer (a message's declared
        end: a real boundary); None until the bytes to tell have arrived."""
        after = bytes(self._buf[end:end + self.header_size])
        if not after:
            return None
        if not any(m.startswith(after[:len(m)]) for m in self.magics):
            return False
        if len(after) < self.header_size:
            return None
        return self._plausible(after) is not None

    def _followed_by_header(self, end: int) -> bool:
        """Whether a complete plausible header stands at ``end`` in the buffer: the message
        ending there is framed whatever its body holds (a plausible header inside it running
        past its end is payload), so its body is not searched (O(1) per message)."""
        return len(self._buf) >= end + self.header_size and bool(self._boundary(end))

    def _cut_error(self, at: int) -> CodecError:
        """The TRUNCATED error of the pending message given up for the plausible header at
        ``at`` (inside its header, or a message running past its end)."""
        return CodecError(
            self.name, f'a message declaring {self._pending[1]} body bytes holds a plausible '
            f'header at its byte {at} (inside its header, or a message running past its end '
            'with no header there): cut short by the sender; resynchronising after its magic '
            'word', field='size', offset=at, kind=TRUNCATED)

    def _checked(self, frame: Frame) -> Event:
        """``frame`` with what ``check_body`` made of its body, or Rejected by it."""
        if self.check_body is None:
            return frame
        try:
            return Frame(frame.header, frame.body, frame.parsed, self.check_body(frame))
        except CodecError as err:
            return Rejected(frame, err)

    def whole(self, data: bytes) -> list[Event]:
        """The events of ``data``, one message whose bounds its source decided (a recording's
        index, :class:`~ros_sim_bridge.ibeo.idc.IdcReader`): as :meth:`feed` between messages
        gives, but its body is not searched (whatever it holds is its payload), and a body that
        ``check_body`` refuses is skipped whole.  Anything else (not exactly one message with a
        plausible header, or a stream being framed) goes through :meth:`feed`."""
        hs = self.header_size
        if (self._buf or self._skip_left or len(data) < hs
                or bytes(data[:len(self.magic)]) not in self.magics):
            return self.feed(data)
        header = bytes(data[:hs])
        try:
            size, parsed = self._parse(header)
        except CodecError:
            return self.feed(data)
        if size != len(data) - hs or size > self.max_body:
            return self.feed(data)
        self._tail, self._garbage_run, self._false_sync_bytes = b'', False, False
        return [self._checked(Frame(header, bytes(data[hs:]), parsed))]

    def _consume(self, end: int, tail: Optional[bytes] = None) -> None:
        """The message being collected (``end`` bytes) is handled: drop it (``tail``: its
        last bytes when the buffer holds none of it any more)."""
        if self.search_window:
            self._tail = bytes(self._buf[max(0, end - self.header_size + 1):end]
                               if tail is None else tail)
        del self._buf[:end]
        self._pending = None
        self._crossing = None
        self._in_sync = True

    def _plausible_size(self, at: int) -> Optional[int]:
        """The body size the complete header at ``at`` in the buffer announces; None when
        that header is implausible (or its size is out of bounds)."""
        return self._plausible(bytes(self._buf[at:at + self.header_size]))

    def _plausible(self, header: bytes) -> Optional[int]:
        """The body size a complete ``header`` announces; None when it is implausible."""
        parsed = self._parsed_plausible(header)
        return None if parsed is None else parsed[0]

    def _parsed_plausible(self, header: bytes) -> Optional[tuple[int, Any]]:
        """:meth:`_parse` of a complete ``header``; None when it is implausible."""
        try:
            size, parsed = self._parse(header)
        except CodecError:
            return None
        return (size, parsed) if 0 <= size <= self.max_body else None

    def _may_hold_message(self, end: int) -> bool:
        """True when a message may start in the buffer's bytes 1 to ``end``: a magic word there
        with a plausible header, or whose header (or the magic word itself) is not all in yet."""
        buf = self._buf
        for magic in self.magics:
            stop = end + len(magic) - 1          # magic words that start before ``end``
            at = buf.find(magic, 1, stop)
            while at >= 0:
                if at + self.header_size > len(buf) or self._plausible_size(at) is not None:
                    return True
                at = buf.find(magic, at + 1, stop)
            if self._cut_magic(magic, 1, end) is not None:
                return True
        return False

    def _cut_magic(self, magic: bytes, start: int, end: int) -> Optional[int]:
        """Where in the buffer's bytes ``start`` to ``end`` a magic word starts that the
        buffer's end cuts short (its next bytes may complete it); None when nowhere."""
        buf = self._buf
        return next((k for k in range(max(start, len(buf) - len(magic) + 1), min(end, len(buf)))
                     if magic.startswith(bytes(buf[k:]))), None)

    def _false_sync_in_window(self, end: int, events: list[Event]) -> bool:
        """True (and resynchronised) when a plausible header starts inside the header's own
        bytes; one inside the body whose message runs past the body's end is kept in
        ``_crossing`` for the body's end to decide."""
        hs = self.header_size
        # a magic word that starts inside the body counts, even if it ends beyond it
        stop = min(end + len(self.magic) - 1, len(self._buf))
        while True:
            at = self._search(self._buf, self._window_from, stop)
            if at < 0:
                # nothing up to here; a magic word split at the buffer's end is looked at again
                self._window_from = max(self._window_from, stop - len(self.magic) + 1)
                return False
            if at + hs > len(self._buf):
                self._window_from = at           # its header is not complete yet
                return False
            size = self._plausible_size(at)
            if size is not None and at < hs:     # inside this header: a header cut short
                events.append(self._cut_error(at))
                self._false_sync()
                return True
            if size is not None and at + hs + size > end:
                self._crossing = at              # payload unless no header follows the body
                return False
            self._window_from = at + 1           # payload (nested wholly inside): go on

    def _header_cut_short(self, size: int, events: list[Event]) -> Optional[bool]:
        """Before an oversized header's body is skipped: a plausible header starting inside
        its own bytes after its magic word (a header cut short by its sender, whose size field
        holds the next message's bytes, as the window search finds it in a pending message's
        header) makes it a false sync (True: TRUNCATED, resynchronised); None until the bytes
        to tell have arrived; False when there is none."""
        hs, m, buf = self.header_size, len(self.magic), self._buf
        stop = min(hs + m - 1, len(buf))
        at = self._search(buf, m, stop)
        while at >= 0:
            if at + hs > len(buf):
                return None
            if self._plausible_size(at) is not None:
                events.append(CodecError(
                    self.name, f'a header declaring {size} body bytes holds a plausible header '
                    f'at its byte {at}: cut short by the sender; resynchronising after its '
                    'magic word', field='size', offset=at, kind=TRUNCATED))
                self._false_sync()
                return True
            at = self._search(buf, at + 1, stop)
        return None if self._cut_magic(self.magic, m, hs) is not None else False

    def _skip_oversized(self, events: list[Event]) -> bool:
        """Drop the oversized body being skipped as far as it is in; True when it is over (or
        a confirmed message inside it ended the skip), False to wait for more bytes.  Bytes
        that may start a message (:meth:`_confirmed_inside`) are kept until that is decided."""
        buf, left = self._buf, self._skip_left
        stop = min(left + len(self.magic) - 1, len(buf))   # magic words starting in the body
        drop = min(left, len(buf))
        at = buf.find(self.magic, 0, stop)
        while at >= 0:
            confirmed = self._confirmed_inside(at, left)
            if confirmed is None:
                drop = at                        # undecided: wait with its bytes
                break
            if confirmed:
                events.append(CodecError(
                    self.name, f'a message confirmed at byte {at} of the remaining oversized '
                    f'body ({left} bytes): the oversized header was wrong or its message cut '
                    'short; resynchronising there', field='size', offset=at, kind=TRUNCATED))
                self.false_syncs += 1
                del buf[:at]
                self._skip_left = 0
                self._in_sync = False
                return True
            at = buf.find(self.magic, at + 1, stop)
        else:
            # a magic word cut by the buffer's end is looked at again with the next bytes
            cut = self._cut_magic(self.magic, 0, drop)
            drop = drop if cut is None else cut
        del buf[:drop]
        self._skip_left -= drop
        return self._skip_left == 0

    def _confirmed_inside(self, at: int, left: int) -> Optional[bool]:
        """Whether the magic word at ``at`` inside an oversized body that ends at ``left``
        starts a real message (True) or is payload (False); None until the bytes to tell have
        arrived (never more than one maximal message).  Confirmed: its body decodes to a
        record (a body that fails: payload), or a plausible header follows it.  One running
        past the body's end is not decoded, and is payload when a plausible header stands at
        the body's end (a real boundary)."""
        hs, buf = self.header_size, self._buf
        if at + hs > len(buf):
            return None
        try:
            size, parsed = self._parse(bytes(buf[at:at + hs]))
        except CodecError:
            return False
        if not 0 <= size <= self.max_body:
            return False
        end = at + hs + size
        if end <= left and self.check_body is not None:
            if end > len(buf):
                return None
            try:
                if self.check_body(Frame(bytes(buf[at:at + hs]), bytes(buf[at + hs:end]),
                                         parsed)) is not None:
                    return True
            except CodecError:
                return False
        if end - at > self.max_body:             # no room to wait for the next header
            return False
        if end > left:
            if left + hs > len(buf):
                return None
            if self._plausible_size(left) is not None:
                return False                     # the body's end is a real boundary
        return None if end + hs > len(buf) else self._plausible_size(end) is not None

    def _false_sync(self) -> None:
        """Give up the message at the buffer's start (its header implausible, or its message
        cut short or rejected; already reported): search again from the byte after its magic.
        The bytes skipped up to the next magic word are part of it, not another error."""
        self.false_syncs += 1
        self._pending = None
        self._crossing = None
        self._drop(1)
        self._false_sync_bytes = True

    def _sync(self, events: list[Event]) -> bool:
        """Drop bytes before the next magic word; True once a whole header is buffered."""
        if self._tail and not self._resumed_in_tail(events):
            return False
        found = [i for i in (self._buf.find(m) for m in self.magics) if i >= 0]
        at = min(found) if found else -1
        if at < 0:
            # keep a possible magic prefix at the tail for the next read
            keep = len(self.magic) - 1
            skip = max(0, len(self._buf) - keep)
            while skip < len(self._buf) and not any(
                    m.startswith(bytes(self._buf[skip:])) for m in self.magics):
                skip += 1
            if skip:
                self._skip_garbage(skip, events)
                self._garbage_run = True     # it may go on in the next read
            return False
        if at:
            self._skip_garbage(at, events)
        self._false_sync_bytes = self._garbage_run = False
        return len(self._buf) >= self.header_size

    def _resumed_in_tail(self, events: list[Event]) -> bool:
        """Right after a message: when the next bytes are no magic word, a plausible header
        starting in that message's last bytes and running on into them (the message was cut
        short by its sender) goes back to the buffer's front, with a TRUNCATED event.  False
        while the bytes to tell have not all come.  (A whole message whose last bytes hold a
        magic word and garbage that makes a plausible header with it is framed as the window
        search frames it when both come in one read: garbage either way.)"""
        tail, buf, hs = self._tail, self._buf, self.header_size
        if not buf:
            return False
        if any(m.startswith(bytes(buf[:len(m)])) for m in self.magics):
            if len(buf) < len(self.magic):
                return False                     # maybe a magic word: its rest decides
            self._tail = b''                     # the next message, where it belongs
            return True
        joined = tail + bytes(buf[:hs])
        for k in range(len(tail)):
            part = joined[k:k + len(self.magic)]
            if not any(m.startswith(part) for m in self.magics):
                continue
            if k + hs > len(joined):
                return False                     # a header may start here: wait for it
            if self._plausible(joined[k:k + hs]) is not None:
                self._tail = b''
                self._buf[:0] = tail[k:]
                self._in_sync = False
                events.append(CodecError(
                    self.name, f'the message before was cut short by its sender: its last '
                    f'{len(tail) - k} bytes were the start of the next header; resynchronising '
                    'there', field='body', kind=TRUNCATED))
                return True
        self._tail = b''
        return True

    def _skip_garbage(self, n: int, events: list[Event]) -> None:
        """Skip ``n`` bytes without a magic word: one BAD_MAGIC per run of them, however many
        reads it spans (``garbage_bytes`` counts them all)."""
        if not (self._false_sync_bytes or self._garbage_run):
            events.append(CodecError(self.name, f'{n} bytes before the magic word skipped'
                                     + ('' if any(m in self._buf for m in self.magics) else
                                        ' (more may follow: no magic word yet)'),
                                     kind=BAD_MAGIC))
        self._drop(n)

    def _drop(self, n: int) -> None:
        self._tail = b''
        self.garbage_bytes += n
        self._in_sync = False
        del self._buf[:n]
