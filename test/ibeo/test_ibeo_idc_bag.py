"""``.idc`` → rosbag2 (MCAP): a generated recording with ECU and LUX types converted, then
every message read back with an independent reader (mcap-ros2-support decodes the MCAP with
the schemas stored in it) and compared field by field with what was written; the clouds and
object lists also against the ``.idc`` records themselves.  The installed ``ibeo_idc``
executable: ``info`` and ``to-bag`` on a damaged file."""
import math
import subprocess

import numpy as np
import pytest
import yaml

from ros_sim_bridge.ibeo.codec import errors_warnings as lux_ew
from ros_sim_bridge.ibeo.codec import objects as lux_objects
from ros_sim_bridge.ibeo.codec import scan as lux_scan
from ros_sim_bridge.ibeo.codec import scan_ecu as se
from ros_sim_bridge.ibeo.codec import vehicle_state as lux_vs
from ros_sim_bridge.ibeo.codec import system_monitoring as sm
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.ecu_recording import write_recording
from ros_sim_bridge.ibeo.idc import IdcReader, IdcWriter
from ros_sim_bridge.ibeo.ros.to_bag import convert
from ros_sim_bridge.ros.bag import BagWriter
from ros_sim_bridge.ros.pointcloud import from_pointcloud2


def add_lux_and_more(path, src):
    """Copy ``src`` and append LUX types, a trace, an undocumented type and a bad scan."""
    with IdcReader(src) as r, IdcWriter(path) as w:
        for e in r.entries[:-1]:                         # without the trailer
            w.write(e.data_type, r.body(e), device_id=e.device_id, ntp=e.ntp)
        ntp = r.entries[-2].ntp + (1 << 32)
        pts = np.zeros(4, lux_scan.POINT_DTYPE)
        pts['layer'] = [0, 1, 2, 3]
        pts['angle_ticks'] = [0, 100, -100, 200]
        pts['distance_cm'] = [1000, 1500, 2000, 2500]
        w.write_record(lux_scan.LuxScan(7, 0x0003, 0, ntp, ntp + 100, 11520, 1600, -1600,
                                        points=pts), device_id=2, ntp=ntp)
        objs = lux_objects.make_objects(1)
        objs['id'] = 44
        w.write_record(lux_objects.LuxObjectList(ntp, objs, [np.array([[1.0, 2.0]])]),
                       device_id=2, ntp=ntp + 1)
        w.write_record(lux_vs.LuxVehicleState(ntp, 7, 0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100,
                                              0.0, 0.0, 0.0, 0.02), device_id=2, ntp=ntp + 2)
        w.write_record(lux_ew.errors_from_names(), device_id=2, ntp=ntp + 3)
        w.write(0x6410, sm.encode_trace(sm.TraceMessage(0x6410, 2, 'DSP warning')),
                device_id=1, ntp=ntp + 4)
        w.write(0x2209, b'\x00' * 64, device_id=1, ntp=ntp + 5)          # undocumented
        bad = bytearray(se.encode_scan(se.EcuScan(ntp, 0, 0, 1)))
        bad[18:20] = b'\xff\xff'                                         # absurd point count
        w.write(0x2205, bytes(bad), device_id=1, ntp=ntp + 6)


class Tee:
    """A BagWriter that also keeps what it was given."""

    def __init__(self, path):
        self.bag = BagWriter(path)
        self.sent = []

    def write_msg(self, topic, t_ns, msg):
        self.sent.append((topic, t_ns, msg))
        self.bag.write_msg(topic, t_ns, msg)

    def write(self, topic, t_ns, cdr, msgtype, *, handed_over=False):   # CdrMessage.parts
        from rclpy.serialization import deserialize_message
        from ros_sim_bridge.ros.cdr_template import message_class
        whole = b''.join(cdr) if isinstance(cdr, tuple) else bytes(cdr)
        self.sent.append((topic, t_ns, deserialize_message(whole, message_class(msgtype))))
        self.bag.write(topic, t_ns, cdr, msgtype, handed_over=handed_over)


def same(ros, dec, path='msg', f32=False):
    """rclpy message ``ros`` equals mcap-decoded ``dec`` field by field (NaN == NaN; float32
    fields compared at float32 precision, which is what travels)."""
    if hasattr(type(ros), 'get_fields_and_field_types'):
        for name, kind in type(ros).get_fields_and_field_types().items():
            same(getattr(ros, name), getattr(dec, name), f'{path}.{name}',
                 kind.startswith('float') or kind.startswith('sequence<float'))
    elif isinstance(ros, (list, tuple)) or (hasattr(ros, '__len__') and not
                                             isinstance(ros, (str, bytes))):
        ros_l, dec_l = list(ros), list(dec)
        assert len(ros_l) == len(dec_l), path
        if ros_l and not hasattr(type(ros_l[0]), 'get_fields_and_field_types'):
            a, b = np.asarray(ros_l), np.asarray(dec_l)
            if f32:
                a, b = a.astype(np.float32), b.astype(np.float32)
            assert np.array_equal(a, b, equal_nan=a.dtype.kind == 'f'), path
        else:
            for k, (x, y) in enumerate(zip(ros_l, dec_l)):
                same(x, y, f'{path}[{k}]')
    elif isinstance(ros, bytes) and isinstance(dec, int):      # a ROS 'byte' field
        assert ros == bytes([dec]), path
    elif isinstance(ros, float):
        a, b = (np.float32(ros), np.float32(dec)) if f32 else (ros, dec)
        assert (math.isnan(a) and math.isnan(b)) or a == b, path
    else:
        assert ros == dec, path


@pytest.fixture(scope='module')
def recording(tmp_path_factory):
    d = tmp_path_factory.mktemp('idc')
    write_recording(d / 'base.idc', seconds=1.0, scanners=3, points=3000)
    add_lux_and_more(d / 'rec.idc', d / 'base.idc')
    return d / 'rec.idc'


def test_idc_to_bag_every_message_read_back_equal(recording, tmp_path):
    tee = Tee(tmp_path / 'bag')
    with IdcReader(recording) as reader:
        report = convert(reader, tmp_path / 'bag', namespace='/ibeo', progress=False,
                         writer=tee)
        good_scans = [e for e in reader.entries if e.data_type == 0x2205][:-1]   # not the bad one
        scans = [reader.decode(e) for e in good_scans]
        objs = [reader.decode(e) for e in reader.entries if e.data_type == 0x2280]
    tee.bag.close()
    assert report.undecodable == {(0x2209, 'unknown_layout'): 1, (0x2205, 'truncated'): 1}
    assert report.without_ros_form[0x1100] == len(scans) and report.without_ros_form[0x6120] == 1
    topics = {t for t, _, _ in tee.sent}
    for t in ('/ibeo/points', '/ibeo/ecu/scan_info', '/tf_static', '/ibeo/ecu/objects',
              '/ibeo/objects/markers', '/ibeo/vehicle_state/odometry', '/ibeo/vehicle_state/fix',
              '/ibeo/gps/fix', '/ibeo/gps_imu/fix', '/ibeo/imu/data', '/ibeo/odometry',
              '/ibeo/odometry/twist', '/ibeo/image/compressed', '/diagnostics',
              '/ibeo/scan_info', '/ibeo/objects', '/ibeo/vehicle_state',
              '/ibeo/vehicle_state/twist'):
        assert t in topics, t

    meta = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())
    assert meta['rosbag2_bagfile_information']['message_count'] == len(tee.sent)

    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    got = []
    with open(next((tmp_path / 'bag').glob('*.mcap')), 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages(
                log_time_order=False):
            got.append((channel.topic, message.log_time, decoded))
    assert len(got) == len(tee.sent)
    key = lambda item: (item[1], item[0])                              # noqa: E731
    for (topic, t, msg), (gtopic, gt, dec) in zip(sorted(tee.sent, key=key, ),
                                                  sorted(got, key=key)):
        assert (topic, t) == (gtopic, gt)
    by_topic = {}
    for topic, t, dec in got:
        by_topic.setdefault(topic, []).append((t, dec))
    sent_by_topic = {}
    for topic, t, msg in tee.sent:
        sent_by_topic.setdefault(topic, []).append((t, msg))
    for topic, items in sent_by_topic.items():
        decs = by_topic[topic]
        assert len(decs) == len(items), topic
        for (t, msg), (gt, dec) in zip(items, decs):
            assert t == gt
            same(msg, dec, topic)

    # independent of the converter: the bag's clouds hold the .idc points, its object lists
    # the .idc objects
    clouds = [d for _, d in by_topic['/ibeo/points']][:len(scans)]
    for scan, cloud in zip(scans, clouds):
        assert cloud.header.frame_id == 'base_link'                   # flag bit 11 set
        assert [f.name for f in cloud.fields] == list(se.POINT_DTYPE.names)
        pts = np.frombuffer(bytes(cloud.data), se.POINT_DTYPE.newbyteorder(
            '>' if cloud.is_bigendian else '<'))
        for name in se.POINT_DTYPE.names:
            assert np.array_equal(pts[name], scan.points[name]), name
        assert len(set(pts['device_id'])) == 3
    lists = [d for _, d in by_topic['/ibeo/ecu/objects']]
    for lst, dec in zip(objs, lists):
        assert [o.id for o in dec.objects] == list(lst.objects['id'])
        assert [o.classification_name for o in dec.objects] == ['car', 'pedestrian', 'truck']
        assert [o.box_center_x for o in dec.objects] == pytest.approx(lst.objects['box_center_x'])
    fix = by_topic['/ibeo/gps/fix'][0][1]
    assert fix.latitude == pytest.approx(52.52) and fix.longitude == pytest.approx(13.40)
    tf = by_topic['/tf_static'][0][1].transforms
    assert sorted(t.child_frame_id for t in tf) == [f'ibeo_scanner_{k}' for k in (10, 11, 12)]


def test_scanner_coordinates_give_one_cloud_per_scanner(tmp_path):
    from ibeo_readback import readback
    from ros_sim_bridge.ibeo.ros.ecu_conversions import scan_clouds
    pts = np.zeros(5, se.POINT_DTYPE)
    pts['device_id'] = [3, 4, 3, 4, 4]
    clouds = [(f, readback(c)) for f, c in scan_clouds(
        se.EcuScan(0, 0, 0, 1, se.make_scanners(2), pts), stamp=(0, 0))]
    assert [(f, c.width) for f, c in clouds] == [('ibeo_scanner_3', 2), ('ibeo_scanner_4', 3)]
    assert [from_pointcloud2(c)['device_id'].tolist() for _, c in clouds] == [[3, 3], [4, 4, 4]]


def _file_order(bag_dir):
    """(topic, log time, message) of every message of a bag, in the order of its file; the
    message as the repr of every field, read back by rosbags (not its CDR bytes: rclpy leaves
    the padding bytes of what it serialises unset)."""
    from mcap.reader import make_reader
    from ros_sim_bridge.ros.bag import typestore
    store = typestore()
    with open(next(bag_dir.glob('*.mcap')), 'rb') as f, np.printoptions(threshold=1 << 62):
        return [(channel.topic, message.log_time,
                 repr(store.deserialize_cdr(message.data, schema.name)))
                for schema, channel, message
                in make_reader(f).iter_messages(log_time_order=False)]


def test_windows_change_nothing_but_the_work_order(recording, tmp_path, monkeypatch):
    """``convert`` converts the small messages of a window ahead, grouped by type: the bag is
    still in file order, field for field what one message at a time gives (WINDOW 1), and the
    report (skipped messages and their offsets, counts) the same; whatever the window and the
    size up to which a message goes ahead."""
    import dataclasses
    import ros_sim_bridge.ibeo.ros.to_bag as cli
    src = tmp_path / 'bad_times.idc'             # two vehicle states with a record time unset
    with IdcReader(recording) as r, IdcWriter(src) as w:
        states = [e for e in r.entries if e.data_type == 0x2807]
        for e in r.entries:
            if e in (states[2], states[4]):
                w.write_record(dataclasses.replace(r.decode(e), timestamp_ntp=2**64 - 1),
                               device_id=e.device_id, ntp=e.ntp)
            else:
                w.write(e.data_type, r.body(e), device_id=e.device_id, ntp=e.ntp)
    results, default = [], cli.IN_ORDER_BYTES
    for window, in_order_bytes in ((1, 0), (cli.WINDOW, default), (7, 1 << 30)):
        monkeypatch.setattr(cli, 'WINDOW', window)
        monkeypatch.setattr(cli, 'IN_ORDER_BYTES', in_order_bytes)
        out = tmp_path / f'bag{window}'
        with IdcReader(src) as reader:
            report = convert(reader, out, namespace='/ibeo', progress=False)
        results.append((_file_order(out), vars(report)))
    one_at_a_time = results[0]
    assert len(one_at_a_time[0]) > 100 and one_at_a_time[1]['first_errors']   # errors too
    assert one_at_a_time[1]['invalid_record_times'] == 2
    with IdcReader(src) as reader:                                     # small and big ones
        assert {e.size <= default for e in reader.entries} == {True, False}
    for other in results[1:]:
        assert other == one_at_a_time


def test_small_scans_stay_in_file_order_for_their_transforms(tmp_path, monkeypatch):
    """A scanner's /tf_static goes with the first scan that shows its mounting: scans are
    converted in file order however small (here 100 points, far below the size that goes
    ahead), so a big and a small scan of one scanner, its mounting changed between them, give
    the bag one message at a time gives."""
    import ros_sim_bridge.ibeo.ros.to_bag as cli
    src = tmp_path / 'mounts.idc'
    with IdcWriter(src) as w:
        for k, (points, yaw) in enumerate(((3000, 0.1), (100, 0.1), (3000, 0.2), (100, 0.3))):
            scanners = se.make_scanners(1)
            scanners['device_id'], scanners['mounting_yaw'] = 1, yaw
            pts = np.zeros(points, se.POINT_DTYPE)
            w.write_record(se.EcuScan((1000 << 32) + (k << 28), 0,
                                      se.SCAN_FLAG_VEHICLE_COORDINATES, k, scanners, pts),
                           device_id=1, ntp=(1000 << 32) + (k << 28))
    with IdcReader(src) as r:                  # one small enough to go ahead by its size
        assert min(e.size for e in r.entries) <= cli.IN_ORDER_BYTES < max(e.size for e in r)
    bags = []
    for window in (1, cli.WINDOW):
        monkeypatch.setattr(cli, 'WINDOW', window)
        with IdcReader(src) as reader:
            convert(reader, tmp_path / f'bag{window}', progress=False)
        bags.append(_file_order(tmp_path / f'bag{window}'))
    assert [topic for topic, *_ in bags[0]].count('/tf_static') == 3       # 0.1, 0.2, 0.3
    assert bags[1] == bags[0]


def test_an_error_met_ahead_is_raised_in_its_turn(recording, tmp_path, monkeypatch):
    """A converter that fails (not a CodecError) on a message converted ahead of its turn:
    the messages before it are still written, the error raised when its turn comes, the bag
    closed; the same bag as one message at a time gives."""
    import ros_sim_bridge.ibeo.ros.to_bag as cli
    from ros_sim_bridge.ibeo.ros.ecu_conversions import IbeoToRos

    class Failing(IbeoToRos):
        def __init__(self):
            super().__init__(namespace='/ibeo')
            self.seen = 0

        def convert(self, header, record, stamp=None):
            if header.data_type == 0x2807:
                self.seen += 1
                if self.seen == 3:
                    raise RuntimeError('converter bug')
            return super().convert(header, record, stamp)

    bags = []
    for window in (1, cli.WINDOW):
        monkeypatch.setattr(cli, 'WINDOW', window)
        with IdcReader(recording) as reader, pytest.raises(RuntimeError, match='converter bug'):
            convert(reader, tmp_path / f'bag{window}', progress=False, converter=Failing())
        bags.append(_file_order(tmp_path / f'bag{window}'))
    assert len(bags[0]) > 10 and bags[1] == bags[0]


def test_a_time_no_stamp_holds_is_counted_and_the_rest_converted(tmp_path):
    """A scan whose NTP start time is no ROS stamp (seconds since power-up past int32: 2**31 +
    5 s) next to a valid header time is an invalid record time: stamped with its header time
    and counted.  A clock that itself runs past 2**31 s (header and start times alike) holds
    no stamp: each such scan is counted as undecodable (bad_value) with its offset; the scans
    around them are in the bag."""
    from rosbags.highlevel import AnyReader
    from ros_sim_bridge.ibeo.ros.ecu_conversions import IbeoToRos
    good, bad = 1_000 << 32, (2**31 + 5) << 32
    pts = np.zeros(3, se.POINT_DTYPE)
    pts['x'] = [1, 2, 3]
    src = tmp_path / 'stamps.idc'
    with IdcWriter(src) as w:            # (scan start, header time)
        for k, (start, t) in enumerate(((good, good), (bad, good + (1 << 30)),
                                        (good + (1 << 31), good + (1 << 31)),
                                        (bad, bad), (bad + (1 << 31), bad + (1 << 31)))):
            w.write_record(se.EcuScan(start, 0, se.SCAN_FLAG_VEHICLE_COORDINATES, k,
                                      se.make_scanners(1), pts), device_id=k // 3 + 1, ntp=t)
    with IdcReader(src) as r:
        report = convert(r, tmp_path / 'bag', progress=False,
                         converter=IbeoToRos())
        offsets = [e.offset for e in r]
    assert report.undecodable == {(0x2205, 'bad_value'): 2}
    assert [offset for offset, _ in report.first_errors] == offsets[3:5]
    assert '2147483653' in report.first_errors[0][1]
    assert report.invalid_record_times == 1
    assert report.invalid_record_time_examples[0][:2] == (offsets[1], 0x2205)
    with AnyReader([tmp_path / 'bag']) as reader:
        clouds = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages()
                  if c.msgtype == 'sensor_msgs/msg/PointCloud2']
    assert [(m.header.stamp.sec, m.header.stamp.nanosec) for m in clouds] == \
        [(1000, 0), (1000, 250_000_000), (1000, 500_000_000)]


def test_installed_cli_info_and_to_bag_on_a_damaged_file(tmp_path):
    from ros_sim_bridge.tools.launcher import executable
    exe = str(executable('ibeo_idc'))
    src = tmp_path / 'src.idc'
    write_recording(src, seconds=0.5, scanners=2, points=500)
    data = bytearray(src.read_bytes())
    with IdcReader(src) as r:
        second = r[1].offset
    data[second:second + 4] = b'XXXX'                 # the second message's magic word
    cut = bytes(data) + b'\xaf\xfe\xc0\xc2junk'        # and a torn message at the end
    (tmp_path / 'bad.idc').write_bytes(cut)
    info = subprocess.run([exe, 'info', str(tmp_path / 'bad.idc')], capture_output=True,
                          text=True, timeout=120)
    assert info.returncode == 0, info.stderr
    assert '0x2205 ecu_scan_2205' in info.stdout and 'damage:    2 region(s)' in info.stdout
    out = subprocess.run([exe, 'to-bag', str(tmp_path / 'bad.idc'), str(tmp_path / 'bag')],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert 'wrote' in out.stdout and (tmp_path / 'bag' / 'metadata.yaml').exists()
    with IdcReader(tmp_path / 'bad.idc') as r:
        skipped = r.summary().bytes_skipped
    assert f'damage: 2 region(s), {skipped} bytes skipped' in out.stdout, out.stdout
    again = subprocess.run([exe, 'to-bag', str(tmp_path / 'bad.idc'), str(tmp_path / 'bag')],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and 'exists' in again.stderr
    assert registry.type_name(0x2205) == 'ecu_scan_2205'


def test_installed_cli_to_bag_interrupted_exits_0_with_a_closed_bag(tmp_path):
    """SIGINT in the middle: exit 0, the progress bar and the message stop where the conversion
    stopped (not 100 %), and the bag is complete and readable up to there."""
    import re
    import signal
    import time
    from ros_sim_bridge.tools.launcher import executable
    src = tmp_path / 'big.idc'
    # ≈ 170 MB: well over what the bag's file thread may hold unwritten (64 MB), so the
    # conversion cannot have run to the end when the bag shows its first 4 MB
    write_recording(src, seconds=8.0, scanners=6, points=60_000)
    bag = tmp_path / 'bag'
    proc = subprocess.Popen([str(executable('ibeo_idc')), 'to-bag', str(src), str(bag)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120

    def mcap_bytes():
        return sum(p.stat().st_size for p in bag.glob('*.mcap'))
    while mcap_bytes() < 4_000_000 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, 'finished before it could be interrupted'
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    stopped = re.search(r'interrupted at byte (\d+) of (\d+) \((\d+) %\)', err)
    assert stopped, err
    at, size = int(stopped.group(1)), int(stopped.group(2))
    assert size == src.stat().st_size and 0 < at < size
    bars = [int(p) for p in re.findall(r'(\d+)%\|', err)]
    assert bars and bars[-1] < 100 and abs(bars[-1] - 100 * at / size) <= 0.5, err[-400:]
    done = re.findall(r'\| ([\d.]+)M/', err)                 # bytes done, as tqdm shows them
    shown = done[-1]                                  # three digits: 9.87M, 16.8M, 123M
    unit = 10.0 ** -(len(shown.split('.')[1]) if '.' in shown else 0)
    assert float(shown) == pytest.approx(at / 1e6, abs=0.5 * unit + 1e-9), err[-400:]
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    with open(next(bag.glob('*.mcap')), 'rb') as f:
        msgs = list(make_reader(f, decoder_factories=[DecoderFactory()])
                    .iter_decoded_messages(log_time_order=False))
    assert 0 < len(msgs) == meta['message_count']
    clouds = [m for _, ch, _, m in msgs if ch.topic == '/ibeo/points']
    assert clouds and all(c.width == 60_000 for c in clouds)
    with IdcReader(src) as r:                       # the bag holds the file's first scans
        scans = [e for e in r if e.data_type == 0x2205 and e.end <= at]
    assert len(clouds) == len(scans)


def test_real_ldmrs_capture_to_bag(tmp_path):
    """Real LD-MRS bytes (SUPPLEMENT §3.1) as an .idc → bag through the LUX conversions: one
    cloud and one scan info per real scan, the 0x2030s on /diagnostics."""
    from conftest import shared_path
    msgs = []
    for name in ('20120921-200352_record.hexlog', '20120921-200644_record.hexlog'):
        text = shared_path('samples', 'ibeo', 'raulexposito-ldmrs', name).read_text()
        msgs += [bytes.fromhex(x.strip()) for x in text.splitlines() if x.strip()]
    (tmp_path / 'real.idc').write_bytes(b''.join(msgs))
    with IdcReader(tmp_path / 'real.idc') as reader:
        report = convert(reader, tmp_path / 'bag', progress=False)
        points = [len(reader.decode(e).points) for e in reader if e.data_type == 0x2202]
    assert not report.undecodable
    assert report.written['/points'] == report.written['/scan_info'] == 71
    assert report.written['/diagnostics'] == 129
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    with open(next((tmp_path / 'bag').glob('*.mcap')), 'rb') as f:
        clouds = [d for _, ch, _, d in make_reader(f, decoder_factories=[DecoderFactory()])
                  .iter_decoded_messages(topics=['/points'], log_time_order=False)]
    assert [c.width for c in clouds] == points
    assert all(c.header.frame_id == 'laser' for c in clouds)


def diagnostic_names(bag) -> set:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    with open(next(bag.glob('*.mcap')), 'rb') as f:
        return {st.name for _, _, _, d in make_reader(f, decoder_factories=[DecoderFactory()])
                .iter_decoded_messages(topics=['/diagnostics'], log_time_order=False)
                for st in d.status}


def test_installed_to_bag_names_diagnostics_as_the_live_driver_does(tmp_path):
    """Status names as the node that would publish the recording live: ibeo_ecu for an ECU
    recording, ibeo_lux for LUX types only, or --node-name."""
    from ros_sim_bridge.tools.launcher import executable
    exe = str(executable('ibeo_idc'))
    ecu, lux = tmp_path / 'ecu.idc', tmp_path / 'lux.idc'
    write_recording(ecu, seconds=0.2, scanners=2, points=100)
    with IdcWriter(lux) as w:
        w.write_record(lux_ew.errors_from_names('E-Temp', 'W-Sync'), ntp=1 << 32)

    def to_bag(src, name, *more):
        out = subprocess.run([exe, 'to-bag', str(src), str(tmp_path / name), '--no-progress',
                              *more], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return diagnostic_names(tmp_path / name)
    names = to_bag(ecu, 'ecu_bag')
    assert any(n.startswith('ibeo_ecu: device 10 ') for n in names), names
    assert all(n.startswith('ibeo_ecu: ') for n in names), names
    assert to_bag(lux, 'lux_bag') == {'ibeo_lux: sensor errors', 'ibeo_lux: sensor warnings'}
    assert to_bag(lux, 'mine', '--node-name', 'front_lux') == \
        {'front_lux: sensor errors', 'front_lux: sensor warnings'}
