"""The typed records of the RflySim truth forms (SUPPLEMENT §2.2): one per wire form, exactly
its fields, and :class:`TruthState`, the normalised state of one vehicle."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Union

from ros_sim_bridge.core import frames
from ros_sim_bridge.core.binary import CodecError

from .layout import (CHECKSUM_SIMPLE_TIME, CHECKSUM_SMALL, CHECKSUM_SOUT2SIMULATOR,
                     FORM_NETDATASHORT_DOC, FORM_NETDATASHORT_LEGACY, FORM_SIMPLE_TIME,
                     FORM_SOUT2SIMULATOR, LEGACY_LEN)
from .units import GPS_INT_SCALE

Vec3 = tuple  # (float, float, float)


@dataclass(slots=True)
class TruthState:
    """One vehicle's ground truth, normalised over the four truth forms.

    Frames and units as sent (SUPPLEMENT §2.2, the document's output table):

    - ``pos_ned`` m, NED, relative to the map centre; ``vel_ned`` m/s, NED.
    - ``euler`` (roll, pitch, yaw) rad; ``quat_wxyz`` w-x-y-z (NED ← FRD body), or None when the
      form has none (simple_time: derive it from ``euler``).
    - ``acc_frd`` m/s², ``rate_frd`` (p, q, r) rad/s, body FRD, or None when the form has none
      (simple_time).
    - ``motor_rpm`` 8 actuator values (RPM for rotorcraft).
    - ``runned_time`` s since the simulation started.
    - ``pos_gps`` three doubles in the sender's order (document: lat deg, lon deg, alt m up).
    - ``reserved`` the ``reserv`` int of the 168-byte layout (0 where the form has none).
    - ``collision_target`` the CopterID this vehicle collided with (legacy form, ``tg`` ≥ 0), or
      None (no collision, or a form that does not carry it).
    - ``form`` which wire form it came from (one of :data:`TRUTH_FORMS`).
    """
    form: str
    copter_id: int
    vehicle_type: int
    runned_time: float
    pos_ned: Vec3
    vel_ned: Vec3
    euler: Vec3
    quat_wxyz: Optional[tuple]
    motor_rpm: tuple
    acc_frd: Optional[Vec3]
    rate_frd: Optional[Vec3]
    pos_gps: Vec3
    reserved: int = 0
    collision_target: Optional[int] = None

    @property
    def has_quaternion(self) -> bool:
        return self.quat_wxyz is not None

    @property
    def has_body_motion(self) -> bool:
        """True when body acceleration and rates were sent (not in simple_time)."""
        return self.acc_frd is not None and self.rate_frd is not None


@dataclass(slots=True)
class SOut2Simulator:
    """The 168-byte ``SOut2Simulator`` (``4i24f7d``, checksum 123456789), sent bare by current
    CopterSim (SUPPLEMENT §2.2) and wrapped in netDataShort by the document."""
    copter_id: int
    vehicle_type: int
    reserved: int
    vel_ned: Vec3
    euler: Vec3
    quat_wxyz: tuple
    motor_rpm: tuple
    acc_frd: Vec3
    rate_frd: Vec3
    runned_time: float
    pos_ned: Vec3
    pos_gps: Vec3
    checksum: int = CHECKSUM_SOUT2SIMULATOR

    def to_truth(self, form: str = FORM_SOUT2SIMULATOR) -> TruthState:
        return TruthState(form, self.copter_id, self.vehicle_type, self.runned_time,
                          self.pos_ned, self.vel_ned, self.euler, self.quat_wxyz,
                          self.motor_rpm, self.acc_frd, self.rate_frd, self.pos_gps,
                          self.reserved, None)

    @classmethod
    def from_truth(cls, s: TruthState) -> 'SOut2Simulator':
        """Missing quaternion / body motion are filled (quaternion from Euler, zeros)."""
        return cls(s.copter_id, s.vehicle_type, s.reserved, tuple(s.vel_ned), tuple(s.euler),
                   _quat_or_euler(s), _pad8(s.motor_rpm), _vec_or_zero(s.acc_frd),
                   _vec_or_zero(s.rate_frd), s.runned_time, tuple(s.pos_ned), tuple(s.pos_gps))


@dataclass(slots=True)
class NetDataShortLegacy:
    """Legacy 200-byte ``netDataShort`` (SUPPLEMENT §2.2): ``tg``, ``len`` = 152, payload
    ``2i1d27f3d`` without checksum.  ``tg`` ≥ 0 is the CopterID this vehicle collided with,
    otherwise negative.  PosE travels as float32 here."""
    tg: int
    copter_id: int
    vehicle_type: int
    runned_time: float
    vel_ned: Vec3
    pos_ned: Vec3
    euler: Vec3
    quat_wxyz: tuple
    motor_rpm: tuple
    acc_frd: Vec3
    rate_frd: Vec3
    pos_gps: Vec3
    length: int = LEGACY_LEN

    @property
    def collision_target(self) -> Optional[int]:
        return self.tg if self.tg >= 0 else None

    def to_truth(self) -> TruthState:
        return TruthState(FORM_NETDATASHORT_LEGACY, self.copter_id, self.vehicle_type,
                          self.runned_time, self.pos_ned, self.vel_ned, self.euler,
                          self.quat_wxyz, self.motor_rpm, self.acc_frd, self.rate_frd,
                          self.pos_gps, 0, self.collision_target)

    @classmethod
    def from_truth(cls, s: TruthState, tg: Optional[int] = None) -> 'NetDataShortLegacy':
        """``tg`` defaults to the collision target, or -1 without one."""
        if tg is None:
            tg = s.collision_target if s.collision_target is not None else -1
        return cls(tg, s.copter_id, s.vehicle_type, s.runned_time, tuple(s.vel_ned),
                   tuple(s.pos_ned), tuple(s.euler), _quat_or_euler(s), _pad8(s.motor_rpm),
                   _vec_or_zero(s.acc_frd), _vec_or_zero(s.rate_frd), tuple(s.pos_gps))


@dataclass(slots=True)
class NetDataShortDoc:
    """The document's netDataShort (200 bytes): ``tg`` ("target port identifier"), ``len``
    (200 per the document; 168 also accepted), and a full ``SOut2Simulator`` with its checksum at
    payload start (byte 8); bytes 176..199 unused.  SUPPLEMENT §2.2: not what public code sends,
    accepted if it arrives."""
    tg: int
    length: int
    sout: SOut2Simulator

    def to_truth(self) -> TruthState:
        return self.sout.to_truth(FORM_NETDATASHORT_DOC)

    @classmethod
    def from_truth(cls, s: TruthState, tg: int = 0, length: int = 200) -> 'NetDataShortDoc':
        return cls(tg, length, SOut2Simulator.from_truth(s))


@dataclass(slots=True)
class SOut2SimulatorSimpleTime:
    """112-byte ``SOut2SimulatorSimpleTime`` (``6i14f4d``, checksum 1234567891; SUPPLEMENT §2.2).

    ``pos_gps_int`` = (lat·1e7, lon·1e7, alt·1e3) as int32; no quaternion, body acceleration or
    rates."""
    copter_id: int
    vehicle_type: int
    pos_gps_int: tuple
    motor_rpm: tuple
    vel_ned: Vec3
    euler: Vec3
    pos_ned: Vec3
    runned_time: float
    checksum: int = CHECKSUM_SIMPLE_TIME

    @property
    def pos_gps(self) -> Vec3:
        """(deg, deg, m) from the scaled integers."""
        return tuple(v / k for v, k in zip(self.pos_gps_int, GPS_INT_SCALE))

    def to_truth(self) -> TruthState:
        return TruthState(FORM_SIMPLE_TIME, self.copter_id, self.vehicle_type, self.runned_time,
                          self.pos_ned, self.vel_ned, self.euler, None, self.motor_rpm, None,
                          None, self.pos_gps, 0, None)

    @classmethod
    def from_truth(cls, s: TruthState) -> 'SOut2SimulatorSimpleTime':
        """GPS is rounded to 1e-7 deg / 1 mm (the wire's resolution)."""
        gps = tuple(_round_i32(v * k, 'PosGpsInt') for v, k in zip(s.pos_gps, GPS_INT_SCALE))
        return cls(s.copter_id, s.vehicle_type, gps, _pad8(s.motor_rpm), tuple(s.vel_ned),
                   tuple(s.euler), tuple(s.pos_ned), s.runned_time)


@dataclass(slots=True)
class CrashNotice:
    """12-byte crash notice (``iii``, checksum 1234567890; SUPPLEMENT §2.2): ``copter_id``
    collided with ``target_id`` (≥ 0), or None when the wire value is negative."""
    copter_id: int
    target_id: Optional[int]
    checksum: int = CHECKSUM_SMALL

    @property
    def collided(self) -> bool:
        return self.target_id is not None


@dataclass(slots=True)
class GpsOrigin:
    """32-byte ``Ue4CMDGPS`` (``ii3d``, checksum 1234567890; SUPPLEMENT §2.2): the map's GPS
    origin, ``pos_gps`` three doubles in the sender's order (as ``TruthState.pos_gps``)."""
    copter_id: int
    pos_gps: Vec3
    checksum: int = CHECKSUM_SMALL


@dataclass(slots=True)
class OutCopterStruct:
    """264-byte ``outCopterStruct`` (``ii32d``, checksum 1234567890; SUPPLEMENT §2.2): known but
    not published; ``values`` are the 32 doubles as sent."""
    copter_id: int
    values: tuple = field(default_factory=lambda: (0.0,) * 32)
    checksum: int = CHECKSUM_SMALL


Record = Union[TruthState, CrashNotice, GpsOrigin, OutCopterStruct]
FormRecord = Union[SOut2Simulator, NetDataShortLegacy, NetDataShortDoc, SOut2SimulatorSimpleTime,
                   CrashNotice, GpsOrigin, OutCopterStruct]


def _pad8(values) -> tuple:
    values = tuple(values)
    return (values + (0.0,) * 8)[:8] if len(values) < 8 else values


def _vec_or_zero(v) -> Vec3:
    return (0.0, 0.0, 0.0) if v is None else tuple(v)


def _round_i32(x: float, name: str) -> int:
    if not math.isfinite(x):
        raise CodecError('SOut2SimulatorSimpleTime', f'{x} not finite', field=name)
    return int(round(x))


def _quat_or_euler(s: TruthState) -> tuple:
    if s.quat_wxyz is not None:
        return tuple(s.quat_wxyz)
    return tuple(float(v) for v in frames.quat_from_euler(*s.euler))

