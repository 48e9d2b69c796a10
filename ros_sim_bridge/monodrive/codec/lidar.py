"""Velodyne data packets as monoDrive's lidar streams them (SUPPLEMENT §4.4).

A packet is 1206 bytes, little-endian: 12 blocks × {``u16 flag`` (0xFFEE), ``u16 azimuth``
(0.01°), 32 × {``u16 distance`` (×2 mm), ``u8 reflectivity``}}, ``u32 timestamp``,
``u16 factory``.  16 lasers: VLP-16 "Puck Hi-Res" (two firings per block, the second at
azimuth + horizontal resolution); 32 lasers: HDL-32E (one firing).  Points come out in the
sensor's REP-103 frame (x forward, y left, z up): with azimuth α measured clockwise from
forward and elevation ω, x = d·cosω·cosα, y = −d·cosω·sinα, z = d·sinω (monoDrive's client
computes the same point in Velodyne's x-right/y-forward frame).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ros_sim_bridge.core.binary import BAD_MAGIC, CodecError, require_length

PACKET_SIZE = 1206
BLOCK_FLAG = 0xEEFF           # bytes FF EE read as little-endian u16
DISTANCE_UNIT_M = 0.002
AZIMUTH_UNIT_DEG = 0.01
MESSAGE = 'Velodyne packet'

RETURN = np.dtype([('distance', '<u2'), ('reflectivity', 'u1')])
BLOCK = np.dtype([('flag', '<u2'), ('azimuth', '<u2'), ('returns', RETURN, (32,))])
PACKET = np.dtype([('blocks', BLOCK, (12,)), ('timestamp', '<u4'), ('factory', '<u2')])
assert PACKET.itemsize == PACKET_SIZE

# Elevation of each laser id (degrees), Velodyne's firing order.
VLP16_HIRES_ELEVATION = (-10.0, 0.67, -8.67, 2.0, -7.33, 3.33, -6.0, 4.67,
                         -4.67, 6.0, -3.33, 7.33, -2.0, 8.67, -0.67, 10.0)
HDL32E_ELEVATION = (-30.67, -9.33, -29.33, -8.0, -28.0, -6.67, -26.67, -5.33,
                    -25.33, -4.0, -24.0, -2.67, -22.67, -1.33, -21.33, 0.0,
                    -20.0, 1.33, -18.67, 2.67, -17.33, 4.0, -16.0, 5.33,
                    -14.67, 6.67, -13.33, 8.0, -12.0, 9.33, -10.67, 10.67)
ELEVATIONS = {16: VLP16_HIRES_ELEVATION, 32: HDL32E_ELEVATION}

# The cloud's point layout (host order, for PointCloud2 / CloudBuffer).
POINT = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                  ('ring', '<u2')])


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


class LidarGeometry:
    """Per-channel angles of a layout: elevation (rad) and the azimuth step of each channel."""

    def __init__(self, n_lasers: int = 16, horizontal_resolution_deg: float = 0.2):
        if n_lasers not in ELEVATIONS:
            raise ValueError(f'n_lasers must be 16 (VLP-16) or 32 (HDL-32E), not {n_lasers}')
        self.n_lasers = n_lasers
        elev = np.radians(np.asarray(ELEVATIONS[n_lasers], dtype=np.float64))
        channel = np.arange(32)
        laser = channel % n_lasers
        self.ring = laser.astype(np.uint16)
        self.cos_elev = np.cos(elev[laser])
        self.sin_elev = np.sin(elev[laser])
        # VLP-16: channels 16..31 are the second firing, one horizontal step later
        self.offset_deg = np.where(channel >= n_lasers, horizontal_resolution_deg, 0.0)


def decode_points(data, geometry: LidarGeometry, out: Optional[np.ndarray] = None,
                  *, keep_empty: bool = False) -> np.ndarray:
    """Points of one or more packets (vectorised over every packet, block and channel).

    Returns the valid points (distance > 0 unless ``keep_empty``) as :data:`POINT` records;
    with ``out`` (an array of POINT at least as long as the result) they are written there and
    the filled prefix is returned."""
    pk = packets(data)
    check_flags(pk)
    blocks = pk['blocks']                                    # (P, 12)
    dist = blocks['returns']['distance'].astype(np.float32) * np.float32(DISTANCE_UNIT_M)
    refl = blocks['returns']['reflectivity']                 # (P, 12, 32)
    az = np.radians(blocks['azimuth'][..., None] * AZIMUTH_UNIT_DEG + geometry.offset_deg)
    horiz = dist * geometry.cos_elev                         # (P, 12, 32)
    valid = dist > 0 if not keep_empty else np.ones(dist.shape, bool)
    n = int(valid.sum())
    if out is None:
        out = np.empty(n, POINT)
    elif len(out) < n:
        raise ValueError(f'out holds {len(out)} points, {n} needed')
    res = out[:n]
    h = horiz[valid]
    a = az[valid]
    res['x'] = h * np.cos(a)
    res['y'] = -h * np.sin(a)
    res['z'] = (dist * geometry.sin_elev)[valid]
    res['intensity'] = refl[valid]
    res['ring'] = np.broadcast_to(geometry.ring, dist.shape)[valid]
    return res


def count_points(data) -> int:
    """How many valid points :func:`decode_points` will return (to size a buffer)."""
    return int((packets(data)['blocks']['returns']['distance'] > 0).sum())


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
