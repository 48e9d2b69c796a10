"""Read a node's output back as raw CDR over real DDS and decode it twice: with rclpy
(``deserialize_message``) and with rosbags' own CDR decoder against our ``.msg`` files (issue
#27).  Expected values are written by the test from the spec, as dotted paths."""
from __future__ import annotations

import threading
from functools import lru_cache

import pytest
from rclpy.serialization import deserialize_message, serialize_message

from ros_sim_bridge.ros.bag import type_name, typestore


@lru_cache(maxsize=1)
def _store():
    return typestore()


class RawCollector:
    """Every serialised message arriving on a topic (subscription with raw=True)."""

    def __init__(self, ros, msg_type, topic: str, qos=10, matched: bool = True):
        from conftest import wait_until
        self.msg_type, self.topic, self.messages = msg_type, topic, []
        self._cond = threading.Condition()
        self.sub = ros.probe.create_subscription(msg_type, topic, self._on, qos, raw=True)
        if matched:
            assert wait_until(lambda: self.sub.get_publisher_count() > 0, 10.0), \
                f'no publisher matched {topic}'

    def _on(self, data: bytes) -> None:
        with self._cond:
            self.messages.append(bytes(data))
            self._cond.notify_all()

    def wait_for(self, count: int = 1, timeout: float = 5.0) -> list:
        with self._cond:
            self._cond.wait_for(lambda: len(self.messages) >= count, timeout)
            got = list(self.messages)
        assert len(got) >= count, f'{self.topic}: {len(got)} of {count} messages'
        return got


def _get(msg, path: str):
    for part in path.split('.'):
        msg = msg[int(part)] if part.isdigit() else getattr(msg, part)
    return msg


def check(raw: bytes, msg_type, expected: dict, *, abs: float = 1e-9) -> None:
    """``raw`` decodes with both decoders, re-serialises to its bytes with rclpy, and
    every dotted path of ``expected`` has its value in both decodings (floats within
    ``abs``; a list: the whole array/sequence)."""
    ours = deserialize_message(raw, msg_type)
    # rclpy's serialiser leaves its alignment padding uninitialised, ours writes zeros: the
    # same length, and every byte that differs is a zero of ours (padding), while the values
    # (below, and the round trip) are equal
    again = serialize_message(ours)
    assert len(again) == len(raw), f'{msg_type.__name__}: {len(raw)} bytes, rclpy {len(again)}'
    assert all(r == 0 for r, a in zip(raw, again) if r != a), \
        f'{msg_type.__name__}: bytes differ from rclpy\'s: {raw.hex()} {again.hex()}'
    assert deserialize_message(again, msg_type) == ours
    theirs = _store().deserialize_cdr(raw, type_name(msg_type))
    for path, want in expected.items():
        for name, got in (('rclpy', _get(ours, path)), ('rosbags', _get(theirs, path))):
            if isinstance(want, (list, tuple)):
                got = [v for v in got]
                assert got == pytest.approx(list(want), abs=abs), f'{name} {path}'
            elif isinstance(want, float):
                assert got == pytest.approx(want, abs=abs), f'{name} {path}'
            else:
                assert got == want, f'{name} {path}: {got!r} != {want!r}'
