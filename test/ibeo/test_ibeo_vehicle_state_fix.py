"""0x2808 vehicle state → ``vehicle_state/fix`` (issue #26): the position sigmas of the record
give the NavSatFix covariance, the same in the live node and in ``ibeo_idc to-bag``.

Bodies by the §17 table (204 bytes, big-endian as every ECU type): timestamp NTP64 at 4,
source at 12, latitude / longitude DOUBLE [deg] at 16 / 28, altitude 4 bytes at 40, Sigma X
(longitude, m) FLOAT32 at 56, Sigma Y (latitude, m) at 68.  Covariance (ENU): [σx², σy², up]
with up the larger horizontal variance (the record has no altitude sigma), type APPROXIMATED;
UNKNOWN (all zero) when a sigma is not positive and below 1e7 m.
"""
import math
import struct
import subprocess

import pytest
from sensor_msgs.msg import NavSatFix

from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec.header import IbeoHeader
from ros_sim_bridge.ibeo.ros import ecu_conversions as ec

from ibeo_readback import readback

from conftest import free_tcp_port, message_differences, wait_until
from test_ibeo_data_diagnostics import NTP, Diagnostics, connected, header, installed, serving

APPROXIMATED, UNKNOWN = NavSatFix.COVARIANCE_TYPE_APPROXIMATED, NavSatFix.COVARIANCE_TYPE_UNKNOWN


def body_2808(sigma_x: float, sigma_y: float, lat: float = 48.125, lon: float = 11.5,
              alt: float = 520.0) -> bytes:
    body = bytearray(204)
    struct.pack_into('>QH', body, 4, NTP, 0x2)                  # timestamp, source: GPS
    struct.pack_into('>d', body, 16, lat)
    struct.pack_into('>d', body, 28, lon)
    struct.pack_into('>f', body, 40, alt)
    struct.pack_into('>f', body, 56, sigma_x)
    struct.pack_into('>f', body, 68, sigma_y)
    return bytes(body)


def fixes(body: bytes) -> tuple:
    """(the NavSatFix of one 0x2808 body read back with rclpy, the same stamped with a receive
    time as the node does, read back)."""
    hdr = IbeoHeader(data_type=0x2808, size=len(body), device_id=1, ntp=NTP)
    record = registry.decode_message(0x2808, body, hdr)
    bagged = readback(dict(ec.IbeoToRos().convert(hdr, record))['/vehicle_state/fix'])
    live = readback(dict(ec.IbeoToRos().convert(hdr, record, (7, 8)))['/vehicle_state/fix'])
    assert (live.header.stamp.sec, live.header.stamp.nanosec) == (7, 8)
    live.header.stamp = bagged.header.stamp
    return live, bagged


def test_sigmas_give_an_approximated_diagonal_in_both_paths():
    live, bagged = fixes(body_2808(0.5, 1.5))
    assert (live.latitude, live.longitude, live.altitude) == (48.125, 11.5, 520.0)
    assert live.position_covariance_type == APPROXIMATED
    assert list(live.position_covariance) == [0.25, 0, 0, 0, 2.25, 0, 0, 0, 2.25]
    assert message_differences(live, bagged) == []
    live, _ = fixes(body_2808(2.0, 0.25))                      # up follows the larger one
    assert list(live.position_covariance) == [4.0, 0, 0, 0, 0.0625, 0, 0, 0, 4.0]


@pytest.mark.parametrize('sx, sy', [(math.nan, 0.5), (0.5, math.inf), (-math.inf, 0.5),
                                    (3.0e38, 0.5), (0.5, 1e7), (0.0, 0.5), (0.5, -1.0)])
def test_a_sigma_that_locates_nothing_makes_the_covariance_unknown(sx, sy):
    live, bagged = fixes(body_2808(sx, sy))
    assert live.position_covariance_type == UNKNOWN
    assert list(live.position_covariance) == [0.0] * 9
    assert live.status.status == live.status.STATUS_FIX and live.latitude == 48.125
    assert message_differences(live, bagged) == []


def test_installed_ecu_publishes_the_covariance(ros, closing):
    port = free_tcp_port()
    diag = Diagnostics(ros)
    got = ros.collect(NavSatFix, 'vehicle_state/fix', 10, matched=False)
    with installed('ibeo_ecu', port, stamp_source='receive') as proc:
        sensor = serving(closing, port)
        connected(diag)
        body = body_2808(0.5, 1.5)
        sensor.send(header(0x2808, len(body)) + body)
        assert wait_until(lambda: len(got.messages) >= 1, 15)
        fix = got.messages[0]
        assert fix.position_covariance_type == APPROXIMATED
        assert list(fix.position_covariance) == [0.25, 0, 0, 0, 2.25, 0, 0, 0, 2.25]
        assert proc.running()
    assert proc.proc.returncode == 0


def test_installed_to_bag_writes_the_covariance(tmp_path):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from ros_sim_bridge.ibeo.idc import IdcWriter
    from ros_sim_bridge.tools.launcher import executable
    src = tmp_path / 'state.idc'
    with IdcWriter(src) as w:
        w.write(0x2808, body_2808(0.5, 1.5), device_id=1, ntp=NTP)
        w.write(0x2808, body_2808(math.nan, 1.5), device_id=1, ntp=NTP + (1 << 32))
    out = subprocess.run([str(executable('ibeo_idc')), 'to-bag', str(src), str(tmp_path / 'bag'),
                          '--no-progress'], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    with open(next((tmp_path / 'bag').glob('*.mcap')), 'rb') as f:
        read = [d for _, _, _, d in make_reader(f, decoder_factories=[DecoderFactory()])
                .iter_decoded_messages(topics=['/ibeo/vehicle_state/fix'])]
    assert [(m.position_covariance_type, list(m.position_covariance)) for m in read] == [
        (APPROXIMATED, [0.25, 0, 0, 0, 2.25, 0, 0, 0, 2.25]), (UNKNOWN, [0.0] * 9)]
