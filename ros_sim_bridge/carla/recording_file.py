"""A CARLA recorder file opened for reading, and the one-line account of its damage: shared by
``carla_log`` and the ``carla_replayer`` node (ROS-free)."""
from __future__ import annotations

import mmap

from .codec import Recording


def open_recording(path: str, **force) -> Recording:
    """Map ``path`` and index it (the file is read by the page cache, not copied)."""
    with open(path, 'rb') as f:
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty file
            data = b''
    return Recording(data, **force)


def damage_summary(rec: Recording) -> str:
    """One line saying how much damage was skipped ('' for an undamaged file)."""
    if not rec.damage:
        return ''
    regions = len(rec.damage)
    where = ', '.join(str(d.offset) for d in rec.damage[:5]) + (' …' if regions > 5 else '')
    return (f'{regions} damaged region{"s" if regions > 1 else ""}, {rec.skipped_bytes} B '
            f'skipped (at byte {where}); {len(rec)} frames readable before and after')
