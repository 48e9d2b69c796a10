"""The offline commands as users meet them: each installed executable timed as a whole process
(start-up included), the median of RUNS runs, next to its floor measured in the same run:

* ``ibeo_idc to-bag`` of a scan-heavy ``.idc`` (6 scanners, one 0x2205 of 60,000 points per
  frame at 12.5 Hz, frames alternating vehicle and scanner coordinates, about 210 MB) against a
  ``cp`` of the file (read + write: the floor of any conversion); its start-up is the same
  command on a 2-frame file, the size-dependent part the difference;
* ``ibeo_idc info`` of the same files against a plain read of the big one;
* ``carla_log info`` of a generated one-hour, 100-actor CARLA recording against a plain read,
  its start-up the same command on a one-second recording of the scene, and ``carla_log
  to-bag`` of the hour against a ``cp`` of the bag it wrote (``--carla-seconds`` shortens the
  recording, 0 leaves CARLA out);
* the interpreter's own start-up (``python3 -c pass``), the floor of every start-up.

Targets (issue 26): to-bag ≤ 5× the copy (size-dependent part ≤ 3×), start-up ≤ 0.3 s for
to-bag and ≤ 0.1 s for info; carla_log info ≤ 5× the read, to-bag ≤ 3× the bag's copy.  Run
inside the sourced install (``scripts/with-venv.sh``); the files live in a temporary folder
under /tmp, removed at the end.  Printed, nothing asserted.
"""
from __future__ import annotations

import argparse
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


def read_time(path: Path) -> float:
    t = time.perf_counter()
    with open(path, 'rb', buffering=0) as f:
        while f.read(8 << 20):
            pass
    return time.perf_counter() - t


def carla(work: Path, seconds: float, runs: int) -> None:
    from ros_sim_bridge.carla.emulator.scene import Scene
    from ros_sim_bridge.carla.emulator.writer import write
    log_cmd = executable('carla_log')
    log, second = work / 'hour.log', work / 'second.log'
    for path, length in ((log, seconds), (second, 1.0)):
        with open(path, 'wb') as f:
            write(f, Scene(seconds=length, rate=20.0, vehicles=80, walkers=15, traffic_lights=5))
    size = log.stat().st_size
    read_time(log)
    t = {k: [] for k in ('read', 'info', 'info start-up', 'to-bag', 'cp of the bag')}
    for _ in range(runs):              # first: a bag's writing pushes the .log out of the cache
        t['read'].append(read_time(log))
        t['info'].append(wall(log_cmd, 'info', log))
        t['info start-up'].append(wall(log_cmd, 'info', second))
    for _ in range(runs):
        shutil.rmtree(work / 'cbag', ignore_errors=True)
        t['to-bag'].append(wall(log_cmd, 'to-bag', log, work / 'cbag'))
        shutil.rmtree(work / 'cbag_copy', ignore_errors=True)
        t['cp of the bag'].append(wall('cp', '-r', work / 'cbag', work / 'cbag_copy'))
        shutil.rmtree(work / 'cbag_copy')
    bag = sum(p.stat().st_size for p in (work / 'cbag').iterdir())
    med = {k: statistics.median(v) for k, v in t.items()}
    print(f'CARLA {seconds / 3600:.2f} h recording, 100 actors: {size / 1e6:.0f} MB .log, '
          f'{bag / 1e6:.0f} MB bag; medians of {runs}')
    for k, v in t.items():
        print(f'  {k:<16} {med[k]:7.3f} s   runs: ' + ' '.join(f'{x:.3f}' for x in v))
    print(f'  carla_log info = {med["info"] / med["read"]:.1f}× the read (target ≤ 5×), start-up '
          f'{med["info start-up"]:.3f} s; to-bag = {med["to-bag"] / med["cp of the bag"]:.1f}× '
          'the bag\'s cp (≤ 3×)')


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--carla-seconds', type=float, default=3600.0)
    ap.add_argument('--skip-idc', action='store_true')
    a = ap.parse_args(argv)
    idc = executable('ibeo_idc')
    work = Path(tempfile.mkdtemp(prefix='bench_commands_', dir='/tmp'))
    python = [wall(sys.executable, '-c', 'pass') for _ in range(RUNS)]
    print(f'python3 -c pass (the floor of any start-up): {statistics.median(python):.3f} s, '
          f'median of {RUNS}')
    try:
        if a.carla_seconds > 0:
            carla(work, a.carla_seconds, RUNS)
        if a.skip_idc:
            return 0
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
              f'size-dependent part {part:.1f}× (≤ 3×), start-up {med["to-bag start-up"]:.3f} s '
              f'(≤ 0.3 s); info = {med["info"] / med["read"]:.1f}× the read, start-up '
              f'{med["info start-up"]:.3f} s (≤ 0.1 s)')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
