"""Encoding: records → datagrams of their wire form (SUPPLEMENT §2.2)."""
from __future__ import annotations

from typing import Optional

from ros_sim_bridge.core.binary import CodecError, pack

from .layout import (CRASH, DOC, FORM_NETDATASHORT_DOC, FORM_NETDATASHORT_LEGACY,
                     FORM_SIMPLE_TIME, FORM_SOUT2SIMULATOR, GPS_ORIGIN, LEGACY, OUT_COPTER,
                     SIMPLE, SOUT, TRUTH_FORMS)
from .records import (CrashNotice, FormRecord, GpsOrigin, NetDataShortDoc, NetDataShortLegacy,
                      OutCopterStruct, SOut2Simulator, SOut2SimulatorSimpleTime, TruthState)


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
    return pack(SOUT, _sout_values(r), 'SOut2Simulator', _SOUT_FIELDS)


def encode_netdatashort_doc(r: NetDataShortDoc) -> bytes:
    """200-byte netDataShort with a full SOut2Simulator payload (the document's form)."""
    return pack(DOC, (r.tg, r.length, *_sout_values(r.sout)), 'netDataShort(SOut2Simulator)',
                ('tg', 'len') + _SOUT_FIELDS)


def encode_netdatashort_legacy(r: NetDataShortLegacy) -> bytes:
    """200-byte legacy netDataShort (``len`` 152, payload ``2i1d27f3d``; SUPPLEMENT §2.2)."""
    values = (r.tg, r.length, r.copter_id, r.vehicle_type, r.runned_time,
              *_n(r.vel_ned, 3, 'VelE'), *_n(r.pos_ned, 3, 'PosE'), *_n(r.euler, 3, 'AngEuler'),
              *_n(r.quat_wxyz, 4, 'AngQuatern'), *_n(r.motor_rpm, 8, 'MotorRPMS'),
              *_n(r.acc_frd, 3, 'AccB'), *_n(r.rate_frd, 3, 'RateB'),
              *_n(r.pos_gps, 3, 'PosGPS'))
    return pack(LEGACY, values, 'netDataShort(legacy)',
                ('tg', 'len', 'copterID', 'vehicleType', 'runnedTime', 'VelE', 'PosE',
                 'AngEuler', 'AngQuatern', 'MotorRPMS', 'AccB', 'RateB', 'PosGPS'))


def encode_simple_time(r: SOut2SimulatorSimpleTime) -> bytes:
    """112-byte ``SOut2SimulatorSimpleTime`` (SUPPLEMENT §2.2)."""
    values = (r.checksum, r.copter_id, r.vehicle_type, *_n(r.pos_gps_int, 3, 'PosGpsInt'),
              *_n(r.motor_rpm, 8, 'MotorRPMS'), *_n(r.vel_ned, 3, 'VelE'),
              *_n(r.euler, 3, 'AngEuler'), *_n(r.pos_ned, 3, 'PosE'), r.runned_time)
    return pack(SIMPLE, values, 'SOut2SimulatorSimpleTime',
                ('checksum', 'copterID', 'vehicleType', 'PosGpsInt', 'MotorRPMS', 'VelE',
                 'AngEuler', 'PosE', 'runnedTime'))


def encode_crash_notice(r: CrashNotice) -> bytes:
    """12-byte crash notice; ``target_id`` None is sent as -1."""
    target = -1 if r.target_id is None else r.target_id
    return pack(CRASH, (r.checksum, r.copter_id, target), 'CrashNotice',
                ('checksum', 'CopterID', 'targetID'))


def encode_gps_origin(r: GpsOrigin) -> bytes:
    """32-byte ``Ue4CMDGPS``."""
    return pack(GPS_ORIGIN, (r.checksum, r.copter_id, *_n(r.pos_gps, 3, 'GPS')), 'Ue4CMDGPS',
                ('checksum', 'CopterID', 'GPS'))


def encode_out_copter_struct(r: OutCopterStruct) -> bytes:
    """264-byte ``outCopterStruct``."""
    return pack(OUT_COPTER, (r.checksum, r.copter_id, *_n(r.values, 32, 'values')),
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



def _n(values, n: int, name: str) -> tuple:
    values = tuple(values)
    if len(values) != n:
        raise CodecError('RflySim truth', f'{len(values)} values, the wire has {n}', field=name)
    return values
