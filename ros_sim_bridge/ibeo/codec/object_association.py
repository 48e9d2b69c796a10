"""Object association, data type 0x4001 (spec §31; big-endian): which reference object matched
which device-under-test object, and when.  20-byte head + 28-byte associations decoded into
:data:`ASSOCIATION_DTYPE`."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ros_sim_bridge.core.binary import pack, records, unpack_from
from . import registry

OBJECT_ASSOCIATION_4001 = 0x4001
NAME = 'ibeo_object_association'
_HEAD = struct.Struct('>BBHBBHI8x')
_FIELDS = [('reference_object_id', 'u4'), ('dut_object_id', 'u4'), ('timestamp_first_ntp', 'u8'),
           ('timestamp_last_ntp', 'u8'), ('certainty', 'f4')]
WIRE_ASSOCIATION_DTYPE = np.dtype([(n, '>' + t) for n, t in _FIELDS])
ASSOCIATION_DTYPE = np.dtype(_FIELDS)
assert WIRE_ASSOCIATION_DTYPE.itemsize == 28 and _HEAD.size == 20


@dataclass(frozen=True, eq=False)
class ObjectAssociation:
    reference_object_list_id: int = 0
    reference_device_type: int = 0
    reference_device_interface_version: int = 0
    dut_object_list_id: int = 0
    dut_device_type: int = 0
    dut_device_interface_version: int = 0
    associations: np.ndarray = field(default_factory=lambda: np.zeros(0, ASSOCIATION_DTYPE))
    DATA_TYPE = OBJECT_ASSOCIATION_4001


def decode_object_association(body, header=None) -> ObjectAssociation:
    *ids, count = unpack_from(_HEAD, body, 0, NAME, 'head')
    rows = records(WIRE_ASSOCIATION_DTYPE, body, _HEAD.size, count, NAME, 'associations')
    return ObjectAssociation(*ids, rows.astype(ASSOCIATION_DTYPE))


def encode_object_association(a: ObjectAssociation) -> bytes:
    head = bytearray(pack(_HEAD, (a.reference_object_list_id, a.reference_device_type,
                                  a.reference_device_interface_version, a.dut_object_list_id,
                                  a.dut_device_type, a.dut_device_interface_version,
                                  len(a.associations)), NAME))
    head[12:20] = b'\xff' * 8                  # reserved: all 0xFF (§31)
    return bytes(head) + np.asarray(a.associations).astype(WIRE_ASSOCIATION_DTYPE).tobytes()


registry.register(OBJECT_ASSOCIATION_4001, 'object_association', decode_object_association,
                  record=ObjectAssociation, encode=encode_object_association,
                  min_size=_HEAD.size)
