"""The RflySim truth's units (SUPPLEMENT §2.2; the units rule: docs/development.md).

The wire is SI already: m, m/s, m/s², rad, rad/s, s; motor speeds in RPM.  Frames stay the
sender's (NED earth, FRD body); ``rflysim/ros/conversions.py`` turns them into ENU/FLU.  The one
scaled field is ``PosGpsInt`` of the 112-byte SimpleTime form, undone in the codec with
:data:`GPS_INT_SCALE`.  ``PosGPS`` is three doubles (deg, deg, m up) in the sender's order,
which SUPPLEMENT §2.2 leaves unverified: :data:`GPS_ORDERS` names the two orders a consumer
may choose from.
"""
from __future__ import annotations

GPS_INT_SCALE = (1e7, 1e7, 1e3)  # SimpleTime PosGpsInt = (lat·1e7, lon·1e7, alt·1e3)
#: Possible orders of PosGPS: name → indices of (lat, lon, alt) in the three values.
GPS_ORDERS = {'lat_lon_alt': (0, 1, 2), 'lon_lat_alt': (1, 0, 2)}
