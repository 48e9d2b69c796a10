"""The offline commands as users meet them: each installed executable timed as a whole process
(start-up included), the median of RUNS runs, next to its floor measured in the same run:

* ``ibeo_idc to-bag`` of a scan-heavy ``.idc`` (6 scanners, one 0x2205 of 60,000 points per
  frame at 12.5 Hz, frames alternating vehicle and scanner coordinates, about 210 MB) against a
  ``cp`` of the file (read + write: the floor of any conversion); its start-up is the same
  command on a 2-frame file, the size-dependent part the difference;
* ``ibeo_idc info`` of the same files against a plain read of the big one.

Targets (issue 26): to-bag ≤ 5× the copy (size-dependent part ≤ 3×), start-up ≤ 0.3 s for
to-bag and ≤ 0.1 s for info.  Run inside the sourced install (``scripts/with-venv.sh``); the
files live in a temporary folder under /tmp, removed at the end.  Printed, nothing asserted.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 5
SECONDS, SCANNERS, POINTS = 10.0, 6, 60_000


def executable(name: str) -> str:
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        path = Path(prefix) / 'lib' / 'ros_sim_bridge' / name
        if path.is_file():
            return str(path)
    sys.exit(f'{name}: not installed (source the install, or run through scripts/with-venv.sh)')


def wall(*cmd) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> int:
    idc = executable('ibeo_idc')
    work = Path(tempfile.mkdtemp(prefix='bench_commands_', dir='/tmp'))
    try:
        big, tiny = work / 'drive.idc', work / 'tiny.idc'
        for path, seconds in ((big, SECONDS), (tiny, 0.16)):
            subprocess.run([idc, 'make-demo', path, '--seconds', str(seconds), '--scanners',
                            str(SCANNERS), '--points', str(POINTS), '--coordinates', 'both'],
                           check=True, stdout=subprocess.DEVNULL)
        size = big.stat().st_size

        def read():
            t = time.perf_counter()
            with open(big, 'rb', buffering=0) as f:
                while f.read(8 << 20):
                    pass
            return time.perf_counter() - t

        def fresh(name: str) -> Path:
            out = work / name
            shutil.rmtree(out, ignore_errors=True)
            if out.with_suffix('.idc').exists():
                out.with_suffix('.idc').unlink()
            return out

        read()                                       # page cache warm
        runs: dict = {k: [] for k in ('cp', 'read', 'to-bag', 'to-bag start-up', 'info',
                                      'info start-up')}
        for _ in range(RUNS):                        # interleaved: the same load for each
            runs['cp'].append(wall('cp', big, fresh('copy').with_suffix('.idc')))
            runs['read'].append(read())
            runs['to-bag'].append(wall(idc, 'to-bag', big, fresh('bag')))
            runs['to-bag start-up'].append(wall(idc, 'to-bag', tiny, fresh('tiny_bag')))
            runs['info'].append(wall(idc, 'info', big))
            runs['info start-up'].append(wall(idc, 'info', tiny))
        med = {k: statistics.median(v) for k, v in runs.items()}
        print(f'{size / 1e6:.0f} MB .idc ({SCANNERS} scanners, 0x2205 at {POINTS:,} points, '
              f'vehicle and scanner coordinates), medians of {RUNS}, load average '
              f'{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores')
        for k, v in runs.items():
            print(f'  {k:<16} {med[k]:7.3f} s   runs: ' + ' '.join(f'{x:.3f}' for x in v))
        part = (med['to-bag'] - med['to-bag start-up']) / med['cp']
        print(f'  to-bag = {med["to-bag"] / med["cp"]:.1f}× the cp (target ≤ 5×), its '
              f'size-dependent part {part:.1f}× (≤ 3×), start-up {med["to-bag start-up"]:.2f} s '
              f'(≤ 0.3 s); info = {med["info"] / med["read"]:.1f}× the read, start-up '
              f'{med["info start-up"]:.2f} s (≤ 0.1 s)')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
