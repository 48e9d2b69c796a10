"""RflySim truth: decode cost per packet vs a plain struct.unpack loop, and the most vehicles
at 100 Hz that one rflysim_truth node carries with zero loss, next to its floor: a loop of
``publish(bytes)`` of the node's five messages per packet, already serialised (issue #27).

The node runs as its installed executable (own process, as in production); the sender plays
pre-rendered packets at 100 Hz per vehicle; loss is read from the node's own /diagnostics
(datagrams received vs sent, kernel drops, messages published) so that a slow listener here
cannot hide or fake a loss.
"""
from __future__ import annotations

import struct
import sys
import time

from ros_sim_bridge.rflysim import codec
from ros_sim_bridge.rflysim.emulator.scene import Scene
from ros_sim_bridge.rflysim.emulator.server import Sender
from ros_sim_bridge.tools.ports import BENCH_DOMAINS, free_udp_ports
from ros_sim_bridge.tools.session import background_node, keep_dds_local

RATE = 100.0
SECONDS = 3.0


def decode_cost(n: int = 100_000) -> None:
    scene = Scene([1])
    packets = [codec.encode_truth(scene.state(1, k / 100), 'sout2simulator') for k in range(1000)]
    raw = struct.Struct('<4i24f7d')
    t0 = time.perf_counter()
    for k in range(n):
        raw.unpack(packets[k % 1000])
    t_unpack = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for k in range(n):
        codec.decode(packets[k % 1000], expected_copter_id=1)
    t_decode = (time.perf_counter() - t0) / n
    print(f'decode cost per 168-byte packet ({n} packets):')
    print(f'  plain struct.unpack loop      {t_unpack * 1e6:7.2f} µs')
    print(f'  codec.rflysim.decode          {t_decode * 1e6:7.2f} µs  '
          f'(checks + TruthState; {t_decode / t_unpack:.1f}× the bare unpack)')


class DiagnosticsReader:
    def __init__(self, node):
        from diagnostic_msgs.msg import DiagnosticArray
        self.latest: dict[str, dict[str, str]] = {}
        node.create_subscription(DiagnosticArray, '/diagnostics', self._on, 50)

    def _on(self, msg) -> None:
        for st in msg.status:
            if st.name.startswith('rflysim_truth: vehicle'):
                self.latest[st.name] = {kv.key: kv.value for kv in st.values}

    def totals(self, ids) -> dict[int, dict[str, int]]:
        out = {}
        for name, values in self.latest.items():
            cid = int(name.split('vehicle ')[1].split(' ')[0])
            if cid in ids:
                out[cid] = {k: int(values[k]) for k in ('packets', 'published', 'drops',
                                                        'decode_errors')}
        return out


def trial(node, vehicles: int) -> dict:
    from ros_sim_bridge.tools.launcher import NodeProcess
    ids = list(range(1, vehicles + 1))
    base = free_udp_ports(vehicles, step=2)
    reader = DiagnosticsReader(node)
    steps = int(RATE * SECONDS)
    with NodeProcess('rflysim_truth', parameters={
            'copter_ids': ids, 'base_port': base, 'diagnostics_period': 0.25}, quiet=True):
        sender = Sender(Scene(ids), base_port=base, rate=RATE, origin_period=0,
                        crash_notices=False)
        sender.prepare(steps)
        deadline = time.monotonic() + 20
        while len(reader.totals(ids)) < vehicles and time.monotonic() < deadline:
            time.sleep(0.1)  # node up: every vehicle reported (with zero packets)
        t0 = time.monotonic()
        sender.send_packets(steps)
        send_time = time.monotonic() - t0
        truth = sum(sender.sent.values())
        extras = sum(sender.extras.values())  # the GPS origin sent at step 0
        # wait until the node's counters stop moving
        last, still = None, 0
        while still < 4 and time.monotonic() - t0 < send_time + 15:
            time.sleep(0.25)
            totals = reader.totals(ids)
            now = sum(v['published'] for v in totals.values())
            still = still + 1 if now == last else 0
            last = now
        sender.close()
    totals = reader.totals(ids)
    received = sum(v['packets'] for v in totals.values())
    published = sum(v['published'] for v in totals.values())
    drops = sum(v['drops'] for v in totals.values())
    sent, expected = truth + extras, truth * 5 + extras
    return {'vehicles': vehicles, 'sent': sent, 'received': received, 'drops': drops,
            'published': published, 'expected': expected, 'send_rate': truth / send_time,
            'lossless': received == sent and drops == 0 and published == expected}


def floor(node, n: int = 2000) -> float:
    """Vehicles at RATE that publishing the five messages of a packet as bytes allows (one
    CPU): publish(bytes) of the node's own bytes, same types, sizes and counts."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu, NavSatFix
    from tf2_msgs.msg import TFMessage
    from ros_sim_bridge.msg import RflySimTruth
    from ros_sim_bridge.rflysim.ros.conversions import EnuState, VehicleCdr
    state = Scene([1]).state(1, 1.0)
    enu, cdr, stamp = EnuState.from_truth(state), VehicleCdr('map', 'b', 'lat_lon_alt'), (1, 2)
    pairs = [(node.create_publisher(t, f'bench_floor/m{k}', 10), data) for k, (t, data) in
             enumerate([(RflySimTruth, cdr.truth(state, stamp)),
                        (Odometry, cdr.odometry(enu, stamp)), (Imu, cdr.imu(enu, stamp)),
                        (NavSatFix, cdr.nav_sat_fix(state, stamp)),
                        (TFMessage, cdr.transform(enu, stamp))])]
    t0 = time.perf_counter()
    for _ in range(n):
        for pub, data in pairs:
            pub.publish(data)
    per_packet = (time.perf_counter() - t0) / n
    for pub, _ in pairs:
        node.destroy_publisher(pub)
    print(f'\nfloor: publish(bytes) of one packet\'s 5 messages '
          f'({sum(len(d) for _, d in pairs)} B): {per_packet * 1e6:.1f} µs '
          f'→ {1 / (per_packet * RATE):.0f} vehicles at {RATE:.0f} Hz on one CPU')
    return per_packet


def capacity() -> None:
    with background_node('bench_rflysim') as node:
        floor(node)
        _capacity(node)


def _capacity(node) -> None:
    print(f'\nvehicles at {RATE:.0f} Hz through one rflysim_truth process, {SECONDS:.0f} s each '
          '(5 messages published per packet: truth, odom, imu, fix, tf):')
    print(f'  {"vehicles":>8} {"sent":>7} {"received":>8} {"kernel drops":>12} '
          f'{"published":>10} {"of":>7}  {"offered pkt/s":>13}  result')
    best = 0
    for vehicles in (1, 20, 80, 150, 200, 250, 300, 400):
        r = trial(node, vehicles)
        print(f'  {r["vehicles"]:>8} {r["sent"]:>7} {r["received"]:>8} {r["drops"]:>12} '
              f'{r["published"]:>10} {r["expected"]:>7}  {r["send_rate"]:>13.0f}  '
              f'{"zero loss" if r["lossless"] else "LOSS"}', flush=True)
        if not r['lossless'] or r['send_rate'] < 0.9 * RATE * vehicles:
            break
        best = vehicles
    print(f'most vehicles at {RATE:.0f} Hz with zero loss: {best}'
          + ('' if best else ' (none)'))


if __name__ == '__main__':
    keep_dds_local(BENCH_DOMAINS)
    decode_cost()
    capacity()
    sys.exit(0)
