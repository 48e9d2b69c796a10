"""The CARLA recorder's units (SUPPLEMENT §5.4) and their factors to REP-103 SI.

The codec keeps every value as recorded: Unreal's left-handed frame (X forward, Y right, Z up),
locations and bounding boxes in cm, rotations in degrees (roll, pitch, yaw), Kinematics linear
velocity in m/s and angular velocity in deg/s on Unreal's axes.  :mod:`ros_sim_bridge.carla.world`
applies these factors (``ue_to_rep103`` and its inverse) on the way to ROS: y flipped, and the
pitch and yaw senses with it (ENU/FLU is right-handed).
"""
from __future__ import annotations

import numpy as np

CM = 0.01                                  # m per cm
#: Unreal (cm, X fwd, Y right, Z up) → REP-103 (m, x fwd, y left, z up)
LOCATION_TO_SI = np.array([CM, -CM, CM])
LOCATION_FROM_SI = np.array([100.0, -100.0, 100.0])
#: signs of (roll, pitch, yaw) Unreal → REP-103 (after deg → rad)
ROTATION_SIGNS = np.array([1.0, -1.0, -1.0])
#: Kinematics linear velocity (m/s, Unreal axes) → REP-103 axes
LINEAR_SIGNS = np.array([1.0, -1.0, 1.0])
