"""stamp_source receive (ibeo_lux's default): scans that arrive in one TCP read are not given
one shared stamp; each gets the time its bytes completed arriving, estimated from the read
time and the spacing of the messages' header NTP times (spec §2.4 "time when this message was
created"; core.receive_times), whether or not the sensor clock is set."""
from __future__ import annotations

import time

import pytest
from sensor_msgs.msg import PointCloud2

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns, unix_ns_to_ntp64
from ros_sim_bridge.msg import LuxScanInfo
from ros_sim_bridge.ros.stamps import stamp_to_ns

from test_lux_node import RAW, collect, connected_sensor, points, scan_msg


@pytest.mark.parametrize('clock', ['unset', 'set'])
def test_two_scans_in_one_sendall_are_stamped_apart_by_their_ntp_gap(ros, driver, closing,
                                                                     clock):
    node, port = driver(**RAW)                      # stamp_source: receive (the default)
    clouds = collect(ros, node, PointCloud2, 'points', 50)
    infos = collect(ros, node, LuxScanInfo, 'scan_info', 50)
    sensor = connected_sensor(port, closing)
    # header NTP times 80 ms apart: a clock counting from power-up (1234 s) or a set one
    first = (1234 << 32) if clock == 'unset' else unix_ns_to_ntp64(time.time_ns() - 5 * 10**9)
    second = first + unix_ns_to_ntp64(80_000_000) - unix_ns_to_ntp64(0)
    gap = ntp64_to_unix_ns(second) - ntp64_to_unix_ns(first)
    assert gap == pytest.approx(80_000_000, abs=1)
    pts = points([(0, 0, 0, 0, 1000, 50)])
    time.sleep(0.2)                                 # the link is up and idle
    before = time.time_ns()
    sensor.send(scan_msg(pts, 1, ntp=first) + scan_msg(pts, 2, ntp=second))
    c1, c2 = clouds.wait_for(2, timeout=10)
    after = time.time_ns()
    t1, t2 = stamp_to_ns(c1.header.stamp), stamp_to_ns(c2.header.stamp)
    assert t2 - t1 == gap                           # not one shared stamp
    assert before <= t2 <= after                    # the last one: when the read returned
    i1, i2 = infos.wait_for(2, timeout=10)
    assert (stamp_to_ns(i1.header.stamp), stamp_to_ns(i2.header.stamp)) == (t1, t2)


@pytest.fixture
def driver(ros):
    from conftest import free_tcp_port
    from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode

    def start(**params):
        port = free_tcp_port()
        return ros.start(IbeoLuxNode, {'port': port, **params}), port
    return start


