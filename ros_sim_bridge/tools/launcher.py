"""Start this package's executables the way `ros2 run` would, on machines without ros2cli.

Used by the demo and the end-to-end tests: the executable comes from the install prefix found
through the ament index, parameters from a params file plus overrides, DDS kept local.
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from ament_index_python.packages import get_package_prefix, get_package_share_directory

PACKAGE = 'ros_sim_bridge'


def executable(name: str) -> Path:
    path = Path(get_package_prefix(PACKAGE)) / 'lib' / PACKAGE / name
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f'{path} is not an installed executable of {PACKAGE}')
    return path


def config_file(name: str) -> Path:
    return Path(get_package_share_directory(PACKAGE)) / 'config' / name


def ros_value(value) -> str:
    """A value as the text of ``-p name:=…`` (and of a launch argument)."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return '[' + ','.join(ros_value(v) for v in value) + ']'
    if value == '':
        return "''"   # rcl reads -p name:= as a parse error; '' is YAML's empty string
    return str(value)


def ros_args(params_file=None, parameters: Optional[dict] = None,
             name: Optional[str] = None, namespace: Optional[str] = None,
             log_level: Optional[str] = None) -> list[str]:
    """``--ros-args`` for a node: name, namespace, params file(s) in order, then ``-p``s."""
    args = ['--ros-args']
    if name:
        args += ['-r', f'__node:={name}']
    if namespace:
        args += ['-r', f'__ns:=/{namespace.strip("/")}']
    files = params_file if isinstance(params_file, (list, tuple)) else [params_file]
    for path in files:
        if path:
            args += ['--params-file', str(path)]
    if log_level:
        args += ['--log-level', log_level]
    for key, value in (parameters or {}).items():
        args += ['-p', f'{key}:={ros_value(value)}']
    return args


class NodeProcess:
    """One node executable in its own process; ``stop`` sends SIGINT like Ctrl-C, then SIGTERM
    (as ``ros2 launch`` does), then SIGKILL."""

    def __init__(self, name: str, *, params_file=None,
                 parameters: Optional[dict] = None, args: Sequence[str] = (),
                 env: Optional[dict] = None, quiet: bool = False,
                 namespace: Optional[str] = None, log_level: Optional[str] = None):
        cmd = [str(executable(name)), *args]
        if params_file or parameters or namespace or log_level:
            cmd += ros_args(params_file, parameters, namespace=namespace, log_level=log_level)
        self.name = name
        full_env = dict(os.environ)
        full_env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        full_env.update(env or {})
        # quiet: its log lines kept aside (an unlinked file), for last_lines() if it dies
        self._log = tempfile.TemporaryFile() if quiet else None
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, env=full_env,
                                     stdout=subprocess.DEVNULL if quiet else None,
                                     stderr=self._log, preexec_fn=_sigint_ignored)

    def last_lines(self, n: int = 3) -> list[str]:
        """The last ``n`` lines a quiet child wrote to stderr (its FATAL line when it could
        not start); [] when its output went to the terminal."""
        if self._log is None:
            return []
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - 4096))
        text = self._log.read().decode('utf-8', 'replace')
        return [line for line in text.splitlines() if line.strip()][-n:]

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 5.0) -> int:
        return stop_all([self], timeout)[self.name]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _sigint_ignored() -> None:
    """In a child before it runs: SIGINT ignored until its own handler is in place (every
    executable of the package installs one first, core.cli.stop_on_signals).  A Ctrl-C or a
    stop while it is still importing would otherwise end it with a KeyboardInterrupt
    traceback and exit 1; :func:`stop_all` sends SIGINT again until it is heard."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: s between the SIGINTs of :func:`stop_all` to a child that has not ended yet
RESEND = 0.25


def stop_all(processes: Sequence['NodeProcess'], timeout: float = 5.0) -> dict[str, int]:
    """Stop many at once, as ``ros2 launch`` does: SIGINT to all (again every
    :data:`RESEND` s: a child still starting ignores it), SIGTERM to those still running after
    ``timeout`` s, SIGKILL after another ``timeout``; name → exit code (of two children of
    one name, e.g. two emulators, the one that is not 0)."""
    import time
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + timeout
        while True:
            alive = [p for p in processes if p.proc.poll() is None]
            if not alive:
                return _exit_codes(processes)
            for p in alive:
                p.proc.send_signal(sig)
            left = deadline - time.monotonic()
            if left <= 0:
                break
            step = min(left, RESEND) if sig == signal.SIGINT else left
            end = time.monotonic() + step
            for p in alive:
                try:
                    p.proc.wait(max(0.0, end - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
            if sig != signal.SIGINT:
                break
    for p in processes:
        if p.proc.poll() is None:
            p.proc.wait()
    return _exit_codes(processes)


def _exit_codes(processes) -> dict[str, int]:
    codes: dict[str, int] = {}
    for p in processes:
        if not codes.get(p.name):
            codes[p.name] = p.proc.returncode
    return codes
