"""monoDrive's units and their factors to SI (SUPPLEMENT §4.4, §5.4).

The codec decodes fields in the unit the simulator sends: Unreal centimetres for positions,
box centres and extents, velocities (cm/s), radar and ultrasonic ranges and depth-camera
pixels; degrees for sensor rotations and the camera's field of view; the lidar's Velodyne
packets in distance and azimuth steps.  ``monodrive/ros/conversions.py`` applies these
factors on the way to ROS (axes: Unreal's left-handed X forward, Y right, Z up to REP-103
there too).
"""
from __future__ import annotations

CM = 0.01                       # m per cm (also m/s per cm/s)
LIDAR_DISTANCE_M = 0.002        # m per lidar distance step
LIDAR_AZIMUTH_DEG = 0.01        # degrees per lidar azimuth step
