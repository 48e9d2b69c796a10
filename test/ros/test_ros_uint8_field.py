"""ros/uint8_field.py: a uint8[] field set from a buffer without a Python copy serialises
(rclpy's C conversion) to the same bytes as the field set through its setter, and arrives
through DDS with the buffer's bytes."""
import array

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Image

from conftest import wait_until
from ros_sim_bridge.ros.uint8_field import set_uint8_field


def image_with(data) -> Image:
    msg = Image(height=2, width=3, encoding='bgra8', step=12)
    set_uint8_field(msg, 'data', data)
    return msg


def test_buffer_serialises_like_the_setter():
    pixels = np.arange(24, dtype=np.uint8)
    frame = bytearray(b'HEADER' + pixels.tobytes())
    msg = image_with(memoryview(frame)[6:])                # a payload view, as the node has
    assert msg.data.obj is frame                           # no copy made in Python
    reference = Image(height=2, width=3, encoding='bgra8', step=12,
                      data=array.array('B', pixels.tobytes()))
    assert serialize_message(msg) == serialize_message(reference)
    back = deserialize_message(serialize_message(msg), Image)
    assert bytes(back.data) == pixels.tobytes()


def test_empty_and_bytes_buffers():
    assert bytes(deserialize_message(serialize_message(image_with(b'')), Image).data) == b''
    assert bytes(deserialize_message(serialize_message(image_with(b'\x01\x02')),
                                     Image).data) == b'\x01\x02'


def test_class_without_the_slot_falls_back_to_the_setter():
    class Plain:
        data = None
    msg = Plain()
    set_uint8_field(msg, 'data', memoryview(b'abc'))
    assert isinstance(msg.data, array.array) and msg.data.tobytes() == b'abc'


def test_published_buffer_arrives_through_dds(ros):
    pixels = bytes(range(24))
    got = ros.collect(Image, 'uint8_field_test', matched=False)
    node = ros.node('uint8_field_pub')
    pub = node.create_publisher(Image, 'uint8_field_test', 10)

    def published():
        pub.publish(image_with(bytearray(pixels)))
        return bool(got.messages)
    assert wait_until(published, 15.0, 0.1)
    assert bytes(got.messages[0].data) == pixels and got.messages[0].width == 3
