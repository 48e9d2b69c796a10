"""ibeo_lux with ``source:=file``: an ``.idc`` recording played through real DDS as if live
(issue #11): the clouds and scan infos of the file's LUX scans, paced by their NTP times with
a rate factor, loop, seek forwards and backwards, pause/resume, a damaged file, commands
refused in file mode, and the installed executable."""
from __future__ import annotations

import time

import numpy as np
import pytest
from sensor_msgs.msg import PointCloud2
from std_srvs.srv import Trigger

from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan as lux_scan
from ros_sim_bridge.ibeo.emulator.scene import LuxScene
from ros_sim_bridge.ibeo.idc import IdcReader, IdcWriter
from ros_sim_bridge.ibeo.ros import conversions as convert
from ros_sim_bridge.ibeo.ros.node import IbeoLuxNode
from ros_sim_bridge.msg import LuxObjectList, LuxScanInfo
from ros_sim_bridge.ros.pointcloud import from_pointcloud2
from ros_sim_bridge.ros.stamps import stamp_to_ns
from ros_sim_bridge.srv import IbeoSeek, LuxCommand, LuxGetStatus
from ros_sim_bridge.tools.launcher import NodeProcess, config_file

from conftest import wait_until
from test_lux_node import node_topic

SCANS = 25                                   # 12.5 Hz: 1.92 s from the first to the last scan
FAST = {'diagnostics_period': 0.2, 'layers': 4, 'stamp_source': 'sensor'}


def write_lux_idc(path, scans: int = SCANS, seed: int = 3) -> list:
    """A LUX recording (scans, objects, vehicle states, warnings) as the emulator's sensor
    sends it; returns the messages written as (data type, body, ntp)."""
    scene = LuxScene(seed=seed, warning_period_s=1.0)
    written = []
    with IdcWriter(path) as w:
        for _ in range(scans):
            for m in scene.step():
                w.write(m.data_type, m.body, ntp=m.ntp)
                written.append((m.data_type, m.body, m.ntp))
    return written


@pytest.fixture
def lux_idc(tmp_path):
    path = tmp_path / 'lux.idc'
    return path, write_lux_idc(path)


def collect(ros, node, msg_type, topic, qos=100):
    """Subscribe and wait until the node's publisher has matched too."""
    name = node_topic(node, topic)
    c = ros.collect(msg_type, name, qos)
    pub = next(p for p in node.publishers if p.topic_name == name)
    assert wait_until(lambda: pub.get_subscription_count() > 0, 10.0), f'{name} not matched'
    return c


def call(ros, srv_type, name, request=None, timeout=10.0):
    client = ros.probe.create_client(srv_type, name)
    try:
        assert client.wait_for_service(timeout_sec=10.0), f'{name} not available'
        return client.call(request or srv_type.Request(), timeout_sec=timeout)
    finally:
        ros.probe.destroy_client(client)


def file_status(ros, predicate, timeout=15.0) -> dict:
    return ros.diagnostics('link file', predicate, timeout=timeout)


def scan_numbers(infos) -> list[int]:
    return [m.scan_number for m in infos]


def test_a_lux_recording_publishes_what_the_live_sensor_would_paced_by_rate(ros, lux_idc):
    path, written = lux_idc
    scans = [lux_scan.decode_scan_wire(b) for t, b, _ in written if t == registry.SCAN]
    node = ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(path), 'rate': 2.0,
                                   'start_paused': True}, namespace='/idc_a')
    infos = collect(ros, node, LuxScanInfo, 'scan_info')
    clouds = collect(ros, node, PointCloud2, 'points')
    objects = collect(ros, node, LuxObjectList, 'objects')
    t0 = time.monotonic()
    assert call(ros, Trigger, '/idc_a/ibeo_lux/resume').success
    got = infos.wait_for(SCANS, timeout=30)
    clouds.wait_for(SCANS, timeout=10)
    span = time.monotonic() - t0
    # every scan, in order, stamped with its recorded time (stamp_source sensor)
    assert scan_numbers(got) == [s.scan_number for s, _ in scans]
    assert [stamp_to_ns(m.header.stamp) for m in got] == \
        [ntp64_to_unix_ns(s.start_ntp) for s, _ in scans]
    # paced: 1.92 s recorded at ×2 ≈ 0.96 s, not a burst and not real time
    assert 0.7 < span < 0.96 + 2.0, span
    # the clouds are what the conversions make of the recorded scans (the TCP path)
    builder = convert.CloudBuilder([-1.2, -0.4, 0.4, 1.2])
    for (scan, wire), msg in zip(scans, list(clouds.messages)[:SCANS]):
        expect = builder.build_wire(scan, wire, eight_layer=False, beam_tilt=0.0)
        cloud = from_pointcloud2(msg)
        assert len(cloud) == len(expect)
        for name in ('x', 'y', 'z', 'layer', 'echo'):
            np.testing.assert_array_equal(cloud[name], expect[name])
    n_objects = sum(1 for t, _, _ in written if t == registry.OBJECTS)
    assert len(objects.wait_for(n_objects, timeout=10)) == n_objects
    st = file_status(ros, lambda v: v.get('state') == 'finished')
    assert st['messages_played'] == str(len(written)) and st['damaged_regions'] == '0'
    assert node.context.ok()                       # the node stays up after the end


def test_loop_seek_back_and_forth_pause_and_resume(ros, lux_idc):
    path, written = lux_idc
    numbers = [lux_scan.decode_scan_wire(b)[0].scan_number
               for t, b, _ in written if t == registry.SCAN]
    node = ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(path), 'rate': 1.0,
                                   'loop': True, 'start_paused': True}, namespace='/idc_b')
    infos = collect(ros, node, LuxScanInfo, 'scan_info')
    srv = '/idc_b/ibeo_lux/'
    # seek forwards while paused: nothing plays until resume, then from there
    res = call(ros, IbeoSeek, srv + 'seek', IbeoSeek.Request(time=1.2))
    assert res.success and res.time == pytest.approx(1.2, abs=0.09)
    time.sleep(0.5)
    assert infos.messages == []
    assert call(ros, Trigger, srv + 'resume').success
    first = infos.wait_for(1, timeout=10)[0]
    assert first.scan_number == numbers[round(res.time / 0.08)]
    # pause: the stream stops
    infos.wait_for(3, timeout=10)
    assert call(ros, Trigger, srv + 'pause').success
    time.sleep(0.3)
    n = len(infos.messages)
    time.sleep(0.6)
    assert len(infos.messages) == n
    # seek backwards (negative: from the end) and resume
    res = call(ros, IbeoSeek, srv + 'seek', IbeoSeek.Request(time=-0.5))
    assert res.success and res.time == pytest.approx(1.944 - 0.5, abs=0.09)
    res = call(ros, IbeoSeek, srv + 'seek', IbeoSeek.Request(time=-100.0))   # clamped
    assert res.success and res.time == pytest.approx(0.0, abs=1e-6)
    assert call(ros, Trigger, srv + 'resume').success
    assert wait_until(lambda: len(infos.messages) > n, 10)
    assert infos.messages[n].scan_number == numbers[0]
    # loop: after the last scan the first comes again
    assert wait_until(lambda: scan_numbers(infos.messages)[n + 1:].count(numbers[0]) >= 1,
                      15, interval=0.05)
    after = scan_numbers(infos.messages)[n:]
    k = after.index(numbers[0], 1)
    assert after[:k] == numbers and after[k - 1] == numbers[-1]
    st = file_status(ros, lambda v: int(v.get('loops', '0')) >= 1)
    assert st['state'] in ('playing', 'paused')


def test_a_damaged_file_logs_counts_and_plays_on(ros, tmp_path):
    path = tmp_path / 'lux.idc'
    written = write_lux_idc(path)
    with IdcReader(path) as r:
        scans = [e for e in r if e.data_type == registry.SCAN]
        hit = scans[10]
    data = bytearray(path.read_bytes())
    data[hit.offset:hit.offset + 4] = b'\x00\x00\x00\x00'     # the 11th scan's magic word
    data[hit.offset + 30:hit.offset + 30] = b'garbage'          # and garbage inside it
    bad = tmp_path / 'bad.idc'
    bad.write_bytes(bytes(data))
    with IdcReader(bad) as r:
        assert len(r) == len(written) and len(r.damages) == 1   # the trailer; the scan lost
    node = ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(bad), 'rate': 0.0,
                                   'start_paused': True}, namespace='/idc_c')
    infos = collect(ros, node, LuxScanInfo, 'scan_info')
    assert call(ros, Trigger, '/idc_c/ibeo_lux/resume').success
    st = file_status(ros, lambda v: v.get('state') == 'finished')
    assert st['damaged_regions'] == '1' and int(st['damaged_bytes']) >= hit.size
    assert int(st['errors.damaged_file']) == 1
    numbers = [m.scan_number for m in infos.wait_for(SCANS - 1, timeout=10)]
    expect = [lux_scan.decode_scan_wire(b)[0].scan_number for t, b, _ in written
              if t == registry.SCAN]
    assert numbers == expect[:10] + expect[11:]             # all but the damaged one
    # replayed again: the damage is not reported twice
    assert call(ros, IbeoSeek, '/idc_c/ibeo_lux/seek', IbeoSeek.Request(time=0.0)).success
    st = file_status(ros, lambda v: v.get('state') == 'finished'
                     and int(v['messages_played']) > len(written))
    assert st['damaged_regions'] == '1'


def test_commands_answer_an_error_in_file_mode_and_playback_services_in_tcp_mode(ros, lux_idc):
    path, _ = lux_idc
    ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(path), 'start_paused': True},
              namespace='/idc_d')
    res = call(ros, LuxGetStatus, '/idc_d/ibeo_lux/get_status')
    assert not res.success and 'source:=file' in res.message
    res = call(ros, LuxCommand, '/idc_d/ibeo_lux/start_measure')
    assert not res.success and 'no sensor' in res.message
    ros.start(IbeoLuxNode, {**FAST, 'port': 9, 'start_measure_on_connect': False},
              namespace='/idc_e')
    res = call(ros, IbeoSeek, '/idc_e/ibeo_lux/seek', IbeoSeek.Request(time=1.0))
    assert not res.success and 'source:=file' in res.message
    assert not call(ros, Trigger, '/idc_e/ibeo_lux/pause').success


def test_data_types_set_at_run_time_in_file_mode_is_kept_without_a_sensor(ros, lux_idc):
    """source:=file has no sensor to send a Set Filter to: a run-time ``data_types`` is
    checked and kept (was: AttributeError on the missing TCP client, the set refused)."""
    from rclpy.parameter import Parameter
    path, _ = lux_idc
    node = ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(path),
                                   'start_paused': True}, namespace='/idc_p')
    result, = node.set_parameters([Parameter('data_types', value='0x2202, 0x2221')])
    assert result.successful, result.reason
    assert node.commands.filter_ranges == ((0x2202, 0x2202), (0x2221, 0x2221))
    result, = node.set_parameters([Parameter('data_types', value='0x2221-0x2202')])
    assert not result.successful


def test_bad_file_parameters_refused(ros, tmp_path):
    with pytest.raises(ValueError, match='file'):
        ros.start(IbeoLuxNode, {'source': 'file'})
    with pytest.raises(ValueError, match='source'):
        ros.start(IbeoLuxNode, {'source': 'udp'})
    with pytest.raises(FileNotFoundError):
        ros.start(IbeoLuxNode, {'source': 'file', 'file': str(tmp_path / 'none.idc')})


def test_installed_node_plays_a_file_in_a_loop_and_exits_0(ros, lux_idc):
    path, _ = lux_idc
    infos = ros.collect(LuxScanInfo, '/idc_f/ibeo/scan_info', 100, matched=False)
    with NodeProcess('ibeo_lux', params_file=config_file('ibeo.yaml'), namespace='/idc_f',
                     parameters={'source': 'file', 'file': str(path), 'rate': 4.0,
                                 'loop': True, 'layers': 4}, quiet=True) as proc:
        # looping at ×4: a late subscriber still sees scans within a few seconds
        assert wait_until(lambda: len(infos.messages) >= 30, timeout=60, interval=0.05)
        assert proc.running()
    assert proc.proc.returncode == 0


def test_after_the_end_pause_says_play_has_finished(ros, lux_idc):
    path, written = lux_idc
    node = ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(path), 'rate': 0.0,
                                   'start_paused': True}, namespace='/idc_g')
    infos = collect(ros, node, LuxScanInfo, 'scan_info')
    srv = '/idc_g/ibeo_lux/'
    assert call(ros, Trigger, srv + 'resume').success
    file_status(ros, lambda v: v.get('state') == 'finished')
    infos.wait_for(SCANS, timeout=10)
    res = call(ros, Trigger, srv + 'pause')
    assert not res.success and 'finished' in res.message and '~/resume' in res.message, \
        res.message
    assert file_status(ros, lambda v: True)['state'] == 'finished'     # not turned 'paused'
    res = call(ros, Trigger, srv + 'resume')
    assert res.success and res.message == 'playing from 0.000 s'
    assert wait_until(lambda: len(infos.messages) >= 2 * SCANS, 15)


def test_the_file_link_counts_what_it_published(ros, lux_idc):
    path, written = lux_idc
    node = ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(path), 'rate': 0.0},
                     namespace='/idc_i')
    st = file_status(ros, lambda v: v.get('state') == 'finished')
    # the link publishes through the per type streams: its count is theirs together
    published = sum(s.published for s in node.stats.values())
    assert published >= 2 * SCANS and st['published'] == str(published)


def test_loops_after_the_first_are_not_logged_at_info(ros, tmp_path):
    """A short file looping fast: one INFO line for the first loop, not one per loop."""
    from rcl_interfaces.msg import Log
    path = tmp_path / 'short.idc'
    write_lux_idc(path, scans=3)
    logs = ros.collect(Log, '/rosout', 1000, matched=False)
    ros.start(IbeoLuxNode, {**FAST, 'source': 'file', 'file': str(path), 'rate': 4.0,
                            'loop': True}, namespace='/idc_h')
    file_status(ros, lambda v: int(v.get('loops', '0')) >= 6, timeout=20)

    def looping():
        return [m for m in list(logs.messages)
                if 'idc_h' in m.name and ': looping (loop' in m.msg]
    assert wait_until(lambda: looping(), 5)
    time.sleep(0.3)                                   # later lines, if any, arrive too
    lines = looping()
    assert len(lines) == 1 and 'loop 1' in lines[0].msg, [m.msg for m in lines]
    assert lines[0].level == Log.INFO


def test_a_played_message_is_framed_as_the_recording_frames_it(ros, tmp_path):
    """A 0x2205 scan whose points hold a complete, decodable 0x2807 message (header and body):
    the recording's index frames the scan whole, and so does playback (it does not search the
    body as a live stream's framer must): the cloud with every point and the two real vehicle
    states are published, nothing counted as cut short; to-bag's reader agrees."""
    from ros_sim_bridge.ibeo.codec import encode_message
    from ros_sim_bridge.ibeo.codec import scan_ecu as se
    from ros_sim_bridge.ibeo.codec import vehicle_state_ecu as ve
    from ros_sim_bridge.ibeo.ros.ecu_node import IbeoEcuNode
    from ros_sim_bridge.core.ntp import unix_ns_to_ntp64
    t0 = unix_ns_to_ntp64(time.time_ns())
    state = lambda k: registry.encode_record(ve.EcuVehicleState2807(   # noqa: E731
        timestamp_ntp=t0 + (k << 28), distance_x=k, longitudinal_velocity=1.0))[1]
    inner = encode_message(ve.VEHICLE_STATE_2807, state(9), ntp=t0)
    n = 2000
    scanners = se.make_scanners(1)
    scanners['device_id'] = 1
    body = bytearray(se.encode_scan(se.EcuScan(t0 + (1 << 28), 0,
                                               se.SCAN_FLAG_VEHICLE_COORDINATES, 7, scanners,
                                               np.zeros(n, se.POINT_DTYPE))))
    at = len(body) - 28 * (n // 2)              # mid-points: payload of the scan
    body[at:at + len(inner)] = inner
    path = tmp_path / 'nested.idc'
    with IdcWriter(path) as w:
        w.write(ve.VEHICLE_STATE_2807, state(0), device_id=1, ntp=t0)
        w.write(se.SCAN_2205, bytes(body), device_id=1, ntp=t0 + (1 << 28))
        w.write(ve.VEHICLE_STATE_2807, state(2), device_id=1, ntp=t0 + (2 << 28))
    with IdcReader(path) as r:
        assert [e.data_type for e in r.entries][:3] == [0x2807, 0x2205, 0x2807]
        assert not r.damages and r.entries[1].size == len(body)
    node = ros.start(IbeoEcuNode, {**FAST, 'source': 'file', 'file': str(path), 'rate': 0.0,
                                   'start_paused': True}, namespace='/nest')
    clouds = collect(ros, node, PointCloud2, 'points')
    assert call(ros, Trigger, '/nest/ibeo_ecu/resume').success
    link = file_status(ros, lambda v: v.get('state') == 'finished')
    (cloud,) = clouds.wait_for(1, 10.0)
    assert cloud.width * cloud.height == n
    assert not [k for k in link if k.startswith('errors.')] and link['false_syncs'] == '0', link
    assert node.stats[ve.VEHICLE_STATE_2807].published == 2
