"""The replay world (ROS-free): Unreal → REP-103 by SUPPLEMENT §5.4 with hand-computed values,
interpolation between frames (§5.5), events applied forward and rebuilt on a backward seek."""
import io
import math

import numpy as np
import pytest

from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.generator import SENSOR_OFFSET, Scene, write
from ros_sim_bridge.carla.world import World, ue_to_rep103, ue_velocity_to_rep103


def test_units_and_axes_hand_computed():
    xyz, q = ue_to_rep103([100.0, 200.0, 300.0], [0.0, 0.0, 90.0])
    assert xyz.tolist() == [1.0, -2.0, 3.0]
    h = math.sqrt(0.5)   # Unreal yaw +90° (towards +Y, right) is −90° about +z in ENU
    assert q.tolist() == pytest.approx([h, 0.0, 0.0, -h])
    _, q = ue_to_rep103([0, 0, 0], [0.0, 30.0, 0.0])       # pitch up 30° → −30° about y
    assert q.tolist() == pytest.approx([math.cos(-math.pi / 12), 0, math.sin(-math.pi / 12), 0])
    _, q = ue_to_rep103([0, 0, 0], [20.0, 0.0, 0.0])       # roll keeps its sign
    assert q.tolist() == pytest.approx([math.cos(math.pi / 18), math.sin(math.pi / 18), 0, 0])
    lin, ang = ue_velocity_to_rep103([1.0, 2.0, 3.0], [90.0, 90.0, 180.0])
    assert lin.tolist() == [1.0, -2.0, 3.0]
    assert ang.tolist() == pytest.approx([math.pi / 2, -math.pi / 2, -math.pi])


@pytest.fixture(scope='module')
def scene_rec():
    scene = Scene(seconds=8.0, rate=20.0, vehicles=4, walkers=1)
    buf = io.BytesIO()
    write(buf, scene)
    return scene, Recording(buf.getvalue())


def test_interpolation_between_frames(scene_rec):
    scene, rec = scene_rec
    world = World(rec)
    world.advance(rec.frame_at(2.0))
    ids, loc, rot = world.poses(2.0)
    k = ids.tolist().index(scene.hero)
    exact, _, _, _ = scene.vehicle_state(2.0)
    assert np.allclose(loc[k], exact[0], atol=1e-2)          # at a frame: the recorded pose
    ids, loc, rot = world.poses(2.0125)                        # a quarter of the way
    nxt, nrot, _, _ = scene.vehicle_state(2.05)
    assert np.allclose(loc[k], exact[0] + 0.25 * (nxt[0] - exact[0]), atol=1e-2)
    ids, loc2, _ = world.poses(2.0125, interpolate=False)
    assert np.allclose(loc2[k], exact[0], atol=1e-2)
    # yaw crossing ±180° goes the short way
    assert abs(rot[k, 2]) <= 180.0 + 1e-6


def test_events_forward_and_backward(scene_rec):
    scene, rec = scene_rec
    world = World(rec)
    ch = world.advance(0)
    assert scene.hero in ch.added and world.hero() == scene.hero
    assert world.actors[scene.hero + SENSOR_OFFSET].parent == scene.hero
    world.advance(scene.collision_frames()[0] - 1)       # a far jump: rebuilt from the index
    ch = world.advance(scene.collision_frames()[-1])     # then frame by frame
    assert not ch.reset and len(ch.collisions) == 2 * len(scene.collision_frames())
    ch = world.advance(scene.destroy_frame)
    assert ch.removed == [scene.destroyed] and scene.destroyed not in world.actors
    ch = world.advance(10)                                     # backwards: rebuilt
    assert ch.reset and ch.added == [scene.destroyed] and ch.removed == []
    assert world.actors[scene.hero + SENSOR_OFFSET].parent == scene.hero
    assert world.record('AnimVehicle', scene.hero)['gear'] == 1
    assert world.actors[scene.hero].box == ((0.0, 0.0, 75.0), (235.0, 95.0, 75.0))
