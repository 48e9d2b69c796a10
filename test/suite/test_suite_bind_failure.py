"""A port the node cannot bind (MORAI's default Ego Status port 909 needs privileges; here: a
port another socket holds) ends in one clear log line and exit 1, never a traceback (#14)."""
import os
import socket
import subprocess

import pytest

from ros_sim_bridge.tools.launcher import config_file, executable, ros_args


@pytest.mark.parametrize('exe, parameter, kind', [
    ('morai_bridge', 'listen_port.ego_status', socket.SOCK_DGRAM),
    ('rflysim_truth', 'base_port', socket.SOCK_DGRAM),
])
def test_port_in_use_is_one_line_and_exit_1(exe, parameter, kind):
    holder = socket.socket(socket.AF_INET, kind)
    holder.bind(('127.0.0.1', 0))
    port = holder.getsockname()[1]
    config = {'morai_bridge': 'morai.yaml', 'rflysim_truth': 'rflysim.yaml'}[exe]
    try:
        proc = subprocess.run(
            [str(executable(exe)), *ros_args(config_file(config), {parameter: port})],
            env={**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'},
            capture_output=True, text=True, timeout=60)
    finally:
        holder.close()
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert 'Traceback' not in out, out
    lines = [line for line in out.splitlines() if 'cannot' in line]
    assert len(lines) == 1 and str(port) in lines[0], out


def test_runner_quiet_says_why_a_child_could_not_start():
    """ros_sim_bridge_run --quiet sends the children's output away; a child that dies at start
    is named with its last lines (the FATAL reason), not only its exit code."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(('127.0.0.1', 0))
    port = holder.getsockname()[1]
    try:
        proc = subprocess.run(
            [str(executable('ros_sim_bridge_run')), '--only', 'morai', '--quiet',
             '--duration', '20', '--set', f'morai.listen_port.ego_status={port}'],
            env={**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'},
            capture_output=True, text=True, timeout=90)
    finally:
        holder.close()
    err = proc.stderr
    assert 'Traceback' not in err, err
    assert 'morai_bridge (exit 1) ended before the suite did; its last lines:' in err, err
    reason = err.split('its last lines:')[1]
    assert 'cannot' in reason and str(port) in reason, err
