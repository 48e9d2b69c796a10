"""The codec's type modules are imported when a body of their type is first decoded: the
registry's table (KNOWN_TYPES) says which module registers each type with what name and size
limits, and the record times of scans and object lists are read without their decoders
(record_times.leading_time), so ``ibeo_idc info`` imports neither them nor numpy (issue 26)."""
import importlib
import subprocess
import sys

import numpy as np
import pytest

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo.codec import registry


def test_known_types_are_what_their_modules_register():
    for module in sorted({m for m, *_ in registry.KNOWN_TYPES.values()}):
        importlib.import_module(f'ros_sim_bridge.ibeo.codec.{module}')
    registered = {t: (e.decode.__module__, e.name, e.min_size, e.max_size)
                  for t, e in registry._BY_TYPE.items()}
    assert set(registered) == set(registry.KNOWN_TYPES)
    for t, (module, name, low, high) in registry.KNOWN_TYPES.items():
        assert registered[t][1:] == (name, low, high), hex(t)
        assert registry.type_name(t) == name


def test_register_refuses_limits_other_than_the_table():
    with pytest.raises(ValueError, match='KNOWN_TYPES'):
        registry.register(0x2807, 'ecu_vehicle_state_2807', lambda b, h: None, min_size=1)


PROBE = """
import sys
from ros_sim_bridge.ibeo.codec import registry
limits = registry.size_limits(0x2205), registry.type_name(0x2291), 0x2280 in registry.registered_types()
before = sorted(m for m in sys.modules if m.startswith('numpy') or m.endswith('_ecu'))
from ros_sim_bridge.ibeo.codec.header import decode_header
body = bytes(10)                   # an empty 0x2280 object list
rec = registry.decode_message(0x2280, body)
print(limits, before, type(rec).__name__, 'ros_sim_bridge.ibeo.codec.objects_ecu' in sys.modules)
"""


def test_a_type_module_is_imported_by_the_first_decode_of_its_type():
    out = subprocess.run([sys.executable, '-c', PROBE], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['((24,', '1872744),', "'reference_objects_2291',", 'True)',
                                  '[]', 'EcuObjectList2280', 'True']


def _lists():
    from ros_sim_bridge.ibeo.codec import objects_ecu as O
    for data_type, cls in ((0x2225, O.EcuObjectList2225), (0x2280, O.EcuObjectList2280),
                           (0x2281, O.EcuObjectList2281), (0x2291, O.ReferenceObjectList2291)):
        o = O.make_objects(3, data_type)
        o['contour_count'] = [2, 0, 1]
        contours = [np.ones((2, 2), np.float32), np.zeros((0, 2), np.float32),
                    np.ones((1, 2), np.float32)]
        extra = ([[(300, 4, 22)], [], [(1, 12, 'x')]],) if data_type in (0x2281, 0x2291) else ()
        yield data_type, O.encode_objects(cls(0x1234_5678_9ABC_DEF0, o, contours, *extra))


@pytest.mark.parametrize('data_type,body', list(_lists()), ids=('2225', '2280', '2281', '2291'))
def test_leading_time_of_an_object_list_is_its_decoders(data_type, body):
    """leading_time gives the mid-scan time exactly when the decoder takes the body: every cut
    of it, and a property of an unknown type."""
    from ros_sim_bridge.ibeo.record_times import TIME_FIRST, leading_time
    assert data_type in TIME_FIRST
    bodies = [body[:n] for n in range(len(body) + 1)]
    if data_type in (0x2281, 0x2291):
        bad = bytearray(body)
        bad[16 + 164 + 16 + 2 + 2] = 13            # the first property's type id: unknown
        bodies.append(bytes(bad))
        with pytest.raises(CodecError, match='type'):
            registry.decode_message(data_type, bytes(bad))
    for b in bodies:
        try:
            ntp = registry.decode_message(data_type, b).mid_scan_ntp
        except CodecError:
            ntp = None
        assert leading_time(data_type, b) == ntp, len(b)
    assert leading_time(data_type, body) == 0x1234_5678_9ABC_DEF0


TO_BAG_PROBE = """
import sys
from ros_sim_bridge.ibeo.ecu_recording import write_recording
from ros_sim_bridge.ibeo.idc import IdcReader
from ros_sim_bridge.ibeo.ros.to_bag import convert
write_recording(sys.argv[1] + '/demo.idc', seconds=0.2, coordinates='both')
report = convert(IdcReader(sys.argv[1] + '/demo.idc'), sys.argv[1] + '/bag', progress=False)
print(sum(report.written.values()), len(report.written))
print(sorted({m.split('.')[0] for m in sys.modules if m.endswith('.msg')}))
print(sorted(report.written))
"""


def test_to_bag_imports_no_message_package_it_writes_templates_of(tmp_path):
    # templates take field types from the installed type descriptions: the packages of the
    # clouds, fixes, IMU, odometry, markers and Ibeo messages are not imported (30 ms of
    # start-up), nor those of the diagnostics and static transforms (written from value trees,
    # 10 ms more); builtin_interfaces' stamps and durations are
    out = subprocess.run([sys.executable, '-c', TO_BAG_PROBE, str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    written, imported, topics = out.stdout.splitlines()
    assert int(written.split()[1]) >= 10            # clouds, objects, markers, fixes, ...
    assert {'/tf_static', '/diagnostics'} <= set(eval(topics))
    assert eval(imported) == ['builtin_interfaces']
