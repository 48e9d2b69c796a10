"""Fuzz: every MORAI decode function, the dispatch, and the record → ROS conversions.

Seeds per message type and layout: datagrams written here from SUPPLEMENT §1.1 (identifier,
int32 data_length, 3 × int32 aux, payload, ``\\r\\n``) with valid payload values at their
offsets, and the same messages re-encoded by the project's encoders.
"""
from __future__ import annotations

import math
import struct

import pytest
from hypothesis import example, given, strategies as st

from builtin_interfaces.msg import Time
from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.ros import conversions as convert
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray
from ros_sim_bridge.msg import (MoraiCollisionData, MoraiCtrlCmd, MoraiEgoVehicleStatus,
                                MoraiGetTrafficLightStatus, MoraiIntersectionStatus,
                                MoraiMultiEgoSetting, MoraiObjectStatusList,
                                MoraiVehicleCollisionData)
from ros_sim_bridge.srv import (MoraiSensorControl, MoraiSetIntersectionStatus,
                                MoraiSetMultiEgoSetting)

import fuzz_support as fz

STAMP = Time(sec=1, nanosec=2)


def _frame(identifier: bytes, payload: bytes, tail: bool = True) -> bytes:
    """SUPPLEMENT §1.1: identifier | int32 data_length | 3 × int32 aux | payload | CR LF."""
    return identifier + struct.pack('<i3i', len(payload), 0, 0, 0) + payload \
        + (b'\r\n' if tail else b'')


def _payload(layout) -> bytes:
    """A payload whose enums and strings are valid (hand-set at their spec offsets)."""
    body = bytearray(layout.data_length)
    ident = layout.identifier
    if ident == morai.framing.ID_CTRL_CMD:
        struct.pack_into('<BBB', body, 0, 2, 4, 1)       # auto, drive, pedals
    elif ident == morai.framing.ID_TRAFFIC_LIGHT:
        body[0:4] = b'TL01'
        struct.pack_into('<h', body, 12, 1)              # red (Get: type 0 then status)
        if layout.data_length == 16:
            struct.pack_into('<hh', body, 12, 0, 16)
    elif ident in (morai.framing.ID_SCENARIO_LOAD, morai.framing.ID_SAVE_SENSOR_DATA):
        start = 1 if ident == morai.framing.ID_SAVE_SENSOR_DATA else 0
        body[start:start + 6] = b'a.json'
    elif ident == morai.framing.ID_LAMP_CONTROL:
        body[0:2] = b'\x01\x00'
    elif ident == morai.framing.ID_MULTI_EGO:
        struct.pack_into('<ii', body, 0, 1, 0)
    return bytes(body)


def _all_layouts():
    for m in morai.MESSAGE_TYPES.values():
        mod_layouts = {lay for lay in _layouts_of(m.name)}
        for lay in sorted(mod_layouts, key=lambda lay: lay.name):
            yield m.name, lay


def _layouts_of(name: str):
    c = morai.commands
    return {
        'ego_status': morai.ego_status.LAYOUTS, 'object_info': morai.object_info.LAYOUTS,
        'traffic_light_status': morai.traffic_light.LAYOUTS,
        'collision': morai.collision.LAYOUTS,
        'vehicle_collision': morai.vehicle_collision.LAYOUTS,
        'intersection_status': morai.intersection.LAYOUTS, 'multi_ego_setting':
        morai.multi_ego.LAYOUTS, 'ctrl_cmd': c.CTRL_LAYOUTS, 'set_traffic_light': c.SET_TL_LAYOUTS,
        'set_intersection': c.SET_INT_LAYOUTS, 'scenario_load': c.SCENARIO_LAYOUTS,
        'save_sensor_data': c.SAVE_LAYOUTS, 'sensor_control': c.SENSOR_LAYOUTS,
        'lamp_control': c.LAMP_LAYOUTS}[name]


def _seeds() -> dict[str, list[bytes]]:
    seeds: dict[str, list[bytes]] = {name: [] for name in morai.MESSAGE_TYPES}
    for name, lay in _all_layouts():
        hand = _frame(lay.identifier, _payload(lay), lay.tail)
        assert len(hand) == lay.total, (name, lay)
        seeds[name].append(hand)
        value = morai.decode(name, hand)                # hand bytes are valid …
        again = morai.encode(name, value)               # … and the encoder's too
        assert morai.decode(name, again) is not None
        seeds[name].append(again)
    return seeds


SEEDS = _seeds()
ALL_SEEDS = [s for group in SEEDS.values() for s in group]


def test_every_message_type_has_seeds():
    assert all(SEEDS.values()) and len(SEEDS) == len(morai.MESSAGE_TYPES)


_INPUTS = {name: fz.inputs(SEEDS[name], max_random=300) | fz.mutated(ALL_SEEDS)
           for name in SEEDS}


@pytest.mark.parametrize('name', sorted(morai.MESSAGE_TYPES))
@given(data=st.data())
def test_decode(name, data):
    """Each decode function, fed its own (mutated) messages, everything else, and noise."""
    fz.tried(f'morai.codec.{name}')
    raw = data.draw(_INPUTS[name])
    fz.check_decoder(morai.MESSAGE_TYPES[name].decode, raw)


@given(fz.inputs(ALL_SEEDS, max_random=300))
@example(b'#')
@example(b'#MoraiInfo$')
@example(b'#TrafficLight$\xff\xff\xff\xff')
def test_dispatch(raw):
    fz.tried('morai.codec.decode_any')
    fz.check_decoder(morai.decode_any, raw)
    fz.check_decoder(morai.identify, raw)


def _read_back(*pairs) -> list:
    """The messages of CDR bytes (rclpy's decoder; it must take them)."""
    from rclpy.serialization import deserialize_message
    return [deserialize_message(data, t) for t, data in pairs]


def _to_ros(name: str, value) -> list:
    if name == 'ego_status':
        pose, cdr = convert.ego_pose(value), convert.EgoCdr('map', 'base_link')
        return _read_back((MoraiEgoVehicleStatus, cdr.status(value, STAMP)),
                          (Odometry, cdr.odometry(value, STAMP, pose)),
                          (TFMessage, cdr.transform(STAMP, pose)))
    if name == 'object_info':
        cdr = convert.ObjectsCdr('map', labels=True)
        return _read_back((MoraiObjectStatusList, cdr.object_list(value, STAMP)),
                          (MarkerArray, cdr.markers(value, STAMP)))
    events = convert.EventsCdr('map')
    if name == 'multi_ego_setting':
        return _read_back((MoraiMultiEgoSetting, events.multi_ego(value, STAMP)))
    if name == 'traffic_light_status':
        return _read_back((MoraiGetTrafficLightStatus, events.traffic_light(value, STAMP)))
    if name == 'collision':
        return _read_back((MoraiCollisionData, events.collision(value, STAMP)),
                          (MarkerArray, events.collision_markers(value, STAMP)))
    if name == 'vehicle_collision':
        return _read_back((MoraiVehicleCollisionData, events.vehicle_collision(value, STAMP)),
                          (MarkerArray, events.vehicle_collision_markers(value, STAMP)))
    if name == 'intersection_status':
        return _read_back((MoraiIntersectionStatus, events.intersection(value, STAMP)))
    return []   # client → simulator commands: no ROS message is made from them


FROM_SIM = [m.name for m in morai.MESSAGE_TYPES.values() if m.direction == morai.FROM_SIM]


@st.composite
def _boundary_message(draw) -> bytes:
    """A from-simulator seed whose every 4-byte float slot holds a boundary value (NaN, ±Inf,
    ±3.4e38) and whose ints are extreme: framing stays valid, values are the wire's worst."""
    raw = bytearray(draw(st.sampled_from([s for n in FROM_SIM for s in SEEDS[n]])))
    ident = morai.framing.peek_identifier(raw)
    start, end = len(ident) + 16, len(raw) - 2
    for at in range(start, end - 3, 4):
        if draw(st.booleans()):
            value = draw(st.sampled_from(fz.BOUNDARY_FLOATS[:3] + (3.4e38, -3.4e38, 1.0)))
            struct.pack_into('<f', raw, at, value)
        elif draw(st.booleans()):
            struct.pack_into('<i', raw, at, draw(st.sampled_from([-2**31, 2**31 - 1, -1])))
    return bytes(raw)


@given(fz.mutated([s for n in FROM_SIM for s in SEEDS[n]]) | _boundary_message())
def test_conversions(raw):
    """Whatever decodes converts to messages that serialise."""
    fz.tried('morai.ros.conversions')
    try:
        name, value = morai.decode_any(raw)
    except CodecError as err:
        fz.check_codec_error(err)
        return
    fz.serialize(*fz.timed(_to_ros, name, value))


_float = st.sampled_from(fz.BOUNDARY_FLOATS) | st.floats()


@given(velocity=_float, acceleration=_float, accel=_float, brake=_float, steering=_float,
       rear=_float, has_rear=st.booleans(), gear=st.integers(-128, 127))
def test_command_conversions(velocity, acceleration, accel, brake, steering, rear, has_rear,
                             gear):
    """ROS commands in SI → codec command → bytes, or CodecError (BAD_VALUE); never another
    exception (a service or subscription callback would die)."""
    fz.tried('morai.ros.conversions.commands')
    msg = MoraiCtrlCmd(ctrl_mode=2, gear=gear, cmd_type=2, velocity=velocity,
                       acceleration=acceleration, accel=accel, brake=brake, steering=steering,
                       has_rear_steering=has_rear, rear_steering=rear)
    sensor = MoraiSensorControl.Request(sensor_index=1, pos_x=velocity, pos_y=accel,
                                        pos_z=brake, roll=steering, pitch=rear, heading=velocity)
    inter = MoraiSetIntersectionStatus.Request(intersection_index=1, intersection_status=1,
                                               intersection_status_time=acceleration)
    multi = MoraiSetMultiEgoSetting.Request(camera_index=0)
    for name, req in (('ctrl_cmd', msg), ('sensor_control', sensor),
                      ('set_intersection', inter), ('multi_ego_setting', multi)):
        try:
            value = convert.COMMANDS[name](req)
            raw = morai.encode(name, value)
        except CodecError as err:
            fz.check_codec_error(err)
            continue
        back = morai.decode(name, raw)
        for field in ('velocity', 'steering', 'pos_x', 'status_time'):
            if hasattr(back, field):
                assert math.isfinite(getattr(back, field)), (name, field)
