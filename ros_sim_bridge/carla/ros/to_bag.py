"""``carla_log to-bag``: a recording into a rosbag2 folder (MCAP) with the topics and types the
``carla_replayer`` node publishes, built by the same conversion functions, one message set per
recorded frame (no interpolation).  Header stamps are the recording time (as the node's);
the bag's log times are the recording's date + that time, so players show the real date.
"""
from __future__ import annotations

from typing import Optional

from nav_msgs.msg import Odometry  # noqa: F401 (types written below)
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.ros.bag import BagWriter
from ros_sim_bridge.ros.stamps import seconds_to_stamp
from ..codec import Recording
from ..world import World
from . import conversions as convert


def to_bag(rec: Recording, output: str, *, rate: float = 0.0, progress: bool = True,
           prefix: str = 'carla', frames: Optional[convert.Frames] = None,
           marker_types=(1, 2, 3, 4)) -> dict:
    """Write every frame (or one per 1/``rate`` s of recording time); returns the counts per
    topic."""
    frames = frames or convert.Frames()
    pre = prefix.rstrip('/') + '/' if prefix else ''
    world = World(rec)
    base_ns = int(rec.header.date) * 1_000_000_000
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(rec), unit='frame', desc=f'to-bag {output}')
    next_t = -1.0
    removed_pending: list = []
    collisions_pending: list = []
    with BagWriter(output) as bag:
        for i in range(len(rec)):
            changes = world.advance(i)
            removed_pending += changes.removed
            collisions_pending += changes.collisions
            if bar is not None:
                bar.update(1)
            t = float(rec.elapsed[i])
            if rate > 0 and t < next_t and i != len(rec) - 1:
                continue
            next_t = t + (1.0 / rate if rate > 0 else 0.0)
            stamp = seconds_to_stamp(t)
            t_ns = base_ns + int(round(t * 1e9))
            snap = convert.Snapshot.of(world, None)   # each frame's recorded poses
            bag.write_msg('/clock', t_ns, Clock(clock=stamp))
            if world.actors:
                bag.write_msg('/tf', t_ns, TFMessage(transforms=convert.transforms(
                    world, snap, stamp, frames)))
            bag.write_msg(pre + 'actor_list', t_ns, convert.actor_list(world, snap, stamp,
                                                                       frames))
            bag.write_msg(pre + 'markers', t_ns, convert.actor_markers(
                world, snap, stamp, frames, removed_pending, marker_types))
            bag.write_msg(pre + 'traffic_lights', t_ns, convert.traffic_lights(world, snap,
                                                                               stamp, frames))
            bag.write_msg(pre + 'vehicle_controls', t_ns,
                          convert.vehicle_controls(world, stamp, frames))
            for msg in convert.collisions(world, collisions_pending, stamp, frames):
                bag.write_msg(pre + 'collisions', t_ns, msg)
            if collisions_pending:
                bag.write_msg(pre + 'collision_markers', t_ns, convert.collision_markers(
                    snap, collisions_pending, stamp, frames))
            hero = world.hero()
            if hero is not None:
                bag.write_msg(pre + 'hero/odometry', t_ns,
                              convert.hero_odometry(world, snap, hero, stamp, frames))
            removed_pending, collisions_pending = [], []
    if bar is not None:
        bar.close()
    return dict(bag.counts)
