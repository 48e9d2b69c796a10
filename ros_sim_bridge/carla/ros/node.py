"""CARLA recorder replayer (executable ``carla_replayer``): a ``.log`` into ROS 2 without the
simulator, replayed like CARLA's replayer (SUPPLEMENT §5.5).

| direction | name | type | frame |
|---|---|---|---|
| pub | /clock | rosgraph_msgs/Clock | recording time |
| pub | /tf | tf2_msgs/TFMessage | map → each actor (parents kept; re-rooted to follow) |
| pub | carla/actor_list | ros_sim_bridge/CarlaActorList | map |
| pub | carla/markers | visualization_msgs/MarkerArray | map (boxes + labels; DELETE on destroy) |
| pub | carla/traffic_lights | ros_sim_bridge/CarlaTrafficLightList | map |
| pub | carla/collisions | ros_sim_bridge/CarlaCollision | map |
| pub | carla/collision_markers | visualization_msgs/MarkerArray | map |
| pub | carla/vehicle_controls | ros_sim_bridge/CarlaVehicleControlList | map |
| pub | carla/hero/odometry | nav_msgs/Odometry | map → hero |
| pub | /diagnostics | diagnostic_msgs/DiagnosticArray | |
| srv | carla/pause, carla/resume | std_srvs/Trigger | |
| srv | carla/seek | ros_sim_bridge/CarlaSeek | |

Every topic but /diagnostics is published as CDR bytes made by :mod:`.frame_cdr`, the
conversion ``carla_log to-bag`` writes (one frame per publish: the poses at the time published,
the stamp that time).

All stamps are the recording time (seconds since its first frame), the time /clock publishes:
run consumers with ``use_sim_time:=true``.  The replayer is the /clock source: its own timer
runs on the steady clock whatever ``use_sim_time`` says (on ROS time it would wait for a clock
only it publishes).
"""
from __future__ import annotations

import math
import sys
import threading
import time

from nav_msgs.msg import Odometry
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from ros_sim_bridge.msg import (CarlaActorList, CarlaCollision, CarlaTrafficLightList,
                                CarlaVehicleControlList)
from ros_sim_bridge.srv import CarlaSeek
from ros_sim_bridge.ros.clocks import STEADY
from ros_sim_bridge.ros.diagnostics import Diagnostics
from ros_sim_bridge.ros.params import declare_parameters, positive
from ros_sim_bridge.ros.qos import DATA, TF, deeper
from ros_sim_bridge.ros.runner import run_node
from ros_sim_bridge.ros.stamps import seconds_to_stamp
from ros_sim_bridge.core.binary import CodecError
from ..recording_file import damage_summary, open_recording
from ..session import ReplaySession
from ..world import World
from .frame_cdr import FrameCdr, Frames

PARAMETERS = {
    'file': ('', 'CARLA recorder .log file to replay'),
    'rate_factor': (1.0, 'replay speed: recording seconds per wall second (CARLA time factor)',
                    positive),
    'start_time': (0.0, 'recording time to start at, s; negative: from the end'),
    'end_time': (0.0, 'recording time to stop at, s; 0: the end; negative: from the end; '
                      'seeks stay within start_time..end_time'),
    'loop': (False, 'start again at start_time after end_time'),
    'start_paused': (False, 'wait for the carla/resume service before replaying'),
    'publish_rate': (20.0, 'Hz of publishing while interpolating (wall clock), and of the time '
                           'held while paused; else every recorded frame at its own time',
                     positive),
    'interpolate': (True, "poses as CARLA's replayer: previous frame's → this frame's; off (or "
                          "rate_factor >= 2): the previous frame's pose"),
    'map_frame': ('map', 'world frame (ENU, REP-103)'),
    'actor_frame': ('actor_{id}', 'TF frame of an actor: {id}, {role}, {type} filled in'),
    'hero_frame': ('hero', "TF frame of the hero (role_name 'hero'); '' to use actor_frame"),
    'follow_actor': (-1, 'TF re-rooted on this actor: -1 none, 0 the hero, > 0 an actor id'),
    'publish_clock': (True, 'publish /clock with the recording time'),
    'publish_tf': (True, 'publish map → actors on /tf'),
    'marker_types': ([1, 2, 3, 4], 'actor types drawn as boxes: 0 other, 1 vehicle, 2 walker, '
                                   '3 traffic light, 4 traffic sign, 5 sensor'),
    'topic_prefix': ('carla', 'namespace of the replayer topics and services'),
    'layout_vector': ('', "force the vector width: '' detect, ue4, ue5"),
    'layout_ids': ('', "force the ids >= 18 table: '' detect, 0.9.14, 0.9.15, 0.9.16"),
    'diagnostics_period': (1.0, 's between /diagnostics messages', positive),
}


class CarlaReplayerNode(Node):
    NODE_NAME = 'carla_replayer'
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.p = p = declare_parameters(self, self.PARAMETERS)
        if not p.file:
            raise ValueError('parameter file: the .log file to replay is required')
        try:
            self.rec = open_recording(p.file, vector=p.layout_vector or None,
                                      ids=p.layout_ids or None)
        except CodecError as err:   # empty, short, not a recording: one clear line, exit 1
            raise ValueError(f'{p.file}: {err}') from None
        self.world = World(self.rec)
        self.frames = Frames(p.map_frame, p.actor_frame, p.hero_frame)
        self.diagnostics = Diagnostics(self, period=p.diagnostics_period)
        self.stats = self.diagnostics.stream(f'replay {p.file}', 'carla recorder',
                                             stale_after=max(2.0, 3.0 / p.publish_rate))
        # per frame replayed from the recording (as to-bag counts), not per publish: actor
        # transforms left out of /tf, Kinematics records left out (NaN or ±Inf recorded),
        # counted on the stream (non_finite_poses, non_finite_kinematics)
        self.counted_frame = -1       # the frame whose left-outs are counted
        self.stats.extra.update({'frames': str(len(self.rec)), 'layout': self.rec.layout_name,
                                 'unknown_packets': str(sum(self.rec.unknown.values())),
                                 'damaged_regions': str(len(self.rec.damage)),
                                 'skipped_bytes': str(self.rec.skipped_bytes)})
        damage = {id(d.error) for d in self.rec.damage}
        for problem in self.rec.problems:
            if id(problem) in damage:   # counted here, logged below in one line
                self.stats.error(problem.kind, str(problem))
            else:
                self.diagnostics.bad_input(self.stats, problem)
        if self.rec.damage:
            self.get_logger().warning(
                f'{p.file}: ' + damage_summary(self.rec) + ': '
                + '; '.join(f'{d.skipped} B at byte {d.offset} ({d.reason}, '
                            + ('cut here' if d.resumed is None else
                               f'resumed at byte {d.resumed}') + ')'
                            for d in self.rec.damage[:5])
                + ('; …' if len(self.rec.damage) > 5 else ''))
        self.session = ReplaySession(
            self.rec.elapsed, self.rec.duration, start_time=p.start_time, end_time=p.end_time,
            rate_factor=p.rate_factor, loop=p.loop, paused=p.start_paused,
            interpolate=p.interpolate, publish_rate=p.publish_rate)
        # a tick publishes up to max_batch frames at once (one that comes late): each writer
        # keeps them all until sent (KEEP_LAST: a shorter history drops the oldest unsent)
        depth = max(DATA.depth, 2 * self.session.max_batch)
        data, tf = deeper(DATA, depth), deeper(TF, depth)
        pre = p.topic_prefix.rstrip('/') + '/' if p.topic_prefix else ''
        self.clock = self.create_publisher(Clock, '/clock', data) if p.publish_clock else None
        self.tf = self.create_publisher(TFMessage, '/tf', tf)
        self.actors_pub = self.create_publisher(CarlaActorList, pre + 'actor_list', data)
        self.markers = self.create_publisher(MarkerArray, pre + 'markers', data)
        self.lights = self.create_publisher(CarlaTrafficLightList, pre + 'traffic_lights', data)
        self.collisions = self.create_publisher(CarlaCollision, pre + 'collisions', data)
        self.collision_markers = self.create_publisher(MarkerArray, pre + 'collision_markers',
                                                       data)
        self.controls = self.create_publisher(CarlaVehicleControlList, pre + 'vehicle_controls',
                                              data)
        self.odom = self.create_publisher(Odometry, pre + 'hero/odometry', data)
        #: frame_cdr's kinds → their publishers (None: not published)
        self.publishers_of = {'clock': self.clock, 'tf': self.tf if p.publish_tf else None,
                              'actor_list': self.actors_pub, 'markers': self.markers,
                              'traffic_lights': self.lights, 'collisions': self.collisions,
                              'collision_markers': self.collision_markers,
                              'vehicle_controls': self.controls, 'odometry': self.odom}
        self.create_service(Trigger, pre + 'pause', self._pause)
        self.create_service(Trigger, pre + 'resume', self._resume)
        self.create_service(CarlaSeek, pre + 'seek', self._seek)
        self.lock = threading.Lock()
        # one block per tick: the frames a tick publishes are converted together
        self.cdr = FrameCdr(self.frames, tuple(p.marker_types), block=self.session.max_batch)
        adds = [] if p.follow_actor < 0 else [      # every actor ever created
            a for fr in self.rec.event_frames(('EventAdd',)) for a in fr.get('EventAdd', [])]
        if p.follow_actor > 0 and all(a.id != p.follow_actor for a in adds):
            self.get_logger().warning(
                f'follow_actor {p.follow_actor}: no actor of that id in {p.file}; TF is not '
                're-rooted')
        elif p.follow_actor == 0 and all(a.attribute('role_name') != 'hero' for a in adds):
            self.get_logger().warning(
                f"follow_actor 0 (the hero): no actor with role_name 'hero' in {p.file}; TF "
                'is not re-rooted')
        self.closing = False
        # steady clock: with use_sim_time the node's ROS time is the /clock it publishes itself
        self.timer = self.create_timer(self.session.tick_period, self._tick, clock=STEADY)
        s = self.session
        self.get_logger().info(
            f'replaying {p.file}: {self.rec.header.map_name}, {len(self.rec)} frames, '
            f'{self.rec.duration:.2f} s, {self.rec.layout_name}; {s.start:.2f} → {s.end:.2f} s '
            f'at ×{p.rate_factor:g}' + (' (looping)' if p.loop else '')
            + (' (paused)' if p.start_paused else ''))

    # -- services -------------------------------------------------------------------------
    def _pause(self, request, response):
        with self.lock:
            t = self.session.pause()
        response.success, response.message = True, f'paused at {t:.3f} s'
        return response

    def _resume(self, request, response):
        with self.lock:
            t = self.session.resume(time.monotonic())
        response.success, response.message = True, f'replaying from {t:.3f} s'
        return response

    def _seek(self, request, response):
        if not math.isfinite(request.time):
            response.success, response.message = False, f'time must be finite, not {request.time}'
            return response
        # within start_time..end_time; negative: from end_time (-1: 1 s before it)
        s = self.session
        want = s.end + request.time if request.time < 0 else request.time
        with self.lock:
            response.time = s.seek(request.time, time.monotonic())
        response.success, response.message = True, f'at {response.time:.3f} s'
        if abs(want - response.time) > 1e-9:
            response.message += (f' (asked {request.time:g} s: kept within start_time..end_time '
                                  f'{s.start:.3f}..{s.end:.3f} s)')
        return response

    # -- replay ---------------------------------------------------------------------------
    def _tick(self) -> None:
        if self.closing:
            return
        try:
            with self.lock:
                step, publishes = self.session.tick(time.monotonic())
            if step.ended:
                self.get_logger().info(
                    f'replay reached its end at {self.session.end:.3f} s (carla/seek or '
                    'carla/resume plays again)')
            if publishes:
                self.publish(publishes)
        except Exception as exc:  # never go silent: count, log (rate-limited), keep ticking
            if not self.closing:
                self.diagnostics.bad_input(self.stats, exc)

    def publish(self, publishes) -> None:
        """The world at each of ``publishes`` (:class:`~ros_sim_bridge.carla.session.Publish`,
        in order), converted together and published in order; a jump rebuilds the world and
        publishes no collision of the frames jumped over."""
        p, world, cdr = self.p, self.world, self.cdr
        follow = None
        before = cdr.non_finite_poses, cdr.non_finite_kinematics
        new_frame = False
        blocks = []
        try:
            for pub in publishes:
                changes = world.advance(pub.index, pub.jump)
                for err in world.errors:
                    self.diagnostics.bad_input(self.stats, err)
                world.errors.clear()
                self.stats.packet(0)
                if pub.jump or world.index != self.counted_frame:
                    self.counted_frame, new_frame = world.index, True
                _, loc, rot = world.poses(pub.t, pub.interpolate)
                if p.follow_actor == 0:
                    follow = world.hero()
                elif p.follow_actor > 0:
                    follow = p.follow_actor
                blocks += cdr.add_blocks(world, seconds_to_stamp(pub.t), 0, changes.removed,
                                         changes.collisions, (loc, rot), follow)
        finally:        # nothing held over to the next tick, even after an error
            blocks += cdr.flush_blocks()
        if new_frame:
            self._left_out({'non_finite_poses': cdr.non_finite_poses - before[0]
                            if p.publish_tf else 0,
                            'non_finite_kinematics': cdr.non_finite_kinematics - before[1]},
                           publishes[-1].t)
        published = 0
        publishers = self.publishers_of
        for block in blocks:
            for i in range(len(block.t_ns)):
                for kind, data in block.frame(i)[1]:
                    pub = publishers[kind]
                    if pub is not None:
                        pub.publish(bytes(data))
                        published += 1
        self.stats.publish(published)
        s = self.session
        self.stats.extra.update({'time': f'{publishes[-1].t:.3f}', 'frame': str(world.index),
                                 'actors': str(len(world.actors)),
                                 'paused': str(s.clock.paused).lower(),
                                 'finished': str(s.clock.finished).lower()})
        self.stats.set_count('frames_skipped', s.skipped)

    def _left_out(self, counts: dict, t: float) -> None:
        """Count the actor poses (``non_finite_poses``: transforms left out of /tf) and
        velocities (``non_finite_kinematics``) of the frame at time ``t`` that are NaN or ±Inf
        (a corrupt Position, Kinematics record or spawn transform, SUPPLEMENT §5.3) and log
        them, rate-limited."""
        for key, n in counts.items():
            if not n:
                continue
            self.stats.count(key, n)
            what = ('actor pose(s)', 'left out of /tf, the actor list, markers, traffic lights '
                    'and odometry') if key == 'non_finite_poses' else (
                'actor velocities', 'zero twist in the actor list, no odometry')
            self.diagnostics.log_limited(
                self.stats.name, key, f'{self.stats.name}: {n} {what[0]} at {t:.3f} s not '
                f'finite (NaN or ±Inf recorded): {what[1]}')

    def close(self) -> None:
        self.closing = True
        self.timer.cancel()


def main(argv=None) -> int:
    return run_node(CarlaReplayerNode, argv)


if __name__ == '__main__':
    sys.exit(main())
