"""scripts/with-venv.sh (the README's way to run everything without a ROS install): Ctrl-C or
SIGTERM while it is still sourcing the install space is a clean stop, exit 0, and the command
never starts (was: the wrapper killed, -2 / -15, for the ~50 ms the real setup.bash takes).

The install space here is a stand-in whose setup.bash takes 3 s, so the signal surely comes
while it is being sourced; it goes to the whole process group, as a terminal's Ctrl-C does.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

WRAPPER = Path(__file__).resolve().parents[2] / 'scripts' / 'with-venv.sh'


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['sigint', 'sigterm'])
def test_a_stop_signal_while_the_install_space_is_sourced_is_exit_0(sig, tmp_path):
    install = tmp_path / 'install'
    install.mkdir()
    # the mark made by bash itself: a signal that met a child (touch) ending normally would
    # be taken as handled by it (bash's wait-and-cooperative-exit) and dropped
    (install / 'setup.bash').write_text(f': > {tmp_path}/sourcing\nsleep 3\n')
    started = tmp_path / 'started'
    env = dict(os.environ, INSTALL_BASE=str(install))
    proc = subprocess.Popen(['bash', str(WRAPPER), str(Path(sys.prefix)), 'touch', str(started)],
                            env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / 'sourcing').exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (tmp_path / 'sourcing').exists(), 'setup.bash was never sourced'
        os.killpg(proc.pid, sig)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert not started.exists()


def test_the_command_runs_with_its_arguments_and_exit_status(tmp_path):
    out = tmp_path / 'out'
    rc = subprocess.call(['bash', str(WRAPPER), str(Path(sys.prefix)), 'sh', '-c',
                          f'echo "$VIRTUAL_ENV $1" > {out}; exit 3', 'sh', 'an argument'],
                         env=dict(os.environ, INSTALL_BASE=str(tmp_path / 'none')))
    assert rc == 3
    assert out.read_text() == f'{Path(sys.prefix).resolve()} an argument\n'
