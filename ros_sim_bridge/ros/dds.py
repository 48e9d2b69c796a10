"""The DDS settings a node executable starts with (before ``rclpy.init``).

:func:`use_packaged_fastdds_profile` points Fast DDS (the default RMW) at the package's
``config/fastdds.xml`` unless the environment already names a profile file or another RMW:
reliable writers then send their heartbeat every 100 ms instead of every 3 s, so a service
reply (or any reliable sample) lost while large streams fill the transport is repaired within
about 0.1 s instead of 0–3 s or more (issue #12, measured with bench/bench_monodrive_links.py).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import MutableMapping, Optional

PROFILE_VARIABLES = ('FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE')
FASTDDS_RMWS = ('', 'rmw_fastrtps_cpp', 'rmw_fastrtps_dynamic_cpp')


def packaged_fastdds_profile() -> Optional[str]:
    """The installed ``share/ros_sim_bridge/config/fastdds.xml`` (else the source tree's)."""
    candidates = []
    try:
        from ament_index_python.packages import get_package_share_directory
        candidates.append(Path(get_package_share_directory('ros_sim_bridge')) / 'config')
    except Exception:          # not installed (tests from the source tree)
        pass
    candidates.append(Path(__file__).resolve().parents[2] / 'config')
    for folder in candidates:
        path = folder / 'fastdds.xml'
        if path.is_file():
            return str(path)
    return None


def use_packaged_fastdds_profile(environ: MutableMapping[str, str] = os.environ
                                 ) -> Optional[str]:
    """Set FASTDDS_DEFAULT_PROFILES_FILE to the packaged profile when the RMW is Fast DDS and
    no profile file is set; the path set, or None (left as the user has it)."""
    if environ.get('RMW_IMPLEMENTATION', '') not in FASTDDS_RMWS:
        return None
    if any(environ.get(v) for v in PROFILE_VARIABLES):
        return None
    path = packaged_fastdds_profile()
    if path is not None:
        environ['FASTDDS_DEFAULT_PROFILES_FILE'] = path
    return path
