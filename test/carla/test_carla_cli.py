"""carla_log info / collisions / blocked (ROS-free), on a real recording and on generated ones,
output compared line by line with what CARLA's queries print (SUPPLEMENT §5.5)."""
import io
import json

import pytest

from conftest import shared_path
from ros_sim_bridge.carla.cli import main
from ros_sim_bridge.carla.emulator.scene import Scene
from ros_sim_bridge.carla.emulator.writer import write


def run(*argv):
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture(scope='module')
def generated(tmp_path_factory):
    scene = Scene(seconds=45.0, rate=10.0, vehicles=5, walkers=2)
    path = tmp_path_factory.mktemp('carla') / 'scene.log'
    with open(path, 'wb') as f:
        write(f, scene, 'ue4-0.9.13')
    return scene, str(path)


def test_info_of_the_real_recording():
    path = str(shared_path('samples', 'carla', 'scenario_runner-metrics',
                           'DistanceToLaneCenter.log'))
    code, text = run('info', path)
    lines = text.splitlines()
    assert code == 0
    assert lines[:4] == ['Version: 1', 'Map: Town01', 'Date: 11/23/21 12:39:25', '']
    assert lines[4] == 'Frame 1 at 0 seconds'
    assert ' Create 234: vehicle.lincoln.mkz_2017 (1) at (39250, 19500, 60.7062)' in lines
    assert sum(line.startswith(' Create ') for line in lines) == 183
    assert sum(line.startswith(' Destroy ') for line in lines) == 5
    assert sum(line.startswith(' Parenting ') for line in lines) == 5
    assert lines[-3:] == ['', 'Frames: 432', 'Duration: 12.5282 seconds']
    code, text = run('info', '--json', path)
    doc = json.loads(text)
    assert doc['frames'] == 432 and doc['map'] == 'Town01' and doc['last_frame_id'] == 432
    assert sum(len(f.get('EventAdd', [])) for f in doc['frames_list']) == 183


def test_info_all_of_a_generated_recording(generated):
    scene, path = generated
    code, text = run('info', '--all', path)
    lines = text.splitlines()
    assert code == 0
    assert sum(line.startswith('Frame ') for line in lines) == scene.frames
    n = 1 + scene.vehicles + scene.walkers
    assert lines.count(f' Positions: {n}') == scene.destroy_frame
    assert lines.count(f' Positions: {n - 1}') == scene.frames - scene.destroy_frame
    assert '  Id: 200 Location: (1500, 0, 20) Rotation: (0, 0, 90)' in lines
    assert ' State traffic lights: 2' in lines and '  Id: 100 state: 2 frozen: 0 elapsedTime: 0' \
        in lines
    assert '  Id: 200 Position LowBeam Brake' in lines
    assert ' Physics Control events: 5' in lines and '   mass = 1845' in lines
    assert ' Traffic Light time events: 2' in lines
    assert lines[-2:] == [f'Frames: {scene.frames}', 'Duration: 45 seconds']


def test_collisions_column_for_column(generated):
    scene, path = generated
    t = f'{scene.collision_frames()[0] / scene.rate:8.0f}'
    code, text = run('collisions', path)
    lines = text.splitlines()
    assert lines[4] == ('    Time  Types     Id Actor 1                                 Id '
                        'Actor 2                            ')
    # CARLA: setw(8) fixed 0 time, "  t1 t2 ", setw(6) id, setw(35) left name, twice
    assert lines[5] == f'{t}   v v  {200:>6} {"vehicle.tesla.model3":<35} {201:>6} ' + \
        f'{"vehicle.audi.tt":<35}'
    assert lines[6] == f'{t}   v o  {200:>6} {"vehicle.tesla.model3":<35} 4294967295 ' + ' ' * 35
    assert len(lines) == 10 and lines[-1] == 'Duration: 45 seconds'  # one row per pair
    assert len(run('collisions', path, 'h', 'v')[1].splitlines()) == 9
    assert len(run('collisions', path, 'w', 'a')[1].splitlines()) == 8
    doc = json.loads(run('collisions', '--json', path, 'v', 'o')[1])
    assert [(r['id1'], r['id2'], r['types']) for r in doc['collisions']] == [
        (200, 4294967295, 'v o')]


def test_blocked(generated):
    scene, path = generated
    code, text = run('blocked', path)
    lines = text.splitlines()
    assert lines[4] == '    Time     Id Actor                                 Duration'
    rows = lines[5:-3]
    ids = [int(r.split()[1]) for r in rows]
    assert scene.parked in ids and 1 in ids           # the parked car and the spectator
    assert scene.hero not in ids
    row = rows[ids.index(scene.parked)]
    assert row == f'{0.1:8.0f} {scene.parked:>6} {"vehicle.tesla.model3":<35} {44.9:10.0f}'
    assert run('blocked', path, '--min-time', '50')[1].splitlines()[5] == ''
    doc = json.loads(run('blocked', '--json', path, '--min-distance', '1')[1])
    parked = [r for r in doc['blocked'] if r['id'] == scene.parked][0]
    assert parked['duration'] == pytest.approx(44.9) and parked['time'] == pytest.approx(0.1)


def test_bad_files(tmp_path, capsys):
    bad = tmp_path / 'bad.log'
    bad.write_bytes(b'\x01\x00\x0e\x00NOT_A_RECORDER' + b'\0' * 16)
    assert run('info', str(bad))[0] == 2
    assert 'not a CARLA recorder' in capsys.readouterr().err
    assert run('info', str(tmp_path / 'missing.log'))[0] == 2
    empty = tmp_path / 'empty.log'
    empty.write_bytes(b'')
    assert run('info', str(empty))[0] == 2
    assert f'{empty}: InfoHeader @0: empty recording, no CARLA header' in capsys.readouterr().err
    short = tmp_path / 'short.log'
    short.write_bytes(b'\x01\x00\x0e\x00CARLA_REC')
    assert run('info', str(short))[0] == 2
    assert 'recording of 13 B is shorter than its CARLA header' in capsys.readouterr().err
    scene = Scene(seconds=2.0)
    data = io.BytesIO()
    write(data, scene)
    cut = tmp_path / 'cut.log'
    cut.write_bytes(data.getvalue()[:-40])
    code, text = run('info', str(cut))
    assert code == 0 and 'cut here' in capsys.readouterr().err
    assert text.splitlines()[-2] == f'Frames: {scene.frames}'


@pytest.mark.parametrize('layout', ['ue5', 'ue4-0.9.15'])
def test_info_all_prints_the_newer_packets(tmp_path, layout):
    scene = Scene(seconds=1.0, vehicles=2, walkers=1)
    path = tmp_path / f'{layout}.log'
    with open(path, 'wb') as f:
        write(f, scene, layout)
    code, text = run('info', '--all', str(path))
    lines = text.splitlines()
    assert code == 0 and ' Frame counter: 1000' in lines and ' Visual time: 0' in lines
    assert ' Walkers Bones: 1' in lines
    bone = '     Bone: "crl_head__C" relative: Loc(0, 0, 160)'
    assert any(line.startswith(bone) for line in lines)
    assert ' Vehicle wheel animations: 2' in lines
    if layout == 'ue5':
        assert ' Vehicle door animations: 1' in lines and '  Doors opened:  Trunk ' in lines
        assert ' Physics Control events: 2' in lines and '   max_torque = 300' in lines
        assert '   reverse_gear_ratios = 2.86' in lines
        assert any(line.startswith('    wheel 3: axle_type 1 offset (-150, 80, 30) ')
                   for line in lines)
    doc = json.loads(run('info', '--all', '--json', str(path))[1])
    assert doc['frames'] == scene.frames and doc['frames_list'][0]['FrameCounter'] == 1000


@pytest.fixture(scope='module')
def long_log(tmp_path_factory):
    """A recording whose `info --all` is megabytes of text."""
    path = tmp_path_factory.mktemp('carla_long') / 'long.log'
    with open(path, 'wb') as f:
        write(f, Scene(seconds=60.0, rate=20.0, vehicles=10, walkers=2), 'ue4-0.9.13')
    return str(path)


@pytest.mark.parametrize('sig, ignored', [('SIGINT', False), ('SIGTERM', False),
                                          ('SIGINT', True)])
def test_info_all_stops_printing_on_a_stop_signal_and_exits_0(long_log, sig, ignored):
    """The installed carla_log, stopped while it prints (its reader has stopped reading, so
    it waits on the pipe): exit 0, no traceback, the footer never printed.  ``ignored``: as a
    background job of a script, which inherits SIGINT ignored."""
    import signal
    import subprocess
    import time
    from ros_sim_bridge.tools.launcher import executable

    def child():
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    proc = subprocess.Popen([str(executable('carla_log')), 'info', '--all', long_log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=child)
    try:
        head = proc.stdout.read(100_000)
        assert head.startswith(b'Version: 1')
        time.sleep(0.3)                      # the pipe fills: it is in the middle of printing
        proc.send_signal(getattr(signal, sig))
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert b'Traceback' not in err
    text = head + rest
    assert b'\nDuration: ' not in text and len(text) < 1_000_000
