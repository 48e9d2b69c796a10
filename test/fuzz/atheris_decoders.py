"""Coverage-guided fuzzing of every decoder and the ibeo framer with atheris (libFuzzer).

Run by test_fuzz_atheris.py in a subprocess (libFuzzer exits the process when done):
``python atheris_decoders.py -runs=N`` or ``-max_total_time=S``.  The first input byte picks
the entry point; anything but CodecError escaping a decoder is a crash (non-zero exit).
"""
from __future__ import annotations

import sys

import atheris
import numpy  # noqa: F401  (imported first so that only the project's modules are instrumented)

with atheris.instrument_imports(include=['ros_sim_bridge']):
    from ros_sim_bridge.core.binary import CodecError
    from ros_sim_bridge.core.framer import Frame
    from ros_sim_bridge.ibeo import codec as ibeo
    from ros_sim_bridge.ibeo.codec import registry
    from ros_sim_bridge.morai import codec as morai
    from ros_sim_bridge.rflysim import codec as rfly

_TYPES = registry.registered_types()
_MORAI = list(morai.MESSAGE_TYPES.values())


def _framer(data: bytes) -> None:
    framer = ibeo.make_framer(1 << 16)
    half = len(data) // 2
    for event in framer.feed(data[:half]) + framer.feed(data[half:]):
        if not isinstance(event, (Frame, CodecError)):
            raise AssertionError(f'framer event {event!r}')


ENTRIES = [lambda d: rfly.decode(d), morai.decode_any, ibeo.decode_header, _framer] + \
    [lambda d, m=m: m.decode(d) for m in _MORAI] + \
    [lambda d, t=t: registry.decode_message(t, d) for t in _TYPES]


def one_input(data: bytes) -> None:
    if not data:
        return
    entry = ENTRIES[data[0] % len(ENTRIES)]
    try:
        entry(data[1:])
    except CodecError as err:
        if not err.kind or not err.message:
            raise AssertionError(f'CodecError without kind/message: {err!r}') from None


if __name__ == '__main__':
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
