"""core/cli.py StopSignals: a stop signal during a deferred block (start-up) is noted and takes
effect when the block ends; outside one it interrupts at once; later signals are ignored."""
import os
import signal

import pytest

from ros_sim_bridge.core.cli import StopSignals


@pytest.fixture
def stops():
    s = StopSignals()
    yield s
    for sig, handler in s.previous.items():   # finish() would exit the process after a signal
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def test_signal_in_deferred_block_acts_when_it_ends(stops):
    built = []
    with pytest.raises(KeyboardInterrupt):
        with stops.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            built.append('executor')        # reached: the signal did not cut the block
    assert built == ['executor'] and stops.fired == [signal.SIGTERM]


def test_signal_outside_a_block_interrupts_and_later_ones_are_ignored(stops):
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)   # the handler runs before kill() returns here
    os.kill(os.getpid(), signal.SIGINT)     # a second one during cleanup: ignored
    os.kill(os.getpid(), signal.SIGTERM)
    assert stops.fired == [signal.SIGINT]


def test_deferred_block_without_a_signal_is_transparent(stops):
    with stops.deferred():
        pass
    assert stops.fired == [] and not stops._deferring
