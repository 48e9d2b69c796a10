"""Fuzz: every registered ibeo data-type decoder, the data header and frame decoding."""
from __future__ import annotations

import struct

import pytest
from hypothesis import example, given, strategies as st

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.ibeo.codec import framing, registry

import fuzz_support as fz
import ibeo_seeds

BODIES = ibeo_seeds.bodies()
MESSAGES = ibeo_seeds.messages()
ALL_BODIES = [b for group in BODIES.values() for b in group]


def test_every_registered_type_has_valid_seeds():
    """Every registered decoder is fuzzed from valid seeds: a type registered without seeds in
    ibeo_seeds fails here (and its test_decode fails too)."""
    assert set(BODIES) == set(registry.registered_types())
    for data_type, group in BODIES.items():
        for body in group:
            registry.decode_message(data_type, body)


_INPUTS = {t: fz.inputs(BODIES[t], max_random=400) | fz.mutated(ALL_BODIES) for t in BODIES}


def _seeded_inputs(data_type: int):
    assert data_type in _INPUTS, \
        f'registered type 0x{data_type:04X} ({registry.type_name(data_type)}) has no fuzz seeds'
    return _INPUTS[data_type]


@pytest.mark.parametrize('data_type', registry.registered_types(),
                         ids=lambda t: registry.type_name(t))
@given(data=st.data())
def test_decode(data_type, data):
    fz.tried(f'ibeo.codec.{registry.type_name(data_type)}')
    body = data.draw(_seeded_inputs(data_type))
    header = ibeo.IbeoHeader(data_type=data_type, size=len(body))
    fz.check_decoder(lambda b: registry.decode_message(data_type, b, header), body)


# Boundary bodies: the largest counts a 16-bit field can declare, with and without the bytes.
_MAX_SCAN = struct.pack('<HHHQQHhhHhhhhhhH', 0, 0, 0, 0, 0, 11520, 0, 0, 0xFFFF, 0, 0, 0, 0,
                        0, 0, 0)
_MAX_OBJECTS = struct.pack('<QH', 0, 0xFFFF)


@given(st.sampled_from([_MAX_SCAN, _MAX_OBJECTS]), st.integers(0, 64))
@example(_MAX_SCAN + bytes(10 * 0xFFFF), 0)
@example(_MAX_OBJECTS + bytes(58 * 0xFFFF), 0)
@example(_MAX_OBJECTS + (bytes(56) + b'\xfe\xff') * 2, 0)
@example(struct.pack('<HHHQQHhhHhhhhhhH', 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0), 10)
def test_decode_max_counts(body, extra):
    """Counts at their maximum: decoded if the bytes are there, TRUNCATED if not; memory and time
    bounded by the input (a declared count is never trusted before the bytes are checked)."""
    fz.tried('ibeo.codec.max_counts')
    data = body + bytes(extra)
    data_type = registry.OBJECTS if data.startswith(_MAX_OBJECTS) else registry.SCAN
    fz.check_decoder(lambda b: registry.decode_message(data_type, b), data)


@given(fz.inputs(MESSAGES, max_random=200))
@example(b'\xaf\xfe\xc0\xc2' + bytes(20))
def test_header_and_frame(raw):
    """decode_header on any 24 bytes, and decode_frame on the message split at the header."""
    fz.tried('ibeo.codec.decode_header')
    fz.check_decoder(ibeo.decode_header, raw)

    def frame(data):
        if len(data) < ibeo.HEADER_SIZE:
            return ibeo.decode_header(data)
        return ibeo.decode_frame(Frame(bytes(data[:ibeo.HEADER_SIZE]),
                                       bytes(data[ibeo.HEADER_SIZE:])))
    fz.check_decoder(frame, raw)
    try:
        framing.check_plausible(ibeo.decode_header(raw))
    except CodecError as err:
        fz.check_codec_error(err)
