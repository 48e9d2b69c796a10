"""Frame index, data type 0x6130 (spec §25; big-endian): where each frame of an ``.idc`` file
starts.  128-byte head (version, "FRAMEINDEX_HEADER", frame count, last timestamp, framing
policy with its triggers, padding) + 17-byte entries (file position, timestamp, device id)
decoded into :data:`ENTRY_DTYPE`."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ros_sim_bridge.core.binary import BAD_MAGIC, BAD_VALUE, CodecError, records, unpack_from
from . import registry

FRAME_INDEX_6130 = 0x6130
NAME = 'ibeo_frame_index'
MAGIC_TEXT = b'FRAMEINDEX_HEADER'
HEAD_SIZE = 128
_HEAD = struct.Struct('>BB17sQQBH')            # 38 bytes, triggers follow at 38
_TRIGGER = struct.Struct('>HB')
WIRE_ENTRY_DTYPE = np.dtype([('file_position', '>u8'), ('timestamp', '>u8'), ('device_id', 'u1')])
ENTRY_DTYPE = np.dtype([('file_position', 'u8'), ('timestamp', 'u8'), ('device_id', 'u1')])
MAX_TRIGGERS = (HEAD_SIZE - _HEAD.size) // _TRIGGER.size


@dataclass(frozen=True, eq=False)
class FrameIndex:
    major_version: int = 1
    minor_version: int = 0
    last_timestamp: int = 0
    trigger_belongs_to_new_frame: bool = True
    triggers: tuple = ()                      # ((data type, source device id), ...)
    entries: np.ndarray = field(default_factory=lambda: np.zeros(0, ENTRY_DTYPE))
    DATA_TYPE = FRAME_INDEX_6130


def decode_frame_index(body, header=None) -> FrameIndex:
    major, minor, text, count, last, new_frame, n_trig = unpack_from(_HEAD, body, 0, NAME, 'head')
    if text != MAGIC_TEXT:
        raise CodecError(NAME, f'identifier {text!r}, expected {MAGIC_TEXT!r}', field='header',
                         offset=2, kind=BAD_MAGIC)
    if n_trig > MAX_TRIGGERS:
        raise CodecError(NAME, f'{n_trig} triggers do not fit the 128-byte head',
                         field='nb_of_triggers', offset=36, kind=BAD_VALUE)
    triggers = tuple(unpack_from(_TRIGGER, body, _HEAD.size + 3 * i, NAME, f'triggers[{i}]')
                     for i in range(n_trig))
    entries = records(WIRE_ENTRY_DTYPE, body, HEAD_SIZE, count, NAME, 'frame_indices')
    return FrameIndex(major, minor, last, bool(new_frame), triggers, entries.astype(ENTRY_DTYPE))


def encode_frame_index(fi: FrameIndex) -> bytes:
    head = bytearray(HEAD_SIZE)
    _HEAD.pack_into(head, 0, fi.major_version, fi.minor_version, MAGIC_TEXT, len(fi.entries),
                    fi.last_timestamp, int(fi.trigger_belongs_to_new_frame), len(fi.triggers))
    for i, (dt, dev) in enumerate(fi.triggers):
        _TRIGGER.pack_into(head, _HEAD.size + 3 * i, dt, dev)
    wire = np.zeros(len(fi.entries), WIRE_ENTRY_DTYPE)
    for name in ENTRY_DTYPE.names:
        wire[name] = fi.entries[name]
    return bytes(head) + wire.tobytes()


registry.register(FRAME_INDEX_6130, 'frame_index', decode_frame_index, record=FrameIndex,
                  encode=encode_frame_index, min_size=HEAD_SIZE)
