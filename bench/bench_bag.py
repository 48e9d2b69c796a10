"""The shared rosbag2 writer (:class:`~ros_sim_bridge.ros.bag.BagWriter`): MB/s and messages/s for
big messages (point clouds: 1.7 MB) and small ones (200 B: TF, odometry, markers), next to a plain
file write of the same bytes in the same run, and rosbags' own rosbag2 MCAP ``Writer`` (what
``BagWriter`` wrapped before it wrote the MCAP itself) for reference.

* plain — ``f.write(data)`` per message into one buffered file: the floor for these bytes;
* BagWriter — the same messages into a new rosbag2 folder (chunks, indexes, summary,
  ``metadata.yaml``), ``close`` included;
* rosbags — ``rosbags.rosbag2.Writer`` with the MCAP plugin, same messages (one run).

Files go to the temporary folder (page cache; nothing is synced).  Medians of a few runs;
nothing asserted (speed targets live here, not in tests).
"""
from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ros_sim_bridge.ros.bag import BagWriter, typestore

CASES = (  # name, messages, bytes each, topics, type
    ('big', 500, 1_700_000, 6, 'sensor_msgs/msg/PointCloud2'),
    ('small', 200_000, 200, 8, 'tf2_msgs/msg/TFMessage'),
)
RUNS = 3
PERIOD_NS = 1_000_000


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix='bench_bag_'))
    store = typestore()
    seq = [0]

    def fresh(name):
        seq[0] += 1
        return work / f'{name}{seq[0]}'

    try:
        for name, count, size, n_topics, msgtype in CASES:
            data = np.random.default_rng(1).integers(0, 256, size, np.uint8).tobytes()
            topics = [f'/{name}{k}' for k in range(n_topics)]
            total = count * size

            def plain():
                out = fresh('plain')
                with open(out, 'wb') as f:
                    for _ in range(count):
                        f.write(data)
                out.unlink()

            def bag_writer():
                out = fresh('bag')
                with BagWriter(out, store=store) as w:
                    for i in range(count):
                        w.write(topics[i % n_topics], i * PERIOD_NS, data, msgtype)
                shutil.rmtree(out)

            def rosbags_writer():
                from rosbags.rosbag2 import StoragePlugin, Writer
                out = fresh('rosbags')
                with Writer(out, version=9, storage_plugin=StoragePlugin.MCAP) as w:
                    conns = [w.add_connection(t, msgtype, typestore=store) for t in topics]
                    for i in range(count):
                        w.write(conns[i % n_topics], i * PERIOD_NS, data)
                shutil.rmtree(out)

            plain()                                            # warm up
            rows = [('plain', statistics.median(timed(plain) for _ in range(RUNS))),
                    ('BagWriter', statistics.median(timed(bag_writer) for _ in range(RUNS))),
                    ('rosbags', timed(rosbags_writer))]
            print(f'{name}: {count:,} messages of {size:,} B on {n_topics} topics '
                  f'({total / 1e6:,.0f} MB)')
            base = rows[0][1]
            for label, t in rows:
                print(f'  {label:<10} {t * 1e3:9.1f} ms  {total / 1e6 / t:8.1f} MB/s  '
                      f'{count / t:10,.0f} msgs/s  {t / base:6.1f}× plain')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
