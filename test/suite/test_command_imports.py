"""The offline commands read and convert files without rclpy: its import (0.1-0.2 s) stays out of
their start-up (issue 26: `info` within 0.1 s, `to-bag` within 0.3 s)."""
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
    print('IMPORTED', sorted(m for m in ('rclpy', 'rosbags.typesys.stores.ros2_kilted')
                             if m in sys.modules))
"""


def imported(module: str, *args) -> list:
    out = subprocess.run([sys.executable, '-c', PROBE, module, *map(str, args)],
                         capture_output=True, text=True, timeout=120)
    line = [x for x in out.stdout.splitlines() if x.startswith('IMPORTED')]
    assert line, out.stderr
    return eval(line[-1][len('IMPORTED '):])


@pytest.fixture
def idc(tmp_path):
    path = tmp_path / 'x.idc'
    write_recording(path, seconds=0.2, scanners=2, points=50, coordinates='both')
    return path


def test_ibeo_idc_info_and_to_bag_import_no_rclpy(idc, tmp_path):
    imported('ros_sim_bridge.ibeo.idc_cli', 'to-bag', '--no-progress', idc, tmp_path / 'a')
    # the second bag of the same types: no type store either (its definitions are cached)
    assert imported('ros_sim_bridge.ibeo.idc_cli', 'to-bag', '--no-progress', idc,
                    tmp_path / 'b') == []
    assert imported('ros_sim_bridge.ibeo.idc_cli', 'info', idc) == []
