"""Start this package's executables the way `ros2 run` would, on machines without ros2cli.

Used by the demo and the end-to-end tests: the executable comes from the install prefix found
through the ament index, parameters from a params file plus overrides, DDS kept local.
"""
from __future__ import annotations

import os
import signal
import subprocess
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


def _ros_value(value) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return '[' + ','.join(_ros_value(v) for v in value) + ']'
    return str(value)


def ros_args(params_file: Optional[Path] = None, parameters: Optional[dict] = None,
             name: Optional[str] = None) -> list[str]:
    args = ['--ros-args']
    if name:
        args += ['-r', f'__node:={name}']
    if params_file:
        args += ['--params-file', str(params_file)]
    for key, value in (parameters or {}).items():
        args += ['-p', f'{key}:={_ros_value(value)}']
    return args


class NodeProcess:
    """One node executable in its own process; ``stop`` sends SIGINT like Ctrl-C."""

    def __init__(self, name: str, *, params_file: Optional[Path] = None,
                 parameters: Optional[dict] = None, args: Sequence[str] = (),
                 env: Optional[dict] = None, quiet: bool = False):
        cmd = [str(executable(name)), *args]
        if params_file or parameters:
            cmd += ros_args(params_file, parameters)
        full_env = dict(os.environ)
        full_env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        full_env.update(env or {})
        out = subprocess.DEVNULL if quiet else None
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, env=full_env, stdout=out, stderr=out)

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 5.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
