"""Ibeo FUSION SYSTEM / ECU image, data type 0x2403 (spec §14; big-endian like every ECU type,
§14 does not restate it).

63-byte image header (format, µs since power-on, NTP64 time, device id, camera mounting
position yaw/pitch/roll [rad] x/y/z [m], opening angles [rad], width, height, compressed
size) followed by ``compressed size`` bytes of image data.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import TRUNCATED, CodecError, pack, unpack_from
from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from . import registry

IMAGE_2403 = 0x2403
NAME = 'ibeo_ecu_image'
FORMATS = {0: 'jpeg', 1: 'mjpeg', 2: 'gray8', 3: 'yuv420', 4: 'yuv422'}
JPEG, MJPEG, GRAY8, YUV420, YUV422 = range(5)
_HEADER = struct.Struct('>HIQB6fddHHI')
HEADER_SIZE = _HEADER.size          # 63
assert HEADER_SIZE == 63


@dataclass(frozen=True, eq=False)
class EcuImage:
    image_format: int
    us_since_power_on: int
    timestamp_ntp: int
    device_id: int
    mounting_yaw: float
    mounting_pitch: float
    mounting_roll: float
    mounting_x: float
    mounting_y: float
    mounting_z: float
    horizontal_opening_angle: float
    vertical_opening_angle: float
    width: int
    height: int
    data: bytes = b''

    DATA_TYPE = IMAGE_2403

    @property
    def format_name(self) -> str:
        return FORMATS.get(self.image_format, f'format_{self.image_format}')

    @property
    def stamp_ns(self) -> int:
        return ntp64_to_unix_ns(self.timestamp_ntp)


def decode_image(body, header=None) -> EcuImage:
    """Decode a 0x2403 body (§14); TRUNCATED when the compressed size runs past the body."""
    values = unpack_from(_HEADER, body, 0, NAME, 'image_header')
    size = values[-1]
    if HEADER_SIZE + size > len(body):
        raise CodecError(NAME, f'compressed size {size} needs bytes {HEADER_SIZE}..'
                         f'{HEADER_SIZE + size}, have {len(body)}', field='compressed_size',
                         offset=59, kind=TRUNCATED)
    return EcuImage(*values[:-1], bytes(body[HEADER_SIZE:HEADER_SIZE + size]))


def encode_image(img: EcuImage) -> bytes:
    return pack(_HEADER, (img.image_format, img.us_since_power_on, img.timestamp_ntp,
                          img.device_id, img.mounting_yaw, img.mounting_pitch,
                          img.mounting_roll, img.mounting_x, img.mounting_y, img.mounting_z,
                          img.horizontal_opening_angle, img.vertical_opening_angle, img.width,
                          img.height, len(img.data)), NAME) + bytes(img.data)


registry.register(IMAGE_2403, 'ecu_image', decode_image, record=EcuImage, encode=encode_image,
                  min_size=HEADER_SIZE)
