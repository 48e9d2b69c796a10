"""ros/cdr_template.py: templates serialise as rclpy does (byte for byte but for padding),
slots land where rclpy puts the fields, and misuse is refused."""
import numpy as np
import pytest
from geometry_msgs.msg import PoseWithCovariance, TransformStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import PointCloud2, PointField
from std_msgs.msg import ColorRGBA
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from ros_sim_bridge.msg import CarlaActor
from ros_sim_bridge.ros.cdr_template import (Run, Slot, SlotPacker, build,
                                            messages_with_elements, ragged, serialize)

from cdr_fillers import both_fillers  # noqa: E402,F401  (the fixture)

# every test with both element fillers (test/cdr_fillers.py)
pytestmark = pytest.mark.usefixtures('both_fillers')


def roundtrip(msg):
    return deserialize_message(serialize_message(msg), type(msg))


def test_constant_messages_equal_rclpy():
    m = Marker(ns='boxes', id=7, type=Marker.CUBE, text='héllo', frame_locked=True)
    m.header.frame_id = 'map'
    m.header.stamp.sec, m.header.stamp.nanosec = 12, 345
    m.pose.position.x, m.pose.orientation.z = 1.5, 0.25
    m.color = ColorRGBA(r=0.1, g=0.2, b=0.3, a=0.8)
    m.points = [m.pose.position, m.pose.position]
    m.mesh_file.data = [1, 2, 3]
    odom = Odometry(child_frame_id='hero')
    odom.pose.covariance[7] = 2.5
    cloud = PointCloud2(height=1, width=2, fields=[PointField(name='x', offset=0, datatype=7,
                                                               count=1)],
                        point_step=4, row_step=8, data=list(range(8)), is_dense=True)
    actor = CarlaActor(id=3, blueprint='vehicle.a', attribute_types=[1, 3],
                       attribute_ids=['role_name', 'colour'], attribute_values=['hero', '1,2,3'],
                       walker_speed=1.25, light_state=5)
    for msg in (m, MarkerArray(markers=[m, m]), odom, cloud, actor):
        name = f'{type(msg).__module__.split(".")[0]}/msg/{type(msg).__name__}'
        ours = serialize(name, msg)
        assert len(ours) == len(serialize_message(msg))
        assert deserialize_message(ours, type(msg)) == roundtrip(msg)


def test_dict_values_take_the_class_defaults():
    """A field left out is the rclpy default (Quaternion.w = 1), not zero."""
    ours = serialize('geometry_msgs/msg/PoseWithCovariance', {'pose': {'position': {'x': 2.0}}})
    msg = deserialize_message(ours, PoseWithCovariance)
    assert msg.pose.orientation.w == 1.0 and msg.pose.position.x == 2.0
    assert msg == roundtrip(_pose_x(2.0))


def _pose_x(x):
    p = PoseWithCovariance()
    p.pose.position.x = x
    return p


def test_slots_are_filled_where_rclpy_puts_the_fields():
    names = ['a', 'bbbbb', 'cc']                 # strings shift the alignment of what follows
    tmpl = build('tf2_msgs/msg/TFMessage', {'transforms': [
        {'header': {'stamp': Slot('stamp'), 'frame_id': 'map'}, 'child_frame_id': n,
         'transform': Slot('tf')} for n in names]})
    values = np.arange(21, dtype=float).reshape(3, 7) + 0.5
    out = deserialize_message(bytes(tmpl.fill(stamp=(5, 7), tf=values)), TFMessage)
    expected = TFMessage()
    for n, row in zip(names, values.tolist()):
        t = TransformStamped(child_frame_id=n)
        t.header.frame_id = 'map'
        t.header.stamp.sec, t.header.stamp.nanosec = 5, 7
        tr, rot = t.transform.translation, t.transform.rotation
        tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w = row
        expected.transforms.append(t)
    assert out == expected
    # fill_rows: one call, the same messages as the rows of one array
    rows = tmpl.fill_rows(2, stamp=np.array([[[5, 7]], [[6, 8]]]), tf=np.stack([values,
                                                                                values * 2]))
    assert rows.dtype == np.uint8 and rows.shape == (2, len(tmpl))
    assert [r.tobytes() for r in rows] == [bytes(tmpl.fill(stamp=(5, 7), tf=values)),
                                           bytes(tmpl.fill(stamp=(6, 8), tf=values * 2))]


def test_primitive_slots_of_every_size():
    tmpl = build('ros_sim_bridge/msg/CarlaActor', {
        'blueprint': 'x', 'id': Slot('id'), 'type': Slot('type'), 'walker_speed': Slot('speed'),
        'has_bounding_box': Slot('box'), 'spawn_time': Slot('t')})
    msg = deserialize_message(bytes(tmpl.fill(id=70000, type=3, speed=2.5, box=1, t=1.25)),
                              CarlaActor)
    assert (msg.id, msg.type, msg.walker_speed, msg.has_bounding_box, msg.spawn_time,
            msg.blueprint) == (70000, 3, 2.5, True, 1.25, 'x')


def test_slot_packer_gives_the_bytes_of_fill():
    # SlotPacker (struct, one pack per run of adjacent slot elements) = fill (numpy views):
    # slots of every size, slots interleaved in the message, a slot of several rows
    names = ['a', 'bbbbb', 'cc']
    tmpl = build('tf2_msgs/msg/TFMessage', {'transforms': [
        {'header': {'stamp': Slot('stamp'), 'frame_id': 'map'}, 'child_frame_id': n,
         'transform': Slot('tf')} for n in names]})
    values = np.arange(21, dtype=float).reshape(3, 7) + 0.5
    assert tmpl.packer().fill(stamp=(5, 7), tf=values.reshape(-1).tolist()) == \
        bytes(tmpl.fill(stamp=(5, 7), tf=values))
    assert tmpl.packer() is tmpl.packer()
    actor = build('ros_sim_bridge/msg/CarlaActor', {
        'blueprint': 'x', 'id': Slot('id'), 'type': Slot('type'), 'walker_speed': Slot('speed'),
        'has_bounding_box': Slot('box'), 'spawn_time': Slot('t')})
    one = dict(id=70000, type=3, speed=2.5, box=1, t=1.25)
    assert actor.packer().fill(**{k: (v,) for k, v in one.items()}) == \
        bytes(actor.fill(**one))
    # one element; only some slots (the others keep the template's bytes, the bytes between
    # the packed ones as well); a slot given a count that does not divide its size
    zero = dict(id=0, type=0, speed=0.0, box=0, t=0.0)
    assert SlotPacker(actor, ('t',)).fill(t=(1.25,)) == bytes(actor.fill(**{**zero, 't': 1.25}))
    some = SlotPacker(actor, ('id', 'speed')).fill(id=(70000,), speed=(2.5,))
    assert some == bytes(actor.fill(**{**zero, 'id': 70000, 'speed': 2.5}))
    with pytest.raises(ValueError, match="slot 'tf' holds 21 values, not 2"):
        tmpl.packer().fill(stamp=(5, 7), tf=(1.0, 2.0))


def test_misuse_is_refused():
    with pytest.raises(KeyError, match='no field'):
        build('std_msgs/msg/ColorRGBA', {'alpha': 1.0})
    with pytest.raises(TypeError, match='mixes primitive sizes'):
        build('ros_sim_bridge/msg/CarlaVehicleControlList', {'controls': [Slot('c')]})
    with pytest.raises(TypeError, match='a slot holds primitives'):
        build('nav_msgs/msg/Odometry', {'header': Slot('h')})
    with pytest.raises(TypeError, match='different shapes'):
        build('geometry_msgs/msg/Pose', {'position': Slot('v'), 'orientation': Slot('v')})
    tmpl = build('rosgraph_msgs/msg/Clock', {'clock': Slot('stamp')})
    with pytest.raises(KeyError):
        tmpl.fill()
    with pytest.raises(ValueError, match='slots'):
        serialize('rosgraph_msgs/msg/Clock', {'clock': Slot('stamp')})


def test_elements_of_varying_shape_appended_at_every_phase():
    """A MarkerArray of markers whose texts and point counts shift each next marker to another
    offset mod 8: element templates chosen by phase give rclpy's message."""
    want, items = MarkerArray(), []
    cache = {}
    for i, (text, k) in enumerate([('a', 0), ('bbbbb', 3), ('', 1), ('cc', 2), ('dddddd', 0),
                                   ('eee', 5), ('ffff', 1), ('g' * 7, 4)]):
        m = Marker(ns='n' * i, id=i, type=Marker.TEXT_VIEW_FACING, text=text)
        m.header.frame_id, m.header.stamp.sec = 'map', 100 + i
        m.pose.position.x, m.pose.orientation.w = 0.5 * i, 1.0
        m.points = [m.pose.position] * k
        m.color.a = 0.25 * (i % 4)
        want.markers.append(m)

        def template_at(phase, i=i, text=text, k=k):
            key = (i, phase)
            if key not in cache:
                cache[key] = build('visualization_msgs/msg/Marker', {
                    'header': {'stamp': Slot('stamp'), 'frame_id': 'map'}, 'ns': 'n' * i,
                    'id': Slot('id'), 'type': Marker.TEXT_VIEW_FACING, 'pose': Slot('pose'),
                    'color': Slot('color'), 'text': text, 'points': [Slot('points')] * k},
                    phase=phase)
            return cache[key]
        values = dict(stamp=(100 + i, 0), id=i, pose=[0.5 * i, 0, 0, 0, 0, 0, 1.0],
                      color=[0, 0, 0, 0.25 * (i % 4)])
        if k:
            values['points'] = [0.5 * i, 0.0, 0.0]
        items.append((template_at, values, None))
    head = serialize('visualization_msgs/msg/MarkerArray', {'markers': []})
    ours = bytes(messages_with_elements([head], [items])[0])
    assert len(ours) == len(serialize_message(want))
    assert deserialize_message(ours, MarkerArray) == roundtrip(want)
    assert len({phase for _, phase in cache}) >= 3        # elements really did start at odd places

    # the same markers in three messages made at once, their values as rows of shared arrays
    # (points ragged: a function of the rows), the elements of a template filled together
    rows = {name: np.array([np.broadcast_to(v.get(name, 0.0), np.shape(items[0][1][name]))
                            for _, v, _ in items]) for name in ('stamp', 'id', 'pose', 'color')}
    rows['points'] = lambda r, k: np.stack([[items[i][1]['points']] * k for i in r])
    parts = [slice(0, 3), slice(3, 3), slice(3, 8)]
    made = messages_with_elements([head] * 3, [[(at, rows, i) for i, (at, _, _) in
                                                enumerate(items)][p] for p in parts])
    for part, msg in zip(parts, made):
        assert deserialize_message(bytes(msg), MarkerArray) == roundtrip(
            MarkerArray(markers=want.markers[part]))
    one = build('visualization_msgs/msg/Marker', {'id': Slot('id')}, phase=4)
    assert [r.tobytes() for r in one.fill_rows(2, id=[[[1]], [[2]]])] == \
        [bytes(one.fill(id=1)), bytes(one.fill(id=2))]


def test_byte_fields_serialise_as_rclpy():
    """A ``byte`` field holds a 1-byte ``bytes`` in rclpy (DiagnosticStatus.level): the bag
    writer's write_msg serialises such messages here."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    status = DiagnosticStatus(level=DiagnosticStatus.ERROR, name='ibeo: device 10',
                              message='ok', hardware_id='ibeo device 1',
                              values=[KeyValue(key='state', value='0x0000')])
    array = DiagnosticArray(status=[status, DiagnosticStatus(level=DiagnosticStatus.WARN)])
    array.header.stamp.sec = 7
    data = serialize('diagnostic_msgs/msg/DiagnosticArray', array)
    assert deserialize_message(data, DiagnosticArray) == array
    assert len(data) == len(serialize_message(array))


@pytest.mark.parametrize('text', ['', 'a', '12 car', 'héllo wörld', 'x' * 37])
def test_text_slot_bytes_equal_rclpy_for_each_phase(text):
    """A TextSlot string: its count and NUL from the template, its bytes filled per message;
    the message is rclpy's for the same text, alone and as a sequence element at every phase
    (the strings of the same length share one template)."""
    from ros_sim_bridge.ros.cdr_template import TextSlot, ragged
    raw = text.encode()
    tmpl = build('visualization_msgs/msg/Marker', {'ns': 'labels', 'id': Slot('id'),
                                                   'text': TextSlot('text', len(raw))})
    cdr = bytes(tmpl.fill(id=42, text=np.frombuffer(raw, np.uint8)[:, None]))
    want = Marker(ns='labels', id=42, text=text)
    assert deserialize_message(cdr, Marker) == want
    assert len(cdr) == len(serialize_message(want))
    other = 'ab'.encode()       # a string of another length before: every phase in turn
    flat = np.frombuffer(raw + other, np.uint8)[:, None]
    starts = np.array([0, len(raw)])
    for lead in range(8):
        def at(phase, n=len(raw)):
            return build('visualization_msgs/msg/Marker', {
                'ns': 'labels', 'id': Slot('id'), 'text': TextSlot('text', n)}, phase=phase)
        head = serialize('visualization_msgs/msg/MarkerArray', {'markers': []})
        pre = [Marker(ns='p' * lead)] if lead else []
        values = {'id': np.array([1, 2]), 'text': ragged(flat, starts)}
        items = [(lambda phase: build('visualization_msgs/msg/Marker', {'ns': 'p' * lead},
                                      phase=phase), {}, None)] if lead else []
        items += [(at, values, 0), (lambda phase: at(phase, len(other)), values, 1)]
        got, = messages_with_elements([head], [items])
        back = deserialize_message(bytes(got), MarkerArray)
        assert back == MarkerArray(markers=pre + [Marker(ns='labels', id=1, text=text),
                                                  Marker(ns='labels', id=2, text='ab')])


def test_text_slot_only_on_strings():
    from ros_sim_bridge.ros.cdr_template import TextSlot
    with pytest.raises(TypeError, match='not a string'):
        build('visualization_msgs/msg/Marker', {'id': TextSlot('t', 3)})


PACKAGES = ('builtin_interfaces', 'std_msgs', 'geometry_msgs', 'sensor_msgs', 'nav_msgs',
            'visualization_msgs', 'diagnostic_msgs', 'tf2_msgs', 'ros_sim_bridge')


def described_types() -> list:
    """Every message type of PACKAGES with a type description (rosidl's JSON)."""
    import os
    from pathlib import Path
    names = set()
    for prefix in os.environ['AMENT_PREFIX_PATH'].split(os.pathsep):
        for pkg in PACKAGES:
            names |= {f'{pkg}/msg/{p.stem}' for p in (Path(prefix) / 'share' / pkg / 'msg')
                      .glob('*.json') if (p.with_suffix('.msg')).exists()}
    return sorted(names)


def test_type_descriptions_give_the_fields_types_and_defaults_of_the_rclpy_classes():
    # templates take field types and defaults from the JSON type descriptions rosidl installs
    # (no message package imported at start-up): the same as the classes' for every type,
    # and the default message of each the bytes of rclpy's default instance
    from ros_sim_bridge.ros import cdr_template as ct
    types = described_types()
    assert len(types) > 150 and 'visualization_msgs/msg/Marker' in types
    for name in types:
        fields = ct._described_fields(name)
        assert fields is not None, name
        cls = ct.message_class(name)
        if not cls.SLOT_TYPES:             # an empty message: rosidl's one byte, as rclpy's
            assert [n for n, _, _ in fields] == ['structure_needs_at_least_one_member']
            assert serialize(name, {}) == serialize_message(cls())[:5]
        else:
            assert [(n, t) for n, t, _ in fields] == list(zip(cls.get_fields_and_field_types(),
                                                            cls.SLOT_TYPES)), name
        default = serialize(name, {})                  # rclpy's padding is not zeroed:
        assert default == serialize(name, cls()), name   # its values through the same types
        assert deserialize_message(default, cls) == cls(), name


def test_runs_of_elements_without_an_8_byte_field_follow_their_phases():
    """Elements whose end phase depends on where they start (KeyValue: two strings, no 8-byte
    field) in Runs, with items between and a Run sliced: the phases are followed element by
    element, and the messages are rclpy's."""
    from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
    from ros_sim_bridge.ros.cdr_template import Run, TextSlot, ragged
    keys = ['a', 'bb', 'ccc', '', 'ddddd', 'ee', 'f' * 9]
    raw = [k.encode() for k in keys]
    lengths = np.array([len(r) for r in raw])
    values = {'text': ragged(np.frombuffer(b''.join(raw), np.uint8)[:, None],
                             np.cumsum(lengths) - lengths)}
    cache = {}

    def at(n):
        def template_at(phase):
            if (n, phase) not in cache:
                cache[(n, phase)] = build('diagnostic_msgs/msg/KeyValue',
                                          {'key': TextSlot('text', n), 'value': 'v' * n},
                                          phase=phase)
            return cache[(n, phase)]
        return template_at
    sizes = sorted(set(lengths.tolist()))
    run = Run([at(n) for n in sizes], [sizes.index(n) for n in lengths.tolist()], values)
    fixed = (at(3), {'text': np.frombuffer(b'xyz', np.uint8)[:, None]}, None)
    head = serialize('diagnostic_msgs/msg/DiagnosticStatus', {'name': 'n', 'values': []})
    made = messages_with_elements([head, head], [[run[:4], fixed, run[4:]], [[], run[2:5]]])
    want = [DiagnosticStatus(name='n', values=[KeyValue(key=k, value='v' * len(k)) for k in
                                               keys[:4] + ['xyz'] + keys[4:]]),
            DiagnosticStatus(name='n', values=[KeyValue(key=k, value='v' * len(k))
                                               for k in keys[2:5]])]
    for got, msg in zip(made, want):                 # (rclpy's padding is not zeroed)
        assert len(got) == len(serialize_message(msg))
        assert deserialize_message(bytes(got), DiagnosticStatus) == msg
    assert len({phase for _, phase in cache}) >= 3


def test_values_short_of_the_rows_are_refused_as_numpy_refuses_them():
    """Rows beyond a slot's values (a Run's rows, a ragged slot's points) raise IndexError with
    either filler: the compiled one never reads past an array."""
    cache = {}

    def template_at(phase):
        if phase not in cache:
            cache[phase] = build('visualization_msgs/msg/Marker', {
                'id': Slot('id'), 'points': [Slot('points')] * 2}, phase=phase)
        return cache[phase]
    head = serialize('visualization_msgs/msg/MarkerArray', {'markers': []})
    three = np.zeros(3, np.intp)
    short_rows = Run([template_at], three, {'id': np.arange(2), 'points': np.zeros((3, 2, 3))})
    with pytest.raises(IndexError):
        messages_with_elements([head], [[short_rows]])
    short_points = Run([template_at], three, {'id': np.arange(3),
                                              'points': ragged(np.ones((5, 3)), [0, 2, 4])})
    with pytest.raises(IndexError):                  # the third marker's 2 points: 1 is left
        messages_with_elements([head], [[short_points]])
    enough = Run([template_at], three, {'id': np.arange(3),
                                        'points': ragged(np.ones((6, 3)), [0, 2, 4])})
    got = deserialize_message(bytes(messages_with_elements([head], [[enough]])[0]), MarkerArray)
    assert [m.id for m in got.markers] == [0, 1, 2]
    assert all(p.x == 1.0 for m in got.markers for p in m.points)


def test_values_of_another_width_and_short_heads_are_refused():
    """A ragged slot's values of another width (x, y for a Point's x, y, z; a flat list of
    numbers) raise ValueError with either filler (numpy's shape mismatch; the compiled one
    leaves such values to it), and so does a head without its count."""
    def template_at(phase):
        return build('visualization_msgs/msg/Marker', {'points': [Slot('points')] * 2},
                     phase=phase)
    head = serialize('visualization_msgs/msg/MarkerArray', {'markers': []})
    one = np.zeros(1, np.intp)
    for flat, starts in ((np.ones((2, 2)), [0]), (np.ones(6), [0])):
        with pytest.raises(ValueError):
            messages_with_elements([head], [[Run([template_at], one, {'points': ragged(
                flat, starts)})]])
    with pytest.raises(ValueError, match='head'):
        messages_with_elements([head[:6]], [[]])


def test_the_compiled_filler_fills_plain_values_itself(monkeypatch):
    """With the compiled filler, rows of values and ragged values never go through numpy's
    assignment (which would hide a filler that refuses everything)."""
    from ros_sim_bridge.ros import cdr_native, cdr_template
    if not cdr_native.AVAILABLE:
        pytest.skip('the compiled filler is not built here')
    monkeypatch.setattr(cdr_template, 'NATIVE', True)

    def numpy_path(*args, **kwargs):
        raise AssertionError('a slot went through numpy')
    monkeypatch.setattr(cdr_template, '_fill_run', numpy_path)

    def template_at(phase):
        return build('visualization_msgs/msg/Marker', {
            'id': Slot('id'), 'pose': Slot('pose'), 'color': Slot('color'),
            'points': [Slot('points')] * 3}, phase=phase)
    head = serialize('visualization_msgs/msg/MarkerArray', {'markers': []})
    n = 5
    run = Run([template_at], np.zeros(n, np.intp), {
        'id': np.arange(n), 'pose': np.tile([1.0, 2, 3, 0, 0, 0, 1], (n, 1)),
        'color': np.broadcast_to(np.float32([0.5, 0.5, 0.5, 1]), (n, 4)),
        'points': ragged(np.arange(3 * 3 * n, dtype=np.float64).reshape(-1, 3),
                         np.arange(n) * 3)})
    got = deserialize_message(bytes(messages_with_elements([head], [[run]])[0]), MarkerArray)
    assert [m.id for m in got.markers] == list(range(n))
    assert [p.x for p in got.markers[1].points] == [9.0, 12.0, 15.0]
    assert got.markers[4].pose.position.y == 2.0 and got.markers[2].color.r == 0.5


def test_small_unique_is_numpys_unique_with_inverse():
    """small_unique: np.unique(values, return_inverse=True) (the values' dtype, intp indices)
    by its table of a small range, its one-value shortcut and its np.unique of a wide range."""
    from ros_sim_bridge.ros.cdr_template import small_unique
    rng = np.random.default_rng(3)
    cases = [rng.integers(6, 16, 1000), rng.integers(0, 300, 1000).astype(np.uint16),
             rng.integers(0, 8, 50).astype(np.uint8), np.full(20, 7, np.int32),
             np.array([5]), rng.integers(0, 2 ** 40, 100), np.array([0, 2 ** 20, 3], np.intp),
             np.array([[3, 1], [1, 9]], np.uint32), np.array([4, 2, 4], np.int8)]
    for values in cases:
        uniq, inverse = small_unique(values)
        want, want_inverse = np.unique(values, return_inverse=True)
        assert uniq.dtype == values.dtype and inverse.dtype == np.intp
        assert uniq.tolist() == want.tolist()
        assert inverse.tolist() == want_inverse.reshape(-1).tolist()
    uniq, inverse = small_unique(np.zeros(0, np.uint8))
    assert len(uniq) == 0 and inverse.dtype == np.intp and len(inverse) == 0
