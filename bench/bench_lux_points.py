"""The LUX point kernel alone (``ibeo/ros/lux_cloud.c`` through ``lux_native``): µs per call on
a 60,000-point 4-layer scan as ``bench_ibeo_cdr.lux_scan`` makes it (angles sorted descending
-1920..1600 ticks of 11520, ~17 points a tick), each path this CPU has (``lux_native.PATHS``)
and ``KERNEL`` (the widest), next to the floor measured in the same run: a copy of the 1.44 MB
cloud, ``bytes(bytearray(cloud))`` as in bench_ibeo_cdr.  ``--tilt``: with the 8-layer
mirror-side table; ``--random``: angles in random order (blocks spanning many ticks).

Medians of the rounds (each round: every function once), with the load average: the machine
is shared.  Nothing is asserted.  glibc is told to keep freed memory (``mallopt``): otherwise
it may hand the copy's 1.44 MB back after each call and page-fault it in at the next (~20×
the copy of warm memory, which is what bench_ibeo_cdr's process sees).
"""
from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time

import numpy as np

from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo.ros import lux_native
from ros_sim_bridge.ibeo.ros.conversions import CLOUD_DTYPE

POINTS = 60_000
ROUNDS = 400


def wire_scan(n: int, random_order: bool) -> np.ndarray:
    rng = np.random.default_rng(n)
    w = np.zeros(n, S.WIRE_POINT_DTYPE)
    w['layer_echo'] = rng.integers(0, 4, n) | rng.integers(0, 3, n) << 4
    w['flags'] = rng.choice([0, 0, 0, 1, 2, 4, 8], n)
    ticks = np.sort(rng.integers(-1920, 1600, n))[::-1]
    w['angle'] = rng.permutation(ticks) if random_order else ticks
    w['distance'] = rng.integers(50, 20000, n)
    w['echo_width'] = rng.integers(10, 400, n)
    return w


def keep_freed_memory() -> None:
    """glibc: big blocks from the heap, and the heap not trimmed (M_MMAP_THRESHOLD,
    M_TRIM_THRESHOLD of malloc.h); nothing elsewhere."""
    mallopt = getattr(ctypes.CDLL(None), 'mallopt', None)
    if mallopt is not None:
        mallopt(-3, 1 << 26)
        mallopt(-1, 1 << 28)


def main() -> int:
    keep_freed_memory()
    if lux_native.KERNEL is None:
        print('no compiled kernel here (not built, or a big-endian host)')
        return 1
    wire = wire_scan(POINTS, '--random' in sys.argv)
    ticks = lux_native.tick_table(11520)
    tilt = lux_native.tilt_table(11520, 1, 0.03, False) if '--tilt' in sys.argv else None
    layers = lux_native.layer_table(np.radians([-1.2, -0.4, 0.4, 1.2]))
    out = np.zeros(POINTS, CLOUD_DTYPE)
    args = (wire.ctypes.data, POINTS, out.ctypes.data, ticks.ctypes.data,
            None if tilt is None else tilt.ctypes.data, layers.ctypes.data,
            2 * np.pi / 11520, 0.01, 0)
    runs = {}
    for path in lux_native.PATHS:
        kernel = lux_native.kernel_on(path)
        if kernel is not None:
            runs[path] = (lambda kernel=kernel: kernel(*args))
    runs['KERNEL'] = lambda: lux_native.KERNEL(*args)
    cloud = bytes(out.view(np.uint8))
    runs['copy'] = lambda: bytes(bytearray(cloud))
    times = {name: [] for name in runs}
    for _ in range(ROUNDS):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1e6)
    floor = statistics.median(times['copy'])
    print(f'LUX points to cloud points: {POINTS:,} points ({len(cloud) / 1e6:.2f} MB cloud), '
          f'tilt {tilt is not None}, {"random" if "--random" in sys.argv else "sorted"} angles, '
          f'{ROUNDS} rounds, load average {os.getloadavg()[0]:.1f}')
    for name, t in times.items():
        median = statistics.median(t)
        print(f'  {name:<8} {median:7.1f} µs   {median / floor:5.2f}× copy   min {min(t):.1f} µs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
