"""morai_bridge under faults, through real UDP sockets and DDS (issue #10).

Datagrams are built by hand from the spec (morai-sim-udp.txt "Ego Vehicle Status", SUPPLEMENT
§1.1–1.4): identifier, data_length int32, aux_data 3×int32, payload from byte 27, tail CR LF.
"""
import random
import struct
import time

import pytest

from ros_sim_bridge.morai.ros.node import INBOUND, MoraiBridgeNode
from ros_sim_bridge.msg import MoraiEgoVehicleStatus

from conftest import UdpSender, free_udp_ports, wait_until

IDENT = b'#MoraiInfo$'


def ego152(sec=1, nsec=0, velocity_kmh=36.0):
    """Ego Vehicle Status, release layout ego152 (data_length 152, 181 bytes): sec int32 @27,
    nsec int32 @31, then ctrl_mode i8 @35, gear i8 @36, signed_velocity f32 @37 (km/h) …,
    link_id char[38] @141, tail @179."""
    b = bytearray(181)
    b[0:11] = IDENT
    struct.pack_into('<i', b, 11, 152)
    struct.pack_into('<ii', b, 27, sec, nsec)
    struct.pack_into('<bbf', b, 35, 2, 4, velocity_kmh)
    b[179:181] = b'\r\n'
    return bytes(b)


@pytest.fixture
def ego_bridge(ros):
    """morai_bridge listening for Ego Status only, a sender for it and a collector."""
    def start(**params):
        port = free_udp_ports(1)
        overrides = {f'listen_port.{n}': 0 for n in INBOUND}
        overrides.update({'listen_port.ego_status': port, 'diagnostics_period': 0.2, **params})
        node = ros.start(MoraiBridgeNode, overrides)
        status = ros.collect(MoraiEgoVehicleStatus, 'morai/ego_status', 1000)
        return node, UdpSender(port), status
    return start


@pytest.mark.parametrize('sec, nsec', [(-1, 0), (5, -1), (5, 1_000_000_000), (-2**31, 0)])
def test_sim_times_no_stamp_holds_are_counted_not_published(ros, ego_bridge, sec, nsec):
    """Defect 4 (every stamp conversion): a negative or out-of-range sec/nsec with
    stamp_source sim is bad input, counted as bad_value; valid packets around it arrive."""
    node, tx, status = ego_bridge(stamp_source='sim')
    tx.send(ego152(sec=1))
    tx.send(ego152(sec=sec, nsec=nsec))
    tx.send(ego152(sec=2, nsec=5))
    got = status.wait_for(2)
    assert [(m.header.stamp.sec, m.header.stamp.nanosec) for m in got] == [(1, 0), (2, 5)]
    values = ros.diagnostics('ego_status', lambda v: v.get('errors.bad_value') == '1')
    assert values['published'] != '0'
    assert not wait_until(lambda: len(status.messages) > 2, 0.5)


def test_truncated_datagrams_are_counted_and_the_valid_ones_published(ros, ego_bridge):
    node, tx, status = ego_bridge()
    whole = ego152(sec=99)
    cuts = list(range(0, 181, 9))
    for n, cut in enumerate(cuts):
        tx.send(whole[:cut])
        tx.send(ego152(sec=n + 1))
    got = status.wait_for(len(cuts), timeout=10)
    assert sorted(m.sec for m in got) == list(range(1, len(cuts) + 1))
    ros.diagnostics('ego_status', lambda v: v.get('decode_errors') == str(len(cuts)))


def test_garbage_storm_with_valid_datagrams_interleaved_loses_none(ros, ego_bridge):
    """2000 random datagrams (some starting with the right identifier) among 200 valid Ego
    Status packets: every valid one is published, every bad one counted."""
    node, tx, status = ego_bridge()
    rng = random.Random(11)
    for k in range(200):
        for j in range(10):
            junk = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 5, 121, 181, 300])))
            if j % 3 == 0:
                junk = IDENT + junk[len(IDENT):]
            tx.send(junk)
        tx.send(ego152(sec=k + 1))
        if k % 20 == 0:
            time.sleep(0.01)
    got = status.wait_for(200, timeout=20)
    assert sorted(m.sec for m in got) == list(range(1, 201))
    values = ros.diagnostics('ego_status', lambda v: v.get('packets') == '2200')
    assert values['decode_errors'] == '2000' and values['drops'] == '0'


def test_simulator_power_cycle_goes_stale_then_recovers(ros, ego_bridge):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    node, tx, status = ego_bridge(stale_after=0.5)
    tx.send(ego152(sec=1))
    status.wait_for(1)
    diag = ros.collect(DiagnosticArray, '/diagnostics', 100)

    def stale():
        return any(st.level == DiagnosticStatus.WARN and 'no data for' in st.message
                   and 'ego_status' in st.name for arr in list(diag.messages)
                   for st in arr.status)
    assert wait_until(stale, 10)
    UdpSender(tx.port).send(ego152(sec=2))
    assert [m.sec for m in status.wait_for(2, timeout=10)] == [1, 2]


def test_a_raising_conversion_does_not_end_the_receive_loop(ros, ego_bridge, monkeypatch):
    """A handler fault (injected into the conversion) is counted and logged; the next
    datagrams are published."""
    from ros_sim_bridge.morai.ros import conversions
    real = conversions.EgoCdr.status
    calls = []

    def broken(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError('injected handler fault')
        return real(*args, **kwargs)
    monkeypatch.setattr(conversions.EgoCdr, 'status', broken)
    node, tx, status = ego_bridge()
    for k in range(1, 4):
        tx.send(ego152(sec=k))
    assert [m.sec for m in status.wait_for(2, timeout=10)] == [2, 3]
    assert node.receiver.health.handler_errors == 1
    ros.diagnostics('thread', lambda v: v.get('handler_errors') == '1')
