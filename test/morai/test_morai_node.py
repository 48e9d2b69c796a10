"""morai_bridge end to end: real UDP on 127.0.0.1 both ways, real DDS."""
from __future__ import annotations

import dataclasses
import math
import select
import socket
import struct
import threading
import time

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.emulator.scene import MoraiScene
from ros_sim_bridge.morai.emulator.server import MoraiEmulator
from ros_sim_bridge.msg import (MoraiCollisionData, MoraiCtrlCmd, MoraiEgoSetting,
                                MoraiEgoVehicleStatus, MoraiGetTrafficLightStatus,
                                MoraiIntersectionStatus, MoraiLamps, MoraiMultiEgoSetting,
                                MoraiObjectStatusList, MoraiVehicleCollisionData)
from ros_sim_bridge.morai.ros.node import INBOUND, OUTBOUND, MoraiBridgeNode
from ros_sim_bridge.srv import (MoraiSaveSensorData, MoraiScenarioLoad, MoraiSensorControl,
                                MoraiSetIntersectionStatus, MoraiSetMultiEgoSetting,
                                MoraiSetTrafficLight)
from ros_sim_bridge.tools.launcher import NodeProcess, config_file

from conftest import UdpSender, free_udp_ports, wait_until

HOST = '127.0.0.1'
# Unit conversions of the expected values, written out here rather than taken from the bridge:
# the Morai* messages are SI (SUPPLEMENT §1.6), the wire is km/h, deg and deg/s.
KMH = 1000.0 / 3600.0          # m/s per km/h


def rad(deg):
    return deg * math.pi / 180.0


def si(value):
    """pytest.approx for a float32 message field."""
    return pytest.approx(value, rel=1e-6, abs=1e-6)


# -- helpers ------------------------------------------------------------------------------------

class SimSockets:
    """Plain UDP sockets standing in for the simulator's command ports."""

    def __init__(self):
        self.socks = {}
        for name in OUTBOUND:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((HOST, 0))
            self.socks[name] = s

    def port(self, name):
        return self.socks[name].getsockname()[1]

    def recv(self, name, timeout=5.0):
        s = self.socks[name]
        ready, _, _ = select.select([s], [], [], timeout)
        assert ready, f'nothing arrived on the {name} port within {timeout} s'
        return s.recvfrom(65535)[0]

    def nothing(self, name, timeout=0.3):
        ready, _, _ = select.select([self.socks[name]], [], [], timeout)
        return not ready

    def close(self):
        for s in self.socks.values():
            s.close()


class Bridge:
    """Starts MoraiBridgeNode with free listen ports and SimSockets as the simulator."""

    def __init__(self, ros):
        self.ros = ros
        self.sim = SimSockets()
        base = free_udp_ports(len(INBOUND))
        self.ports = {n: base + i for i, n in enumerate(INBOUND)}

    def start(self, inbound=INBOUND, **params):
        overrides = {f'listen_port.{n}': (self.ports[n] if n in inbound else 0) for n in INBOUND}
        overrides.update({f'sim_port.{n}': self.sim.port(n) for n in OUTBOUND})
        overrides['diagnostics_period'] = 0.2
        overrides.update(params)
        return self.ros.start(MoraiBridgeNode, overrides), self.ports


@pytest.fixture
def bridge(ros):
    b = Bridge(ros)
    yield b.sim, b.start
    b.sim.close()


@pytest.fixture
def bridge_obj(ros):
    b = Bridge(ros)
    yield b
    b.sim.close()


def call(ros, srv_type, name, request, timeout=10.0):
    client = ros.probe.create_client(srv_type, name)
    try:
        assert client.wait_for_service(timeout_sec=timeout), f'service {name} not available'
        future = client.call_async(request)
        assert wait_until(future.done, timeout), f'service {name} did not answer'
        return future.result()
    finally:
        ros.probe.destroy_client(client)


def publisher(ros, msg_type, topic):
    pub = ros.probe.create_publisher(msg_type, topic, 10)
    assert wait_until(lambda: pub.get_subscription_count() > 0, 10.0), f'{topic} not matched'
    return pub


def ego94(*, tail=False, ctrl_mode=2, gear=4, signed_velocity=36.0, map_data_id=42,
          pos=(10.0, 20.0, 1.5), rpy=(0.0, 0.0, 90.0), vel=(36.0, 0.0, 0.0),
          accel=(0.5, 0.0, 0.0), steer=-3.0):
    """Ego Vehicle Status in the document's 94-byte layout, field by field at the SUPPLEMENT
    §1.3 offsets (payload from 27): 121 bytes without a tail (the document's total)."""
    b = bytearray(121 + (2 if tail else 0))
    b[0:11] = b'#MoraiInfo$'
    struct.pack_into('<i', b, 11, 94)
    struct.pack_into('<bb', b, 27, ctrl_mode, gear)
    struct.pack_into('<f', b, 29, signed_velocity)
    struct.pack_into('<i', b, 33, map_data_id)
    struct.pack_into('<2f', b, 37, 0.25, 0.0)                 # accel, brake pedals
    struct.pack_into('<6f', b, 45, 4.6, 1.9, 1.5, 0.9, 2.7, 1.0)
    struct.pack_into('<3f', b, 69, *pos)
    struct.pack_into('<3f', b, 81, *rpy)
    struct.pack_into('<3f', b, 93, *vel)
    struct.pack_into('<3f', b, 105, *accel)
    struct.pack_into('<f', b, 117, steer)
    if tail:
        b[121:123] = b'\r\n'
    return bytes(b)


def objects68(records):
    """Object Info, 68-byte records from @30 (1392 bytes): records = {slot: (id, type, x, y,
    heading, size_x, size_y, size_z, vx km/h)}; other slots empty."""
    b = bytearray(1392)
    b[0:14] = b'#MoraiObjInfo$'
    struct.pack_into('<i', b, 14, 1360)
    for slot, (obj_id, obj_type, x, y, heading, sx, sy, sz, vx) in records.items():
        struct.pack_into('<hh16f', b, 30 + 68 * slot, obj_id, obj_type, x, y, 0.0, heading,
                         sx, sy, sz, 0.9, 2.7, 0.9, vx, 0.0, 0.0, 0.0, 0.0, 0.0)
    b[1390:1392] = b'\r\n'
    return bytes(b)


# -- simulator → ROS ----------------------------------------------------------------------------

def test_ego_status_in_every_view(ros, bridge):
    sim, start = bridge
    node, ports = start(inbound=('ego_status',))
    status = ros.collect(MoraiEgoVehicleStatus, 'morai/ego_status')
    odom = ros.collect(Odometry, 'morai/odom')
    tf = ros.collect(TFMessage, '/tf')
    UdpSender().send_to(ports['ego_status'], ego94())

    s = status.wait_for(1)[0]
    assert s.layout == 'ego94_notail' and not s.has_sim_time and not s.has_link_id
    assert (s.ctrl_mode, s.gear, s.map_data_id) == (2, 4, 42)
    # SI: 36 km/h on the wire = 10 m/s; 90 deg = π/2 rad; -3 deg steer = -π/60 rad
    assert s.signed_velocity == si(10.0) and s.velocity_x == si(10.0)
    assert (s.velocity_y, s.velocity_z) == (0.0, 0.0)
    assert (s.pos_x, s.pos_y, s.pos_z) == (10.0, 20.0, 1.5)
    assert (s.roll, s.pitch, s.heading) == (0.0, 0.0, si(math.pi / 2))
    assert s.accel == 0.25 and s.accel_x == 0.5 and s.steer == si(-math.pi / 60)
    assert (s.size_x, s.wheelbase, s.rear_overhang) == pytest.approx((4.6, 2.7, 1.0))
    assert s.header.frame_id == 'map'

    o = odom.wait_for(1)[0]
    assert (o.header.frame_id, o.child_frame_id) == ('map', 'base_link')
    p, q = o.pose.pose.position, o.pose.pose.orientation
    assert (p.x, p.y, p.z) == pytest.approx((10.0, 20.0, 1.5))
    # heading 90° (north in ENU) → yaw π/2
    assert (q.w, q.x, q.y, q.z) == pytest.approx((math.cos(math.pi / 4), 0, 0,
                                                  math.sin(math.pi / 4)), abs=1e-6)
    v = o.twist.twist.linear
    assert (v.x, v.y, v.z) == pytest.approx((10.0, 0.0, 0.0))          # 36 km/h = 10 m/s
    # no sim time in this layout: stamped with the receive time
    assert o.header.stamp.sec > 1_600_000_000

    t = tf.wait_for(1, where=lambda m: m.transforms[0].child_frame_id == 'base_link')[0]
    tr = t.transforms[0]
    assert tr.header.frame_id == 'map' and tr.transform.translation.y == pytest.approx(20.0)


def test_ego_status_every_converted_field_is_si(ros, bridge):
    """The newest layout (ego216) carries every converted field: km/h → m/s, deg → rad,
    deg/s → rad/s; m, m/s², pedals and the undocumented tyre values unchanged."""
    sim, start = bridge
    node, ports = start(inbound=('ego_status',))
    status = ros.collect(MoraiEgoVehicleStatus, 'morai/ego_status')
    wire = morai.EgoVehicleStatus(
        layout='ego216', sec=7, nsec=5, gear=2, signed_velocity=-18.0, accel=0.0, brake=0.5,
        pos_x=-3.0, roll=2.0, pitch=-4.5, heading=-135.0, velocity_x=-18.0, velocity_y=7.2,
        velocity_z=-3.6, angular_velocity_x=10.0, angular_velocity_y=-20.0,
        angular_velocity_z=45.0, accel_x=-1.5, accel_z=9.81, steer=30.0, rear_steer=-2.0,
        link_id='L1', side_slip_angle_fl=1.5, tire_lateral_force_rr=1200.0,
        cross_track_error=0.25)
    UdpSender().send_to(ports['ego_status'], morai.encode_ego_status(wire))
    s = status.wait_for(1)[0]
    assert s.layout == 'ego216' and s.has_angular_velocity and s.has_rear_steer
    assert (s.sec, s.nsec, s.gear, s.brake) == (7, 5, 2, 0.5)
    assert s.signed_velocity == si(-5.0)                           # -18 km/h
    assert (s.velocity_x, s.velocity_y, s.velocity_z) == (si(-5.0), si(2.0), si(-1.0))
    assert (s.roll, s.pitch, s.heading) == (si(rad(2.0)), si(rad(-4.5)), si(-3 * math.pi / 4))
    assert (s.angular_velocity_x, s.angular_velocity_y, s.angular_velocity_z) == \
        (si(rad(10.0)), si(rad(-20.0)), si(math.pi / 4))         # deg/s → rad/s
    assert (s.steer, s.rear_steer) == (si(math.pi / 6), si(rad(-2.0)))
    assert (s.pos_x, s.accel_x, s.accel_z) == (-3.0, -1.5, si(9.81))  # m, m/s²: unchanged
    assert (s.side_slip_angle_fl, s.tire_lateral_force_rr) == (1.5, 1200.0)  # as sent
    assert s.cross_track_error == 0.25 and s.link_id == 'L1'


def test_objects_empty_slots_markers_and_ids(ros, bridge):
    sim, start = bridge
    node, ports = start(inbound=('object_info',), object_labels=True)
    objects = ros.collect(MoraiObjectStatusList, 'morai/objects')
    markers = ros.collect(MarkerArray, 'morai/object_markers')
    records = {0: (7, 1, 30.0, 3.5, 0.0, 4.5, 1.9, 1.5, 36.0),        # NPC vehicle
               1: (101, 0, 12.0, -6.0, 90.0, 0.5, 0.5, 1.7, 3.6),     # pedestrian
               5: (201, 2, 50.0, -7.5, 45.0, 1.0, 1.0, 1.0, 0.0),     # obstacle, after gaps
               19: (-5, -1, 0.0, 0.0, 0.0, 4.6, 1.9, 1.5, 0.0)}       # another ego, last slot
    UdpSender().send_to(ports['object_info'], objects68(records))

    m = objects.wait_for(1)[0]
    assert m.layout == 'obj68' and not m.has_sim_time
    assert [o.obj_id for o in m.objects] == [7, 101, 201, -5]        # empty slots left out
    assert (m.num_of_npcs, m.num_of_pedestrian, m.num_of_obstacle) == (1, 1, 1)
    npc, ped, obstacle = m.objects[:3]
    assert (npc.obj_type, npc.pos_x, npc.pos_y, npc.heading) == (1, 30.0, 3.5, 0.0)
    assert npc.velocity_x == si(10.0)                                 # 36 km/h
    assert (npc.size_x, npc.wheelbase) == pytest.approx((4.5, 2.7)) and npc.link_id == ''
    assert (ped.heading, ped.velocity_x) == (si(math.pi / 2), si(1.0))   # 90 deg, 3.6 km/h
    assert (obstacle.heading, obstacle.velocity_x) == (si(math.pi / 4), 0.0)

    arr = markers.wait_for(1)[0].markers
    assert arr[0].action == Marker.DELETEALL
    cubes = [mk for mk in arr if mk.type == Marker.CUBE]
    labels = [mk for mk in arr if mk.type == Marker.TEXT_VIEW_FACING]
    assert [c.id for c in cubes] == [7, 101, 201, -5] and len(labels) == 4
    assert all(c.header.frame_id == 'map' and c.action == Marker.ADD for c in cubes)
    c = cubes[0]
    assert (c.scale.x, c.scale.y, c.scale.z) == pytest.approx((4.5, 1.9, 1.5))
    assert (c.pose.position.x, c.pose.position.y, c.pose.position.z) == \
        pytest.approx((30.0, 3.5, 0.75))                               # box stands on the ground
    q = cubes[2].pose.orientation                                      # heading 45°
    assert (q.w, q.z) == pytest.approx((math.cos(math.pi / 8), math.sin(math.pi / 8)))
    colours = {c.id: (c.color.r, c.color.g, c.color.b) for c in cubes}
    assert len(set(colours.values())) == 4                             # one colour per type
    assert labels[1].text == 'pedestrian 101'


def test_other_inbound_types(ros, bridge):
    sim, start = bridge
    node, ports = start()
    tl = ros.collect(MoraiGetTrafficLightStatus, 'morai/traffic_light_status')
    coll = ros.collect(MoraiCollisionData, 'morai/collision')
    coll_mk = ros.collect(MarkerArray, 'morai/collision_markers')
    vcoll = ros.collect(MoraiVehicleCollisionData, 'morai/vehicle_collision')
    vcoll_mk = ros.collect(MarkerArray, 'morai/vehicle_collision_markers')
    insn = ros.collect(MoraiIntersectionStatus, 'morai/intersection_status')
    multi = ros.collect(MoraiMultiEgoSetting, 'morai/multi_ego_setting')
    tx = UdpSender()

    # Get TrafficLight Status (48 B), built at the SUPPLEMENT offsets: index @30, type @42,
    # status @44 (red | green-left)
    b = bytearray(48)
    b[0:14] = b'#TrafficLight$'
    struct.pack_into('<i', b, 14, 16)
    b[30:39] = b'C119BS010'
    struct.pack_into('<hh', b, 42, 1, 1 | 32)
    b[46:48] = b'\r\n'
    tx.send_to(ports['traffic_light_status'], bytes(b))
    t = tl.wait_for(1)[0]
    assert (t.traffic_light_index, t.traffic_light_type, t.traffic_light_status) == \
        ('C119BS010', 1, 33)
    assert t.traffic_light_status & MoraiGetTrafficLightStatus.STATUS_GREEN_LEFT

    # Collision (181 B, with sim time): two records in slots 0 and 2, slot 1 empty
    recs = np.zeros(3, morai.COLLISION_DTYPE)
    recs[0] = (1, 7, 2.0, 0.5, 0.0, 32.0, 3.5, 0.0)
    recs[2] = (0, 101, 1.0, -1.0, 0.0, 31.0, 2.0, 0.0)
    tx.send_to(ports['collision'], morai.encode_collision(recs, 'col148', sec=12, nsec=500))
    c = coll.wait_for(1)[0]
    assert c.layout == 'col148' and c.has_sim_time and (c.sec, c.nsec) == (12, 500)
    assert (c.header.stamp.sec, c.header.stamp.nanosec) == (12, 500)   # stamp_source 'sim'
    assert [(o.obj_type, o.obj_id) for o in c.collision_objects] == [(1, 7), (0, 101)]
    assert c.collision_objects[0].global_offset_x == 32.0
    mk = [m for m in coll_mk.wait_for(1)[0].markers if m.action == Marker.ADD]
    assert [(m.id, m.type, m.pose.position.x) for m in mk] == [(7, Marker.SPHERE, 32.0),
                                                                (101, Marker.SPHERE, 31.0)]

    # NPC Vehicle Collision: one pair
    pair = np.zeros((1, 2), morai.VEHICLE_DTYPE)
    pair[0, 0]['obj_id'], pair[0, 1]['obj_id'] = 3, 4
    pair[0, 0]['obj_type'] = pair[0, 1]['obj_type'] = 1
    pair[0, 0]['pos_x'], pair[0, 1]['pos_x'] = 60.0, 62.0
    pair[0, 0]['size_x'] = pair[0, 1]['size_x'] = 4.5
    pair[0, 0]['heading'], pair[0, 1]['heading'] = 180.0, -90.0      # deg on the wire
    pair[0, 0]['velocity_x'], pair[0, 1]['velocity_y'] = 54.0, -9.0  # km/h on the wire
    pair[0, 0]['accel_x'] = -6.0                                      # m/s², unchanged
    tx.send_to(ports['vehicle_collision'], morai.encode_vehicle_collision(pair))
    v = vcoll.wait_for(1)[0]
    assert len(v.collisions) == 1
    assert (v.collisions[0].vehicle_a.obj_id, v.collisions[0].vehicle_b.obj_id) == (3, 4)
    va, vb = v.collisions[0].vehicle_a, v.collisions[0].vehicle_b
    assert vb.pos_x == 62.0 and va.accel_x == -6.0
    assert (va.heading, vb.heading) == (si(math.pi), si(-math.pi / 2))
    assert (va.velocity_x, vb.velocity_y) == (si(15.0), si(-2.5))
    boxes = [m for m in vcoll_mk.wait_for(1)[0].markers if m.type == Marker.CUBE]
    assert [b.pose.position.x for b in boxes] == [60.0, 62.0]

    # Get Intersection Status (37 B): index @27, status @29, time @31
    b = bytearray(37)
    b[0:11] = b'#IntStatus$'
    struct.pack_into('<i', b, 11, 8)
    struct.pack_into('<hhf', b, 27, 3, 2, 4.5)
    b[35:37] = b'\r\n'
    tx.send_to(ports['intersection_status'], bytes(b))
    i = insn.wait_for(1)[0]
    assert (i.intersection_index, i.intersection_status, i.intersection_status_time) == (3, 2, 4.5)

    # Multi Ego Setting (683 B) as an output
    egos = np.zeros(2, morai.MULTI_EGO_DTYPE)
    egos['ego_index'] = [0, 1]
    egos['pos_x'] = [5.0, 15.0]
    egos['velocity'] = [36.0, 18.0]                   # km/h on the wire
    egos['heading'] = [90.0, -45.0]                   # deg on the wire
    egos['roll'], egos['pitch'] = [0.0, 1.0], [0.0, -2.0]
    egos['gear'] = 4
    tx.send_to(ports['multi_ego_setting'],
            morai.encode_multi_ego(morai.MultiEgoSetting(2, 1, egos)))
    m = multi.wait_for(1)[0]
    assert (m.num_of_ego, m.camera_index, len(m.egos)) == (2, 1, 2)
    assert [(e.ego_index, e.pos_x, e.gear) for e in m.egos] == [(0, 5.0, 4), (1, 15.0, 4)]
    assert [(e.velocity, e.heading) for e in m.egos] == \
        [(si(10.0), si(math.pi / 2)), (si(5.0), si(-math.pi / 4))]
    assert (m.egos[1].roll, m.egos[1].pitch) == (si(rad(1.0)), si(rad(-2.0)))


def test_sim_stamps_put_every_topic_on_the_sim_time_base(ros, bridge):
    """stamp_source sim: a packet without a sim time (Traffic Light Status) is stamped with the
    sim time now, as the last sim time seen tells it, not with the host clock (every topic of
    the node in one time base); before any sim time arrived, with the host clock."""
    sim, start = bridge
    node, ports = start(inbound=('collision', 'traffic_light_status'))
    tl = ros.collect(MoraiGetTrafficLightStatus, 'morai/traffic_light_status')
    coll = ros.collect(MoraiCollisionData, 'morai/collision')
    tx = UdpSender()
    b = bytearray(48)                                     # Get TrafficLight Status, 48 B
    b[0:14] = b'#TrafficLight$'
    struct.pack_into('<i', b, 14, 16)
    b[30:39] = b'C119BS010'
    b[46:48] = b'\r\n'
    tx.send_to(ports['traffic_light_status'], bytes(b))
    first = tl.wait_for(1)[0].header.stamp
    assert abs(first.sec - time.time()) < 60                  # no sim time yet: host clock
    recs = np.zeros(1, morai.COLLISION_DTYPE)
    tx.send_to(ports['collision'], morai.encode_collision(recs, 'col148', sec=12, nsec=500))
    coll.wait_for(1)
    time.sleep(0.2)
    tx.send_to(ports['traffic_light_status'], bytes(b))
    later = tl.wait_for(2)[1].header.stamp
    assert 12.1 < later.sec + later.nanosec * 1e-9 < 14.0     # 12 s + the 0.2 s since
    # the last second a stamp holds: what follows is held there, not dropped as bad input
    tx.send_to(ports['collision'], morai.encode_collision(recs, 'col148', sec=2**31 - 1,
                                                          nsec=999_999_000))
    coll.wait_for(2)
    time.sleep(0.2)
    tx.send_to(ports['traffic_light_status'], bytes(b))
    held = tl.wait_for(3)[2].header.stamp
    assert (held.sec, held.nanosec) == (2**31 - 1, 999_999_999)


def test_nan_or_inf_in_a_record_is_bad_input_not_published(ros, bridge):
    """An Ego Status with a NaN position or an Object Info with an infinite size would put
    NaN/Inf on /tf, odometry and markers: counted as bad_value, nothing published for them,
    the valid packets around them are; a flood of varying unknown layouts is listed up to
    UNKNOWN_LISTED and counted beyond."""
    from ros_sim_bridge.morai.ros.node import UNKNOWN_LISTED
    sim, start = bridge
    node, ports = start(inbound=('ego_status', 'object_info'), stamp_source='receive')
    status = ros.collect(MoraiEgoVehicleStatus, 'morai/ego_status', 50)
    objects = ros.collect(MoraiObjectStatusList, 'morai/objects', 50)
    tx = UdpSender()
    scene = MoraiScene()
    scene.step(1.0)
    good = scene.ego_status()
    bad = dataclasses.replace(good, pos_x=float('nan'))
    worse = dataclasses.replace(good, heading=float('inf'))
    for st in (good, bad, worse, good):
        tx.send_to(ports['ego_status'], morai.encode_ego_status(st, layout='ego200'))
    objs = scene.nearest_objects()
    packet = morai.encode_object_info(objs, 'obj106_ts', 1, 0)   # the encoder refuses Inf:
    first = packet.index(objs[:1].tobytes())                     # written into the bytes
    at = first + morai.object_info.OBJECT_DTYPE.fields['size_x'][1]
    inf_packet = packet[:at] + struct.pack('<f', np.inf) + packet[at + 4:]
    for p in (inf_packet, packet):
        tx.send_to(ports['object_info'], p)
    got = status.wait_for(2)
    assert all(math.isfinite(m.pos_x) and math.isfinite(m.heading) for m in got)
    assert len(objects.wait_for(1)) == 1
    values = ros.diagnostics('ego_status', lambda v: v.get('errors.bad_value') == '2')
    assert 'not a finite number' in values['last_error']
    ros.diagnostics('object_info', lambda v: v.get('errors.bad_value') == '1')
    g = morai.encode_ego_status(good, layout='ego200')
    for k in range(UNKNOWN_LISTED + 5):                        # data_length 500 + k: unknown
        tx.send_to(ports['ego_status'], g[:11] + struct.pack('<i', 500 + k) + g[15:])
    values = ros.diagnostics('ego_status', lambda v: v.get('unknown_layouts_not_listed') == '5')
    assert len(values['unknown_layouts'].split()) == UNKNOWN_LISTED


@pytest.mark.parametrize('stamp_source', ['sim', 'receive'])
def test_every_release_layout_is_detected(ros, bridge, stamp_source):
    sim, start = bridge
    node, ports = start(inbound=('ego_status', 'object_info', 'collision'),
                        stamp_source=stamp_source)
    status = ros.collect(MoraiEgoVehicleStatus, 'morai/ego_status', 50)
    objects = ros.collect(MoraiObjectStatusList, 'morai/objects', 50)
    coll = ros.collect(MoraiCollisionData, 'morai/collision', 50)
    tx = UdpSender()
    scene = MoraiScene()
    scene.step(3.25)                                   # sim time 3.25 s
    st = scene.ego_status()
    for layout in morai.ego_status.LAYOUT_NAMES:
        tx.send_to(ports['ego_status'], morai.encode_ego_status(st, layout=layout))
    objs = scene.nearest_objects()
    for layout in morai.object_info.LAYOUT_NAMES:
        tx.send_to(ports['object_info'], morai.encode_object_info(objs, layout, 3, 250_000_000))
    for layout in morai.collision.LAYOUT_NAMES:
        tx.send_to(ports['collision'], morai.encode_collision(scene.collision_records(), layout,
                                                           3, 250_000_000))
    got = status.wait_for(len(morai.ego_status.LAYOUT_NAMES))
    by_layout = {m.layout: m for m in got}
    assert set(by_layout) == set(morai.ego_status.LAYOUT_NAMES)
    for layout, m in by_layout.items():
        stamped = layout in ('ego152', 'ego200', 'ego216')
        assert m.has_sim_time == stamped
        assert m.has_link_id == (layout not in ('ego94', 'ego94_notail'))
        assert m.has_tire_data == (layout in ('ego200', 'ego216'))
        assert m.has_rear_steer == m.has_lane_data == (layout == 'ego216')
        assert m.pos_x == pytest.approx(st.pos_x) and m.gear == st.gear
        assert m.heading == si(rad(st.heading))
        assert m.signed_velocity == si(st.signed_velocity * KMH)
        sim_stamp = (m.header.stamp.sec, m.header.stamp.nanosec) == (3, 250_000_000)
        assert sim_stamp == (stamped and stamp_source == 'sim')
    assert by_layout['ego200'].link_id == st.link_id
    olists = {m.layout: m for m in objects.wait_for(4)}
    assert set(olists) == set(morai.object_info.LAYOUT_NAMES)
    for layout, m in olists.items():
        assert m.has_sim_time == layout.endswith('_ts')
        assert [o.obj_id for o in m.objects] == objs['obj_id'].tolist()
        assert (m.objects[0].link_id != '') == layout.startswith('obj106')
    colls = {m.layout: m for m in coll.wait_for(2)}
    assert colls['col148'].has_sim_time and not colls['col140'].has_sim_time
    values = ros.diagnostics('ego_status', lambda v: v.get('packets') == '6')
    assert values['decode_errors'] == '0'


def test_bad_datagrams_are_counted_per_type_and_valid_ones_all_arrive(ros, bridge):
    sim, start = bridge
    node, ports = start(inbound=('ego_status', 'object_info', 'traffic_light_status'))
    status = ros.collect(MoraiEgoVehicleStatus, 'morai/ego_status', 100)
    objects = ros.collect(MoraiObjectStatusList, 'morai/objects', 100)
    tx = UdpSender()
    scene = MoraiScene()
    good = []
    for k in range(10):
        scene.step(0.05)
        good.append(morai.encode_ego_status(scene.ego_status(), layout='ego152'))
    g = good[0]
    wrong_tail = g[:-2] + b'\n\r'
    bad = [b'#MoraiObjInfo$' + g[11:],             # wrong identifier string
           g[:100],                                # truncated
           g + b'\x00' * 10,                       # oversized
           wrong_tail,                             # wrong tail
           g[:11] + struct.pack('<i', 120) + g[15:],  # unknown layout (data_length 120)
           bytes(range(200)),                      # garbage
           b'']                                    # empty
    for k in range(10):
        tx.send_to(ports['ego_status'], good[k])
        if k < len(bad):
            tx.send_to(ports['ego_status'], bad[k])
    # Object Info: the document's 1472-byte figure is an unknown layout, reported, not guessed
    doc1472 = bytearray(1472)
    doc1472[0:14] = b'#MoraiObjInfo$'
    struct.pack_into('<i', doc1472, 14, 1420)
    doc1472[-2:] = b'\r\n'
    tx.send_to(ports['object_info'], bytes(doc1472))
    tx.send_to(ports['object_info'], morai.encode_object_info(scene.nearest_objects(), 'obj68'))
    tx.send_to(ports['object_info'], bytes(doc1472))

    got = status.wait_for(10)
    assert sorted(m.nsec + m.sec * 10**9 for m in got) == \
        [morai.decode_ego_status(d).stamp_ns for d in good]
    assert objects.wait_for(1)[0].layout == 'obj68'
    values = ros.diagnostics('ego_status', lambda v: v.get('decode_errors') == '7')
    assert values['packets'] == '17' and values['published'] == str(10 * 3)
    assert values['errors.bad_magic'] == '3'         # identifier, tail, garbage
    assert values['errors.truncated'] == '2'         # 100 bytes, empty
    assert values['errors.oversized'] == '1'
    assert values['errors.unknown_layout'] == '1'
    assert values['unknown_layouts'] == '120/181'
    assert values['layout'] == 'ego152'
    obj = ros.diagnostics('object_info', lambda v: v.get('decode_errors') == '2')
    assert obj['errors.unknown_layout'] == '2' and obj['unknown_layouts'] == '1420/1472'
    assert obj['published'] == '2'
    other = ros.diagnostics('traffic_light_status', lambda v: True)
    assert other['decode_errors'] == '0' and other['packets'] == '0'


def test_unconfigured_types_are_not_opened(ros, bridge):
    sim, start = bridge
    node, ports = start(inbound=('intersection_status',))
    assert set(node.inbound) == {'intersection_status'}
    assert wait_until(lambda: '/morai/intersection_status' in dict(
        ros.probe.get_topic_names_and_types()), 10.0)
    names = dict(ros.probe.get_topic_names_and_types())
    assert '/morai/odom' not in names and '/morai/objects' not in names
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:   # its port stays free
        s.bind((HOST, ports['ego_status']))


# -- ROS → simulator ----------------------------------------------------------------------------

@pytest.mark.parametrize('cmd_type, fields, wire_velocity', [
    (1, dict(accel=0.4, brake=0.1, steering=-0.25), 0.0),
    (2, dict(velocity=10.0, steering=0.5), 36.0),           # 10 m/s in ROS = 36 km/h on the wire
    (2, dict(velocity=-2.5, steering=0.0), -9.0),
    (3, dict(acceleration=-2.5, steering=0.0), 0.0),        # m/s² both sides
])
def test_ctrl_cmd_topic_sends_every_mode(ros, bridge, cmd_type, fields, wire_velocity):
    sim, start = bridge
    node, ports = start(inbound=())
    pub = publisher(ros, MoraiCtrlCmd, 'morai/ctrl_cmd')
    pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=4, cmd_type=cmd_type, **fields))
    data = sim.recv('ctrl_cmd')
    assert len(data) == 55 and data.startswith(b'#MoraiCtrlCmd$') and data.endswith(b'\r\n')
    # SUPPLEMENT §1.3 offsets: ctrl_mode @30, gear @31, cmd_type @32, 5 floats from @33
    assert struct.unpack_from('<BBB', data, 30) == (2, 4, cmd_type)
    velocity, acceleration, accel, brake, steering = struct.unpack_from('<5f', data, 33)
    assert velocity == pytest.approx(wire_velocity, rel=1e-6)
    assert acceleration == pytest.approx(fields.get('acceleration', 0.0))
    assert (accel, brake) == pytest.approx((fields.get('accel', 0.0), fields.get('brake', 0.0)))
    assert steering == pytest.approx(fields['steering'])
    decoded = morai.decode_ctrl_cmd(data)
    assert decoded.cmd_type == cmd_type and decoded.rear_steering is None


def test_ctrl_cmd_rear_steering_lamps_and_refusals(ros, bridge):
    sim, start = bridge
    node, ports = start(inbound=())
    pub = publisher(ros, MoraiCtrlCmd, 'morai/ctrl_cmd')
    lamps = publisher(ros, MoraiLamps, 'morai/lamps')
    pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=2, cmd_type=1, accel=0.2, has_rear_steering=True,
                             rear_steering=-0.5))
    data = sim.recv('ctrl_cmd')
    assert len(data) == 59 and morai.decode_ctrl_cmd(data).rear_steering == -0.5
    # out of range: refused, never sent
    pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=7, cmd_type=1))          # gear 0..5
    pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=4, cmd_type=1, steering=1.5))
    pub.publish(MoraiCtrlCmd(ctrl_mode=3, gear=4, cmd_type=1))
    pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=4, cmd_type=4))
    pub.publish(MoraiCtrlCmd(ctrl_mode=2, gear=4, cmd_type=1, accel=0.1))  # valid again
    data = sim.recv('ctrl_cmd')
    assert morai.decode_ctrl_cmd(data).accel == pytest.approx(0.1)       # the 4 bad ones: none
    assert sim.nothing('ctrl_cmd')

    lamps.publish(MoraiLamps(turn_signal=MoraiLamps.TURN_SIGNAL_RIGHT, emergency_signal=1))
    data = sim.recv('lamp_control')
    assert len(data) == 33 and data[:13] == b'#LampControl$' and data[29:31] == b'\x02\x01'
    lamps.publish(MoraiLamps(turn_signal=3))
    assert sim.nothing('lamp_control')
    values = ros.diagnostics('ctrl_cmd', lambda v: v.get('refused') == '4')
    assert values['sent'] == '2' and values['errors.bad_value'] == '4'
    # a command status has what was sent, not the counters of received data
    assert not {'packets', 'published', 'decode_errors', 'drops'} & set(values), values
    assert 'gear' in values['last_error'] or 'cmd_type' in values['last_error']
    assert ros.diagnostics('lamp_control', lambda v: v.get('refused') == '1')['sent'] == '1'
    # counted as they are sent: every status has as many datagrams as bytes say (the counts
    # were copied in at a timer of their own, and lagged the bytes)
    for k in range(3):
        lamps.publish(MoraiLamps(turn_signal=MoraiLamps.TURN_SIGNAL_LEFT))
        sim.recv('lamp_control')
        v = ros.diagnostics('lamp_control', lambda v: v.get('bytes') == str(33 * (k + 2)))
        assert v['sent'] == str(k + 2), v


def test_services_send_the_right_bytes(ros, bridge):
    sim, start = bridge
    node, ports = start(inbound=())

    r = call(ros, MoraiScenarioLoad, 'morai/scenario_load', MoraiScenarioLoad.Request(
        file_name='a' * 30, delete_all=True, load_ego_vehicle_data=True, set_pause=True))
    assert r.success and 'sent' in r.message
    data = sim.recv('scenario_load')
    assert len(data) == 69 and data[30:60] == b'a' * 30
    assert list(data[60:67]) == [1, 0, 1, 0, 0, 0, 1]
    assert morai.decode_scenario_load(data).file_name == 'a' * 30

    r = call(ros, MoraiSaveSensorData, 'morai/save_sensor_data', MoraiSaveSensorData.Request(
        is_custom_file_name=True, custom_file_name='frame_0001', file_dir='C:/morai/out'))
    assert r.success
    data = sim.recv('save_sensor_data')
    assert len(data) == 125 and data[32] == 1 and data[33:43] == b'frame_0001'
    assert data[63:75] == b'C:/morai/out'

    r = call(ros, MoraiSetTrafficLight, 'morai/set_traffic_light', MoraiSetTrafficLight.Request(
        traffic_light_index='C119BS010025', traffic_light_status=16))
    assert r.success
    data = sim.recv('set_traffic_light')
    assert len(data) == 46 and data[30:42] == b'C119BS010025'
    assert struct.unpack_from('<h', data, 42)[0] == 16

    r = call(ros, MoraiSetIntersectionStatus, 'morai/set_intersection_status',
             MoraiSetIntersectionStatus.Request(intersection_index=3, intersection_status=2,
                                                intersection_status_time=1.5))
    assert r.success
    data = sim.recv('set_intersection')
    assert len(data) == 40 and struct.unpack_from('<hhf', data, 30) == (3, 2, 1.5)

    # angles in rad in ROS, deg on the wire (SUPPLEMENT §1.3: pos xyz, roll, pitch, heading @33)
    r = call(ros, MoraiSensorControl, 'morai/sensor_control', MoraiSensorControl.Request(
        sensor_index=2, pos_x=1.0, pos_y=-0.5, pos_z=1.8, roll=math.pi / 180, pitch=-math.pi / 36,
        heading=math.pi / 2))
    assert r.success and 'heading=90 deg' in r.message, r.message
    data = sim.recv('sensor_control')
    assert len(data) == 59 and struct.unpack_from('<h6f', data, 31) == pytest.approx(
        (2, 1.0, -0.5, 1.8, 1.0, -5.0, 90.0), rel=1e-6)

    egos = [MoraiEgoSetting(ego_index=0, pos_x=1.0, heading=math.pi / 2, velocity=5.0, gear=4,
                            ctrl_mode=16),
            MoraiEgoSetting(ego_index=1, pos_x=-4.0, roll=-math.pi / 4, gear=1, ctrl_mode=1)]
    r = call(ros, MoraiSetMultiEgoSetting, 'morai/set_multi_ego_setting',
             MoraiSetMultiEgoSetting.Request(camera_index=1, egos=egos))
    assert r.success
    data = sim.recv('multi_ego_setting')
    assert len(data) == 683 and struct.unpack_from('<ii', data, 33) == (2, 1)
    # record: ego_index, pos xyz, roll, pitch, heading (deg), velocity (km/h), gear, ctrl_mode
    assert struct.unpack_from('<h7f2b', data, 41) == pytest.approx(
        (0, 1.0, 0.0, 0.0, 0.0, 0.0, 90.0, 18.0, 4, 16), rel=1e-6)     # 5 m/s = 18 km/h
    assert struct.unpack_from('<h7f2b', data, 41 + 32) == pytest.approx(
        (1, -4.0, 0.0, 0.0, -45.0, 0.0, 0.0, 0.0, 1, 1), rel=1e-6)


@pytest.mark.parametrize('srv_type, name, sim_name, request_fields, field', [
    (MoraiScenarioLoad, 'scenario_load', 'scenario_load', dict(file_name='b' * 31), 'file_name'),
    (MoraiScenarioLoad, 'scenario_load', 'scenario_load', dict(file_name=''), 'file_name'),
    (MoraiScenarioLoad, 'scenario_load', 'scenario_load', dict(file_name='szenario_ä'),
     'file_name'),
    (MoraiSaveSensorData, 'save_sensor_data', 'save_sensor_data',
     dict(file_dir='d' * 61), 'file_dir'),
    (MoraiSetTrafficLight, 'set_traffic_light', 'set_traffic_light',
     dict(traffic_light_index='C119', traffic_light_status=3), 'status'),
    (MoraiSetTrafficLight, 'set_traffic_light', 'set_traffic_light',
     dict(traffic_light_index='', traffic_light_status=1), 'index'),
    (MoraiSetIntersectionStatus, 'set_intersection_status', 'set_intersection',
     dict(intersection_index=1, intersection_status_time=-1.0), 'status_time'),
    (MoraiSensorControl, 'sensor_control', 'sensor_control', dict(pos_x=math.inf), 'pos_x'),
    (MoraiSensorControl, 'sensor_control', 'sensor_control', dict(heading=math.nan), 'heading'),
    (MoraiSetMultiEgoSetting, 'set_multi_ego_setting', 'multi_ego_setting',
     dict(egos=[MoraiEgoSetting(ego_index=k) for k in range(21)]), 'num_of_ego'),
])
def test_services_refuse_values_that_do_not_fit(ros, bridge, srv_type, name, sim_name,
                                                request_fields, field):
    sim, start = bridge
    node, ports = start(inbound=())
    r = call(ros, srv_type, f'morai/{name}', srv_type.Request(**request_fields))
    assert not r.success
    assert r.message.startswith('refused, nothing sent') and field in r.message, r.message
    assert sim.nothing(sim_name)
    values = ros.diagnostics(f'{sim_name} (udp', lambda v: v.get('refused') == '1')
    assert values['sent'] == '0'


# -- closed loop and the installed executable ---------------------------------------------------

def test_closed_loop_ctrl_cmd_moves_the_emulated_ego(ros, bridge_obj):
    """A velocity command published in ROS reaches the emulator, whose ego status comes back on
    the odometry topic."""
    used = ('ego_status', 'object_info', 'traffic_light_status')
    emu = MoraiEmulator(MoraiScene(), send_ports={n: bridge_obj.ports[n] for n in used},
                        recv_ports={'ctrl_cmd': 0, 'lamp_control': 0}, rate=50.0)
    node, ports = bridge_obj.start(inbound=used, **{
        'sim_port.ctrl_cmd': emu.bound_ports['ctrl_cmd'],
        'sim_port.lamp_control': emu.bound_ports['lamp_control']})
    odom = ros.collect(Odometry, 'morai/odom', 100)
    tl = ros.collect(MoraiGetTrafficLightStatus, 'morai/traffic_light_status', 100)
    pub = publisher(ros, MoraiCtrlCmd, 'morai/ctrl_cmd')
    lamps = publisher(ros, MoraiLamps, 'morai/lamps')
    thread = threading.Thread(target=emu.serve, kwargs={'duration': 30.0}, daemon=True)
    thread.start()
    try:
        first = odom.wait_for(1, timeout=10)[0]
        assert first.pose.pose.position.x == 0.0 and first.twist.twist.linear.x == 0.0
        cmd = MoraiCtrlCmd(ctrl_mode=2, gear=4, cmd_type=MoraiCtrlCmd.CMD_TYPE_VELOCITY,
                           velocity=10.0, steering=0.0)                 # m/s (36 km/h)

        def moving():
            pub.publish(cmd)
            return any(m.twist.twist.linear.x > 3.0 and m.pose.pose.position.x > 1.0
                       for m in odom.messages)
        assert wait_until(moving, timeout=20, interval=0.1), 'the ego did not move'
        # then steer left: the heading turns counter-clockwise (yaw > 0)
        cmd.steering = 0.5

        def turning():
            pub.publish(cmd)
            q = odom.messages[-1].pose.pose.orientation
            return 2 * math.atan2(q.z, q.w) > 0.1
        assert wait_until(turning, timeout=20, interval=0.1), 'the ego did not turn'
        lamps.publish(MoraiLamps(turn_signal=1))
        assert wait_until(lambda: emu.scene.turn_signal == 1, 10)
        assert tl.wait_for(1)[0].traffic_light_index == 'C119BS010025'
    finally:
        emu.stop()
        thread.join(5)
        emu.close()
    assert emu.scene.stats['ctrl_cmd'] >= 2 and emu.scene.ctrl_mode == 2


def test_installed_executable_with_params_file(ros):
    """The node as `ros2 run` starts it: its own process, config/morai.yaml plus port overrides,
    against the emulator."""
    base = free_udp_ports(len(INBOUND))
    ports = {n: base + i for i, n in enumerate(INBOUND)}
    emu = MoraiEmulator(MoraiScene(), send_ports={n: ports[n] for n in INBOUND
                                                  if n != 'multi_ego_setting'},
                        recv_ports={'scenario_load': 0}, rate=50.0)
    params = {f'listen_port.{n}': p for n, p in ports.items() if n != 'multi_ego_setting'}
    params['sim_port.scenario_load'] = emu.bound_ports['scenario_load']
    odom = ros.collect(Odometry, 'morai/odom', 100, matched=False)
    objects = ros.collect(MoraiObjectStatusList, 'morai/objects', 100, matched=False)
    thread = threading.Thread(target=emu.serve, kwargs={'duration': 60.0}, daemon=True)
    with NodeProcess('morai_bridge', params_file=config_file('morai.yaml'), parameters=params,
                     quiet=True) as proc:
        thread.start()
        try:
            assert wait_until(lambda: len(odom.messages) >= 5 and len(objects.messages) >= 5,
                              timeout=30, interval=0.05)
            r = call(ros, MoraiScenarioLoad, 'morai/scenario_load',
                     MoraiScenarioLoad.Request(file_name='demo_scenario', set_pause=False),
                     timeout=20)
            assert r.success, r.message
            assert wait_until(lambda: emu.scene.scenario is not None, 10)
            assert emu.scene.scenario.file_name == 'demo_scenario'
        finally:
            emu.stop()
            thread.join(5)
            emu.close()
        assert proc.running()
    assert proc.proc.returncode == 0
    assert objects.messages[-1].layout == 'obj106_ts' and objects.messages[-1].objects


def test_emulator_cli_ignores_ros_arguments():
    """`ros2 launch` appends --ros-args … to morai_sim's command line (launch/morai.launch.py)."""
    from ros_sim_bridge.core.cli import parse_args, strip_ros_args
    from ros_sim_bridge.morai.emulator.cli import argument_problem, build_parser
    argv = ['--release', 'document', '--ros-args', '-r', '__node:=morai_sim',
            '--params-file', '/tmp/x.yaml']
    assert strip_ros_args(argv) == ['--release', 'document']
    assert strip_ros_args(['--ros-args', '-r', 'a:=b', '--', '--rate', '5']) == ['--rate', '5']
    assert parse_args(build_parser(), argv, argument_problem).release == 'document'
    assert parse_args(build_parser(), ['--ros-args', '-r', 'a:=b', '--', '--rate', '5'],
                      argument_problem).rate == 5.0


def test_morai_msgs_names_and_topics_find_the_codec_type():
    """The ROS names users know (SUPPLEMENT §1.6) live beside the node, not in the codec."""
    from ros_sim_bridge.morai.ros.names import MORAI_MSGS, message_type
    assert set(MORAI_MSGS) == set(morai.MESSAGE_TYPES)
    for alias in ('intersection_status', 'IntersectionStatus', '/InsnStatus', 'insnstatus'):
        assert message_type(alias).name == 'intersection_status'
    assert message_type('/Ego_topic').name == 'ego_status'
    with pytest.raises(KeyError, match='ego_status'):
        message_type('no_such_message')
