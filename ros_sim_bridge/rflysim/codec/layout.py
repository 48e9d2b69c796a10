"""RflySim truth wire layouts (SUPPLEMENT §2.2; the document's output table): checksums,
``len`` values, form names and the precompiled structs (one unpack per datagram).
Everything is little-endian."""
from __future__ import annotations

import struct

CHECKSUM_SOUT2SIMULATOR = 123456789     # 168-byte SOut2Simulator (document, SUPPLEMENT §2.2)
CHECKSUM_SIMPLE_TIME = 1234567891       # 112-byte SOut2SimulatorSimpleTime
CHECKSUM_SMALL = 1234567890             # 12-byte crash notice, 32-byte Ue4CMDGPS, 264-byte outCopterStruct

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
SOUT = struct.Struct('<4i24f7d')
# The document's netDataShort carrying a full SOut2Simulator at payload start, 24 bytes unused.
DOC = struct.Struct('<2i4i24f7d24x')
# Legacy netDataShort, 200 B: tg @0, len @4, copterID @8, vehicleType @12, runnedTime d @16,
# VelE 3f @24, PosE 3f @36, AngEuler 3f @48, AngQuatern 4f @60, MotorRPMS 8f @76, AccB 3f @108,
# RateB 3f @120, 4 bytes padding @132, PosGPS 3d @136, bytes 160..199 unused.  (SUPPLEMENT §2.2)
LEGACY = struct.Struct('<2i2id27f4x3d40x')
# SOut2SimulatorSimpleTime, 112 B: checksum, copterID, vehicleType @0..11; PosGpsInt 3i @12
# (lat·1e7, lon·1e7, alt·1e3); MotorRPMS 8f @24; VelE 3f @56; AngEuler 3f @68; PosE 3d @80;
# runnedTime d @104.  (SUPPLEMENT §2.2)
SIMPLE = struct.Struct('<6i14f4d')
CRASH = struct.Struct('<3i')        # checksum, CopterID, target ID
GPS_ORIGIN = struct.Struct('<2i3d')  # checksum, CopterID, GPS origin 3d
OUT_COPTER = struct.Struct('<2i32d')  # checksum, CopterID, 32 doubles
HEADER_II = struct.Struct('<2i')

SIZE_SOUT2SIMULATOR = SOUT.size        # 168
SIZE_NETDATASHORT = LEGACY.size        # 200
SIZE_SIMPLE_TIME = SIMPLE.size         # 112
SIZE_CRASH_NOTICE = CRASH.size         # 12
SIZE_GPS_ORIGIN = GPS_ORIGIN.size      # 32
SIZE_OUT_COPTER = OUT_COPTER.size      # 264
assert (SIZE_SOUT2SIMULATOR, SIZE_NETDATASHORT, DOC.size, SIZE_SIMPLE_TIME, SIZE_CRASH_NOTICE,
        SIZE_GPS_ORIGIN, SIZE_OUT_COPTER) == (168, 200, 200, 112, 12, 32, 264)
