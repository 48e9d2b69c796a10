"""Fuzz: ibeo records → ROS messages, including the CloudBuilder point kernel.

Every decoded (mutated) scan, object list, vehicle state and errors/warnings message converts
to messages that serialise (the CDR ones: rclpy decodes them and serialises them again to the
same length, checking every field's type and range); the compiled kernel and the numpy path give the same points; the
kernel is never handed a table that has been freed (#10 defect 1); object lists of any size
convert in bounded time (#10 defect 7).
"""
from __future__ import annotations

import math
import weakref

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from std_msgs.msg import Header
from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo.codec import errors_warnings, objects as lux_objects, registry
from ros_sim_bridge.ibeo.codec import scan as lux_scan
from ros_sim_bridge.ibeo.ros import conversions as convert, lux_cdr, lux_native
from ros_sim_bridge.ros.cdr_template import message_class
from ros_sim_bridge.ros.pointcloud import from_pointcloud2
from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage, CloudCdr

import fuzz_support as fz
import ibeo_seeds

BODIES = ibeo_seeds.bodies()
HEADER = Header(stamp=Time(sec=5, nanosec=6), frame_id='laser')
STAMP = (5, 6)


def _cdr_ok(*msgs) -> list:
    """Every CDR message decodes with rclpy and serialises again to its length (rclpy checks
    every field's type and range there); the decoded messages."""
    from rclpy.serialization import deserialize_message, serialize_message
    out = []
    for m in msgs:
        raw = m.data if isinstance(m, CdrMessage) else m
        cls = message_class(m.type_name) if isinstance(m, CdrMessage) else \
            message_class('sensor_msgs/msg/PointCloud2')
        back = deserialize_message(raw, cls)
        assert len(serialize_message(back)) == len(raw)
        out.append(back)
    return out


def _decoded(data_type, body):
    try:
        return registry.decode_message(data_type, body)
    except CodecError as err:
        fz.check_codec_error(err)
        return None


def _same_points(a: np.ndarray, b: np.ndarray) -> None:
    """Two CLOUD_DTYPE clouds agree: integer fields exactly, floats to float32 rounding."""
    assert len(a) == len(b)
    for name in ('layer', 'echo', 'flags'):
        assert np.array_equal(a[name], b[name]), name
    for name in ('x', 'y', 'z', 'horizontal_angle', 'echo_width'):
        np.testing.assert_allclose(a[name], b[name], rtol=2e-5, atol=2e-3, equal_nan=True,
                                   err_msg=name)


_SCAN_INPUTS = fz.mutated(BODIES[registry.SCAN], max_mutations=6)


@given(_SCAN_INPUTS, st.booleans(), st.sampled_from([0.0, math.radians(1.6), 0.5]),
       st.booleans(), st.sampled_from([(-1.2, -0.4, 0.4, 1.2), (0.0,), tuple(range(16))]),
       st.integers(0, 15))
def test_scan_cloud(body, eight_layer, tilt, first_echo, elevations, drop):
    fz.tried('ibeo.ros.conversions.CloudBuilder')
    decoded = _decoded(registry.SCAN, body)
    if decoded is None:
        return
    scan, wire = lux_scan.decode_scan_wire(body)
    numpy_builder = convert.CloudBuilder(elevations, drop_flags=drop,
                                         first_echo_only=first_echo, native=False)
    expected = fz.timed(numpy_builder.build_wire, scan, wire, eight_layer=eight_layer,
                        beam_tilt=tilt)
    if lux_native.KERNEL is not None:
        native = convert.CloudBuilder(elevations, drop_flags=drop, first_echo_only=first_echo,
                                      native=True)
        buf = CloudCdr(convert.CLOUD_DTYPE, 'laser')
        cloud = fz.timed(native.build_wire, scan, wire, eight_layer=eight_layer,
                         beam_tilt=tilt, alloc=buf.points)
        _same_points(cloud, expected)
        assert native.nan_points == numpy_builder.nan_points
        points = cloud.tobytes()
        msg, = _cdr_ok(buf.message(cloud, STAMP, is_dense=not native.nan_points))
        assert from_pointcloud2(msg).tobytes() == points
        assert msg.is_dense == (not native.nan_points) and msg.header.frame_id == 'laser'
        del cloud
    info = lux_cdr.scan_info(scan, STAMP, 'laser', device_id=7, scan_points=len(wire),
                             published_points=len(expected), eight_layer=eight_layer,
                             beam_tilt=tilt, sensor_time_offset=-1e9)
    _cdr_ok(info)


class _TableWatch:
    """Wraps the kernel so that every table address it is handed must belong to a live table
    made by lux_native (a freed table would be read by the C loop: defect 1)."""

    def __init__(self, monkeypatch):
        self.tables: list[weakref.ref] = []
        for name in ('tick_table', 'tilt_table'):
            make = getattr(lux_native, name)
            monkeypatch.setattr(lux_native, name, self._recording(make))
        kernel = lux_native.KERNEL
        monkeypatch.setattr(lux_native, 'KERNEL', self._checked(kernel))

    def _recording(self, make):
        def wrapper(*args, **kwargs):
            table = make(*args, **kwargs)
            self.tables.append(weakref.ref(table))
            return table
        return wrapper

    def _live(self) -> set[int]:
        return {t().ctypes.data for t in self.tables if t() is not None}

    def _checked(self, kernel):
        def wrapper(wire, n, out, ticks, tilt, layers, k, m_per_cm, lift):
            live = self._live()
            for name, table in (('tick table', ticks), ('tilt table', tilt)):
                if table is None:
                    continue
                address = table if isinstance(table, int) else table.ctypes.data
                assert address in live, f'the kernel was handed a freed {name}'
            return kernel(wire, n, out, ticks, tilt, layers, k, m_per_cm, lift)
        return wrapper


def _scan(ticks_per_rotation: int, mirror_side: int, n: int = 64):
    pts = np.zeros(n, lux_scan.POINT_DTYPE)
    pts['layer'] = np.arange(n) % 4
    pts['angle_ticks'] = np.linspace(-2000, 2000, n).astype(np.int16)
    pts['distance_cm'] = 1000 + np.arange(n)
    return lux_scan.LuxScan(1, 0, 0, 0, 0, ticks_per_rotation, 2000, -2000,
                            flags=lux_scan.SCAN_FLAG_MIRROR_SIDE if mirror_side else 0,
                            points=pts)


@pytest.mark.skipif(lux_native.KERNEL is None, reason='compiled kernel not installed')
@given(st.lists(st.tuples(st.integers(11518, 11526), st.integers(0, 1)), min_size=1,
                max_size=14))
@example([(11520, 0), (11520, 1), (11521, 0), (11521, 1), (11522, 0), (11522, 1)])
def test_kernel_tables_stay_alive(monkeypatch, layouts):
    """The issue's trigger: 8 layers, mirror sides alternating, ticks per rotation changing, so
    the builder's table cache fills and is cleared between the tick and the tilt table."""
    fz.tried('ibeo.ros.lux_native.KERNEL(tables)')
    watch = _TableWatch(monkeypatch)
    builder = convert.CloudBuilder(native=True)
    reference = convert.CloudBuilder(native=False)
    for tpr, side in layouts:
        scan = _scan(tpr, side)
        wire = np.zeros(len(scan.points), lux_scan.WIRE_POINT_DTYPE)
        wire['layer_echo'] = scan.points['layer']
        wire['angle'] = scan.points['angle_ticks']
        wire['distance'] = scan.points['distance_cm']
        got = builder.build_wire(scan, wire, eight_layer=True, beam_tilt=math.radians(1.6))
        want = reference.build_wire(scan, wire, eight_layer=True, beam_tilt=math.radians(1.6))
        _same_points(got, want)
    assert watch.tables


def _objects_conversions(lst) -> None:
    tracker = lux_cdr.LuxMarkers(lifetime_s=0.5)
    si = convert.objects_to_si(lst)                  # the codec's cm, cm/s, ms, deg → SI
    msgs = [lux_cdr.object_list(lst, STAMP, 'laser', device_id=3),
            tracker.update(lst, STAMP, 'laser'),
            lux_cdr.object_list(si, STAMP, 'laser'), tracker.update(si, STAMP, 'laser'),
            tracker.update(lux_objects.LuxObjectList(0), STAMP, 'laser'),
            tracker.clear(STAMP, 'laser')]
    _cdr_ok(*msgs)


@given(fz.mutated(BODIES[registry.OBJECTS], max_mutations=6))
def test_object_conversions(body):
    fz.tried('ibeo.ros.conversions.object_list+markers')
    lst = _decoded(registry.OBJECTS, body)
    if lst is not None:
        fz.timed(_objects_conversions, lst)


@given(fz.mutated(BODIES[registry.VEHICLE_STATE], max_mutations=6))
def test_vehicle_state_conversions(body):
    fz.tried('ibeo.ros.conversions.vehicle_state')
    s = _decoded(registry.VEHICLE_STATE, body)
    if s is not None:
        _cdr_ok(lux_cdr.vehicle_state(s, STAMP, 'laser', device_id=255),
                lux_cdr.vehicle_twist(s, STAMP, 'laser'))


@given(fz.mutated(BODIES[registry.ERRORS_WARNINGS], max_mutations=6),
       st.sampled_from([None, 0.0, 0.5, 2.0, math.inf, math.nan]))
@example(ibeo_seeds.hand_bodies()[registry.ERRORS_WARNINGS][0], None)   # age_s None crashed
def test_errors_statuses(body, age):
    fz.tried('ibeo.ros.conversions.errors_statuses')
    ew = _decoded(registry.ERRORS_WARNINGS, body)
    seen = {'errors': {'E-x': 3}, 'warnings': {}}
    statuses = convert.errors_statuses(ew, name_prefix='lux: ', hardware_id='lux',
                                       age_s=None if ew is None else age, seen=seen)
    fz.serialize(DiagnosticArray(header=HEADER, status=statuses))
    assert isinstance(ew, (type(None), errors_warnings.LuxErrorsWarnings))
    if statuses[0].level == DiagnosticStatus.ERROR:
        assert ew is not None and ew.has_error
