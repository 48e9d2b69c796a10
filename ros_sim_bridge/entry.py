"""The entry of every installed executable: stop signals handled before anything is imported.

The launchers (cmake/launcher.c, which starts Python with SIGINT and SIGTERM blocked, and the
setup.py console_scripts) call :func:`run` with the module whose ``main()`` they run.
Importing rclpy and numpy takes 0.1–0.3 s (more on a busy machine); a SIGINT or SIGTERM
then, before ``main()`` has installed its own handlers
(core.cli.StopSignals, ros_sim_bridge_run's), ends the process at once with exit code 0:
nothing has been opened or started yet.  Once ``main()`` has its handlers they take over;
once it returns the process ends with its code at once (``os._exit``, stdout and stderr
flushed), so a stop signal sent again meanwhile cannot turn it into 130/143.  Standard library
only.
"""
from __future__ import annotations

import gc
import importlib
import os
import signal
import sys

#: the exit code of a stop signal that arrives now: 0 until main() returns, then its code
_exit_code = 0


def _exit_now(signum, frame) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:       # closed, or a write the signal cut short
            pass
    os._exit(_exit_code)


def run(module: str):
    """Install the stop-signal handlers, import ``module`` and exit with its ``main()``."""
    global _exit_code
    # OpenBLAS (numpy's) starts a thread per core when numpy is imported: 0.05 s of every
    # start-up, for matrix products the suite does not make big enough to gain from them
    os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_now)
    # the compiled launcher (cmake/launcher.c) started Python with both blocked: one that
    # came while the interpreter started is pending, and handled now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))
    # what the imports make lives to the end: no collections while they run (a tenth of
    # their time), then left out of later ones (core.cli.imports_without_gc does the same)
    gc.disable()
    try:
        main = importlib.import_module(module).main
    finally:
        gc.freeze()
        gc.enable()
    try:
        code = main()
    except SystemExit as stop:      # argparse: --help, a bad argument
        code = stop.code
    if isinstance(code, str):       # SystemExit('message'): said on stderr, exit 1
        print(code, file=sys.stderr)
    _exit_code = code if isinstance(code, int) else (0 if code is None else 1)
    # main() has closed what it opened: the process ends here, with its code.  Not through
    # the interpreter's shutdown, which puts the default handlers back: a stop signal sent
    # again meanwhile (ros2 launch, ros_sim_bridge_run's stop and a terminal's Ctrl-C all
    # repeat theirs until the process is gone) would end it with 130/143 or -2
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_now)
    _exit_now(None, None)


def launcher(module: str):
    """A console_scripts entry point (setup.py) that runs ``module`` through :func:`run`."""
    return lambda: run(module)


rflysim_sim = launcher('ros_sim_bridge.rflysim.emulator.cli')
morai_sim = launcher('ros_sim_bridge.morai.emulator.cli')
ibeo_lux_sim = launcher('ros_sim_bridge.ibeo.emulator.cli')
monodrive_sim = launcher('ros_sim_bridge.monodrive.emulator')
carla_log = launcher('ros_sim_bridge.carla.cli')
