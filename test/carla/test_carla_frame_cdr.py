"""to-bag's CDR fast path (carla/ros/frame_cdr.py) against the node's path: for every frame of
a generated scene (parenting, a destroyed actor, collisions, cycling traffic lights) and of
the real recordings, every per-frame message deserialised by rclpy equals the message the
conversions build for the node at that frame, serialised by rclpy."""
import io

import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from conftest import message_differences as same, shared_path
from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.generator import Scene, write
from ros_sim_bridge.carla.ros import conversions as convert
from ros_sim_bridge.carla.ros.frame_cdr import KINDS, FrameCdr
from ros_sim_bridge.carla.world import World
from ros_sim_bridge.ros.stamps import seconds_to_stamp


def node_messages(world, t, removed, frames):
    """What the node's conversions build at this frame (as to-bag's old path did)."""
    stamp = seconds_to_stamp(t)
    snap = convert.Snapshot.of(world, None)      # each frame's recorded poses, as to-bag
    msgs = {'clock': Clock(clock=stamp)}
    if world.actors:
        msgs['tf'] = TFMessage(transforms=convert.transforms(world, snap, stamp, frames))
    msgs['actor_list'] = convert.actor_list(world, snap, stamp, frames)
    msgs['markers'] = convert.actor_markers(world, snap, stamp, frames, removed)
    msgs['traffic_lights'] = convert.traffic_lights(world, snap, stamp, frames)
    msgs['vehicle_controls'] = convert.vehicle_controls(world, stamp, frames)
    hero = world.hero()
    odometry = None if hero is None else convert.hero_odometry(world, snap, hero, stamp, frames)
    if odometry is not None:        # None: the hero's pose or velocity not finite
        msgs['odometry'] = odometry
    return msgs


def compare(rec, block, frames=None, every=1):
    """Fast path for every frame; the node's messages for every ``every``-th one and each
    frame that deletes actors."""
    frames = frames or convert.Frames()
    world = World(rec)
    cdr = FrameCdr(frames, block=block)
    got, want = [], []
    for i in range(len(rec)):
        changes = world.advance(i)
        t = float(rec.elapsed[i])
        got += cdr.add(world, seconds_to_stamp(t), 1000 + i, changes.removed,
                       [('after', b'x')] if i % 5 == 0 else [])
        want.append(node_messages(world, t, changes.removed, frames)
                    if i % every == 0 or changes.removed else None)
    got += cdr.flush()
    assert [t for t, _ in got] == [1000 + i for i in range(len(rec))]
    checked = {}
    for i, ((_, msgs), ref) in enumerate(zip(got, want)):
        if ref is None:
            continue
        kinds = [k for k, _ in msgs]
        expected = [k for k in KINDS if k in ref]
        if i % 5 == 0:
            expected.insert(expected.index('vehicle_controls') + 1, 'after')
        assert kinds == expected, i
        for kind, data in msgs:
            if kind == 'after':
                assert data == b'x'
                continue
            cls = type(ref[kind])
            published = deserialize_message(serialize_message(ref[kind]), cls)
            fast = deserialize_message(bytes(data), cls)
            assert same(fast, published) == [], (i, kind)
            checked[kind] = checked.get(kind, 0) + 1
    return checked


@pytest.mark.parametrize('block', [1, 7, 200])
def test_generated_scene_every_topic_every_frame(block):
    scene = Scene(seconds=8.0, rate=10.0, vehicles=5, walkers=2, traffic_lights=3)
    f = io.BytesIO()
    write(f, scene)
    rec = Recording(f.getvalue())
    checked = compare(rec, block)
    assert checked == {k: scene.frames for k in KINDS}
    # the scene holds what the fast path must get right
    world = World(rec)
    removed = parented = 0
    for i in range(len(rec)):
        ch = world.advance(i)
        removed += len(ch.removed)
        parented += any(a.parent in world.actors for a in world.actors.values())
    assert removed and parented


def test_frame_names_and_marker_types_follow_the_parameters():
    f = io.BytesIO()
    write(f, Scene(seconds=2.0, rate=10.0, vehicles=3, walkers=1, traffic_lights=1))
    frames = convert.Frames('world', 'car_{id}_{type}', '')
    assert compare(Recording(f.getvalue()), 5, frames)['tf'] == 21


@pytest.mark.timeout(600)
@pytest.mark.parametrize('parts, every', [
    (('scenario_runner-metrics', 'DistanceToLaneCenter.log'), 8),
    (('scenario_runner-versions', 'v0.9.10__DistanceBetweenVehicles.log'), 25),
    (('scenario_runner-versions', 'v0.9.10__DistanceToLaneCenter.log'), 25),
    (('scenario_runner-versions', 'v0.9.13__DistanceBetweenVehicles.log'), 25)])
def test_real_recordings_every_topic(parts, every):
    """Every 8th frame of the metrics recording, every 25th of the others, and each frame
    with a deletion (the node's rclpy path is what takes the time here)."""
    rec = Recording(shared_path('samples', 'carla', *parts).read_bytes())
    checked = compare(rec, 50, every=every)
    assert checked['clock'] >= len(rec) // every and checked['actor_list'] == checked['clock']
    assert checked.get('tf', 0) > 0
