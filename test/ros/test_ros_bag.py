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
from ros_sim_bridge.ros.bag import BagWriter, type_name
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
