"""MORAI emulator: scene logic (pure, stepped) and its UDP front end on 127.0.0.1 only."""
from __future__ import annotations

import math
import socket
import threading
import time

import numpy as np
import pytest

from ros_sim_bridge.core import binary
from ros_sim_bridge.morai import codec as morai
from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.morai.emulator import cli, scene as sim_scene, server
from ros_sim_bridge.morai.emulator.scene import MoraiScene
from ros_sim_bridge.morai.emulator.server import MoraiEmulator


def run(scene, seconds, dt=0.05):
    for _ in range(int(round(seconds / dt))):
        scene.step(dt)


def command(scene, **kw):
    kw.setdefault('ctrl_mode', 2)
    kw.setdefault('gear', 4)
    scene.handle_datagram(morai.encode_ctrl_cmd(morai.CtrlCmd(**kw)))


def status(scene):
    """The ego status as a client sees it (through the wire)."""
    return morai.decode_ego_status(scene.outputs()['ego_status'])


# -- ego dynamics -----------------------------------------------------------------------------

def test_ego_idle_until_commanded():
    scene = MoraiScene()
    run(scene, 2.0)
    st = status(scene)
    assert st.signed_velocity == 0.0 and st.pos_x == 0.0 and st.gear == 1 and st.ctrl_mode == 1


def test_throttle_speeds_up_and_brake_stops_without_reversing():
    scene = MoraiScene()
    command(scene, cmd_type=1, accel=0.5)
    run(scene, 1.0)
    v1 = status(scene).signed_velocity
    run(scene, 2.0)
    st = status(scene)
    assert 0 < v1 < st.signed_velocity            # km/h, rising
    assert st.signed_velocity / 3.6 == pytest.approx(3 * 1.5, rel=0.1)   # 0.5 × 3 m/s² for 3 s
    assert st.pos_x > 5 and abs(st.pos_y) < 1e-6 and st.accel == 0.5 and st.gear == 4
    command(scene, cmd_type=1, brake=1.0)
    run(scene, 3.0)
    st = status(scene)
    assert st.signed_velocity == 0.0 and st.brake == 1.0


@pytest.mark.parametrize('steering, sign', [(0.5, 1), (-0.5, -1)])
def test_steering_turns_the_ego(steering, sign):
    scene = MoraiScene()
    command(scene, cmd_type=2, velocity=20.0)
    run(scene, 3.0)
    assert abs(status(scene).heading) < 1e-6
    command(scene, cmd_type=2, velocity=20.0, steering=steering)
    run(scene, 2.0)
    st = status(scene)
    assert sign * st.heading > 20                  # deg, counter-clockwise for left
    assert sign * st.pos_y > 1.0
    assert st.steer == pytest.approx(sign * 20.0, abs=1e-4)   # 0.5 × 40° max wheel angle
    # yaw rate = v / L · tan(δ)
    v = st.signed_velocity / 3.6
    assert st.angular_velocity_z == pytest.approx(
        math.degrees(v / 2.7 * math.tan(math.radians(sign * 20.0))), rel=1e-3)


def test_velocity_mode_converges_up_and_down():
    scene = MoraiScene()
    command(scene, cmd_type=2, velocity=36.0)
    run(scene, 15.0)
    assert status(scene).signed_velocity == pytest.approx(36.0, abs=0.1)
    command(scene, cmd_type=2, velocity=18.0)
    run(scene, 15.0)
    assert status(scene).signed_velocity == pytest.approx(18.0, abs=0.1)


def test_acceleration_mode():
    scene = MoraiScene()
    command(scene, cmd_type=3, acceleration=1.0)
    run(scene, 4.0)
    st = status(scene)
    assert st.signed_velocity / 3.6 == pytest.approx(4.0, rel=0.05)
    assert st.accel_x == pytest.approx(1.0, abs=0.1)
    command(scene, cmd_type=3, acceleration=-2.0)
    run(scene, 4.0)
    assert status(scene).signed_velocity == 0.0


def test_reverse_parking_and_keyboard_mode():
    scene = MoraiScene()
    command(scene, gear=2, cmd_type=1, accel=0.5)
    run(scene, 2.0)
    st = status(scene)
    assert st.signed_velocity < -5 and st.pos_x < 0 and st.gear == 2
    command(scene, gear=1, cmd_type=1, accel=1.0)
    run(scene, 0.5)
    assert status(scene).signed_velocity == 0.0
    keyboard = MoraiScene()
    command(keyboard, ctrl_mode=1, cmd_type=1, accel=1.0)
    run(keyboard, 2.0)
    assert status(keyboard).signed_velocity == 0.0 and status(keyboard).ctrl_mode == 1


# -- world ------------------------------------------------------------------------------------

def test_objects_are_sorted_and_moving():
    scene = MoraiScene()
    info0 = morai.decode_object_info(scene.outputs()['object_info'])
    assert info0.layout == 'obj106_ts'
    present = info0.present()
    assert len(present) == 9 and info0.empty.sum() == 11
    assert set(present['obj_type'].tolist()) == {0, 1, 2}
    d = np.hypot(present['pos_x'], present['pos_y'])
    assert np.all(np.diff(d) >= 0)                  # nearest first (ego at the origin)
    run(scene, 1.0)
    info1 = morai.decode_object_info(scene.outputs()['object_info'])
    npc0 = info0.objects[info0.objects['obj_id'] == 1][0]
    npc1 = info1.objects[info1.objects['obj_id'] == 1][0]
    assert npc1['pos_x'] > npc0['pos_x'] and npc1['velocity_x'] > 0
    assert (info1.sec, info1.nsec) == (1, 0)


def test_traffic_light_cycles_and_commands_override():
    scene = MoraiScene()
    seen = set()
    for _ in range(300):
        scene.step(0.1)
        seen.add(morai.decode_traffic_light_status(scene.outputs()['traffic_light_status']).status)
    assert {1, 4, 16} <= seen
    scene.handle_datagram(morai.encode_set_traffic_light(
        morai.SetTrafficLight(sim_scene.TL_INDEX, 1 | 32)))
    run(scene, 1.0)
    assert morai.decode_traffic_light_status(scene.outputs()['traffic_light_status']).status == 33
    scene.handle_datagram(morai.encode_set_intersection(morai.SetIntersectionStatus(1, 2, 1.5)))
    out = scene.outputs()
    st = morai.decode_intersection_status(out['intersection_status'])
    assert (st.index, st.status, st.status_time) == (1, 2, 1.5)
    assert morai.decode_traffic_light_status(out['traffic_light_status']).status == 1


def test_npcs_stop_for_red():
    scene = MoraiScene(collision_period=0)
    scene.handle_datagram(morai.encode_set_intersection(morai.SetIntersectionStatus(1, 2, 0.0)))
    for _ in range(8):      # hold red (phases 2 and 3) for 8 s
        run(scene, 1.0)
        scene.handle_datagram(morai.encode_set_intersection(
            morai.SetIntersectionStatus(1, 2, 0.0)))
    east = scene.npcs[scene.npcs['dir'] == 1]
    waiting = east[(east['x'] > 60) & (east['x'] < sim_scene.STOP_LINE_X)]
    assert len(waiting) >= 1
    lead = waiting[np.argmax(waiting['x'])]
    assert lead['v'] < 0.5 and lead['x'] > sim_scene.STOP_LINE_X - 5.0


def test_ego_collides_with_obstacle_ahead():
    scene = MoraiScene(collision_period=0)
    command(scene, cmd_type=2, velocity=90.0)
    hit = None
    for _ in range(400):
        scene.step(0.05)
        col = morai.decode_collision(scene.outputs()['collision'])
        if len(col.present()):
            hit = col
            break
    assert hit is not None and hit.layout == 'col148'
    rec = hit.present()[0]
    assert (rec['obj_id'], rec['obj_type']) == (203, 2)
    assert 0 < rec['pos_x'] < 4 and rec['global_offset_x'] == 250.0
    assert any('collided with object 203' in text for _, text in scene.events)


def test_scripted_collisions():
    scene = MoraiScene(collision_period=5.0)
    run(scene, 4.9)
    out = scene.outputs()
    assert morai.decode_collision(out['collision']).empty.all()
    assert morai.decode_vehicle_collision(out['vehicle_collision']).empty.all()
    run(scene, 0.2)
    assert len(morai.decode_collision(scene.outputs()['collision']).present()) == 1
    run(scene, 2.5)
    vc = morai.decode_vehicle_collision(scene.outputs()['vehicle_collision'])
    assert vc.present().shape == (1, 2) and vc.present()['obj_type'].tolist() == [[1, 1]]


def test_other_commands_are_applied_or_logged():
    scene = MoraiScene()
    scene.handle_datagram(morai.encode_lamp_control(morai.LampControl(1, 1)))
    assert (scene.turn_signal, scene.emergency_signal) == (1, 1)
    scene.handle_datagram(morai.encode_sensor_control(morai.SensorControl(2, 1.0, 0, 1.5)))
    assert scene.sensor_poses[2].pos_z == 1.5
    scene.handle_datagram(morai.encode_save_sensor_data(morai.SaveSensorData(True, 'f', '/d')))
    scene.handle_datagram(morai.encode_scenario_load(morai.ScenarioLoad('s.json', set_pause=True)))
    t = scene.time
    run(scene, 1.0)
    assert scene.time == t and scene.paused
    scene.handle_datagram(morai.encode_scenario_load(morai.ScenarioLoad('s.json')))
    run(scene, 1.0)
    assert scene.time == pytest.approx(t + 1.0)
    egos = np.zeros(1, morai.MULTI_EGO_DTYPE)
    egos['pos_x'], egos['heading'] = 42.0, 90.0
    scene.handle_datagram(morai.encode_multi_ego(morai.MultiEgoSetting(1, 0, egos)))
    st = status(scene)
    assert st.pos_x == 42.0 and st.heading == pytest.approx(90.0)
    texts = ' '.join(text for _, text in scene.events)
    for word in ('lamps', 'sensor 2', 'save sensor data', "scenario load 's.json'",
                 'multi ego'):
        assert word in texts
    assert scene.stats['lamp_control'] == 1 and scene.stats['scenario_load'] == 2


def test_bad_datagrams_are_rejected_and_counted():
    scene = MoraiScene()
    with pytest.raises(CodecError):
        scene.handle_datagram(b'garbage')
    with pytest.raises(CodecError) as err:
        scene.handle_datagram(scene.outputs()['ego_status'])
    assert err.value.kind == binary.WRONG_SOURCE
    bad_gear = bytearray(morai.encode_ctrl_cmd(morai.CtrlCmd()))
    bad_gear[31] = 9
    with pytest.raises(CodecError):
        scene.handle_datagram(bytes(bad_gear))
    assert scene.stats['error_bad_magic'] == 1 and scene.stats['error_bad_value'] == 1
    assert scene.cmd is None


@pytest.mark.parametrize('release', list(sim_scene.RELEASES))
def test_release_presets(release):
    scene = MoraiScene(release)
    out = scene.outputs()
    ego_layout, obj_layout, col_layout = sim_scene.RELEASES[release]
    assert morai.decode_ego_status(out['ego_status']).layout == ego_layout
    assert morai.decode_object_info(out['object_info']).layout == obj_layout
    assert morai.decode_collision(out['collision']).layout == col_layout
    assert len(out['ego_status']) in (121, 123, 161, 181, 229, 245)


def test_bad_layout_names_are_refused():
    with pytest.raises(ValueError):
        MoraiScene('nope')
    with pytest.raises(ValueError):
        MoraiScene(ego_layout='ego999')


# -- sockets (127.0.0.1 only) -----------------------------------------------------------------

def _receiver():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(('127.0.0.1', 0))
    sock.settimeout(3.0)
    return sock


def test_emulator_over_udp_loopback():
    rx_status, rx_objects = _receiver(), _receiver()
    emu = MoraiEmulator(MoraiScene(), send_ports={
        'ego_status': rx_status.getsockname()[1], 'object_info': rx_objects.getsockname()[1]},
        recv_ports={'ctrl_cmd': 0, 'lamp_control': 0}, rate=50.0)
    thread = threading.Thread(target=emu.serve, kwargs={'duration': 10.0}, daemon=True)
    thread.start()
    try:
        data, peer = rx_status.recvfrom(65535)
        assert peer[0] == '127.0.0.1'
        first = morai.decode_ego_status(data)
        assert first.layout == 'ego200' and first.signed_velocity == 0.0
        assert morai.decode_object_info(rx_objects.recvfrom(65535)[0]).layout == 'obj106_ts'
        assert set(emu.bound_ports) == {'ctrl_cmd', 'lamp_control'}
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
            cmd = morai.encode_ctrl_cmd(morai.CtrlCmd(2, 4, 1, accel=1.0))
            deadline = time.monotonic() + 5.0
            speed = 0.0
            while time.monotonic() < deadline and speed < 1.0:
                tx.sendto(cmd, ('127.0.0.1', emu.bound_ports['ctrl_cmd']))
                speed = morai.decode_ego_status(rx_status.recvfrom(65535)[0]).signed_velocity
            tx.sendto(b'not a morai datagram', ('127.0.0.1', emu.bound_ports['lamp_control']))
        assert speed >= 1.0
    finally:
        emu.stop()
        thread.join(5.0)
        emu.close()
        rx_status.close()
        rx_objects.close()
    assert not thread.is_alive()
    assert emu.scene.stats['ctrl_cmd'] >= 1


def test_cli_defaults_are_morai_example_ports_on_loopback():
    args = cli.build_parser().parse_args([])
    assert args.host == '127.0.0.1' and args.bind == '127.0.0.1'
    assert (args.ego_status_port, args.object_info_port, args.traffic_light_status_port,
            args.collision_port, args.intersection_status_port, args.vehicle_collision_port) == \
        (909, 7505, 7502, 9092, 9102, 9108)
    assert (args.ctrl_cmd_listen_port, args.set_traffic_light_listen_port,
            args.set_intersection_listen_port, args.lamp_control_listen_port,
            args.save_sensor_data_listen_port, args.scenario_load_listen_port,
            args.sensor_control_listen_port, args.multi_ego_setting_listen_port) == \
        (9093, 7607, 9132, 9097, 9105, 9099, 9103, 7604)
    assert args.release == 'newest' and args.multi_ego_setting_send_port == -1


def test_main_runs_briefly_on_ephemeral_ports():
    rx = _receiver()
    port = str(rx.getsockname()[1])
    argv = ['--duration', '0.3', '--rate', '50', '--release', 'document', '--log-level', 'ERROR']
    for name in server.SEND_PORTS:
        argv += [f'--{name.replace("_", "-")}-port', port if name == 'ego_status' else '-1']
    for name in server.RECV_PORTS:
        argv += [f'--{name.replace("_", "-")}-listen-port', '0']
    try:
        assert cli.main(argv) == 0
        data = rx.recvfrom(65535)[0]
    finally:
        rx.close()
    assert len(data) == 121 and morai.decode_ego_status(data).layout == 'ego94_notail'
