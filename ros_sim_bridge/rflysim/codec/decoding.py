"""Decoding: one datagram → its record, by length, then checksum (SUPPLEMENT §2.2)."""
from __future__ import annotations

from typing import Optional

from ros_sim_bridge.core.binary import (BAD_CHECKSUM, OVERSIZED, TRUNCATED, UNKNOWN_LAYOUT,
                                        WRONG_SOURCE, CodecError)

from .layout import (CHECKSUM_SIMPLE_TIME, CHECKSUM_SMALL, CHECKSUM_SOUT2SIMULATOR, CRASH, DOC,
                     DOC_LENS, GPS_ORIGIN, HEADER_II, LEGACY, LEGACY_LEN, OUT_COPTER, SIMPLE,
                     SIZE_CRASH_NOTICE, SIZE_GPS_ORIGIN, SIZE_NETDATASHORT, SIZE_OUT_COPTER,
                     SIZE_SIMPLE_TIME, SIZE_SOUT2SIMULATOR, SOUT)
from .records import (CrashNotice, FormRecord, GpsOrigin, NetDataShortDoc, NetDataShortLegacy,
                      OutCopterStruct, Record, SOut2Simulator, SOut2SimulatorSimpleTime)


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
    v = SOUT.unpack(data)
    if v[0] != CHECKSUM_SOUT2SIMULATOR:
        raise _bad_checksum('SOut2Simulator', v[0], CHECKSUM_SOUT2SIMULATOR)
    _check_id('SOut2Simulator', v[1], expected, 4)
    return _sout_from(v, 0)


def _decode_netdatashort(data, expected):
    tg, length = HEADER_II.unpack_from(data, 0)
    if length == LEGACY_LEN:
        v = LEGACY.unpack(data)
        _check_id('netDataShort(legacy)', v[2], expected, 8)
        return NetDataShortLegacy(v[0], v[2], v[3], v[4], v[5:8], v[8:11], v[11:14], v[14:18],
                                  v[18:26], v[26:29], v[29:32], v[32:35], v[1])
    if length in DOC_LENS:
        v = DOC.unpack(data)
        if v[2] != CHECKSUM_SOUT2SIMULATOR:
            raise _bad_checksum('netDataShort(SOut2Simulator)', v[2], CHECKSUM_SOUT2SIMULATOR, 8)
        _check_id('netDataShort(SOut2Simulator)', v[3], expected, 12)
        return NetDataShortDoc(tg, length, _sout_from(v, 2))
    raise CodecError('netDataShort', f'200-byte datagram with len {length}: no known layout '
                     f'(legacy len {LEGACY_LEN}, document len 200/168)', field='len', offset=4,
                     kind=UNKNOWN_LAYOUT)


def _decode_simple(data, expected):
    v = SIMPLE.unpack(data)
    if v[0] != CHECKSUM_SIMPLE_TIME:
        raise _bad_checksum('SOut2SimulatorSimpleTime', v[0], CHECKSUM_SIMPLE_TIME)
    _check_id('SOut2SimulatorSimpleTime', v[1], expected, 4)
    return SOut2SimulatorSimpleTime(v[1], v[2], v[3:6], v[6:14], v[14:17], v[17:20], v[20:23],
                                    v[23], v[0])


def _decode_crash(data, expected):
    checksum, copter_id, target = CRASH.unpack(data)
    if checksum != CHECKSUM_SMALL:
        raise _bad_checksum('CrashNotice', checksum, CHECKSUM_SMALL)
    _check_id('CrashNotice', copter_id, expected, 4)
    return CrashNotice(copter_id, target if target >= 0 else None, checksum)


def _decode_gps_origin(data, expected):
    # The GPS origin describes the map, not one vehicle: its CopterID is not checked.
    v = GPS_ORIGIN.unpack(data)
    if v[0] != CHECKSUM_SMALL:
        raise _bad_checksum('Ue4CMDGPS', v[0], CHECKSUM_SMALL)
    return GpsOrigin(v[1], v[2:5], v[0])


def _decode_out_copter(data, expected):
    v = OUT_COPTER.unpack(data)
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
