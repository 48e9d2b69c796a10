"""ros/pointcloud_cdr.py: CDR written straight from numpy has the length of rclpy's
serialisation of the PointCloud2 that ros/pointcloud.py builds from the same points and
deserialises (rclpy) to an equal message: several frame id lengths for the string alignment,
padded dtypes, empty clouds.  (Not byte for byte: rclpy leaves its alignment padding
uninitialised; ours is zero.)"""
import numpy as np
import pytest
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Header

from ros_sim_bridge.ros.pointcloud import from_pointcloud2, to_pointcloud2
from ros_sim_bridge.ros.pointcloud_cdr import pointcloud2_cdr

PADDED = np.dtype({'names': ['x', 'y', 'z', 'device_id', 'time_us', 'flags'],
                   'formats': ['<f4', '<f4', '<f4', 'u1', '<u4', '<u2'],
                   'offsets': [0, 4, 8, 12, 16, 20], 'itemsize': 24})


@pytest.mark.parametrize('frame', ['', 'a', 'ab', 'abc', 'base_link', 'ibeo_scanner_12'])
@pytest.mark.parametrize('n', [0, 1, 1000])
@pytest.mark.parametrize('dense', [True, False])
def test_cdr_equals_rclpy_serialisation(frame, n, dense):
    pts = np.zeros(n, PADDED)
    pts['x'] = np.arange(n)
    pts['device_id'] = np.arange(n) % 7
    pts['time_us'] = np.arange(n) * 70_000
    pts['flags'] = 0x1000
    stamp_ns = 1_700_000_000_123_456_789
    ref = serialize_message(to_pointcloud2(
        pts, Header(stamp=Time(sec=1_700_000_000, nanosec=123_456_789), frame_id=frame),
        is_dense=dense))
    cdr = pointcloud2_cdr(pts, frame, stamp_ns, is_dense=dense)
    assert cdr.type_name == 'sensor_msgs/msg/PointCloud2'
    assert len(cdr.data) == len(ref)
    back = deserialize_message(bytes(cdr.data), PointCloud2)
    want = deserialize_message(ref, PointCloud2)
    assert back == want
    assert back.header.frame_id == frame and back.is_dense == dense
    assert back.header.stamp.sec == 1_700_000_000 and back.header.stamp.nanosec == 123_456_789
    assert np.array_equal(from_pointcloud2(back)['time_us'], pts['time_us'])


def test_big_endian_points_are_converted():
    pts = np.zeros(3, [('x', '>f4'), ('flags', '>u2')])
    pts['x'] = [1.5, 2.5, 3.5]
    back = deserialize_message(bytes(pointcloud2_cdr(pts, 'f', 0).data), PointCloud2)
    assert from_pointcloud2(back)['x'].tolist() == [1.5, 2.5, 3.5]


@pytest.mark.parametrize('n', [0, 1, 1000])
def test_cloud_built_in_its_message_is_the_bytes_of_pointcloud2_cdr(n):
    # CloudCdr: the points written inside the message's own bytes; the message is the same
    # bytes as pointcloud2_cdr's parts joined; an array of a dropped message keeps its memory
    from ros_sim_bridge.ros.pointcloud_cdr import CloudCdr
    clouds = CloudCdr(PADDED, 'base_link')
    pts = clouds.points(n)
    assert clouds.holds(pts) and pts.flags.writeable and len(pts) == n
    pts.view(np.uint8)[...] = 0                 # the padding too
    pts['x'] = np.arange(n)
    pts['flags'] = 0x1000
    msg = clouds.message(pts, (1_700_000_000, 123_456_789), is_dense=False)
    assert not clouds.holds(pts)
    assert type(msg) is bytes
    assert msg == pointcloud2_cdr(pts, 'base_link', 1_700_000_000_123_456_789,
                                  is_dense=False).data
    dropped = clouds.points(n)                 # never handed over: dropped by the next one
    dropped['x'] = 7
    clouds.points(n)['x'] = 8
    assert not clouds.holds(dropped) and (dropped['x'] == 7).all()
    with pytest.raises(ValueError):
        clouds.message(dropped, (0, 0))


def test_cloud_cdr_writes_again_only_a_message_no_one_holds():
    # the last message handed over is written again for the next one of its size once
    # nothing else holds it (no copy of its bytes is kept by publish): a held message, a
    # live array of it or another size gets a new one, and a held one never changes
    from ros_sim_bridge.ros.pointcloud_cdr import CloudCdr
    clouds = CloudCdr(PADDED, 'base_link')

    def message(n, x, sec=1):
        pts = clouds.points(n)
        pts.view(np.uint8)[...] = 0
        pts['x'] = x
        return clouds.message(pts, (sec, 0))

    first = message(5, 1.0)
    first_id, first_bytes = id(first), bytes(bytearray(first))
    hash(first)                                 # a hash cached in the object
    del first
    second = message(5, 2.0, sec=2)             # the same object, written again
    assert id(second) == first_id
    assert second == pointcloud2_cdr(_points(5, 2.0), 'base_link', 2_000_000_000).data
    assert hash(second) == hash(bytes(bytearray(second))) and second != first_bytes
    held = [second]                             # held elsewhere: never written again
    third = message(5, 3.0)
    assert third is not held[0] and held[0] == pointcloud2_cdr(
        _points(5, 2.0), 'base_link', 2_000_000_000).data
    third_id = id(third)
    del held, second, third
    pts = clouds.points(5)                      # the last one (third) written again …
    assert id(clouds._msg) == third_id
    clouds.points(5)                            # … and dropped: held by the array above
    assert id(clouds._msg) != third_id and (pts['x'] == 3.0).all()
    del pts
    fourth = message(6, 4.0)                    # another size: a new message
    assert len(fourth) == len(first_bytes) + PADDED.itemsize


def _points(n, x):
    pts = np.zeros(n, PADDED)
    pts['x'] = x
    return pts
