"""The wire's units and their factors to SI (the units rule: docs/development.md, "Units rule").

The codec decodes every field in the unit the spec's table names for it (morai-sim-udp.txt:
km/h, deg, deg/s); ``morai/ros/conversions.py`` applies :data:`TO_SI` on the way to ROS and
:data:`FROM_SI` on the way back.  The table lives here, ROS-free, so an offline tool reading
MORAI captures converts with the same factors.
"""
from __future__ import annotations

import math

KMH_PER_MPS = 3.6
MPS_PER_KMH = 1.0 / KMH_PER_MPS
DEG = math.pi / 180.0          # rad per deg
RAD = 180.0 / math.pi          # deg per rad

#: Wire unit → SI factor per field name, shared by every simulator → client message (the codec's
#: names are the messages' names).  A field not listed is already SI or unitless.  The tyre values
#: of ego200/ego216 have no documented unit and are passed through.
TO_SI = {
    'signed_velocity': MPS_PER_KMH, 'velocity': MPS_PER_KMH,
    'velocity_x': MPS_PER_KMH, 'velocity_y': MPS_PER_KMH, 'velocity_z': MPS_PER_KMH,
    'roll': DEG, 'pitch': DEG, 'heading': DEG, 'steer': DEG, 'rear_steer': DEG,
    'angular_velocity_x': DEG, 'angular_velocity_y': DEG, 'angular_velocity_z': DEG,
}
#: The inverse factors (SI → wire unit), exact constants rather than 1 / TO_SI.
FROM_SI = {name: (KMH_PER_MPS if factor == MPS_PER_KMH else RAD) for name, factor in TO_SI.items()}
#: Wire unit of every converted field, for texts.
WIRE_UNITS = {**{n: 'km/h' for n in TO_SI if 'velocity' in n and not n.startswith('angular')},
              **{n: 'deg' for n in ('roll', 'pitch', 'heading', 'steer', 'rear_steer')},
              **{n: 'deg/s' for n in TO_SI if n.startswith('angular')}}
