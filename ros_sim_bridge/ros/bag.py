"""rosbag2 folders (``metadata.yaml`` + one MCAP file) from CDR bytes or rclpy messages: the one
bag writer of the suite (demo recorder, CARLA ``to-bag``, ``.idc`` ``to-bag``).

Type definitions go into the bag with each topic, so ``ros2 bag info/play`` and Foxglove read it
without this package: standard types come from the ``rosbags`` type store of the running
distribution (``ROS_DISTRO``, Kilted by default), this package's own from its ``msg/*.msg``;
rosbags also gives the message definition text and the RIHS01 type hashes (equal to rosidl's).

The MCAP file is written here, not by rosbags' writer, because the copies are the cost: a message
is copied once into a 1 MiB chunk buffer when small (the buffers are reused), and not at all when
big (its chunk header is written, then its bytes straight to the file).  The file is a
:class:`~ros_sim_bridge.core.write_behind.WriteBehindFile`: a thread of its own writes the chunks
(``O_DIRECT`` where the file system allows it), beside the caller's work.  Layout (MCAP spec, ``ros2`` profile): header;
schema and channel records as topics appear; uncompressed chunks, each followed by its message
indexes; a ``rosbag2`` metadata record; data end; summary (schemas, channels, chunk indexes,
metadata index, statistics) with summary offsets; footer.  CRCs are 0 ("not computed", allowed by
the spec), as rosbags writes them.  Memory stays bounded: one chunk plus one index entry per chunk.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import struct
import textwrap
import weakref
import zlib
from collections import deque
from functools import partial
from pathlib import Path
from typing import Iterable, NamedTuple, Optional, Union

import numpy as np

from ros_sim_bridge.core.write_behind import WriteBehindFile
from ros_sim_bridge.ros.ament import package_share

PACKAGE = 'ros_sim_bridge'


def _store_for(distro: str):
    from rosbags.typesys import Stores
    return getattr(Stores, f'ROS2_{distro.upper()}', Stores.ROS2_KILTED)


def package_msg_dirs() -> list[Path]:
    """Where this package's ``.msg`` files are: the install share folder, else the source tree."""
    share = package_share(PACKAGE)
    dirs = [Path(share) / 'msg'] if share else []
    dirs.append(Path(__file__).resolve().parents[2] / 'msg')   # a source checkout
    return [d for d in dirs if d.is_dir()][:1]


def typestore(msg_dirs: Optional[Iterable[Path]] = None, distro: Optional[str] = None):
    """A rosbags type store: the distribution's standard types plus this package's messages."""
    from rosbags.typesys import get_types_from_msg, get_typestore
    store = get_typestore(_store_for(distro or os.environ.get('ROS_DISTRO', 'kilted')))
    types: dict = {}
    for folder in (package_msg_dirs() if msg_dirs is None else msg_dirs):
        for path in sorted(Path(folder).glob('*.msg')):
            types.update(get_types_from_msg(path.read_text(), f'{PACKAGE}/msg/{path.stem}'))
    store.register(types)
    return store


def type_name(msg_or_class) -> str:
    """``pkg/msg/Name`` of an rclpy message instance or class."""
    cls = msg_or_class if isinstance(msg_or_class, type) else type(msg_or_class)
    package = cls.__module__.split('.')[0]
    return f'{package}/msg/{cls.__name__}'


def dump_qos_v9(qos: list) -> list:
    """``offered_qos_profiles`` of rosbag2 metadata v9 (names in lower case; rosbags' own
    lives in ``rosbags.rosbag2``, whose import loads its readers and writers: 0.08 s)."""
    def span(t):
        return {'sec': t.sec, 'nsec': t.nsec}
    return [{'history': x.history.name.lower(), 'depth': x.depth,
             'reliability': x.reliability.name.lower(),
             'durability': x.durability.name.lower(), 'deadline': span(x.deadline),
             'lifespan': span(x.lifespan), 'liveliness': x.liveliness.name.lower(),
             'liveliness_lease_duration': span(x.liveliness_lease_duration),
             'avoid_ros_namespace_conventions': x.avoid_ros_namespace_conventions}
            for x in qos]


def dump_qos_v8(qos: list) -> str:
    """``offered_qos_profiles`` of metadata v8 (before Kilted): rosbags' YAML text."""
    from rosbags.rosbag2.metadata import dump_qos_v8 as dump
    return dump(qos)


class Policy(NamedTuple):
    """One value of a QoS policy, as rosbags' ``Qos*`` enums give it (``name``, ``value``)."""
    name: str
    value: int


class QosTime(NamedTuple):
    sec: int
    nsec: int


class Qos(NamedTuple):
    """An offered QoS profile with the fields (and policy values) of ``rosbags.interfaces.Qos``,
    what the metadata writers read; defined here because importing rosbags.interfaces costs
    3 ms of every ``to-bag``'s start-up."""
    history: Policy
    depth: int
    reliability: Policy
    durability: Policy
    deadline: QosTime
    lifespan: QosTime
    liveliness: Policy
    liveliness_lease_duration: QosTime
    avoid_ros_namespace_conventions: bool


KEEP_LAST = Policy('KEEP_LAST', 1)                     # rosbags' / rmw's values
RELIABLE, BEST_EFFORT = Policy('RELIABLE', 1), Policy('BEST_EFFORT', 2)
TRANSIENT_LOCAL, VOLATILE = Policy('TRANSIENT_LOCAL', 1), Policy('VOLATILE', 2)
AUTOMATIC = Policy('AUTOMATIC', 1)
_NO_TIME = QosTime(0, 0)                   # 0 s 0 ns: "the rmw default" (infinite)


def offered_qos(topic: str, *, latched: Optional[bool] = None,
                reliable: bool = True) -> Qos:
    """The profile the suite's nodes offer on ``topic`` (see :mod:`ros_sim_bridge.ros.qos`),
    recorded so ``ros2 bag play`` offers it again: latched (transient local, depth 1; a
    volatile replay would not match a latched subscriber such as tf2's static listener) where
    ``latched`` says so, or by name for ``tf_static`` when it is not given; ``tf`` depth 100,
    everything else depth 10, volatile; reliable unless ``reliable`` is false (what the
    publishers that were recorded offered)."""
    name = topic.rsplit('/', 1)[-1]
    if latched is None:
        latched = name == 'tf_static'
    depth, durability = ((1, TRANSIENT_LOCAL) if latched else
                         (100, VOLATILE) if name == 'tf' else (10, VOLATILE))
    return Qos(KEEP_LAST, depth, RELIABLE if reliable else BEST_EFFORT,
               durability, _NO_TIME, _NO_TIME, AUTOMATIC, _NO_TIME, False)


#: strings written plain (unquoted): names, paths, types, hashes; not YAML's words for
#: booleans and null (1.1 and 1.2), nor anything that reads as a number
_PLAIN = re.compile(r'[A-Za-z_/][A-Za-z0-9_./-]*')
_RESERVED = {'y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null'}


def _scalar(value) -> str:
    """A scalar, or an empty mapping or list, as YAML text."""
    if isinstance(value, (dict, list)) and not value:
        return '{}' if isinstance(value, dict) else '[]'
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED:
            return value
        return "''" if not value else _quoted(value)
    raise TypeError(f'no YAML scalar for {type(value).__name__}')


def _quoted(text: str) -> str:
    """``text`` double-quoted: printable ASCII as it is, every other character escaped."""
    out = []
    for ch in text:
        code = ord(ch)
        out.append('\\' + ch if ch in '"\\' else ch if 0x20 <= code < 0x7F else
                   f'\\u{code:04X}' if code <= 0xFFFF else f'\\U{code:08X}')
    return f'"{"".join(out)}"'


def _yaml_lines(data: dict, indent: str, out: list) -> None:
    """Block-style lines of a mapping, keys sorted, as PyYAML's ``default_flow_style=False``
    lays it out (a list's items at their key's indentation)."""
    for key in sorted(data):
        value, name = data[key], _scalar(key)
        if isinstance(value, dict) and value:
            out.append(f'{indent}{name}:')
            _yaml_lines(value, indent + '  ', out)
        elif isinstance(value, list) and value:
            out.append(f'{indent}{name}:')
            _yaml_items(value, indent, out)
        else:
            out.append(f'{indent}{name}: {_scalar(value)}')


def _yaml_items(items: list, indent: str, out: list) -> None:
    for item in items:
        if isinstance(item, dict) and item:
            start = len(out)
            _yaml_lines(item, indent + '  ', out)
            out[start] = f'{indent}- {out[start][len(indent) + 2:]}'
        else:
            out.append(f'{indent}- {_scalar(item)}')


def _yaml(data) -> str:
    """``data`` (a mapping or list of mappings, lists, strings, integers, booleans) as block
    YAML: what ``yaml.dump`` gives for it, without its 1.7 ms of Python for a bag's
    metadata."""
    out: list = []
    (_yaml_lines if isinstance(data, dict) else _yaml_items)(data, '', out)
    return '\n'.join(out) + '\n'


# MCAP records (MCAP specification, "Records"): little endian, opcode u8 + content length u64.
_MAGIC = b'\x89MCAP0\r\n'
_RECORD = struct.Struct('<BQ')
# Message 0x05 up to its data: channel id u16, sequence u32, log time u64, publish time u64.
_MESSAGE = struct.Struct('<BQHIQQ')
_message_head_into = _MESSAGE.pack_into
# Chunk 0x06 up to its records: start u64, end u64, uncompressed size u64, uncompressed CRC u32,
# compression string (u32 length 0: none), records length u64.
_MESSAGE_DTYPE = np.dtype([('opcode', 'u1'), ('length', '<u8'), ('channel', '<u2'),
                           ('sequence', '<u4'), ('log', '<u8'), ('publish', '<u8')])
assert _MESSAGE_DTYPE.itemsize == _MESSAGE.size
_CHUNK = struct.Struct('<BQQQQIIQ')
# Message Index 0x07 up to its entries: channel id u16, entries byte length u32.
_MESSAGE_INDEX = struct.Struct('<BQHI')
_U16_U64 = struct.Struct('<HQ')
# A big message's chunk: its Message Index (one entry: log time, offset 0) and its Chunk Index
# (one channel's message index offset; compression '' and its sizes).
_BIG_INDEX = struct.Struct('<BQHIQQ')
_BIG_CHUNK_INDEX = struct.Struct('<QQQQIHQQIQQ')


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack('<I', len(raw)) + raw


def _string_map(pairs: dict) -> bytes:
    body = b''.join(_string(k) + _string(v) for k, v in pairs.items())
    return struct.pack('<I', len(body)) + body


class _McapFile:
    """One MCAP file of the ``ros2`` profile, written front to back; chunks uncompressed.

    A message of :attr:`BIG` bytes or more gets a chunk of its own whose bytes go straight from
    the caller's buffer to the file; smaller ones are copied once into a pending chunk, handed
    to the file's thread when it reaches :attr:`CHUNK` bytes (its buffer comes back to be
    reused once written); a pending chunk a big message cuts short (under :attr:`BIG`) is
    copied out instead and its buffer kept.
    """
    CHUNK = 1 << 20
    BIG = 1 << 18
    _CAPACITY = CHUNK + BIG + _MESSAGE.size       # a chunk is flushed once it reaches CHUNK

    def __init__(self, path: Path, library: str):
        self._file = WriteBehindFile(path, name=f'bag-writer {path.name}')
        self._pos = 0
        self._schemas: list[bytes] = []           # record contents, repeated in the summary
        self._channels: list[bytes] = []
        self._chunk_indexes: list[bytes] = []
        self.channel_counts: dict[int, int] = {}
        self.start, self.end = 2 ** 64 - 1, 0       # log time span of the whole file
        # chunk buffers of a fixed capacity, reused once the file's thread has written them
        # (fresh ones would cost the kernel a page fault per 4 kB)
        self._free: deque = deque()
        self._buf = bytearray(self._CAPACITY)
        self._len = 0                               # bytes of the pending chunk in _buf
        self._index: dict[int, list[int]] = {}    # channel → [time, offset, time, offset, …]
        self._chunk_start, self._chunk_end = 2 ** 64 - 1, 0
        self._put(_MAGIC)
        self._record(0x01, _string('ros2') + _string(library))           # Header

    def _put(self, *data, then=None) -> None:
        """Hand buffers over to the file's thread (they must not change until ``then()``)."""
        self._file.write(*data, then=then)
        self._pos += sum(map(len, data))

    def _record(self, opcode: int, content: bytes) -> None:
        self._put(_RECORD.pack(opcode, len(content)) + content)

    def add_schema(self, name: str, encoding: str, data: str) -> int:
        schema_id = len(self._schemas) + 1          # 0 means "no schema"
        raw = data.encode()
        content = (struct.pack('<H', schema_id) + _string(name) + _string(encoding)
                   + struct.pack('<I', len(raw)) + raw)
        self._schemas.append(content)
        self._record(0x03, content)
        return schema_id

    def add_channel(self, schema_id: int, topic: str, encoding: str, metadata: dict) -> int:
        channel_id = len(self._channels) + 1
        content = (struct.pack('<HH', channel_id, schema_id) + _string(topic) + _string(encoding)
                   + _string_map(metadata))
        self._channels.append(content)
        self.channel_counts[channel_id] = 0
        self._record(0x04, content)     # before any chunk holding its messages
        return channel_id

    def write(self, channel: int, t: int, data, handed_over: bool = False) -> None:
        """One message; ``data`` is a buffer or a tuple of buffers (written back to back);
        ``handed_over``: the caller never changes them again, so a big message is written by
        the file's thread while the caller goes on (else in the caller's, before returning)."""
        parts = data if type(data) is tuple else None
        n = sum(map(len, parts)) if parts is not None else len(data)
        if n >= self.BIG:
            self._write_big(channel, t, parts or (data,), n, handed_over)
            return
        buf, pos = self._buf, self._len
        index = self._index.get(channel)
        if index is None:
            index = self._index[channel] = []
        index += (t, pos)
        _message_head_into(buf, pos, 0x05, 22 + n, channel, 0, t, t)
        pos += _MESSAGE.size
        if parts is None:
            buf[pos:pos + n] = data
        else:
            for part in parts:
                buf[pos:pos + len(part)] = part
                pos += len(part)
        self._len = pos = self._len + _MESSAGE.size + n
        if t < self._chunk_start:
            self._chunk_start = t
        if t > self._chunk_end:
            self._chunk_end = t
        if pos >= self.CHUNK:
            self._flush()

    def _write_big(self, channel: int, t: int, body: tuple, n: int, handed_over: bool) -> None:
        """A message of ``n`` ≥ :attr:`BIG` bytes in a chunk of its own: the chunk's head, the
        message and its one-entry message index handed to the file in one call (what
        :meth:`_end_chunk` writes for it, without its loop)."""
        if self._len:
            self._flush()
        size = _MESSAGE.size + n
        chunk_start = self._pos
        head = (_CHUNK.pack(0x06, 40 + size, t, t, size, 0, 0, size)
                + _MESSAGE.pack(0x05, 22 + n, channel, 0, t, t))
        index_at = chunk_start + len(head) + n          # the message index after the chunk
        index = _BIG_INDEX.pack(0x07, 6 + 16, channel, 16, t, 0)
        if handed_over:
            self._file.write(head, *body, index)         # no copy, in the file's thread
        else:
            self._file.write_now(head, *body, index)     # no copy: straight to the file
        self._pos = index_at + len(index)
        if t < self.start:
            self.start = t
        if t > self.end:
            self.end = t
        self.channel_counts[channel] += 1
        self._chunk_indexes.append(_BIG_CHUNK_INDEX.pack(
            t, t, chunk_start, index_at - chunk_start, 10, channel, index_at, len(index), 0,
            size, size))

    def write_rows(self, t, columns) -> None:
        """Messages of many log times: ``t`` (F,) ints; ``columns`` ``[(channel, rows)]``, rows
        an (F, size) uint8 array, one message per row.  Frame i's messages go in column order,
        the frames in order: the messages :meth:`write` would give, the records copied by
        numpy for many frames at a time (a chunk ends after a whole frame, at :attr:`CHUNK`
        bytes or more)."""
        t = np.asarray(t, np.uint64)
        count = len(t)
        sizes = [rows.shape[1] for _, rows in columns]
        row = sum(sizes) + _MESSAGE.size * len(columns)      # the records of one frame
        if not count or not columns:
            return
        if max(sizes) >= self.BIG or row > self._CAPACITY:
            for i in range(count):
                for channel, rows in columns:
                    self.write(channel, int(t[i]), memoryview(rows[i]))
            return
        heads = np.zeros((len(columns), count), _MESSAGE_DTYPE)
        heads['opcode'], heads['log'], heads['publish'] = 0x05, t, t
        heads['length'] = np.array(sizes, np.uint64)[:, None] + 22
        heads['channel'] = np.array([c for c, _ in columns], np.uint16)[:, None]
        heads = heads.view(np.uint8).reshape(len(columns), count, _MESSAGE.size)
        i = 0
        while i < count:
            k = min(count - i, -(-(self.CHUNK - self._len) // row),
                    (self._CAPACITY - self._len) // row)
            if k <= 0:                  # the pending chunk cannot take a frame more
                self._flush()
                continue
            dst = np.frombuffer(self._buf, np.uint8, k * row, self._len).reshape(k, row)
            starts = np.arange(self._len, self._len + k * row, row, dtype=np.uint64)
            tt = t[i:i + k]
            offset = 0
            for c, ((channel, rows), size) in enumerate(zip(columns, sizes)):
                dst[:, offset:offset + _MESSAGE.size] = heads[c, i:i + k]
                dst[:, offset + _MESSAGE.size:offset + _MESSAGE.size + size] = rows[i:i + k]
                index = self._index.get(channel)
                if index is None:
                    index = self._index[channel] = []
                index += np.column_stack((tt, starts + offset)).ravel().tolist()
                offset += _MESSAGE.size + size
            del dst
            self._len += k * row
            lo, hi = int(tt.min()), int(tt.max())
            if lo < self._chunk_start:
                self._chunk_start = lo
            if hi > self._chunk_end:
                self._chunk_end = hi
            i += k
            if self._len >= self.CHUNK:
                self._flush()

    def flush(self) -> None:
        """Write the pending chunk out (if any)."""
        if self._len:
            self._flush()

    def _flush(self) -> None:
        buf, index, size = self._buf, self._index, self._len
        chunk_start = self._pos
        head = _CHUNK.pack(0x06, 40 + size, self._chunk_start, self._chunk_end, size, 0, 0, size)
        if size < self.BIG:         # cut short by a big message: its bytes copied, buf kept (a
            self._put(head, bytes(memoryview(buf)[:size]))   # new one costs 1.3 MB of zeros)
        else:
            self._put(head, memoryview(buf)[:size], then=partial(self._free.append, buf))
            self._buf = self._free.popleft() if self._free else bytearray(self._CAPACITY)
        self._end_chunk(self._chunk_start, self._chunk_end, chunk_start, size, index)
        self._len, self._index = 0, {}
        self._chunk_start, self._chunk_end = 2 ** 64 - 1, 0

    def _end_chunk(self, start: int, end: int, chunk_start: int, size: int, index: dict) -> None:
        """Message indexes after the chunk, and its Chunk Index for the summary; the file's
        statistics (counts, time span) are kept per chunk, not per message."""
        chunk_length = self._pos - chunk_start
        self.start, self.end = min(self.start, start), max(self.end, end)
        parts, offsets, pos = [], [], self._pos
        for channel, flat in index.items():
            self.channel_counts[channel] += len(flat) // 2
            entries = struct.pack(f'<{len(flat)}Q', *flat)
            parts.append(_MESSAGE_INDEX.pack(0x07, 6 + len(entries), channel, len(entries)))
            parts.append(entries)
            offsets.append(_U16_U64.pack(channel, pos))
            pos += _MESSAGE_INDEX.size + len(entries)
        self._put(b''.join(parts))
        offsets_raw = b''.join(offsets)
        self._chunk_indexes.append(
            struct.pack('<QQQQI', start, end, chunk_start, chunk_length, len(offsets_raw))
            + offsets_raw + struct.pack('<QIQQ', pos - (chunk_start + chunk_length), 0, size,
                                        size))

    def close(self, metadata: dict) -> None:
        """The last chunk, ``rosbag2`` metadata record, data end, summary, footer."""
        self.flush()
        metadata_start = self._pos
        self._record(0x0C, _string('rosbag2') + _string_map(metadata))
        metadata_length = self._pos - metadata_start
        self._record(0x0F, struct.pack('<I', 0))                        # Data End, no CRC
        groups = []
        for opcode, contents in ((0x03, self._schemas), (0x04, self._channels),
                                 (0x08, self._chunk_indexes)):
            group_start = self._pos
            for content in contents:
                self._record(opcode, content)
            groups.append((opcode, group_start))
        summary_start = groups[0][1]
        groups.append((0x0D, self._pos))
        self._record(0x0D, struct.pack('<QQ', metadata_start, metadata_length)
                     + _string('rosbag2'))
        groups.append((0x0B, self._pos))
        counts = b''.join(_U16_U64.pack(c, n) for c, n in sorted(self.channel_counts.items()))
        messages = sum(self.channel_counts.values())
        start, end = (self.start, self.end) if messages else (0, 0)
        self._record(0x0B, struct.pack('<QHIIIIQQI', messages, len(self._schemas),
                                       len(self._channels), 0, 1, len(self._chunk_indexes),
                                       start, end, len(counts)) + counts)
        offsets_start = self._pos
        bounds = [g[1] for g in groups[1:]] + [offsets_start]
        for (opcode, group_start), group_end in zip(groups, bounds):
            if group_end > group_start:
                self._record(0x0E, struct.pack('<BQQ', opcode, group_start,
                                               group_end - group_start))
        self._record(0x02, struct.pack('<QQI', summary_start, offsets_start, 0))   # Footer
        self._put(_MAGIC)
        self._file.close()


_QOS_TEXT: dict = {}                       # (v9, repr(profiles)) → channel metadata text
#: type store → {type: (message definition, RIHS01 hash)}: rosbags makes them in ~0.1 ms a
#: type, for every bag of a process that writes several
_DEFINITIONS: 'weakref.WeakKeyDictionary' = weakref.WeakKeyDictionary()


def _definition(store, msgtype: str) -> tuple:
    """(message definition, RIHS01 hash) of ``msgtype`` in ``store``, made once per store."""
    known = _DEFINITIONS.setdefault(store, {})
    found = known.get(msgtype)
    if found is None:
        found = known[msgtype] = (store.generate_msgdef(msgtype, ros_version=2)[0],
                                  store.hash_rihs01(msgtype))
    return found


class _DefinitionCache:
    """(definition, hash) of the types bags were written with, kept in a JSON file under
    ``$XDG_CACHE_HOME/ros_sim_bridge/bag_types/`` that holds what they are made from (the
    distribution, the rosbags install, this package's ``.msg`` files: path, size, mtime) and is
    named by its CRC-32 (zlib's; hashlib would load OpenSSL, 3 ms of a start-up): a file whose
    key differs is not used.  A process that writes a bag need not import and parse the rosbags
    type store (0.3 s of a ``to-bag``'s start-up).  An unreadable cache is ignored, an
    unwritable one not kept."""

    def __init__(self, distro: str, msg_dirs: Optional[Iterable[Path]]):
        spec = importlib.util.find_spec('rosbags')       # found without importing it
        origin = Path(spec.origin) if spec and spec.origin else None
        key = [distro, str(origin), origin.stat().st_mtime_ns if origin else 0]
        for folder in (package_msg_dirs() if msg_dirs is None else msg_dirs):
            # the folder's entries, stat following links (a symlink install's point at the
            # sources): resolving each of them took 3 ms
            with os.scandir(Path(folder).resolve()) as entries:
                for entry in sorted((e for e in entries if e.name.endswith('.msg')),
                                    key=lambda e: e.name):
                    st = entry.stat()
                    key.append([entry.path, st.st_size, st.st_mtime_ns])
        self.key = json.loads(json.dumps(key))                    # as read back from JSON
        digest = f'{zlib.crc32(json.dumps(key).encode()):08x}'
        base = Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache')
        self.path = base / PACKAGE / 'bag_types' / f'{digest}.json'
        try:
            kept = json.loads(self.path.read_text())
            if kept['key'] != self.key:
                raise ValueError('another key with the same CRC')
            self.types = {k: tuple(v) for k, v in kept['types'].items()}
        except (OSError, ValueError, AttributeError, TypeError, KeyError):
            self.types = {}

    def add(self, msgtype: str, found: tuple) -> None:
        self.types[msgtype] = found
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f'.{os.getpid()}.tmp')
            tmp.write_text(json.dumps({'key': self.key, 'types': self.types}))
            tmp.replace(self.path)
        except OSError:
            pass


class _Topic:
    __slots__ = ('channel', 'msgtype', 'digest', 'qos')

    def __init__(self, channel: int, msgtype: str, digest: str, qos: Qos):
        self.channel, self.msgtype, self.digest, self.qos = channel, msgtype, digest, qos


class BagWriter:
    """Write messages to a new rosbag2 folder; use as a context manager (``close`` finishes it).

    ``write(topic, t_ns, cdr)`` takes serialised CDR (e.g. from a ``raw=True`` subscription);
    ``write_msg`` serialises an rclpy message first.  A topic's type is fixed by its first write
    (or :meth:`add_topic`); per-topic message counts are kept in :attr:`counts`.  The rosbag2
    metadata version is 9 for Kilted and later, 8 before (``ROS_DISTRO``).
    """

    def __init__(self, path: Union[str, Path], *, store=None, msg_dirs=None):
        self.path = Path(path)
        if self.path.exists():
            raise FileExistsError(f'{self.path} exists: a bag is written to a new folder')
        self._store, self._msg_dirs = store, msg_dirs
        self.distro = os.environ.get('ROS_DISTRO', 'kilted')
        self._cache = None if store is not None else _DefinitionCache(self.distro, msg_dirs)
        self.version = 8 if self.distro in ('humble', 'iron', 'jazzy') else 9
        self.path.mkdir(mode=0o755, parents=True)
        self._file_name = f'{self.path.name}.mcap'
        self._mcap = _McapFile(self.path / self._file_name, f'{PACKAGE} (rosbag2 v{self.version})')
        self._connections: dict[str, _Topic] = {}
        self._schemas: dict[str, int] = {}
        self.counts: dict[str, int] = {}

    @property
    def store(self):
        """The rosbags type store (made when first needed: a type not in the cache)."""
        if self._store is None:
            self._store = typestore(self._msg_dirs)
        return self._store

    def _definition(self, topic: str, msgtype: str) -> tuple:
        cache = self._cache
        found = cache.types.get(msgtype) if cache is not None else None
        if found is None:
            if msgtype not in self.store.types:
                raise KeyError(f'{topic}: type {msgtype} is not known to the bag type store')
            found = _definition(self.store, msgtype)
            if cache is not None:
                cache.add(msgtype, found)
        return found

    def _qos_text(self, qos: list) -> str:
        """``offered_qos_profiles`` as rosbag2 stores it in the MCAP channel metadata (one YAML
        dump per distinct profile list: the suite offers three)."""
        key = repr(qos)
        text = _QOS_TEXT.get((self.version >= 9, key))
        if text is None:
            text = _yaml(dump_qos_v9(qos)).strip() if self.version >= 9 else dump_qos_v8(qos)
            _QOS_TEXT[(self.version >= 9, key)] = text
        return text

    def add_topic(self, topic: str, msgtype: str, *, latched: Optional[bool] = None,
                  reliable: bool = True):
        """Declare ``topic`` with type ``msgtype`` (``pkg/msg/Name``); idempotent.  The QoS
        recorded for it: :func:`offered_qos` (``latched``/``reliable``: what the recorded
        publishers offer, where known)."""
        conn = self._connections.get(topic)
        if conn is None:
            msgdef, digest = self._definition(topic, msgtype)
            schema = self._schemas.get(msgtype)
            if schema is None:
                encoding = 'ros2idl' if msgdef.startswith('=' * 80 + '\nIDL: ') else 'ros2msg'
                schema = self._schemas[msgtype] = self._mcap.add_schema(msgtype, encoding, msgdef)
            qos = offered_qos(topic, latched=latched, reliable=reliable)
            channel = self._mcap.add_channel(
                schema, topic, 'cdr', {'offered_qos_profiles': self._qos_text([qos])})
            conn = self._connections[topic] = _Topic(channel, msgtype, digest, qos)
            self.counts[topic] = 0
        elif conn.msgtype != msgtype:
            raise ValueError(f'{topic}: recorded as {conn.msgtype}, now given {msgtype}')
        return conn

    def write(self, topic: str, t_ns: int, cdr, msgtype: Optional[str] = None, *,
              handed_over: bool = False) -> None:
        """Write one serialised message (``bytes``, ``bytearray``, a buffer, or a tuple of
        them that together make the message, e.g. :attr:`.pointcloud_cdr.CdrMessage.parts`) at
        log time ``t_ns``; its bytes are not kept after the call, unless ``handed_over`` (the
        caller will never change them: a big message, e.g. a point cloud of a decoded record,
        is then written by the file's thread while the caller makes the next)."""
        conn = self._connections.get(topic)
        if conn is None or (msgtype is not None and msgtype != conn.msgtype):
            if msgtype is None:
                raise KeyError(f'{topic}: no type given (add_topic first)')
            conn = self.add_topic(topic, msgtype)
        if type(cdr) is tuple:
            cdr = tuple(p if type(p) is bytes or type(p) is bytearray
                        else memoryview(p).cast('B') for p in cdr)
        elif type(cdr) is not bytes and type(cdr) is not bytearray:
            cdr = memoryview(cdr).cast('B')
        self._mcap.write(conn.channel, int(t_ns), cdr, handed_over)
        self.counts[topic] += 1

    def writer(self, topic: str, msgtype: str):
        """A function ``write(t_ns, cdr)`` for one topic (declared now), for writers of many
        messages: the checks of :meth:`write` done once.  ``cdr`` is ``bytes``, ``bytearray``
        or a ``memoryview`` of bytes (not a numpy array: ``memoryview(a)``), ``t_ns`` an
        int."""
        conn = self.add_topic(topic, msgtype)
        mcap_write, channel, counts = self._mcap.write, conn.channel, self.counts

        def write(t_ns: int, cdr) -> None:
            mcap_write(channel, t_ns, cdr)
            counts[topic] += 1
        return write

    def write_rows(self, t_ns, columns) -> None:
        """Messages of many log times at once: ``t_ns`` a sequence of F ints, ``columns`` a
        list of ``(topic, rows)``: ``rows`` an (F, size) uint8 array, row i the CDR of the
        topic's message at ``t_ns[i]`` (e.g. :meth:`.cdr_template.CdrTemplate.fill_rows`),
        the topic declared before (:meth:`add_topic` or :meth:`writer`).  The same messages in
        the same order as :meth:`write` of each, frame by frame in column order (only the
        chunk bounds may differ: a chunk ends after a whole frame)."""
        conns = [self._connections[topic] for topic, _ in columns]
        self._mcap.write_rows(t_ns, [(conn.channel, rows) for conn, (_, rows)
                                     in zip(conns, columns)])
        for topic, _ in columns:
            self.counts[topic] += len(t_ns)

    def write_msg(self, topic: str, t_ns: int, msg) -> None:
        """Serialise an rclpy message (:func:`.cdr_template.serialize`: the bytes of rclpy's,
        padding zero, without importing rclpy: 0.1-0.2 s of a command's start-up) and write
        it."""
        from ros_sim_bridge.ros.cdr_template import serialize
        name = type_name(msg)
        self.write(topic, t_ns, serialize(name, msg), name)

    def metadata(self) -> dict:
        """The ``rosbag2_bagfile_information`` of the bag (complete once the last chunk is out:
        :meth:`close` calls it then)."""
        mcap = self._mcap
        count = sum(self.counts.values())
        start = mcap.start if count else 0
        duration = mcap.end - mcap.start if count else 0
        dump_qos = dump_qos_v9 if self.version >= 9 else dump_qos_v8
        return {
            'version': self.version,
            'storage_identifier': 'mcap',
            'relative_file_paths': [self._file_name],
            'duration': {'nanoseconds': duration},
            'starting_time': {'nanoseconds_since_epoch': start},
            'message_count': count,
            'topics_with_message_count': [
                {'topic_metadata': {'name': topic, 'type': conn.msgtype,
                                    'serialization_format': 'cdr',
                                    'offered_qos_profiles': dump_qos([conn.qos]),
                                    'type_description_hash': conn.digest},
                 'message_count': self.counts[topic]}
                for topic, conn in self._connections.items()],
            'compression_format': '',
            'compression_mode': '',
            'files': [{'path': self._file_name,
                       'starting_time': {'nanoseconds_since_epoch': start},
                       'duration': {'nanoseconds': duration},
                       'message_count': count}],
            'custom_data': {},
            'ros_distro': self.distro,
        }

    def close(self) -> None:
        """Finish the MCAP file (summary, footer), then write ``metadata.yaml``."""
        if self._mcap is None:
            return
        self._mcap.flush()
        text = _yaml(self.metadata())           # once: the file and the MCAP record
        self._mcap.close({'serialized_metadata': text.strip()})
        self._mcap = None
        tmp = self.path / 'metadata.yaml.tmp'     # the same mapping, one level down
        tmp.write_text('rosbag2_bagfile_information:\n' + textwrap.indent(text, '  '), 'utf8')
        tmp.replace(self.path / 'metadata.yaml')

    def __enter__(self) -> 'BagWriter':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
