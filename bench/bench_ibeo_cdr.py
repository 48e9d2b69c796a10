"""The ibeo node's share of its messages (issue #27): bytes in → the node's handling (framing,
decoding, the one CDR conversion, ``publish(bytes)``) on the real node with real rclpy
publishers, next to the floor measured in the same run: ``publish(bytes)`` of the same
messages already serialised (same sizes, same count, same publishers).  The node's share is
its time minus the floor; printed beside it: the framing alone (``core/framer.py``), and the
share without it (conversion and the rest of the handling).  Each read completes one message
and holds the next one's header (messages back to back, as a sensor sends them): the framer
frames it without searching its body; the framing of a read that ends with its message (whose
body is searched for a false sync) is printed in the note.

* LUX 0x2202 scan of 60,000 points (4 layers): the points are built inside the published
  message's bytes; share compared with a copy of the scan message's bytes and of the cloud's
  (target: share ≤ 2× a copy of its bytes: the cloud's, the bytes the node must write; the
  0.6 MB scan message is less than half of them).  A copy is ``bytes(bytearray(b))``, its
  source warm in the caches.
* ECU 0x2205 scan of 60,000 points (3 scanners, vehicle frame).
* LUX 0x2221 and ECU 0x2280 object lists of 1,000 objects (8 contour points each; the LUX
  caps raised to 1,000): object list + MarkerArray (target: ≤ 1 ms in the node).

Medians of 200 calls of each, measured in ten alternating blocks of 20 (node, floor, framing,
copies: a slow spell of the shared machine falls on all of them); nothing is asserted.
"""
from __future__ import annotations

import sys
import time

from ros_sim_bridge.tools.ports import BENCH_DOMAINS  # noqa: E402
from ros_sim_bridge.tools.session import keep_dds_local  # noqa: E402

keep_dds_local(BENCH_DOMAINS)

import numpy as np  # noqa: E402

from ros_sim_bridge.ibeo.codec import objects as O  # noqa: E402
from ros_sim_bridge.ibeo.codec import objects_ecu as oe  # noqa: E402
from ros_sim_bridge.ibeo.codec import registry  # noqa: E402
from ros_sim_bridge.ibeo.codec import scan as S  # noqa: E402
from ros_sim_bridge.ibeo.codec import scan_ecu as se  # noqa: E402
from ros_sim_bridge.ibeo.codec.framing import make_framer  # noqa: E402
from ros_sim_bridge.ibeo.codec.header import HEADER_SIZE, encode_message  # noqa: E402
from bench_lux import block_medians  # noqa: E402  (the timing of the LUX bench)

N_POINTS, N_OBJECTS, CONTOUR = 60_000, 1_000, 8
NTP = (3_960_000_000 << 32)


def lux_scan(n: int) -> bytes:
    rng = np.random.default_rng(n)
    p = np.zeros(n, S.POINT_DTYPE)
    p['layer'] = rng.integers(0, 4, n)
    p['echo'] = rng.integers(0, 3, n)
    p['flags'] = rng.choice([0, 0, 0, 1, 2, 4, 8], n)
    p['angle_ticks'] = np.sort(rng.integers(-1920, 1600, n))[::-1]
    p['distance_cm'] = rng.integers(50, 20000, n)
    p['echo_width_cm'] = rng.integers(10, 400, n)
    scan = S.LuxScan(1, 0x030B, 0, NTP, NTP + 343597384, 11520, 1600, -1920, points=p)
    return encode_message(registry.SCAN, S.encode_scan(scan), ntp=NTP)


def ecu_scan(n: int) -> bytes:
    rng = np.random.default_rng(n)
    infos = se.make_scanners(3)
    infos['device_id'] = [10, 11, 12]
    p = np.zeros(n, se.POINT_DTYPE)
    p['x'], p['y'], p['z'] = rng.normal(0, 20, (3, n))
    p['device_id'] = rng.integers(10, 13, n)
    p['layer'] = rng.integers(0, 4, n)
    return registry.encode_record_message(
        se.EcuScan(NTP, 40_000, se.SCAN_FLAG_VEHICLE_COORDINATES, 1, infos, p), ntp=NTP)


def lux_objects(n: int) -> bytes:
    o = O.make_objects(n)
    o['id'] = np.arange(n)
    o['box_center_x'] = (np.arange(n) % 1000) * 10.0          # the spec's units: cm
    o['box_size_x'], o['box_size_y'], o['classification'] = 400, 180, np.arange(n) % 7
    o['abs_velocity_x'] = 100
    contour = np.tile(np.arange(CONTOUR, dtype=np.float64)[:, None] * 10, (1, 2))
    return encode_message(registry.OBJECTS, O.encode_objects(O.LuxObjectList(
        NTP, o, [contour] * n)), ntp=NTP)


def ecu_objects(n: int) -> bytes:
    o = oe.make_objects(n, oe.OBJECTS_2280)
    o['id'] = np.arange(n) + 1
    o['box_center_x'], o['box_center_y'] = np.arange(n) * 0.1, 1.0
    o['box_size_x'], o['box_size_y'], o['course_angle'] = 4.0, 2.0, 0.1
    o['classification'] = np.arange(n) % 7
    contour = np.tile(np.arange(CONTOUR, dtype=np.float32)[:, None], (1, 2))
    return registry.encode_record_message(oe.EcuObjectList2280(NTP, o, [contour] * n),
                                          ntp=NTP)


class Publishes:
    """Wraps the node's publishers: the bytes each publish of one handled message carried, in
    order, with the publisher (the floor publishes the same again)."""

    def __init__(self, node):
        self.sent: list = []
        self.node = node

    def __enter__(self):
        self.saved = []
        for pub in list(self.node.publishers):
            publish = pub.publish
            self.saved.append((pub, publish))

            def wrapped(msg, pub=pub, publish=publish):
                self.sent.append((publish, msg))
                publish(msg)
            pub.publish = wrapped
        return self

    def __exit__(self, *exc):
        for pub, publish in self.saved:
            pub.publish = publish


def main() -> int:
    import rclpy
    from rclpy.parameter import Parameter

    from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode

    rclpy.init()
    with __import__('socket').socket() as s:
        s.bind(('127.0.0.1', 0))
        dead_port = s.getsockname()[1]
    node = IbeoLuxNode(parameter_overrides=[
        Parameter('port', value=dead_port), Parameter('layers', value=4),
        Parameter('start_measure_on_connect', value=False), Parameter('min_backoff', value=5.0),
        Parameter('max_objects', value=N_OBJECTS), Parameter('stamp_source', value='sensor')])
    subs = []
    print('ibeo node: bytes in → the one CDR conversion → publish(bytes), on the node with its '
          'rclpy publishers; floor: publish(bytes) of the same messages already serialised '
          '(same run, medians)')
    print(f'  {"workload":<38} {"node ms":>8} {"floor ms":>9} {"share ms":>9} '
          f'{"framing ms":>10} {"rest ms":>8}  note')
    try:
        for label, msg, repeat in (
                (f'LUX scan, {N_POINTS:,} points', lux_scan(N_POINTS), 200),
                (f'ECU 0x2205 scan, {N_POINTS:,} points', ecu_scan(N_POINTS), 200),
                (f'LUX object list, {N_OBJECTS:,} objects', lux_objects(N_OBJECTS), 200),
                (f'ECU 0x2280 object list, {N_OBJECTS:,} objects', ecu_objects(N_OBJECTS), 200)):
            framer = node.session.framer                # the node's own (its body decoder)
            framer.reset()
            framer.feed(msg[:HEADER_SIZE])
            # each read completes a message and holds the next one's header (the messages
            # back to back, as a sensor sends them): the framer's common case
            read = msg[HEADER_SIZE:] + msg[:HEADER_SIZE]

            def handle():
                now = time.time_ns()
                for event in framer.feed(read):
                    node.data.on_event(event, now)
            handle()                                    # publishers made, templates cached
            for pub in node.publishers:                 # one subscriber each: data goes out
                if pub.topic_name not in {s.topic_name for s in subs} and \
                        pub.topic_name != '/rosout':
                    subs.append(node.create_subscription(pub.msg_type, pub.topic_name,
                                                         lambda m: None, 10, raw=True))
            time.sleep(0.5)                             # discovery
            with Publishes(node) as p:
                handle()
            sent = [(publish, bytes(m) if isinstance(m, (bytes, bytearray)) else m)
                    for publish, m in p.sent]

            def floor():
                for publish, m in sent:
                    publish(m)
            for _ in range(5):
                handle()
                floor()
            framing_only = make_framer()
            framing_only.check_body = framer.check_body
            framing_only.feed(msg[:HEADER_SIZE])
            alone = make_framer()             # a read that ends with the message: its body
            alone.check_body = framer.check_body                              # is searched
            wire = bytes(msg)
            cloud = bytes(max(len(m) for _, m in sent))
            copies = [lambda: bytes(bytearray(wire)), lambda: bytes(bytearray(cloud))]
            t_node, t_floor, t_frame, t_alone, *t_copies = block_medians(
                [handle, floor, lambda: framing_only.feed(read), lambda: alone.feed(msg),
                 *(copies if 'scan' in label else [])], repeat)
            share = t_node - t_floor
            rest = share - t_frame
            sizes = [len(m) for _, m in sent if isinstance(m, bytes)]
            note = (f'{len(sent)} message(s), {sum(sizes) / 1e6:.2f} MB; framing of a read '
                    f'that ends with the message {t_alone * 1e3:.3f} ms')
            if t_copies:
                t_copy_wire, t_copy_cloud = t_copies
                biggest = len(cloud)
                note += (f'; share = {share / t_copy_wire:.2f}× a copy of the scan message '
                         f'({len(wire) / 1e6:.2f} MB: {t_copy_wire * 1e3:.3f} ms), '
                         f'{share / t_copy_cloud:.2f}× a copy of the cloud '
                         f'({biggest / 1e6:.2f} MB: {t_copy_cloud * 1e3:.3f} ms), without '
                         f'the framing {rest / t_copy_cloud:.2f}× the cloud copy; target ≤ 2×')
            else:
                note += f'; target ≤ 1 ms: {"met" if share <= 1e-3 else "not met"}'
            print(f'  {label:<38} {t_node * 1e3:>8.3f} {t_floor * 1e3:>9.3f} '
                  f'{share * 1e3:>9.3f} {t_frame * 1e3:>10.3f} {rest * 1e3:>8.3f}  {note}',
                  flush=True)
        for stats in node.stats.values():
            assert stats.error_count == 0, stats.name
    finally:
        node.close()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
