"""Point cloud plane, data type 0x7510 (spec §28; big-endian): points relative to a WGS84
reference point and a tangential plane.  48-byte head + points whose layout the points type
gives (:data:`POINT_DTYPES`: x/y/z [m], echo pulse width, UINT32 flags)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError, pack, records, unpack_from
from . import registry

POINT_CLOUD_PLANE_7510 = 0x7510
NAME = 'ibeo_point_cloud_plane'
_HEAD = struct.Struct('>HHddffff8xI')
assert _HEAD.size == 48
POINTS_KINDS = {0: 'undefined', 1: 'scan', 2: 'lane', 3: 'curbstone', 4: 'guardrail',
                5: 'roadmarking', 6: 'offroad_marking'}
_XYZ = [('x', 'f4'), ('y', 'f4'), ('z', 'f4')]
_LAYOUTS = {0: _XYZ, 1: _XYZ + [('echo_pulse_width', 'f4')], 2: _XYZ + [('flags', 'u4')],
            3: _XYZ + [('echo_pulse_width', 'f4'), ('flags', 'u4')]}
#: Points type → (wire dtype, host dtype).
POINT_DTYPES = {k: (np.dtype([(n, '>' + t) for n, t in v]), np.dtype(v))
                for k, v in _LAYOUTS.items()}


@dataclass(frozen=True, eq=False)
class PointCloudPlane:
    points_kind: int = 0
    points_type: int = 0
    reference_longitude: float = float('nan')    # [rad]
    reference_latitude: float = float('nan')     # [rad]
    reference_altitude: float = float('nan')     # [m]
    plane_yaw: float = 0.0                       # [rad] Y=0 axis w.r.t. north
    plane_pitch: float = 0.0
    plane_roll: float = 0.0
    points: np.ndarray = field(default_factory=lambda: np.zeros(0, POINT_DTYPES[0][1]))
    DATA_TYPE = POINT_CLOUD_PLANE_7510


def decode_point_cloud_plane(body, header=None) -> PointCloudPlane:
    kind, ptype, lon, lat, alt, yaw, pitch, roll, count = unpack_from(_HEAD, body, 0, NAME, 'head')
    if ptype not in POINT_DTYPES:
        raise CodecError(NAME, f'points type {ptype} unknown (0..3)', field='points_type',
                         offset=2, kind=BAD_VALUE)
    wire, host = POINT_DTYPES[ptype]
    pts = records(wire, body, _HEAD.size, count, NAME, 'points')
    return PointCloudPlane(kind, ptype, lon, lat, alt, yaw, pitch, roll, pts.astype(host))


def encode_point_cloud_plane(p: PointCloudPlane) -> bytes:
    wire, _ = POINT_DTYPES[p.points_type]
    return pack(_HEAD, (p.points_kind, p.points_type, p.reference_longitude,
                        p.reference_latitude, p.reference_altitude, p.plane_yaw, p.plane_pitch,
                        p.plane_roll, len(p.points)), NAME) + \
        np.asarray(p.points).astype(wire).tobytes()


registry.register(POINT_CLOUD_PLANE_7510, 'point_cloud_plane', decode_point_cloud_plane,
                  record=PointCloudPlane, encode=encode_point_cloud_plane, min_size=_HEAD.size)
