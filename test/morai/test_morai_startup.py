"""morai_bridge and morai_sim as a new user starts them (installed executables, subprocess):
values refused at start with one line, busy ports named, and the emulator's rear steering."""
import math
import select
import socket
import subprocess
import time

import pytest

from conftest import assert_refused_at_start, LOCAL_ENV, free_udp_ports, one_line_naming
from conftest import run_installed as run
from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.morai.emulator.server import RECV_PORTS, SEND_PORTS
from ros_sim_bridge.tools.launcher import executable


# -- morai_bridge ------------------------------------------------------------------------------

@pytest.mark.parametrize('name, value', [
    ('listen_port.ego_status', 70000),          # an OverflowError traceback before
    ('listen_port.collision', -5),
    ('listen_port.multi_ego_setting', 65536),
    ('sim_port.ctrl_cmd', 70000),
    ('sim_port.scenario_load', -2),
    ('receive_buffer_bytes', -1),
    ('latency_window', 0)])
def test_bridge_refuses_a_bad_port_or_size_with_one_fatal_line(name, value):
    assert_refused_at_start('morai_bridge', name, value)


# -- morai_sim -----------------------------------------------------------------------------------

@pytest.mark.parametrize('args, option', [
    (['--rate', '0'], '--rate'), (['--rate', 'nan'], '--rate'), (['--rate', '-3'], '--rate'),
    (['--duration', '-1'], '--duration'), (['--collision-period', 'nan'], '--collision-period'),
    (['--ego-status-port', '70000'], '--ego-status-port'),
    (['--ego-status-port', '0'], '--ego-status-port'),
    (['--ctrl-cmd-listen-port', '70000'], '--ctrl-cmd-listen-port'),
    (['--multi-ego-setting-send-port', '65536'], '--multi-ego-setting-send-port')])
def test_sim_bad_argument_is_one_line_and_exit_2(args, option):
    code, out = run('morai_sim', '--duration', '3', *args, timeout=30)
    assert code == 2, out
    one_line_naming(out, 'morai_sim:', option)


def test_sim_unknown_log_level_is_an_argparse_error():
    code, out = run('morai_sim', '--duration', '3', '--log-level', 'loud', timeout=30)
    assert code == 2, out
    assert 'loud' in one_line_naming(out, 'error', '--log-level').lower()


def test_sim_busy_port_is_named_and_exit_1():
    off = [a for n in RECV_PORTS for a in (f'--{n.replace("_", "-")}-listen-port', '-1')]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as holder:
        holder.bind(('127.0.0.1', 0))
        port = holder.getsockname()[1]
        code, out = run('morai_sim', *off, '--ctrl-cmd-listen-port', str(port),
                        '--duration', '3', timeout=30)
    assert code == 1, out
    one_line_naming(out, 'morai_sim', f'127.0.0.1:{port}', '--ctrl-cmd-listen-port')


# -- rear steering (26.R1) ---------------------------------------------------------------------

def ego_rear_steer_after(cmd: morai.CtrlCmd) -> float:
    """Run morai_sim --release 26.R1, send ``cmd`` to its Ctrl Cmd port until an ego216 status
    arrives that was produced after it; that status's rear_steer (deg)."""
    status_port = free_udp_ports(2)
    ctrl_port = status_port + 1
    args = ['--release', '26.R1', '--rate', '50', '--duration', '30']
    args += [a for n in SEND_PORTS for a in (f'--{n.replace("_", "-")}-port', '-1')]
    args += [a for n in RECV_PORTS for a in (f'--{n.replace("_", "-")}-listen-port', '-1')]
    args += ['--ego-status-port', str(status_port), '--ctrl-cmd-listen-port', str(ctrl_port)]
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(('127.0.0.1', status_port))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    proc = subprocess.Popen([str(executable('morai_sim')), *args], env=LOCAL_ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20.0
        applied = 0
        while time.monotonic() < deadline:
            tx.sendto(morai.encode_ctrl_cmd(cmd), ('127.0.0.1', ctrl_port))
            ready, _, _ = select.select([rx], [], [], 0.1)
            if not ready:
                continue
            st = morai.decode_ego_status(rx.recvfrom(65535)[0])
            assert st.layout == 'ego216'
            if st.ctrl_mode == cmd.ctrl_mode and st.gear == cmd.gear:   # the command applies
                applied += 1
                if applied >= 3:                                       # … for some steps
                    return st.rear_steer
        raise AssertionError('no ego status after the command within 20 s')
    finally:
        rx.close()
        tx.close()
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 0 and 'Traceback' not in err, err


@pytest.mark.parametrize('rear, degrees', [
    (0.5, 5.0),             # half of the emulator's 10° rear wheel angle
    (-1.0, -10.0),
    (None, 0.0)])           # the 55-byte form: no rear steering
def test_sim_rear_wheel_angle_follows_the_ctrl_cmd(rear, degrees):
    cmd = morai.CtrlCmd(ctrl_mode=2, gear=4, cmd_type=1, accel=0.2, steering=0.1,
                        rear_steering=rear)
    assert ego_rear_steer_after(cmd) == pytest.approx(degrees, abs=1e-4)


def test_scene_yaw_rate_with_rear_steering():
    """Kinematic bicycle with both axles steered: ψ' = v / L · (tan δf − tan δr)."""
    from ros_sim_bridge.morai.emulator.scene import MoraiScene
    scene = MoraiScene('26.R1', collision_period=0.0)
    scene.apply('ctrl_cmd', morai.CtrlCmd(ctrl_mode=2, gear=4, cmd_type=2, velocity=36.0,
                                          steering=0.25, rear_steering=-0.5))
    for _ in range(200):
        scene.step(0.05)
    e = scene.ego
    front, rear = math.radians(0.25 * 40.0), math.radians(-0.5 * 10.0)   # 10° and −5°
    assert e.yaw_rate == pytest.approx(e.v / 2.7 * (math.tan(front) - math.tan(rear)))
    assert scene.ego_status().rear_steer == pytest.approx(-5.0)
