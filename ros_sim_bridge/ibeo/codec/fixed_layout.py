"""Fixed-size big-endian bodies ↔ frozen dataclasses: one struct format per data type, the
dataclass fields in wire order (reserved bytes are pad bytes ``x`` in the format).

Shorter bodies raise CodecError(TRUNCATED, offset = body length); bytes after the documented
layout are ignored (later firmware appends fields).
"""
from __future__ import annotations

import dataclasses
import struct

from ros_sim_bridge.core.binary import pack, unpack_from
from . import registry


class FixedLayout:
    """Decoder/encoder of one data type whose body is ``fmt`` mapped onto dataclass ``cls``."""

    def __init__(self, data_type: int, name: str, fmt: str, cls: type):
        self.data_type, self.name, self.cls = data_type, name, cls
        self.struct = struct.Struct(fmt)
        self.fields = [f.name for f in dataclasses.fields(cls)]
        n = len(self.struct.unpack(bytes(self.struct.size)))
        assert n == len(self.fields), f'{cls.__name__}: {n} wire values, {len(self.fields)} fields'

    @property
    def size(self) -> int:
        return self.struct.size

    def decode(self, body, header=None):
        return self.cls(*unpack_from(self.struct, body, 0, self.name, 'body'))

    def encode(self, record) -> bytes:
        return pack(self.struct, [getattr(record, f) for f in self.fields], self.name,
                    self.fields)

    def register(self) -> 'FixedLayout':
        registry.register(self.data_type, self.name, self.decode, record=self.cls,
                          encode=self.encode, min_size=self.size)
        return self
