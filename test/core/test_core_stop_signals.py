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
    s.restore()                               # finish() would exit the process after a signal


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


LOST = """
import signal, sys
from ros_sim_bridge.core.cli import StopSignals
from ros_sim_bridge.{module} import main
StopSignals()
try:
    signal.raise_signal(signal.SIGINT)   # handled: its KeyboardInterrupt is raised here ...
except KeyboardInterrupt:
    pass                                 # ... and lost, as inside C code that clears errors
print('serving', flush=True)
sys.exit(main({argv!r}))
"""


def _morai_sim_args() -> list:
    """Ego Status to a free port, nothing else sent, every listening port the system's."""
    from ros_sim_bridge.morai.emulator.server import RECV_PORTS, SEND_PORTS
    from ros_sim_bridge.tools.ports import free_udp_ports
    args = []
    for n in SEND_PORTS:
        args += [f'--{n.replace("_", "-")}-port',
                 str(free_udp_ports(1) if n == 'ego_status' else -1)]
    for n in RECV_PORTS:
        args += [f'--{n.replace("_", "-")}-listen-port', '0']
    return args


@pytest.mark.parametrize('module', ['ibeo.emulator.cli', 'ibeo.emulator.cli --ecu',
                                    'morai.emulator.cli',
                                    'monodrive.emulator', 'rflysim.emulator.cli'])
def test_an_emulator_stops_even_when_the_signals_interrupt_was_lost(module):
    """A stop signal's KeyboardInterrupt raised inside C code that clears errors is lost
    (seen within numpy's lazy import of numpy.random at start-up): the emulator then served
    on for ever. Its serving loop checks stop_requested() too: it ends, exit 0."""
    import subprocess
    import sys

    from ros_sim_bridge.tools.ports import free_tcp_port, free_udp_ports
    module, *extra = module.split()
    argv = {'ibeo.emulator.cli': ['--port', str(free_tcp_port()), '--points', '100', *extra],
            'morai.emulator.cli': _morai_sim_args(),
            'monodrive.emulator': ['--port', str(free_tcp_port())],
            'rflysim.emulator.cli': ['--base-port', str(free_udp_ports(1))]}[module]
    proc = subprocess.run([sys.executable, '-c', LOST.format(module=module, argv=argv)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and 'serving' in proc.stdout, proc.stderr


CONVERTED = """
import signal, sys
from ros_sim_bridge.core.cli import {runner}

def body(*stops):
    try:
        signal.raise_signal(signal.SIGINT)
    except KeyboardInterrupt:            # as an extension module's initialisation does
        raise ImportError('initialization failed')
    return 3

sys.exit({call})
"""


@pytest.mark.parametrize('runner, call', [('run_main', 'run_main(body)'),
                                          ('run_tool', 'run_tool(body, executable=True)')])
def test_a_stop_whose_interrupt_surfaces_as_another_exception_is_a_quiet_exit_0(runner, call):
    """A SIGINT while ``import rclpy`` initialises its extension module surfaces as
    ImportError('initialization failed'), not KeyboardInterrupt (seen in sim_bridge_demo
    stopped at start-up): still the stop asked for, exit 0 without a traceback."""
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, '-c', CONVERTED.format(runner=runner, call=call)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr


def test_an_exception_without_a_stop_still_fails_loudly():
    import subprocess
    import sys
    code = CONVERTED.replace('signal.raise_signal(signal.SIGINT)',
                             'raise KeyboardInterrupt').format(runner='run_main',
                                                               call='run_main(body)')
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 1 and 'ImportError: initialization failed' in proc.stderr
