"""The offline commands read and convert files without rclpy: its import (0.1-0.2 s) stays out of
their start-up (issue 26: `info` within 0.1 s, `to-bag` within 0.3 s); `ibeo_idc info` reads
without rosbags, numpy (0.05 s) or the codec's decoders of scans and object lists either, and
`to-bag` draws its progress bar without tqdm (0.025 s)."""
import subprocess
import sys

import pytest

from ros_sim_bridge.ibeo.ecu_recording import write_recording

PROBE = """
import sys
module, argv = sys.argv[1], sys.argv[2:]
import importlib
try:
    importlib.import_module(module).main(argv)
finally:
    print('IMPORTED', sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'numpy', 'tqdm')
                             or m in ('rosbags', 'rosbags.typesys.stores.ros2_kilted',
                                      'ros_sim_bridge.ibeo.codec.scan_ecu',
                                      'ros_sim_bridge.ibeo.codec.objects_ecu')))
"""


def imported(module: str, *args) -> list:
    out = subprocess.run([sys.executable, '-c', PROBE, module, *map(str, args)],
                         capture_output=True, text=True, timeout=120)
    line = [x for x in out.stdout.splitlines() if x.startswith('IMPORTED')]
    assert line, out.stderr
    return eval(line[-1][len('IMPORTED '):])


def roots(modules: list) -> set:
    """The packages of ``modules`` (numpy for numpy.core, …), the codec's modules by name."""
    return {m.rsplit('.', 1)[1] if m.startswith('ros_sim_bridge') else m.split('.')[0]
            for m in modules}


@pytest.fixture
def idc(tmp_path):
    path = tmp_path / 'x.idc'
    write_recording(path, seconds=0.2, scanners=2, points=50, coordinates='both')
    return path


def test_ibeo_idc_info_and_to_bag_import_no_rclpy(idc, tmp_path):
    first = imported('ros_sim_bridge.ibeo.cli', 'to-bag', idc, tmp_path / 'a')
    assert 'rclpy' not in roots(first)
    assert 'tqdm' not in roots(first)           # the progress bar is core.progress's
    # the second bag of the same types: no type store either (its definitions are cached)
    second = imported('ros_sim_bridge.ibeo.cli', 'to-bag', '--no-progress', idc,
                      tmp_path / 'b')
    assert 'rclpy' not in roots(second)
    assert 'rosbags.typesys.stores.ros2_kilted' not in second
    # info of a file of scans, object lists, vehicle states, GPS/IMU, odometry, an image:
    # their record times read without numpy and without the scan and object decoders
    assert imported('ros_sim_bridge.ibeo.cli', 'info', idc) == []


def test_carla_log_to_bag_draws_its_progress_without_tqdm(tmp_path):
    from ros_sim_bridge.carla.emulator.scene import Scene
    from ros_sim_bridge.carla.emulator.writer import write
    log = tmp_path / 'x.log'
    with open(log, 'wb') as f:
        write(f, Scene(seconds=0.5, rate=20.0, vehicles=3, walkers=1, traffic_lights=1))
    modules = imported('ros_sim_bridge.carla.cli', 'to-bag', log, tmp_path / 'bag')
    assert 'tqdm' not in roots(modules)          # the progress bar is core.progress's
    assert (tmp_path / 'bag' / 'metadata.yaml').is_file()
