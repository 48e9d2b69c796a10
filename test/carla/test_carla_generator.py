"""The recording generator: what our decoder reads equals what the scripted Scene says (its
own formulas, not the encoder), for every layout; the bytes it writes follow SUPPLEMENT §5.2–5.3
as read here with plain struct (independent of the codec)."""
import io
import struct

import numpy as np
import pytest

from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.emulator.scene import LAYOUTS, SENSOR_OFFSET, Scene
from ros_sim_bridge.carla.emulator.writer import write


def generated(layout, **kw):
    scene = Scene(seconds=kw.pop('seconds', 6.0), **kw)
    buf = io.BytesIO()
    write(buf, scene, layout)
    return scene, buf.getvalue()


@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_decoder_reads_the_scene(layout):
    scene, data = generated(layout)
    rec = Recording(data)
    assert rec.layout.vector == LAYOUTS[layout][0].vector
    if LAYOUTS[layout][1]:
        assert rec.layout.ids == LAYOUTS[layout][0].ids
    assert rec.problems == [] and len(rec) == scene.frames
    assert np.allclose(rec.elapsed, np.arange(scene.frames) / scene.rate)
    assert rec.durations[-1] == -1 and np.allclose(rec.durations[:-1], 1 / scene.rate)
    tol = 1e-2 if layout.startswith('ue4') else 1e-9
    for fr in rec.frames():
        assert fr.errors == [] and fr.unknown == []
        t = fr.elapsed
        pos = fr.get('Position')
        vloc, vrot, _, _ = scene.vehicle_state(t)
        alive = scene.alive_vehicles(fr.index)
        ids = pos['id']
        for k, vid in enumerate(scene.vehicle_ids):
            row = np.flatnonzero(ids == vid)
            assert len(row) == int(alive[k])
            if len(row):
                assert np.allclose(pos['location'][row[0]], vloc[k], atol=tol)
                assert np.allclose(pos['rotation'][row[0]], vrot[k], atol=tol)
        state, elapsed = scene.light_state(t)
        assert fr.get('State')['state'].tolist() == state.tolist()
        assert np.allclose(fr.get('State')['elapsed'], elapsed, atol=1e-4)
        coll = fr.get('Collision')
        if fr.index in scene.collision_frames():
            assert coll[['actor1', 'actor2', 'actor1_hero']].tolist() == [
                (scene.hero, int(scene.vehicle_ids[1]), 1), (scene.hero, 0xFFFFFFFF, 1)]
        else:
            assert len(coll) == 0
        dels = fr.get('EventDel')['id'].tolist()
        assert dels == ([scene.destroyed] if fr.index == scene.destroy_frame else [])
    first = rec.frame(0)
    adds = {a.id: a for a in first.get('EventAdd')}
    assert adds[scene.hero].attribute('role_name') == 'hero'
    assert adds[int(scene.walker_ids[0])].type == 2
    assert adds[int(scene.light_ids[0])].type == 3
    assert first.get('EventParent')[['id', 'parent']].tolist() == [
        (scene.hero + SENSOR_OFFSET, scene.hero)]
    assert len(first.get('BoundingBox')) == scene.vehicles + scene.walkers
    if layout != 'ue5':
        assert len(first.get('PhysicsControl')) == scene.vehicles


def test_generated_bytes_follow_the_spec_read_with_struct():
    scene, data = generated('ue4-0.9.13', seconds=1.0)
    # header: u16 version, u16 len + magic, i64 date, u16 len + map
    version, mlen = struct.unpack_from('<HH', data, 0)
    assert (version, data[4:4 + mlen]) == (1, b'CARLA_RECORDER')
    (date,) = struct.unpack_from('<q', data, 4 + mlen)
    (maplen,) = struct.unpack_from('<H', data, 12 + mlen)
    assert date == scene.date and data[14 + mlen:14 + mlen + maplen] == scene.map_name.encode()
    off = 14 + mlen + maplen
    pid, size = struct.unpack_from('<BI', data, off)
    assert (pid, size) == (0, 24)
    assert struct.unpack_from('<Qdd', data, off + 5) == (1, 1 / scene.rate, 0.0)
    # walk the packets of frame 1 to its Position packet (id 6) and read the hero by hand
    off += 29
    while True:
        pid, size = struct.unpack_from('<BI', data, off)
        if pid == 6:
            break
        off += 5 + size
    (count,) = struct.unpack_from('<H', data, off + 5)
    assert size == 2 + 28 * count
    recs = [struct.unpack_from('<I3f3f', data, off + 7 + 28 * i) for i in range(count)]
    hero = [r for r in recs if r[0] == scene.hero][0]
    loc, rot, _, _ = scene.vehicle_state(0.0)
    assert np.allclose(hero[1:4], loc[0], atol=1e-2) and np.allclose(hero[4:7], rot[0], atol=1e-3)


def test_generator_command_line(tmp_path):
    from ros_sim_bridge.carla.emulator.cli import main
    out = tmp_path / 'g.log'
    assert main([str(out), '--seconds', '2', '--vehicles', '5', '--layout', 'ue5']) == 0
    rec = Recording(out.read_bytes())
    assert len(rec) == 41 and rec.layout.vector == '<f8'


@pytest.mark.parametrize('bad', [['--rate', '0'], ['--vehicles', '0'], ['--seconds', '-1'],
                                 ['--seconds', 'nan'], ['--walkers', '-1'],
                                 ['--traffic-lights', '-2']])
def test_generator_refuses_a_scene_it_cannot_make_in_one_line(bad, tmp_path):
    """Was: a ZeroDivisionError or IndexError traceback, or a file of -19 frames and exit 0."""
    import subprocess
    import sys
    out = tmp_path / 'g.log'
    proc = subprocess.run([sys.executable, '-m', 'ros_sim_bridge.carla.emulator.cli', str(out),
                           *bad], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr, proc.stderr
    assert proc.stderr.count('\n') == 1 and bad[0] in proc.stderr
    assert not out.exists()
