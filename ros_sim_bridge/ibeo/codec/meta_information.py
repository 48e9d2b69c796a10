"""Meta information list, data type 0x7110 (spec §29; big-endian): version numbers, AppBase
configuration, sync method, ECU id, keywords.  Each element: type (UINT16), time NTP64, payload
size (UINT32), payload; strings are UINT16-length-prefixed.  Known subtypes are decoded into
``value`` (a dict or a string), others keep their payload bytes."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ros_sim_bridge.core.binary import TRUNCATED, CodecError, pack, prefixed_string, unpack_from
from . import registry

META_INFORMATION_7110 = 0x7110
NAME = 'ibeo_meta_information'
UNDEFINED, VERSION_NUMBER, AB_CONFIG, AB_SYNC_METHOD, ECU_ID, KEYWORDS = range(6)
TYPE_NAMES = ('undefined', 'version_number', 'ab_config', 'ab_sync_method', 'ecu_id', 'keywords')
SOFTWARE_TYPES = {0: 'undefined', 1: 'custom', 2: 'appbase', 3: 'evs', 4: 'ilv'}
_COUNT = struct.Struct('>I')
_ELEMENT = struct.Struct('>HQI')
_U16 = struct.Struct('>H')
_VERSION = struct.Struct('>HI')


@dataclass(frozen=True)
class MetaInformation:
    info_type: int
    timestamp_ntp: int
    payload: bytes
    value: object = None


@dataclass(frozen=True)
class MetaInformationList:
    elements: list = field(default_factory=list)
    DATA_TYPE = META_INFORMATION_7110


def _value(kind: int, payload: bytes):
    if kind == VERSION_NUMBER:
        sw, number = unpack_from(_VERSION, payload, 0, NAME, 'version_number')
        extra, _ = prefixed_string(payload, _VERSION.size, _U16, NAME, 'extra_string')
        return {'software_type': sw, 'version': number, 'major': number // 1_000_000,
                'minor': number % 1_000_000 // 1000, 'patch': number % 1000, 'extra': extra}
    if kind in (AB_CONFIG, ECU_ID, KEYWORDS):
        return prefixed_string(payload, 0, _U16, NAME, TYPE_NAMES[kind])[0]
    if kind == AB_SYNC_METHOD:
        return unpack_from(_U16, payload, 0, NAME, 'sync_method')[0]
    return None


def decode_meta_information(body, header=None) -> MetaInformationList:
    (count,) = unpack_from(_COUNT, body, 0, NAME, 'number_of_elements')
    if count * _ELEMENT.size > len(body) - 4:
        raise CodecError(NAME, f'{count} elements need at least {count * _ELEMENT.size} bytes, '
                         f'have {len(body) - 4}', field='elements', offset=4, kind=TRUNCATED)
    pos, out = 4, []
    for i in range(count):
        kind, ntp, size = unpack_from(_ELEMENT, body, pos, NAME, f'elements[{i}]')
        pos += _ELEMENT.size
        if pos + size > len(body):
            raise CodecError(NAME, f'payload of {size} bytes runs past the body',
                             field=f'elements[{i}].payload', offset=pos, kind=TRUNCATED)
        payload = bytes(body[pos:pos + size])
        out.append(MetaInformation(kind, ntp, payload, _value(kind, payload)))
        pos += size
    return MetaInformationList(out)


def encode_meta_information(lst: MetaInformationList) -> bytes:
    parts = [pack(_COUNT, (len(lst.elements),), NAME)]
    for e in lst.elements:
        parts.append(pack(_ELEMENT, (e.info_type, e.timestamp_ntp, len(e.payload)), NAME))
        parts.append(bytes(e.payload))
    return b''.join(parts)


registry.register(META_INFORMATION_7110, 'meta_information_list', decode_meta_information,
                  record=MetaInformationList, encode=encode_meta_information, min_size=4)
