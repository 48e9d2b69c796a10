"""CARLA replayer: the maximum rate factor of ``carla_replayer`` for a 100-actor recording
with every topic published (target ≥ 20× real time), next to its floor: ``publish(bytes)`` of
the same messages through the same publishers in the same run (issue #27).

The node (:class:`CarlaReplayerNode`, in this process, its timer not spun) is driven through
every recorded frame of a generated 20 Hz recording (80 vehicles, 15 walkers, 5 traffic
lights: 100 actors; a hero with a sensor, collisions, a destroyed vehicle) as fast as it goes:
each step is what one tick of the node does (advance the world, the poses at that time, the
one CDR conversion, /clock, /tf, actor list, markers, traffic lights, vehicle controls, hero
odometry and any collisions published as bytes).  A replay at rate factor R publishes each recorded
frame once, R × 20 a second, so the node's frames per second ÷ 20 is its maximum rate factor
with every frame's topics published.  Interpolation is off, as the
node does at rate factors ≥ 2.  A subscriber process takes every topic (raw), so each publish
is delivered, not dropped for want of a reader.

Each step is timed alone and four at a time (what a tick of the node does at 10× and more:
it ticks at most every 10 ms and converts the frames it passed as one block), in wall time and
in CPU time of this process (the machine's load stretches the first, hardly the second).

``--live`` then runs the installed executable as users do, timer-driven, for rising rate
factors R over a 60 s recording (started paused, resumed once a subscriber process of every
topic is up), and counts per topic the recorded frames that reach that subscriber (distinct
stamps: without interpolation every frame is published once, stamped with its recorded time)
of those between the first and the last it heard.  The subscriber is as deep as the node's
writers (twice the frames of 0.25 s at R; ``BENCH_SUBSCRIBER_DEPTH`` sets another).  Figures
printed, nothing asserted.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from ros_sim_bridge.carla.emulator.scene import Scene

from ros_sim_bridge.carla.emulator.writer import write
from ros_sim_bridge.tools.ports import BENCH_DOMAINS
from ros_sim_bridge.tools.session import keep_dds_local

RATE = 20.0            # recorded frames per second

SUBSCRIBER = textwrap.dedent('''
    import json, struct, sys, rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray
    from ros_sim_bridge.msg import (CarlaActorList, CarlaCollision, CarlaTrafficLightList,
                                    CarlaVehicleControlList)
    from ros_sim_bridge.ros.qos import DATA, TF
    CLOCK = 10
    if len(sys.argv) > 1:            # the subscriber's own depth for every topic
        from rclpy.qos import QoSProfile
        CLOCK = DATA = TF = QoSProfile(depth=int(sys.argv[1]))
    rclpy.init()
    node = rclpy.create_node('bench_carla_subscriber')
    count = [0]
    stamps = {}          # topic -> distinct stamps (ns) of its messages (first header's)
    def on(name, offset):
        got = stamps.setdefault(name, set())
        def take(data):
            count[0] += 1
            if len(data) >= offset + 8:
                sec, nsec = struct.unpack_from('<iI', data, offset)
                got.add(sec * 10**9 + nsec)
        return take
    for t, name, qos in ((Clock, '/clock', CLOCK), (TFMessage, '/tf', TF),
                         (CarlaActorList, '/carla/actor_list', DATA),
                         (MarkerArray, '/carla/markers', DATA),
                         (CarlaTrafficLightList, '/carla/traffic_lights', DATA),
                         (CarlaCollision, '/carla/collisions', DATA),
                         (MarkerArray, '/carla/collision_markers', DATA),
                         (CarlaVehicleControlList, '/carla/vehicle_controls', DATA),
                         (Odometry, '/carla/hero/odometry', DATA)):
        # the stamp: after the encapsulation (4 B), and a sequence's length (4 B) for TF and
        # markers (their first item's header)
        node.create_subscription(t, name, on(name, 8 if t in (TFMessage, MarkerArray) else 4),
                                 qos, raw=True)
    print('ready', flush=True)
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    try:
        while rclpy.ok():
            ex.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    print(count[0], flush=True)
    print(json.dumps({k: sorted(v) for k, v in stamps.items()}), flush=True)
''')


def scene(seconds: float) -> Scene:
    # 100 actors: 80 vehicles, 15 walkers, 5 traffic lights (+ spectator and collision sensor)
    return Scene(seconds=seconds, rate=RATE, vehicles=80, walkers=15, traffic_lights=5)


FAILED = {'node': 0, 'floor': 0}    # publishes the RMW refused (its queue full)
CPU: dict = {}      # batch (or 'floor') → CPU seconds of this process of each run (all threads)


def drive(node, times, batch: int = 1) -> float:
    """Seconds for the node to publish every frame of ``times`` once (a seek to the first),
    ``batch`` frames a tick (as a tick that comes late publishes the frames it passed)."""
    from ros_sim_bridge.carla.session import Publish
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(0, len(times), batch):
        try:
            node.publish([Publish(times[i], i, i == 0)
                          for i in range(k, min(k + batch, len(times)))])
        except Exception:          # the node's timer counts it in diagnostics and goes on
            FAILED['node'] += 1
    CPU.setdefault(batch, []).append(time.process_time() - c0)
    return time.perf_counter() - t0


def captured(node, times) -> list:
    """The (publisher, bytes) of every message the node publishes at ``times``, in order: its
    own conversion (a FrameCdr of the node's settings) on a world of its own."""
    from ros_sim_bridge.carla.ros.frame_cdr import FrameCdr
    from ros_sim_bridge.carla.world import World
    from ros_sim_bridge.ros.stamps import seconds_to_stamp
    world, cdr = World(node.rec), FrameCdr(node.frames, tuple(node.p.marker_types), block=1)
    out = []
    for k, t in enumerate(times):
        changes = world.advance(node.rec.frame_at(t), k == 0)
        _, loc, rot = world.poses(t, False)
        for kind, data in cdr.frame(world, seconds_to_stamp(t), changes.removed,
                                    changes.collisions, (loc, rot)):
            pub = node.publishers_of[kind]
            if pub is not None:
                out.append((pub, bytes(data)))
    return out


def floor(messages) -> float:
    t0, c0 = time.perf_counter(), time.process_time()
    for pub, data in messages:
        try:
            pub.publish(data)
        except Exception:
            FAILED['floor'] += 1
    CPU.setdefault('floor', []).append(time.process_time() - c0)
    return time.perf_counter() - t0


def subscriber(cwd, depth: int = 0) -> subprocess.Popen:
    """The subscriber process of every topic: depth as the node's profiles (DATA, TF), or
    ``depth`` for all (BENCH_SUBSCRIBER_DEPTH overrides)."""
    depth = int(os.environ.get('BENCH_SUBSCRIBER_DEPTH', depth))
    sub = subprocess.Popen([sys.executable, '-c', SUBSCRIBER, *([str(depth)] if depth else [])],
                           stdout=subprocess.PIPE,
                           cwd=cwd, text=True)
    assert sub.stdout.readline().strip() == 'ready'
    return sub


def received(sub) -> dict:
    """Stop the subscriber process: topic → the distinct stamps (ns) it received."""
    import json
    sub.send_signal(2)
    try:
        out = sub.communicate(timeout=20)[0].strip().splitlines()
    except subprocess.TimeoutExpired:
        sub.kill()
        return {}
    return json.loads(out[-1]) if len(out) >= 2 else {}


def live(tmp: Path, factors) -> None:
    """The installed carla_replayer at each rate factor, a subscriber process of every topic
    started for each: per topic, the recorded frames received (distinct stamps) of those the
    replay passed (its first to its last frame /clock gave), the longest step between them."""
    import numpy as np
    import rclpy
    from rosgraph_msgs.msg import Clock
    from std_srvs.srv import Trigger

    from ros_sim_bridge.carla.codec import Recording
    from ros_sim_bridge.ros.stamps import seconds_to_stamp
    from ros_sim_bridge.tools.launcher import executable, ros_args
    path, seconds = tmp / 'live.log', 60.0
    with open(path, 'wb') as f:
        write(f, scene(seconds))
    frame_ns = np.array([(lambda s: s.sec * 10**9 + s.nanosec)(seconds_to_stamp(float(t)))
                         for t in Recording(path.read_bytes()).elapsed], np.int64)
    node = rclpy.create_node('bench_carla_live')
    print(f'\nlive: the installed carla_replayer on a {seconds:g} s recording (100 actors, '
          f'{len(frame_ns)} frames), publish_rate = 20 × rate_factor; every topic received by a '
          'subscriber process (reliable, the depth of the node\'s writers):')
    from ros_sim_bridge.carla.session import ReplaySession
    rec = Recording(path.read_bytes())
    for factor in factors:
        # the depth of the node's writers (a late tick's frames at once), taken by the reader
        depth = 2 * ReplaySession(rec.elapsed, rec.duration, rate_factor=factor,
                                  publish_rate=RATE * factor).max_batch
        depth = int(os.environ.get('BENCH_SUBSCRIBER_DEPTH', depth))
        sub = subscriber(tmp, depth)
        stamps = []
        clock = node.create_subscription(
            Clock, '/clock', lambda m: stamps.append(m.clock.sec * 10**9 + m.clock.nanosec),
            1000)
        proc = subprocess.Popen([str(executable('carla_replayer')), *ros_args(parameters={
            'file': str(path), 'rate_factor': factor, 'publish_rate': RATE * factor,
            'start_paused': True})], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        resume = node.create_client(Trigger, 'carla/resume')     # once it is heard: go
        end = time.monotonic() + 20
        while time.monotonic() < end and not stamps:
            rclpy.spin_once(node, timeout_sec=0.05)
        assert resume.wait_for_service(timeout_sec=10), 'carla/resume did not appear'
        time.sleep(1.0)                 # the subscriber process matched too
        done = resume.call_async(Trigger.Request())
        while time.monotonic() < end and not done.done():
            rclpy.spin_once(node, timeout_sec=0.05)
        node.destroy_client(resume)
        node.destroy_subscription(clock)      # a reader here would compete for the CPU
        end = time.monotonic() + seconds / factor + 1.0
        while time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(2)
        proc.wait(10)
        got = received(sub)
        lines = []
        worst = 1.0
        for topic in ('/clock', '/tf', '/carla/actor_list', '/carla/markers',
                      '/carla/traffic_lights', '/carla/vehicle_controls',
                      '/carla/hero/odometry'):
            have = np.intersect1d(np.array(got.get(topic, []), np.int64), frame_ns)
            span = frame_ns[(frame_ns >= have[0]) & (frame_ns <= have[-1])] if len(have) else []
            share = len(have) / max(len(span), 1)
            worst = min(worst, share)
            steps = np.diff(have) / 1e9 if len(have) > 1 else np.zeros(1)
            lines.append(f'{topic.rsplit("/", 1)[1]} {len(have)}/{len(span)}'
                         + (f' (gap {steps.max() * 1e3:.0f} ms)' if steps.max() > 0.051 else ''))
        heard = np.array(got.get('/clock', [0]), np.int64) / 1e9
        print(f'  ×{factor:<4g} {worst:6.1%} of the frames on every topic (depth {depth}), '
              f'{heard.min():.2f}..{heard.max():.2f} s of recording heard in the '
              f'{seconds / factor + 1:.1f} s after resume; '
              f'load {os.getloadavg()[0]:.1f}; ' + ', '.join(lines))
    node.destroy_node()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, default=30.0, help='recording length')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--no-subscriber', action='store_true',
                    help='no subscriber process: the node publishes to no reader (live: /clock '
                         'only, heard here)')
    ap.add_argument('--live', type=float, nargs='*', default=None,
                    help='rate factors for the installed executable (none given: 10 20 30 40)')
    a = ap.parse_args(argv)
    keep_dds_local(BENCH_DOMAINS)
    from ros_sim_bridge.ros.dds import use_packaged_fastdds_profile
    use_packaged_fastdds_profile()        # as the executables start (the subscriber too)
    import rclpy
    from rclpy.parameter import Parameter

    from ros_sim_bridge.carla.ros.node import CarlaReplayerNode
    tmp = Path(tempfile.mkdtemp(prefix='bench_carla_replayer_'))
    sub = None
    rclpy.init()
    try:
        path = tmp / 'scene.log'
        with open(path, 'wb') as f:
            size = write(f, scene(a.seconds))
        node = CarlaReplayerNode(parameter_overrides=[
            Parameter('file', value=str(path)), Parameter('start_paused', value=True),
            Parameter('rate_factor', value=20.0), Parameter('publish_rate', value=1.0)])
        times = [float(t) for t in node.rec.elapsed]
        if not a.no_subscriber:
            sub = subscriber(tmp)
        deadline = time.monotonic() + 10
        while sub is not None and time.monotonic() < deadline and any(
                p is not None and p.get_subscription_count() == 0
                for p in node.publishers_of.values()):
            time.sleep(0.05)
        messages = captured(node, times)
        sizes = sum(len(d) for _, d in messages)
        print(f'recording: {a.seconds:g} s at {RATE:g} Hz, 100 actors, {len(times)} frames, '
              f'{size / 1e6:.1f} MB; {len(messages)} messages a pass '
              f'({len(messages) / len(times):.1f} a frame, {sizes / len(times) / 1e3:.0f} kB a '
              f'frame); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores')
        node_runs, batch_runs, floor_runs = [], [], []
        for _ in range(a.runs):                   # interleaved: the same load for all
            node_runs.append(drive(node, times))
            batch_runs.append(drive(node, times, 4))
            floor_runs.append(floor(messages))
        t_node, t_floor = statistics.median(node_runs), statistics.median(floor_runs)
        t_batch = statistics.median(batch_runs)
        n = len(times)
        print(f'carla_replayer, every frame\'s topics: {n / t_node:7.0f} frames/s = '
              f'{t_node / n * 1e3:.2f} ms a frame → maximum rate factor '
              f'**{n / t_node / RATE:.0f}×** real time (target ≥ 20×); median of {a.runs}: '
              + ' '.join(f'{x:.2f}' for x in node_runs) + ' s')
        print(f'  4 frames a tick (a tick late by 3 frames): {n / t_batch:7.0f} frames/s = '
              f'{t_batch / n * 1e3:.2f} ms a frame → {n / t_batch / RATE:.0f}×')
        print(f'floor, publish(bytes) of the same messages: {n / t_floor:7.0f} frames/s = '
              f'{t_floor / n * 1e3:.2f} ms a frame → {n / t_floor / RATE:.0f}×; the node at '
              f'{t_floor / t_node:.0%} of its floor (the rest: world, poses, conversion)')
        cpu = {k: statistics.median(v) / n * 1e3 for k, v in CPU.items()}
        print(f'CPU time of this process a frame (all its threads; the load does not stretch '
              f'it as it does the wall times above): node {cpu[1]:.2f} ms '
              f'({1e3 / cpu[1] / RATE:.0f}×), 4 a tick {cpu[4]:.2f} ms ({1e3 / cpu[4] / RATE:.0f}×), floor '
              f'{cpu["floor"]:.2f} ms ({1e3 / cpu["floor"] / RATE:.0f}×)')
        if any(FAILED.values()):
            print(f'publishes refused by the RMW (writer queue full): node {FAILED["node"]}, '
                  f'floor {FAILED["floor"]}')
        if sub is not None:
            print(f'the subscriber process received {sum(map(len, received(sub).values()))} '
                  'distinct stamps')
            sub = None
        if a.live is not None:
            node.destroy_node()
            live(tmp, a.live or (10.0, 20.0, 30.0, 40.0))
    finally:
        if sub is not None:
            sub.kill()
        rclpy.shutdown()
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    os.environ.setdefault('ROS_DISTRO', 'kilted')
    sys.exit(main())
