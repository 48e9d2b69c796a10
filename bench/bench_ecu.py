"""Ibeo ECU fused scans live: one 0x2205 message → the ibeo_ecu node's published messages.

The message: one 0x2205 of the emulator's ECU mode (``EcuScene``: 4 scanners, 10,000 and
60,000 points, scan in vehicle coordinates).  Paths, each ending in ``publish`` on real rclpy
publishers in this process:

* node — the whole ibeo_ecu node path: Ibeo framer (header and body decoded once) →
  ``data.on_event`` → session → ``IbeoToRos`` (the converter of ``ibeo_idc to-bag``) →
  PointCloud2 + IbeoScanInfo published, diagnostics counters;
* decode — framing and decoding alone (no ROS message);
* handling — the node without the framing: ``data.on_event`` on the already framed message
  (convert, publish, counters);
* copy — the floor: the message's point bytes copied into a PointCloud2 unchanged and
  published (no decoding at all).

Target: the node within 10× of the copy (as the LUX driver).  Medians of repeated runs;
nothing is asserted.
"""
from __future__ import annotations

import array
import statistics
import sys
import time

from ros_sim_bridge.tools.ports import BENCH_DOMAINS  # noqa: E402
from ros_sim_bridge.tools.session import keep_dds_local  # noqa: E402

keep_dds_local(BENCH_DOMAINS)

from ros_sim_bridge.ibeo.codec.framing import make_framer  # noqa: E402
from ros_sim_bridge.ibeo.codec.header import encode_message  # noqa: E402
from ros_sim_bridge.ibeo.emulator.scene import EcuScene  # noqa: E402

SIZES = (10_000, 60_000)


def scan_message(points: int) -> bytes:
    first = EcuScene(12.5, scanners=4, points=points).step()[0]
    assert first.data_type == 0x2205
    return encode_message(first.data_type, first.body, device_id=1, ntp=first.ntp)


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import PointCloud2
    from std_msgs.msg import Header

    from ros_sim_bridge.ibeo.ros.ecu_node import IbeoEcuNode

    rclpy.init()
    with __import__('socket').socket() as s:          # the node's TCP client: a closed port
        s.bind(('127.0.0.1', 0))
        dead_port = s.getsockname()[1]
    node = IbeoEcuNode(parameter_overrides=[Parameter('port', value=dead_port),
                                            Parameter('min_backoff', value=5.0)])
    floor_pub = node.create_publisher(PointCloud2, 'bench/copy_points', 10)
    print('Ibeo ECU 0x2205 scan → published messages (in-process, real rclpy publishers, '
          'median of repeated runs)')
    print(f'  {"points":>7} {"path":<40} {"ms/scan":>9} {"Mpoints/s":>10}')
    try:
        for n in SIZES:
            msg = scan_message(n)
            framer = make_framer()

            def node_path():
                now = time.time_ns()
                for event in framer.feed(msg):
                    node.data.on_event(event, now)

            def decode():
                for event in make_framer().feed(msg):
                    assert event.record is not None

            (framed,) = make_framer().feed(msg)

            def handling():
                node.data.on_event(framed, time.time_ns())

            def copy():
                m = PointCloud2()
                m.header = Header(frame_id='base_link')
                m.height, m.width, m.point_step = 1, n, 28
                m.row_step = 28 * n
                m.data = array.array('B', msg[-28 * n:])
                floor_pub.publish(m)

            for _ in range(3):
                node_path()
                copy()
            repeat = 30 if n <= 10_000 else 15
            t_node, t_decode, t_handle, t_copy = (median_time(f, repeat) for f in (
                node_path, decode, handling, copy))
            for label, t in (('ibeo_ecu node (decode, convert, publish)', t_node),
                             ('framing + decoding only', t_decode),
                             ('node handling only (convert, publish)', t_handle),
                             ('copy (bytes into PointCloud2)', t_copy)):
                print(f'  {n:>7} {label:<40} {t * 1e3:>9.3f} {n / t / 1e6:>10.2f}',
                      flush=True)
            ratio = t_node / t_copy
            print(f'  {n:>7} node = {ratio:.1f}× the copy '
                  f'({"within" if ratio <= 10 else "outside"} the 10× target)')
            assert node.stats[0x2205].error_count == 0
    finally:
        node.close()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
