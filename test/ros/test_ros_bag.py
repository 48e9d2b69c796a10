"""ros/bag.py: bags written from rclpy messages read back by two independent readers
(mcap-ros2-support decodes the MCAP with the schema stored in it; rosbags reads the rosbag2
folder), field by field; standard, nested custom and TF types."""
import numpy as np
import pytest
import yaml
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.msg import LuxObject, LuxObjectList
from ros_sim_bridge.ros.bag import BagWriter, _McapFile, type_name

BagWriter_BIG = _McapFile.BIG
from ros_sim_bridge.ros.pointcloud import to_pointcloud2


def _messages():
    odom = Odometry()
    odom.header.frame_id = 'map'
    odom.header.stamp.sec, odom.header.stamp.nanosec = 12, 345
    odom.child_frame_id = 'ego'
    odom.pose.pose.position.x, odom.pose.pose.position.y = 1.5, -2.25
    odom.twist.twist.linear.x = 3.0
    tf = TransformStamped()
    tf.header.frame_id, tf.child_frame_id = 'map', 'car_7'
    tf.transform.translation.z = 0.5
    tf.transform.rotation.w = 1.0
    objs = LuxObjectList()
    objs.header.frame_id = 'lux'
    for i in range(3):
        o = LuxObject()
        o.id = 10 + i
        o.classification_name = f'car{i}'
        objs.objects.append(o)
    pts = np.zeros(4, np.dtype([('x', 'f4'), ('y', 'f4'), ('z', 'f4'), ('layer', 'u1')]))
    pts['x'] = [1, 2, 3, 4]
    pts['layer'] = [0, 1, 2, 3]
    cloud = to_pointcloud2(pts, odom.header)
    return [('/odom', odom), ('/tf', TFMessage(transforms=[tf])), ('/objects', objs),
            ('/points', cloud)]


def test_bag_read_back_by_mcap_and_rosbags(tmp_path):
    bag = tmp_path / 'bag'
    msgs = _messages()
    with BagWriter(bag) as writer:
        for k, (topic, msg) in enumerate(msgs):
            writer.write_msg(topic, 1_000_000_000 + k, msg)
            writer.write_msg(topic, 2_000_000_000 + k, msg)
    assert writer.counts == {t: 2 for t, _ in msgs}
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['storage_identifier'] == 'mcap' and meta['message_count'] == 8
    topics = {t['topic_metadata']['name']: t['topic_metadata']['type']
              for t in meta['topics_with_message_count']}
    assert topics['/objects'] == 'ros_sim_bridge/msg/LuxObjectList'
    assert topics['/tf'] == 'tf2_msgs/msg/TFMessage'

    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    mcap_file = next(bag.glob('*.mcap'))
    seen = {}
    with open(mcap_file, 'rb') as f:
        for schema, channel, message, decoded in make_reader(
                f, decoder_factories=[DecoderFactory()]).iter_decoded_messages():
            seen.setdefault(channel.topic, []).append((message.log_time, decoded))
    assert [t for t, _ in seen['/odom']] == [1_000_000_000, 2_000_000_000]
    odom = seen['/odom'][0][1]
    assert (odom.header.stamp.sec, odom.header.stamp.nanosec) == (12, 345)
    assert odom.child_frame_id == 'ego' and odom.pose.pose.position.y == -2.25
    assert seen['/tf'][0][1].transforms[0].child_frame_id == 'car_7'
    objs = seen['/objects'][0][1].objects
    assert [o.id for o in objs] == [10, 11, 12]
    assert [o.classification_name for o in objs] == ['car0', 'car1', 'car2']
    cloud = seen['/points'][0][1]
    assert cloud.width == 4 and [f.name for f in cloud.fields] == ['x', 'y', 'z', 'layer']
    x = np.frombuffer(bytes(cloud.data), np.float32, count=4, offset=0)
    assert x[0] == 1.0

    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        store = writer.store
        by_topic = {}
        for conn, t, raw in reader.messages():
            by_topic.setdefault(conn.topic, []).append(store.deserialize_cdr(raw, conn.msgtype))
    assert by_topic['/objects'][1].objects[2].classification_name == 'car2'
    assert by_topic['/odom'][0].twist.twist.linear.x == 3.0


def test_bag_refuses_existing_folder_unknown_type_and_type_change(tmp_path):
    (tmp_path / 'old').mkdir()
    with pytest.raises(FileExistsError):
        BagWriter(tmp_path / 'old')
    with BagWriter(tmp_path / 'b') as writer:
        with pytest.raises(KeyError, match='not known'):
            writer.add_topic('/x', 'nope_msgs/msg/Nothing')
        writer.write_msg('/odom', 1, Odometry())
        with pytest.raises(ValueError, match='recorded as'):
            writer.write_msg('/odom', 2, TFMessage())
        with pytest.raises(KeyError, match='no type'):
            writer.write('/never', 3, b'')
    assert type_name(Odometry) == 'nav_msgs/msg/Odometry'


def _mcap_records(bag):
    """Every top-level record of the bag's MCAP file, in file order (mcap's stream reader, which
    checks the magic, record framing and footer)."""
    from mcap.stream_reader import StreamReader
    with open(next(bag.glob('*.mcap')), 'rb') as f:
        return list(StreamReader(f, emit_chunks=True).records)


def _check_indexes(bag, summary) -> int:
    """Every chunk index points at a chunk record, and at message index records whose (time,
    offset) entries each land on a message record of that channel and log time inside the
    chunk (offsets read from the file bytes, layout per the MCAP spec); returns the entries."""
    import struct
    raw = next(bag.glob('*.mcap')).read_bytes()
    entries = 0
    for ci in summary.chunk_indexes:
        start = ci.chunk_start_offset
        assert raw[start] == 0x06
        assert 9 + struct.unpack_from('<Q', raw, start + 1)[0] == ci.chunk_length
        s, e, size = struct.unpack_from('<QQQ', raw, start + 9)
        assert (s, e, size) == (ci.message_start_time, ci.message_end_time,
                                ci.uncompressed_size)
        records = start + 9 + 8 * 3 + 4 + 4 + 8          # no compression: records follow
        assert raw[records - 12:records - 8] == b'\0\0\0\0'
        for channel, at in ci.message_index_offsets.items():
            assert raw[at] == 0x07
            ch, length = struct.unpack_from('<HI', raw, at + 9)
            assert ch == channel
            for t, off in struct.iter_unpack('<QQ', raw[at + 15:at + 15 + length]):
                assert off < size and raw[records + off] == 0x05
                assert struct.unpack_from('<HIQ', raw, records + off + 9) == (channel, 0, t)
                assert s <= t <= e
                entries += 1
    return entries


def _raw_by_mcap(bag):
    """(topic, log time, publish time, data) of every message, via mcap's indexed reader."""
    from mcap.reader import make_reader
    with open(next(bag.glob('*.mcap')), 'rb') as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        msgs = [(channel.topic, m.log_time, m.publish_time, bytes(m.data))
                for _, channel, m in reader.iter_messages(log_time_order=False)]
    return summary, msgs


def _raw_by_rosbags(bag):
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        msgs = [(conn.topic, t, bytes(raw)) for conn, t, raw in reader.messages()]
        info = (reader.message_count, reader.start_time, reader.duration,
                {c.topic: (c.msgtype, c.digest, c.ext.offered_qos_profiles, c.msgcount)
                 for c in reader.connections})
    return info, msgs


def test_bag_many_small_messages_over_many_chunks(tmp_path):
    """20,000 odometry messages and 10,000 TF messages (several MiB: many 1 MiB chunks), from
    CDR bytes and rclpy messages, come back complete, in order and field for field."""
    from rclpy.serialization import deserialize_message, serialize_message
    bag = tmp_path / 'many'
    expected = []
    with BagWriter(bag) as writer:
        for i in range(20_000):
            odom = Odometry()
            odom.header.stamp.sec, odom.header.stamp.nanosec = i // 10, (i % 10) * 100_000_000
            odom.pose.pose.position.x = float(i)
            odom.child_frame_id = f'ego{i % 7}'
            t = 1_700_000_000_000_000_000 + i * 10_000_000
            raw = serialize_message(odom)
            writer.write('/odom', t, raw, 'nav_msgs/msg/Odometry')
            expected.append(('/odom', t, raw))
            if i % 2:
                tf = TransformStamped()
                tf.child_frame_id = f'car_{i}'
                tf.transform.translation.y = -float(i)
                writer.write_msg('/tf', t + 1, TFMessage(transforms=[tf]))
                expected.append(('/tf', t + 1, TFMessage(transforms=[tf])))
    assert writer.counts == {'/odom': 20_000, '/tf': 10_000}

    summary, by_mcap = _raw_by_mcap(bag)
    # write_msg's bytes are rclpy's but for the padding (zero; rclpy leaves what was there)
    assert [(topic, t, deserialize_message(data, TFMessage) if topic == '/tf' else data)
            for topic, t, _, data in by_mcap] == expected
    assert all(log == pub for _, log, pub, _ in by_mcap)
    assert summary.statistics.message_count == 30_000
    assert len(summary.chunk_indexes) > 5      # several chunks, every one indexed
    assert _check_indexes(bag, summary) == 30_000
    assert sum(ci.uncompressed_size for ci in summary.chunk_indexes) > 5 << 20
    (count, start, duration, conns), by_rosbags = _raw_by_rosbags(bag)
    assert [(topic, t, deserialize_message(data, TFMessage) if topic == '/tf' else data)
            for topic, t, data in by_rosbags] == expected and count == 30_000
    assert start == expected[0][1] and duration >= expected[-1][1] - expected[0][1]

    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    with open(next(bag.glob('*.mcap')), 'rb') as f:
        decoded = [(c.topic, d) for _, c, _, d in make_reader(
            f, decoder_factories=[DecoderFactory()]).iter_decoded_messages(topics=['/odom'])]
    assert [d.pose.pose.position.x for _, d in decoded] == [float(i) for i in range(20_000)]
    assert decoded[12_345][1].child_frame_id == 'ego4'
    assert (decoded[12_345][1].header.stamp.sec, decoded[12_345][1].header.stamp.nanosec) == \
        (1234, 500_000_000)


def test_bag_large_messages_beyond_64_mib(tmp_path):
    """Forty 2 MiB clouds (80 MiB in all) interleaved with small messages: every byte back, in
    file order, through both readers; big messages sit in chunks of their own."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import PointCloud2
    bag = tmp_path / 'large'
    sent = []
    with BagWriter(bag) as writer:
        for i in range(40):
            cloud = PointCloud2()
            cloud.header.frame_id = f'lux{i % 6}'
            cloud.height, cloud.width, cloud.point_step = 1, 1 << 19, 4
            cloud.row_step = cloud.width * 4
            data = np.full(1 << 21, i, np.uint8)
            data[-1] = 255 - i
            data[:4] = np.frombuffer(np.uint32(i * 7919).tobytes(), np.uint8)
            cloud.data = data.tobytes()
            t = 5_000_000_000 + i * 80_000_000
            raw = serialize_message(cloud)
            writer.write('/points', t, raw, 'sensor_msgs/msg/PointCloud2')
            sent.append(('/points', t, raw))
            odom = Odometry()
            odom.pose.pose.position.z = float(i)
            writer.write_msg('/odom', t + 1, odom)
            sent.append(('/odom', t + 1, serialize_message(odom)))
    assert sum(len(raw) for topic, _, raw in sent if topic == '/points') > 64 << 20
    assert (bag / 'large.mcap').stat().st_size > 64 << 20

    summary, by_mcap = _raw_by_mcap(bag)
    assert [(topic, t, data) for topic, t, _, data in by_mcap] == sent
    big_chunks = [ci for ci in summary.chunk_indexes if ci.uncompressed_size > 2 << 20]
    assert len(big_chunks) == 40
    assert _check_indexes(bag, summary) == 80
    assert all(ci.message_start_time == ci.message_end_time for ci in big_chunks)
    (count, _, _, _), by_rosbags = _raw_by_rosbags(bag)
    assert count == 80 and by_rosbags == sent

    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        for conn, t, raw in reader.messages(connections=[
                c for c in reader.connections if c.topic == '/points']):
            cloud = writer.store.deserialize_cdr(raw, conn.msgtype)
            i = (t - 5_000_000_000) // 80_000_000
            assert cloud.header.frame_id == f'lux{i % 6}' and cloud.width == 1 << 19
            assert int(np.frombuffer(cloud.data[:4].tobytes(), np.uint32)[0]) == i * 7919
            assert cloud.data[100] == i and cloud.data[-1] == 255 - i


@pytest.mark.parametrize('distro,version', [('kilted', 9), ('jazzy', 8)])
def test_bag_metadata_matches_what_was_written(tmp_path, monkeypatch, distro, version):
    """metadata.yaml (and the copy inside the MCAP) states the counts, time span, topics, types,
    type hashes, serialization format and offered QoS of what was written; rosbags parses it;
    the MCAP holds every schema (message definition text) and channel before its messages."""
    from rosbags.interfaces import QosDurability, QosReliability
    from rosbags.rosbag2.metadata import parse_qos
    monkeypatch.setenv('ROS_DISTRO', distro)
    bag = tmp_path / 'meta'
    times = {'/odom': [30, 10, 20], '/tf': [15], '/tf_static': [12], '/objects': [40, 41]}
    with BagWriter(bag) as writer:
        for topic, ts in times.items():
            msg = dict(_messages())[topic] if topic in ('/odom', '/tf', '/objects') \
                else TFMessage()
            for t in ts:
                writer.write_msg(topic, t, msg)
        writer.add_topic('/silent', 'std_msgs/msg/String')
    store = writer.store
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['version'] == version and meta['storage_identifier'] == 'mcap'
    assert meta['relative_file_paths'] == ['meta.mcap'] and (bag / 'meta.mcap').is_file()
    assert meta['message_count'] == 7
    assert meta['starting_time'] == {'nanoseconds_since_epoch': 10}
    assert meta['duration'] == {'nanoseconds': 31}
    assert meta['files'] == [{'path': 'meta.mcap', 'message_count': 7,
                              'starting_time': {'nanoseconds_since_epoch': 10},
                              'duration': {'nanoseconds': 31}}]
    assert meta['compression_format'] == '' and meta['compression_mode'] == ''
    topics = {t['topic_metadata']['name']: t for t in meta['topics_with_message_count']}
    assert {name: t['message_count'] for name, t in topics.items()} == \
        {'/odom': 3, '/tf': 1, '/tf_static': 1, '/objects': 2, '/silent': 0}
    types = {'/odom': 'nav_msgs/msg/Odometry', '/tf': 'tf2_msgs/msg/TFMessage',
             '/tf_static': 'tf2_msgs/msg/TFMessage',
             '/objects': 'ros_sim_bridge/msg/LuxObjectList', '/silent': 'std_msgs/msg/String'}
    for name, t in topics.items():
        tm = t['topic_metadata']
        assert tm['type'] == types[name] and tm['serialization_format'] == 'cdr'
        assert tm['type_description_hash'] == store.hash_rihs01(types[name])
        assert tm['type_description_hash'].startswith('RIHS01_')
        qos = tm['offered_qos_profiles']
        assert isinstance(qos, list if version == 9 else str)
        (profile,) = parse_qos(qos)
        assert profile.reliability == QosReliability.RELIABLE
        assert profile.durability == (QosDurability.TRANSIENT_LOCAL if name == '/tf_static'
                                      else QosDurability.VOLATILE)
        assert profile.depth == {'/tf_static': 1, '/tf': 100}.get(name, 10)

    (count, start, _, conns), _ = _raw_by_rosbags(bag)
    assert count == 7 and start == 10
    assert {topic: (c[0], c[1], c[3]) for topic, c in conns.items()} == \
        {name: (types[name], store.hash_rihs01(types[name]), t['message_count'])
         for name, t in topics.items()}
    assert conns['/tf_static'][2][0].durability == QosDurability.TRANSIENT_LOCAL

    from mcap.records import Channel, Chunk, DataEnd, Footer, Header, Metadata, Schema
    records = _mcap_records(bag)
    assert isinstance(records[0], Header) and records[0].profile == 'ros2'
    assert isinstance(records[-1], Footer)
    assert sum(isinstance(r, DataEnd) for r in records) == 1
    schemas = {r.id: r for r in records if isinstance(r, Schema)}
    assert sorted(s.name for s in schemas.values()) == sorted(set(types.values()))
    for s in schemas.values():
        assert s.encoding == 'ros2msg'
        assert s.data.decode() == store.generate_msgdef(s.name, ros_version=2)[0]
    first = {}
    for k, r in enumerate(records):
        if isinstance(r, Channel):
            assert r.message_encoding == 'cdr' and r.schema_id in schemas
            assert parse_qos(r.metadata['offered_qos_profiles']) == \
                parse_qos(topics[r.topic]['topic_metadata']['offered_qos_profiles'])
            first.setdefault(r.topic, k)
        elif isinstance(r, Chunk):
            assert first, 'a chunk before any channel'
    (inner,) = [r for r in records if isinstance(r, Metadata) and r.name == 'rosbag2']
    assert yaml.safe_load(inner.metadata['serialized_metadata']) == meta


def test_bag_empty_is_readable(tmp_path):
    with BagWriter(tmp_path / 'empty') as writer:
        writer.add_topic('/odom', 'nav_msgs/msg/Odometry')
    (count, _, _, conns), msgs = _raw_by_rosbags(tmp_path / 'empty')
    assert count == 0 and msgs == [] and list(conns) == ['/odom']
    summary, msgs = _raw_by_mcap(tmp_path / 'empty')
    assert msgs == [] and summary.statistics.message_count == 0


@pytest.mark.parametrize('handed_over', [False, True])
def test_bag_takes_any_buffer(tmp_path, handed_over):
    """bytes, bytearray, memoryview and numpy arrays (any item size, big or small) are written
    byte for byte, in the caller's thread or (handed over) in the file's."""
    big = np.arange(100_000, dtype=np.float32)          # 400 kB: a chunk of its own
    small = np.arange(10, dtype=np.uint16)
    payloads = [b'\x00\x01\x00\x00' + bytes(8), bytearray(b'\x00\x01\x00\x00abcd'), big,
                memoryview(small), small[::1]]
    with BagWriter(tmp_path / 'buf') as writer:
        for k, data in enumerate(payloads):
            writer.write('/raw', 100 + k, data, 'std_msgs/msg/String', handed_over=handed_over)
    _, msgs = _raw_by_mcap(tmp_path / 'buf')
    assert [data for _, _, _, data in msgs] == [bytes(memoryview(p).cast('B')) for p in payloads]
    assert [t for _, t, _, _ in msgs] == [100, 101, 102, 103, 104]


def test_bag_writer_function_writes_what_write_writes(tmp_path):
    """BagWriter.writer(topic, type) (the checks done once) gives the same file as write()."""
    rows = [memoryview(r) for r in np.arange(4 * 70_000, dtype=np.uint8).reshape(4, -1)] + \
        [memoryview(np.zeros(300_000, np.uint8))]         # small rows and one big message
    payloads = [b'\x00\x01\x00\x00abcd', bytearray(b'\x00\x01\x00\x00efgh'), *rows]
    for name, fast in (('slow', False), ('fast', True)):
        with BagWriter(tmp_path / name) as bag:
            write = bag.writer('/raw', 'std_msgs/msg/String') if fast else None
            for k, data in enumerate(payloads):
                if fast:
                    write(100 + k, data)
                else:
                    bag.write('/raw', 100 + k, data, 'std_msgs/msg/String')
            assert bag.counts == {'/raw': len(payloads)}
    assert (tmp_path / 'fast' / 'fast.mcap').read_bytes().replace(b'fast', b'slow') == \
        (tmp_path / 'slow' / 'slow.mcap').read_bytes()
    _, msgs = _raw_by_mcap(tmp_path / 'fast')
    assert [data for _, _, _, data in msgs] == [bytes(p) for p in payloads]


@pytest.mark.parametrize('sizes', [(40, 9_000, 120), (300, 70_000), (300_000, 8)],
                         ids=['small', 'frames-of-140kB', 'a-big-column'])
def test_bag_write_rows_writes_the_messages_write_writes(tmp_path, sizes):
    """write_rows (many frames of one message per topic at once) gives the messages write()
    gives, in the same order: frame by frame, topics in column order; the chunks and their
    indexes are valid (frames go whole into a chunk, so the chunk bounds may differ)."""
    rng = np.random.default_rng(7)
    frames = 40
    t = (10**18 + np.arange(frames) * 50_000_000).tolist()
    topics = [f'/t{k}' for k in range(len(sizes))]
    columns = [(topic, rng.integers(0, 256, (frames, n), dtype=np.uint8))
               for topic, n in zip(topics, sizes)]
    with BagWriter(tmp_path / 'slow') as bag:
        for i in range(frames):
            for topic, rows in columns:
                bag.write(topic, t[i], rows[i], 'std_msgs/msg/String')
    with BagWriter(tmp_path / 'fast') as bag:
        for topic in topics:
            bag.add_topic(topic, 'std_msgs/msg/String')
        bag.write('/t0', t[0] - 1, b'\x00\x01\x00\x00before')      # a chunk already begun
        bag.write_rows(t[:5], [(topic, rows[:5]) for topic, rows in columns])
        bag.write_rows(t[5:], [(topic, rows[5:]) for topic, rows in columns])
        assert bag.counts == {topic: frames + (topic == '/t0') for topic in topics}
    slow_summary, slow = _raw_by_mcap(tmp_path / 'slow')
    fast_summary, fast = _raw_by_mcap(tmp_path / 'fast')
    assert fast[0] == ('/t0', t[0] - 1, t[0] - 1, b'\x00\x01\x00\x00before')
    assert fast[1:] == slow
    assert _check_indexes(tmp_path / 'fast', fast_summary) == len(fast)
    stats = fast_summary.statistics
    assert stats.message_count == len(fast)
    assert (stats.message_start_time, stats.message_end_time) == (t[0] - 1, t[-1])
    if max(sizes) < BagWriter_BIG:
        assert len(fast_summary.chunk_indexes) > 1 or sum(sizes) * frames < 1 << 20
    _, by_rosbags = _raw_by_rosbags(tmp_path / 'fast')
    assert [data for _, _, data in by_rosbags] == [data for _, _, _, data in fast]


def test_bag_written_direct_from_the_first_byte_reads_back(tmp_path, monkeypatch):
    """The O_DIRECT way (a bag past WriteBehindFile.DIRECT_AFTER; here from byte 0): small
    messages, rows, big messages (copied and handed over) and the unaligned end all read
    back byte for byte with mcap and rosbags."""
    from ros_sim_bridge.core.write_behind import WriteBehindFile
    monkeypatch.setattr(WriteBehindFile, 'DIRECT_AFTER', 0)
    rng = np.random.default_rng(3)
    expected = []
    with BagWriter(tmp_path / 'direct') as bag:
        bag.add_topic('/rows', 'std_msgs/msg/String')
        for k in range(30):
            small = rng.integers(0, 256, 1 + 997 * k, dtype=np.uint8).tobytes()
            bag.write('/small', 1000 + 3 * k, small, 'std_msgs/msg/String')
            expected.append(('/small', 1000 + 3 * k, small))
            rows = rng.integers(0, 256, (4, 50_000), dtype=np.uint8)
            bag.write_rows([1001 + 3 * k] * 4, [('/rows', rows)])
            expected += [('/rows', 1001 + 3 * k, r.tobytes()) for r in rows]
            if k % 10 == 9:
                big = bytearray(rng.integers(0, 256, 3_000_001, dtype=np.uint8).tobytes())
                bag.write('/big', 1002 + 3 * k, big, 'std_msgs/msg/String')
                expected.append(('/big', 1002 + 3 * k, bytes(big)))
                big[:] = bytes(len(big))                  # the caller's again at once
    summary, msgs = _raw_by_mcap(tmp_path / 'direct')
    assert [(topic, t, data) for topic, t, _, data in msgs] == expected
    assert _check_indexes(tmp_path / 'direct', summary) == len(expected)
    _, by_rosbags = _raw_by_rosbags(tmp_path / 'direct')
    assert sorted(by_rosbags) == sorted(expected)


def test_recorder_keeps_the_publishers_qos_for_replay(ros, tmp_path):
    """ros_sim_bridge_run --record: a latched topic (e.g. /rflysim/map_origin) is recorded as
    latched and a best-effort one as best effort, so `ros2 bag play` offers what a subscriber
    of the live topic was matched with (was: reliable volatile but for tf_static)."""
    from rclpy.node import Node
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from rosbags.interfaces import QosDurability, QosReliability
    from rosbags.rosbag2 import Reader
    from std_msgs.msg import String
    from conftest import wait_until
    from ros_sim_bridge.tools.run import Recorder

    class _Plain(Node):
        def __init__(self, **kwargs):
            super().__init__('recorder_qos_probe', **kwargs)

    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
    best_effort = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
    pubs = ros.start(_Plain)
    origin = pubs.create_publisher(String, '/recorder_qos/origin', latched)
    fast = pubs.create_publisher(String, '/recorder_qos/fast', best_effort)
    origin.publish(String(data='origin'))
    writer = BagWriter(tmp_path / 'bag')
    recorder = Recorder(ros.start(_Plain, namespace='rec'), writer, period=0.1)
    assert wait_until(lambda: {'/recorder_qos/origin', '/recorder_qos/fast'} <= set(
        recorder.subs), timeout=10)
    fast.publish(String(data='x'))
    recorder.drain(quiet=0.3, timeout=2.0)
    recorder.close()
    with Reader(tmp_path / 'bag') as reader:
        qos = {c.topic: c.ext.offered_qos_profiles[0] for c in reader.connections}
    assert qos['/recorder_qos/origin'].durability == QosDurability.TRANSIENT_LOCAL
    assert qos['/recorder_qos/origin'].reliability == QosReliability.RELIABLE
    assert qos['/recorder_qos/fast'].durability == QosDurability.VOLATILE
    assert qos['/recorder_qos/fast'].reliability == QosReliability.BEST_EFFORT


def test_metadata_yaml_reads_back_as_written():
    """The bag's own YAML writer: every string reads back as itself (YAML's words for
    booleans and null, numbers, quotes, colons, non-ASCII, line breaks quoted), lists of
    mappings and empty ones as PyYAML lays them out."""
    from ros_sim_bridge.ros.bag import _yaml
    tricky = ['', 'true', 'No', 'null', '~', '1.5', '1e5', '0x10', '.inf', "it's", 'a b',
              'ü', '-x', 'x: y', '#c', 'two\nlines', 'tab\there', '\u2028', '/ns/topic_1',
              'RIHS01_ab', 'ros_sim_bridge/msg/IbeoObject', 'drive_\U0001F600', '\U0010FFFF',
              'a\\ud83d\\ude00b', '"q"\\', '\x7f\x85\ufeff']
    data = {'strings': tricky, 'map': {s: s for s in tricky}, 'empty': {}, 'none': [],
            'items': [{'a': 1, 'b': [{'c': False, 'd': None}]}, {}, 2, []]}
    assert yaml.safe_load(_yaml(data)) == data
    assert yaml.safe_load(_yaml([{'x': 1}, {'y': 'z'}])) == [{'x': 1}, {'y': 'z'}]
    assert _yaml({'b': [{'c': 1, 'd': 2}], 'a': ''}) == "a: ''\nb:\n- c: 1\n  d: 2\n"


def test_bag_in_a_folder_named_beyond_the_basic_plane_reads_back(tmp_path):
    """A folder (so the MCAP's name in metadata.yaml) with a character beyond U+FFFF: rosbags
    finds the file and reads the message."""
    from rosbags.highlevel import AnyReader
    bag = tmp_path / 'drive_\U0001F600'
    with BagWriter(bag) as writer:
        writer.write_msg('/tf', 7, TFMessage())
    with AnyReader([bag]) as reader:
        assert [(c.topic, t) for c, t, _ in reader.messages()] == [('/tf', 7)]


def test_type_definitions_are_kept_under_their_key(tmp_path, monkeypatch):
    """The (definition, hash) of each type written is kept in a cache file that holds its key
    (distribution, rosbags, the package's .msg files); a later writer with the same key uses
    what is kept, one whose key differs (e.g. a .msg edited) does not."""
    import json
    from ros_sim_bridge.ros import bag as bag_module
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))
    monkeypatch.setenv('ROS_DISTRO', 'kilted')
    with BagWriter(tmp_path / 'first') as writer:
        writer.write_msg('/tf_static', 1, TFMessage())
    files = list((tmp_path / 'cache' / 'ros_sim_bridge' / 'bag_types').glob('*.json'))
    assert len(files) == 1
    kept = json.loads(files[0].read_text())
    definition, digest = kept['types']['tf2_msgs/msg/TFMessage']
    assert 'geometry_msgs/TransformStamped[] transforms' in definition
    assert digest.startswith('RIHS01_')
    again = bag_module._DefinitionCache('kilted', None)
    assert again.path == files[0] and again.key == kept['key']
    assert again.types == {'tf2_msgs/msg/TFMessage': (definition, digest)}
    kept['key'][-1][1] += 1                                 # a .msg file of another size
    files[0].write_text(json.dumps(kept))
    assert bag_module._DefinitionCache('kilted', None).types == {}
