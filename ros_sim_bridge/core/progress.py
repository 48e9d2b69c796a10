"""A progress bar on stderr for a command that works through a file (``ibeo_idc to-bag`` in
bytes, ``carla_log to-bag`` in frames), in the layout users know from tqdm::

    drive.idc:  45%|█████████           | 94.6M/210M [00:00<00:00, 412MB/s]

Standard library only and a few lines (importing tqdm costs 0.025 s of a command's start-up).
Redrawn at most every :attr:`Progress.interval` seconds (``\\r`` on the same line), and once
more at :meth:`Progress.close`, which ends the line where the work stopped.
"""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

_PREFIXES = ('', 'k', 'M', 'G', 'T', 'P', 'E')


def size_text(n: float, suffix: str = '') -> str:
    """``n`` in three significant digits with an SI prefix: 950, 9.87k, 16.8M, 123M."""
    for prefix in _PREFIXES:
        if abs(n) < 999.5:
            digits = 2 if abs(n) < 9.995 else 1 if abs(n) < 99.95 else 0
            return f'{n:.{digits}f}{prefix}{suffix}'
        n /= 1000.0
    return f'{n * 1000.0:.0f}{_PREFIXES[-1]}{suffix}'


def clock_text(seconds: float) -> str:
    """mm:ss (h:mm:ss from an hour on)."""
    s = int(seconds)
    minutes, s = divmod(s, 60)
    hours, minutes = divmod(minutes, 60)
    return f'{hours:d}:{minutes:02d}:{s:02d}' if hours else f'{minutes:02d}:{s:02d}'


class Progress:
    """``unit`` s (bytes: ``B``) done of ``total``, drawn on ``stream`` (stderr) as ``desc:
    pct%|bar| done/total [elapsed<remaining, rate]``."""

    width = 20                  # characters of the bar
    interval = 0.1              # s between two redraws

    def __init__(self, total: int, desc: str = '', stream: Optional[TextIO] = None,
                 unit: str = 'B'):
        self.total, self.desc, self.unit = max(int(total), 0), desc, unit
        self.stream = sys.stderr if stream is None else stream
        self.n = 0
        self._start = self._drawn = time.monotonic()
        self._closed = False
        self._draw(self._start)

    def update(self, n: int) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._drawn >= self.interval:
            self._draw(now)

    def text(self, now: float) -> str:
        elapsed = now - self._start
        frac = min(self.n / self.total, 1.0) if self.total else 1.0
        full = int(frac * self.width)
        rate = self.n / elapsed if elapsed > 0 else 0.0
        left = clock_text((self.total - self.n) / rate) if rate > 0 else '?'
        rate_text = size_text(rate, self.unit + '/s') if rate > 0 else f'?{self.unit}/s'
        head = f'{self.desc}: ' if self.desc else ''
        return (f'{head}{100 * frac:3.0f}%|{"█" * full}{" " * (self.width - full)}| '
                f'{size_text(self.n)}/{size_text(self.total)} '
                f'[{clock_text(elapsed)}<{left}, {rate_text}]')

    def _draw(self, now: float) -> None:
        self._drawn = now
        try:
            self.stream.write('\r' + self.text(now))
            self.stream.flush()
        except (OSError, ValueError):       # stderr closed or gone: no bar, the work goes on
            pass

    def close(self) -> None:
        """The bar as it stands (where the work stopped), and the end of its line."""
        if self._closed:
            return
        self._closed = True
        self._draw(time.monotonic())
        try:
            self.stream.write('\n')
            self.stream.flush()
        except (OSError, ValueError):
            pass
