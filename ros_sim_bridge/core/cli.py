"""Command-line helpers shared by every executable: ROS arguments, and stopping cleanly on
SIGINT/SIGTERM (issue #10 defect 8, issue #14)."""
from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import signal
import sys
import threading
from typing import Callable, Optional, Sequence


@contextlib.contextmanager
def imports_without_gc():
    """A block of imports run without the cyclic garbage collector: what imports make (modules,
    classes, functions, tables) lives until the process ends, so collections meanwhile free
    nothing and cost about a tenth of the imports' time; afterwards everything alive is left
    out of later collections (:func:`gc.freeze`)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def parse_args(parser: argparse.ArgumentParser, argv: Optional[Sequence[str]] = None,
               check: Optional[Callable[[argparse.Namespace], Optional[str]]] = None):
    """``argv`` (default: the command line) without ROS arguments, parsed by ``parser``; a
    problem that ``check(args)`` names ends the command as argparse's own errors do: one line
    ``<prog>: <problem>``, exit 2 (SystemExit)."""
    args = parser.parse_args(strip_ros_args(sys.argv[1:] if argv is None else argv))
    problem = check(args) if check is not None else None
    if problem:
        parser.exit(2, f'{parser.prog}: {problem}\n')
    return args


def strip_ros_args(argv: Sequence[str]) -> list:
    """``argv`` without ROS arguments (``--ros-args … [--]``), which `ros2 launch` appends to
    every executable it starts, emulators included."""
    out, inside = [], False
    for arg in argv:
        if arg == '--ros-args':
            inside = True
        elif inside and arg == '--':
            inside = False
        elif not inside:
            out.append(arg)
    return out


def number_problem(args, *, positive: Sequence[str] = (),
                   non_negative: Sequence[str] = ()) -> Optional[str]:
    """The first of an emulator's number arguments (argparse attribute names) that is not
    finite and above zero (``positive``) or at least zero (``non_negative``), as one line
    naming the option; None when all are fine (exit 2 then, never a traceback or a run for
    ever)."""
    for names, ok, said in ((positive, lambda v: v > 0, '> 0'),
                            (non_negative, lambda v: v >= 0, '≥ 0')):
        for name in names:
            value = getattr(args, name)
            if not (math.isfinite(value) and ok(value)):
                return (f'--{name.replace("_", "-")} must be a finite number {said} '
                        f'(got {value:g})')
    return None


def finite_number(minimum: float = 0.0, *, inclusive: bool = True,
                  what: str = 'a finite number') -> Callable[[str], float]:
    """An argparse ``type``: a finite number at least ``minimum`` (above it when not
    ``inclusive``); anything else is argparse's one-line error naming the option."""
    said = f'{">=" if inclusive else ">"} {minimum:g}'

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value >= minimum if inclusive else value > minimum)):
            raise argparse.ArgumentTypeError(f'{text!r} is not {what} {said}')
        return value
    return parse


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: set by the first stop signal a :class:`StopSignals` handles (see :func:`stop_requested`)
_STOP_REQUESTED = threading.Event()


def stop_requested() -> bool:
    """Whether a stop signal came.  The serving loops of the executables check it too: the
    KeyboardInterrupt of a stop signal can be lost, when it is raised inside C code that
    clears errors (seen: within numpy's lazy ``import numpy.random`` during start-up), and the
    process then served on for ever, the signal counted as handled."""
    return _STOP_REQUESTED.is_set()


class StopSignals:
    """SIGINT (Ctrl-C, ros2 launch first) and SIGTERM (ros2 launch after its timeout, docker
    stop, systemd) both end the main thread with KeyboardInterrupt, once: every later one is
    ignored, so cleanup runs to its end when ``ros2 launch`` (or a terminal's Ctrl-C to the
    whole process group, then ros2 launch's own) sends a second signal.

    Set explicitly for both: a background job of a script inherits SIGINT ignored, and
    SIGTERM's default would end the process without running any cleanup.  :meth:`finish`
    ends an executable: after a stop signal the process exits at once with the code (the
    interpreter's own finalisation puts the default handlers back, and a late second signal
    would then kill the process with -2); otherwise the previous handlers are restored and the
    code returned (so ``main()`` can be called in-process, as the tests do).
    """

    def __init__(self, signals: Sequence[int] = STOP_SIGNALS):
        self.fired: list[int] = []
        self._deferring = False
        self.previous = {sig: signal.signal(sig, self._interrupt) for sig in signals}

    def _interrupt(self, signum, frame):
        # Stays installed: swapping in SIG_IGN here would make CPython raise OSError('Signal
        # 15 ignored due to race condition') for a signal that arrived before this ran.
        if self.fired:
            return
        self.fired.append(signum)
        _STOP_REQUESTED.set()
        if not self._deferring:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self):
        """Within the block a stop signal is only noted; it takes effect (KeyboardInterrupt)
        when the block ends, so objects that must not be cut half-built (an rclpy executor,
        whose ``__del__`` then prints a traceback) are built whole first."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        if self.fired:
            raise KeyboardInterrupt

    def finish(self, code: int) -> int:
        if self.fired:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(code)
        self.restore()
        return code

    def restore(self) -> None:
        """The handlers from before, and no stop requested (in-process use: tests)."""
        for sig, handler in self.previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        _STOP_REQUESTED.clear()


def stop_on_signals(signals: Sequence[int] = STOP_SIGNALS) -> StopSignals:
    """Install :class:`StopSignals` for ``signals``."""
    return StopSignals(signals)


def run_main(body: Callable[[], int]) -> int:
    """Run an executable's ``body`` under :class:`StopSignals`; a stop signal is a clean exit
    (0) after the body's own cleanup (``with``/``finally``) has run."""
    stops = stop_on_signals()
    code = 0
    try:
        code = body()
    except KeyboardInterrupt:
        code = 0
    except SystemExit:          # argparse: --help or a bad argument; the handlers from before
        if not stops.fired:
            stops.restore()
        raise
    except Exception:
        # the stop's KeyboardInterrupt may surface as another exception: raised inside an
        # extension module's initialisation (``import rclpy``) it becomes ImportError
        if not stops.fired:
            raise
        code = 0
    return stops.finish(code)


def _noted(signum, frame) -> None:
    """A stop signal after an offline tool's work is done: nothing left to stop."""


def run_tool(body: Callable[[StopSignals], int], *, executable: bool, out=None) -> int:
    """Run an offline tool's ``body(stops)`` (``carla_log``, ``ibeo_idc``) under
    :class:`StopSignals`: a stop signal, or a reader that went away (``| head``), ends it with
    0 (a long job defers the signals itself: ``stops.deferred()`` and ``stops.fired``).  Run
    as the executable it ends with ``os._exit`` once a later stop signal can only be noted:
    the interpreter's shutdown would put the default handlers back, and a signal then (any
    thread may take it) would end the process with 130/143 (``StopSignals.finish`` does the
    same after a stop signal)."""
    out = sys.stdout if out is None else out
    stops = StopSignals()

    def note_later_signals():
        if executable:
            for sig in stops.previous:
                signal.signal(sig, _noted)
    try:
        try:
            code = body(stops)
            out.flush()                     # a closed pipe shows here, not at the exit
        finally:
            note_later_signals()
    except (KeyboardInterrupt, BrokenPipeError):   # stopped; the reader went away
        code = 0
    except Exception:           # the stop's KeyboardInterrupt as another exception (run_main)
        if not stops.fired:
            raise
        code = 0
    if not executable:
        return stops.finish(code)
    note_later_signals()        # again: a signal may have cut the first call short
    for stream in (out, sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:       # a closed pipe: nothing more to say
            pass
    os._exit(code)
