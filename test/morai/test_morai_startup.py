"""morai_bridge as a new user starts it (installed executable, subprocess): values refused at
start with one line."""
import os
import subprocess

import pytest

from ros_sim_bridge.tools.launcher import executable, ros_args

ENV = {**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}


def run(exe, *args, timeout=60):
    """Run an installed executable to its end: (exit code, stdout + stderr)."""
    proc = subprocess.run([str(executable(exe)), *args], env=ENV, capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def one_line_naming(out: str, *words) -> str:
    assert 'Traceback' not in out, out
    lines = [line for line in out.splitlines() if all(w in line for w in words)]
    assert len(lines) == 1, out
    return lines[0]


# -- morai_bridge ------------------------------------------------------------------------------

@pytest.mark.parametrize('name, value', [
    ('listen_port.ego_status', 70000),          # an OverflowError traceback before
    ('listen_port.collision', -5),
    ('listen_port.multi_ego_setting', 65536),
    ('sim_port.ctrl_cmd', 70000),
    ('sim_port.scenario_load', -2),
    ('receive_buffer_bytes', -1),
    ('latency_window', 0)])
def test_bridge_refuses_a_bad_port_or_size_with_one_fatal_line(name, value):
    code, out = run('morai_bridge', *ros_args(parameters={name: value}))
    assert code == 1, out
    line = one_line_naming(out, 'cannot start', name)
    assert 'FATAL' in line and str(value) in line
