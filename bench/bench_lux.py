"""ibeo LUX scans: bytes → published sensor_msgs/PointCloud2, points per second.

Three ways through the same bytes (one 0x2202 message with 10,000 and with 60,000 points,
4 layers, up to 3 echoes), each ending in ``publish`` on a real rclpy publisher:

* driver — the ibeo_lux node's points path with its own objects: Ibeo framer → header →
  ``decode_scan_wire`` → the node's CloudBuilder (the compiled kernel of src/lux_cloud.c where
  it is installed, x/y/z + fields) writing the points inside the bytes of the PointCloud2's CDR
  (``CloudCdr``) → ``publish(bytes)`` on the node's ``points`` publisher.  Printed beside it: the same with the builder's numpy path (the
  fallback), and the whole node (``data.on_event``: plus LuxScanInfo and the diagnostics counters);
* loop — the naive driver: one ``struct.unpack_from`` per point, math.cos/sin, packing the same
  24-byte points, then the same PointCloud2 and publish;
* copy — the floor: the message's bytes copied into a PointCloud2 unchanged and published
  (no decoding at all).  The bare ``bytes`` copy is printed too, for scale.

Targets (issue): driver ≥ 50× the loop, and within 10× of the copy.  The figures are
medians of repeated runs in this process; nothing is asserted.

Then object lists (issue #10 defect 7: a legal 0x2221 of 65,535 objects held the receive
thread 16–19 s): framing + decoding, and the node's handling (caps, LuxObjectList, markers,
publish) of the largest legal lists, in ms and ms per 1,000 objects in the message (target:
a few ms per 1,000), with the default caps (``max_objects`` 256, ``max_contour_points`` 64).
"""
from __future__ import annotations

import array
import math
import statistics
import struct
import sys
import time

from ros_sim_bridge.tools.ports import BENCH_DOMAINS  # noqa: E402
from ros_sim_bridge.tools.session import keep_dds_local  # noqa: E402

keep_dds_local(BENCH_DOMAINS)

import numpy as np  # noqa: E402

from ros_sim_bridge.ibeo.codec import scan as S  # noqa: E402
from ros_sim_bridge.ibeo.codec.framing import make_framer  # noqa: E402
from ros_sim_bridge.ibeo.codec.header import encode_message  # noqa: E402
from ros_sim_bridge.ibeo.codec import registry  # noqa: E402

SIZES = (10_000, 60_000)


def scan_message(n: int) -> bytes:
    rng = np.random.default_rng(n)
    p = np.zeros(n, S.POINT_DTYPE)
    p['layer'] = rng.integers(0, 4, n)
    p['echo'] = rng.integers(0, 3, n)
    p['flags'] = rng.choice([0, 0, 0, 1, 2, 4, 8], n) | 0x40
    p['angle_ticks'] = np.sort(rng.integers(-1920, 1600, n))[::-1]
    p['distance_cm'] = rng.integers(50, 20000, n)
    p['echo_width_cm'] = rng.integers(10, 400, n)
    scan = S.LuxScan(1, 0x030B, 0, 1 << 32, (1 << 32) + 343597384, 11520, 1600, -1920,
                     points=p)
    return encode_message(registry.SCAN, S.encode_scan(scan))


# --- the naive loop ---------------------------------------------------------------------------

_HEAD = struct.Struct('<HHHQQHhhHhhhhhhH')
_POINT = struct.Struct('<BBhHHH')
_OUT = struct.Struct('<5f3Bx')
_ELEV = [math.radians(e) for e in S.DEFAULT_LAYER_ELEVATIONS_DEG]


def loop_cloud(msg: bytes, header_cls, cloud_cls, fields):
    body = msg[24:]
    head = _HEAD.unpack_from(body, 0)
    ticks, count = head[5], head[8]
    k = 2.0 * math.pi / ticks
    out = bytearray(24 * count)
    for i in range(count):
        le, fl, a, d, w, _ = _POINT.unpack_from(body, 44 + 10 * i)
        layer, echo = le & 0x0F, le >> 4
        h = a * k
        r = d * 0.01
        e = _ELEV[layer] if layer < len(_ELEV) else float('nan')
        rc = r * math.cos(e)
        _OUT.pack_into(out, 24 * i, rc * math.cos(h), rc * math.sin(h), r * math.sin(e), h,
                       w * 0.01, layer, echo, fl & 0x0F)
    m = cloud_cls()
    m.header = header_cls(frame_id='laser')
    m.height, m.width = 1, count
    m.fields = fields
    m.point_step, m.row_step = 24, 24 * count
    m.data = array.array('B', out)
    m.is_dense = True
    return m


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def block_medians(fns, repeat: int, blocks: int = 10) -> list:
    """The median time of each of ``fns``, ``repeat`` calls each, measured in ``blocks``
    rounds of consecutive calls of one function after another: a slow spell of a shared
    machine falls on all of them, and each call still follows a call of its own kind."""
    times: list = [[] for _ in fns]
    for _ in range(blocks):
        for fn, out in zip(fns, times):
            for _ in range(max(1, repeat // blocks)):
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def main() -> int:
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import PointCloud2
    from std_msgs.msg import Header

    from ros_sim_bridge.ibeo.ros.conversions import CLOUD_DTYPE, CloudBuilder
    from ros_sim_bridge.ros.pointcloud import point_fields
    from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode

    rclpy.init()
    # The driver node itself, its TCP client pointed at a closed port: the bench feeds bytes.
    with __import__('socket').socket() as s:
        s.bind(('127.0.0.1', 0))
        dead_port = s.getsockname()[1]
    node = IbeoLuxNode(parameter_overrides=[Parameter('port', value=dead_port),
                                            Parameter('layers', value=4),
                                            Parameter('start_measure_on_connect', value=False),
                                            Parameter('min_backoff', value=5.0)])
    pub = node.create_publisher(PointCloud2, 'bench/loop_points', 10)
    floor_pub = node.create_publisher(PointCloud2, 'bench/copy_points', 10)
    fields = point_fields(CLOUD_DTYPE)
    kernel = 'C kernel' if node.data.builder.native else 'numpy: no kernel installed'
    numpy_builder = CloudBuilder(native=False)
    print('ibeo LUX 0x2202 scan → published PointCloud2 (in-process, real rclpy publishers, '
          'median of repeated runs)')
    print(f'  {"points":>7} {"path":<34} {"ms/scan":>9} {"Mpoints/s":>10}')
    results = {}
    try:
        for n in SIZES:
            msg = scan_message(n)
            framer = make_framer()

            def node_path():
                now = time.time_ns()
                for event in framer.feed(msg):
                    node.data.on_event(event, now)

            def driver(builder=node.data.builder):   # the node's points path: builder, CDR, publisher
                for event in framer.feed(msg):      # the framer decodes header and body once
                    scan, wire = event.record
                    cloud = builder.build_wire(scan, wire, alloc=node.data.cloud_cdr.points)
                    out = node.data.cloud_cdr.message(cloud, (0, 0), is_dense=not builder.nan_points)
                    del cloud
                    node.pubs.points.publish(out)

            def driver_numpy():
                driver(numpy_builder)

            def loop():
                pub.publish(loop_cloud(msg, Header, PointCloud2, fields))

            def copy():
                m = PointCloud2()
                m.header = Header(frame_id='laser')
                m.height, m.width, m.point_step = 1, n, 10
                m.row_step = 10 * n
                m.data = array.array('B', msg[68:])
                floor_pub.publish(m)

            for _ in range(5):
                driver()
                driver_numpy()
                node_path()
            t_driver = median_time(driver, 40 if n <= 10_000 else 25)
            t_numpy = median_time(driver_numpy, 40 if n <= 10_000 else 25)
            t_node = median_time(node_path, 40 if n <= 10_000 else 25)
            t_loop = median_time(loop, 5 if n <= 10_000 else 3)
            copy()
            t_copy = median_time(copy, 40)
            t_bytes = median_time(lambda: bytes(bytearray(msg)), 40)
            results[n] = (t_driver, t_loop, t_copy)
            for label, t in ((f'driver points path ({kernel})', t_driver),
                             ('driver, numpy builder', t_numpy),
                             ('whole node (+ scan_info, counters)', t_node),
                             ('loop (struct.unpack per point)', t_loop),
                             ('copy (bytes into PointCloud2)', t_copy),
                             ('bare bytes copy (no message)', t_bytes)):
                print(f'  {n:>7} {label:<34} {t * 1e3:>9.3f} {n / t / 1e6:>10.2f}', flush=True)
            scans = node.stats[registry.SCAN]
            assert scans.error_count == 0
        print('\nratios (targets: ≥ 50× the loop; within 10× of the copy):')
        for n, (t_driver, t_loop, t_copy) in results.items():
            speedup, vs_copy = t_loop / t_driver, t_driver / t_copy
            print(f'  {n:>7} points: {speedup:6.1f}× the loop '
                  f'({"meets" if speedup >= 50 else "below"} 50×), '
                  f'{vs_copy:5.1f}× the copy ({"within" if vs_copy <= 10 else "outside"} 10×)')
        bench_objects(node)
    finally:
        node.close()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def object_message(n: int, points: int) -> bytes:
    from ros_sim_bridge.ibeo.codec import objects as O
    o = O.make_objects(n)
    o['id'] = np.arange(n) % 65536
    o['box_center_x'] = (np.arange(n) % 1000) * 10.0          # the spec's units: cm
    o['box_size_x'], o['box_size_y'], o['classification'] = 400, 180, 5
    contour = np.tile(np.arange(points, dtype=np.float64)[:, None] % 30000, (1, 2))
    return encode_message(registry.OBJECTS, O.encode_objects(O.LuxObjectList(0, o,
                                                                           [contour] * n)))


def bench_objects(node) -> None:
    caps = node.data.object_caps
    print(f'\nibeo LUX 0x2221 object list → LuxObjectList + MarkerArray (caps: max_objects '
          f'{caps.max_objects}, max_contour_points {caps.max_contour_points})')
    print(f'  {"objects":>7} {"points/obj":>10} {"frame+decode ms":>16} {"node ms":>9} '
          f'{"total ms":>9} {"ms/1000 obj":>12}')
    for n, points in ((65_535, 1), (15, 65_534), (256, 34), (20, 34)):
        msg = object_message(n, points)
        framer = make_framer()
        events = []

        def frame():
            events[:] = framer.feed(msg)

        def handle():
            for event in events:
                node.data.on_event(event, time.time_ns())

        frame()
        handle()
        repeat = 3 if n * points > 100_000 else 15
        t_frame = median_time(frame, repeat)
        t_node = median_time(handle, repeat)
        total = t_frame + t_node
        print(f'  {n:>7} {points:>10} {t_frame * 1e3:>16.1f} {t_node * 1e3:>9.1f} '
              f'{total * 1e3:>9.1f} {total * 1e3 / (n / 1000):>12.2f}', flush=True)


if __name__ == '__main__':
    sys.exit(main())
