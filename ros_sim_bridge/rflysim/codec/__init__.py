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

Modules, one concept each: :mod:`.layout` (checksums, lengths, form names, the precompiled
wire layouts), :mod:`.units` (PosGPS units, scale and order), :mod:`.records` (the typed
records), :mod:`.ports` (CopterID → truth port), :mod:`.decoding` (length, then checksum
dispatch) and :mod:`.encoding` (records → datagrams).
"""
from .decoding import KNOWN_SIZES, decode, decode_form
from .encoding import (encode, encode_crash_notice, encode_gps_origin, encode_netdatashort_doc,
                       encode_netdatashort_legacy, encode_out_copter_struct,
                       encode_simple_time, encode_sout2simulator, encode_truth, truth_to_form)
from .layout import (CHECKSUM_SIMPLE_TIME, CHECKSUM_SMALL, CHECKSUM_SOUT2SIMULATOR,
                     FORM_NETDATASHORT_DOC, FORM_NETDATASHORT_LEGACY, FORM_SIMPLE_TIME,
                     FORM_SOUT2SIMULATOR, SIZE_CRASH_NOTICE, SIZE_GPS_ORIGIN, SIZE_NETDATASHORT,
                     SIZE_OUT_COPTER, SIZE_SIMPLE_TIME, SIZE_SOUT2SIMULATOR, TRUTH_FORMS)
from .ports import TRUTH_BASE_PORT, truth_port
from .records import (CrashNotice, GpsOrigin, NetDataShortDoc, NetDataShortLegacy,
                      OutCopterStruct, SOut2Simulator, SOut2SimulatorSimpleTime, TruthState)
from .units import GPS_ORDERS

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
