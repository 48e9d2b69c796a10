"""Reading the ibeo conversions' CDR back (issue #27): every message as rclpy decodes it, after
checking its bytes — rclpy re-serialises the decoded message to the same length with no byte
but our zero padding different, and rosbags' own decoder (against our ``.msg`` files) reads the
same value into every field.  Tests then compare the decoded fields with values worked out from
the record or the spec."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message

from ros_sim_bridge.ros.bag import typestore
from ros_sim_bridge.ros.cdr_template import message_class
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage


@lru_cache(maxsize=1)
def _store():
    return typestore()


def _differences(ours, theirs, path: str = '') -> list:
    """Where an rclpy message and rosbags' decoding of the same bytes differ ([] if nowhere;
    floats bit for bit up to the NaN payload)."""
    if hasattr(ours, 'get_fields_and_field_types'):
        return [d for name in ours.get_fields_and_field_types()
                for d in _differences(getattr(ours, name), getattr(theirs, name),
                                      f'{path}.{name}')]
    if isinstance(ours, float):
        t = float(theirs)
        same = (math.isnan(ours) and math.isnan(t)) or (
            ours == t and math.copysign(1, ours) == math.copysign(1, t))
        return [] if same else [f'{path}: {ours!r} vs {theirs!r}']
    if isinstance(ours, (list, tuple, np.ndarray, bytes)) or type(ours).__name__ == 'array':
        a, b = list(ours), list(theirs)
        if len(a) != len(b):
            return [f'{path}: {len(a)} vs {len(b)} elements']
        return [d for k, (x, y) in enumerate(zip(a, b))
                for d in _differences(x.item() if isinstance(x, np.generic) else x, y,
                                      f'{path}[{k}]')]
    if isinstance(theirs, np.generic):
        theirs = theirs.item()
    return [] if ours == theirs else [f'{path}: {ours!r} vs {theirs!r}']


def readback(msg):
    """The rclpy message of ``msg`` (a CdrMessage, or bytes with ``type_name``) once its bytes
    passed the checks of the module; an rclpy message is returned as it is."""
    if not isinstance(msg, CdrMessage):
        return msg
    raw = msg.data
    cls = message_class(msg.type_name)
    ours = deserialize_message(raw, cls)
    again = serialize_message(ours)
    assert len(again) == len(raw), f'{msg.type_name}: {len(raw)} bytes, rclpy {len(again)}'
    assert all(r == 0 for r, a in zip(raw, again) if r != a), \
        f'{msg.type_name}: a byte other than padding differs from rclpy\'s'
    theirs = _store().deserialize_cdr(raw, msg.type_name)
    assert _differences(ours, theirs) == [], msg.type_name
    return ours


def converted(conv, header, record, stamp=None) -> dict:
    """topic → the decoded messages (a list) of ``conv.convert(header, record, stamp)``."""
    out: dict = {}
    for topic, msg in conv.convert(header, record, stamp):
        out.setdefault(topic, []).append(readback(msg))
    return out


def one(conv, header, record, stamp=None) -> dict:
    """topic → the decoded message of a conversion giving one per topic."""
    got = converted(conv, header, record, stamp)
    assert all(len(v) == 1 for v in got.values()), {k: len(v) for k, v in got.items()}
    return {k: v[0] for k, v in got.items()}
