"""ECU object lists (0x2225, 0x2280, 0x2281) beyond the node's caps (``max_objects``,
``max_contour_points``, as for the LUX 0x2221): cut to the first objects and points, counted
(``dropped_objects``, ``dropped_contour_points``, ``truncated_lists``) and warned; a legal list
of 65,535 objects no longer keeps the node busy for seconds.  ``to-bag`` keeps every object.

The small 0x2280 is written by the spec's table (§11: list header mid-scan NTP64 + UINT16
count; per object 170 bytes: id at 0, classification at 18, box centre at 40, box size at 56,
contour count at 130, then the contour as big-endian float32 x, y pairs).
"""
from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.ibeo.codec import objects_ecu as oe
from ros_sim_bridge.ibeo.codec.header import encode_message
from ros_sim_bridge.ibeo.ros import ecu_conversions as ec
from ros_sim_bridge.msg import IbeoObjectList
from ros_sim_bridge.tools.launcher import NodeProcess

from conftest import free_tcp_port
from test_ibeo_data_diagnostics import FAST, Diagnostics, connected, installed, serving
from test_ibeo_ecu_cdr import object_list

NTP = 3_900_000_000 << 32


def object_2280(oid: int, cx: float, cy: float, contour) -> bytes:
    """One §11 object: a car of 4.0 × 1.8 m at (cx, cy) with ``contour`` [(x, y)] m."""
    fixed = bytearray(170)
    struct.pack_into('>H', fixed, 0, oid)
    fixed[18] = 5                                           # classification: car
    struct.pack_into('>ff', fixed, 40, cx, cy)              # box centre
    struct.pack_into('>ff', fixed, 56, 4.0, 1.8)            # box size
    fixed[130] = len(contour)
    return bytes(fixed) + b''.join(struct.pack('>ff', x, y) for x, y in contour)


def list_2280(objects: list) -> bytes:
    return struct.pack('>QH', NTP, len(objects)) + b''.join(objects)


@pytest.mark.parametrize('kind', ['2225', '2280', '2281'])
def test_a_list_within_the_caps_is_the_list_itself(kind):
    lst = object_list(kind, 9)                              # contours of 0..3 points
    capped = ec.cap_object_list(lst, 9, 3)
    assert capped.record is lst and (capped.dropped_objects, capped.dropped_points) == (0, 0)


@pytest.mark.parametrize('kind', ['2225', '2280', '2281'])
def test_objects_and_points_beyond_the_caps_are_cut_and_counted(kind):
    lst = object_list(kind, 9)                              # contours of 0, 1, 2, 3, 0, 1, …
    capped = ec.cap_object_list(lst, 6, 1)
    cut = capped.record
    assert capped.dropped_objects == 3
    assert capped.dropped_points == 1 + 2                   # objects 2 and 3 (of the six kept)
    assert type(cut) is type(lst) and cut.mid_scan_ntp == lst.mid_scan_ntp
    assert cut.objects.tobytes() == lst.objects[:6].tobytes()
    assert [len(c) for c in cut.contours] == [0, 1, 1, 1, 0, 1]
    assert all(np.array_equal(a, b[:1]) for a, b in zip(cut.contours, lst.contours))
    assert list(cut.properties) == list(lst.properties[:6])
    if kind == '2281':
        assert (cut.object_list_id, cut.list_flags) == (lst.object_list_id, lst.list_flags)
    empty = ec.cap_object_list(lst, 0, 0)
    assert len(empty.record.objects) == 0 and empty.dropped_objects == 9


def test_installed_ibeo_ecu_cuts_counts_and_publishes_a_list_over_the_caps(ros, closing):
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_ecu', port, namespace='/cap', stamp_source='receive', max_objects=5,
                   max_contour_points=2) as proc:
        sensor = serving(closing, port)
        connected(diag)
        objs = ros.collect(IbeoObjectList, '/cap/ecu/objects', 10)
        marks = ros.collect(MarkerArray, '/cap/objects/markers', 10)
        body = list_2280([object_2280(100 + i, 10.0 + i, -2.0, [(9.0 + i, -3.0),
                                                                (11.0 + i, -3.0),
                                                                (11.0 + i, -1.0)])
                          for i in range(8)])
        sensor.send(encode_message(0x2280, body, ntp=NTP))
        (msg,) = objs.wait_for(1)
        (arr,) = marks.wait_for(1)
        _, v = diag.wait('(0x2280)', lambda st, v: v.get('dropped_objects') == '3')
        # each list type counts its own: one more 0x2280 over the caps, one 0x2281
        lst_2281 = dataclasses.replace(object_list('2281', 6), properties=[[]] * 6)
        sensor.send(encode_message(0x2280, body, ntp=NTP)
                    + encode_message(0x2281, oe.encode_objects(lst_2281), ntp=NTP))
        _, v2281 = diag.wait('(0x2281)', lambda st, v: v.get('truncated_lists') == '1')
        _, v2280 = diag.wait('(0x2280)', lambda st, v: v.get('truncated_lists') == '2')
        assert proc.running()
    assert proc.proc.returncode == 0
    assert (v2280['dropped_objects'], v2280['dropped_contour_points']) == ('6', '10')
    assert (v2281['dropped_objects'], v2281['dropped_contour_points']) == ('1', '1')
    assert [o.id for o in msg.objects] == [100, 101, 102, 103, 104]
    assert [[(p.x, p.y) for p in o.contour] for o in msg.objects] == \
        [[(9.0 + i, -3.0), (11.0 + i, -3.0)] for i in range(5)]
    assert [o.box_center_x for o in msg.objects] == [10.0, 11.0, 12.0, 13.0, 14.0]
    assert {m.id for m in arr.markers} == {100, 101, 102, 103, 104}
    assert (v['truncated_lists'], v['dropped_contour_points']) == ('1', '5')


def test_installed_ibeo_ecu_publishes_the_largest_legal_list_cut_to_the_caps(ros, closing):
    """65,535 objects (11 MB): the first 256 published, and the list after it as well."""
    n = 65535
    o = oe.make_objects(n, oe.OBJECTS_2280)
    o['id'] = np.arange(n) & 0xFFFF
    o['box_center_x'], o['box_size_x'], o['box_size_y'] = 5.0, 4.0, 1.8
    big = oe.encode_objects(oe.EcuObjectList2280(NTP, o, [np.ones((3, 2), np.float32)] * n))
    small = list_2280([object_2280(7, 1.0, 1.0, [(0.5, 0.5)])])
    port = free_tcp_port()
    diag = Diagnostics(ros)
    with installed('ibeo_ecu', port, namespace='/big', stamp_source='receive') as proc:
        sensor = serving(closing, port)
        connected(diag)
        objs = ros.collect(IbeoObjectList, '/big/ecu/objects', 10)
        sensor.send(encode_message(0x2280, big, ntp=NTP) + encode_message(0x2280, small, ntp=NTP))
        first, second = objs.wait_for(2, timeout=30)
        _, v = diag.wait('(0x2280)', lambda st, v: v.get('published') == '4')
        assert proc.running()
    assert proc.proc.returncode == 0
    assert len(first.objects) == 256 and [ob.id for ob in first.objects[:3]] == [0, 1, 2]
    assert [ob.id for ob in second.objects] == [7]
    assert v['dropped_objects'] == str(n - 256) and v['truncated_lists'] == '1'


def recording_with_the_largest_list_first(path):
    """An .idc opening with a legal 0x2280 of 65,535 objects, then one of 2 (spec bytes)."""
    from ros_sim_bridge.ibeo.idc import IdcWriter
    n = 65535
    o = oe.make_objects(n, oe.OBJECTS_2280)
    o['id'] = np.arange(n) & 0xFFFF
    o['box_center_x'], o['box_size_x'], o['box_size_y'] = 5.0, 4.0, 1.8
    w = IdcWriter(path)
    w.write(0x2280, oe.encode_objects(oe.EcuObjectList2280(NTP, o, [np.ones((3, 2),
                                                                        np.float32)] * n)),
            ntp=NTP)
    small = list_2280([object_2280(7, 1.0, 1.0, [(0.5, 0.5)]), object_2280(8, 2.0, 1.0, [])])
    w.write(0x2280, small, ntp=NTP + (1 << 31))
    w.close()
    return len(small)


def test_playback_learns_its_topics_from_the_smallest_list_without_its_objects(tmp_path):
    """source:=file makes its ECU publishers from one message per type before playing: the
    smallest, an object list without its objects (was: the first, whole: a recording opening
    with 65,535-object lists took 12 s and 750 MB to start)."""
    from ros_sim_bridge.ibeo.idc import IdcReader
    from ros_sim_bridge.ibeo.ros.playback import recording_outputs
    path = tmp_path / 'big_first.idc'
    small_size = recording_with_the_largest_list_first(path)
    seen = []

    class Converter(ec.IbeoToRos):
        def convert(self, header, record):
            seen.append((header.size, len(record.objects)))
            return super().convert(header, record)
    with IdcReader(path) as r:
        out = recording_outputs(r, r.entries, Converter())
    assert seen == [(small_size, 0)]
    assert sorted(t.__name__ for t in out.values()) == ['IbeoObjectList', 'MarkerArray']


def test_installed_ibeo_ecu_plays_a_recording_of_the_largest_lists_cut_to_the_caps(ros,
                                                                                   tmp_path):
    from std_srvs.srv import Trigger
    path = tmp_path / 'big_first.idc'
    recording_with_the_largest_list_first(path)
    with NodeProcess('ibeo_ecu', parameters={'source': 'file', 'file': str(path),
                                             'rate': 0.0, 'start_paused': True, **FAST},
                     namespace='/play', quiet=True) as proc:
        objs = ros.collect(IbeoObjectList, '/play/ecu/objects', 10)
        client = ros.probe.create_client(Trigger, '/play/ibeo_ecu/resume')
        assert client.wait_for_service(timeout_sec=30)
        assert client.call(Trigger.Request(), timeout_sec=10).success
        first, second = objs.wait_for(2, timeout=30)
        assert proc.running()
    assert proc.proc.returncode == 0
    assert len(first.objects) == 256 and [o.id for o in second.objects] == [7, 8]
