"""The 0x2205 point kernel (``ibeo/codec/ecu_points.c`` through ``scan_ecu.KERNEL``): µs per
60,000 points (1.68 MB) from the wire's big-endian layout to host order, on 50 distinct
buffers in turn (so they come from memory, as the scans of a recording do), next to:

* copy — ``np.copyto`` of the same bytes into the same outputs: the floor;
* numpy — the fallback where the kernel is missing (``host_points(native=False)``, which also
  allocates its output).

Medians of the rounds (each round: every buffer once), with the load average: the machine is
shared.  Nothing is asserted.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

from ros_sim_bridge.ibeo.codec import scan_ecu

POINTS = 60_000
BUFFERS = 50
ROUNDS = 15


def main() -> int:
    if scan_ecu.KERNEL is None:
        print('no compiled kernel here (not built, or a big-endian host)')
        return 1
    rng = np.random.default_rng(1)
    wires = [np.frombuffer(rng.integers(0, 256, 28 * POINTS, np.uint8).tobytes(),
                           scan_ecu.WIRE_POINT_DTYPE) for _ in range(BUFFERS)]
    outs = [np.empty(POINTS, scan_ecu.POINT_DTYPE) for _ in range(BUFFERS)]
    pairs = list(zip(wires, outs))

    def kernel():
        for wire, out in pairs:
            scan_ecu.KERNEL(wire.ctypes.data, POINTS, out.ctypes.data)

    def copy():
        for wire, out in pairs:
            np.copyto(out.view(np.uint8), wire.view(np.uint8))

    def numpy_path():
        for wire in wires:
            scan_ecu.host_points(wire, native=False)

    runs = {kernel: [], copy: [], numpy_path: []}
    for _ in range(ROUNDS):
        for fn, times in runs.items():
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) / BUFFERS * 1e6)
    floor = statistics.median(runs[copy])
    print(f'0x2205 points to host order: {POINTS:,} points ({28 * POINTS / 1e6:.2f} MB), '
          f'{BUFFERS} buffers, load average {os.getloadavg()[0]:.1f}')
    for fn, times in runs.items():
        median = statistics.median(times)
        print(f'  {fn.__name__:<11} {median:7.1f} µs   {median / floor:4.2f}× copy   '
              f'min {min(times):.1f} µs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
