"""CARLA recorder codec against bytes written by hand from SUPPLEMENT §5.2–5.3 (not from our
encoder), UE4 (3 × f32 vectors) and UE5 (3 × f64), every id table of ids >= 18, the four real
recordings against their PROVENANCE.md, and damaged files."""
import mmap
import struct

import numpy as np
import pytest

from conftest import shared_path
from ros_sim_bridge.carla.codec import Recording, decode_header
from ros_sim_bridge.core.binary import (BAD_MAGIC, BAD_VALUE, TRUNCATED, UNKNOWN_LAYOUT,
                                        CodecError)

# -- hand-written bytes ----------------------------------------------------------------------
HEADER = (b'\x01\x00'                       # u16 version 1
          + b'\x0e\x00' + b'CARLA_RECORDER'  # u16 length 14 + magic
          + struct.pack('<q', 1637671165)    # i64 Unix seconds
          + b'\x06\x00' + b'Town06')         # map: 06 00 54 6f 77 6e 30 36 (the document's)


def s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack('<H', len(raw)) + raw


def pk(pid: int, data: bytes) -> bytes:
    return struct.pack('<BI', pid, len(data)) + data


def frame_start(fid, duration, elapsed):
    return pk(0, struct.pack('<Q', fid) + struct.pack('<d', duration) + struct.pack('<d', elapsed))


def v(fmt, *xyz):
    return struct.pack('<3' + fmt, *xyz)


def wheel_ue5(i: int) -> bytes:
    """One carla::rpc::WheelPhysicsControl as UE5's recorder writes it (its 208-B in-memory
    image, natural alignment): padding bytes 0xEE, the lateral slip graph's std::vector
    pointers (bytes 72..95) as garbage 0xCD."""
    pad = b'\xee'
    return (bytes([i % 2])                                       # 0 axle_type u8
            + pad * 3 + struct.pack('<3f', 150.0, -80.0 + 160 * (i % 2), 30.0)  # 4 offset
            + struct.pack('<9f', 37.0, 25.0, 30.0, 1000.0, 3.0, 1.0, 20.0, 20.0,
                          70.0 if i < 2 else 0.0)                  # 16..51
            + bytes([i < 2, 1, i >= 2, 1, 0, 0])                  # 52..57 six bools
            + pad * 2 + struct.pack('<f', 30.0)                   # 60 max_wheelspin_rotation
            + b'\x02' + pad * 7                                   # 64 torque combine, pad
            + b'\xcd' * 24                                        # 72 std::vector (pointers)
            + struct.pack('<3f', 0.0, 0.0, -1.0)                  # 96 suspension_axis
            + struct.pack('<3f', 0.0, 0.0, 0.0)                   # 108 force offset
            + struct.pack('<6f', 10.0, 10.0, 0.5, 0.5, 250.0, 50.0)  # 120..143
            + struct.pack('<i', 3) + struct.pack('<f', 0.15)      # 144, 148
            + b'\x01\x02' + pad * 2                               # 152 sweep shape, type
            + struct.pack('<2f', 1500.0, 3000.0)                  # 156, 160 brake torques
            + struct.pack('<i', i)                                # 164 wheel_index
            + struct.pack('<9f', 1.0 * i, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)  # 168..203
            + pad * 4)                                            # 204..207 tail padding


def physics_ue5() -> bytes:
    """A UE5 PhysicsControl packet by hand: u16 count, u32 id, the scalars of
    carla::rpc::VehiclePhysicsControl in write order, five u32-counted lists."""
    head = (struct.pack('<I', 42)
            + struct.pack('<6f', 300.0, 5000.0, 900.0, 1.0, 1.0, 600.0)  # max_torque … rev_down
            + b'\x03' + struct.pack('<f', 0.5) + b'\x01'          # differential, split, auto
            + struct.pack('<7f', 0.5, 4.0, 4500.0, 2000.0, 0.9, 1845.0, 0.3)
            + struct.pack('<3f', 0.0, 0.0, -50.0)                 # center_of_mass
            + struct.pack('<4f', 180.0, 140.0, 0.3, 2.5)          # chassis w/h, downforce, area
            + struct.pack('<3f', 1.0, 1.0, 1.0)                   # inertia_tensor_scale
            + struct.pack('<2f', 10.0, 0.866) + b'\x00')           # sleep x2, sweep collision
    assert len(head) == 111
    return (struct.pack('<H', 1) + head
            + struct.pack('<I', 2) + struct.pack('<4f', 0, 500, 5000, 500)
            + struct.pack('<I', 3) + struct.pack('<3f', 2.85, 2.02, 1.35)
            + struct.pack('<I', 1) + struct.pack('<f', 2.86)
            + struct.pack('<I', 2) + struct.pack('<4f', 0, 1, 10, 0.5)
            + struct.pack('<I', 4) + b''.join(wheel_ue5(i) for i in range(4)))


def frame_packets(f: str) -> bytes:
    """One frame with every packet 2..17 (f: 'f' UE4, 'd' UE5)."""
    add = (struct.pack('<H', 1) + struct.pack('<I', 42) + b'\x01' + v(f, 100.0, -200.0, 30.0)
           + v(f, 0.0, 0.0, 90.0) + struct.pack('<I', 7) + s('vehicle.tesla.model3')
           + struct.pack('<H', 2) + b'\x03' + s('role_name') + s('hero')
           + b'\x04' + s('color') + s('79,33,85'))
    dele = struct.pack('<H', 1) + struct.pack('<I', 9)
    parent = struct.pack('<H', 1) + struct.pack('<II', 43, 42)
    coll = struct.pack('<H', 1) + struct.pack('<III', 5, 42, 0xFFFFFFFF) + b'\x01\x00'
    pos = struct.pack('<H', 2) + struct.pack('<I', 42) + v(f, 100.0, -200.0, 30.0) \
        + v(f, 1.0, 2.0, 90.0) + struct.pack('<I', 43) + v(f, 0, 0, 0) + v(f, 0, 0, 0)
    state = struct.pack('<H', 1) + struct.pack('<I', 60) + b'\x01' + struct.pack('<f', 2.5) \
        + b'\x02'
    anim = struct.pack('<H', 1) + struct.pack('<I', 42) + struct.pack('<fff', -0.25, 0.5, 0.0) \
        + b'\x01' + struct.pack('<i', -1)
    walker = struct.pack('<H', 1) + struct.pack('<I', 50) + struct.pack('<f', 1.25)
    vlight = struct.pack('<H', 1) + struct.pack('<II', 42, 8 | 2)
    slight = struct.pack('<H', 1) + struct.pack('<i', -3) + struct.pack('<f', 1000.0) \
        + struct.pack('<4f', 1, 0.5, 0.25, 1) + b'\x01\x07'
    kin = struct.pack('<H', 1) + struct.pack('<I', 42) + v(f, 5.0, 0, 0) + v(f, 0, 0, 10.0)
    box = struct.pack('<H', 1) + struct.pack('<I', 42) + v(f, 0, 0, 70.0) \
        + v(f, 230.0, 100.0, 75.0)
    ptime = struct.pack('<d', 123.5)
    phys = (struct.pack('<H', 1) + struct.pack('<I', 42) + struct.pack('<5f', 6000, 1, .25, .5, .75)
            + b'\x01' + struct.pack('<4f', 10, 4, 1500, .3) + struct.pack('<3f', 0, 0, -50)
            + struct.pack('<I', 2) + struct.pack('<4f', 0, 400, 5000, 500)
            + struct.pack('<I', 1) + struct.pack('<3f', 3.5, .2, .65)
            + struct.pack('<I', 1) + struct.pack('<2f', 0, 1)
            + struct.pack('<I', 4) + b''.join(struct.pack('<9f', 3.5, .25, 70, 37, 1500, 3000,
                                                          3, 17, 3000) + struct.pack('<3f', i, 0, 0)
                                              for i in range(4)))
    if f == 'd':
        phys = physics_ue5()
    tltime = struct.pack('<H', 1) + struct.pack('<I', 60) + struct.pack('<3f', 10, 3, 2)
    trig = struct.pack('<H', 1) + struct.pack('<I', 61) + v(f, 1, 2, 3) + v(f, 4, 5, 6)
    return b''.join([pk(2, add), pk(3, dele), pk(4, parent), pk(5, coll), pk(6, pos),
                     pk(7, state), pk(8, anim), pk(9, walker), pk(10, vlight), pk(11, slight),
                     pk(12, kin), pk(13, box), pk(14, ptime), pk(15, phys), pk(16, tltime),
                     pk(17, trig)])


def hand_file(f: str, extra: bytes = b'') -> bytes:
    return (HEADER + frame_start(1, 0.05, 0.0) + frame_packets(f) + extra + pk(1, b'')
            + frame_start(2, -1.0, 0.05) + pk(1, b''))


def test_header_golden_and_errors():
    h = decode_header(HEADER)
    assert (h.version, h.magic, h.date, h.map_name, h.size) == (1, 'CARLA_RECORDER', 1637671165,
                                                               'Town06', 34)
    with pytest.raises(CodecError) as err:
        decode_header(HEADER.replace(b'CARLA_RECORDER', b'CARLA_RECORDEX'))
    assert err.value.kind == BAD_MAGIC and 'not a CARLA recorder' in str(err.value)
    with pytest.raises(CodecError) as err:
        decode_header(b'\x02\x00' + HEADER[2:])
    assert err.value.kind == BAD_VALUE and 'version 2' in str(err.value) \
        and 'supported: 1' in str(err.value)
    with pytest.raises(CodecError) as err:
        decode_header(HEADER[:20])
    assert err.value.kind == TRUNCATED
    assert 'recording of 20 B is shorter than its CARLA header' in str(err.value)
    with pytest.raises(CodecError) as err:
        decode_header(b'')
    assert err.value.kind == TRUNCATED and 'empty recording, no CARLA header' in str(err.value)
    for cut in (1, 3, 10, 30):   # inside version, magic length, magic, map name
        with pytest.raises(CodecError) as err:
            decode_header(HEADER[:cut])
        assert err.value.kind == TRUNCATED
        assert f'recording of {cut} B is shorter than its CARLA header' in str(err.value)


@pytest.mark.parametrize('f,vector', [('f', 'UE4'), ('d', 'UE5')])
def test_every_packet_golden(f, vector):
    rec = Recording(hand_file(f))
    assert rec.layout.name.startswith(vector)
    assert len(rec) == 2 and list(rec.frame_ids) == [1, 2]
    assert list(rec.elapsed) == [0.0, 0.05] and rec.durations[-1] == -1.0
    assert rec.offsets[0] == 34 and rec.problems == [] and rec.cut is None
    fr = rec.frame(0)
    assert fr.errors == [] and fr.unknown == []
    add = fr.get("EventAdd")[0]
    assert (add.id, add.type, add.uid, add.blueprint) == (42, 1, 7, 'vehicle.tesla.model3')
    assert add.location == (100.0, -200.0, 30.0) and add.rotation == (0.0, 0.0, 90.0)
    assert add.attributes == [(3, 'role_name', 'hero'), (4, 'color', '79,33,85')]
    assert fr.get('EventDel')['id'].tolist() == [9]
    assert fr.get('EventParent')[['id', 'parent']].tolist() == [(43, 42)]
    c = fr.get('Collision')[0]
    assert (c['id'], c['actor1'], c['actor2'], c['actor1_hero'], c['actor2_hero']) == \
        (5, 42, 0xFFFFFFFF, 1, 0)
    p = fr.get('Position')
    assert p['id'].tolist() == [42, 43]
    assert p['location'][0].tolist() == [100.0, -200.0, 30.0]
    assert p['rotation'][0].tolist() == [1.0, 2.0, 90.0]
    st = fr.get('State')[0]
    assert (st['id'], st['frozen'], st['elapsed'], st['state']) == (60, 1, 2.5, 2)
    a = fr.get('AnimVehicle')[0]
    assert (a['id'], a['steering'], a['throttle'], a['brake'], a['handbrake'], a['gear']) == \
        (42, -0.25, 0.5, 0.0, 1, -1)
    assert fr.get('AnimWalker')[['id', 'speed']].tolist() == [(50, 1.25)]
    assert fr.get('VehicleLight')[['id', 'state']].tolist() == [(42, 10)]
    sl = fr.get('SceneLight')[0]
    assert (sl['id'], sl['intensity'], sl['on'], sl['group']) == (-3, 1000.0, 1, 7)
    assert sl['color'].tolist() == [1, 0.5, 0.25, 1]
    k = fr.get('Kinematics')[0]
    assert k['linear'].tolist() == [5, 0, 0] and k['angular'].tolist() == [0, 0, 10]
    b = fr.get('BoundingBox')[0]
    assert b['origin'].tolist() == [0, 0, 70] and b['extent'].tolist() == [230, 100, 75]
    assert fr.get('PlatformTime') == 123.5
    ph = fr.get('PhysicsControl')[0]
    if f == 'd':  # UE5's physics control has its own layout (checked in its own test)
        assert ph.layout == 'ue5' and ph.id == 42 and len(ph.raw) == 111 + 20 + 16 + 8 + 20 \
            + 4 + 4 * 208
        ph = None
    assert ph is None or (ph.id == 42 and ph.values['max_rpm'] == 6000
                          and ph.values['use_gear_autobox'])
    if ph is not None:
        assert ph.values['mass'] == 1500 and tuple(ph.values['center_of_mass']) == (0, 0, -50)
        assert ph.torque_curve.tolist() == [(0, 400), (5000, 500)]
        assert len(ph.forward_gears) == 1 and len(ph.steering_curve) == 1
        assert len(ph.wheels) == 4 and ph.wheels['position'][3].tolist() == [3, 0, 0]
        assert ph.wheels['long_stiff_value'][0] == 3000
    assert fr.get('TrafficLightTime')[['id', 'green', 'yellow', 'red']].tolist() == \
        [(60, 10, 3, 2)]
    t = fr.get('TriggerVolume')[0]
    assert t['id'] == 61 and t['extent'].tolist() == [4, 5, 6]
    assert rec.frame(1).packets == {}


def test_physics_control_wheels_of_0910_sized_from_the_packet():
    wheel36 = struct.pack('<6f', 3.5, .25, 70, 37, 1500, 3000) + struct.pack('<3f', 1, 2, 3)
    phys = (struct.pack('<H', 1) + struct.pack('<I', 8) + struct.pack('<5f', 1, 2, 3, 4, 5)
            + b'\x00' + struct.pack('<4f', 6, 7, 8, 9) + struct.pack('<3f', 0, 0, 0)
            + struct.pack('<I', 0) + struct.pack('<I', 0) + struct.pack('<I', 0)
            + struct.pack('<I', 2) + wheel36 * 2)
    rec = Recording(HEADER + frame_start(1, -1, 0) + pk(15, phys) + pk(1, b''))
    ph = rec.frame(0).get('PhysicsControl')[0]
    assert ph.wheels.dtype.itemsize == 36 and ph.wheels['position'][1].tolist() == [1, 2, 3]
    assert 'long_stiff_value' not in ph.wheels.dtype.names


def test_physics_control_ue5_layout_golden():
    rec = Recording(hand_file('d', pk(15, physics_ue5())))
    assert rec.layout.vector == '<f8'
    fr = rec.frame(0)
    assert fr.errors == []
    first, ph = fr.get('PhysicsControl')           # the frame's packet and the extra one
    assert ph.layout == 'ue5' and ph.id == 42 and ph.raw == first.raw
    v = ph.values
    assert (v['max_torque'], v['max_rpm'], v['idle_rpm'], v['rev_down_rate']) == \
        (300, 5000, 900, 600)
    assert v['differential_type'] == 3 and v['front_rear_split'] == 0.5
    assert v['use_automatic_gears'] is True and v['use_sweep_wheel_collision'] is False
    assert (v['final_ratio'], v['change_up_rpm'], v['mass']) == (4, 4500, 1845)
    assert v['center_of_mass'] == (0, 0, -50) and v['inertia_tensor_scale'] == (1, 1, 1)
    assert (v['chassis_width'], v['drag_area']) == (180, 2.5)
    assert v['sleep_slope_limit'] == pytest.approx(0.866)
    assert ph.torque_curve.tolist() == [(0, 500), (5000, 500)]
    assert ph.forward_gears['ratio'].tolist() == pytest.approx([2.85, 2.02, 1.35])
    assert ph.reverse_gears['ratio'].tolist() == pytest.approx([2.86])
    assert ph.steering_curve.tolist() == [(0, 1), (10, 0.5)]
    w = ph.wheels
    assert len(w) == 4 and w.dtype.itemsize == 208
    assert w['axle_type'].tolist() == [0, 1, 0, 1]
    assert w['offset'][1].tolist() == [150, 80, 30] and w['wheel_radius'][0] == 37
    assert w['max_steer_angle'].tolist() == [70, 70, 0, 0]
    assert w['affected_by_steering'].tolist() == [1, 1, 0, 0]
    assert w['affected_by_handbrake'].tolist() == [0, 0, 1, 1]
    assert w['max_wheelspin_rotation'][0] == 30 and w['external_torque_combine_method'][0] == 2
    assert w['suspension_axis'][0].tolist() == [0, 0, -1] and w['spring_preload'][0] == 50
    assert w['suspension_smoothing'][0] == 3 and w['rollbar_scaling'][0] == pytest.approx(.15)
    assert (w['sweep_shape'][0], w['sweep_type'][0]) == (1, 2)
    assert (w['max_brake_torque'][0], w['max_hand_brake_torque'][0]) == (1500, 3000)
    assert w['wheel_index'].tolist() == [0, 1, 2, 3]
    assert w['location'][3].tolist() == [3, 2, 3] and w['velocity'][0].tolist() == [7, 8, 9]
    # a record cut short is reported, the frame's other packets kept
    bad = Recording(hand_file('d', pk(15, physics_ue5()[:-4])))
    assert [e.kind for e in bad.frame(0).errors] == [TRUNCATED]
    assert bad.frame(0).get('Position') is not None


def ids18(table):
    walker = (struct.pack('<H', 1) + struct.pack('<IH', 50, 1) + s('head') + v('f', 1, 2, 3)
              + v('f', 0, 0, 0))
    wheels = (struct.pack('<H', 1) + struct.pack('<II', 42, 2)
              + b'\x00' + struct.pack('<ff', 10.0, 1.5) + b'\x01' + struct.pack('<ff', -10.0, 2.5))
    biker = struct.pack('<H', 1) + struct.pack('<I', 44) + struct.pack('<ff', 3.0, 120.0)
    door = struct.pack('<H', 1) + struct.pack('<I', 42) + b'\x05\x01'
    counter = struct.pack('<Q', 1234)
    vtime = struct.pack('<d', 9.75)
    weather = struct.pack('<H', 1) + struct.pack('<14f', *range(14))
    if table == '0.9.14':
        return pk(18, walker) + pk(19, vtime)
    if table == '0.9.15':
        return pk(18, counter) + pk(19, walker) + pk(20, vtime) + pk(21, wheels) + pk(22, biker)
    return (pk(18, counter) + pk(19, walker) + pk(20, vtime) + pk(21, door) + pk(22, wheels)
            + pk(23, biker) + pk(24, weather))


@pytest.mark.parametrize('table', ['0.9.14', '0.9.15', '0.9.16'])
def test_ids_18_and_up_detected_per_release(table):
    rec = Recording(hand_file('f', ids18(table)))
    assert rec.layout.ids == table
    fr = rec.frame(0)
    assert fr.errors == [] and fr.unknown == []
    bones = fr.get('WalkerBones')[0]
    assert bones.id == 50 and bones.bones == [('head', (1, 2, 3), (0, 0, 0))]
    assert fr.get('VisualTime') == 9.75
    if table != '0.9.14':
        assert fr.get('FrameCounter') == 1234
        w = fr.get('AnimVehicleWheels')[0]
        assert w.id == 42 and w.wheels['steering'].tolist() == [10.0, -10.0]
        assert w.wheels['rotation'].tolist() == [1.5, 2.5]
        assert fr.get('AnimBiker')[['id', 'forward_speed', 'engine_rotation']].tolist() == \
            [(44, 3.0, 120.0)]
    if table == '0.9.16':
        assert fr.get('VehicleDoor')[['id', 'door', 'open']].tolist() == [(42, 5, 1)]
        assert fr.get('Weather')['fog_density'].tolist() == [6.0]


def test_layout_can_be_forced():
    data = hand_file('f', ids18('0.9.15'))
    rec = Recording(data, ids='0.9.16')  # wrong on purpose: 21 is read as VehicleDoor
    assert rec.layout.ids == '0.9.16'
    assert any('packet 21' in str(e) for e in rec.frame(0).errors)
    rec = Recording(data, vector='ue5')
    assert rec.layout.vector == '<f8'
    errs = rec.frame(0).errors
    assert any(e.kind == UNKNOWN_LAYOUT and 'packet 6 (Position)' in str(e) for e in errs)
    with pytest.raises(ValueError):
        Recording(data, vector='ue6')


def test_unknown_and_user_ids_skipped_by_size_and_counted():
    rec = Recording(hand_file('f', pk(77, b'xyz') + pk(150, b'user data')))
    assert dict(rec.unknown) == {77: 1, 150: 1}
    fr = rec.frame(0)
    assert fr.unknown == [(77, 3), (150, 9)] and fr.errors == []
    assert fr.get('TriggerVolume') is not None  # packets after them still decoded


def test_frame_index_and_seek():
    rec = Recording(hand_file('f'))
    for off in rec.offsets:
        assert hand_file('f')[off] == 0
    assert rec.frame_at(0.0) == 0 and rec.frame_at(0.049) == 0 and rec.frame_at(0.05) == 1
    assert rec.frame_at(-5) == 0 and rec.frame_at(99) == 1
    assert rec.duration == 0.05


# -- damaged input -------------------------------------------------------------------------
def test_truncated_last_frame_keeps_everything_before():
    full = hand_file('f')
    cut_at = len(full) - 3   # inside the last frame's FrameEnd header
    rec = Recording(full[:cut_at])
    assert len(rec) == 2 and rec.cut is not None and rec.cut.kind == TRUNCATED
    assert rec.cut.offset == len(full) - 5 and 'cut here' in str(rec.cut)
    assert rec.frame(0).get('Position') is not None and not rec.frame(0).truncated
    assert rec.frame(1).truncated
    # cut in the middle of the Position packet of frame 1: the packets before it are kept
    pos_off = full.index(pk(6, b'')[:1] + struct.pack('<I', 2 + 2 * 28))
    rec = Recording(full[:pos_off + 20])
    assert len(rec) == 1 and rec.cut.offset == pos_off and 'packet 6' in str(rec.cut)
    fr = rec.frame(0)
    assert fr.truncated and fr.get('Collision') is not None and fr.get('Position') is None


def test_packet_size_overrunning_the_file():
    data = HEADER + frame_start(1, -1, 0) + struct.pack('<BI', 6, 1_000_000) + b'\0' * 30
    rec = Recording(data)
    assert len(rec) == 1 and rec.cut.kind == TRUNCATED and 'overruns the file' in str(rec.cut)
    assert rec.cut.offset == 34 + 29


def test_absurd_count_and_record_size_fitting_no_layout():
    pos = struct.pack('<H', 2) + struct.pack('<I', 42) + v('f', 1, 2, 3) + v('f', 4, 5, 6) \
        + struct.pack('<I', 43) + v('f', 1, 2, 3) + v('f', 4, 5, 6)
    absurd = struct.pack('<H', 60000) + pos[2:]
    odd = struct.pack('<H', 2) + b'\0' * 60                    # 30 B records
    add = struct.pack('<H', 50000) + b'\0' * 40
    data = (HEADER + frame_start(1, 0.05, 0) + pk(6, pos) + pk(1, b'')
            + frame_start(2, 0.05, 0.05) + pk(6, absurd) + pk(2, add) + pk(7, b'\x00\x00')
            + pk(1, b'') + frame_start(3, -1, 0.1) + pk(13, odd) + pk(1, b''))
    rec = Recording(data)
    assert rec.layout.vector == '<f4' and len(rec) == 3
    assert rec.frame(0).get('Position')['id'].tolist() == [42, 43]
    f1 = rec.frame(1)
    assert [e.kind for e in f1.errors] == [TRUNCATED, BAD_VALUE]
    assert 'frame 2 packet 6 (Position)' in str(f1.errors[0])
    assert f1.errors[0].offset == data.index(absurd)
    assert len(f1.get('State')) == 0            # a good packet after the bad ones
    f2 = rec.frame(2)
    assert f2.errors[0].kind == UNKNOWN_LAYOUT and 'no layout' in str(f2.errors[0])
    assert 'frame 3 packet 13 (BoundingBox)' in str(f2.errors[0])


# -- real recordings (../shared/samples/carla, PROVENANCE.md) ------------------------------
def _open(*parts):
    with open(shared_path('samples', 'carla', *parts), 'rb') as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


# frames, date, last elapsed, packets per id, records per name, actor additions per type
REAL = {
    ('scenario_runner-metrics', 'DistanceToLaneCenter.log'): (
        432, 1637671165, 12.528,
        {0: 432, 1: 432, 2: 432, 3: 432, 4: 432, 5: 432, 6: 432, 7: 432, 8: 432, 9: 432,
         10: 432, 12: 431, 13: 432, 14: 432, 15: 1, 16: 1},
        {'EventAdd': 183, 'EventDel': 5, 'EventParent': 5, 'Collision': 0,
         'TrafficLightTime': 36, 'PhysicsControl': 1},
        {0: 119, 1: 1, 3: 36, 4: 21, 5: 6}),
    ('scenario_runner-versions', 'v0.9.10__DistanceBetweenVehicles.log'): (
        1232, None, 41.74,
        {**{i: 1232 for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14)}, 11: 1, 12: 1231,
         15: 1, 16: 1},
        {'EventAdd': 181, 'EventDel': 3, 'EventParent': 5, 'Collision': 0, 'Position': 2460,
         'State': 44352, 'AnimVehicle': 2460, 'AnimWalker': 0, 'VehicleLight': 2460,
         'SceneLight': 216, 'Kinematics': 2460, 'BoundingBox': 124, 'PhysicsControl': 2,
         'TrafficLightTime': 36}, None),
    ('scenario_runner-versions', 'v0.9.10__DistanceToLaneCenter.log'): (
        461, None, 15.88,
        {**{i: 461 for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14)}, 11: 1, 12: 460,
         15: 1, 16: 1},
        {'EventAdd': 183, 'EventDel': 5, 'EventParent': 5, 'Collision': 0, 'Position': 460,
         'State': 16596, 'AnimVehicle': 460, 'VehicleLight': 460, 'SceneLight': 216,
         'Kinematics': 460, 'BoundingBox': 126, 'PhysicsControl': 1, 'TrafficLightTime': 36},
        None),
    ('scenario_runner-versions', 'v0.9.13__DistanceBetweenVehicles.log'): (
        847, None, 24.72,
        {**{i: 847 for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14)}, 12: 846, 15: 1, 16: 1},
        {'EventAdd': 181, 'EventDel': 3, 'EventParent': 5, 'Collision': 0, 'Position': 99939,
         'State': 30492, 'AnimVehicle': 1687, 'AnimWalker': 0, 'VehicleLight': 1687,
         'Kinematics': 1687, 'BoundingBox': 124, 'PhysicsControl': 2, 'TrafficLightTime': 36},
        None),
}


@pytest.mark.parametrize('parts', list(REAL), ids=[p[1] for p in REAL])
def test_real_recordings_match_provenance(parts):
    frames, date, last, packets, record_counts, add_types = REAL[parts]
    rec = Recording(_open(*parts))
    h = rec.header
    assert (h.version, h.magic, h.map_name) == (1, 'CARLA_RECORDER', 'Town01')
    if date:
        assert h.date == date
    assert rec.layout.vector == '<f4' and rec.cut is None and rec.problems == []
    assert len(rec) == frames and rec.packet_counts == packets
    assert rec.durations[-1] == -1.0 and round(rec.duration, 2) == pytest.approx(last, abs=0.01)
    # every frame's elapsed + duration is the next frame's elapsed (SUPPLEMENT §5.6)
    assert np.array_equal(rec.elapsed[:-1] + rec.durations[:-1], rec.elapsed[1:])
    counts = dict.fromkeys(record_counts, 0)
    types: dict = {}
    for fr in rec.frames():
        assert fr.errors == [] and fr.unknown == [] and not fr.truncated
        for name in record_counts:
            value = fr.get(name)
            if value is not None:
                counts[name] += len(value)
        for add in fr.get('EventAdd', []):
            types[add.type] = types.get(add.type, 0) + 1
    assert counts == record_counts
    if add_types:
        assert types == add_types
    if parts[1] == 'DistanceToLaneCenter.log' and parts[0].endswith('metrics'):
        hero = [a for f in rec.frames(0, 5) for a in f.get('EventAdd', [])
                if a.attribute('role_name') == 'hero']
        assert [(a.id, a.blueprint) for a in hero] == [(234, 'vehicle.lincoln.mkz_2017')]
        assert hero[0].location == pytest.approx((39250, 19500, 60.7), abs=0.01)
        assert hero[0].rotation == pytest.approx((0, 0, 90), abs=1e-4)
        ph = [p for f in rec.frames() for p in f.get('PhysicsControl', [])][0]
        assert (len(ph.wheels), len(ph.torque_curve), len(ph.forward_gears),
                len(ph.steering_curve)) == (4, 7, 6, 4) and ph.wheels.dtype.itemsize == 48
    if parts[1].startswith('v0.9.10'):
        ph = [p for f in rec.frames() for p in f.get('PhysicsControl', [])]
        assert all(p.wheels.dtype.itemsize == 36 for p in ph)


def test_compiled_and_python_packet_walks_agree():
    import sys
    from ros_sim_bridge.carla.codec import native
    # colcon build compiles packet_walk.c beside native.py; only big-endian hosts go without
    assert sys.byteorder != 'little' or native.WALK is not None
    full = hand_file('f', ids18('0.9.15'))
    for data in (full, full[:-3], full[:len(full) // 2], HEADER):
        a = native.walk(data, 34, use_native=True)
        b = native.walk(data, 34, use_native=False)
        assert all(np.array_equal(x, y) for x, y in zip(a[:3], b[:3])) and a[3] == b[3]
        ra, rb = Recording(data), Recording(data, native=False)
        assert ra.packet_counts == rb.packet_counts and str(ra.cut) == str(rb.cut)
        assert np.array_equal(ra.offsets, rb.offsets) and ra.events == rb.events


@pytest.mark.parametrize('layout, name', [
    ('ue4-0.9.13', 'UE4 vectors, no ids>=18 seen'),
    ('ue4-0.9.15', 'UE4 vectors, ids>=18 as 0.9.15'),
    ('ue5', 'UE5 vectors, ids>=18 as 0.9.16')])
def test_layout_name_names_the_ids_table_only_when_the_file_has_such_ids(layout, name):
    import io
    from ros_sim_bridge.carla.emulator.scene import Scene
    from ros_sim_bridge.carla.emulator.writer import write
    buf = io.BytesIO()
    write(buf, Scene(seconds=1.0, rate=10.0), layout)
    rec = Recording(buf.getvalue())
    assert rec.layout_name == name and rec.summary()['layout'] == name
    forced = Recording(buf.getvalue(), ids='0.9.14')
    assert forced.layout_name.endswith('ids>=18 as 0.9.14')
