"""monoDrive lidar geometry in SI, ROS-free: Velodyne packets (:mod:`.codec.lidar`, wire
units: 0.01° azimuths, 2 mm distance steps) → points in m in the sensor's REP-103 frame.

16 lasers: VLP-16 "Puck Hi-Res" (two firings per block, the second at azimuth + horizontal
resolution); 32 lasers: HDL-32E (one firing).  With azimuth α measured clockwise from forward
and elevation ω: x = d·cosω·cosα, y = −d·cosω·sinα, z = d·sinω (x forward, y left, z up;
monoDrive's client computes the same point in Velodyne's x-right/y-forward frame).  The
emulator casts its rays with the same :class:`LidarGeometry`.

``ring`` follows velodyne_pointcloud: 0 is the lowest laser, counting upward (VLP-16: ring 0 =
−10°, 1 = −8.67° … 7 = −0.67°, 8 = +0.67° … 15 = +10°), not the laser's firing index.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ros_sim_bridge.monodrive.codec.lidar import check_flags, packets
from ros_sim_bridge.monodrive.codec.units import LIDAR_AZIMUTH_DEG, LIDAR_DISTANCE_M

__all__ = ['ELEVATIONS', 'POINT', 'LidarGeometry', 'decode_points', 'count_points']

# Elevation of each laser id (degrees), Velodyne's firing order.
VLP16_HIRES_ELEVATION = (-10.0, 0.67, -8.67, 2.0, -7.33, 3.33, -6.0, 4.67,
                         -4.67, 6.0, -3.33, 7.33, -2.0, 8.67, -0.67, 10.0)
HDL32E_ELEVATION = (-30.67, -9.33, -29.33, -8.0, -28.0, -6.67, -26.67, -5.33,
                    -25.33, -4.0, -24.0, -2.67, -22.67, -1.33, -21.33, 0.0,
                    -20.0, 1.33, -18.67, 2.67, -17.33, 4.0, -16.0, 5.33,
                    -14.67, 6.67, -13.33, 8.0, -12.0, 9.33, -10.67, 10.67)
ELEVATIONS = {16: VLP16_HIRES_ELEVATION, 32: HDL32E_ELEVATION}


def rings(elevations) -> np.ndarray:
    """Ring of each laser id: its rank by elevation, 0 = lowest (velodyne_pointcloud's
    convention, which ring-based tools expect), not the firing order."""
    order = np.argsort(np.asarray(elevations, dtype=np.float64), kind='stable')
    ring = np.empty(len(order), np.uint16)
    ring[order] = np.arange(len(order))
    return ring

# The cloud's point layout (host order, for PointCloud2 / CloudBuffer).
POINT = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                  ('ring', '<u2')])


class LidarGeometry:
    """Per-channel angles of a layout: elevation (rad) and the azimuth step of each channel."""

    def __init__(self, n_lasers: int = 16, horizontal_resolution_deg: float = 0.2):
        if n_lasers not in ELEVATIONS:
            raise ValueError(f'n_lasers must be 16 (VLP-16) or 32 (HDL-32E), not {n_lasers}')
        self.n_lasers = n_lasers
        elev = np.radians(np.asarray(ELEVATIONS[n_lasers], dtype=np.float64))
        channel = np.arange(32)
        laser = channel % n_lasers
        self.ring = rings(ELEVATIONS[n_lasers])[laser]   # 0 = lowest elevation, upward
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
    dist = blocks['returns']['distance'].astype(np.float32) * np.float32(LIDAR_DISTANCE_M)
    refl = blocks['returns']['reflectivity']                 # (P, 12, 32)
    az = np.radians(blocks['azimuth'][..., None] * LIDAR_AZIMUTH_DEG + geometry.offset_deg)
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
