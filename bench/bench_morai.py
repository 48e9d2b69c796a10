"""MORAI bridge: decode cost per datagram vs a plain struct.unpack, the datagram rate one
morai_bridge process sustains with zero loss for Ego Status + Object Info together, and the
arrival → publish latency at 100 Hz, next to the floor: a loop of ``publish(bytes)`` of the
same five messages per pair, already serialised (issue #27).

The node runs as its installed executable (own process, as in production) with
stamp_source=receive; this process plays pre-rendered newest-release datagrams (Ego Status
ego200, 229 B; Object Info obj106_ts, 2160 B, 20 objects) on 127.0.0.1.  Loss is read from the
node's own /diagnostics (datagrams received vs sent, kernel drops, messages published), so a
slow listener here cannot hide or fake a loss.  Latency comes from the node's diagnostics too
(receive time → just before publish, and → after the last publish returned), plus the time to
this process's subscriber (header stamp = receive time vs the subscriber's clock).
"""
from __future__ import annotations

import socket
import struct
import sys
import time

import numpy as np

from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.emulator.scene import MoraiScene
from ros_sim_bridge.tools.ports import BENCH_DOMAINS, free_udp_ports
from ros_sim_bridge.tools.session import background_node, keep_dds_local

TYPES = ('ego_status', 'object_info')
PUBLISHED_PER_DATAGRAM = {'ego_status': 3, 'object_info': 2}   # status+odom+tf, list+markers
SECONDS = 4.0
RATES = (100, 500, 1000, 1500, 2000, 2500, 3000, 4000)
MAX_DRAIN = 0.5   # s
LATENCY_SECONDS = 4.0


def render(count: int) -> dict[str, list[bytes]]:
    scene = MoraiScene('newest')
    out = {n: [] for n in TYPES}
    for _ in range(count):
        scene.step(0.01)
        sec, nsec = scene.sim_time()
        out['ego_status'].append(morai.encode_ego_status(scene.ego_status(), layout='ego200'))
        out['object_info'].append(morai.encode_object_info(
            scene.nearest_objects(), 'obj106_ts', sec, nsec))
    return out


def decode_cost(n: int = 20_000) -> None:
    from ros_sim_bridge.morai.ros import conversions as convert
    from builtin_interfaces.msg import Time
    packets = render(200)
    ego_raw = struct.Struct('<iibbfi24f38s12f')   # the ego200 payload, 200 B
    obj_raw = struct.Struct('<hh16f38s')
    stamp = Time(sec=1, nanosec=0)
    ego_cdr, obj_cdr = convert.EgoCdr('map', 'base_link'), convert.ObjectsCdr('map')

    def timed(fn, data):
        t0 = time.perf_counter()
        for k in range(n):
            fn(data[k % len(data)])
        return (time.perf_counter() - t0) / n * 1e6

    ego, obj = packets['ego_status'], packets['object_info']
    rows = [
        ('Ego Status 229 B', [
            ('plain struct.unpack_from (one struct)', timed(lambda d: ego_raw.unpack_from(d, 27),
                                                            ego)),
            ('codec decode_ego_status', timed(morai.decode_ego_status, ego)),
            ('decode + CDR of status + Odometry + TF', timed(
                lambda d: (lambda st, pose: (ego_cdr.status(st, stamp),
                                             ego_cdr.odometry(st, stamp, pose),
                                             ego_cdr.transform(stamp, pose)))(
                    *(lambda st: (st, convert.ego_pose(st)))(morai.decode_ego_status(d))),
                ego)),
        ]),
        ('Object Info 2160 B', [
            ('plain struct.unpack_from × 20 records', timed(
                lambda d: [obj_raw.unpack_from(d, 38 + 106 * i) for i in range(20)], obj)),
            ('codec decode_object_info (numpy)', timed(morai.decode_object_info, obj)),
            ('decode + CDR of MoraiObjectStatusList + MarkerArray', timed(
                lambda d: (lambda info: (obj_cdr.object_list(info, stamp),
                                         obj_cdr.markers(info, stamp)))(
                    morai.decode_object_info(d)), obj)),
        ]),
    ]
    print(f'decode cost per datagram (µs, mean of {n}):')
    for title, entries in rows:
        base = entries[0][1]
        print(f'  {title}')
        for label, t in entries:
            print(f'    {label:48} {t:8.2f}  ({t / base:5.1f}× the plain unpack)')


def floor(node, packets, n: int = 2000) -> float:
    """Datagrams/s (both types, one CPU) that publish(bytes) of the node's five messages per
    pair allows: the node's own bytes for one pair, same types, sizes and counts."""
    from nav_msgs.msg import Odometry
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray
    from builtin_interfaces.msg import Time
    from ros_sim_bridge.msg import MoraiEgoVehicleStatus, MoraiObjectStatusList
    from ros_sim_bridge.morai.ros import conversions as convert
    stamp = Time(sec=1, nanosec=0)
    st = morai.decode_ego_status(packets['ego_status'][0])
    info = morai.decode_object_info(packets['object_info'][0])
    ego, obj, pose = convert.EgoCdr('map', 'base_link'), convert.ObjectsCdr('map'), \
        convert.ego_pose(st)
    pairs = [(node.create_publisher(t, f'bench_floor/m{k}', 10), data) for k, (t, data) in
             enumerate([(MoraiEgoVehicleStatus, ego.status(st, stamp)),
                        (Odometry, ego.odometry(st, stamp, pose)),
                        (TFMessage, ego.transform(stamp, pose)),
                        (MoraiObjectStatusList, obj.object_list(info, stamp)),
                        (MarkerArray, obj.markers(info, stamp))])]
    t0 = time.perf_counter()
    for _ in range(n):
        for pub, data in pairs:
            pub.publish(data)
    per_pair = (time.perf_counter() - t0) / n
    for pub, _ in pairs:
        node.destroy_publisher(pub)
    print(f'\nfloor: publish(bytes) of one pair\'s 5 messages ({len(info.present())} objects, '
          f'{sum(len(d) for _, d in pairs)} B): {per_pair * 1e6:.1f} µs '
          f'→ {2 / per_pair:.0f} datagrams/s on one CPU')
    return per_pair


class DiagnosticsReader:
    def __init__(self, node):
        from diagnostic_msgs.msg import DiagnosticArray
        self.latest: dict[str, dict[str, str]] = {}
        self.sub = node.create_subscription(DiagnosticArray, '/diagnostics', self._on, 50)

    def _on(self, msg) -> None:
        for st in msg.status:
            for name in TYPES:
                if st.name.startswith(f'morai_bridge: {name} (udp '):
                    self.latest[name] = {kv.key: kv.value for kv in st.values}

    def ints(self, name: str, key: str) -> int:
        return int(self.latest.get(name, {}).get(key, '0'))


class StampProbe:
    """Subscriber-side delay: its receive time minus the header stamp (= datagram arrival)."""

    def __init__(self, node):
        from nav_msgs.msg import Odometry
        from ros_sim_bridge.msg import MoraiObjectStatusList
        self.delays: list[int] = []
        self.subs = [node.create_subscription(t, topic, self._on, 1000) for t, topic in (
            (Odometry, 'morai/odom'), (MoraiObjectStatusList, 'morai/objects'))]

    def _on(self, msg) -> None:
        s = msg.header.stamp
        self.delays.append(time.time_ns() - (s.sec * 1_000_000_000 + s.nanosec))


def send_paced(sock, ports: dict, packets: dict, rate: float, seconds: float) -> tuple:
    """Both types at ``rate`` datagrams/s each; returns (sent per type, seconds taken)."""
    n = int(rate * seconds)
    period = 1.0 / rate
    sent = {name: 0 for name in TYPES}
    ego, obj = packets['ego_status'], packets['object_info']
    dest_e, dest_o = ('127.0.0.1', ports['ego_status']), ('127.0.0.1', ports['object_info'])
    t0 = time.perf_counter()
    for k in range(n):
        target = t0 + k * period
        delay = target - time.perf_counter()
        if delay > 0.0005:
            time.sleep(delay)
        sock.sendto(ego[k % len(ego)], dest_e)
        sock.sendto(obj[k % len(obj)], dest_o)
    sent['ego_status'] = sent['object_info'] = n
    return sent, time.perf_counter() - t0


def trial(node, packets, rate: float, seconds: float, probe: bool = False) -> dict:
    from ros_sim_bridge.tools.launcher import NodeProcess
    base = free_udp_ports(2)
    ports = {'ego_status': base, 'object_info': base + 1}
    params = {f'listen_port.{n}': 0 for n in ('traffic_light_status', 'collision',
                                               'vehicle_collision', 'intersection_status',
                                               'multi_ego_setting')}
    params.update({f'listen_port.{n}': p for n, p in ports.items()})
    params.update({'stamp_source': 'receive', 'diagnostics_period': 0.05})
    reader = DiagnosticsReader(node)
    stamps = StampProbe(node) if probe else None
    result = {'rate': rate}
    with NodeProcess('morai_bridge', parameters=params, quiet=True):
        deadline = time.monotonic() + 20
        while len(reader.latest) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)   # node up: both streams reported (zero packets)
        if stamps is not None:
            while time.monotonic() < deadline and not all(
                    s.get_publisher_count() for s in stamps.subs):
                time.sleep(0.05)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sent, took = send_paced(sock, ports, packets, rate, seconds)
        t_sent = time.monotonic()
        expected = sum(sent[n] * PUBLISHED_PER_DATAGRAM[n] for n in TYPES)
        last, still, drain = None, 0, None
        while still < 10 and time.monotonic() < t_sent + 20:   # until the counters stop moving
            time.sleep(0.05)
            now = sum(reader.ints(n, 'published') for n in TYPES)
            if drain is None and now >= expected:
                drain = time.monotonic() - t_sent     # backlog left when sending ended
            still = still + 1 if now == last else 0
            last = now
        time.sleep(0.3)
        result['drain'] = drain
        lat = {n: dict(reader.latest.get(n, {})) for n in TYPES}
    node.destroy_subscription(reader.sub)
    if stamps is not None:
        for s in stamps.subs:
            node.destroy_subscription(s)
        result['subscriber'] = stamps.delays
    received = sum(reader.ints(n, 'packets') for n in TYPES)
    drops = sum(reader.ints(n, 'drops') for n in TYPES)
    published = sum(reader.ints(n, 'published') for n in TYPES)
    errors = sum(reader.ints(n, 'decode_errors') for n in TYPES)
    result.update(sent=sum(sent.values()), received=received, drops=drops, published=published,
                  expected=expected, errors=errors, offered=sum(sent.values()) / took,
                  latency=lat)
    result['lossless'] = (received == result['sent'] and drops == 0 and published == expected
                          and errors == 0)
    return result


def capacity(node, packets) -> None:
    print(f'\nEgo Status + Object Info together through one morai_bridge process, {SECONDS:.0f} s '
          'per rate (5 messages published per pair: status, odom, tf, objects, markers).')
    print('"drain" = time after the last datagram until everything was published (the node\'s '
          f'/diagnostics every 50 ms); sustained = zero loss and drain ≤ {MAX_DRAIN} s:')
    print(f'  {"rate/type":>9} {"sent":>6} {"received":>8} {"kernel drops":>12} {"published":>9} '
          f'{"of":>6} {"offered dgram/s":>15} {"drain s":>7}  result')
    best = 0.0
    for rate in RATES:
        r = trial(node, packets, rate, SECONDS)
        drain = r['drain']
        sustained = r['lossless'] and drain is not None and drain <= MAX_DRAIN
        verdict = ('sustained' if sustained else 'zero loss, falling behind' if r['lossless']
                   else 'LOSS')
        print(f'  {rate:>9} {r["sent"]:>6} {r["received"]:>8} {r["drops"]:>12} '
              f'{r["published"]:>9} {r["expected"]:>6} {r["offered"]:>15.0f} '
              f'{"-" if drain is None else f"{drain:.2f}":>7}  {verdict}', flush=True)
        if not sustained or r['offered'] < 0.9 * 2 * rate:
            break
        best = r['offered']
    print(f'highest datagram rate sustained with zero loss (both types together): {best:.0f} '
          f'datagrams/s ({best / 2:.0f} Ego Status + {best / 2:.0f} Object Info per second)'
          if best else 'no sustained lossless rate found')


def latency(node, packets) -> None:
    r = trial(node, packets, 100.0, LATENCY_SECONDS, probe=True)
    print(f'\nlatency at 100 Hz per type ({LATENCY_SECONDS:.0f} s, {r["sent"]} datagrams, '
          f'{"zero loss" if r["lossless"] else "LOSS"}), µs:')
    print(f'  {"type":12} {"arrival → publish p50":>22} {"p99":>8} {"max":>8}   '
          f'{"→ publish returned p50":>22} {"p99":>8}')
    for name in TYPES:
        v = r['latency'][name]
        print(f'  {name:12} {v.get("latency_p50_us", "-"):>22} {v.get("latency_p99_us", "-"):>8} '
              f'{v.get("latency_max_us", "-"):>8}   {v.get("latency_done_p50_us", "-"):>22} '
              f'{v.get("latency_done_p99_us", "-"):>8}')
    d = np.array(r.get('subscriber') or [0]) / 1e3
    print(f'  arrival → this process\'s subscriber (odom + objects, {len(d)} messages): '
          f'p50 {np.percentile(d, 50):.0f} µs, p99 {np.percentile(d, 99):.0f} µs')


if __name__ == '__main__':
    keep_dds_local(BENCH_DOMAINS)
    decode_cost()
    rendered = render(500)
    with background_node('bench_morai') as bench_node:
        floor(bench_node, rendered)
        latency(bench_node, rendered)
        capacity(bench_node, rendered)
    sys.exit(0)
