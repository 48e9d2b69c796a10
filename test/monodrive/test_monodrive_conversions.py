"""monoDrive conversions that need no node, read back from their CDR bytes with rclpy: State
boxes as markers and camera annotations as markers."""
import json
import math

import pytest
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.monodrive.codec import payloads
from ros_sim_bridge.monodrive.ros import conversions as convert

STAMP = Time(sec=5, nanosec=250)


def markers(raw: bytes) -> list:
    return deserialize_message(raw, MarkerArray).markers


# monoDrive's State sensor documentation ("Raw Output"): a traffic cone and a compact car, their
# poses and oriented boxes as the simulator sends them (world cm, Unreal axes)
DOC_STATE = json.dumps({'frame': {
    'objects': [{'name': 'Misc_TrafficCone_2', 'tags': ['cone'], 'odometry': {
        'pose': {'orientation': {'w': 1.0, 'x': 0.0, 'y': 0.0, 'z': 0.0},
                 'position': {'x': 12200.0, 'y': 3710.0, 'z': 10.0}}},
        'oriented_bounding_box': [{
            'center': {'x': 12199.9521484375, 'y': 3710.02758789062, 'z': 37.2839050292969},
            'extents': {'x': 32.3424224853516, 'y': 32.3816871643066, 'z': 64.438591003418},
            'name': 'None', 'orientation': {'w': 1.0, 'x': 0.0, 'y': 0.0, 'z': 0.0},
            'scale': {'x': 1.0, 'y': 1.0, 'z': 1.0}}]}],
    'vehicles': [{'state': {'name': 'compact_monoDrive_01_2', 'tags': ['vehicle', 'ego'],
                            'odometry': {'pose': {
        'orientation': {'w': 0.0343129225075245, 'x': -0.000261345121543854,
                        'y': -0.0231100562959909, 'z': 0.999143958091736},
        'position': {'x': 8302.064453125, 'y': 4282.83154296875, 'z': 6.68744659423828}}},
        'oriented_bounding_box': [{
            'center': {'x': 8301.8271484375, 'y': 4278.1474609375, 'z': 96.9822463989258},
            'extents': {'x': 180.120330810547, 'y': 141.698760986328, 'z': 415.024993896484},
            'name': 'Body', 'orientation': {'w': 0.508013129234314, 'x': 0.53005838394165,
                                            'y': 0.467878460884094, 'z': 0.49198642373085},
            'scale': {'x': 1.0, 'y': 1.0, 'z': 1.0}}]}}]},
    'game_time': 1.01402580738068, 'sample_count': 1, 'time': 1593614676}).encode()


def test_state_boxes_are_world_boxes_with_full_sizes():
    """The documentation's cone (at 12200, 3710, 10 cm) has its box centre at (12199.95,
    3710.03, 37.28) cm: in the map at (121.9995, −37.1003, 0.3728) m, not composed with the
    cone's pose again; the car's box keeps its own orientation (Unreal x, y, z, w → REP-103
    w, −x, y, −z) and centre; extents are full sizes (0.32 × 0.32 × 0.64 m cone, car
    1.80 × 1.42 × 4.15 m along the box's axes)."""
    frame = payloads.decode_state(DOC_STATE)
    assert frame.problems == []
    car, cone = markers(convert.box_markers(convert.state_rows(frame), STAMP, 'map'))
    assert (cone.id, cone.text, cone.header.frame_id) == (16, 'Misc_TrafficCone_2', 'map')
    p = cone.pose.position
    assert (p.x, p.y, p.z) == pytest.approx((121.999521484375, -37.1002758789062,
                                             0.372839050292969), abs=1e-9)
    q = cone.pose.orientation
    assert (q.w, q.x, q.y, q.z) == (1.0, 0.0, 0.0, 0.0)
    assert (cone.scale.x, cone.scale.y, cone.scale.z) == pytest.approx(
        (0.323424224853516, 0.323816871643066, 0.64438591003418), abs=1e-9)
    p = car.pose.position
    assert (car.id, car.text) == (0, 'compact_monoDrive_01_2')
    assert (p.x, p.y, p.z) == pytest.approx((83.018271484375, -42.781474609375,
                                             0.969822463989258), abs=1e-9)
    n = math.sqrt(0.508013129234314 ** 2 + 0.53005838394165 ** 2 + 0.467878460884094 ** 2
                  + 0.49198642373085 ** 2)
    q = car.pose.orientation
    assert (q.w, q.x, q.y, q.z) == pytest.approx(
        (0.508013129234314 / n, -0.53005838394165 / n, 0.467878460884094 / n,
         -0.49198642373085 / n), abs=1e-12)
    assert (car.scale.x, car.scale.y, car.scale.z) == pytest.approx(
        (1.80120330810547, 1.41698760986328, 4.15024993896484), abs=1e-9)
    assert (car.color.r, car.color.g, car.color.b, car.color.a) == pytest.approx(
        (0.2, 0.8, 0.2, 0.6))                        # the ego's colour
    assert (car.lifetime.sec, car.lifetime.nanosec) == (0, 500_000_000)


def test_state_boxes_default_and_refused():
    """A vehicle without boxes gets the 4.5 × 1.9 × 1.5 m default box on its pose (1, 2) m,
    75 cm up; a box with a non-finite or missing centre is left out and reported, the
    vehicle's other boxes kept; centre and extents may be arrays."""
    state = {'frame': {'vehicles': [
        {'state': {'name': 'car_2', 'odometry': {'pose': {
            'position': {'x': 100.0, 'y': -200.0, 'z': 0.0},
            'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}}}}},
        {'state': {'name': 'car_3', 'odometry': {'pose': {
            'position': {'x': 0.0, 'y': 0.0, 'z': 0.0},
            'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}}},
            'oriented_bounding_box': [
                {'center': {'x': 1e400, 'y': 0, 'z': 0}, 'extents': {'x': 1, 'y': 1, 'z': 1}},
                {'extents': {'x': 1, 'y': 1, 'z': 1}},
                {'center': [500, 100, 50], 'extents': [200, 100, 80]}]}}]}}
    frame = payloads.decode_state(json.dumps(state).replace('Infinity', '1e400').encode())
    assert [e.field for e in frame.problems] == [
        'frame.vehicles[1].state.oriented_bounding_box[0].center',
        'frame.vehicles[1].state.oriented_bounding_box[1].center']
    d, box = markers(convert.box_markers(convert.state_rows(frame), STAMP, 'map'))
    assert (d.pose.position.x, d.pose.position.y, d.pose.position.z) == \
        pytest.approx((1.0, 2.0, 0.75))
    assert (d.scale.x, d.scale.y, d.scale.z) == pytest.approx((4.5, 1.9, 1.5))
    assert (d.color.r, d.color.g, d.color.b) == pytest.approx((0.9, 0.5, 0.1))
    assert (box.id, box.pose.position.x, box.pose.position.y, box.pose.position.z) == \
        pytest.approx((16, 5.0, -1.0, 0.5))
    assert (box.scale.x, box.scale.y, box.scale.z) == pytest.approx((2.0, 1.0, 0.8))
    assert d.header.stamp == STAMP and box.text == 'car_3' and box.lifetime.nanosec == 5e8
    empty = payloads.decode_state(b'{"frame": {"vehicles": []}}')
    assert markers(convert.box_markers(convert.state_rows(empty), STAMP, 'map')) == []


def test_camera_annotation_as_markers():
    """Values by hand: a 64 × 48 camera with a 90° fov has fx = 32 px, centre (32, 24); the
    2-D box x 10…50.5, y 20…44 px drawn 1 m ahead spans x −0.6875…0.578125, y −0.125…0.625 m in
    the optical frame; the oriented box centred at (1000, −200, 75) cm (Unreal) is at
    (10, 2, 0.75) m in the map, its extents [230, 95, 75] cm full sizes: 2.3 × 0.95 × 0.75 m."""
    from ros_sim_bridge.monodrive.codec import annotation
    from test_monodrive_codec import ANNOTATION
    ann = annotation.decode_annotation(ANNOTATION)
    out = markers(convert.AnnotationCdr('cam_optical', 'map', 64, 48, 90.0).markers(ann, STAMP))
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
    assert (c.scale.x, c.scale.y, c.scale.z) == pytest.approx((2.3, 0.95, 0.75))
    assert c.pose.orientation.w == pytest.approx(1.0)
    # twice as far: the same rectangle, scaled
    far = markers(convert.AnnotationCdr('cam_optical', 'map', 64, 48, 90.0, depth=2.0)
                  .markers(ann, STAMP))
    assert far[0].points[0].x == pytest.approx(2 * x0) and far[0].points[0].z == 2.0


def test_annotation_markers_gone_are_deleted():
    """A second annotation without the 3-D box and with one 2-D box: DELETE markers first for
    what the first showed and the second does not (sorted by namespace and id), then the
    second's markers; an empty annotation deletes everything shown."""
    from ros_sim_bridge.monodrive.codec import annotation
    from test_monodrive_codec import ANNOTATION
    cdr = convert.AnnotationCdr('cam_optical', 'map', 64, 48, 90.0)
    first = markers(cdr.markers(annotation.decode_annotation(ANNOTATION), STAMP))
    assert all(m.action == Marker.ADD for m in first) and len(first) == 5
    one = annotation.decode_annotation(
        b'[{"name": "v", "2d_bounding_boxes": [{"name": "b", "2d_bounding_box": [0, 2, 0, 1]}]}]')
    second = markers(cdr.markers(one, Time(sec=6)))
    gone = [(m.ns, m.id, m.header.frame_id, m.header.stamp.sec) for m in second
            if m.action == Marker.DELETE]
    assert gone == [('monodrive_annotation_2d', 1, 'cam_optical', 6),
                    ('monodrive_annotation_3d', 0, 'map', 6),
                    ('monodrive_annotation_labels', 1, 'cam_optical', 6)]
    assert [(m.ns, m.action) for m in second[3:]] == [
        ('monodrive_annotation_2d', Marker.ADD), ('monodrive_annotation_labels', Marker.ADD)]
    empty = annotation.decode_annotation(b'[]')
    assert [(m.ns, m.id, m.action) for m in markers(cdr.markers(empty, STAMP))] == [
        ('monodrive_annotation_2d', 0, Marker.DELETE),
        ('monodrive_annotation_labels', 0, Marker.DELETE)]
