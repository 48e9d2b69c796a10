"""CARLA recorder: `carla_log info` on a generated one-hour, 100-actor recording next to a
plain read of the file (target ≤ 5×; the median of five runs against the best of two reads),
and `to-bag` of the same recording as a multiple of real time and MB/s (target ≥ 100× real
time).  Figures printed, nothing asserted.

to-bag writes the whole hour (about 7.5 GB of bag into a temporary folder, removed at the
end); ``--bag-minutes`` converts only the first minutes of the same scene.  Wall time is the
figure; the process's CPU time and the load average are printed next to it, because the
machine is shared (2 cores) and a loaded run is slower by the load, not by the code.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ros_sim_bridge.carla.cli import info_lines, open_recording
from ros_sim_bridge.carla.generator import Scene, write


INFO_RUNS = 5     # info: the median of five runs (the read: the best of two after a warm-up)


def scene(seconds: float, rate: float) -> Scene:
    # 100 actors: 80 vehicles, 15 walkers, 5 traffic lights (+ spectator and collision sensor)
    return Scene(seconds=seconds, rate=rate, vehicles=80, walkers=15, traffic_lights=5)


def plain_read(path: Path) -> float:
    t0 = time.perf_counter()
    with open(path, 'rb', buffering=0) as f:
        while f.read(8 << 20):
            pass
    return time.perf_counter() - t0


def plain_write(path: Path, size: int) -> tuple:
    """Wall and system seconds to write ``size`` bytes to a new file in 1 MiB writes."""
    block = os.urandom(1 << 20)
    t0, c0 = time.perf_counter(), os.times()
    with open(path, 'wb') as f:
        for _ in range(size >> 20):
            f.write(block)
        f.write(block[:size & ((1 << 20) - 1)])
    t, c1 = time.perf_counter() - t0, os.times()
    path.unlink()
    return t, c1.system - c0.system


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, default=3600.0)
    ap.add_argument('--rate', type=float, default=20.0, help='recorded frames per second')
    ap.add_argument('--bag-minutes', type=float, default=0.0,
                    help='to-bag only this many minutes (0: the whole recording)')
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix='bench_carla_'))
    try:
        path = tmp / 'hour.log'
        t0 = time.perf_counter()
        with open(path, 'wb') as f:
            size = write(f, scene(a.seconds, a.rate))
        t_gen = time.perf_counter() - t0
        frames = int(round(a.seconds * a.rate)) + 1
        print(f'generated {a.seconds / 3600:.2f} h, {frames} frames at {a.rate:g} Hz, 100 '
              f'actors: {size / 1e6:.1f} MB in {t_gen:.1f} s')
        plain_read(path)                      # warm the page cache
        t_read = min(plain_read(path) for _ in range(2))
        runs = []                             # (info, of it the index): a fresh map each
        for _ in range(INFO_RUNS):
            t0 = time.perf_counter()
            rec = open_recording(str(path))
            t_index = time.perf_counter() - t0
            out = io.StringIO()
            for line in info_lines(rec):
                out.write(line)
            runs.append((time.perf_counter() - t0, t_index))
            del rec
        t_info, t_index = sorted(runs)[len(runs) // 2]          # the median run
        print(f'plain read of the file          {t_read:7.3f} s  ({size / 1e6 / t_read:7.0f} MB/s)')
        print(f'carla_log info (index + events) {t_info:7.3f} s  = {t_info / t_read:5.1f}× the '
              f'read (target ≤ 5×); of it the frame index {t_index:.3f} s; median of '
              f'{INFO_RUNS} runs (s): ' + ' '.join(f'{t:.3f}' for t, _ in runs))

        bag_seconds = a.seconds if a.bag_minutes <= 0 else min(a.bag_minutes * 60.0, a.seconds)
        source, source_size = path, size
        if bag_seconds < a.seconds:
            source = tmp / 'short.log'
            with open(source, 'wb') as f:
                source_size = write(f, scene(bag_seconds, a.rate))
        from ros_sim_bridge.carla.ros.to_bag import to_bag
        rec = open_recording(str(source))
        load = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), os.times()
        counts = to_bag(rec, str(tmp / 'bag'), progress=False)
        t_bag, c1 = time.perf_counter() - t0, os.times()
        user, system = c1.user - c0.user, c1.system - c0.system
        c_bag = user + system
        bag_bytes = sum(p.stat().st_size for p in (tmp / 'bag').iterdir())
        print(f'carla_log to-bag of {bag_seconds / 60:.0f} min ({source_size / 1e6:.0f} MB .log, '
              f'{sum(counts.values())} messages, {bag_bytes / 1e6:.0f} MB bag): {t_bag:.1f} s = '
              f'{bag_seconds / t_bag:.0f}× real time (target ≥ 100×), '
              f'{source_size / 1e6 / t_bag:.1f} MB/s of .log, {bag_bytes / 1e6 / t_bag:.0f} MB/s '
              f'of bag, {sum(counts.values()) / t_bag:.0f} msgs/s')
        shutil.rmtree(tmp / 'bag')
        t_write, w_system = plain_write(tmp / 'plain', bag_bytes)
        print(f'  the disk floor: a plain write of the same {bag_bytes / 1e6:.0f} MB (1 MiB '
              f'writes) takes {t_write:.1f} s ({bag_bytes / 1e6 / t_write:.0f} MB/s, system '
              f'{w_system:.1f} s) = {bag_seconds / t_write:.0f}× real time on its own')
        print(f'  process CPU {c_bag:.1f} s = {bag_seconds / c_bag:.0f}× real time (user '
              f'{user:.1f} s, system {system:.1f} s); load average {load:.1f} → '
              f'{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    os.environ.setdefault('ROS_DISTRO', 'kilted')
    sys.exit(main())
