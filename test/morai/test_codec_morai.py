"""MORAI SIM UDP codec: golden bytes, release layouts, encoders, errors, dispatch.

Golden datagrams are built here with ``struct.pack_into`` at the absolute byte offsets of
SUPPLEMENT §1.3 (and the spec tables), never through the project's encoders; every vector is
checked against its documented total size.  Field values are all distinct and exactly
representable in float32, so a swapped or shifted field cannot decode to the expected value.
"""
from __future__ import annotations

import pathlib
import struct

import numpy as np
import pytest

from ros_sim_bridge.core import binary
from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.morai import codec as morai

TAIL = b'\r\n'


def datagram(total: int, identifier: bytes, data_length: int, tail_at=None) -> bytearray:
    """A zeroed datagram of ``total`` bytes with identifier, data_length and tail in place."""
    buf = bytearray(total)
    buf[0:len(identifier)] = identifier
    struct.pack_into('<i', buf, len(identifier), data_length)
    if tail_at is not None:
        buf[tail_at:tail_at + 2] = TAIL
    return buf


def put(buf: bytearray, offsets: dict, values: dict, fmt: dict) -> None:
    for name, offset in offsets.items():
        struct.pack_into('<' + fmt.get(name, 'f'), buf, offset, values[name])


def distinct_floats(names, start=1.25):
    """name → distinct float32-exact values (alternating sign)."""
    return {n: (start + 0.5 * i) * (-1 if i % 3 == 1 else 1) for i, n in enumerate(names)}


# ---------------------------------------------------------------------------------------------
# Ego Vehicle Status — absolute offsets per SUPPLEMENT §1.3 (payload from byte 27)

EGO94_OFFSETS = {
    'ctrl_mode': 27, 'gear': 28, 'signed_velocity': 29, 'map_data_id': 33, 'accel': 37,
    'brake': 41, 'size_x': 45, 'size_y': 49, 'size_z': 53, 'overhang': 57, 'wheelbase': 61,
    'rear_overhang': 65, 'pos_x': 69, 'pos_y': 73, 'pos_z': 77, 'roll': 81, 'pitch': 85,
    'heading': 89, 'velocity_x': 93, 'velocity_y': 97, 'velocity_z': 101, 'accel_x': 105,
    'accel_y': 109, 'accel_z': 113, 'steer': 117}
EGO152_OFFSETS = {
    'sec': 27, 'nsec': 31, 'ctrl_mode': 35, 'gear': 36, 'signed_velocity': 37,
    'map_data_id': 41, 'accel': 45, 'brake': 49, 'size_x': 53, 'size_y': 57, 'size_z': 61,
    'overhang': 65, 'wheelbase': 69, 'rear_overhang': 73, 'pos_x': 77, 'pos_y': 81, 'pos_z': 85,
    'roll': 89, 'pitch': 93, 'heading': 97, 'velocity_x': 101, 'velocity_y': 105,
    'velocity_z': 109, 'angular_velocity_x': 113, 'angular_velocity_y': 117,
    'angular_velocity_z': 121, 'accel_x': 125, 'accel_y': 129, 'accel_z': 133, 'steer': 137}
TYRES = [f'{q}_{w}' for q in ('tire_lateral_force', 'side_slip_angle', 'tire_cornering_stiffness')
         for w in ('fl', 'fr', 'rl', 'rr')]
LANE = ['distance_left_lane_boundary', 'distance_right_lane_boundary', 'cross_track_error']
INT_FMT = {'ctrl_mode': 'b', 'gear': 'b', 'map_data_id': 'i', 'sec': 'i', 'nsec': 'i'}

# layout → (data_length, total, tail_at, offsets, link_id offset or None)
EGO_CASES = {
    'ego94': (94, 123, 121, EGO94_OFFSETS, None),
    'ego94_notail': (94, 121, None, EGO94_OFFSETS, None),
    'ego132': (132, 161, 159, EGO94_OFFSETS, 121),
    'ego152': (152, 181, 179, EGO152_OFFSETS, 141),
    'ego200': (200, 229, 227, {**EGO152_OFFSETS, **{n: 179 + 4 * i for i, n in enumerate(TYRES)}},
               141),
    'ego216': (216, 245, 243, {**EGO152_OFFSETS, 'rear_steer': 141,
                               **{n: 183 + 4 * i for i, n in enumerate(TYRES + LANE)}}, 145),
}


def ego_values(offsets):
    values = distinct_floats([n for n in offsets if n not in INT_FMT])
    values.update(ctrl_mode=2, gear=4, map_data_id=1234, sec=1_700_000_123, nsec=456_789_000)
    return values


@pytest.mark.parametrize('layout', list(EGO_CASES))
def test_ego_status_golden(layout):
    data_length, total, tail_at, offsets, link_at = EGO_CASES[layout]
    buf = datagram(total, b'#MoraiInfo$', data_length, tail_at)
    values = ego_values(offsets)
    put(buf, offsets, values, INT_FMT)
    if link_at is not None:
        buf[link_at:link_at + 12] = b'A219BS010399'
    assert len(buf) == total

    status = morai.decode_ego_status(bytes(buf))
    assert status.layout == layout
    for name, value in values.items():
        if name in offsets:
            assert getattr(status, name) == value, name
    if 'sec' not in offsets:
        assert status.sec is None and status.nsec is None and status.stamp_ns is None
    else:
        assert status.stamp_ns == 1_700_000_123_456_789_000
    if 'angular_velocity_x' not in offsets:
        assert status.angular_velocity_x is None
    assert status.link_id == ('A219BS010399' if link_at else None)
    for name in TYRES + LANE + ['rear_steer']:
        if name not in offsets:
            assert getattr(status, name) is None, name
    # The encoder reproduces the golden bytes exactly.
    assert morai.encode_ego_status(status) == bytes(buf)


def test_ego_status_document_values():
    """The spec's own example semantics: 50 km/h, heading 90°, Drive, auto mode."""
    buf = datagram(123, b'#MoraiInfo$', 94, 121)
    struct.pack_into('<bbfi', buf, 27, 2, 4, 50.0, 7)
    struct.pack_into('<3f', buf, 69, 10.5, -20.25, 0.75)
    struct.pack_into('<f', buf, 89, 90.0)
    status = morai.decode_ego_status(bytes(buf))
    assert (status.ctrl_mode, status.gear, status.signed_velocity, status.map_data_id) == \
        (2, 4, 50.0, 7)
    assert (status.pos_x, status.pos_y, status.pos_z, status.heading) == (10.5, -20.25, 0.75, 90.0)


# ---------------------------------------------------------------------------------------------
# Object Info

OBJ_REC = {'obj_id': 0, 'obj_type': 2, 'pos_x': 4, 'pos_y': 8, 'pos_z': 12, 'heading': 16,
           'size_x': 20, 'size_y': 24, 'size_z': 28, 'overhang': 32, 'wheelbase': 36,
           'rear_overhang': 40, 'velocity_x': 44, 'velocity_y': 48, 'velocity_z': 52,
           'accel_x': 56, 'accel_y': 60, 'accel_z': 64}
# layout → (data_length, total, record size, first record offset, has timestamp)
OBJ_CASES = {'obj68': (1360, 1392, 68, 30, False), 'obj68_ts': (1368, 1400, 68, 38, True),
             'obj106': (2120, 2152, 106, 30, False), 'obj106_ts': (2128, 2160, 106, 38, True)}
OBJ_SLOTS = {0: (101, 1), 1: (7, 0), 5: (-3, 2)}   # slot → (obj_id, obj_type); others empty


def obj_values(slot):
    values = distinct_floats([n for n in OBJ_REC if n not in ('obj_id', 'obj_type')],
                             start=1.25 + 100 * slot)
    values['obj_id'], values['obj_type'] = OBJ_SLOTS[slot]
    return values


@pytest.mark.parametrize('layout', list(OBJ_CASES))
def test_object_info_golden(layout):
    data_length, total, size, first, stamped = OBJ_CASES[layout]
    buf = datagram(total, b'#MoraiObjInfo$', data_length, total - 2)
    assert first + 20 * size + 2 == total
    if stamped:
        struct.pack_into('<ii', buf, 30, 321, 654_000_000)
    for slot in OBJ_SLOTS:
        base = first + slot * size
        put(buf, {k: base + v for k, v in OBJ_REC.items()}, obj_values(slot),
            {'obj_id': 'h', 'obj_type': 'h'})
        if size == 106:
            buf[base + 68:base + 68 + 8] = b'LINK%04d' % slot
    info = morai.decode_object_info(bytes(buf))
    assert info.layout == layout
    assert (info.sec, info.nsec) == ((321, 654_000_000) if stamped else (None, None))
    assert info.objects.shape == (20,) and info.objects.dtype == morai.OBJECT_DTYPE
    assert info.empty.tolist() == [i not in OBJ_SLOTS for i in range(20)]
    for slot in OBJ_SLOTS:
        rec = info.objects[slot]
        for name, value in obj_values(slot).items():
            assert rec[name] == value, (slot, name)
        assert rec['link_id'] == (b'LINK%04d' % slot if size == 106 else b'')
    present = info.present()
    assert present['obj_id'].tolist() == [101, 7, -3]
    assert morai.encode_object_info(info.objects, layout, *(
        (321, 654_000_000) if stamped else ())) == bytes(buf)


def test_object_info_document_1472_is_unknown_layout():
    """The document's 1472-byte figure is a buffer size; no release sends it."""
    buf = datagram(1472, b'#MoraiObjInfo$', 1420, 1470)
    with pytest.raises(CodecError) as err:
        morai.decode_object_info(bytes(buf))
    assert err.value.kind == binary.UNKNOWN_LAYOUT
    assert '1420' in str(err.value) and '1472' in str(err.value)


# ---------------------------------------------------------------------------------------------
# Collision Data / NPC Vehicle Collision

COL_REC = {'obj_type': 0, 'obj_id': 2, 'pos_x': 4, 'pos_y': 8, 'pos_z': 12,
           'global_offset_x': 16, 'global_offset_y': 20, 'global_offset_z': 24}


@pytest.mark.parametrize('layout, data_length, total, first, stamped',
                         [('col140', 140, 173, 31, False), ('col148', 148, 181, 39, True)])
def test_collision_golden(layout, data_length, total, first, stamped):
    buf = datagram(total, b'#CollisionData$', data_length, total - 2)
    assert first + 5 * 28 + 2 == total
    if stamped:
        struct.pack_into('<ii', buf, 31, 99, 5_000)
    hits = {0: (1, 42), 3: (0, 8)}
    for slot, (obj_type, obj_id) in hits.items():
        values = distinct_floats(list(COL_REC)[2:], start=0.5 + 10 * slot)
        values.update(obj_type=obj_type, obj_id=obj_id)
        put(buf, {k: first + 28 * slot + v for k, v in COL_REC.items()}, values,
            {'obj_type': 'h', 'obj_id': 'h'})
    col = morai.decode_collision(bytes(buf))
    assert col.layout == layout
    assert (col.sec, col.nsec) == ((99, 5_000) if stamped else (None, None))
    assert col.empty.tolist() == [False, True, True, False, True]
    assert col.records['obj_id'][[0, 3]].tolist() == [42, 8]
    assert col.records['obj_type'][[0, 3]].tolist() == [1, 0]
    assert col.records[3]['global_offset_z'] == distinct_floats(list(COL_REC)[2:],
                                                                30.5)['global_offset_z']
    assert col.records[0]['pos_x'] == 0.5
    assert len(col.present()) == 2
    assert morai.encode_collision(col.records, layout, *((99, 5_000) if stamped else ())) \
        == bytes(buf)


VCOL_REC = {'obj_type': 0, 'obj_id': 2, 'pos_x': 4, 'pos_y': 8, 'pos_z': 12, 'heading': 16,
            'size_x': 20, 'size_y': 24, 'size_z': 28, 'velocity_x': 32, 'velocity_y': 36,
            'velocity_z': 40, 'accel_x': 44, 'accel_y': 48, 'accel_z': 52}


def test_vehicle_collision_golden():
    buf = datagram(1156, b'#VehicleCollision$', 1120, 1154)
    assert 34 + 10 * 112 + 2 == 1156
    floats = list(VCOL_REC)[2:]
    for which, (obj_id, base) in enumerate([(11, 34 + 112 * 2), (12, 34 + 112 * 2 + 56)]):
        values = distinct_floats(floats, start=2.5 + 50 * which)
        values.update(obj_type=1, obj_id=obj_id)
        put(buf, {k: base + v for k, v in VCOL_REC.items()}, values,
            {'obj_type': 'h', 'obj_id': 'h'})
    vc = morai.decode_vehicle_collision(bytes(buf))
    assert vc.pairs.shape == (10, 2)
    assert vc.empty.tolist() == [i != 2 for i in range(10)]
    assert vc.pairs[2]['obj_id'].tolist() == [11, 12]
    assert vc.pairs[2, 1]['accel_z'] == distinct_floats(floats, 52.5)['accel_z']
    assert vc.pairs[2, 0]['heading'] == distinct_floats(floats, 2.5)['heading']
    assert vc.present().shape == (1, 2)
    assert morai.encode_vehicle_collision(vc.present()[:0]) != bytes(buf)
    assert morai.encode_vehicle_collision(vc.pairs) == bytes(buf)


# ---------------------------------------------------------------------------------------------
# Multi Ego Setting

def test_multi_ego_golden():
    buf = datagram(683, b'#MultiEgoSetting$', 648, 681)
    struct.pack_into('<ii', buf, 33, 2, 1)
    for k, (index, gear, mode) in enumerate([(0, 4, 16), (1, 2, 1)]):
        base = 41 + 32 * k
        struct.pack_into('<h7fbb', buf, base, index, 1.5 + k, 2.5 + k, 3.5 + k, 4.5 + k,
                         5.5 + k, 6.5 + k, 7.5 + k, gear, mode)
    setting = morai.decode_multi_ego(bytes(buf))
    assert (setting.num_of_ego, setting.camera_index) == (2, 1)
    active = setting.active()
    assert active['ego_index'].tolist() == [0, 1]
    assert active['gear'].tolist() == [4, 2] and active['ctrl_mode'].tolist() == [16, 1]
    assert active['pos_x'].tolist() == [1.5, 2.5] and active['heading'].tolist() == [6.5, 7.5]
    assert active['velocity'].tolist() == [7.5, 8.5]
    assert morai.encode_multi_ego(setting) == bytes(buf)


# ---------------------------------------------------------------------------------------------
# Traffic light and intersection

def test_traffic_light_status_golden():
    buf = datagram(48, b'#TrafficLight$', 16, 46)
    buf[30:42] = b'C119BS010025'
    struct.pack_into('<hh', buf, 42, 1, 16 | 32)
    tl = morai.decode_traffic_light_status(bytes(buf))
    assert (tl.index, tl.type, tl.status) == ('C119BS010025', 1, 48)
    assert morai.encode_traffic_light_status(tl) == bytes(buf)


def test_set_traffic_light_golden():
    buf = datagram(46, b'#TrafficLight$', 14, 44)
    buf[30:35] = b'TL_07'
    struct.pack_into('<h', buf, 42, 1 | 32)
    cmd = morai.SetTrafficLight('TL_07', 33)
    assert morai.encode_set_traffic_light(cmd) == bytes(buf)
    assert morai.decode_set_traffic_light(bytes(buf)) == cmd


def test_traffic_light_get_and_set_are_told_apart():
    get = morai.encode_traffic_light_status(morai.TrafficLightStatus('A', 0, 4))
    put_ = morai.encode_set_traffic_light(morai.SetTrafficLight('A', 4))
    assert get[:14] == put_[:14] == b'#TrafficLight$'
    assert morai.identify(get) == 'traffic_light_status'
    assert morai.identify(put_) == 'set_traffic_light'
    with pytest.raises(CodecError) as err:
        morai.decode_traffic_light_status(put_)
    assert err.value.kind == binary.UNKNOWN_LAYOUT and 'Set TrafficLight' in str(err.value)


def test_intersection_status_golden():
    buf = datagram(37, b'#IntStatus$', 8, 35)
    struct.pack_into('<hhf', buf, 27, 12, 3, 4.75)
    st = morai.decode_intersection_status(bytes(buf))
    assert (st.index, st.status, st.status_time) == (12, 3, 4.75)
    assert morai.encode_intersection_status(st) == bytes(buf)


def test_set_intersection_golden():
    buf = datagram(40, b'#SetIntStatus$', 8, 38)
    struct.pack_into('<hhf', buf, 30, 5, 2, 1.5)
    cmd = morai.SetIntersectionStatus(5, 2, 1.5)
    assert morai.encode_set_intersection(cmd) == bytes(buf)
    assert morai.decode_set_intersection(bytes(buf)) == cmd


# ---------------------------------------------------------------------------------------------
# Ego Ctrl Cmd, every CmdType

@pytest.mark.parametrize('cmd_type, gear, velocity, acceleration, accel, brake, steering', [
    (1, 4, 0.0, 0.0, 0.625, 0.0, -0.25),    # pedals
    (1, 2, 0.0, 0.0, 0.0, 0.875, 1.0),      # pedals, reverse gear, full brake-ish
    (2, 4, 30.5, 0.0, 0.0, 0.0, 0.125),     # velocity (km/h)
    (3, 4, 0.0, -2.5, 0.0, 0.0, -1.0),      # acceleration (m/s²)
])
def test_ctrl_cmd_golden(cmd_type, gear, velocity, acceleration, accel, brake, steering):
    buf = datagram(55, b'#MoraiCtrlCmd$', 23, 53)
    buf[30], buf[31], buf[32] = 2, gear, cmd_type
    for offset, value in zip((33, 37, 41, 45, 49),
                             (velocity, acceleration, accel, brake, steering)):
        struct.pack_into('<f', buf, offset, value)
    cmd = morai.CtrlCmd(2, gear, cmd_type, velocity, acceleration, accel, brake, steering)
    assert morai.encode_ctrl_cmd(cmd) == bytes(buf)
    assert morai.decode_ctrl_cmd(bytes(buf)) == cmd


def test_ctrl_cmd_hex_literal():
    """Keyboard mode, Parking, pedals, all zero: a byte-for-byte literal."""
    expected = bytes.fromhex(
        '234d6f7261694374726c436d6424'      # '#MoraiCtrlCmd$'
        '17000000' + '00' * 12 +            # data_length 23, aux
        '010101' + '00' * 20 + '0d0a')
    assert len(expected) == 55
    assert morai.encode_ctrl_cmd(morai.CtrlCmd(1, 1, 1)) == expected


def test_ctrl_cmd_rear_steer_form():
    buf = datagram(59, b'#MoraiCtrlCmd$', 27, 57)
    buf[30:33] = bytes([2, 4, 1])
    struct.pack_into('<6f', buf, 33, 0.0, 0.0, 0.5, 0.0, 0.25, -0.5)
    cmd = morai.decode_ctrl_cmd(bytes(buf))
    assert (cmd.accel, cmd.steering, cmd.rear_steering) == (0.5, 0.25, -0.5)
    assert morai.encode_ctrl_cmd(cmd) == bytes(buf)
    assert morai.decode_ctrl_cmd(morai.encode_ctrl_cmd(morai.CtrlCmd())).rear_steering is None


# ---------------------------------------------------------------------------------------------
# Scenario Load, Save Sensor Data, Sensor Control, Lamps

def test_scenario_load_golden():
    buf = datagram(69, b'#ScenarioLoad$', 37, 67)
    buf[30:60] = b'scenario_01.json'.ljust(30, b' ')     # space-padded like MORAI's example
    buf[60:67] = bytes([1, 0, 1, 1, 0, 1, 0])
    cmd = morai.ScenarioLoad('scenario_01.json', True, False, True, True, False, True, False)
    assert morai.encode_scenario_load(cmd) == bytes(buf)
    assert morai.decode_scenario_load(bytes(buf)) == cmd
    nul = bytearray(buf)
    nul[30:60] = b'scenario_01.json'.ljust(30, b'\0')
    assert morai.encode_scenario_load(cmd, pad=b'\0') == bytes(nul)
    assert morai.decode_scenario_load(bytes(nul)) == cmd


def test_save_sensor_data_golden():
    buf = datagram(125, b'#SaveSensorData$', 91, 123)
    buf[32] = 1
    buf[33:33 + 9] = b'frame_001'
    buf[63:63 + 14] = b'C:/morai/saves'
    cmd = morai.SaveSensorData(True, 'frame_001', 'C:/morai/saves')
    assert morai.encode_save_sensor_data(cmd) == bytes(buf)
    assert morai.decode_save_sensor_data(bytes(buf)) == cmd


def test_sensor_control_golden():
    buf = datagram(59, b'#SensorControl$', 26, 57)
    struct.pack_into('<h', buf, 31, 3)
    struct.pack_into('<6f', buf, 33, 1.5, -0.5, 2.25, 0.0, -5.0, 90.0)
    cmd = morai.SensorControl(3, 1.5, -0.5, 2.25, 0.0, -5.0, 90.0)
    assert morai.encode_sensor_control(cmd) == bytes(buf)
    assert morai.decode_sensor_control(bytes(buf)) == cmd


def test_lamp_control_hex_literal():
    expected = bytes.fromhex('234c616d70436f6e74726f6c24' '02000000' + '00' * 12 + '0201' '0d0a')
    assert len(expected) == 33
    cmd = morai.LampControl(turn_signal=2, emergency_signal=1)
    assert morai.encode_lamp_control(cmd) == expected
    assert morai.decode_lamp_control(expected) == cmd


# ---------------------------------------------------------------------------------------------
# Bad input

def _ego94() -> bytes:
    return bytes(datagram(123, b'#MoraiInfo$', 94, 121))


def _kind(fn, data):
    with pytest.raises(CodecError) as err:
        fn(data)
    return err.value


@pytest.mark.parametrize('data, kind', [
    (b'', binary.TRUNCATED),
    (b'#MoraiIn', binary.TRUNCATED),                        # ends inside the identifier
    (b'#MoraiInfo$\x5e\x00', binary.TRUNCATED),             # ends inside data_length
    (_ego94()[:-1], binary.TRUNCATED),
    (_ego94()[:60], binary.TRUNCATED),
    (_ego94()[:122], binary.TRUNCATED),                     # between the 121 and 123 forms
    (_ego94() + b'\0', binary.OVERSIZED),
    (_ego94() + b'\r\n', binary.OVERSIZED),
    (_ego94()[:-2] + b'\n\r', binary.BAD_MAGIC),            # wrong tail
    (_ego94()[:-2] + b'\0\0', binary.BAD_MAGIC),
    (b'#MoraiInfX' + _ego94()[10:], binary.BAD_MAGIC),
    (b'#MoraiObjInfo$' + bytes(2146), binary.BAD_MAGIC),    # another message
    (bytes(range(256)) * 2, binary.BAD_MAGIC),              # garbage
    (b'\xff' * 123, binary.BAD_MAGIC),
])
def test_ego_status_bad_input(data, kind):
    assert _kind(morai.decode_ego_status, data).kind == kind


@pytest.mark.parametrize('data_length, total', [(100, 129), (-1, 123), (245, 245), (0, 29),
                                                (2**31 - 1, 123)])
def test_unknown_layout_names_the_sizes(data_length, total):
    buf = datagram(total, b'#MoraiInfo$', data_length, total - 2)
    err = _kind(morai.decode_ego_status, bytes(buf))
    assert err.kind == binary.UNKNOWN_LAYOUT
    assert str(data_length) in str(err) and str(total) in str(err)
    assert '94/123' in str(err) and '200/229' in str(err)


@pytest.mark.parametrize('decoder, good', [
    (morai.decode_object_info, lambda: datagram(2160, b'#MoraiObjInfo$', 2128, 2158)),
    (morai.decode_collision, lambda: datagram(181, b'#CollisionData$', 148, 179)),
    (morai.decode_vehicle_collision, lambda: datagram(1156, b'#VehicleCollision$', 1120, 1154)),
    (morai.decode_multi_ego, lambda: datagram(683, b'#MultiEgoSetting$', 648, 681)),
    (morai.decode_intersection_status, lambda: datagram(37, b'#IntStatus$', 8, 35)),
    (morai.decode_ctrl_cmd, lambda: _valid_ctrl()),
    (morai.decode_lamp_control, lambda: datagram(33, b'#LampControl$', 2, 31)),
    (morai.decode_scenario_load, lambda: datagram(69, b'#ScenarioLoad$', 37, 67)),
    (morai.decode_save_sensor_data, lambda: datagram(125, b'#SaveSensorData$', 91, 123)),
    (morai.decode_sensor_control, lambda: datagram(59, b'#SensorControl$', 26, 57)),
    (morai.decode_set_intersection, lambda: datagram(40, b'#SetIntStatus$', 8, 38)),
])
def test_every_decoder_rejects_each_bad_kind(decoder, good):
    data = bytes(good())
    decoder(data)                                       # the good form decodes
    assert _kind(decoder, data[:-1]).kind == binary.TRUNCATED
    assert _kind(decoder, data + b'\0').kind == binary.OVERSIZED
    assert _kind(decoder, data[:-2] + b'\r\r').kind == binary.BAD_MAGIC
    assert _kind(decoder, b'?' + data[1:]).kind == binary.BAD_MAGIC
    wrong_len = bytearray(data)
    ident_len = data.index(b'$') + 1
    struct.pack_into('<i', wrong_len, ident_len, 3)
    assert _kind(decoder, bytes(wrong_len)).kind == binary.UNKNOWN_LAYOUT


def _valid_ctrl() -> bytearray:
    buf = datagram(55, b'#MoraiCtrlCmd$', 23, 53)
    buf[30:33] = bytes([2, 4, 1])
    return buf


@pytest.mark.parametrize('offset, fmt, value', [
    (31, 'B', 6), (30, 'B', 0), (32, 'B', 4), (41, 'f', 1.5), (45, 'f', -0.1),
    (49, 'f', float('nan')), (33, 'f', float('inf'))])
def test_ctrl_cmd_decoder_validates_values(offset, fmt, value):
    buf = _valid_ctrl()
    struct.pack_into('<' + fmt, buf, offset, value)
    assert _kind(morai.decode_ctrl_cmd, bytes(buf)).kind == binary.BAD_VALUE


def test_multi_ego_num_out_of_range():
    buf = datagram(683, b'#MultiEgoSetting$', 648, 681)
    struct.pack_into('<i', buf, 33, 21)
    assert _kind(morai.decode_multi_ego, bytes(buf)).kind == binary.BAD_VALUE


def test_non_ascii_link_id_is_bad_value():
    buf = datagram(161, b'#MoraiInfo$', 132, 159)
    buf[121:124] = 'é'.encode('utf-8') + b'x'
    assert _kind(morai.decode_ego_status, bytes(buf)).kind == binary.BAD_VALUE


# ---------------------------------------------------------------------------------------------
# Encoders refuse values they cannot send (BAD_VALUE, no bytes)

BAD_COMMANDS = [
    (morai.encode_scenario_load, morai.ScenarioLoad('x' * 31), 'file_name'),
    (morai.encode_scenario_load, morai.ScenarioLoad(''), 'file_name'),   # the .srv: 1..30
    (morai.encode_scenario_load, morai.ScenarioLoad('szenario_ä.json'), 'file_name'),
    (morai.encode_scenario_load, morai.ScenarioLoad('a\0b'), 'file_name'),
    (morai.encode_scenario_load, morai.ScenarioLoad('trailing '), 'file_name'),
    (morai.encode_scenario_load, morai.ScenarioLoad('ok', delete_all=2), 'delete_all'),
    (morai.encode_save_sensor_data, morai.SaveSensorData(True, 'x' * 31, ''), 'custom_file_name'),
    (morai.encode_save_sensor_data, morai.SaveSensorData(True, 'a', 'd' * 61), 'file_dir'),
    (morai.encode_save_sensor_data, morai.SaveSensorData('yes', 'a', 'b'),
     'is_custom_file_name'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(gear=6), 'gear'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(gear=-1), 'gear'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(gear=4.0), 'gear'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(ctrl_mode=3), 'ctrl_mode'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(cmd_type=0), 'cmd_type'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(cmd_type=4), 'cmd_type'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(accel=1.01), 'accel'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(brake=-0.5), 'brake'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(steering=1.5), 'steering'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(steering=float('nan')), 'steering'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(velocity=float('inf')), 'velocity'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(acceleration=1e39), 'acceleration'),
    (morai.encode_ctrl_cmd, morai.CtrlCmd(rear_steering=-2.0), 'rear_steering'),
    (morai.encode_lamp_control, morai.LampControl(turn_signal=3), 'turn_signal'),
    (morai.encode_lamp_control, morai.LampControl(emergency_signal=2), 'emergency_signal'),
    (morai.encode_set_traffic_light, morai.SetTrafficLight('x' * 13, 1), 'index'),
    (morai.encode_set_traffic_light, morai.SetTrafficLight('', 1), 'index'),
    (morai.encode_set_traffic_light, morai.SetTrafficLight('A', 2), 'status'),
    (morai.encode_set_traffic_light, morai.SetTrafficLight('A', 0), 'status'),
    (morai.encode_set_traffic_light, morai.SetTrafficLight('A', 64), 'status'),
    (morai.encode_set_intersection, morai.SetIntersectionStatus(40000, 1, 0.0), 'index'),
    (morai.encode_set_intersection, morai.SetIntersectionStatus(1, 1, -1.0), 'status_time'),
    (morai.encode_sensor_control, morai.SensorControl(1, pos_x=float('nan')), 'pos_x'),
    (morai.encode_sensor_control, morai.SensorControl(-40000), 'sensor_index'),
    (morai.encode_multi_ego, morai.MultiEgoSetting(num_of_ego=21), 'num_of_ego'),
    (morai.encode_traffic_light_status, morai.TrafficLightStatus('A', 0, 70000), 'status'),
]


@pytest.mark.parametrize('encoder, value, field', BAD_COMMANDS,
                         ids=[f'{e.__name__}-{f}-{i}' for i, (e, _, f) in enumerate(BAD_COMMANDS)])
def test_encoder_rejects_bad_value(encoder, value, field):
    err = _kind(encoder, value)
    assert err.kind == binary.BAD_VALUE
    assert err.field == field
    assert field in str(err)


def test_31_char_file_name_message_is_clear():
    err = _kind(morai.encode_scenario_load, morai.ScenarioLoad('f' * 31))
    assert '31' in str(err) and '30' in str(err)


def test_record_encoders_reject_too_many_or_bad_records():
    too_many = np.zeros(21, morai.OBJECT_DTYPE)
    assert _kind(morai.encode_object_info, too_many).kind == binary.BAD_VALUE
    bad = np.zeros(1, morai.OBJECT_DTYPE)
    bad['pos_x'] = np.nan
    assert _kind(morai.encode_object_info, bad).kind == binary.BAD_VALUE
    wide = np.zeros(1, [('obj_id', '<i4')])
    wide['obj_id'] = 70000
    assert _kind(morai.encode_object_info, wide).kind == binary.BAD_VALUE
    with pytest.raises(CodecError):
        morai.encode_object_info(None, layout='obj99')
    assert _kind(morai.encode_vehicle_collision, np.zeros(3, morai.VEHICLE_DTYPE)).kind == \
        binary.BAD_VALUE


# ---------------------------------------------------------------------------------------------
# Round trips (extra; the goldens above are the reference)

def test_round_trip_every_message_type():
    rng = np.random.default_rng(7)
    objects = np.zeros(5, morai.OBJECT_DTYPE)
    objects['obj_id'] = [1, 2, 3, 4, 5]
    objects['pos_x'] = rng.normal(size=5).astype(np.float32)
    objects['link_id'] = b'L1'
    values = {
        'ego_status': morai.EgoVehicleStatus(layout='ego152', sec=1, nsec=2, pos_x=3.5,
                                             angular_velocity_x=0.5, angular_velocity_y=-0.5,
                                             angular_velocity_z=1.25, link_id='L9'),
        'object_info': morai.ObjectInfo('obj106_ts', 5, 6, np.resize(objects, 20), None),
        'collision': morai.CollisionData('col148', 7, 8, np.zeros(5, morai.COLLISION_DTYPE),
                                         None),
        'traffic_light_status': morai.TrafficLightStatus('T1', 2, 17),
        'intersection_status': morai.IntersectionStatus(3, 1, 2.5),
        'multi_ego_setting': morai.MultiEgoSetting(1, 0, np.zeros(20, morai.MULTI_EGO_DTYPE)),
        'ctrl_cmd': morai.CtrlCmd(2, 4, 2, 42.5, 0.0, 0.0, 0.0, -0.125),
        'set_traffic_light': morai.SetTrafficLight('T1', -1),
        'set_intersection': morai.SetIntersectionStatus(3, 2, 0.0),
        'scenario_load': morai.ScenarioLoad('a.json', set_pause=True),
        'save_sensor_data': morai.SaveSensorData(False, '', '/tmp/x'),
        'sensor_control': morai.SensorControl(2, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0),
        'lamp_control': morai.LampControl(1, 0),
    }
    assert set(values) | {'vehicle_collision'} == set(morai.MESSAGE_TYPES)
    for name, value in values.items():
        data = morai.encode(name, value)
        assert morai.identify(data) == name
        got_name, got = morai.decode_any(data)
        assert got_name == name
        if name == 'object_info':
            assert got.objects.tobytes() == value.objects.tobytes()
            assert (got.sec, got.nsec) == (5, 6)
        elif name == 'collision':
            assert got.empty.all() and (got.sec, got.nsec) == (7, 8)
        elif name == 'multi_ego_setting':
            assert got.num_of_ego == 1 and got.egos.tobytes() == value.egos.tobytes()
        else:
            assert got == value, name
    data = morai.encode('vehicle_collision', np.zeros((1, 2), morai.VEHICLE_DTYPE))
    assert morai.decode('vehicle_collision', data).empty.all()


@pytest.mark.parametrize('layout', ['ego94', 'ego94_notail', 'ego132', 'ego152', 'ego200',
                                    'ego216'])
def test_ego_layout_round_trip_and_size(layout):
    status = morai.EgoVehicleStatus(layout=layout, sec=3, nsec=4, signed_velocity=-12.5,
                                    steer=7.25, link_id='LINK', rear_steer=1.5,
                                    cross_track_error=0.25, tire_cornering_stiffness_rr=9.5)
    data = morai.encode_ego_status(status)
    assert len(data) == {'ego94': 123, 'ego94_notail': 121, 'ego132': 161, 'ego152': 181,
                         'ego200': 229, 'ego216': 245}[layout]
    got = morai.decode_ego_status(data)
    assert got.layout == layout and got.signed_velocity == -12.5 and got.steer == 7.25
    assert got.link_id == (None if layout.startswith('ego94') else 'LINK')


# ---------------------------------------------------------------------------------------------
# Dispatch

def test_dispatch_by_configured_name():
    data = bytes(datagram(37, b'#IntStatus$', 8, 35))
    assert morai.decode('intersection_status', data) == morai.IntersectionStatus(0, 0, 0.0)
    with pytest.raises(KeyError, match='ego_status'):
        morai.decode('IntersectionStatus', data)     # ROS names live in morai/ros/names.py
    with pytest.raises(KeyError, match='ego_status'):
        morai.decode('no_such_message', data)
    with pytest.raises(CodecError) as err:
        morai.decode('ego_status', data)
    assert err.value.kind == binary.BAD_MAGIC


def test_identify_rejects_garbage():
    for data in (b'', b'hello', b'#Nope$' + bytes(40)):
        with pytest.raises(CodecError) as err:
            morai.identify(data)
        assert err.value.kind in (binary.BAD_MAGIC, binary.TRUNCATED)
    odd_tl = bytes(datagram(40, b'#TrafficLight$', 8, 38))
    assert _kind(morai.identify, odd_tl).kind == binary.UNKNOWN_LAYOUT


def test_table_ports_and_directions():
    t = morai.MESSAGE_TYPES
    assert (t['ctrl_cmd'].port, t['ego_status'].port, t['object_info'].port) == (9093, 909, 7505)
    assert t['ego_status'].direction == morai.FROM_SIM
    assert t['lamp_control'].direction == morai.TO_SIM


def test_codec_is_sans_io():
    root = pathlib.Path(morai.__file__).parent
    for path in root.glob('*.py'):
        text = path.read_text()
        for banned in ('import socket', 'rclpy', 'open(', 'morai_msg', "'/Ego_topic'"):
            assert banned not in text, (path.name, banned)
