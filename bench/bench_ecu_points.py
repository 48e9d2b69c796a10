"""The 0x2205 point kernel alone (``ibeo/codec/ecu_points.c`` through ``scan_ecu``): µs per call
on 60,000 points (1.68 MB) as ``bench_ibeo_cdr.ecu_scan`` makes them (x, y, z finite), from the
wire's big-endian layout to host order, each path this CPU has (``scan_ecu.PATHS``) and
``KERNEL`` (the widest), next to the floor measured in the same run:

* memmove — ``ctypes.memmove`` of the same bytes to the same output (a plain memcpy);
* copyto — ``np.copyto`` of the same bytes;
* numpy — the fallback where the kernel is missing (``host_points(native=False)``, which also
  allocates its output).

The wire starts 28 bytes and the output 4 bytes past a 64-byte boundary, as in the node (the
points of a message's body, and inside the PointCloud2 message's bytes); ``--aligned``: both on
a 64-byte boundary.  One scan, warm in the caches as the node's is; ``--from-memory``: 50 scans
in turn, so that they come from memory.

Medians of the rounds (each round: every function once, in a new random order: what ran just
before changes a call's time by up to 10 %; 400 rounds, 20 with --from-memory),
with the load average: the machine is shared.  Nothing is asserted.  glibc is told to keep
freed memory (``bench_lux_points.keep_freed_memory``).
"""
from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time

import numpy as np

from bench_lux_points import keep_freed_memory
from ros_sim_bridge.ibeo.codec import scan_ecu

POINTS = 60_000


def wire_points(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = np.zeros(POINTS, scan_ecu.POINT_DTYPE)
    p['x'], p['y'], p['z'] = rng.normal(0, 20, (3, POINTS))
    p['device_id'] = rng.integers(10, 13, POINTS)
    p['layer'] = rng.integers(0, 4, POINTS)
    return p.astype(scan_ecu.WIRE_POINT_DTYPE)


def placed(nbytes: int, past_64: int) -> np.ndarray:
    """nbytes of a new buffer starting past_64 bytes after a 64-byte boundary."""
    raw = np.zeros(nbytes + 128, np.uint8)
    start = -raw.ctypes.data % 64 + past_64
    return raw[start:start + nbytes]


def main() -> int:
    keep_freed_memory()
    if scan_ecu.KERNEL is None:
        print('no compiled kernel here (not built, or a big-endian host)')
        return 1
    aligned, from_memory = '--aligned' in sys.argv, '--from-memory' in sys.argv
    size = 28 * POINTS
    pairs = []
    for k in range(50 if from_memory else 1):
        wire, out = placed(size, 0 if aligned else 28), placed(size, 0 if aligned else 4)
        wire[:] = wire_points(k).view(np.uint8)
        pairs.append((wire, out, wire.ctypes.data, out.ctypes.data))

    def each(call):
        return lambda: [call(w, o, wa, oa) for w, o, wa, oa in pairs]

    runs = {}
    for path in scan_ecu.PATHS:
        kernel = scan_ecu.kernel_on(path)
        if kernel is not None:
            runs[path] = each(lambda w, o, wa, oa, kernel=kernel: kernel(wa, POINTS, oa))
    runs['KERNEL'] = each(lambda w, o, wa, oa: scan_ecu.KERNEL(wa, POINTS, oa))
    runs['memmove'] = each(lambda w, o, wa, oa: ctypes.memmove(oa, wa, size))
    runs['copyto'] = each(lambda w, o, wa, oa: np.copyto(o, w))
    runs['numpy'] = each(lambda w, o, wa, oa: scan_ecu.host_points(
        w.view(scan_ecu.WIRE_POINT_DTYPE), native=False))
    rounds = 20 if from_memory else 400
    times = {name: [] for name in runs}
    order = np.random.default_rng(0)
    for _ in range(rounds):
        for name in order.permutation(list(runs)).tolist():
            fn = runs[name]
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) / len(pairs) * 1e6)
    floor = statistics.median(times['memmove'])
    print(f'0x2205 points to host order: {POINTS:,} points ({size / 1e6:.2f} MB), '
          f'{"aligned" if aligned else "wire/output at 28/4 past 64 bytes"}, '
          f'{"50 scans from memory" if from_memory else "one scan, warm"}, {rounds} rounds, '
          f'load average {os.getloadavg()[0]:.1f}')
    for name, t in times.items():
        median = statistics.median(t)
        print(f'  {name:<8} {median:7.1f} µs   {median / floor:5.2f}× memmove   '
              f'min {min(t):.1f} µs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
