"""ros_sim_bridge_run as a user runs it: SIGTERM ends it with 0 (children stopped), a bad
--only is one line and exit 2, a driver that cannot bind its port makes the run exit 1."""
import os
import signal
import socket
import subprocess
import time

from ros_sim_bridge.tools.launcher import executable
from ros_sim_bridge.tools.suite import SOURCES


def run(*args, **kw):
    return subprocess.Popen([str(executable('ros_sim_bridge_run')), *args],
                            env={**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def test_sigterm_stops_children_and_exits_0():
    proc = run('--only', 'rflysim', '--free-ports')
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:      # the driver's "listening on" line: it is up
            line = proc.stdout.readline()
            lines.append(line)
            if 'listening on' in line or not line:
                break
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
        out = ''.join(lines) + out
    finally:
        proc.kill()
    assert 'listening on' in out, out
    assert proc.returncode == 0, out
    assert 'Traceback' not in out, out


def test_unknown_source_is_one_line():
    proc = run('--only', 'rflysim,nosuch')
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out.strip().splitlines() == [
        "ros_sim_bridge_run: --only: unknown source(s) ['nosuch']; known: "
        f"{list(SOURCES)}"]


def test_driver_that_cannot_bind_fails_the_run():
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(('127.0.0.1', 0))
    port = holder.getsockname()[1]
    try:
        proc = run('--only', 'rflysim', '--set', f'rflysim.base_port={port}',
                   '--duration', '2', '--startup-timeout', '60')
        out, _ = proc.communicate(timeout=120)
    finally:
        holder.close()
    assert proc.returncode == 1, out
    assert 'Traceback' not in out, out
    assert f'cannot bind UDP 127.0.0.1:{port}' in out
    assert 'rflysim_truth (exit 1) ended before the suite did' in out
