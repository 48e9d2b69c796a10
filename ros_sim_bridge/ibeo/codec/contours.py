"""The contours of a decoded object list (LUX 0x2221 §4, ECU 0x2225 / 0x2280 §10-11): every
object's contour points in one array, in the order of the objects."""
from __future__ import annotations

from collections import abc
from typing import Optional

import numpy as np


class Contours(abc.Sequence):
    """All points in one (total, 2) array (the list's unit: LUX cm, ECU m) and each object's
    point count: ``contours[i]`` is object i's (k, 2) view, made on access, so that a list of
    65,535 objects costs no per-object work until an object's contour is read.  Slicing gives
    a list of views."""

    def __init__(self, points: np.ndarray, counts: np.ndarray):
        self.points = points
        self.counts = np.asarray(counts, np.int64)
        self._bounds: Optional[list] = None

    def __len__(self) -> int:
        return len(self.counts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError('contour index out of range')
        if self._bounds is None:
            self._bounds = np.concatenate([[0], np.cumsum(self.counts)]).tolist()
        return self.points[self._bounds[i]:self._bounds[i + 1]]

    def head(self, keep: int) -> 'Contours':
        """The contours of the first ``keep`` objects (views of the same points)."""
        if keep >= len(self):
            return self
        counts = self.counts[:max(keep, 0)]
        return Contours(self.points[:int(counts.sum())], counts)

    def capped(self, keep: int, limit: int) -> tuple:
        """(the contours of the first ``keep`` objects, each cut to its first ``limit``
        points; how many points were cut), in the one array."""
        kept = self.head(keep)
        counts = kept.counts
        over = np.maximum(counts - limit, 0)
        dropped = int(over.sum())
        if not dropped:
            return kept, 0
        rank = np.arange(len(kept.points)) - np.repeat(np.cumsum(counts) - counts, counts)
        return Contours(kept.points[rank < limit], counts - over), dropped

    def __eq__(self, other) -> bool:
        """Equal to any sequence of the same contours (e.g. a list of (k, 2) arrays)."""
        if not isinstance(other, (abc.Sequence, np.ndarray)) or len(other) != len(self):
            return NotImplemented if not isinstance(other, abc.Sequence) else False
        return all(np.array_equal(a, np.asarray(b)) for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f'Contours({len(self)} objects, {len(self.points)} points)'
