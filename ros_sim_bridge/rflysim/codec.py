"""RflySim ground truth on the UDP 30100 series (sans-IO): datagram bytes ↔ typed records.

Sources: ``shared/specs/rflysim-udp30100-truesim.txt`` ("the document") and
``shared/specs/SUPPLEMENT.md`` §2 ("SUPPLEMENT").  Everything is little-endian (SUPPLEMENT §2.2).

What can arrive on the truth port of one vehicle, told apart by datagram length first, then by
the checksum (SUPPLEMENT §2.2):

========  =========================  ===============  ========================================
bytes     layout                     checksum         record returned by :func:`decode`
========  =========================  ===============  ========================================
168       ``4i24f7d``                123456789        :class:`TruthState` (form sout2simulator)
200       ``ii`` + ``2i1d27f3d``     none (len 152)   :class:`TruthState` (netdatashort_legacy)
200       ``ii`` + ``4i24f7d``       123456789 @8     :class:`TruthState` (netdatashort_doc)
112       ``6i14f4d``                1234567891       :class:`TruthState` (simple_time)
12        ``iii``                    1234567890       :class:`CrashNotice`
32        ``ii3d``                   1234567890       :class:`GpsOrigin`
264       ``ii32d``                  1234567890       :class:`OutCopterStruct`
========  =========================  ===============  ========================================

Values keep the source's frames and units: position and velocity in the NED earth frame (m,
m/s, relative to the map centre), body acceleration and rates in FRD (m/s², rad/s), Euler angles
roll/pitch/yaw (rad), quaternion w-x-y-z, motor speeds in RPM, ``runnedTime`` in s since the
simulation started, and ``PosGPS`` as three doubles in the sender's order (the document says
latitude, longitude (deg), altitude (m, up); SUPPLEMENT §2.2 notes the order is unverified, so
the order is left to the consumer).

Besides the normalised :class:`TruthState`, each wire form has its own record
(:class:`SOut2Simulator`, :class:`NetDataShortLegacy`, :class:`NetDataShortDoc`,
:class:`SOut2SimulatorSimpleTime`) with exactly the fields of the wire, returned by
:func:`decode_form` and written by the ``encode_*`` functions.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Optional, Union

from ros_sim_bridge.core import frames
from ros_sim_bridge.core.binary import (BAD_CHECKSUM, OVERSIZED, TRUNCATED, UNKNOWN_LAYOUT, WRONG_SOURCE,
                     CodecError, check_range, pack)

Vec3 = tuple  # (float, float, float)

# --- constants (SUPPLEMENT §2.1, §2.2) -------------------------------------------------------

TRUTH_BASE_PORT = 30101        # CopterID 1; ID n uses 30101 + 2·(n − 1)  (SUPPLEMENT §2.1)
COPTER_ID_MIN, COPTER_ID_MAX = 1, 255  # the document's CopterID range (mask parameter)

CHECKSUM_SOUT2SIMULATOR = 123456789     # 168-byte SOut2Simulator (document, SUPPLEMENT §2.2)
CHECKSUM_SIMPLE_TIME = 1234567891       # 112-byte SOut2SimulatorSimpleTime
CHECKSUM_SMALL = 1234567890             # 12-byte crash notice, 32-byte Ue4CMDGPS, 264-byte outCopterStruct

NETDATASHORT_SIZE = 200                 # netDataShort {int tg; int len; char payload[192]}
LEGACY_LEN = 152                        # ``len`` of the legacy form (SUPPLEMENT §2.2)
DOC_LENS = (200, 168)                   # ``len`` values accepted for the document's form

# Names of the truth forms (TruthState.form); the ROS side maps them to message constants.
FORM_SOUT2SIMULATOR = 'sout2simulator'
FORM_NETDATASHORT_LEGACY = 'netdatashort_legacy'
FORM_NETDATASHORT_DOC = 'netdatashort_doc'
FORM_SIMPLE_TIME = 'simple_time'
TRUTH_FORMS = (FORM_SOUT2SIMULATOR, FORM_NETDATASHORT_LEGACY, FORM_NETDATASHORT_DOC,
               FORM_SIMPLE_TIME)

# --- wire layouts (precompiled; one unpack per datagram) --------------------------------------

# SOut2Simulator, 168 B: checksum, copterID, vehicleType, reserv (i32) @0..15; VelE 3f @16;
# AngEuler 3f @28; AngQuatern 4f @40; MotorRPMS 8f @56; AccB 3f @88; RateB 3f @100;
# runnedTime d @112; PosE 3d @120; PosGPS 3d @144.  (document table; SUPPLEMENT §2.2)
_SOUT = struct.Struct('<4i24f7d')
# The document's netDataShort carrying a full SOut2Simulator at payload start, 24 bytes unused.
_DOC = struct.Struct('<2i4i24f7d24x')
# Legacy netDataShort, 200 B: tg @0, len @4, copterID @8, vehicleType @12, runnedTime d @16,
# VelE 3f @24, PosE 3f @36, AngEuler 3f @48, AngQuatern 4f @60, MotorRPMS 8f @76, AccB 3f @108,
# RateB 3f @120, 4 bytes padding @132, PosGPS 3d @136, bytes 160..199 unused.  (SUPPLEMENT §2.2)
_LEGACY = struct.Struct('<2i2id27f4x3d40x')
# SOut2SimulatorSimpleTime, 112 B: checksum, copterID, vehicleType @0..11; PosGpsInt 3i @12
# (lat·1e7, lon·1e7, alt·1e3); MotorRPMS 8f @24; VelE 3f @56; AngEuler 3f @68; PosE 3d @80;
# runnedTime d @104.  (SUPPLEMENT §2.2)
_SIMPLE = struct.Struct('<6i14f4d')
_CRASH = struct.Struct('<3i')        # checksum, CopterID, target ID
_GPS_ORIGIN = struct.Struct('<2i3d')  # checksum, CopterID, GPS origin 3d
_OUT_COPTER = struct.Struct('<2i32d')  # checksum, CopterID, 32 doubles
_HEADER_II = struct.Struct('<2i')

SIZE_SOUT2SIMULATOR = _SOUT.size        # 168
SIZE_NETDATASHORT = _LEGACY.size        # 200
SIZE_SIMPLE_TIME = _SIMPLE.size         # 112
SIZE_CRASH_NOTICE = _CRASH.size         # 12
SIZE_GPS_ORIGIN = _GPS_ORIGIN.size      # 32
SIZE_OUT_COPTER = _OUT_COPTER.size      # 264
assert (SIZE_SOUT2SIMULATOR, SIZE_NETDATASHORT, _DOC.size, SIZE_SIMPLE_TIME, SIZE_CRASH_NOTICE,
        SIZE_GPS_ORIGIN, SIZE_OUT_COPTER) == (168, 200, 200, 112, 12, 32, 264)

GPS_INT_SCALE = (1e7, 1e7, 1e3)  # SimpleTime PosGpsInt = (lat·1e7, lon·1e7, alt·1e3)
#: Possible orders of PosGPS: name → indices of (lat, lon, alt) in the three values.
GPS_ORDERS = {'lat_lon_alt': (0, 1, 2), 'lon_lat_alt': (1, 0, 2)}


# --- records ----------------------------------------------------------------------------------

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


# --- ports ------------------------------------------------------------------------------------

def truth_port(copter_id: int, base_port: int = TRUTH_BASE_PORT) -> int:
    """UDP port of CopterID's ground truth: ``base_port + 2·(copter_id − 1)`` (SUPPLEMENT §2.1;
    the document's ``30101 + 2·ID`` is the next vehicle's port).  CopterID 1..255 (document)."""
    if isinstance(copter_id, bool) or not isinstance(copter_id, int):
        raise CodecError('truth_port', f'CopterID must be an int, not {copter_id!r}',
                         field='copter_id')
    check_range(copter_id, COPTER_ID_MIN, COPTER_ID_MAX, 'truth_port', 'copter_id')
    port = base_port + 2 * (copter_id - 1)
    check_range(port, 1, 65535, 'truth_port', 'port')
    return port


# --- decoding ---------------------------------------------------------------------------------

def _bad_checksum(message: str, got: int, want: int, offset: int = 0) -> CodecError:
    return CodecError(message, f'checksum {got}, expected {want}', field='checksum',
                      offset=offset, kind=BAD_CHECKSUM)


def _check_id(message: str, copter_id: int, expected: Optional[int], offset: int) -> None:
    if expected is not None and copter_id != expected:
        raise CodecError(message, f'CopterID {copter_id}, this port expects {expected}',
                         field='copter_id', offset=offset, kind=WRONG_SOURCE)


def _sout_from(v: tuple, i: int) -> SOut2Simulator:
    """SOut2Simulator from the 35 values of ``4i24f7d`` starting at index ``i``."""
    return SOut2Simulator(
        v[i + 1], v[i + 2], v[i + 3], v[i + 4:i + 7], v[i + 7:i + 10], v[i + 10:i + 14],
        v[i + 14:i + 22], v[i + 22:i + 25], v[i + 25:i + 28], v[i + 28], v[i + 29:i + 32],
        v[i + 32:i + 35], v[i])


def _decode_sout(data, expected):
    v = _SOUT.unpack(data)
    if v[0] != CHECKSUM_SOUT2SIMULATOR:
        raise _bad_checksum('SOut2Simulator', v[0], CHECKSUM_SOUT2SIMULATOR)
    _check_id('SOut2Simulator', v[1], expected, 4)
    return _sout_from(v, 0)


def _decode_netdatashort(data, expected):
    tg, length = _HEADER_II.unpack_from(data, 0)
    if length == LEGACY_LEN:
        v = _LEGACY.unpack(data)
        _check_id('netDataShort(legacy)', v[2], expected, 8)
        return NetDataShortLegacy(v[0], v[2], v[3], v[4], v[5:8], v[8:11], v[11:14], v[14:18],
                                  v[18:26], v[26:29], v[29:32], v[32:35], v[1])
    if length in DOC_LENS:
        v = _DOC.unpack(data)
        if v[2] != CHECKSUM_SOUT2SIMULATOR:
            raise _bad_checksum('netDataShort(SOut2Simulator)', v[2], CHECKSUM_SOUT2SIMULATOR, 8)
        _check_id('netDataShort(SOut2Simulator)', v[3], expected, 12)
        return NetDataShortDoc(tg, length, _sout_from(v, 2))
    raise CodecError('netDataShort', f'200-byte datagram with len {length}: no known layout '
                     f'(legacy len {LEGACY_LEN}, document len 200/168)', field='len', offset=4,
                     kind=UNKNOWN_LAYOUT)


def _decode_simple(data, expected):
    v = _SIMPLE.unpack(data)
    if v[0] != CHECKSUM_SIMPLE_TIME:
        raise _bad_checksum('SOut2SimulatorSimpleTime', v[0], CHECKSUM_SIMPLE_TIME)
    _check_id('SOut2SimulatorSimpleTime', v[1], expected, 4)
    return SOut2SimulatorSimpleTime(v[1], v[2], v[3:6], v[6:14], v[14:17], v[17:20], v[20:23],
                                    v[23], v[0])


def _decode_crash(data, expected):
    checksum, copter_id, target = _CRASH.unpack(data)
    if checksum != CHECKSUM_SMALL:
        raise _bad_checksum('CrashNotice', checksum, CHECKSUM_SMALL)
    _check_id('CrashNotice', copter_id, expected, 4)
    return CrashNotice(copter_id, target if target >= 0 else None, checksum)


def _decode_gps_origin(data, expected):
    # The GPS origin describes the map, not one vehicle: its CopterID is not checked.
    v = _GPS_ORIGIN.unpack(data)
    if v[0] != CHECKSUM_SMALL:
        raise _bad_checksum('Ue4CMDGPS', v[0], CHECKSUM_SMALL)
    return GpsOrigin(v[1], v[2:5], v[0])


def _decode_out_copter(data, expected):
    v = _OUT_COPTER.unpack(data)
    if v[0] != CHECKSUM_SMALL:
        raise _bad_checksum('outCopterStruct', v[0], CHECKSUM_SMALL)
    _check_id('outCopterStruct', v[1], expected, 4)
    return OutCopterStruct(v[1], v[2:34], v[0])


_BY_SIZE = {
    SIZE_SOUT2SIMULATOR: _decode_sout,
    SIZE_NETDATASHORT: _decode_netdatashort,
    SIZE_SIMPLE_TIME: _decode_simple,
    SIZE_CRASH_NOTICE: _decode_crash,
    SIZE_GPS_ORIGIN: _decode_gps_origin,
    SIZE_OUT_COPTER: _decode_out_copter,
}
KNOWN_SIZES = tuple(sorted(_BY_SIZE))
_MAX_SIZE = max(KNOWN_SIZES)


def decode_form(datagram, expected_copter_id: Optional[int] = None) -> FormRecord:
    """The wire-form record of one datagram (see the module table), fields exactly as sent.

    Dispatch on length, then checksum (SUPPLEMENT §2.2).  Raises :class:`CodecError`:
    ``TRUNCATED`` (empty, or shorter than the smallest form), ``OVERSIZED`` (longer than the
    largest form), ``UNKNOWN_LAYOUT`` (any other size no form has, or a 200-byte netDataShort with
    an unknown ``len``), ``BAD_CHECKSUM``, ``WRONG_SOURCE`` (CopterID ≠ ``expected_copter_id``;
    the map-wide GPS origin is not checked).
    """
    decoder = _BY_SIZE.get(len(datagram))
    if decoder is None:
        n = len(datagram)
        known = ', '.join(str(s) for s in KNOWN_SIZES)
        if n < KNOWN_SIZES[0]:
            raise CodecError('RflySim truth', f'{n} bytes, shorter than any form ({known} B)',
                             offset=n, kind=TRUNCATED)
        if n > _MAX_SIZE:
            raise CodecError('RflySim truth', f'{n} bytes, longer than any form ({known} B)',
                             offset=_MAX_SIZE, kind=OVERSIZED)
        raise CodecError('RflySim truth', f'{n} bytes: no known form has this size '
                         f'({known} B)', kind=UNKNOWN_LAYOUT)
    return decoder(datagram, expected_copter_id)


def decode(datagram, expected_copter_id: Optional[int] = None) -> Record:
    """One datagram → :class:`TruthState` (the four truth forms), :class:`CrashNotice`,
    :class:`GpsOrigin` or :class:`OutCopterStruct`.  Errors as :func:`decode_form`."""
    rec = decode_form(datagram, expected_copter_id)
    to_truth = getattr(rec, 'to_truth', None)
    return to_truth() if to_truth is not None else rec


# --- encoding ---------------------------------------------------------------------------------

_SOUT_FIELDS = ('checksum', 'copterID', 'vehicleType', 'reserv', 'VelE', 'AngEuler',
                'AngQuatern', 'MotorRPMS', 'AccB', 'RateB', 'runnedTime', 'PosE', 'PosGPS')


def _sout_values(r: SOut2Simulator) -> tuple:
    return (r.checksum, r.copter_id, r.vehicle_type, r.reserved, *_n(r.vel_ned, 3, 'VelE'),
            *_n(r.euler, 3, 'AngEuler'), *_n(r.quat_wxyz, 4, 'AngQuatern'),
            *_n(r.motor_rpm, 8, 'MotorRPMS'), *_n(r.acc_frd, 3, 'AccB'),
            *_n(r.rate_frd, 3, 'RateB'), r.runned_time, *_n(r.pos_ned, 3, 'PosE'),
            *_n(r.pos_gps, 3, 'PosGPS'))


def encode_sout2simulator(r: SOut2Simulator) -> bytes:
    """168-byte bare ``SOut2Simulator`` (SUPPLEMENT §2.2)."""
    return pack(_SOUT, _sout_values(r), 'SOut2Simulator', _SOUT_FIELDS)


def encode_netdatashort_doc(r: NetDataShortDoc) -> bytes:
    """200-byte netDataShort with a full SOut2Simulator payload (the document's form)."""
    return pack(_DOC, (r.tg, r.length, *_sout_values(r.sout)), 'netDataShort(SOut2Simulator)',
                ('tg', 'len') + _SOUT_FIELDS)


def encode_netdatashort_legacy(r: NetDataShortLegacy) -> bytes:
    """200-byte legacy netDataShort (``len`` 152, payload ``2i1d27f3d``; SUPPLEMENT §2.2)."""
    values = (r.tg, r.length, r.copter_id, r.vehicle_type, r.runned_time,
              *_n(r.vel_ned, 3, 'VelE'), *_n(r.pos_ned, 3, 'PosE'), *_n(r.euler, 3, 'AngEuler'),
              *_n(r.quat_wxyz, 4, 'AngQuatern'), *_n(r.motor_rpm, 8, 'MotorRPMS'),
              *_n(r.acc_frd, 3, 'AccB'), *_n(r.rate_frd, 3, 'RateB'),
              *_n(r.pos_gps, 3, 'PosGPS'))
    return pack(_LEGACY, values, 'netDataShort(legacy)',
                ('tg', 'len', 'copterID', 'vehicleType', 'runnedTime', 'VelE', 'PosE',
                 'AngEuler', 'AngQuatern', 'MotorRPMS', 'AccB', 'RateB', 'PosGPS'))


def encode_simple_time(r: SOut2SimulatorSimpleTime) -> bytes:
    """112-byte ``SOut2SimulatorSimpleTime`` (SUPPLEMENT §2.2)."""
    values = (r.checksum, r.copter_id, r.vehicle_type, *_n(r.pos_gps_int, 3, 'PosGpsInt'),
              *_n(r.motor_rpm, 8, 'MotorRPMS'), *_n(r.vel_ned, 3, 'VelE'),
              *_n(r.euler, 3, 'AngEuler'), *_n(r.pos_ned, 3, 'PosE'), r.runned_time)
    return pack(_SIMPLE, values, 'SOut2SimulatorSimpleTime',
                ('checksum', 'copterID', 'vehicleType', 'PosGpsInt', 'MotorRPMS', 'VelE',
                 'AngEuler', 'PosE', 'runnedTime'))


def encode_crash_notice(r: CrashNotice) -> bytes:
    """12-byte crash notice; ``target_id`` None is sent as -1."""
    target = -1 if r.target_id is None else r.target_id
    return pack(_CRASH, (r.checksum, r.copter_id, target), 'CrashNotice',
                ('checksum', 'CopterID', 'targetID'))


def encode_gps_origin(r: GpsOrigin) -> bytes:
    """32-byte ``Ue4CMDGPS``."""
    return pack(_GPS_ORIGIN, (r.checksum, r.copter_id, *_n(r.pos_gps, 3, 'GPS')), 'Ue4CMDGPS',
                ('checksum', 'CopterID', 'GPS'))


def encode_out_copter_struct(r: OutCopterStruct) -> bytes:
    """264-byte ``outCopterStruct``."""
    return pack(_OUT_COPTER, (r.checksum, r.copter_id, *_n(r.values, 32, 'values')),
                'outCopterStruct', ('checksum', 'CopterID', 'values'))


_ENCODERS = {
    SOut2Simulator: encode_sout2simulator,
    NetDataShortLegacy: encode_netdatashort_legacy,
    NetDataShortDoc: encode_netdatashort_doc,
    SOut2SimulatorSimpleTime: encode_simple_time,
    CrashNotice: encode_crash_notice,
    GpsOrigin: encode_gps_origin,
    OutCopterStruct: encode_out_copter_struct,
}


def encode(record: FormRecord) -> bytes:
    """Any wire-form record → its datagram."""
    try:
        encoder = _ENCODERS[type(record)]
    except KeyError:
        raise CodecError('RflySim truth', f'no wire form for {type(record).__name__}; '
                         'use encode_truth for a TruthState') from None
    return encoder(record)


def truth_to_form(state: TruthState, form: str) -> FormRecord:
    """A :class:`TruthState` as the record of ``form`` (one of :data:`TRUTH_FORMS`)."""
    if form == FORM_SOUT2SIMULATOR:
        return SOut2Simulator.from_truth(state)
    if form == FORM_NETDATASHORT_LEGACY:
        return NetDataShortLegacy.from_truth(state)
    if form == FORM_NETDATASHORT_DOC:
        return NetDataShortDoc.from_truth(state)
    if form == FORM_SIMPLE_TIME:
        return SOut2SimulatorSimpleTime.from_truth(state)
    raise CodecError('RflySim truth', f'unknown form {form!r}; one of {", ".join(TRUTH_FORMS)}',
                     field='form')


def encode_truth(state: TruthState, form: Optional[str] = None) -> bytes:
    """A :class:`TruthState` as a datagram of ``form`` (default: the state's own form).

    Fields a form lacks are dropped; fields a form needs but the state lacks are filled
    (quaternion from Euler Z-Y-X, zero body acceleration and rates)."""
    return encode(truth_to_form(state, form or state.form))


# --- helpers ----------------------------------------------------------------------------------

def _n(values, n: int, name: str) -> tuple:
    values = tuple(values)
    if len(values) != n:
        raise CodecError('RflySim truth', f'{len(values)} values, the wire has {n}', field=name)
    return values


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


__all__ = [
    'GPS_ORDERS',
    'TRUTH_BASE_PORT', 'TRUTH_FORMS', 'FORM_SOUT2SIMULATOR', 'FORM_NETDATASHORT_LEGACY',
    'FORM_NETDATASHORT_DOC', 'FORM_SIMPLE_TIME', 'KNOWN_SIZES',
    'CHECKSUM_SOUT2SIMULATOR', 'CHECKSUM_SIMPLE_TIME', 'CHECKSUM_SMALL',
    'TruthState', 'SOut2Simulator', 'NetDataShortLegacy', 'NetDataShortDoc',
    'SOut2SimulatorSimpleTime', 'CrashNotice', 'GpsOrigin', 'OutCopterStruct',
    'truth_port', 'decode', 'decode_form', 'encode', 'encode_truth', 'truth_to_form',
    'encode_sout2simulator', 'encode_netdatashort_legacy', 'encode_netdatashort_doc',
    'encode_simple_time', 'encode_crash_notice', 'encode_gps_origin',
    'encode_out_copter_struct',
]
