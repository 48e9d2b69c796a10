"""Sans-IO framing of a byte stream into messages that start with a magic word.

Used for TCP protocols (ibeo data header, monoDrive control channel).  The framer keeps the
partial data between ``feed`` calls, so a header or magic word split across two reads survives.
It never raises: garbage, implausible headers and oversized frames come back as
:class:`~ros_sim_bridge.core.binary.CodecError` values in the event list, in stream order, and
the framer resynchronises on the next magic word (searching from the byte after a false sync).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

from ros_sim_bridge.core.binary import BAD_MAGIC, OVERSIZED, CodecError


@dataclass(frozen=True)
class Frame:
    """One complete message: its header bytes and its body bytes (a memoryview-free copy)."""
    header: bytes
    body: bytes


Event = Union[Frame, CodecError]


class MagicFramer:
    """Split a stream into frames ``magic | rest of header | body``.

    ``magic`` is one magic word, or a sequence of equally long ones that are all accepted
    (monoDrive replies carry either of two, SUPPLEMENT §4.1); the frame's header says which.
    ``body_size(header) -> int`` reads the body length from a complete header and may raise
    CodecError when the header is implausible (then the search resumes one byte further on).
    Bodies larger than ``max_body`` are refused as OVERSIZED before any of them is buffered.
    """

    def __init__(self, name: str, magic: Union[bytes, Sequence[bytes]], header_size: int,
                 body_size: Callable[[bytes], int], max_body: int):
        self.name = name
        self.magics = (magic,) if isinstance(magic, (bytes, bytearray)) else tuple(magic)
        if not self.magics or len({len(m) for m in self.magics}) != 1:
            raise ValueError('magic words must be given and be of one length')
        self.magic = self.magics[0]
        self.header_size = header_size
        self.body_size = body_size
        self.max_body = max_body
        self._buf = bytearray()
        self._pending: Optional[tuple[bytes, int]] = None  # (header, body size) being filled
        self.garbage_bytes = 0   # bytes skipped while searching for the magic word

    def reset(self) -> None:
        """Forget partial data (after a reconnect the old stream's tail is meaningless)."""
        self._buf.clear()
        self._pending = None

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[Event]:
        self._buf += data
        events: list[Event] = []
        while True:
            if self._pending is None:
                if not self._sync(events):
                    return events
                header = bytes(self._buf[:self.header_size])
                try:
                    size = self.body_size(header)
                except CodecError as err:
                    events.append(err)
                    self._drop(1)            # false sync: search on from the next byte
                    continue
                if size < 0 or size > self.max_body:
                    events.append(CodecError(self.name, f'header announces {size} body bytes '
                                             f'(limit {self.max_body}); resynchronising',
                                             field='size', offset=0, kind=OVERSIZED))
                    self._drop(1)
                    continue
                self._pending = (header, size)
                del self._buf[:self.header_size]
            header, size = self._pending
            if len(self._buf) < size:
                return events
            with memoryview(self._buf) as view:   # one copy of the body, not two
                body = bytes(view[:size])
            events.append(Frame(header, body))
            del self._buf[:size]
            self._pending = None

    def _sync(self, events: list[Event]) -> bool:
        """Drop bytes before the next magic word; True once a whole header is buffered."""
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
            return False
        if at:
            self._skip_garbage(at, events)
        return len(self._buf) >= self.header_size

    def _skip_garbage(self, n: int, events: list[Event]) -> None:
        events.append(CodecError(self.name, f'{n} bytes before the magic word skipped',
                                 kind=BAD_MAGIC))
        self._drop(n)

    def _drop(self, n: int) -> None:
        self.garbage_bytes += n
        del self._buf[:n]
