"""PointCloud2 from a structured dtype, through real serialization; diagnostics counters."""
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import PointCloud2, PointField
from std_msgs.msg import Header

from ros_sim_bridge.core.binary import TRUNCATED, CodecError
from ros_sim_bridge.ros.pointcloud import CloudBuffer, from_pointcloud2, to_pointcloud2
from ros_sim_bridge.ros.diagnostics import OK, WARN, StreamStats
from conftest import wait_until

POINT = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('layer', 'u1'), ('echo', 'u1'),
                  ('flags', '<u2'), ('echo_width', '<f4'), ('t', '<f8')])


def test_fields_follow_the_dtype():
    pts = np.zeros(3, POINT)
    msg = to_pointcloud2(pts, Header(frame_id='laser'))
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        ('x', 0, PointField.FLOAT32, 1), ('y', 4, PointField.FLOAT32, 1),
        ('z', 8, PointField.FLOAT32, 1), ('layer', 12, PointField.UINT8, 1),
        ('echo', 13, PointField.UINT8, 1), ('flags', 14, PointField.UINT16, 1),
        ('echo_width', 16, PointField.FLOAT32, 1), ('t', 20, PointField.FLOAT64, 1)]
    assert (msg.point_step, msg.row_step, msg.width, msg.height) == (28, 84, 3, 1)
    assert msg.header.frame_id == 'laser' and not msg.is_bigendian


def test_values_survive_serialization():
    rng = np.random.default_rng(1)
    pts = np.zeros(1000, POINT)
    for name in ('x', 'y', 'z', 'echo_width', 't'):
        pts[name] = rng.normal(size=1000)
    pts['layer'] = rng.integers(0, 8, 1000)
    pts['flags'] = rng.integers(0, 65535, 1000)
    wire = serialize_message(to_pointcloud2(pts, Header()))
    back = from_pointcloud2(deserialize_message(wire, PointCloud2))
    for name in POINT.names:
        np.testing.assert_array_equal(back[name], pts[name])


def test_big_endian_input_is_converted():
    pts = np.array([(1.5, -2.0)], dtype=[('x', '>f4'), ('y', '>f4')])
    back = from_pointcloud2(to_pointcloud2(pts, Header()))
    assert back['x'][0] == 1.5 and back['y'][0] == -2.0


def test_cloud_buffer_holds_the_points_it_handed_out():
    buf = CloudBuffer(POINT)
    for n in (1000, 10, 2000, 0, 5):                 # grows, shrinks, empties, grows again
        pts = buf.points(n)
        assert pts.dtype == POINT and len(pts) == n and pts.flags.writeable
        pts['x'] = np.arange(n)
        pts['flags'] = 7
        msg = buf.message(pts, Header(frame_id='laser'), is_dense=n != 5)
        del pts                                      # the buffer is resized by the next call
        assert (msg.width, msg.height, msg.point_step, msg.row_step) == (n, 1, 28, 28 * n)
        assert msg.is_dense == (n != 5) and not msg.is_bigendian
        assert [f.name for f in msg.fields] == list(POINT.names)
        back = from_pointcloud2(deserialize_message(serialize_message(msg), PointCloud2))
        np.testing.assert_array_equal(back['x'], np.arange(n, dtype=np.float32))
        assert (back['flags'] == 7).all()


def test_cloud_buffer_refuses_a_foreign_array_and_byte_order():
    buf = CloudBuffer(POINT)
    buf.points(4)
    with pytest.raises(ValueError, match='last returned'):
        buf.message(np.zeros(3, POINT), Header())
    with pytest.raises(ValueError, match='host byte order'):
        CloudBuffer(np.dtype([('x', '>f4' if np.little_endian else '<f4')]))


def test_stream_stats_counts_and_levels():
    s = StreamStats('node: link', 'hw', stale_after=1.0)
    assert s.status().level == WARN and s.status().message == 'no data yet'
    now = 1_000_000_000_000
    for i in range(20):
        s.packet(100, now + i * 50_000_000)
    s.publish(20)
    st = s.status(now + 1_000_000_000)
    values = {kv.key: kv.value for kv in st.values}
    assert st.level == OK and values['packets'] == '20' and values['bytes'] == '2000'
    assert float(values['rate_hz']) == pytest.approx(10.0)
    s.error(TRUNCATED, str(CodecError('Msg', 'short', kind=TRUNCATED)), now + 1_000_000_000)
    st = s.status(now + 1_100_000_000)
    values = {kv.key: kv.value for kv in st.values}
    assert st.level == WARN and values['errors.truncated'] == '1' and 'short' in values['last_error']
    assert s.status(now + 5_000_000_000).message.startswith('no data for')


def test_stream_stats_numbers_are_kept_as_numbers_and_shown_as_text():
    """count() adds, set_count() takes a total kept elsewhere (a session's), highest() keeps
    the largest value: all numbers until the status is built."""
    s = StreamStats('node: link', 'hw')
    s.set_count('sample_gaps', 0)
    s.count('sent', 0)
    assert {kv.key: kv.value for kv in s.status().values}.keys() >= {'sample_gaps', 'sent'}
    s.count('sent')
    s.count('sent', 2)
    s.set_count('sample_gaps', 7)
    s.set_count('sample_gaps', 5)          # the owner's total, as it is now
    for ms in (3.0, 12.34, 8.0):
        s.highest('slowest_ms', ms)
    assert s.counters == {'sent': 3, 'sample_gaps': 5} and s.maxima == {'slowest_ms': 12.34}
    values = {kv.key: kv.value for kv in s.status().values}
    assert (values['sent'], values['sample_gaps'], values['slowest_ms']) == ('3', '5', '12.3')
    assert not s.extra


def test_bad_input_is_logged_once_per_interval_and_counted_every_time(ros, capfd):
    from ros_sim_bridge.core.binary import BAD_CHECKSUM
    from ros_sim_bridge.ros.diagnostics import Diagnostics
    node = ros.node('diag_log_test')
    diag = Diagnostics(node, log_interval=60.0)
    stats = diag.stream('link')
    for i in range(10):
        diag.bad_input(stats, CodecError('Truth', f'checksum {i}', kind=BAD_CHECKSUM))
    diag.bad_input(stats, CodecError('Truth', 'short', kind=TRUNCATED))
    err = capfd.readouterr().err
    assert err.count('dropped bad input (bad_checksum)') == 1, err
    assert err.count('dropped bad input (truncated)') == 1
    assert stats.errors == {BAD_CHECKSUM: 10, TRUNCATED: 1}
    diag.log_interval = 0.0
    diag.bad_input(stats, CodecError('Truth', 'again', kind=BAD_CHECKSUM))
    assert '(+9 more like it' in capfd.readouterr().err
    node.destroy_node()


@pytest.mark.parametrize('dtype_name', ['generic', 'lux'])
def test_published_cloud_reads_back_with_sensor_msgs_py(ros, dtype_name):
    """Issue #14: sensor_msgs_py (every ROS install; not on PyPI, so skipped here) reads the
    clouds we build by hand, published over DDS, field by field: an independent reader."""
    point_cloud2 = pytest.importorskip('sensor_msgs_py.point_cloud2')
    from ros_sim_bridge.ibeo.ros.conversions import CLOUD_DTYPE
    dtype = POINT if dtype_name == 'generic' else CLOUD_DTYPE
    rng = np.random.default_rng(7)
    pts = np.zeros(500, dtype)
    for name in dtype.names:
        kind = dtype[name].kind
        pts[name] = (rng.normal(size=500) if kind == 'f' else
                     rng.integers(0, np.iinfo(dtype[name]).max, 500))
    topic = f'test_cloud_{dtype_name}'
    got = ros.collect(PointCloud2, topic, 10, matched=False)
    pub = ros.probe.create_publisher(PointCloud2, topic, 10)
    msg = to_pointcloud2(pts, Header(frame_id='laser'))
    assert wait_until(lambda: (pub.publish(msg), len(got.messages) > 0)[1], 10.0, 0.2)
    back = point_cloud2.read_points(got.messages[0], field_names=list(dtype.names))
    for name in dtype.names:
        np.testing.assert_array_equal(np.asarray(back[name]), pts[name], err_msg=name)
