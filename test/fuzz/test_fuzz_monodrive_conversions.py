"""Fuzz: monoDrive JSON sensor payloads and control messages → ROS messages (issue 26).

What the codec accepts converts to messages that serialise (rclpy checks every field: UTF-8
text, float32 range), with the seeds of test_fuzz_monodrive (huge integers, lone surrogates,
odd digits) among the inputs; anything else is a CodecError.
"""
from __future__ import annotations

import json

from builtin_interfaces.msg import Time
from hypothesis import given, strategies as st
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.monodrive.codec import annotation, control, payloads
from ros_sim_bridge.monodrive.ros import conversions as convert

import fuzz_support as fz
from test_fuzz_monodrive import _JSON, JSON_PAYLOADS, ODD_JSON, _odd_examples

STAMP = Time(sec=1, nanosec=2)
REPORTS = [b'{"name": "ego", "collision": true, "distance": 12.5, "time_to_collision": 1e300,'
           b' "targets": [{"name": "car", "distance": 3, "time_to_collision": null}]}',
           b'{"targets": [{"range": 150.0}, {"range": null}, {"range": 1e39}]}',
           b'[{"name": "car", "tags": ["a"], "2d_bounding_boxes": [{"name": "b", '
           b'"2d_bounding_box": [1, 5, 2, 6]}], "oriented_bounding_boxes": [{"center": [1, 2, 3],'
           b' "extents": {"x": 1, "y": 1, "z": 1}, "orientation": [0, 0, 0, 1]}]}]']


def _radar(data):
    targets = payloads.decode_radar(data)
    msg = convert.radar(targets, STAMP, 'radar')
    return msg, convert.radar_markers(msg)


def _collision(data):
    return (convert.collision(payloads.decode_json_sensor(data, 'Collision'),
                              data.decode('utf-8', 'replace'), STAMP, 'c'),)


def _ultrasonic(data):
    return (convert.ultrasonic(payloads.decode_json_sensor(data, 'Ultrasonic'),
                               data.decode('utf-8', 'replace'), STAMP, 'u'),)


def _annotation(data):
    ann = annotation.decode_annotation(data)
    return (MarkerArray(markers=convert.annotation_markers(ann, STAMP, 'opt', 'map', 64, 48,
                                                           90.0)),)


def _control(data):
    return (convert.control_raw(control.decode_message(data), 9000, STAMP),)


CONVERTERS = {'radar': _radar, 'collision': _collision, 'ultrasonic': _ultrasonic,
              'annotation': _annotation, 'control': _control}


@given(st.sampled_from(sorted(CONVERTERS)),
       fz.mutated(JSON_PAYLOADS + REPORTS, max_mutations=6)
       | _JSON.map(lambda v: json.dumps(v).encode()))
@_odd_examples(*CONVERTERS)
def test_json_payloads_convert_and_serialise(name, data):
    fz.tried(f'monodrive.ros.conversions.{name}')
    try:
        msgs = fz.timed(CONVERTERS[name], data)
    except CodecError as err:
        fz.check_codec_error(err)
        return
    fz.serialize(*msgs)


def test_seeds_convert():
    """The odd seeds are not all refused: radar, collision and ultrasonic publish."""
    assert len(_radar(ODD_JSON[4])[0].targets) == 0
    c, = _collision(ODD_JSON[5])
    u, = _ultrasonic(ODD_JSON[5])
    fz.serialize(c, u)
    assert c.name == '\ufffd' and c.target_names == ['\ufffd'] and len(u.ranges) == 1
