"""Object lists beyond the caps (issue #10 defect 7): counted, truncated, converted in bounded
work; objects and markers as before for lists within them."""
import math

import numpy as np
import pytest
from visualization_msgs.msg import Marker

from ros_sim_bridge.ibeo.codec import objects as O
from ros_sim_bridge.ibeo.codec.framing import make_framer
from ros_sim_bridge.ibeo.codec.header import encode_message
from ros_sim_bridge.ibeo.ros import conversions as convert
from ros_sim_bridge.ibeo.ros import lux_cdr

from ibeo_readback import readback

STAMP = (1_700_000_000, 25)


def object_msg(capped, device_id: int = 0):
    """The LuxObjectList of a capped list, its CDR read back."""
    msg = readback(lux_cdr.object_list(capped, STAMP, 'laser', device_id=device_id))
    assert msg.header.frame_id == 'laser' and msg.header.stamp.nanosec == 25
    return msg


def object_list(n, points_per_object=3):
    o = O.make_objects(n)
    o['id'] = np.arange(n) % 65536
    o['box_center_x'] = (np.arange(n) % 600) * 50              # the codec's units: cm, deg
    o['box_size_x'], o['box_size_y'] = 400, 180
    o['box_orientation'] = 90
    o['classification'] = 5
    contours = [np.full((points_per_object, 2), 25 * (i % 8)) for i in range(n)]
    return O.LuxObjectList(0x1234, o, contours)


def test_within_the_caps_nothing_is_cut():
    lst = object_list(10)
    capped = convert.cap_objects(lst, convert.ObjectCaps(10, 3))
    assert not capped.truncated and len(capped.objects) == 10
    assert (capped.dropped_objects, capped.dropped_points) == (0, 0)
    assert all(len(c) == 3 for c in capped.contours)


def test_objects_and_contour_points_beyond_the_caps_are_cut_and_counted():
    lst = object_list(300, points_per_object=5)
    lst.contours[1] = np.ones((70, 2))
    capped = convert.cap_objects(lst, convert.ObjectCaps(max_objects=256,
                                                         max_contour_points=4))
    assert capped.truncated
    assert capped.dropped_objects == 44 and len(capped.objects) == 256
    # 255 objects with 5 points (1 over each) and one with 70 (66 over)
    assert capped.dropped_points == 255 * 1 + 66
    assert {len(c) for c in capped.contours} == {4}
    assert (capped.objects['id'][:3] == [0, 1, 2]).all()        # the first ones are kept
    msg = object_msg(capped, device_id=2)
    assert len(msg.objects) == 256 and all(len(o.contour) == 4 for o in msg.objects)
    assert msg.scan_start_ntp == 0x1234 and msg.device_id == 2


def test_zero_caps_publish_an_empty_list():
    capped = convert.cap_objects(object_list(5), convert.ObjectCaps(0, 0))
    assert len(capped.objects) == 0 and capped.dropped_objects == 5
    assert object_msg(capped).objects == []
    assert readback(lux_cdr.LuxMarkers().update(capped, STAMP, 'laser')).markers == []


def test_largest_legal_list_is_bounded_by_the_caps():
    # a legal 0x2221 with 65,535 objects: decoded, then only the capped part converted
    lst = object_list(65535, points_per_object=1)
    (frame,) = make_framer().feed(encode_message(0x2221, O.encode_objects(lst)))
    assert len(frame.record.objects) == 65535
    capped = convert.cap_objects(frame.record, convert.ObjectCaps())
    assert len(capped.objects) == convert.ObjectCaps().max_objects
    assert capped.dropped_objects == 65535 - convert.ObjectCaps().max_objects
    tracker = lux_cdr.LuxMarkers()
    arr = readback(tracker.update(capped, STAMP, 'laser'))
    boxes = [m for m in arr.markers if m.ns == 'boxes']
    assert len(boxes) == convert.ObjectCaps().max_objects


def test_markers_of_one_object_by_hand():
    lst = object_list(1)
    lst.objects['reference_x'], lst.objects['reference_y'] = 200, 100         # cm
    lst.objects['abs_velocity_x'], lst.objects['abs_velocity_y'] = 300, -100  # cm/s
    lst.objects['rel_velocity_valid'] = False
    arr = readback(lux_cdr.LuxMarkers(box_height=1.5).update(convert.cap_objects(lst), STAMP,
                                                               'laser'))
    by_ns = {m.ns: m for m in arr.markers}
    box = by_ns['boxes']
    assert box.type == Marker.CUBE and box.pose.position.z == pytest.approx(0.75)
    assert box.pose.orientation.w == pytest.approx(math.sqrt(0.5))
    assert box.pose.orientation.z == pytest.approx(math.sqrt(0.5))
    assert (box.scale.x, box.scale.y, box.scale.z) == pytest.approx((4.0, 1.8, 1.5))
    assert box.color.a == pytest.approx(0.35)
    assert by_ns['labels'].text == '0 car'
    arrow = by_ns['velocities']
    assert [(p.x, p.y, p.z) for p in arrow.points] == [(2.0, 1.0, 0.75), (5.0, 0.0, 0.75)]
    assert (arrow.color.r, arrow.color.g) == (1.0, 1.0)             # absolute: yellow
    assert len(by_ns['contours'].points) == 3


def test_decoded_contours_are_views_made_on_access():
    lst = object_list(3)
    lst.contours[1] = np.array([[1.0, -2.0]])
    lst.contours[2] = np.zeros((0, 2))
    got = O.decode_objects(O.encode_objects(lst)).contours
    assert isinstance(got, O.Contours) and len(got) == 3
    assert got[1].tolist() == [[1.0, -2.0]] and got[-1].shape == (0, 2)
    assert [len(c) for c in got[:2]] == [3, 1]
    assert got == lst.contours and got != lst.contours[:2]
    with pytest.raises(IndexError):
        got[3]


def test_conversion_applies_the_units_table():
    """The codec's cm, cm/s, ms and deg (spec §4) become m, m/s, s and rad on the way to ROS,
    and only there: the record keeps the spec's numbers."""
    o = O.make_objects(2)
    o['relative_time'] = 33
    o['reference_x'], o['reference_y'] = 1234, -567
    o['reference_sigma_x'], o['reference_sigma_y'] = 10, 20
    o['closest_x'], o['closest_y'] = 1100, -600
    o['bbox_center_x'], o['bbox_center_y'] = 1200, -500
    o['bbox_size_x'], o['bbox_size_y'] = 450, 180
    o['box_center_x'], o['box_center_y'] = 1210, -510
    o['box_size_x'], o['box_size_y'] = 440, 170
    o['box_orientation'] = [45.0, -90.0]
    o['abs_velocity_x'], o['abs_velocity_y'] = 250, -100
    o['abs_velocity_sigma_x'], o['abs_velocity_sigma_y'] = 30, 40
    o['rel_velocity_x'], o['rel_velocity_y'] = -10, 5
    o['abs_velocity_valid'][1] = False
    o['abs_velocity_x'][1] = o['abs_velocity_y'][1] = np.nan
    o['id'] = [7, 8]
    lst = O.LuxObjectList(1, o, [np.array([[1000.0, -400.0], [1100.0, -500.0]]),
                                 np.array([[-300.0, 700.0]])])
    si = convert.cap_objects(lst)
    a, b = si.objects
    assert a['relative_time'] == pytest.approx(0.033)
    assert (a['reference_x'], a['reference_y']) == pytest.approx((12.34, -5.67))
    assert (a['reference_sigma_x'], a['reference_sigma_y']) == pytest.approx((0.10, 0.20))
    assert (a['closest_x'], a['closest_y']) == pytest.approx((11.0, -6.0))
    assert (a['bbox_center_x'], a['bbox_center_y']) == pytest.approx((12.0, -5.0))
    assert (a['bbox_size_x'], a['bbox_size_y']) == pytest.approx((4.5, 1.8))
    assert (a['box_center_x'], a['box_center_y']) == pytest.approx((12.1, -5.1))
    assert (a['box_size_x'], a['box_size_y']) == pytest.approx((4.4, 1.7))
    assert a['box_orientation'] == pytest.approx(math.radians(45.0))
    assert b['box_orientation'] == pytest.approx(-math.pi / 2)
    assert (a['abs_velocity_x'], a['abs_velocity_y']) == pytest.approx((2.5, -1.0))
    assert (a['abs_velocity_sigma_x'], a['abs_velocity_sigma_y']) == pytest.approx((0.3, 0.4))
    assert (a['rel_velocity_x'], a['rel_velocity_y']) == pytest.approx((-0.1, 0.05))
    assert not b['abs_velocity_valid'] and math.isnan(b['abs_velocity_x'])
    assert (a['id'], b['id']) == (7, 8)                       # unitless fields pass through
    np.testing.assert_allclose(si.contours[0], [[10.0, -4.0], [11.0, -5.0]])
    np.testing.assert_allclose(si.contours[1], [[-3.0, 7.0]])
    assert lst.objects['reference_x'][0] == 1234              # the record is not changed
    assert lst.contours[1].tolist() == [[-300.0, 700.0]]
    # decoded contours (one shared array) convert the same way
    decoded = O.decode_objects(O.encode_objects(lst))
    np.testing.assert_allclose(convert.cap_objects(decoded).contours[0],
                               [[10.0, -4.0], [11.0, -5.0]])
    msg = object_msg(si)
    assert msg.objects[0].reference_x == pytest.approx(12.34)
    assert msg.objects[0].contour[1].x == pytest.approx(11.0)


def test_scaling_by_slots_gives_the_bytes_of_field_by_field_scaling():
    """The records scaled as rows of 8-byte slots (conversions._scaled) are, byte for byte,
    the field-by-field scaling of units.scaled: scaled floats (NaN, ±Inf, signalling NaN
    included) as one multiply gives them, the bytes of the other fields and of the padding
    as they were (the padding too), even where they read as a signalling NaN."""
    from ros_sim_bridge.ibeo.codec import units
    rng = np.random.default_rng(7)
    for n in (1, 5, 1000):
        o = O.make_objects(n)
        raw = o.view(np.uint8)
        raw[:] = rng.integers(0, 256, raw.size, dtype=np.uint8)     # padding too
        nan_bits = np.frombuffer(np.uint64(0x7FF0_0000_0000_0001).tobytes(), np.uint8)
        raw.reshape(n, -1)[:, 0:8] = nan_bits          # id, ages and padding: a signalling NaN
        o['relative_time'][0], o['box_orientation'][-1] = np.nan, -np.inf
        o['reference_x'][0] = np.frombuffer(nan_bits.tobytes(), np.float64)[0]
        want = np.frombuffer(bytearray(o.tobytes()), o.dtype)  # padding bytes kept
        with np.errstate(invalid='ignore'):
            for name, factor in units.OBJECT_TO_SI.items():
                want[name] = want[name] * factor
        got = convert._scaled(o, units.OBJECT_TO_SI)
        assert got.dtype == o.dtype and got.tobytes() == want.tobytes()
        with np.errstate(invalid='ignore'):
            fields = units.scaled(o, units.OBJECT_TO_SI)
        assert all(got[k].tobytes() == fields[k].tobytes() for k in o.dtype.names)
        for name in o.dtype.names:                     # the record keeps the spec's numbers
            if name not in units.OBJECT_TO_SI:
                assert got[name].tobytes() == o[name].tobytes()
    off_slot = np.zeros(3, np.dtype([('a', '<u2'), ('b', '<f8'), ('c', '<u2'), ('d', '<u2'),
                                     ('e', '<u2')]))          # b at byte 2: off a slot
    off_slot['b'], off_slot['a'] = [1.0, np.nan, -3.5], 9
    assert convert._slot_factors(off_slot.dtype, (('b', 2.0),)) is None
    assert convert._scaled(off_slot, {'b': 2.0}).tobytes() == \
        units.scaled(off_slot, {'b': 2.0}).tobytes()
