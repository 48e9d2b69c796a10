"""carla_log to-bag: the bag read back with an independent reader (mcap + mcap-ros2-support,
decoding with the schemas stored in the file) equals the decoded recording frame by frame."""
import io
import signal
import subprocess
import time

import numpy as np
import pytest
import yaml

from ros_sim_bridge.carla.cli import main
from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.emulator.scene import SENSOR_OFFSET, Scene
from ros_sim_bridge.carla.emulator.writer import write
from ros_sim_bridge.carla.ros.to_bag import to_bag
from ros_sim_bridge.tools.launcher import executable

SCENE = Scene(seconds=3.0, rate=10.0, vehicles=4, walkers=1, traffic_lights=2)


def read_bag(folder):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    seen = {}
    types = {}
    with open(next(folder.glob('*.mcap')), 'rb') as f:
        for schema, channel, message, decoded in make_reader(
                f, decoder_factories=[DecoderFactory()]).iter_decoded_messages():
            seen.setdefault(channel.topic, []).append((message.log_time, decoded))
            types[channel.topic] = schema.name
    return seen, types


def stamp_ns(msg):
    """The time a message carries: /clock's clock, else its (first) header stamp."""
    if hasattr(msg, 'clock'):
        s = msg.clock
    elif hasattr(msg, 'transforms'):
        s = msg.transforms[0].header.stamp
    elif hasattr(msg, 'markers'):
        if not msg.markers:
            return None
        s = msg.markers[0].header.stamp
    else:
        s = msg.header.stamp
    return s.sec * 10**9 + s.nanosec


def assert_log_time_is_the_stamp(seen):
    """Every message's bag log time is the time it carries (recording time from 0, as the
    node's stamps and /clock), not the recording's date + it."""
    checked = 0
    for topic, items in seen.items():
        for log_time, msg in items:
            ns = stamp_ns(msg)
            if ns is not None:
                assert log_time == ns, topic
                checked += 1
    assert checked


def test_to_bag_equals_the_decoded_recording(tmp_path):
    log = tmp_path / 'scene.log'
    with open(log, 'wb') as f:
        write(f, SCENE)
    out = tmp_path / 'bag'
    text = io.StringIO()
    assert main(['to-bag', str(log), str(out), '--no-progress'], out=text) == 0
    meta = yaml.safe_load((out / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['storage_identifier'] == 'mcap'
    seen, types = read_bag(out)
    assert types == {
        '/clock': 'rosgraph_msgs/msg/Clock', '/tf': 'tf2_msgs/msg/TFMessage',
        '/carla/actor_list': 'ros_sim_bridge/msg/CarlaActorList',
        '/carla/markers': 'visualization_msgs/msg/MarkerArray',
        '/carla/traffic_lights': 'ros_sim_bridge/msg/CarlaTrafficLightList',
        '/carla/vehicle_controls': 'ros_sim_bridge/msg/CarlaVehicleControlList',
        '/carla/collisions': 'ros_sim_bridge/msg/CarlaCollision',
        '/carla/collision_markers': 'visualization_msgs/msg/MarkerArray',
        '/carla/hero/odometry': 'nav_msgs/msg/Odometry'}
    rec = Recording(log.read_bytes())
    n = len(rec)
    assert len(seen['/clock']) == n == SCENE.frames
    assert [t for t, _ in seen['/clock']] == [round(e * 1e9) for e in rec.elapsed]
    assert_log_time_is_the_stamp(seen)
    alive = {}
    for i, fr in enumerate(rec.frames()):
        for a in fr.get('EventAdd', []):
            alive[a.id] = a
        for d in fr.get('EventDel')['id'].tolist():
            alive.pop(d)
        clock = seen['/clock'][i][1].clock
        assert clock.sec + clock.nanosec * 1e-9 == pytest.approx(fr.elapsed, abs=1e-9)
        actors = seen['/carla/actor_list'][i][1].actors
        assert sorted(a.id for a in actors) == sorted(alive)
        tf = {t.child_frame_id: t for t in seen['/tf'][i][1].transforms}
        pos = fr.get('Position')
        for row in pos:
            aid = int(row['id'])
            name = 'hero' if aid == SCENE.hero else f'actor_{aid}'
            tr = tf[name].transform.translation
            assert [tr.x, tr.y, tr.z] == pytest.approx(
                (row['location'].astype(float) * [0.01, -0.01, 0.01]).tolist(), abs=1e-6)
        assert tf[f'actor_{SCENE.hero + SENSOR_OFFSET}'].header.frame_id == 'hero'
        lights = seen['/carla/traffic_lights'][i][1].lights
        assert [lt.state for lt in lights] == fr.get('State')['state'].tolist()
        controls = seen['/carla/vehicle_controls'][i][1].controls
        assert [c.throttle for c in controls] == pytest.approx(
            fr.get('AnimVehicle')['throttle'].tolist())
        markers = seen['/carla/markers'][i][1].markers
        deletes = sorted(m.id for m in markers if m.action == 2)
        assert deletes == ([SCENE.destroyed] * 2 if i == SCENE.destroy_frame else [])
        odom = seen['/carla/hero/odometry'][i][1]
        hero_row = pos[pos['id'] == SCENE.hero][0]
        assert odom.pose.pose.position.x == pytest.approx(hero_row['location'][0] / 100)
    colls = [m for _, m in seen['/carla/collisions']]
    assert len(colls) == 2 * len(SCENE.collision_frames())
    assert {(c.actor1_id, c.actor2_id) for c in colls} == {
        (SCENE.hero, int(SCENE.vehicle_ids[1])), (SCENE.hero, 0xFFFFFFFF)}
    assert '/carla/actor_list' in text.getvalue()


def test_to_bag_decimated(tmp_path):
    log = tmp_path / 'scene.log'
    with open(log, 'wb') as f:
        write(f, SCENE)
    out = tmp_path / 'bag'
    assert main(['to-bag', str(log), str(out), '--no-progress', '--rate', '2']) == 0
    seen, _ = read_bag(out)
    assert_log_time_is_the_stamp(seen)
    times = np.array([m.clock.sec + m.clock.nanosec * 1e-9 for _, m in seen['/clock']])
    assert times[0] == 0 and np.all(np.diff(times) >= 0.5 - 1e-9) and times[-1] == \
        pytest.approx(SCENE.seconds)


PER_FRAME = ('/clock', '/tf', '/carla/actor_list', '/carla/markers', '/carla/traffic_lights',
             '/carla/vehicle_controls', '/carla/hero/odometry')


def assert_first_frames(folder, rec, n):
    """The bag holds frames 0 … n-1 whole: each per-frame topic n times, at their times."""
    seen, _ = read_bag(folder)
    assert [len(seen[t]) for t in PER_FRAME] == [n] * len(PER_FRAME)
    assert [t for t, _ in seen['/clock']] == [round(e * 1e9) for e in rec.elapsed[:n]]
    meta = yaml.safe_load((folder / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['message_count'] == sum(len(v) for v in seen.values())


def test_to_bag_stop_ends_with_a_complete_bag(tmp_path):
    log = tmp_path / 'scene.log'
    with open(log, 'wb') as f:
        write(f, SCENE)
    rec = Recording(log.read_bytes())
    asked = []
    counts = to_bag(rec, str(tmp_path / 'bag'), progress=False,
                    stop=lambda: asked.append(1) or len(asked) > 12)
    assert counts['/clock'] == 12
    assert_first_frames(tmp_path / 'bag', rec, 12)


@pytest.mark.timeout(300)
def test_to_bag_sigint_leaves_a_readable_bag_and_exits_0(tmp_path):
    """The installed carla_log, interrupted while writing: exit 0, the bag closed with every
    frame written before the signal whole."""
    log = tmp_path / 'long.log'
    scene = Scene(seconds=300.0, rate=20.0, vehicles=30, walkers=5, traffic_lights=3)
    with open(log, 'wb') as f:
        write(f, scene)
    out = tmp_path / 'bag'
    proc = subprocess.Popen([str(executable('carla_log')), 'to-bag', str(log), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mcap = out / 'bag.mcap'
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if mcap.exists() and mcap.stat().st_size > 1 << 20:     # frames are being written
            break
        time.sleep(0.005)
    assert proc.poll() is None, 'to-bag ended before the signal'
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert 'interrupted' in stderr and 'Traceback' not in stderr
    rec = Recording(log.read_bytes())
    seen, _ = read_bag(out)
    n = len(seen['/clock'])
    assert 0 < n < len(rec)
    assert_first_frames(out, rec, n)
    assert f'/clock {n}' in stdout


@pytest.mark.timeout(300)
def test_to_bag_signal_right_at_the_end_still_exits_0(tmp_path):
    """SIGTERM (then SIGINT) sent the moment to-bag prints its summary, while it returns and
    the interpreter shuts down: exit 0 every time (a default handler put back too early made
    it 143)."""
    import os
    log = tmp_path / 'scene.log'
    with open(log, 'wb') as f:
        write(f, SCENE)
    env = dict(os.environ, PYTHONUNBUFFERED='1')       # the summary line comes out at once
    codes = []
    for k in range(6):
        out = tmp_path / f'bag{k}'
        proc = subprocess.Popen([str(executable('carla_log')), 'to-bag', str(log), str(out),
                                 '--no-progress'], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        try:
            line = proc.stdout.readline()
            assert line.startswith(f'{out}: /clock '), line
            proc.send_signal(signal.SIGTERM if k % 2 == 0 else signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert 'Traceback' not in err, err
        codes.append(proc.returncode)
    assert codes == [0] * 6


def test_to_bag_decimated_keeps_every_collision_marker(tmp_path):
    """--rate thins frames, not collisions: those of the frames left out go with the next
    frame written, in one collision marker array (so fewer arrays, the same markers)."""
    log = tmp_path / 'scene.log'
    with open(log, 'wb') as f:
        write(f, SCENE)
    markers = {}
    for name, extra in (('full', []), ('thin', ['--rate', '2'])):
        out = tmp_path / name
        assert main(['to-bag', str(log), str(out), '--no-progress', *extra]) == 0
        seen, _ = read_bag(out)
        markers[name] = (len(seen['/carla/collisions']), len(seen['/carla/collision_markers']),
                         sorted((m.ns, m.id) for _, arr in seen['/carla/collision_markers']
                                for m in arr.markers))
    full, thin = markers['full'], markers['thin']
    assert full[0] == thin[0] == 2 * len(SCENE.collision_frames())
    assert full[1] == len(SCENE.collision_frames()) and 1 <= thin[1] <= full[1]
    # per collision frame: hero and vehicle 1, and the hero again (the other is no actor)
    assert thin[2] == full[2] and len(full[2]) == 3 * len(SCENE.collision_frames())
