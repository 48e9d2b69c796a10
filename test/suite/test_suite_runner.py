"""ros_sim_bridge_run as a user runs it: SIGTERM ends it with 0 (children stopped), a bad
--only is one line and exit 2, a driver that cannot bind its port makes the run exit 1."""
import os
import signal
import socket
import subprocess
import sys
import time

from ros_sim_bridge.tools.launcher import executable
from ros_sim_bridge.tools.suite import EXTRA_SOURCES, SOURCES


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
        f"{list({**SOURCES, **EXTRA_SOURCES})}"]


def test_ibeo_ecu_runs_with_its_emulator_and_is_recorded(tmp_path):
    """`--sim --only ibeo_ecu`: what `ros2 launch ros_sim_bridge ibeo_ecu.launch.py sim:=true`
    starts (the ibeo node with config/ibeo_ecu.yaml, the emulator in ECU mode), in namespace
    /ibeo_ecu, recorded."""
    from rosbags.highlevel import AnyReader
    bag = tmp_path / 'ecu_bag'
    proc = run('--sim', '--only', 'ibeo_ecu', '--free-ports', '--record', str(bag),
               '--duration', '4', '--startup-timeout', '60')
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    assert 'Traceback' not in out, out
    with AnyReader([bag]) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        types = {c.topic: c.msgtype for c in reader.connections}
    for topic, msgtype in (('/ibeo_ecu/points', 'sensor_msgs/msg/PointCloud2'),
                           ('/ibeo_ecu/ecu/objects', 'ros_sim_bridge/msg/IbeoObjectList'),
                           ('/ibeo_ecu/gps_imu/fix', 'sensor_msgs/msg/NavSatFix')):
        assert types.get(topic) == msgtype and counts[topic] > 0, (topic, counts)


def test_ibeo_and_ibeo_ecu_emulators_on_one_port_are_refused():
    """With --sim the LUX and ECU emulators would both listen on 12002: one line, exit 2;
    with another port for one of them, --free-ports, or without --sim (two real devices) the
    pair is planned."""
    proc = run('--sim', '--only', 'ibeo,ibeo_ecu')
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out.strip().splitlines() == [
        'ros_sim_bridge_run: --sim: the emulators of ibeo and ibeo_ecu would both listen on TCP '
        'port 12002; add --free-ports or --set ibeo_ecu.port=<another port>']
    from ros_sim_bridge.tools.run import Suite, parse_only
    assert parse_only('ibeo_ecu, ibeo_ecu,rflysim') == ['ibeo_ecu', 'rflysim']   # once each
    for kw in ({'sim': False}, {'sim': True, 'free_ports': True},
               {'sim': True, 'settings': {'ibeo_ecu': {'port': 12003}}}):
        plans = Suite(only=['ibeo', 'ibeo_ecu'], **kw).plans
        assert [p.source.name for p in plans] == ['ibeo', 'ibeo_ecu'], kw


def test_two_children_of_one_name_keep_the_failed_exit_code():
    """stop_all's name → exit code keeps a failure of either of two children of one name (the
    two ibeo_lux_sim emulators of ibeo and ibeo_ecu)."""
    from ros_sim_bridge.tools.launcher import stop_all

    class Child:
        def __init__(self, name, code):
            self.name = name
            self.proc = subprocess.Popen([sys.executable, '-c', f'raise SystemExit({code})'])
            self.proc.wait()
    for order in ((0, 3), (3, 0)):
        assert stop_all([Child('ibeo_lux_sim', c) for c in order]) == {'ibeo_lux_sim': 3}


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
    assert 'not up after' not in out, out           # it ended: it is said so, not "not up"


def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    """Invalid YAML in --set or in a --config file, a --set for an unknown source, a negative
    or NaN --duration: one line naming what is wrong, exit 2, nothing started."""
    bad = tmp_path / 'bad.yaml'
    bad.write_text('foo: [\n')
    cases = [(['--set', 'rflysim.copter_ids=[1,2'], "--set 'rflysim.copter_ids=[1,2': the "
              'value is not YAML'),
             (['--config', str(bad)], f'{bad}: not a YAML params file'),
             (['--set', 'nosuch.x=1'], "--set 'nosuch.x=1': expected SOURCE.PARAMETER=VALUE"),
             (['--duration', '-1'], "argument --duration: '-1' is not a finite number"),
             (['--duration', 'nan'], "argument --duration: 'nan' is not a finite number"),
             (['--only', ','], "--only ',': no source named"),
             (['--record', str(tmp_path / 'no' / 'bag')], 'does not exist'),
             (['--record', '/etc/passwd/bag'], '/etc/passwd/bag'),
             (['--config', str(tmp_path)], str(tmp_path))]
    for args, says in cases:
        proc = run(*(['--only', 'rflysim'] if '--only' not in args else []), *args)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 2 and 'Traceback' not in out, out
        assert says in out, out


def test_a_set_parameter_the_config_does_not_list_is_said():
    """A typo (`copter_id` for `copter_ids`) is said in one line, and the run goes on."""
    proc = run('--only', 'rflysim', '--free-ports', '--duration', '1', '--set',
               'rflysim.copter_id=[2]')
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert ('--set rflysim.copter_id: config/rflysim.yaml lists no such parameter of '
            'rflysim_truth (a typo?)') in out, out


def test_set_takes_an_emulator_argument_of_the_launch_file():
    """`--set morai.release=26.R1` reaches the emulator as `release:=26.R1` does with ros2
    launch (it was passed to the node as a parameter it does not have, and ignored)."""
    from ros_sim_bridge.tools.run import Suite, warn_unknown_settings
    settings = {'morai': {'release': '26.R1'}, 'ibeo': {'sim_layers': 8}}
    plans = Suite(sim=True, only=['morai', 'ibeo'], settings=settings).plans
    morai, ibeo = plans
    assert morai.emulator_args[morai.emulator_args.index('--release') + 1] == '26.R1'
    assert 'release' not in morai.overrides
    assert ibeo.emulator_args[ibeo.emulator_args.index('--layers') + 1] == '8'
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        warn_unknown_settings({'morai': {'release': '26.R1'}}, ['morai'])
    assert err.getvalue() == ''


def test_a_child_stopped_while_it_still_starts_exits_0():
    """A stop (Ctrl-C of the runner) right after a child was started: it is still importing,
    with no handler of its own yet. Born with SIGINT ignored, and sent SIGINT again until its
    handler is in place, it ends with 0 (it ended with a KeyboardInterrupt traceback, exit 1,
    or was killed by the signal)."""
    from ros_sim_bridge.tools.launcher import NodeProcess
    from ros_sim_bridge.tools.ports import free_udp_ports
    port = free_udp_ports(1)
    for name, args in (('rflysim_sim', ['--base-port', str(port), '--rate', '5']),
                       ('rflysim_truth', ['--ros-args', '-p', f'base_port:={port}'])):
        child = NodeProcess(name, args=args, quiet=True)
        assert child.stop() == 0, name


def test_a_terminals_ctrl_c_twice_is_exit_0_with_no_child_blamed():
    """A terminal sends Ctrl-C to the whole process group: every child gets it too and ends
    on its own, possibly before the runner stops it; twice in a row made the runner blame an
    emulator that had simply stopped ('rflysim_sim (exit 0) ended before the suite did',
    exit 1)."""
    for gap in (0.05, 0.15, 0.3):
        proc = run('--sim', '--only', 'rflysim,ibeo', '--free-ports', start_new_session=True)
        lines = []
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:     # the rflysim driver is up, ibeo on its way
                line = proc.stdout.readline()
                lines.append(line)
                if 'listening on' in line or not line:
                    break
            time.sleep(2.0)
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(gap)
            os.killpg(proc.pid, signal.SIGINT)
            out, _ = proc.communicate(timeout=60)
            out = ''.join(lines) + out
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == 0, (gap, out)
        assert 'ended before the suite did' not in out and 'Traceback' not in out, (gap, out)



def test_free_ports_never_hands_out_a_port_twice(monkeypatch):
    # --free-ports picks every port before any node binds one: a port still free when the
    # random draw repeats it, or inside another pick's span, is not handed out again
    from ros_sim_bridge.tools import ports, run
    monkeypatch.setattr(run, '_HANDED_OUT', set())
    draws = iter([62000, 62000, 62001, 62000, 62010, 62012, 62011, 62000])
    monkeypatch.setattr(ports.random, 'randint', lambda low, high: next(draws))
    assert run.pick_port('udp', 1, 1) == 62000
    assert run.pick_port('udp', 1, 1) == 62001       # 62000 again: drawn anew
    assert run.pick_port('udp', 2, 2) == 62010       # 62000 + 62002: 62000 handed out
    assert run.pick_port('udp', 1, 1) == 62011       # 62012: inside 62010's span
    assert run.pick_port('tcp', 1, 1) == 62000       # another kind: its own ports
