"""The one report of a damaged region of a recording, for every source's resync (CARLA
``.log`` packets, Ibeo ``.idc`` messages): where reading stopped making sense, how many bytes
were skipped, why, and where it went on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Damage:
    """``skipped`` bytes from ``offset`` that hold nothing readable (no confirmed message or
    packet); ``reason`` says what was wrong where the damage starts.  ``resumed``: the offset
    reading went on at (None: the damage runs to the end of the file, which is cut there);
    ``frame``: the index of the frame the damage cut short (−1: between frames, or a format
    without frames); ``error``: the decoder's error, when there is one."""
    offset: int
    skipped: int
    reason: str
    frame: int = -1
    resumed: Optional[int] = None
    error: Optional[Exception] = field(compare=False, repr=False, default=None)

    @property
    def end(self) -> int:
        return self.offset + self.skipped
