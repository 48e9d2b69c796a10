"""CARLA recorder: `carla_log info` on a generated one-hour, 100-actor recording next to a
plain read of the file (target ≤ 5×), and `to-bag` as a multiple of real time and MB/s
(target ≥ 100× real time).  Figures printed, nothing asserted.

to-bag runs on the first ``--bag-minutes`` of the same scene (default 1) to keep the run short
on a shared 2-core machine; its rate is per recorded second, so it scales to the hour.
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


def scene(seconds: float, rate: float) -> Scene:
    # 100 actors: 80 vehicles, 15 walkers, 5 traffic lights (+ spectator and collision sensor)
    return Scene(seconds=seconds, rate=rate, vehicles=80, walkers=15, traffic_lights=5)


def plain_read(path: Path) -> float:
    t0 = time.perf_counter()
    with open(path, 'rb', buffering=0) as f:
        while f.read(8 << 20):
            pass
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, default=3600.0)
    ap.add_argument('--rate', type=float, default=20.0, help='recorded frames per second')
    ap.add_argument('--bag-minutes', type=float, default=1.0)
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
        t0 = time.perf_counter()
        rec = open_recording(str(path))
        t_index = time.perf_counter() - t0
        out = io.StringIO()
        for line in info_lines(rec):
            out.write(line)
        t_info = time.perf_counter() - t0
        print(f'plain read of the file          {t_read:7.3f} s  ({size / 1e6 / t_read:7.0f} MB/s)')
        print(f'carla_log info (index + events) {t_info:7.3f} s  = {t_info / t_read:5.1f}× the '
              f'read (target ≤ 5×); of it the frame index {t_index:.3f} s')
        del rec

        bag_seconds = min(a.bag_minutes * 60.0, a.seconds)
        short = tmp / 'short.log'
        with open(short, 'wb') as f:
            short_size = write(f, scene(bag_seconds, a.rate))
        from ros_sim_bridge.carla.ros.to_bag import to_bag
        rec = open_recording(str(short))
        t0 = time.perf_counter()
        counts = to_bag(rec, str(tmp / 'bag'), progress=False)
        t_bag = time.perf_counter() - t0
        bag_bytes = sum(p.stat().st_size for p in (tmp / 'bag').iterdir())
        print(f'carla_log to-bag of {bag_seconds / 60:.0f} min ({short_size / 1e6:.1f} MB .log, '
              f'{sum(counts.values())} messages, {bag_bytes / 1e6:.1f} MB bag): {t_bag:.1f} s = '
              f'{bag_seconds / t_bag:.1f}× real time (target ≥ 100×), '
              f'{short_size / 1e6 / t_bag:.2f} MB/s of .log, {bag_bytes / 1e6 / t_bag:.2f} MB/s '
              f'of bag')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    os.environ.setdefault('ROS_DISTRO', 'kilted')
    sys.exit(main())
