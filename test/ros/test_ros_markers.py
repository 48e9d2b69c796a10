"""ros/markers.py: oriented boxes, labels, arrows, line strips and DELETE bookkeeping.

Expected values are worked out by hand (a yaw of θ about z is the quaternion
w = cos θ/2, z = sin θ/2) rather than through the module's own helpers.
"""
import math

import numpy as np
import pytest
from std_msgs.msg import Header
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.ros import markers as M

H = Header(frame_id='laser')


def test_boxes_pose_orientation_scale_colour():
    ids = [7, 9]
    centers = [[1.0, 2.0, 0.75], [-3.0, 0.5, 1.0]]
    sizes = [[4.0, 1.8, 1.5], [0.0, 0.01, 2.0]]
    yaw = [math.pi / 2, -math.pi / 6]
    colors = [[1.0, 0.0, 0.0, 0.5], [0.0, 1.0, 0.0, 1.0]]
    out = M.boxes(H, 'objects', ids, centers, sizes, yaw=yaw, colors=colors, min_size=0.05,
                  lifetime=M.duration(1.25))
    assert [m.id for m in out] == ids
    a, b = out
    assert (a.type, a.action, a.ns, a.header.frame_id) == (Marker.CUBE, Marker.ADD, 'objects',
                                                           'laser')
    assert (a.pose.position.x, a.pose.position.y, a.pose.position.z) == (1.0, 2.0, 0.75)
    s = math.sqrt(0.5)
    assert (a.pose.orientation.w, a.pose.orientation.z) == pytest.approx((s, s))
    assert (a.pose.orientation.x, a.pose.orientation.y) == (0.0, 0.0)
    assert b.pose.orientation.w == pytest.approx(math.cos(math.pi / 12))
    assert b.pose.orientation.z == pytest.approx(-math.sin(math.pi / 12))
    assert (a.scale.x, a.scale.y, a.scale.z) == (4.0, 1.8, 1.5)
    assert (b.scale.x, b.scale.y, b.scale.z) == (0.05, 0.05, 2.0)     # raised to min_size
    assert (a.color.r, a.color.g, a.color.b, a.color.a) == pytest.approx((1.0, 0.0, 0.0, 0.5))
    assert (b.color.g, b.color.a) == (1.0, 1.0)
    assert (a.lifetime.sec, a.lifetime.nanosec) == (1, 250_000_000)


def test_boxes_axis_aligned_one_colour_and_empty():
    (m,) = M.boxes(H, 'n', np.array([3], np.uint16), np.zeros((1, 3)), np.ones((1, 3)))
    assert m.pose.orientation.w == 1.0 and m.pose.orientation.z == 0.0
    assert (m.color.r, m.color.a) == (1.0, 1.0) and m.id == 3 and isinstance(m.id, int)
    assert M.boxes(H, 'n', [], np.zeros((0, 3)), np.zeros((0, 3))) == []


def test_boxes_take_full_orientations_as_given():
    """Pitched or rolled boxes (CARLA actors on a slope): quaternions w, x, y, z as given."""
    q = [[0.9, 0.1, -0.3, 0.2], [1.0, 0.0, 0.0, 0.0]]
    a, b = M.boxes(H, 'actors', [1, 2], np.zeros((2, 3)), np.ones((2, 3)), orientations=q)
    assert (a.pose.orientation.w, a.pose.orientation.x, a.pose.orientation.y,
            a.pose.orientation.z) == (0.9, 0.1, -0.3, 0.2)
    assert b.pose.orientation.w == 1.0
    with pytest.raises(ValueError, match='not both'):
        M.boxes(H, 'actors', [1], np.zeros((1, 3)), np.ones((1, 3)), yaw=[0.0],
                orientations=[[1.0, 0.0, 0.0, 0.0]])


def test_labels_arrows_line_strips():
    (t,) = M.labels(H, 'labels', [4], [[1.0, 2.0, 3.0]], ['4 car'], height=0.7)
    assert (t.type, t.text, t.scale.z, t.pose.position.z) == (Marker.TEXT_VIEW_FACING, '4 car',
                                                              pytest.approx(0.7), 3.0)
    (a,) = M.arrows(H, 'v', [4], [[1.0, 1.0, 0.5]], [[3.0, 0.0, 0.5]], shaft=0.1, head=0.2,
                    head_length=0.3, colors=(1.0, 1.0, 0.0, 1.0))
    assert a.type == Marker.ARROW and a.pose.orientation.w == 1.0
    assert [(p.x, p.y, p.z) for p in a.points] == [(1.0, 1.0, 0.5), (3.0, 0.0, 0.5)]
    assert (a.scale.x, a.scale.y, a.scale.z) == pytest.approx((0.1, 0.2, 0.3))
    one, two = M.line_strips(H, 'c', [1, 2], [np.array([[1.0, 2.0]]),
                                              np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 1.0]])],
                             z=0.25, width=0.05)
    assert one.type == Marker.LINE_STRIP and one.scale.x == pytest.approx(0.05)
    assert [(p.x, p.y, p.z) for p in one.points] == [(1.0, 2.0, 0.25)] * 2   # degenerate seg.
    assert [(p.x, p.y, p.z) for p in two.points] == [(0.0, 0.0, 1.0), (1.0, 1.0, 1.0)]


def test_tracker_deletes_what_vanished_and_clear_deletes_everything():
    tr = M.MarkerTracker()
    first = M.boxes(H, 'b', [1, 2, 3], np.zeros((3, 3)), np.ones((3, 3)))
    arr = tr.update(H, first)
    assert isinstance(arr, MarkerArray) and len(arr.markers) == 3
    assert all(m.action == Marker.ADD for m in arr.markers)
    second = M.boxes(H, 'b', [2], np.zeros((1, 3)), np.ones((1, 3))) + \
        M.labels(H, 'l', [2], np.zeros((1, 3)), ['x'])
    arr = tr.update(H, second)
    dels = [(m.ns, m.id) for m in arr.markers if m.action == Marker.DELETE]
    assert dels == [('b', 1), ('b', 3)]                    # sorted, before the adds
    assert [m.action for m in arr.markers[2:]] == [Marker.ADD, Marker.ADD]
    assert tr.shown == {('b', 2), ('l', 2)}
    cleared = tr.clear(H)
    assert sorted((m.ns, m.id, m.action) for m in cleared.markers) == [
        ('b', 2, Marker.DELETE), ('l', 2, Marker.DELETE)]
    assert tr.shown == set() and tr.clear(H).markers == []


def test_delete_all_and_duration():
    m = M.delete_all(H, 'objects')
    assert (m.action, m.ns) == (Marker.DELETEALL, 'objects')
    assert (M.duration(0).sec, M.duration(0).nanosec) == (0, 0)
    assert (M.duration(2.5).sec, M.duration(2.5).nanosec) == (2, 500_000_000)


def test_colors_array_broadcasts_one_colour():
    c = M.colors_array((0.1, 0.2, 0.3, 0.4), 3)
    assert c.shape == (3, 4) and (c[2] == [0.1, 0.2, 0.3, 0.4]).all()


def test_line_strips_take_prebuilt_points_as_they_are():
    from geometry_msgs.msg import Point
    shared = [Point(x=1.0, y=2.0), Point(x=3.0, y=4.0)]
    one, two = M.line_strips(H, 'c', [1, 2], [shared, [Point(x=5.0)]])
    assert one.points is shared or list(one.points) == shared
    assert [(p.x, p.y) for p in two.points] == [(5.0, 0.0)] * 2
    (empty,) = M.line_strips(H, 'c', [3], [[]])
    assert list(empty.points) == []
