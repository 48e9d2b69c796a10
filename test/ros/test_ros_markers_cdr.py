"""ros/markers_cdr.py, the one marker builder: each marker shape (box, label, sphere, delete,
delete-all) as a whole-array template and as element templates gives the bytes rclpy
serialises for the same Marker written out field by field here (padding aside), and rosbags
reads the same values."""
import math

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point, Pose, Quaternion, Vector3
from rclpy.serialization import serialize_message
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from cdr_readback import check
from ros_sim_bridge.ros import markers_cdr as mk
from ros_sim_bridge.ros.cdr_template import Slot

from cdr_fillers import both_fillers  # noqa: E402,F401  (the fixture)

# every test with both element fillers (test/cdr_fillers.py)
pytestmark = pytest.mark.usefixtures('both_fillers')

STAMP = (12, 500_000_000)
HEADER = Header(stamp=Time(sec=12, nanosec=500_000_000), frame_id='map')


def by_hand() -> MarkerArray:
    """DELETEALL of 'objects', a box (yaw 90°) and its label, a sphere for 1.5 s, a DELETE."""
    half = math.pi / 4                      # yaw 90°: (0, 0, sin 45°, cos 45°)
    return MarkerArray(markers=[
        Marker(header=HEADER, ns='objects', action=Marker.DELETEALL),
        Marker(header=HEADER, ns='objects', id=4, type=Marker.CUBE, action=Marker.ADD,
               pose=Pose(position=Point(x=1.0, y=2.0, z=0.5),
                         orientation=Quaternion(x=0.0, y=0.0, z=math.sin(half),
                                                w=math.cos(half))),
               scale=Vector3(x=4.0, y=2.0, z=0.01),
               color=ColorRGBA(r=0.1, g=0.4, b=1.0, a=0.8)),
        Marker(header=HEADER, ns='labels', id=4, type=Marker.TEXT_VIEW_FACING,
               action=Marker.ADD, pose=Pose(position=Point(x=1.0, y=2.0, z=1.5)),
               scale=Vector3(z=0.8), color=ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0),
               text='car 4'),
        Marker(header=HEADER, ns='hits', id=9, type=Marker.SPHERE, action=Marker.ADD,
               pose=Pose(position=Point(x=-3.0, y=0.25, z=0.0)),
               scale=Vector3(x=3.0, y=3.0, z=3.0),
               color=ColorRGBA(r=1.0, g=0.1, b=0.1, a=0.7),
               lifetime=Duration(sec=1, nanosec=500_000_000)),
        Marker(header=HEADER, ns='objects', id=5, action=Marker.DELETE)])


def expected_values() -> dict:
    return {'markers.0.action': 3, 'markers.0.ns': 'objects', 'markers.0.header.stamp.sec': 12,
            'markers.1.id': 4, 'markers.1.type': 1, 'markers.1.pose.position.x': 1.0,
            'markers.1.pose.orientation.z': math.sqrt(0.5), 'markers.1.scale.z': 0.01,
            'markers.1.color.b': 1.0, 'markers.2.text': 'car 4', 'markers.2.scale.z': 0.8,
            'markers.2.pose.position.z': 1.5, 'markers.3.type': 2,
            'markers.3.lifetime.nanosec': 500_000_000, 'markers.3.scale.y': 3.0,
            'markers.4.action': 2, 'markers.4.id': 5, 'markers.4.header.frame_id': 'map'}


def test_whole_array_template_is_rclpys_bytes():
    tmpl = mk.array_template([
        mk.delete_all('map', 'objects'),
        mk.box('map', 'objects'),
        mk.label('map', 'labels', 'car 4', position=Slot('top'), height=0.8),
        mk.sphere('map', 'hits', 3.0, (1.0, 0.1, 0.1, 0.7), id=9, position=Slot('hit'),
                  lifetime=mk.duration(1.5)),
        mk.delete('map', 'objects', 5)])
    poses, scales = mk.box_rows(1, [[1.0, 2.0, 0.5]], [[4.0, 2.0, 0.0]], yaw=[math.pi / 2],
                                min_size=0.01)
    raw = bytes(tmpl.fill(stamp=STAMP, id=np.array([[4]]), pose=poses, scale=scales,
                          color=mk.colors_array((0.1, 0.4, 1.0, 0.8), 1),
                          top=np.array([[1.0, 2.0, 1.5]]), hit=np.array([[-3.0, 0.25, 0.0]])))
    check(raw, MarkerArray, expected_values(), abs=1e-6)
    want = serialize_message(by_hand())
    assert all(r == w or r == 0 for r, w in zip(raw, want)) and len(raw) == len(want)


def test_element_templates_give_the_same_markers_as_rclpy():
    cdr = mk.MarkerCdr()
    items = cdr.boxes(STAMP, 'map', 'objects', [4, 6], [[1.0, 2.0, 0.5], [0.0, 0.0, 0.0]],
                      [[4.0, 2.0, 0.0], [1.0, 1.0, 1.0]], yaw=[math.pi / 2, 0.0],
                      colors=(0.1, 0.4, 1.0, 0.8), min_size=0.01)
    items += cdr.labels(STAMP, 'map', 'labels', [4], [[1.0, 2.0, 1.5]], ['car 4'], height=0.8)
    [msg] = mk.marker_arrays([items])
    raw = msg.data
    hand = by_hand()
    extra = Marker(header=HEADER, ns='objects', id=6, type=Marker.CUBE, action=Marker.ADD,
                   pose=Pose(orientation=Quaternion(w=1.0)), scale=Vector3(x=1.0, y=1.0, z=1.0),
                   color=ColorRGBA(r=0.1, g=0.4, b=1.0, a=0.8))
    want = serialize_message(MarkerArray(markers=[hand.markers[1], extra, hand.markers[2]]))
    assert len(raw) == len(want)
    assert all(r == w or r == 0 for r, w in zip(raw, want))
    check(raw, MarkerArray, {'markers.0.id': 4, 'markers.1.id': 6, 'markers.1.scale.x': 1.0,
                             'markers.2.text': 'car 4', 'markers.0.pose.orientation.w':
                             math.sqrt(0.5)}, abs=1e-6)


def test_box_rows_orientations_and_minimum_size():
    poses, scales = mk.box_rows(2, np.zeros((2, 3)), [[0.0, 1.0, 2.0], [3.0, 0.001, 1.0]],
                                orientations=[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
                                min_size=0.05)
    assert poses[:, 3:].tolist() == [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
    assert scales.tolist() == [[0.05, 1.0, 2.0], [3.0, 0.05, 1.0]]
    with pytest.raises(ValueError):
        mk.box_rows(1, [[0, 0, 0]], [[1, 1, 1]], yaw=[0.0], orientations=[[1, 0, 0, 0]])


def test_arrows_and_tracker_deletes_are_rclpys_bytes():
    """Two arrows (0.1 m shaft, 0.25 m head 0.3 m long; one red, one green; lifetime 2 s),
    then an update where marker ('objects', 4) is gone: its DELETE first, sorted."""
    cdr, tracker = mk.MarkerCdr(), mk.MarkerTracker()
    life = Duration(sec=2)
    first = tracker.update(cdr, STAMP, 'map', [('objects', 4), ('velocity', 4),
                                               ('velocity', 6)])
    assert first == []
    items = tracker.update(cdr, STAMP, 'map', [('velocity', 4), ('velocity', 6)])
    items += cdr.arrows(STAMP, 'map', 'velocity', [4, 6], [[0.0, 0.0, 0.0], [1.0, 1.0, 0.5]],
                        [[2.0, 0.0, 0.0], [1.0, 3.0, 0.5]],
                        colors=[[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]], lifetime=life)
    [msg] = mk.marker_arrays([items])

    def arrow(mid, a, b, rgba):
        return Marker(header=HEADER, ns='velocity', id=mid, type=Marker.ARROW,
                      action=Marker.ADD, pose=Pose(orientation=Quaternion(w=1.0)),
                      scale=Vector3(x=0.1, y=0.25, z=0.3), lifetime=life,
                      color=ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3]),
                      points=[Point(x=a[0], y=a[1], z=a[2]), Point(x=b[0], y=b[1], z=b[2])])
    want = serialize_message(MarkerArray(markers=[
        Marker(header=HEADER, ns='objects', id=4, action=Marker.DELETE),
        arrow(4, (0.0, 0.0, 0.0), (2.0, 0.0, 0.0), (1.0, 0.0, 0.0, 1.0)),
        arrow(6, (1.0, 1.0, 0.5), (1.0, 3.0, 0.5), (0.0, 1.0, 0.0, 1.0))]))
    raw = msg.data
    assert len(raw) == len(want) and all(r == w or r == 0 for r, w in zip(raw, want))
    check(raw, MarkerArray, {'markers.0.action': 2, 'markers.0.ns': 'objects',
                             'markers.0.id': 4, 'markers.2.points.1.y': 3.0,
                             'markers.1.type': 0, 'markers.2.color.g': 1.0,
                             'markers.2.lifetime.sec': 2})
    gone = mk.marker_arrays([tracker.clear(cdr, STAMP, 'map')])[0].data
    check(gone, MarkerArray, {'markers.0.ns': 'velocity', 'markers.0.id': 4,
                              'markers.1.id': 6, 'markers.1.action': 2})
    assert tracker.shown == set()


def test_marker_constants_are_visualization_msgs():
    # markers_cdr names Marker.msg's constants without importing visualization_msgs
    for name in ('ARROW', 'CUBE', 'SPHERE', 'LINE_STRIP', 'TEXT_VIEW_FACING', 'ADD', 'DELETE',
                 'DELETEALL'):
        assert getattr(mk.Marker, name) == getattr(Marker, name), name
