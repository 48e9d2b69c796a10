"""Velodyne data packets as monoDrive's lidar streams them (SUPPLEMENT §4.4), in the wire's
units.

A packet is 1206 bytes, little-endian: 12 blocks × {``u16 flag`` (0xFFEE), ``u16 azimuth``
(0.01°), 32 × {``u16 distance`` (×2 mm), ``u8 reflectivity``}}, ``u32 timestamp``,
``u16 factory``.  :func:`packets` gives them as a structured array (azimuths in 0.01°,
distances in 2 mm steps, as sent); the points in m and rad are made by the ROS-free
:mod:`ros_sim_bridge.monodrive.lidar_geometry` with the factors below.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import BAD_MAGIC, CodecError, require_length

PACKET_SIZE = 1206
BLOCK_FLAG = 0xEEFF           # bytes FF EE read as little-endian u16
MESSAGE = 'Velodyne packet'

RETURN = np.dtype([('distance', '<u2'), ('reflectivity', 'u1')])
BLOCK = np.dtype([('flag', '<u2'), ('azimuth', '<u2'), ('returns', RETURN, (32,))])
PACKET = np.dtype([('blocks', BLOCK, (12,)), ('timestamp', '<u4'), ('factory', '<u2')])
assert PACKET.itemsize == PACKET_SIZE

def packets(data, message: str = MESSAGE) -> np.ndarray:
    """Packets of ``data`` (a multiple of 1206 bytes) as a structured array, zero-copy."""
    if len(data) == 0 or len(data) % PACKET_SIZE:
        raise CodecError(message, f'{len(data)} bytes is not a whole number of '
                         f'{PACKET_SIZE}-byte packets', kind='unknown_layout')
    return np.frombuffer(data, PACKET)


def check_flags(pk: np.ndarray) -> None:
    bad = pk['blocks']['flag'] != BLOCK_FLAG
    if bad.any():
        p, b = np.argwhere(bad)[0]
        raise CodecError(MESSAGE, f'block flag 0x{int(pk["blocks"]["flag"][p, b]):04x}, '
                         'expected 0xffee', field=f'block[{b}].flag', offset=int(b) * 100,
                         kind=BAD_MAGIC)


def first_last_azimuth(packet: bytes) -> tuple[int, int]:
    """Azimuths (0.01°) of a packet's first and last block."""
    require_length(packet, MESSAGE, exact=PACKET_SIZE)
    a0 = packet[2] | packet[3] << 8
    a1 = packet[11 * 100 + 2] | packet[11 * 100 + 3] << 8
    return a0, a1


class RevolutionAssembler:
    """Packets → whole revolutions: a packet whose first azimuth is below the previous
    packet's last azimuth starts a new one (the previous is returned, joined).  A revolution is
    also cut after ``max_packets`` so a stream that never wraps cannot grow without bound."""

    def __init__(self, max_packets: int = 4000):
        self.max_packets = max_packets
        self._parts: list[bytes] = []
        self._last_azimuth: Optional[int] = None
        self.game_time: Optional[float] = None   # of the revolution's first packet

    def reset(self) -> None:
        self._parts.clear()
        self._last_azimuth = None

    def add(self, packet: bytes, game_time: float = 0.0) -> Optional[tuple[bytes, float]]:
        first, last = first_last_azimuth(packet)
        done = None
        if self._parts and ((self._last_azimuth is not None and first < self._last_azimuth)
                            or len(self._parts) >= self.max_packets):
            done = (b''.join(self._parts), self.game_time)
            self._parts = []
        if not self._parts:
            self.game_time = game_time
        self._parts.append(bytes(packet))
        self._last_azimuth = last
        return done


def encode_packet(azimuths_cdeg, distances_raw, reflectivity, timestamp: int = 0,
                  factory: int = 0x2237) -> bytes:
    """One packet from 12 azimuths (0.01°), 12×32 raw distances (2 mm) and reflectivities
    (for the emulator and tests)."""
    pk = np.zeros(1, PACKET)
    pk['blocks']['flag'] = BLOCK_FLAG
    pk['blocks']['azimuth'][0] = np.asarray(azimuths_cdeg) % 36000
    pk['blocks']['returns']['distance'][0] = distances_raw
    pk['blocks']['returns']['reflectivity'][0] = reflectivity
    pk['timestamp'] = timestamp
    pk['factory'] = factory
    return pk.tobytes()
