"""The simulated RflySim vehicles: pure and steppable, no sockets.

``Scene(copter_ids).state(copter_id, t)`` is the :class:`~ros_sim_bridge.rflysim.codec.TruthState`
of a vehicle at time ``t``.  Each vehicle flies a circle or a figure-eight (a Lissajous curve) at
its own altitude, bobbing a little.  Position, velocity and acceleration are analytic; the
attitude is the one a multicopter needs for that acceleration (thrust along body −z, nose along
the horizontal velocity); the quaternion is the same attitude as the Euler angles; body rates are
the attitude's derivative; ``acc_frd`` is the specific force (what an accelerometer reads,
gravity included), in FRD; motor RPM follow the thrust; GPS is the NED position about the origin
(WGS-84 local tangent plane).  Collisions are scripted: every ``collision_period`` s two vehicles
"touch" for ``collision_duration`` s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from ros_sim_bridge.core import frames
from ros_sim_bridge.rflysim import codec

G = 9.80665                     # m/s², NED gravity is (0, 0, +G)
WGS84_A = 6378137.0
WGS84_F = 1.0 / 298.257223563
WGS84_E2 = WGS84_F * (2.0 - WGS84_F)

DEFAULT_GPS_ORIGIN = (40.0, 116.0, 50.0)   # lat deg, lon deg, alt m (an arbitrary map origin)


# --- geometry ---------------------------------------------------------------------------------

def ned_to_gps(origin: Sequence[float], ned: Sequence[float]) -> tuple:
    """NED metres about ``origin`` (lat deg, lon deg, alt m) → (lat, lon, alt), tangent plane
    with the WGS-84 radii of curvature at the origin (exact enough within a few km)."""
    lat0 = math.radians(origin[0])
    s = math.sin(lat0)
    w = 1.0 - WGS84_E2 * s * s
    r_meridian = WGS84_A * (1.0 - WGS84_E2) / (w * math.sqrt(w))
    r_normal = WGS84_A / math.sqrt(w)
    lat = origin[0] + math.degrees(ned[0] / r_meridian)
    lon = origin[1] + math.degrees(ned[1] / (r_normal * math.cos(lat0)))
    return (lat, lon, origin[2] - ned[2])


def gps_to_ned(origin: Sequence[float], gps: Sequence[float]) -> tuple:
    """Inverse of :func:`ned_to_gps`."""
    lat0 = math.radians(origin[0])
    s = math.sin(lat0)
    w = 1.0 - WGS84_E2 * s * s
    r_meridian = WGS84_A * (1.0 - WGS84_E2) / (w * math.sqrt(w))
    r_normal = WGS84_A / math.sqrt(w)
    return (math.radians(gps[0] - origin[0]) * r_meridian,
            math.radians(gps[1] - origin[1]) * r_normal * math.cos(lat0),
            origin[2] - gps[2])


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _unit(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] / n, v[1] / n, v[2] / n)


def _mat_t_vec(m, v):
    """mᵀ·v for a 3×3 row-major m."""
    return tuple(m[0][j] * v[0] + m[1][j] * v[1] + m[2][j] * v[2] for j in range(3))


def attitude(acc_ned: Sequence[float], yaw_hint: float) -> tuple:
    """Rotation body FRD → NED (row-major 3×3) of a multicopter producing ``acc_ned``: thrust
    along body −z, nose towards ``yaw_hint`` (rad from north)."""
    f = (acc_ned[0], acc_ned[1], acc_ned[2] - G)      # specific force, NED
    zb = _unit((-f[0], -f[1], -f[2]))
    xc = (math.cos(yaw_hint), math.sin(yaw_hint), 0.0)
    yb = _unit(_cross(zb, xc))
    xb = _cross(yb, zb)
    return ((xb[0], yb[0], zb[0]), (xb[1], yb[1], zb[1]), (xb[2], yb[2], zb[2]))


def euler_from_matrix(m) -> tuple:
    """Z-Y-X Euler (roll, pitch, yaw) rad of a body → NED rotation."""
    return (math.atan2(m[2][1], m[2][2]), -math.asin(max(-1.0, min(1.0, m[2][0]))),
            math.atan2(m[1][0], m[0][0]))


# --- scene ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Path:
    """A Lissajous path: n = cn + an·sin(wn·t + pn), e = ce + ae·sin(we·t + pe),
    d = −altitude + ad·sin(wd·t + pd)  (m, rad/s, rad)."""
    cn: float
    ce: float
    an: float
    wn: float
    pn: float
    ae: float
    we: float
    pe: float
    altitude: float
    ad: float
    wd: float
    pd: float
    shape: str

    def kinematics(self, t: float) -> tuple:
        """(position, velocity, acceleration), NED, analytic."""
        out = []
        for c, a, w, p in ((self.cn, self.an, self.wn, self.pn), (self.ce, self.ae, self.we, self.pe),
                           (-self.altitude, self.ad, self.wd, self.pd)):
            s, co = math.sin(w * t + p), math.cos(w * t + p)
            out.append((c + a * s, a * w * co, -a * w * w * s))
        pos, vel, acc = zip(*out)
        return pos, vel, acc


def make_path(index: int, count: int) -> Path:
    """Vehicle ``index`` of ``count``: even ones circle, odd ones fly figure-eights; centres on a
    ring around the origin, 5 m of altitude apart, different speeds."""
    ring = 0.0 if count == 1 else 30.0
    bearing = 2.0 * math.pi * index / max(count, 1)
    cn, ce = ring * math.cos(bearing), ring * math.sin(bearing)
    radius = 12.0 + 3.0 * (index % 3)
    w = 2.0 * math.pi / (20.0 + 4.0 * index)           # one lap in 20, 24, 28 ... s
    phase = 0.7 * index
    altitude = 10.0 + 5.0 * index
    wd = 2.0 * math.pi / 9.0
    if index % 2 == 0:   # circle: n = R cos, e = R sin
        return Path(cn, ce, radius, w, phase + math.pi / 2, radius, w, phase, altitude,
                    0.5, wd, phase, 'circle')
    return Path(cn, ce, radius, w, phase, radius / 2.0, 2.0 * w, 2.0 * phase, altitude,
                0.5, wd, phase, 'figure8')


class Scene:
    """Pure, steppable ground truth for a set of CopterIDs (see the module docstring).

    ``state(copter_id, t)`` depends on ``t`` only; ``runned_time`` = ``t``.
    """

    def __init__(self, copter_ids: Iterable[int], *,
                 gps_origin: Sequence[float] = DEFAULT_GPS_ORIGIN, gps_order: str = 'lat_lon_alt',
                 vehicle_type: int = 3, hover_rpm: float = 5500.0,
                 collision_period: float = 10.0, collision_duration: float = 0.5,
                 form: str = codec.FORM_SOUT2SIMULATOR):
        self.copter_ids = list(dict.fromkeys(int(i) for i in copter_ids))
        if not self.copter_ids:
            raise ValueError('no vehicles')
        for i in self.copter_ids:
            codec.truth_port(i)  # range check 1..255
        if gps_order not in codec.GPS_ORDERS:
            raise ValueError(f'gps_order must be one of {sorted(codec.GPS_ORDERS)}')
        if form not in codec.TRUTH_FORMS:
            raise ValueError(f'form must be one of {codec.TRUTH_FORMS}')
        self.gps_origin = tuple(float(v) for v in gps_origin)
        self.gps_order = gps_order
        self.vehicle_type = vehicle_type
        self.hover_rpm = hover_rpm
        self.collision_period = collision_period
        self.collision_duration = collision_duration
        self.form = form
        n = len(self.copter_ids)
        self.paths = {cid: make_path(k, n) for k, cid in enumerate(self.copter_ids)}

    # attitude as a function of time (used for the rates by central differences)
    def _rotation(self, path: Path, t: float):
        _, vel, acc = path.kinematics(t)
        return attitude(acc, math.atan2(vel[1], vel[0]))

    def collision_target(self, copter_id: int, t: float) -> Optional[int]:
        """The CopterID ``copter_id`` is touching at ``t``, or None.  Event k starts at
        (k + ½)·period and pairs vehicles k and k+1 (mod N), both ways."""
        n = len(self.copter_ids)
        if n < 2 or not self.collision_period or self.collision_period <= 0 or t < 0:
            return None
        k = math.floor(t / self.collision_period - 0.5)
        if k < 0 or t - (k + 0.5) * self.collision_period >= self.collision_duration:
            return None
        a, b = self.copter_ids[k % n], self.copter_ids[(k + 1) % n]
        return b if copter_id == a else a if copter_id == b else None

    def state(self, copter_id: int, t: float) -> codec.TruthState:
        path = self.paths[copter_id]
        pos, vel, acc = path.kinematics(t)
        rot = attitude(acc, math.atan2(vel[1], vel[0]))   # as _rotation, kinematics known
        roll, pitch, yaw = euler_from_matrix(rot)
        quat = tuple(float(v) for v in frames.quat_from_euler(roll, pitch, yaw))
        # body rates: skew(ω) = Rᵀ·dR/dt, dR/dt by a central difference
        h = 1e-4
        r_plus, r_minus = self._rotation(path, t + h), self._rotation(path, t - h)
        d = [[(r_plus[i][j] - r_minus[i][j]) / (2 * h) for j in range(3)] for i in range(3)]
        omega = [[sum(rot[k][i] * d[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
        rates = (omega[2][1], omega[0][2], omega[1][0])
        specific = (acc[0], acc[1], acc[2] - G)
        acc_frd = _mat_t_vec(rot, specific)
        thrust = math.sqrt(sum(v * v for v in specific))
        base = self.hover_rpm * math.sqrt(thrust / G)
        spin = 40.0 * rates[2]           # quad X: yaw torque from the CW/CCW pairs
        tilt_r, tilt_p = 20.0 * rates[0], 20.0 * rates[1]
        rpm = (base - tilt_r + tilt_p + spin, base + tilt_r - tilt_p + spin,
               base + tilt_r + tilt_p - spin, base - tilt_r - tilt_p - spin,
               0.0, 0.0, 0.0, 0.0)
        pos_gps = self._in_gps_order(ned_to_gps(self.gps_origin, pos))
        return codec.TruthState(self.form, copter_id, self.vehicle_type, t, pos, vel,
                                (roll, pitch, yaw), quat, rpm, acc_frd, rates, pos_gps, 0,
                                self.collision_target(copter_id, t))

    def states(self, t: float) -> list:
        return [self.state(cid, t) for cid in self.copter_ids]

    def origin_gps(self) -> tuple:
        """The GPS origin in the configured order (as sent in Ue4CMDGPS)."""
        return self._in_gps_order(self.gps_origin)

    def _in_gps_order(self, lat_lon_alt) -> tuple:
        return tuple(lat_lon_alt[i] for i in codec.GPS_ORDERS[self.gps_order])
