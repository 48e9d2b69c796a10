"""Which topics each ibeo executable and mode has, read from the ROS graph as a user's
``ros2 node info`` sees it (``get_publisher_names_and_types_by_node``), docs/ibeo.md "Topics":

* ``ibeo_lux`` (tcp): the LUX topics only; an ECU type that arrives anyway gets its topic on
  first use;
* ``ibeo_ecu`` (tcp): the LUX topics and every ECU topic from the start;
* ``source:=file`` (either executable): the LUX topics and the ECU topics of the data types
  the recording holds.

Started with their defaults (no params file, as ``ros2 run``), the topics are under the
``topic_prefix``: /ibeo for ``ibeo_lux``, /ibeo_ecu for ``ibeo_ecu``; /tf_static is absolute.
"""
from __future__ import annotations

import math
import struct

from sensor_msgs.msg import NavSatFix, PointCloud2

from ros_sim_bridge.ibeo.codec.header import encode_message
from ros_sim_bridge.ibeo.ecu_recording import write_recording
from ros_sim_bridge.ibeo.emulator.scene import LuxScene
from ros_sim_bridge.ibeo.emulator.server import LuxServer
from ros_sim_bridge.ibeo.ros.ecu_node import IbeoEcuNode
from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode

from conftest import free_tcp_port, wait_until
from test_ibeo_idc_play import write_lux_idc
from test_lux_node import connected_sensor

FAST = {'diagnostics_period': 0.2, 'min_backoff': 0.05, 'max_backoff': 0.25}
#: every node has these
INFRA = {'/diagnostics', '/rosout', '/parameter_events'}
LUX_NAMES = {'points', 'scan_info', 'objects', 'objects/markers', 'vehicle_state',
             'vehicle_state/twist'}
LUX = {'/ibeo/' + t for t in LUX_NAMES}             # ibeo_lux's default topic_prefix
ECU_LUX = {'/ibeo_ecu/' + t for t in LUX_NAMES}     # ibeo_ecu's
#: the ECU outputs (docs/ibeo.md): scan infos, scanner mounts, objects, vehicle states,
#: GPS, GPS/IMU, odometry, images
ECU_NAMES = {'ecu/scan_info', 'ecu/objects', 'vehicle_state/odometry', 'vehicle_state/fix',
             'gps/fix', 'gps_imu/fix', 'imu/data', 'odometry', 'odometry/twist',
             'image/compressed', 'image'}
ECU = {'/ibeo/' + t for t in ECU_NAMES} | {'/tf_static'}
ECU_ECU = {'/ibeo_ecu/' + t for t in ECU_NAMES} | {'/tf_static'}


def published_topics(ros, node) -> set:
    """The node's publishers as the graph (another node, over DDS discovery) reports them."""
    return {name for name, _ in ros.probe.get_publisher_names_and_types_by_node(
        node.get_name(), node.get_namespace())} - INFRA


def wait_topics(ros, node, expected: set, timeout: float = 10.0) -> set:
    """The graph's topics of ``node`` once they equal ``expected`` (or at the timeout)."""
    wait_until(lambda: published_topics(ros, node) == expected, timeout, interval=0.05)
    return published_topics(ros, node)


def test_ibeo_lux_against_a_lux_has_no_ecu_topic(ros):
    port = free_tcp_port()
    node = ros.start(IbeoLuxNode, {'port': port, **FAST})
    clouds = ros.collect(PointCloud2, 'ibeo/points', 50)
    server = LuxServer(LuxScene(layers=4, seed=3, warning_period_s=0.4), port=port).start()
    try:
        clouds.wait_for(5, timeout=15)          # scans, objects, vehicle states have flowed
        assert wait_topics(ros, node, LUX) == LUX
        assert not published_topics(ros, node) & ECU
    finally:
        server.stop()


def test_ibeo_ecu_has_every_ecu_topic_from_the_start(ros):
    node = ros.start(IbeoEcuNode, {'port': free_tcp_port(), **FAST})   # nothing listening
    assert wait_topics(ros, node, ECU_LUX | ECU_ECU) == ECU_LUX | ECU_ECU


def test_ibeo_lux_makes_an_ecu_topic_when_an_ecu_type_arrives(ros, closing):
    port = free_tcp_port()
    node = ros.start(IbeoLuxNode, {'port': port, **FAST, 'layers': 4,
                                   'start_measure_on_connect': False})
    fixes = ros.collect(NavSatFix, 'ibeo/gps/fix', 100, matched=False)
    sensor = connected_sensor(port, closing)
    assert wait_topics(ros, node, LUX) == LUX
    ntp = 3_900_000_000 << 32

    def gps(k):   # 0x2604 by the §22 table
        body = struct.pack('>IQB10d32xH', k, ntp + k, 7, math.radians(50.0 + k), 0.2, 34.0,
                           0.5, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1)
        return encode_message(0x2604, body, ntp=ntp + k)
    k = 0

    def send_one():
        nonlocal k
        k += 1
        sensor.send(gps(k))
        return bool(fixes.messages)
    # the topic is made by the first fix; the subscriber matches it some time later
    assert wait_until(send_one, 15.0, interval=0.1), 'no gps/fix after the first 0x2604'
    assert wait_topics(ros, node, LUX | {'/ibeo/gps/fix'}) == LUX | {'/ibeo/gps/fix'}


def test_file_playback_has_the_topics_of_the_recording(ros, tmp_path):
    ecu_file, lux_file = tmp_path / 'ecu.idc', tmp_path / 'lux.idc'
    write_recording(ecu_file, seconds=0.2, points=500)
    write_lux_idc(lux_file, scans=3)
    played = {'source': 'file', 'start_paused': True, 'layers': 4, **FAST}
    lux = ros.start(IbeoLuxNode, {**played, 'file': str(lux_file)})
    ecu = ros.start(IbeoLuxNode, {**played, 'file': str(ecu_file)},
                    namespace='ecu_recording')
    ecu2 = ros.start(IbeoEcuNode, {**played, 'file': str(lux_file)}, namespace='ecu_lux')
    # the emulator's frames: every ECU output but an uncompressed image (its camera is JPEG)
    recorded = {t if t.startswith('/tf') else '/ecu_recording' + t
                for t in LUX | ECU - {'/ibeo/image'}}
    assert wait_topics(ros, ecu, recorded) == recorded
    assert wait_topics(ros, lux, LUX) == LUX
    lux_ns = {'/ecu_lux' + t for t in ECU_LUX}
    assert wait_topics(ros, ecu2, lux_ns) == lux_ns     # ibeo_ecu playing a LUX recording

