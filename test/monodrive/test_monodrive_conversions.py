"""monoDrive conversions into ROS messages that need no node: State boxes as markers (through
the shared ros/markers builders) and camera annotations as markers."""
import math

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, Quaternion
from visualization_msgs.msg import Marker

from ros_sim_bridge.monodrive.ros import conversions as convert
from ros_sim_bridge.msg import MonoDriveVehicleState

STAMP = Time(sec=5, nanosec=250)


def vehicle(name, x, y, yaw, tags=()):
    q = Quaternion(w=math.cos(yaw / 2), z=math.sin(yaw / 2))
    return MonoDriveVehicleState(name=name, tags=list(tags),
                                 pose=Pose(position=Point(x=x, y=y, z=0.0), orientation=q))


def test_state_boxes_as_oriented_cube_markers():
    """Values written by hand: a box centred 100 cm ahead and 75 cm up (Unreal vehicle frame,
    extents are half sizes in cm) on a vehicle at (1, 2) m facing +y (yaw 90°) sits at
    (1, 3, 0.75) m with the vehicle's orientation and full size 4.6 × 1.9 × 1.5 m."""
    ego = vehicle('ego', 1.0, 2.0, math.pi / 2, ('vehicle', 'ego'))
    other = vehicle('car_2', -3.0, 0.0, 0.0)
    box = {'name': 'body', 'center': {'x': 100.0, 'y': 0.0, 'z': 75.0},
           'extents': {'x': 230.0, 'y': 95.0, 'z': 75.0}}
    out = convert.box_markers([ego, other], [[box, box], []], STAMP, 'map').markers
    assert [m.id for m in out] == [0, 1, 16]        # 16 boxes per vehicle at most
    m = out[0]
    assert (m.ns, m.type, m.action) == ('monodrive_boxes', Marker.CUBE, Marker.ADD)
    assert (m.header.frame_id, m.header.stamp.sec, m.header.stamp.nanosec) == ('map', 5, 250)
    p = m.pose.position
    assert (p.x, p.y, p.z) == pytest.approx((1.0, 3.0, 0.75))
    q = m.pose.orientation
    assert (q.w, q.x, q.y, q.z) == pytest.approx((math.cos(math.pi / 4), 0.0, 0.0,
                                                  math.sin(math.pi / 4)))
    assert (m.scale.x, m.scale.y, m.scale.z) == pytest.approx((4.6, 1.9, 1.5))
    assert (m.color.r, m.color.g, m.color.b, m.color.a) == pytest.approx((0.2, 0.8, 0.2, 0.6))
    assert (m.lifetime.sec, m.lifetime.nanosec) == (0, 500_000_000)
    assert m.text == 'ego'
    d = out[2]                                       # no boxes sent: the default box
    assert (d.pose.position.x, d.pose.position.y, d.pose.position.z) == \
        pytest.approx((-3.0, 0.0, 0.75))
    assert (d.scale.x, d.scale.y, d.scale.z) == pytest.approx((4.5, 1.9, 1.5))
    assert (d.color.r, d.color.g, d.color.b) == pytest.approx((0.9, 0.5, 0.1))
    assert d.text == 'car_2'
    assert convert.box_markers([], [], STAMP, 'map').markers == []


def test_camera_annotation_as_markers():
    """Values by hand: a 64 × 48 camera with a 90° fov has fx = 32 px, centre (32, 24); the
    2-D box x 10…50.5, y 20…44 px drawn 1 m ahead spans x −0.6875…0.578125, y −0.125…0.625 m in
    the optical frame; the oriented box centred at (1000, −200, 75) cm (Unreal) is at
    (10, 2, 0.75) m in the map, full size 4.6 × 1.9 × 1.5 m."""
    from ros_sim_bridge.monodrive.codec import annotation
    from test_monodrive_codec import ANNOTATION
    ann = annotation.decode_annotation(ANNOTATION)
    out = convert.annotation_markers(ann, STAMP, 'cam_optical', 'map', 64, 48, 90.0)
    rects = [m for m in out if m.ns == 'monodrive_annotation_2d']
    labels = [m for m in out if m.ns == 'monodrive_annotation_labels']
    cubes = [m for m in out if m.ns == 'monodrive_annotation_3d']
    assert len(rects) == 2 and len(labels) == 2 and len(cubes) == 1
    r = rects[0]
    assert r.type == Marker.LINE_STRIP and r.header.frame_id == 'cam_optical'
    pts = [v for p in r.points for v in (p.x, p.y, p.z)]
    x0, x1, y0, y1 = -0.6875, 0.578125, -0.125, 0.625
    assert pts == pytest.approx([x0, y0, 1.0, x1, y0, 1.0, x1, y1, 1.0, x0, y1, 1.0,
                                 x0, y0, 1.0])
    assert [m.text for m in labels] == ['vehicle_1', 'sign_3']
    c = cubes[0]
    assert c.type == Marker.CUBE and c.header.frame_id == 'map'
    assert (c.pose.position.x, c.pose.position.y, c.pose.position.z) == \
        pytest.approx((10.0, 2.0, 0.75))
    assert (c.scale.x, c.scale.y, c.scale.z) == pytest.approx((4.6, 1.9, 1.5))
    assert c.pose.orientation.w == pytest.approx(1.0)
    # twice as far: the same rectangle, scaled
    far = convert.annotation_markers(ann, STAMP, 'cam_optical', 'map', 64, 48, 90.0, depth=2.0)
    assert far[0].points[0].x == pytest.approx(2 * x0) and far[0].points[0].z == 2.0
