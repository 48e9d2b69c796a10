"""carla/ros/frame_cdr.py, the one conversion of the replayer and to-bag: to-bag's blocks of
many frames give, byte for byte, the replayer's one-frame messages at each frame (its poses
given as :meth:`World.poses` makes them), whatever the block size, over a generated scene
(parenting, a destroyed actor, collisions, cycling traffic lights) and the real recordings;
every message is CDR that rclpy reads back to the same bytes; the generated scene's numbers
are the generator's formulas (Scene), the units of SUPPLEMENT §5.4."""
import io

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from conftest import shared_path
from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.emulator.scene import SENSOR_OFFSET, Scene
from ros_sim_bridge.carla.emulator.writer import write
from ros_sim_bridge.carla.ros.frame_cdr import KINDS, FrameCdr, Frames
from ros_sim_bridge.carla.world import World
from ros_sim_bridge.msg import (CarlaActorList, CarlaCollision, CarlaTrafficLightList,
                                CarlaVehicleControlList)
from ros_sim_bridge.ros.stamps import seconds_to_stamp

TYPES = {'clock': Clock, 'tf': TFMessage, 'actor_list': CarlaActorList,
         'markers': MarkerArray, 'traffic_lights': CarlaTrafficLightList,
         'vehicle_controls': CarlaVehicleControlList, 'odometry': Odometry,
         'collisions': CarlaCollision, 'collision_markers': MarkerArray}


def node_frame(world, t, removed, collisions, frames, cdr=None):
    """What the replayer publishes at a frame's own time, its poses as recorded (no
    interpolation): ``[(kind, bytes)]``."""
    cdr = cdr or FrameCdr(frames, block=1)
    _, loc, rot = world.poses(None)
    return [(k, bytes(d)) for k, d in cdr.frame(world, seconds_to_stamp(t), removed,
                                                  collisions, (loc, rot))]


def compare(rec, block, frames=None, every=1, on_frame=None):
    """to-bag's path (blocks of ``block``) for every frame; the replayer's for every
    ``every``-th one and each frame that deletes actors or has collisions: the same kinds in
    the same order, the same bytes, and rclpy re-serialises each to its length.  Returns the
    messages compared per kind; ``on_frame(i, world, {kind: message})`` sees each."""
    frames = frames or Frames()
    world = World(rec)
    bag = FrameCdr(frames, block=block)
    node = FrameCdr(frames, block=1)
    got, want = [], []
    for i in range(len(rec)):
        changes = world.advance(i)
        t = float(rec.elapsed[i])
        got += bag.add(world, seconds_to_stamp(t), 1000 + i, changes.removed,
                       changes.collisions)
        want.append(node_frame(world, t, changes.removed, changes.collisions, frames, node)
                    if i % every == 0 or changes.removed or changes.collisions else None)
        if want[-1] is not None and on_frame is not None:
            on_frame(i, world, {k: deserialize_message(d, TYPES[k]) for k, d in want[-1]})
    got += bag.flush()
    assert [t for t, _ in got] == [1000 + i for i in range(len(rec))]
    assert (bag.non_finite_poses, bag.non_finite_kinematics) == \
        (node.non_finite_poses, node.non_finite_kinematics) or every > 1
    checked = {}
    for i, ((_, msgs), ref) in enumerate(zip(got, want)):
        if ref is None:
            continue
        assert [k for k, _ in msgs] == [k for k, _ in ref], i
        kinds = [k for k, _ in msgs]
        assert [k for k in kinds if k in KINDS] == [k for k in KINDS if k in kinds], i
        for (kind, data), (_, expected) in zip(msgs, ref):
            assert bytes(data) == expected, (i, kind)
            again = serialize_message(deserialize_message(expected, TYPES[kind]))
            assert len(again) == len(expected), (i, kind)
            checked[kind] = checked.get(kind, 0) + 1
    return checked


def scene_checks(scene):
    """``on_frame`` checking the generated scene's numbers from its formulas."""
    seen = {'collisions': 0, 'deletes': 0}

    def check(i, world, msgs):
        t = i / scene.rate
        assert msgs['clock'].clock.sec + msgs['clock'].clock.nanosec * 1e-9 == \
            pytest.approx(t, abs=1e-9)
        loc, rot, _, _ = scene.vehicle_state(t)
        alive = scene.vehicle_ids[scene.alive_vehicles(i)].tolist()
        tf = {x.child_frame_id: x for x in msgs['tf'].transforms}
        for k, vid in enumerate(scene.vehicle_ids.tolist()):
            name = 'hero' if vid == scene.hero else f'actor_{vid}'
            assert (name in tf) == (vid in alive), (i, vid)
            if vid in alive:
                v = tf[name].transform.translation          # cm → m, y flipped
                assert [v.x, v.y, v.z] == pytest.approx(
                    (loc[k] * [0.01, -0.01, 0.01]).tolist(), abs=1e-4)
                q = tf[name].transform.rotation               # yaw sense flipped
                yaw = -np.radians(rot[k, 2])
                assert [q.w, q.z] == pytest.approx([np.cos(yaw / 2), np.sin(yaw / 2)],
                                                   abs=1e-5) or \
                    [q.w, q.z] == pytest.approx([-np.cos(yaw / 2), -np.sin(yaw / 2)], abs=1e-5)
        sensor = tf[f'actor_{scene.hero + SENSOR_OFFSET}']
        assert sensor.header.frame_id == 'hero'
        ids = sorted(a.id for a in msgs['actor_list'].actors)
        assert set(alive) <= set(ids) and scene.hero + SENSOR_OFFSET in ids
        states, _ = scene.light_state(t)
        assert [x.state for x in msgs['traffic_lights'].lights] == states.tolist()
        assert len(msgs['vehicle_controls'].controls) == len(alive)
        assert msgs['odometry'].child_frame_id == 'hero'
        deletes = [m for m in msgs['markers'].markers if m.action == 2]
        if deletes:
            seen['deletes'] += 1
            assert {(m.ns, m.id) for m in deletes} == {('carla_actors', scene.destroyed),
                                                      ('carla_labels', scene.destroyed)}
        if 'collisions' in msgs:
            seen['collisions'] += 1
            c = msgs['collisions']
            assert c.actor1_id == scene.hero and c.actor1_is_hero
            spheres = msgs['collision_markers'].markers
            assert spheres and all(m.type == 2 and m.lifetime.sec == 1 for m in spheres)
    return check, seen


@pytest.mark.parametrize('block', [1, 7, 200])
def test_generated_scene_every_topic_every_frame(block):
    scene = Scene(seconds=8.0, rate=10.0, vehicles=5, walkers=2, traffic_lights=3)
    f = io.BytesIO()
    write(f, scene)
    rec = Recording(f.getvalue())
    check, seen = scene_checks(scene)
    checked = compare(rec, block, on_frame=check)
    n_coll = len(scene.collision_frames())
    assert checked == {**{k: scene.frames for k in KINDS}, 'collisions': 2 * n_coll,
                       'collision_markers': n_coll}
    assert seen == {'collisions': n_coll, 'deletes': 1}


def test_frame_names_and_marker_types_follow_the_parameters():
    f = io.BytesIO()
    write(f, Scene(seconds=2.0, rate=10.0, vehicles=3, walkers=1, traffic_lights=1))
    frames = Frames('world', 'car_{id}_{type}', '')
    names = set()

    def look(i, world, msgs):
        names.update((x.header.frame_id, x.child_frame_id) for x in msgs['tf'].transforms)
    assert compare(Recording(f.getvalue()), 5, frames, on_frame=look)['tf'] == 21
    # no hero frame (''): the hero is a car like the others; its sensor under it
    assert {('world', 'car_200_vehicle'), ('car_200_vehicle', 'car_1200_sensor'),
            ('world', 'car_100_traffic_light')} <= names
    assert all(parent == 'world' or parent.startswith('car_') for parent, _ in names)


@pytest.mark.timeout(600)
@pytest.mark.parametrize('parts, every', [
    (('scenario_runner-metrics', 'DistanceToLaneCenter.log'), 8),
    (('scenario_runner-versions', 'v0.9.10__DistanceBetweenVehicles.log'), 25),
    (('scenario_runner-versions', 'v0.9.10__DistanceToLaneCenter.log'), 25),
    (('scenario_runner-versions', 'v0.9.13__DistanceBetweenVehicles.log'), 25)])
def test_real_recordings_every_topic(parts, every):
    """Every 8th frame of the metrics recording, every 25th of the others, and each frame
    with a deletion or a collision."""
    rec = Recording(shared_path('samples', 'carla', *parts).read_bytes())
    checked = compare(rec, 50, every=every)
    assert checked['clock'] >= len(rec) // every and checked['actor_list'] == checked['clock']
    assert checked.get('tf', 0) > 0
