"""Shared pieces of the fuzz suite: byte strategies (random, mutated seeds, boundary values) and
the properties every decoder / framer / conversion entry point is held to.

Mutations of a valid seed: bit flips, truncation, extension, overwritten windows, and edits of
2/4/8-byte fields (either byte order) to boundary integers and NaN/±Inf/huge floats, so length
fields, counts, checksums and float payloads all get their extreme values.
"""
from __future__ import annotations

import math
import struct
import time
import tracemalloc
from typing import Callable, Sequence

import numpy as np
from hypothesis import strategies as st

from ros_sim_bridge.core.binary import CodecError

KINDS = {'truncated', 'oversized', 'unknown_layout', 'bad_magic', 'bad_checksum', 'bad_value',
         'wrong_source',
         'bad_json',      # monodrive.codec.control.BAD_JSON: bytes that are not UTF-8 JSON
         'non_standard_json'}   # monodrive.codec.control: NaN / Infinity (not JSON; refused)

#: Wall time one decode / conversion may take before it counts as a hang (generous: the machine
#: is shared; real decodes take microseconds to a few ms).
DECODE_SECONDS = 2.0
#: The same for a conversion of one decoded record into its ROS messages (they build Python
#: message objects: slower than decoding, but a small fuzz input never needs seconds).
CONVERT_SECONDS = 5.0
#: Memory a decoder may allocate: a fixed allowance plus a multiple of the input size (the
#: numpy gathers of the object list use 8-byte indices per input byte, plus intermediates).
ALLOC_FIXED = 2 << 20
ALLOC_PER_BYTE = 64
#: Inputs above this are only timed: the cap matters where a few bytes declare huge counts,
#: and tracing a multi-megabyte valid message costs seconds.
TRACE_LIMIT = 256 << 10

BOUNDARY_INTS = (0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF, 0x7FFFFFFF,
                 0x80000000, 0xFFFFFFFF, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF)
BOUNDARY_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e308, 3.4e38, -3.4e38,
                   9.3e18, -9.3e18, 1e-45, 5e-324)

_FIELD_FORMATS = ('<H', '>H', '<h', '<I', '>I', '<i', '<Q', '>Q', '<f', '>f', '<d', '>d')


def _pack_boundary(fmt: str, value) -> bytes:
    if fmt[-1] in 'fd':
        with np.errstate(over='ignore'):     # 1e308 as float32 is +Inf: also a boundary
            return np.array(value, fmt.replace('f', 'f4').replace('d', 'f8')).tobytes()
    size = struct.calcsize(fmt)
    return (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, 'little' if fmt[0] == '<'
                                                             else 'big')


_INT_FORMATS = tuple(f for f in _FIELD_FORMATS if f[-1] not in 'fd')
_FLOAT_FORMATS = tuple(f for f in _FIELD_FORMATS if f[-1] in 'fd')
_POS = st.integers(0, 1 << 20)
#: One mutation, as a tuple (operation, arguments…); strategies built once (cheap per example).
_MUTATION = st.one_of(
    st.tuples(st.just('flip'), _POS, st.integers(0, 7)),
    st.tuples(st.just('truncate'), _POS),
    st.tuples(st.just('extend'), st.binary(min_size=1, max_size=32)),
    st.tuples(st.just('overwrite'), _POS, st.binary(min_size=1, max_size=8)),
    st.tuples(st.just('delete'), _POS, st.integers(1, 16)),
    st.tuples(st.just('duplicate'), _POS, st.integers(1, 32)),
    st.tuples(st.just('int_field'), _POS, st.sampled_from(_INT_FORMATS),
              st.sampled_from(BOUNDARY_INTS) | st.integers(-2**63, 2**64 - 1)),
    st.tuples(st.just('float_field'), _POS, st.sampled_from(_FLOAT_FORMATS),
              st.sampled_from(BOUNDARY_FLOATS)))


def mutate(data: bytes, mutation) -> bytes:
    """Apply one drawn mutation to ``data``."""
    op, *args = mutation
    buf = bytearray(data)
    n = len(buf)
    if op == 'extend' or n == 0:
        return bytes(buf) + (args[0] if op == 'extend' else b'\0')
    at = args[0] % n
    if op == 'flip':
        buf[at] ^= 1 << args[1]
    elif op == 'truncate':
        del buf[at:]
    elif op == 'overwrite':
        buf[at:at + len(args[1])] = args[1]
    elif op == 'delete':
        del buf[at:at + args[1]]
    elif op == 'duplicate':
        buf[at:at] = buf[at:at + args[1]]
    else:   # int_field / float_field
        raw = _pack_boundary(args[1], args[2])
        buf[at:at + len(raw)] = raw
    return bytes(buf)


def _apply(pair) -> bytes:
    data, mutations = pair
    for m in mutations:
        data = mutate(data, m)
    return data


def mutated(seeds: Sequence[bytes], max_mutations: int = 4) -> st.SearchStrategy[bytes]:
    """A seed with 0..max_mutations mutations applied."""
    return st.tuples(st.sampled_from(list(seeds)),
                     st.lists(_MUTATION, max_size=max_mutations)).map(_apply)


def inputs(seeds: Sequence[bytes], max_random: int = 600) -> st.SearchStrategy[bytes]:
    """Random bytes, or a (possibly mutated) seed."""
    return st.one_of(st.binary(max_size=max_random), mutated(seeds))


def _run(decode: Callable, data: bytes):
    try:
        return decode(data), None
    except CodecError as err:
        check_codec_error(err)
        check_error_has_offset(err)
        return None, err


def check_decoder(decode: Callable, data: bytes, *, alloc_cap: int | None = None):
    """Run ``decode(data)``: it returns, or raises CodecError with its fields set; it takes less
    than DECODE_SECONDS and allocates less than the cap.  Returns the value (None on error).

    Timed on a plain run, then run again under tracemalloc for the peak allocation (tracing
    slows per-object Python work several times over, so it is not timed); inputs above
    TRACE_LIMIT are only timed."""
    cap = alloc_cap if alloc_cap is not None else ALLOC_FIXED + ALLOC_PER_BYTE * len(data)
    t0 = time.perf_counter()
    value, _ = _run(decode, data)
    elapsed = time.perf_counter() - t0
    assert elapsed < DECODE_SECONDS, f'{elapsed:.2f} s for {len(data)} bytes'
    if len(data) > TRACE_LIMIT:
        return value
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        _run(decode, data)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if started:
            tracemalloc.stop()
    assert peak <= cap, f'{peak} bytes allocated for {len(data)} input bytes (cap {cap})'
    return value


def check_codec_error(err: CodecError) -> None:
    assert err.kind in KINDS, err.kind
    assert isinstance(err.message, str) and err.message, err
    assert err.offset is None or isinstance(err.offset, int) and err.offset >= 0, err.offset
    assert str(err)


def check_error_has_offset(err: CodecError) -> None:
    """Byte-level errors (truncated, oversized, bad magic/checksum) say where."""
    if err.kind in ('truncated', 'oversized', 'bad_magic', 'bad_checksum'):
        assert err.offset is not None, f'{err.kind} without offset: {err}'


def timed(fn: Callable, *args, seconds: float = CONVERT_SECONDS, **kwargs):
    t0 = time.perf_counter()
    value = fn(*args, **kwargs)
    elapsed = time.perf_counter() - t0
    assert elapsed < seconds, f'{fn.__name__} took {elapsed:.2f} s'
    return value


def serialize(*msgs) -> None:
    """Every message serialises (rclpy checks every field's type and range here)."""
    from rclpy.serialization import serialize_message
    for m in msgs:
        assert len(serialize_message(m)) > 0


# --- counting inputs per entry point (reported by conftest in the long profile) -------------

COUNTS: dict[str, int] = {}
#: Long profile: seconds each fuzz test may run (set by conftest from FUZZ_SECONDS).
BUDGET = {'per_test': 0.0}
STARTED = time.monotonic()


def tried(entry: str) -> None:
    """Count one input given to ``entry`` (a dotted function name)."""
    COUNTS[entry] = COUNTS.get(entry, 0) + 1
