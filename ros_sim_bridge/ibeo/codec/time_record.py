"""TimeRecord, data type 0x9000 (spec §32; big-endian): pairs of external (e.g. GPS) and
internal clock times for re-timing a recording offline.

Head: external and internal clock type (id, name: one byte each), UINT32 count n; then n
external NTP64 times, n internal NTP64 times, n fix modes, 16 reserved bytes.  The document
sizes the fix-mode vector "8 · n" bytes but types a fix mode UINT8: both readings are accepted,
chosen by the body size (1 byte per fix mode when the size fits that, else 8)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, TRUNCATED, CodecError, pack, unpack_from
from . import registry

TIME_RECORD_9000 = 0x9000
NAME = 'ibeo_time_record'
FIX_MODES = {0: 'not_seen', 1: 'none', 2: 'fix_2d', 3: 'fix_3d'}
_HEAD = struct.Struct('>BBBBI')


@dataclass(frozen=True, eq=False)
class TimeRecord:
    external_clock_id: int = 0
    external_clock_name: int = 0
    internal_clock_id: int = 0
    internal_clock_name: int = 0
    external_ntp: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    internal_ntp: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    fix_modes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    DATA_TYPE = TIME_RECORD_9000


def decode_time_record(body, header=None) -> TimeRecord:
    ext_id, ext_name, int_id, int_name, n = unpack_from(_HEAD, body, 0, NAME, 'head')
    size = len(body)
    if size == 8 + 17 * n + 16:
        fix_size = 1
    elif size == 8 + 24 * n + 16:
        fix_size = 8
    else:
        raise CodecError(NAME, f'{size} bytes fit neither 8 + 17·{n} + 16 nor 8 + 24·{n} + 16',
                         field='vector_size', offset=4,
                         kind=TRUNCATED if size < 8 + 17 * n + 16 else BAD_VALUE)
    ext = np.frombuffer(body, '>u8', n, 8).astype(np.uint64)
    internal = np.frombuffer(body, '>u8', n, 8 + 8 * n).astype(np.uint64)
    fix = np.frombuffer(body, 'u1' if fix_size == 1 else '>u8', n, 8 + 16 * n).astype(np.uint8)
    return TimeRecord(ext_id, ext_name, int_id, int_name, ext, internal, fix)


def encode_time_record(t: TimeRecord) -> bytes:
    """Writes 1-byte fix modes."""
    n = len(t.external_ntp)
    return (pack(_HEAD, (t.external_clock_id, t.external_clock_name, t.internal_clock_id,
                         t.internal_clock_name, n), NAME)
            + np.asarray(t.external_ntp, '>u8').tobytes()
            + np.asarray(t.internal_ntp, '>u8').tobytes()
            + np.asarray(t.fix_modes, 'u1').tobytes() + bytes(16))


registry.register(TIME_RECORD_9000, 'time_record', decode_time_record, record=TimeRecord,
                  encode=encode_time_record, min_size=_HEAD.size + 16)
