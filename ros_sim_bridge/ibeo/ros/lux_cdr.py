"""ibeo LUX / SICK LD-MRS records (0x2202 scan header, 0x2221 objects, 0x2805 vehicle state)
as CDR bytes: the one conversion of the ``ibeo_lux`` node's topics and of ``ibeo_idc to-bag``.

Each message is a :mod:`ros_sim_bridge.ros.cdr_template` template filled from numpy rows; what
a template bakes in (frame, status and flag names, class names, contour lengths) is its cache
key.  Numbers come from :mod:`ros_sim_bridge.ibeo.codec.units` (ticks and cm → rad and m) and
from :func:`.conversions.cap_objects` (object lists in SI).  Every ``stamp`` is (sec,
nanosec): a receive time or a sensor time, chosen by the caller at publish time.

Object markers (``objects/markers``): oriented boxes, contours, labels
(:class:`~ros_sim_bridge.ros.markers_cdr.MarkerCdr`), velocity arrows, and a DELETE for every
marker the previous array showed and this one does not (:class:`LuxMarkers`).
"""
from __future__ import annotations

import ctypes
from functools import lru_cache
from typing import Optional

import numpy as np
from builtin_interfaces.msg import Duration

from ros_sim_bridge.core.native import address, beside, load_kernel
from ros_sim_bridge.ibeo.codec import objects as lux_objects
from ros_sim_bridge.ibeo.codec.contours import Contours
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ros.cdr_template import (ElementTemplates, Run, Slot, TextSlot, build,
                                             messages_with_elements, ragged, small_unique)
from ros_sim_bridge.ros.markers_cdr import duration, stamp_rows
from ros_sim_bridge.ros.markers_cdr import EMPTY_ARRAY, MarkerCdr, marker_arrays
from ros_sim_bridge.ros.markers_cdr import TYPE_NAME as MARKER_ARRAY
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage

_STAMP = Slot('stamp')
SCAN_INFO = 'ros_sim_bridge/msg/LuxScanInfo'
OBJECT_LIST = 'ros_sim_bridge/msg/LuxObjectList'
VEHICLE_STATE = 'ros_sim_bridge/msg/LuxVehicleState'
TWIST = 'geometry_msgs/msg/TwistStamped'
_MARKER = 'visualization_msgs/msg/Marker'
# visualization_msgs/Marker types and actions
_ARROW, _LINE_STRIP, _TEXT, _DELETE, _ADD = 0, 4, 9, 2, 0

# LuxScanInfo's float64 fields in message order (one slot 'f8')
_SCAN_F8 = ('sync_phase_offset', 'scan_start_sensor_time', 'scan_duration',
            'sensor_time_offset', 'start_angle', 'end_angle', 'mounting_yaw', 'mounting_pitch',
            'mounting_roll', 'mounting_x', 'mounting_y', 'mounting_z', 'beam_tilt')
_SCAN_U16 = ('scan_number', 'angle_ticks_per_rotation', 'scan_points')
_SCAN_MOUNTING = ('mounting_yaw', 'mounting_pitch', 'mounting_roll', 'mounting_x', 'mounting_y',
                  'mounting_z')

# LuxObject fields ← OBJECT_DTYPE fields (in SI after cap_objects), grouped by slot type
_OBJECT_U16 = (('id', 'id'), ('age', 'age'), ('prediction_age', 'prediction_age'),
               ('classification', 'classification'),
               ('classification_age', 'classification_age'),
               ('classification_certainty', 'classification_certainty'))
_OBJECT_F8 = (
    ('relative_time', 'relative_time'),
    ('reference_x', 'reference_x'), ('reference_y', 'reference_y'),
    ('reference_sigma_x', 'reference_sigma_x'), ('reference_sigma_y', 'reference_sigma_y'),
    ('closest_x', 'closest_x'), ('closest_y', 'closest_y'),
    ('bounding_box_center_x', 'bbox_center_x'), ('bounding_box_center_y', 'bbox_center_y'),
    ('bounding_box_size_x', 'bbox_size_x'), ('bounding_box_size_y', 'bbox_size_y'),
    ('box_center_x', 'box_center_x'), ('box_center_y', 'box_center_y'),
    ('box_size_x', 'box_size_x'), ('box_size_y', 'box_size_y'),
    ('box_orientation', 'box_orientation'),
    ('absolute_velocity_x', 'abs_velocity_x'), ('absolute_velocity_y', 'abs_velocity_y'),
    ('absolute_velocity_sigma_x', 'abs_velocity_sigma_x'),
    ('absolute_velocity_sigma_y', 'abs_velocity_sigma_y'),
    ('relative_velocity_x', 'rel_velocity_x'), ('relative_velocity_y', 'rel_velocity_y'))
_OBJECT_BOOL = (('absolute_velocity_valid', 'abs_velocity_valid'),
                ('relative_velocity_valid', 'rel_velocity_valid'))


def _object_slots() -> tuple:
    """LuxObject's number slots: (slot name, its fields, their OBJECT_DTYPE fields, the
    type) for each run of fields (in message order) whose sources are adjacent fields of one
    type in OBJECT_DTYPE, so that each slot's values are a view of the objects, not a
    copy."""
    dtype, out = lux_objects.OBJECT_DTYPE, []
    for kind, pairs, field in (('u16', _OBJECT_U16, '<u2'), ('f8', _OBJECT_F8, '<f8'),
                               ('b', _OBJECT_BOOL, '?')):
        field, end = np.dtype(field), None
        for dst, src in pairs:
            t, at = dtype.fields[src][:2]
            if end is None or t != field or at != end:
                out.append((f'{kind}_{len(out)}', [], [], field))
            out[-1][1].append(dst)
            out[-1][2].append(src)
            end = at + t.itemsize if t == field else None
    return tuple((name, tuple(dst), tuple(src), field) for name, dst, src, field in out)


_OBJECT_SLOTS = _object_slots()
_VEHICLE_F8 = ('longitudinal_velocity', 'steering_wheel_angle', 'front_wheel_angle', 'x', 'y',
               'course_angle', 'time_difference', 'x_difference', 'y_difference',
               'heading_difference', 'yaw_rate')

#: Marker namespaces of objects/markers (id = object id in each)
MARKER_NAMESPACES = ('boxes', 'contours', 'labels', 'velocities')

_CLASS_COLORS = {  # r, g, b
    0: (0.6, 0.6, 0.6), 1: (0.8, 0.8, 0.3), 2: (0.8, 0.5, 0.2), 3: (1.0, 0.2, 0.2),
    4: (0.2, 0.8, 1.0), 5: (0.2, 0.4, 1.0), 6: (0.6, 0.2, 1.0), 12: (0.2, 1.0, 0.6),
}


def _color_table(alpha: float) -> np.ndarray:
    """RGBA (float32, as ColorRGBA holds it) of classes 0..255 (white for classes without a
    colour, and at 255 for every class from there on)."""
    table = np.ones((256, 4), np.float32)
    for c, rgb in _CLASS_COLORS.items():
        table[c, :3] = rgb
    table[:, 3] = alpha
    return table


_COLOR_TABLES: dict = {}


def class_colors(classification: np.ndarray, alpha: float) -> np.ndarray:
    """(n, 4) RGBA (float32) of each object's class (white for classes without a colour)."""
    table = _COLOR_TABLES.get(alpha)
    if table is None:
        table = _COLOR_TABLES[alpha] = _color_table(alpha)
    classification = np.asarray(classification)
    if classification.dtype.kind == 'u':      # row 255 for every class from 255 on
        return np.take(table, classification, axis=0, mode='clip')
    return table[np.clip(classification, 0, 255) + 255 * (classification < 0)]


def _header(frame: str) -> dict:
    return {'stamp': _STAMP, 'frame_id': frame}


def _column(values, dtype) -> np.ndarray:
    return np.asarray(values, dtype)[:, None]


class _Templates:
    """Whole-message templates by key (a bounded cache: keys carry names from the wire)."""

    def __init__(self, max_templates: int = 1024):
        self._cache: dict = {}
        self._max = max_templates

    def get(self, key, type_name: str, value):
        tmpl = self._cache.get(key)
        if tmpl is None:
            if len(self._cache) >= self._max:
                self._cache.clear()
            tmpl = self._cache[key] = build(type_name, value())
        return tmpl


_TEMPLATES = _Templates()
_OBJECTS = ElementTemplates('ros_sim_bridge/msg/LuxObject')
_MARKERS = ElementTemplates(_MARKER)


def scan_info(scan, stamp, frame: str, *, device_id: int = 0,
              scan_points: Optional[int] = None, published_points: int = 0,
              eight_layer: bool = False, beam_tilt: float = 0.0,
              sensor_time_offset: float = 0.0) -> CdrMessage:
    """LuxScanInfo of a 0x2202 scan header: ticks → rad (``units.ticks_to_rad``), cm → m,
    sync phase 409.6 ns counts → s; ``beam_tilt`` only for 8-layer geometry.  What a sensor
    keeps from scan to scan (device id, ticks per rotation, mounting, status, flags) is
    baked into the template, its key; the rest is packed per scan."""
    eight = bool(eight_layer)
    tpr = scan.ticks_per_rotation
    mounting = (scan.mounting_yaw_ticks, scan.mounting_pitch_ticks, scan.mounting_roll_ticks,
                scan.mounting_x_cm, scan.mounting_y_cm, scan.mounting_z_cm)
    packer = _TEMPLATES.get(
        ('scan_info', frame, scan.scanner_status, scan.flags, eight, device_id, tpr, mounting),
        SCAN_INFO, lambda: _scan_info_value(scan, frame, eight, int(device_id))).packer()
    start, end = scan.start_ntp, scan.end_ntp
    return CdrMessage(SCAN_INFO, (packer.fill(    # a few numbers: by struct
        stamp=stamp, u32=(int(published_points),), u64=(int(start), int(end)),
        f8=(float(scan.sync_phase_offset * units.SYNC_PHASE_TO_SI), start / 4294967296.0,
            float(scan.duration_s), float(sensor_time_offset),
            float(units.ticks_to_rad(scan.start_angle_ticks, tpr)),
            float(units.ticks_to_rad(scan.end_angle_ticks, tpr)),
            float(beam_tilt) if eight else 0.0),
        u16=(int(scan.scan_number), len(scan.points) if scan_points is None
             else int(scan_points))),))


def _scan_info_value(scan, frame: str, eight: bool, device_id: int) -> dict:
    """The value tree of :func:`scan_info`'s template: the numbers in its key baked in, the
    others slots (``f8``, ``u16``, ``u32``, ``u64`` in message order)."""
    tpr = scan.ticks_per_rotation
    mount = [float(units.ticks_to_rad(t, tpr)) for t in (
        scan.mounting_yaw_ticks, scan.mounting_pitch_ticks, scan.mounting_roll_ticks)]
    mount += [float(cm * units.CM) for cm in (scan.mounting_x_cm, scan.mounting_y_cm,
                                              scan.mounting_z_cm)]
    baked = {'angle_ticks_per_rotation': int(tpr), **dict(zip(_SCAN_MOUNTING, mount))}
    return {
        'header': _header(frame), 'device_id': device_id,
        'scanner_status': int(scan.scanner_status),
        'scanner_status_names': list(scan.status_names),
        'scan_start_ntp': Slot('u64'), 'scan_end_ntp': Slot('u64'),
        'published_points': Slot('u32'), 'flags': int(scan.flags),
        'flag_names': list(scan.flag_names), 'mirror_side': int(scan.mirror_side),
        'upside_down': bool(scan.upside_down), 'eight_layer': eight,
        **{n: baked.get(n, Slot('f8')) for n in _SCAN_F8},
        **{n: baked.get(n, Slot('u16')) for n in _SCAN_U16}}


def contours_xyz(contours) -> tuple:
    """(k, 2) contours as one (K, 3) float64 array (z = 0) and each one's k (decoded
    :class:`~ros_sim_bridge.ibeo.codec.contours.Contours`: from their one array, no loop over
    the objects; else any sequence of arrays of x, y pairs)."""
    if isinstance(contours, Contours):
        lengths = contours.counts.astype(np.intp)
        total = int(lengths.sum())
        xyz = np.empty((total, 3))
        xy = contours.points[:total].reshape(-1, 2)
        if xy.dtype != np.float64:
            xy = xy.astype(np.float64)
        if xy.flags.c_contiguous:                             # x, y as one 16-byte value
            xyz[:, :2].view(np.complex128)[:, 0] = xy.view(np.complex128)[:, 0]
        else:
            xyz[:, :2] = xy
        xyz[:, 2] = 0.0
        return xyz, lengths
    points = [np.asarray(c, np.float64).reshape(-1, 2) for c in contours]
    lengths = np.fromiter(map(len, points), np.intp, len(points))
    xyz = np.zeros((int(lengths.sum()), 3))
    if len(xyz):
        xyz[:, :2] = np.concatenate(points).reshape(-1, 2)
    return xyz, lengths


_POWERS_OF_TEN = 10 ** np.arange(19, dtype=np.int64)


def class_names(classification, name_of=lux_objects.classification_name) -> tuple:
    """The classes of ``classification`` as (distinct class numbers, each object's index in
    them, their names): one name per class, not per object."""
    numbers, index = small_unique(np.asarray(classification).astype(np.int64))
    return numbers, index, [name_of(c) for c in numbers.tolist()]


#: ``LABEL_TEXTS(ids, classes, n, names, name_at, name_len, out, lengths)`` → bytes written
#: (``label_text.c``, addresses as ints); None where the library is missing or the host is
#: big-endian: :func:`id_class_texts` then writes the digits with numpy (the same bytes)
LABEL_TEXTS = load_kernel(beside(__file__, 'libsim_bridge_label_text.so'),
                          'sim_bridge_label_texts', [ctypes.c_void_p, ctypes.c_void_p,
                                                     ctypes.c_int64] + [ctypes.c_void_p] * 5,
                          ctypes.c_int64, abi=1)


def id_class_texts(ids, classification, name_of=lux_objects.classification_name,
                   native: bool = True, classes: Optional[tuple] = None) -> tuple:
    """The label texts ``f'{id} {class name}'`` of objects (ids ≥ 0) as their UTF-8 bytes one
    after another (uint8) and each one's length: in one loop of the compiled kernel, or
    digit by digit and name by name for all objects at once with numpy (no loop over the
    objects); ``classes``: :func:`class_names` of ``classification`` when already made."""
    ids = np.asarray(ids).astype(np.int64).reshape(-1)
    _, index, names = classes or class_names(classification, name_of)
    if len(index) != len(ids) or (len(ids) and int(ids.min()) < 0):
        raise ValueError(f'label texts: {len(ids)} ids (≥ 0) need as many classes, '
                         f'not {len(index)}')
    raw = [name.encode() for name in names]
    pool = np.frombuffer(b''.join(raw), np.uint8)
    size = np.array([len(b) for b in raw], np.intp)
    if LABEL_TEXTS is not None and native and len(ids):
        at = np.ascontiguousarray(np.cumsum(size) - size, np.int64)
        size = np.ascontiguousarray(size, np.int64)
        index = np.ascontiguousarray(index, np.int64)
        text = np.empty(len(ids) * (21 + int(size.max())), np.uint8)
        lengths = np.empty(len(ids), np.int64)
        total = LABEL_TEXTS(address(ids), address(index), len(ids), address(pool),
                            address(at), address(size), address(text), address(lengths))
        return text[:total], lengths
    name_len = size[index] if raw else np.zeros(0, np.intp)
    digits = np.maximum(np.searchsorted(_POWERS_OF_TEN, ids, 'right'), 1)
    lengths = digits + 1 + name_len
    start = np.cumsum(lengths) - lengths
    text = np.empty(int(lengths.sum()), np.uint8)
    last = start + digits - 1                          # the units digit
    rest = ids
    for power in range(int(digits.max()) if len(ids) else 0):
        has = digits > power
        if has.all():
            text[last - power] = rest % 10 + 48
        else:
            text[(last - power)[has]] = rest[has] % 10 + 48
        rest = rest // 10
    text[last + 1] = 32                                # the space
    total = int(name_len.sum())
    if total:
        done = np.cumsum(name_len) - name_len
        within = np.arange(total) - np.repeat(done, name_len)
        text[np.repeat(last + 2, name_len) + within] = pool[
            np.repeat((np.cumsum(size) - size)[index], name_len) + within]
    return text, lengths


def _object_value(name: str, k: int):
    def value():
        return {**{dst: Slot(slot) for slot, fields, _, _ in _OBJECT_SLOTS for dst in fields},
                'classification_name': name, 'contour': [Slot('contour')] * k}
    return value


def object_list(lst, stamp, frame: str, *, device_id: int = 0, contours=None) -> CdrMessage:
    """LuxObjectList of a capped list (:func:`.conversions.cap_objects`, in SI): every object
    from one template per (class name, contour length), the numbers of all objects assigned
    at once; ``contours``: :func:`contours_xyz` of the list when already made."""
    return object_lists([lst], [stamp], frame, [device_id],
                        None if contours is None else [contours])[0]


def object_lists(lists: list, stamps: list, frame: str, device_ids: list,
                 contours: Optional[list] = None) -> list:
    """:func:`object_list` of each of ``lists``, made in one buffer."""
    heads, items = _object_elements(lists, stamps, frame, device_ids, contours)
    return [CdrMessage(OBJECT_LIST, (m,)) for m in messages_with_elements(heads, items)]


def object_list_and_markers(lst, stamp, frame: str, markers: 'LuxMarkers', *,
                            device_id: int = 0, contours=None) -> tuple:
    """(:func:`object_list`, ``markers.update`` (:meth:`LuxMarkers.update`)) of a capped list,
    made in one buffer."""
    if contours is None:
        contours = contours_xyz(lst.contours)
    classes = class_names(lst.objects['classification']) if len(lst.objects) else None
    heads, items = _object_elements([lst], [stamp], frame, [device_id], [contours], [classes])
    objects, array = messages_with_elements(
        heads + [EMPTY_ARRAY], items + [markers.elements(lst, stamp, frame, contours=contours,
                                                         classes=classes)])
    return CdrMessage(OBJECT_LIST, (objects,)), CdrMessage(MARKER_ARRAY, (array,))


def _object_elements(lists: list, stamps: list, frame: str, device_ids: list,
                     contours: Optional[list] = None, classes: Optional[list] = None) -> tuple:
    """The heads and elements (:func:`.cdr_template.messages_with_elements`) of
    :func:`object_lists`; ``contours``, ``classes``: :func:`contours_xyz` and
    :func:`class_names` of each list when already made."""
    head = _TEMPLATES.get(('object_list', frame), OBJECT_LIST,
                          lambda: {'header': _header(frame), 'device_id': Slot('u8'),
                                   'scan_start_ntp': Slot('u64'), 'objects': []})
    heads = [head.fill(stamp=st, u8=int(dev), u64=np.uint64(lst.scan_start_ntp))
             for lst, st, dev in zip(lists, stamps, device_ids)]
    items = []
    for j, lst in enumerate(lists):
        o = lst.objects
        if not len(o):
            items.append([])
            continue
        xyz, lengths = contours[j] if contours is not None else contours_xyz(lst.contours)
        values = {name: _columns(o, src, field) for name, _, src, field in _OBJECT_SLOTS}
        values['contour'] = ragged(xyz, np.cumsum(lengths) - lengths)
        _, cls, names = (classes[j] if classes is not None else None) or \
            class_names(o['classification'])
        top = int(lengths.max()) + 1
        shapes, shape = small_unique(cls * top + lengths)
        items.append([Run([_OBJECTS.at((names[c // top], c % top),
                                       _object_value(names[c // top], c % top))
                           for c in shapes.tolist()], shape, values)])
    return heads, items


@lru_cache(maxsize=None)
def _column_runs(dtype: np.dtype, names: tuple, field: np.dtype) -> tuple:
    """Views of ``dtype`` that take ``names`` (fields of type ``field``) in runs of adjacent
    ones: one (count,) field 'run' each (a field out of line: a run of one); None unless
    every field is of that type."""
    field = np.dtype(field)
    runs = []
    for name in names:
        at = dtype.fields[name][1]
        if dtype.fields[name][0] != field:
            return None
        if runs and runs[-1][0] + field.itemsize * runs[-1][1] == at:
            runs[-1][1] += 1
        else:
            runs.append([at, 1])
    return tuple(np.dtype({'names': ['run'], 'formats': [(field, (k,))], 'offsets': [at],
                           'itemsize': dtype.itemsize}) for at, k in runs)


def _columns(records: np.ndarray, names: tuple, field: np.dtype) -> np.ndarray:
    """(n, len(names)) of the fields ``names`` of ``records`` as ``field`` (bool as uint8),
    the adjacent ones taken as one block (a view of the records where they are one)."""
    runs = _column_runs(records.dtype, names, field) if records.flags.c_contiguous else None
    if runs is None:
        out = np.stack([records[n] for n in names], -1).astype(field)
    elif len(runs) == 1:
        out = records.view(runs[0])['run']
    else:
        out = np.concatenate([records.view(v)['run'] for v in runs], axis=1)
    return out.view(np.uint8) if field == np.bool_ else out


def _arrow_value(frame: str, lifetime: Duration):
    return lambda: {'header': _header(frame), 'ns': 'velocities', 'id': Slot('id'),
                    'type': _ARROW, 'action': _ADD, 'pose': {'orientation': {'w': 1.0}},
                    'scale': {'x': 0.1, 'y': 0.25, 'z': 0.3}, 'color': Slot('color'),
                    'lifetime': lifetime, 'points': [Slot('points')] * 2}


def _strip_value(frame: str, lifetime: Duration, k: int):
    return lambda: {'header': _header(frame), 'ns': 'contours', 'id': Slot('id'),
                    'type': _LINE_STRIP, 'action': _ADD, 'pose': {'orientation': {'w': 1.0}},
                    'scale': {'x': 0.05}, 'color': Slot('color'), 'lifetime': lifetime,
                    'points': [Slot('points')] * k}


def _label_value(frame: str, ns: str, lifetime: Duration, length: int):
    return lambda: {'header': _header(frame), 'ns': ns, 'id': Slot('id'),
                    'type': _TEXT, 'action': _ADD, 'pose': {'position': Slot('position')},
                    'scale': {'z': 0.6}, 'color': {'r': 1.0, 'g': 1.0, 'b': 1.0, 'a': 1.0},
                    'lifetime': lifetime, 'text': TextSlot('text', length)}


def label_items(stamp, frame: str, ns: str, ids, positions, texts=None, *,
                text_bytes: Optional[tuple] = None, lifetime: Optional[Duration] = None
                ) -> Run:
    """White TEXT_VIEW_FACING marker items (:func:`~ros_sim_bridge.ros.markers_cdr.
    marker_arrays`) of ``texts`` at ``positions`` (n, 3), 0.6 m tall, marker ids ``ids``;
    ``stamp`` one (sec, nanosec) or (n, 2) rows; the texts as strings or ``text_bytes``
    (their UTF-8 bytes one after another, each one's length: :func:`id_class_texts`).  One
    template per text length (the texts' bytes are a slot), so the labels of many objects
    are filled together."""
    life = lifetime or duration(0.0)
    if text_bytes is None:
        raw = [t.encode() for t in texts]
        text_bytes = (np.frombuffer(b''.join(raw), np.uint8),
                      np.fromiter(map(len, raw), np.intp, len(raw)))
    flat, lengths = text_bytes
    n = len(lengths)
    values = {'stamp': stamp_rows(stamp, n), 'id': np.asarray(ids).reshape(-1),
              'position': np.asarray(positions, np.float64).reshape(n, 3),
              'text': ragged(np.asarray(flat, np.uint8)[:, None], np.cumsum(lengths) - lengths)}
    key = ('label', frame, ns, life.sec, life.nanosec)
    sizes, shape = small_unique(lengths)
    return Run([_MARKERS.at(key + (k,), _label_value(frame, ns, life, k))
                for k in sizes.tolist()], shape, values)


#: arrow RGBA (float32): relative velocity (orange), absolute (yellow)
_ARROW_COLORS = np.array([[1.0, 0.6, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0]], np.float32)


def _sorted_unique(ids: np.ndarray) -> np.ndarray:
    """``np.unique(ids)``, without sorting ids already in increasing order."""
    return ids if bool((ids[1:] > ids[:-1]).all()) else np.unique(ids)


def _gone(before: np.ndarray, now: np.ndarray) -> np.ndarray:
    """The sorted ids in ``before`` and not in ``now`` (both sorted, unique)."""
    if len(before) == len(now) and np.array_equal(before, now):
        return before[:0]
    return np.setdiff1d(before, now, assume_unique=True)


def _delete_value(frame: str, ns: str):
    return lambda: {'header': _header(frame), 'ns': ns, 'id': Slot('id'), 'action': _DELETE}


class LuxMarkers:
    """Object lists → ``visualization_msgs/MarkerArray`` CDR: boxes (CUBE), contours
    (LINE_STRIP), labels (TEXT), velocities (ARROW: absolute if valid, else relative if valid,
    else none), marker id = object id in each namespace, after a DELETE of each marker the
    previous array showed and this one does not (objects that vanished, a velocity that became
    invalid)."""

    def __init__(self, *, lifetime_s: float = 0.0, box_height: float = 1.5):
        self.lifetime = duration(lifetime_s)
        self.box_height = float(box_height)
        self._cdr = MarkerCdr()
        #: namespace → the sorted ids of the markers the last array added
        self._shown: dict = {}

    @property
    def shown(self) -> set:
        """(namespace, id) of every marker the last array added."""
        return {(ns, i) for ns, ids in self._shown.items() for i in ids.tolist()}

    def update(self, lst, stamp, frame: str, *, contours=None) -> CdrMessage:
        """The markers of a capped list (:func:`.conversions.cap_objects`); ``contours``:
        :func:`contours_xyz` of its contours when already made."""
        return marker_arrays([self.elements(lst, stamp, frame, contours=contours)])[0]

    def elements(self, lst, stamp, frame: str, *, contours=None, classes=None) -> list:
        """The marker elements of :meth:`update` (:func:`~ros_sim_bridge.ros.markers_cdr.
        marker_arrays`), the markers shown now noted; ``classes``: :func:`class_names` of the
        objects' classes when already made."""
        o, m, life, h = lst.objects, self._cdr, self.lifetime, self.box_height
        n = len(o)
        items: list = []
        now: dict = {}
        if n:
            ids = o['id'].astype(np.int32)            # Marker.id (int32); LUX ids are uint16
            cls = o['classification']
            center = np.empty((n, 3))
            center[:, 0], center[:, 1], center[:, 2] = o['box_center_x'], o['box_center_y'], \
                h / 2.0
            size = np.empty((n, 3))
            size[:, 0], size[:, 1], size[:, 2] = o['box_size_x'], o['box_size_y'], h
            items.append(m.boxes(stamp, frame, 'boxes', ids, center, size,
                                 yaw=o['box_orientation'], colors=class_colors(cls, 0.35),
                                 min_size=0.05, lifetime=life))
            items.append(self._strips(stamp, frame, ids, cls, contours if contours is not None
                                      else contours_xyz(lst.contours)))
            center[:, 2] = h + 0.5                    # the labels above the boxes
            items.append(label_items(stamp, frame, 'labels', ids, center,
                                     text_bytes=id_class_texts(ids, cls, classes=classes),
                                     lifetime=self.lifetime))
            every = _sorted_unique(ids)
            now = dict.fromkeys(MARKER_NAMESPACES[:3], every)
            use_abs = o['abs_velocity_valid'] != 0
            moving = use_abs | (o['rel_velocity_valid'] != 0)
            k = int(np.count_nonzero(moving))
            if k:
                pick = slice(None) if k == n else np.flatnonzero(moving)
                use_abs = use_abs[pick]
                points = np.empty((k, 2, 3))
                points[:, 0, 0], points[:, 0, 1] = o['reference_x'][pick], \
                    o['reference_y'][pick]
                points[:, :, 2] = h / 2.0
                for axis, name in ((0, 'x'), (1, 'y')):
                    v = o[f'abs_velocity_{name}'][pick]
                    if not use_abs.all():
                        v = np.where(use_abs, v, o[f'rel_velocity_{name}'][pick])
                    points[:, 1, axis] = points[:, 0, axis] + v
                arrow_ids = ids[pick]
                values = {'stamp': stamp_rows(stamp, k), 'id': arrow_ids,
                          'color': np.take(_ARROW_COLORS, use_abs.view(np.uint8), axis=0),
                          'points': points}
                at = _MARKERS.at(('arrow', frame, life.sec, life.nanosec),
                                 _arrow_value(frame, life))
                items.append(Run([at], np.zeros(k, np.intp), values))
                now['velocities'] = _sorted_unique(arrow_ids)
        none = np.zeros(0, np.int64)
        done: dict = {}         # the namespaces showing the same ids: compared once
        gone = {}
        for ns, ids in self._shown.items():
            later = now.get(ns, none)
            key = (id(ids), id(later))
            if key not in done:
                done[key] = _gone(ids, later)
            gone[ns] = done[key]
        self._shown = now
        return [self._deletes(stamp, frame, gone)] + items

    def _strips(self, stamp, frame: str, ids, cls, contours) -> Run:
        """LINE_STRIP items of the contours ((K, 3) points, lengths), z = 0; a one-point
        contour doubled (a strip needs two points)."""
        xyz, lengths = contours
        n, life = len(ids), self.lifetime
        single = lengths == 1
        if single.any():
            xyz = np.repeat(xyz, np.repeat(np.where(single, 2, 1), lengths), axis=0)
            lengths = np.where(single, 2, lengths)
        values = {'stamp': stamp_rows(stamp, n), 'id': ids, 'color': class_colors(cls, 1.0),
                  'points': ragged(xyz, np.cumsum(lengths) - lengths)}
        sizes, shape = small_unique(lengths)
        return Run([_MARKERS.at(('strip', frame, life.sec, life.nanosec, k),
                                _strip_value(frame, life, k)) for k in sizes.tolist()],
                   shape, values)

    def clear(self, stamp, frame: str) -> CdrMessage:
        """DELETE every marker shown (e.g. when the link drops)."""
        gone, self._shown = self._shown, {}
        return marker_arrays([[self._deletes(stamp, frame, gone)]])[0]

    @staticmethod
    def _deletes(stamp, frame: str, gone: dict) -> Run:
        """DELETE items for namespace → sorted ids, in a stable (sorted) order."""
        spaces = sorted(ns for ns, ids in gone.items() if len(ids))
        ids = np.concatenate([gone[ns] for ns in spaces]) if spaces else np.zeros(0, np.int64)
        values = {'stamp': stamp_rows(stamp, len(ids)),
                  'id': ids.astype(np.int64)}
        return Run([_MARKERS.at(('delete', frame, ns), _delete_value(frame, ns))
                    for ns in spaces], np.repeat(np.arange(len(spaces)),
                                                 [len(gone[ns]) for ns in spaces]), values)


def vehicle_state(s, stamp, frame: str, *, device_id: int = 0) -> CdrMessage:
    """LuxVehicleState of a 0x2805 (:data:`units.VEHICLE_STATE_TO_SI`)."""
    flags, valid = int(s.error_flags), bool(s.valid)

    def value():
        return {'header': _header(frame), 'device_id': Slot('u8'),
                'timestamp_ntp': Slot('u64'), 'scan_number': Slot('u16'),
                'error_flags': flags, 'error_names': list(s.error_names), 'valid': valid,
                **{n: Slot('f8') for n in _VEHICLE_F8}}
    tmpl = _TEMPLATES.get(('vehicle_state', frame, flags, valid), VEHICLE_STATE, value)
    f8 = [float(getattr(s, n)) * units.VEHICLE_STATE_TO_SI.get(n, 1.0) for n in _VEHICLE_F8]
    return CdrMessage(VEHICLE_STATE, (tmpl.fill(
        stamp=stamp, u8=int(device_id), u64=np.uint64(s.timestamp_ntp),
        u16=int(s.scan_number), f8=_column(f8, np.float64)),))


def twist(velocity: float, yaw_rate: float, stamp, frame: str) -> CdrMessage:
    """TwistStamped of a forward velocity (x) and a yaw rate (z)."""
    tmpl = _TEMPLATES.get(('twist', frame), TWIST,
                          lambda: {'header': _header(frame), 'twist': Slot('twist')})
    return CdrMessage(TWIST, (tmpl.fill(stamp=stamp, twist=[
        float(velocity), 0.0, 0.0, 0.0, 0.0, float(yaw_rate)]),))


def vehicle_twist(s, stamp, frame: str) -> CdrMessage:
    """Longitudinal velocity (x) and yaw rate (z) of a (valid) 0x2805."""
    return twist(s.longitudinal_velocity, s.yaw_rate, stamp, frame)


__all__ = ['MARKER_NAMESPACES', 'class_colors', 'scan_info', 'object_list', 'object_lists',
           'object_list_and_markers', 'LuxMarkers', 'label_items', 'id_class_texts',
           'class_names', 'vehicle_state', 'twist', 'vehicle_twist']
