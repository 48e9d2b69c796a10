"""Conversions from decoded records to ROS conventions (REP-103 frames, stamps, PointCloud2)."""
