"""``carla_log to-bag``: a recording into a rosbag2 folder (MCAP) with the topics and types the
``carla_replayer`` node publishes, one message set per recorded frame (no interpolation).
Header stamps are the recording time from 0 (as the node's and its /clock); every message's
log time in the bag is that same time (as ``ibeo_idc to-bag`` does), so ``ros2 bag play
--clock`` and stamp-based tools agree.

The messages (clock, TF, actor list, markers, traffic lights, vehicle controls, collisions and
their markers, hero odometry) are the node's, serialised by :class:`.frame_cdr.FrameCdr`
straight from numpy into CDR templates.  The frames of a block go to the bag as rows
(:meth:`BagWriter.write_rows`: the MCAP records of many frames copied by
numpy at once); a frame with collisions message by message.  The bag's file is written by a
thread of its own (``O_DIRECT`` where possible), beside this work.  ``stop`` is asked once
per frame: when it says so, the frames written so far are a complete bag.
"""
from __future__ import annotations

from typing import Callable, Optional

from ros_sim_bridge.core.progress import Progress
from ros_sim_bridge.ros.bag import BagWriter
from ros_sim_bridge.ros.stamps import seconds_to_stamp
from ..codec import Recording
from ..world import World
from . import frame_cdr
from .frame_cdr import FrameCdr, Frames


class BagCounts(dict):
    """Messages written per topic, ``non_finite_poses``: the actor transforms left out of /tf
    for a NaN or ±Inf pose (a corrupt Position record or spawn transform), and
    ``non_finite_kinematics``: the actors' Kinematics records with a NaN or ±Inf velocity."""
    non_finite_poses = 0
    non_finite_kinematics = 0


def to_bag(rec: Recording, output: str, *, rate: float = 0.0, progress: bool = True,
           prefix: str = 'carla', frames: Optional[Frames] = None,
           marker_types=(1, 2, 3, 4), stop: Optional[Callable[[], bool]] = None) -> BagCounts:
    """Write every frame (or one per 1/``rate`` s of recording time); returns the counts per
    topic (:class:`BagCounts`).  ``stop()`` true ends the bag after the last frame written."""
    frames = frames or Frames()
    # fully qualified, as the node's topics resolve in the namespace of its prefix
    pre = '/' + prefix.strip('/') + '/' if prefix.strip('/') else '/'
    world = World(rec)
    cdr = FrameCdr(frames, marker_types)
    bar = None
    if progress:
        bar = Progress(len(rec), f'to-bag {output}', unit=' frames')
    types = {'clock': ('/clock', frame_cdr.CLOCK), 'tf': ('/tf', frame_cdr.TF),
             'actor_list': (pre + 'actor_list', frame_cdr.ACTOR_LIST),
             'markers': (pre + 'markers', frame_cdr.MARKERS),
             'traffic_lights': (pre + 'traffic_lights', frame_cdr.TRAFFIC_LIGHTS),
             'vehicle_controls': (pre + 'vehicle_controls', frame_cdr.VEHICLE_CONTROLS),
             'collisions': (pre + 'collisions', frame_cdr.COLLISION),
             'collision_markers': (pre + 'collision_markers', frame_cdr.MARKERS),
             'odometry': (pre + 'hero/odometry', frame_cdr.ODOMETRY)}
    next_t = -1.0
    removed_pending: list = []
    collisions_pending: list = []
    try:
        with BagWriter(output) as bag:
            writers: dict = {}

            def writer(kind):
                write = writers.get(kind)
                if write is None:                      # topics appear with their first message
                    write = writers[kind] = bag.writer(*types[kind])
                return write

            def put(blocks):
                """Frames without extra messages go to the bag many at a time, as rows; a
                frame with collisions message by message, in the node's order."""
                for block in blocks:
                    count = len(block.t_ns)
                    cuts = {0, count}
                    for _, runs in block.kinds:
                        cuts.update(lo for lo, _, _ in runs)
                    for i in block.after:
                        cuts.update((i, i + 1))
                    cuts = sorted(cuts)
                    for lo, hi in zip(cuts, cuts[1:]):
                        if lo in block.after:
                            t_ns, msgs = block.frame(lo)
                            for kind, data in msgs:
                                writer(kind)(t_ns, data)
                            continue
                        columns = []
                        for kind, runs in block.kinds:
                            a, _, rows = next(r for r in runs if r[0] <= lo < r[1])
                            if rows is not None:        # None: no message in these frames
                                writer(kind)
                                columns.append((types[kind][0], rows[lo - a:hi - a]))
                        bag.write_rows(block.t_ns[lo:hi], columns)

            for i in range(len(rec)):
                if stop is not None and stop():
                    break
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
                t_ns = stamp.sec * 1_000_000_000 + stamp.nanosec   # log time = the stamp
                put(cdr.add_blocks(world, stamp, t_ns, removed_pending, collisions_pending))
                removed_pending, collisions_pending = [], []
            put(cdr.flush_blocks())
    finally:
        if bar is not None:
            bar.close()
    counts = BagCounts(bag.counts)
    counts.non_finite_poses = cdr.non_finite_poses
    counts.non_finite_kinematics = cdr.non_finite_kinematics
    return counts
