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
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage
from ros_sim_bridge.msg import (MonoDriveCollision, MonoDriveRadarTargets, MonoDriveRaw,
                                MonoDriveState, MonoDriveUltrasonic)

import fuzz_support as fz
from test_fuzz_monodrive import _JSON, JSON_PAYLOADS, ODD_JSON, _odd_examples

STAMP = (1, 2)
REPORTS = [b'{"name": "ego", "collision": true, "distance": 12.5, "time_to_collision": 1e300,'
           b' "targets": [{"name": "car", "distance": 3, "time_to_collision": null}]}',
           b'{"targets": [{"range": 150.0}, {"range": null}, {"range": 1e39}]}',
           b'[{"name": "car", "tags": ["a"], "2d_bounding_boxes": [{"name": "b", '
           b'"2d_bounding_box": [1, 5, 2, 6]}], "oriented_bounding_boxes": [{"center": [1, 2, 3],'
           b' "extents": {"x": 1, "y": 1, "z": 1}, "orientation": [0, 0, 0, 1]}]}]',
           # a State frame with boxes (world centre, full sizes), one of them arrays
           b'{"frame": {"vehicles": [{"state": {"name": "ego", "tags": ["ego"], "odometry":'
           b' {"pose": {"position": {"x": 100, "y": -50, "z": 0}, "orientation": {"x": 0,'
           b' "y": 0, "z": 0.6, "w": 0.8}}, "linear_velocity": {"x": 1e3, "y": 0, "z": 0}},'
           b' "oriented_bounding_box": [{"center": {"x": 100, "y": -50, "z": 75}, "extents":'
           b' {"x": 460, "y": 190, "z": 150}, "orientation": {"x": 0, "y": 0, "z": 0.6,'
           b' "w": 0.8}}, {"center": [1, 2, 3], "extents": [0, 1e400, 1]}]}}],'
           b' "objects": [{"name": "cone", "odometry": {"pose": {"position": [1e300, 0, 0],'
           b' "orientation": [0, 0, 0, 0]}}}]}}']


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


def _state(data):
    """A State frame: MonoDriveState, each vehicle's Odometry, the TFMessage and the box
    markers; every float64 of them must be finite (poses, twists, box poses and sizes)."""
    rows = convert.state_rows(payloads.decode_state(data))
    out = [(convert.state(rows, 2.5, 3, STAMP, 'map'), MonoDriveState),
           (convert.transforms(rows, [f'f{i}' for i in range(len(rows))], STAMP, 'map'),
            TFMessage), (convert.box_markers(rows, STAMP, 'map'), MarkerArray)]
    out += [(convert.odometry(rows, i, STAMP, 'map', 'base'), Odometry)
            for i in range(len(rows))]
    for raw, msg_type in out:
        values = list(_float_fields(deserialize_message(raw, msg_type), ('double', 'float')))
        assert all(math.isfinite(v) for v in values), msg_type
    return out


def _control(data):
    return ((convert.control_raw(control.decode_message(data), 9000, STAMP), MonoDriveRaw),)


def _float_fields(msg, kinds=('float',)):
    """Every value of the given field types (float32: 'float') in a message, recursively."""
    for name, kind in msg.get_fields_and_field_types().items():
        v = getattr(msg, name)
        if kind in kinds:
            yield v
        elif kind.startswith(tuple(f'sequence<{k}' for k in kinds) + tuple(f'{k}[' for k in kinds)):
            yield from v
        elif hasattr(v, 'get_fields_and_field_types'):
            yield from _float_fields(v, kinds)
        elif isinstance(v, list) and v and hasattr(v[0], 'get_fields_and_field_types'):
            for item in v:
                yield from _float_fields(item, kinds)


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
        assert not any(math.isinf(v) for v in _float_fields(msg)), msg


CONVERTERS = {'radar': _radar, 'collision': _collision, 'ultrasonic': _ultrasonic,
              'annotation': _annotation, 'control': _control, 'state': _state}


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
