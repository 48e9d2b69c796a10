"""Fuzz: monoDrive JSON sensor payloads and control messages → ROS messages (issue 26).

What the codec accepts converts to CDR bytes that rclpy reads back and writes again to the same
bytes (its decoder checks the UTF-8 of every string) with no ±Inf in a float32 field (rclpy's
own messages refuse values beyond float32; a template would write them as ±Inf), with the seeds
of test_fuzz_monodrive (huge integers, lone surrogates, odd digits) among the inputs; anything
else is a CodecError.
"""
from __future__ import annotations

import json

import math

from hypothesis import given, strategies as st
from rclpy.serialization import deserialize_message, serialize_message
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.monodrive.codec import annotation, control, payloads
from ros_sim_bridge.monodrive.ros import conversions as convert
from ros_sim_bridge.msg import (MonoDriveCollision, MonoDriveRadarTargets, MonoDriveRaw,
                                MonoDriveUltrasonic)

import fuzz_support as fz
from test_fuzz_monodrive import _JSON, JSON_PAYLOADS, ODD_JSON, _odd_examples

STAMP = (1, 2)
REPORTS = [b'{"name": "ego", "collision": true, "distance": 12.5, "time_to_collision": 1e300,'
           b' "targets": [{"name": "car", "distance": 3, "time_to_collision": null}]}',
           b'{"targets": [{"range": 150.0}, {"range": null}, {"range": 1e39}]}',
           b'[{"name": "car", "tags": ["a"], "2d_bounding_boxes": [{"name": "b", '
           b'"2d_bounding_box": [1, 5, 2, 6]}], "oriented_bounding_boxes": [{"center": [1, 2, 3],'
           b' "extents": {"x": 1, "y": 1, "z": 1}, "orientation": [0, 0, 0, 1]}]}]']


def _radar(data):
    targets = payloads.decode_radar(data)
    return ((convert.radar(targets, STAMP, 'radar'), MonoDriveRadarTargets),
            (convert.radar_markers(targets, STAMP, 'radar'), MarkerArray))


def _collision(data):
    return ((convert.collision(payloads.decode_json_sensor(data, 'Collision'),
                               data.decode('utf-8', 'replace'), STAMP, 'c'),
             MonoDriveCollision),)


def _ultrasonic(data):
    return ((convert.ultrasonic(payloads.decode_json_sensor(data, 'Ultrasonic'),
                                data.decode('utf-8', 'replace'), STAMP, 'u'),
             MonoDriveUltrasonic),)


def _annotation(data):
    ann = annotation.decode_annotation(data)
    return ((convert.AnnotationCdr('opt', 'map', 64, 48, 90.0).markers(ann, STAMP),
             MarkerArray),)


def _control(data):
    return ((convert.control_raw(control.decode_message(data), 9000, STAMP), MonoDriveRaw),)


def _float32_fields(msg):
    """Every float32 value in a message (recursively)."""
    for name, kind in msg.get_fields_and_field_types().items():
        v = getattr(msg, name)
        if kind == 'float':
            yield v
        elif kind.startswith('sequence<float') or kind.startswith('float['):
            yield from v
        elif hasattr(v, 'get_fields_and_field_types'):
            yield from _float32_fields(v)
        elif isinstance(v, list) and v and hasattr(v[0], 'get_fields_and_field_types'):
            for item in v:
                yield from _float32_fields(item)


def check_cdr(*pairs):
    """Each (bytes, type): rclpy reads it and writes it again to the same bytes (NaN values
    make message equality useless), and no float32 field holds ±Inf."""
    for raw, msg_type in pairs:
        assert isinstance(raw, bytes)
        msg = deserialize_message(raw, msg_type)
        again = serialize_message(msg)
        # the same bytes but for alignment padding (zero in ours, uninitialised in rclpy's)
        assert len(again) == len(raw)
        assert all(r == 0 for r, a in zip(raw, again) if r != a)
        assert not any(math.isinf(v) for v in _float32_fields(msg)), msg


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
    check_cdr(*msgs)


def test_seeds_convert():
    """The odd seeds are not all refused: radar, collision and ultrasonic publish."""
    (radar, _), _ = _radar(ODD_JSON[4])
    assert len(deserialize_message(radar, MonoDriveRadarTargets).targets) == 0
    (c, _), = _collision(ODD_JSON[5])
    (u, _), = _ultrasonic(ODD_JSON[5])
    check_cdr((c, MonoDriveCollision), (u, MonoDriveUltrasonic))
    c = deserialize_message(c, MonoDriveCollision)
    u = deserialize_message(u, MonoDriveUltrasonic)
    assert c.name == '\ufffd' and c.target_names == ['\ufffd'] and len(u.ranges) == 1
