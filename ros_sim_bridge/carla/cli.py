"""``carla_log``: look into CARLA recorder files without a simulator (SUPPLEMENT §5.5).

``info`` prints what CARLA's ``show_recorder_file_info`` prints, ``collisions`` and ``blocked``
what ``show_recorder_collisions`` and ``show_recorder_actors_blocked`` print, column for column;
``--json`` gives the same content for scripts.  ``to-bag`` writes a rosbag2 folder with the
topics of the ``carla_replayer`` node (needs the ROS 2 environment; the others need only numpy).

Two deliberate differences from CARLA's own queries (bugs in its code, SUPPLEMENT §5.6): an
EventDel forgets the actor it names (CARLA forgets the last one added), and the last frame's
duration of −1 is not added to a blocked time.  Dates are printed in UTC (CARLA: server's local
time).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Iterable, Optional, TextIO

import numpy as np

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.cli import StopSignals, finite_number, run_tool
from .codec import NOT_AN_ACTOR, Recording
from .codec.records import vehicle_lights
from .recording_file import damage_summary, open_recording

CATEGORIES = 'ovwtha'   # other, vehicle, walker, traffic light, hero, any
DOOR_WORDS = {0: 'Front Left', 1: 'Front Right', 2: 'Rear Left', 3: 'Rear Right', 4: 'Hood',
              5: 'Trunk', 6: 'All'}


def g(x) -> str:
    """A number as C++'s default ostream prints it (6 significant digits, like %g)."""
    return '%g' % float(x)


def vec(v) -> str:
    return '(' + ', '.join(g(c) for c in v) + ')'


def header_lines(rec: Recording) -> list[str]:
    date = time.strftime('%m/%d/%y %H:%M:%S', time.gmtime(rec.header.date))
    return [f'Version: {rec.header.version}', f'Map: {rec.header.map_name}', f'Date: {date}', '']


def footer_lines(rec: Recording, fixed: bool = False) -> list[str]:
    last_id = int(rec.frame_ids[-1]) if len(rec) else 0
    duration = f'{rec.duration:.0f}' if fixed else g(rec.duration)
    return ['', f'Frames: {last_id}', f'Duration: {duration} seconds']


# -- info --------------------------------------------------------------------------------------
def _packet_lines(name: str, value) -> list[str]:
    out: list[str] = []
    if name == 'EventAdd':
        for a in value:
            out.append(f' Create {a.id}: {a.blueprint} ({a.type}) at {vec(a.location)}')
            out.extend(f'  {k} = {v}' for _, k, v in a.attributes)
    elif name == 'EventDel':
        out.extend(f' Destroy {i}' for i in value['id'].tolist())
    elif name == 'EventParent':
        out.extend(f' Parenting {c} with {p} (parent)' for c, p in
                   zip(value['id'].tolist(), value['parent'].tolist()))
    elif name == 'Collision':
        for c in value:
            out.append(f' Collision id {c["id"]} between {c["actor1"]}'
                       + (' (hero) ' if c['actor1_hero'] else '') + f' with {c["actor2"]}'
                       + (' (hero) ' if c['actor2_hero'] else ''))
    elif name == 'Position':
        out.append(f' Positions: {len(value)}')
        out.extend(f'  Id: {r["id"]} Location: {vec(r["location"])} Rotation: '
                   f'{vec(r["rotation"])}' for r in value)
    elif name == 'State':
        out.append(f' State traffic lights: {len(value)}')
        out.extend(f'  Id: {r["id"]} state: {chr(48 + int(r["state"]))} frozen: {r["frozen"]} '
                   f'elapsedTime: {g(r["elapsed"])}' for r in value)
    elif name == 'AnimVehicle':
        out.append(f' Vehicle animations: {len(value)}')
        out.extend(f'  Id: {r["id"]} Steering: {g(r["steering"])} Throttle: {g(r["throttle"])} '
                   f'Brake: {g(r["brake"])} Handbrake: {r["handbrake"]} Gear: {r["gear"]}'
                   for r in value)
    elif name == 'AnimWalker':
        out.append(f' Walker animations: {len(value)}')
        out.extend(f'  Id: {r["id"]} speed: {g(r["speed"])}' for r in value)
    elif name == 'VehicleDoor':
        out.append(f' Vehicle door animations: {len(value)}')
        for r in value:
            door = DOOR_WORDS.get(int(r['door']), r['door'])
            out += [f'  Id: {r["id"]}', f'  Doors opened:  {door} ']
    elif name == 'VehicleLight':
        out.append(f' Vehicle light animations: {len(value)}')
        out.extend(f'  Id: {r["id"]} {vehicle_lights(int(r["state"]))}' for r in value)
    elif name == 'SceneLight':
        out.append(f' Scene light changes: {len(value)}')
        out.extend(f'  Id: {r["id"]} enabled: {"True" if r["on"] else "False"} intensity: '
                   f'{g(r["intensity"])} RGB_color: {vec(r["color"][:3])}' for r in value)
    elif name == 'Kinematics':
        out.append(f' Dynamic actors: {len(value)}')
        out.extend(f'  Id: {r["id"]} linear_velocity: {vec(r["linear"])} angular_velocity: '
                   f'{vec(r["angular"])}' for r in value)
    elif name in ('BoundingBox', 'TriggerVolume'):
        out.append(f' Actor {"bounding boxes" if name == "BoundingBox" else "trigger volumes"}: '
                   f'{len(value)}')
        out.extend(f'  Id: {r["id"]} origin: {vec(r["origin"])} extension: {vec(r["extent"])}'
                   for r in value)
    elif name == 'PlatformTime':
        out.append(f' Current platform time: {g(value)}')
    elif name == 'PhysicsControl':
        out.append(f' Physics Control events: {len(value)}')
        for c in value:
            out.append(f'  Id: {c.id}')
            v = c.values
            if c.layout == 'ue5':   # every field by its carla::rpc name (our wording)
                for key, value in v.items():
                    out.append(f'   {key} = ' + (vec(value) if isinstance(value, tuple)
                                                  else g(value)))
                for key, arr in (('torque_curve', c.torque_curve),
                                 ('steering_curve', c.steering_curve)):
                    out.append(f'   {key} =' + ''.join(f' ({g(p["x"])}, {g(p["y"])})'
                                                       for p in arr))
                for key, arr in (('forward_gear_ratios', c.forward_gears),
                                 ('reverse_gear_ratios', c.reverse_gears)):
                    out.append(f'   {key} =' + ''.join(f' {g(r)}' for r in arr['ratio']))
                out.append('   wheels:')
                for k, w in enumerate(c.wheels):
                    out.append(f'    wheel {k}: ' + ' '.join(
                        f'{n} {vec(w[n]) if w[n].shape else g(w[n])}'
                        for n in c.wheels.dtype.names))
                continue
            for key in ('max_rpm', 'moi', 'damping_rate_full_throttle',
                        'damping_rate_zero_throttle_clutch_engaged',
                        'damping_rate_zero_throttle_clutch_disengaged'):
                out.append(f'   {"MOI" if key == "moi" else key} = {g(v[key])}')
            out.append(f'   use_gear_auto_box = {"true" if v["use_gear_autobox"] else "false"}')
            for key in ('clutch_strength', 'final_ratio', 'mass', 'drag_coefficient'):
                out.append(f'   {key} = {g(v[key])}')
            out.append(f'   center_of_mass = {vec(v["center_of_mass"])}')
            out.append('   torque_curve =' + ''.join(f' ({g(p["x"])}, {g(p["y"])})'
                                                     for p in c.torque_curve))
            out.append('   steering_curve =' + ''.join(f' ({g(p["x"])}, {g(p["y"])})'
                                                       for p in c.steering_curve))
            out.append('   forward_gears:')
            out.extend(f'    gear {k}: ratio {g(r["ratio"])} down_ratio {g(r["down_ratio"])} '
                       f'up_ratio {g(r["up_ratio"])}' for k, r in enumerate(c.forward_gears))
            out.append('   wheels:')
            out.extend(f'    wheel {k}: tire_friction {g(w["tire_friction"])} damping_rate '
                       f'{g(w["damping_rate"])} max_steer_angle {g(w["max_steer_angle"])} '
                       f'radius {g(w["radius"])} max_brake_torque {g(w["max_brake_torque"])} '
                       f'max_handbrake_torque {g(w["max_handbrake_torque"])} position '
                       f'{vec(w["position"])}' for k, w in enumerate(c.wheels))
    elif name == 'TrafficLightTime':
        out.append(f' Traffic Light time events: {len(value)}')
        out.extend(f'  Id: {r["id"]} green_time: {g(r["green"])} yellow_time: {g(r["yellow"])} '
                   f'red_time: {g(r["red"])}' for r in value)
    elif name == 'WalkerBones':
        out.append(f' Walkers Bones: {len(value)}')
        for w in value:
            out.append(f'  Id: {w.id}')
            out.extend(f'     Bone: "{n}" relative: Loc{vec(loc)} Rot{vec(rot)}'
                       for n, loc, rot in w.bones)
        out.append('')
    # ids >= 18 that CARLA's 0.9.13 query does not print: our wording
    elif name == 'FrameCounter':
        out.append(f' Frame counter: {value}')
    elif name == 'VisualTime':
        out.append(f' Visual time: {g(value)}')
    elif name == 'AnimVehicleWheels':
        out.append(f' Vehicle wheel animations: {len(value)}')
        out.extend(f'  Id: {w.id} wheels: ' + ' '.join(
            f'[{r["location"]}] steering {g(r["steering"])} rotation {g(r["rotation"])}'
            for r in w.wheels) for w in value)
    elif name == 'AnimBiker':
        out.append(f' Biker animations: {len(value)}')
        out.extend(f'  Id: {r["id"]} forward_speed: {g(r["forward_speed"])} engine_rotation: '
                   f'{g(r["engine_rotation"])}' for r in value)
    elif name == 'Weather':
        out.append(f' Weather: {len(value)}')
        out.extend('  ' + ' '.join(f'{k}: {g(r[k])}' for k in value.dtype.names)
                   for r in value)
    return out


def damage_lines(rec: Recording, damage) -> list[str]:
    """One ``!`` line per damaged region: where, why, bytes skipped, where reading resumed."""
    out = []
    for d in damage:
        if d.resumed is None:
            out.append(f'! Damage at byte {d.offset}: {d.reason}; the last {d.skipped} B are '
                       'unreadable (the recording is cut here)')
            continue
        i = int(np.searchsorted(rec.offsets, d.resumed))
        out.append(f'! Damage at byte {d.offset}: {d.reason}; {d.skipped} B skipped, resumed '
                   f'at byte {d.resumed} (frame {int(rec.frame_ids[i])} at '
                   f'{g(rec.elapsed[i])} seconds)')
    return out


def decode_errors(rec: Recording) -> dict:
    """``{'errors': [...]}`` for a JSON report: every error met decoding the frames it read
    (packets dropped, strings not UTF-8 read with U+FFFD); ``{}`` when there were none."""
    return {'errors': [str(e) for e in rec.decode_errors.values()]} if rec.decode_errors \
        else {}


def info_lines(rec: Recording, show_all: bool = False) -> Iterable[str]:
    yield from header_lines(rec)
    frames = rec.frames() if show_all else rec.event_frames()
    pending = list(rec.damage)
    for fr in frames:
        if pending and pending[0].offset <= fr.offset:   # damage before this frame's start
            now = [d for d in pending if d.offset <= fr.offset]
            pending = pending[len(now):]
            yield from damage_lines(rec, now)
        yield f'Frame {fr.id} at {g(fr.elapsed)} seconds'
        for name, value in fr.packets.items():
            yield from _packet_lines(name, value)
        for err in fr.errors:
            yield f' ! {err}'
    yield from damage_lines(rec, pending)
    if rec.damage:
        yield 'Damage: ' + damage_summary(rec)
    yield from footer_lines(rec)


def _json_value(value):
    if isinstance(value, np.ndarray):
        return [{k: _json_value(r[k]) for k in value.dtype.names} for r in value] \
            if value.dtype.names else value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if hasattr(value, '__dataclass_fields__'):
        return {k: _json_value(getattr(value, k)) for k in value.__dataclass_fields__
                if k != 'raw'}
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def info_json(rec: Recording, show_all: bool = False) -> dict:
    frames = rec.frames() if show_all else rec.event_frames()
    return {**rec.summary(),
            'frames_list': [{'frame': fr.id, 'elapsed': fr.elapsed,
                             **{name: _json_value(v) for name, v in fr.packets.items()},
                             'errors': [str(e) for e in fr.errors]} for fr in frames],
            'last_frame_id': int(rec.frame_ids[-1]) if len(rec) else 0}


# -- collisions ----------------------------------------------------------------------------
def collision_rows(rec: Recording, cat1: str = 'a', cat2: str = 'a') -> list[dict]:
    """Collisions whose actors match the categories, each pair once until it stops colliding."""
    actors: dict[int, tuple] = {}
    old: set = set()
    new: set = set()
    rows = []
    last_frame = -2
    for fr in rec.event_frames():
        if fr.index != last_frame + 1:  # a frame without collisions lay between
            new = set()
        old, new = new, set()
        last_frame = fr.index
        for a in fr.get('EventAdd', []):
            actors[a.id] = (a.type, a.blueprint)
        for i in fr.get('EventDel', np.zeros(0, [('id', '<u4')]))['id'].tolist():
            actors.pop(i, None)
        for c in fr.get('Collision', []):
            a1, a2 = int(c['actor1']), int(c['actor2'])
            t1 = _category(actors, a1)
            t2 = _category(actors, a2)
            ok1 = cat1 == 'a' or cat1 == t1 or (cat1 == 'h' and c['actor1_hero'])
            ok2 = cat2 == 'a' or cat2 == t2 or (cat2 == 'h' and c['actor2_hero'])
            if ok1 and ok2:
                if (a1, a2) not in old:
                    rows.append({'time': fr.elapsed, 'frame': fr.id, 'types': t1 + ' ' + t2,
                                 'id1': a1, 'actor1': actors.get(a1, (0, ''))[1],
                                 'id2': a2, 'actor2': actors.get(a2, (0, ''))[1]})
                new.add((a1, a2))
    return rows


def _category(actors: dict, actor: int) -> str:
    if actor == NOT_AN_ACTOR or actor not in actors:
        return 'o'
    t = actors[actor][0]
    return CATEGORIES[t] if t < 4 else 'o'


def collision_lines(rec: Recording, rows: list[dict]) -> list[str]:
    out = header_lines(rec)
    out.append(f'{"Time":>8} {"Types":>6} {"Id":>6} {"Actor 1":<35} {"Id":>6} {"Actor 2":<35}')
    for r in rows:
        out.append(f'{r["time"]:8.0f}   {r["types"]}  {r["id1"]:>6} {r["actor1"]:<35} '
                   f'{r["id2"]:>6} {r["actor2"]:<35}')
    return out + footer_lines(rec, fixed=bool(rows))


# -- blocked ---------------------------------------------------------------------------------
def blocked_rows(rec: Recording, min_time: float = 30.0, min_distance: float = 10.0) -> tuple:
    """Actors that moved less than ``min_distance`` (cm) for at least ``min_time`` (s), longest
    first (ties in the order found), and the number of Position records skipped for a NaN or
    ±Inf location."""
    names: dict[int, str] = {}
    slot_of: dict[int, int] = {}
    last = np.zeros((0, 3))
    since = np.zeros(0)
    stopped = np.zeros(0)
    ids_by_slot: list[int] = []
    results = []
    non_finite = 0
    adds = {fr.index: fr for fr in rec.event_frames()}
    for i in range(len(rec)):
        ev = adds.get(i)
        if ev is not None:
            for a in ev.get('EventAdd', []):
                names[a.id] = a.blueprint
                if a.id in slot_of:
                    s = slot_of[a.id]
                    last[s], since[s], stopped[s] = 0, 0, 0
            for d in ev.get('EventDel', np.zeros(0, [('id', '<u4')]))['id'].tolist():
                names.pop(d, None)
                s = slot_of.get(d)
                if s is not None:
                    last[s], since[s], stopped[s] = 0, 0, 0
                    ids_by_slot[s] = -1
                    del slot_of[d]
        fr = rec.frame(i, {'Position'})
        pos = fr.get('Position')
        if pos is None or not len(pos):
            continue
        loc = pos['location'].astype(np.float64)
        finite = np.isfinite(loc).all(axis=1)
        if not finite.all():            # a corrupt record: as if not recorded in this frame
            non_finite += len(finite) - int(np.count_nonzero(finite))
            pos, loc = pos[finite], loc[finite]
        ids = pos['id'].tolist()
        fresh = [a for a in ids if a not in slot_of]
        if fresh:
            for a in fresh:
                slot_of[a] = len(ids_by_slot)
                ids_by_slot.append(a)
            n = len(ids_by_slot)
            last = np.vstack([last, np.zeros((n - len(last), 3))])
            since = np.append(since, np.zeros(n - len(since)))
            stopped = np.append(stopped, np.zeros(n - len(stopped)))
        slots = np.fromiter((slot_of[a] for a in ids), np.int64, len(ids))
        still = np.linalg.norm(loc - last[slots], axis=1) < min_distance
        dt = fr.duration if fr.duration >= 0 else 0.0
        s_still = slots[still]
        start = s_still[stopped[s_still] == 0]
        since[start] = fr.elapsed
        stopped[s_still] += dt
        s_move = slots[~still]
        for s in s_move[stopped[s_move] >= min_time].tolist():
            results.append(_blocked(ids_by_slot[s], names, since[s], stopped[s]))
        stopped[s_move] = 0
        last[s_move] = loc[~still]
    for a, s in slot_of.items():
        if stopped[s] >= min_time:
            results.append(_blocked(a, names, since[s], stopped[s]))
    results.sort(key=lambda r: -r['duration'])
    return results, non_finite


def _blocked(actor: int, names: dict, since: float, duration: float) -> dict:
    return {'time': float(since), 'id': int(actor), 'actor': names.get(actor, ''),
            'duration': float(duration)}


def blocked_lines(rec: Recording, rows: list) -> list[str]:
    out = header_lines(rec)
    out.append(f'{"Time":>8} {"Id":>6} {"Actor":<35} {"Duration":>10}')
    for r in rows:
        out.append(f'{r["time"]:8.0f} {r["id"]:>6} {r["actor"]:<35} {r["duration"]:10.0f}')
    return out + footer_lines(rec)


# -- command line ------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog='carla_log', description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='command', required=True)

    def common(p):
        p.add_argument('file', help='CARLA recorder .log file')
        p.add_argument('--json', action='store_true', help='JSON for scripts')
        p.add_argument('--vector', choices=['ue4', 'ue5'], help='force the vector width')
        p.add_argument('--ids', choices=['0.9.14', '0.9.15', '0.9.16'],
                       help='force the numbering of packet ids >= 18')
        return p
    p = common(sub.add_parser('info', help='header, per-frame events, footer'))
    p.add_argument('--all', action='store_true',
                   help='also positions, lights, animations, kinematics, boxes, ...')
    p = common(sub.add_parser('collisions', help='collisions between actor categories'))
    p.add_argument('category1', nargs='?', default='a', choices=list(CATEGORIES),
                   help='o other, v vehicle, w walker, t traffic light, h hero, a any')
    p.add_argument('category2', nargs='?', default='a', choices=list(CATEGORIES))
    p = common(sub.add_parser('blocked', help='actors that stood still'))
    p.add_argument('--min-time', type=float, default=30.0, help='seconds (default 30)')
    p.add_argument('--min-distance', type=float, default=10.0,
                   help='centimetres (default 10)')
    p = common(sub.add_parser('to-bag', help='write a rosbag2 (MCAP) folder (needs ROS 2)'))
    p.add_argument('output', help='new bag folder')
    p.add_argument('--rate', type=finite_number(), default=0.0,
                   help='messages per second of recording time (0: every frame)')
    p.add_argument('--no-progress', action='store_true')
    return ap


def _to_bag(to_bag, rec, a, stops: StopSignals):
    """to-bag with the stop signals deferred: SIGINT/SIGTERM end it after the frame being
    written, the bag closed and readable (the caller exits 0 through ``stops.finish``)."""
    counts: dict = {}
    try:
        with stops.deferred():
            counts = to_bag(rec, a.output, rate=a.rate, progress=not a.no_progress,
                            stop=lambda: bool(stops.fired))
    except KeyboardInterrupt:           # raised as the deferred block ends: the bag is closed
        pass
    return counts


def _print(out, as_json: bool, value, lines) -> None:
    """One report: ``value()`` as one JSON line (``--json``), else ``lines()`` as text."""
    if as_json:
        json.dump(value(), out)
        out.write('\n')
    else:
        for line in lines():
            out.write(line + '\n')


def main(argv: Optional[list] = None, out: TextIO = sys.stdout) -> int:
    """The command line.  SIGINT/SIGTERM stop it cleanly with exit code 0: ``info`` & co. stop
    printing, ``to-bag`` closes the bag after the frame being written (core.cli.run_tool)."""
    a = build_parser().parse_args(argv)
    return run_tool(lambda stops: _main(a, out, stops), executable=argv is None, out=out)


def _main(a, out: TextIO, stops: StopSignals) -> int:
    try:
        rec = open_recording(a.file, vector=a.vector, ids=a.ids)
    except (OSError, CodecError) as err:
        print(f'carla_log: {a.file}: {err}', file=sys.stderr)
        return 2
    for problem in rec.problems:
        print(f'carla_log: {a.file}: {problem}', file=sys.stderr)
    if rec.damage:
        print(f'carla_log: {a.file}: {damage_summary(rec)}', file=sys.stderr)
    if a.command == 'info':
        _print(out, a.json, lambda: info_json(rec, a.all), lambda: info_lines(rec, a.all))
    elif a.command == 'collisions':
        rows = collision_rows(rec, a.category1, a.category2)
        _print(out, a.json, lambda: {**rec.summary(), 'collisions': rows,
                                     **decode_errors(rec)},
               lambda: collision_lines(rec, rows))
    elif a.command == 'blocked':
        rows, non_finite = blocked_rows(rec, a.min_time, a.min_distance)
        if non_finite:
            print(f'carla_log blocked: {a.file}: {non_finite} Position records with a NaN or '
                  '±Inf location skipped', file=sys.stderr)
        _print(out, a.json, lambda: {**rec.summary(), 'blocked': rows,
                                     **({'non_finite_positions': non_finite} if non_finite
                                        else {}), **decode_errors(rec)},
               lambda: blocked_lines(rec, rows))
    elif a.command == 'to-bag':
        try:
            with stops.deferred():  # a stop signal inside rclpy's import is an ImportError
                from .ros.to_bag import to_bag
        except ImportError as err:
            print(f'carla_log to-bag needs the ROS 2 environment: {err}', file=sys.stderr)
            return 2
        parent = Path(a.output).absolute().parent
        if not parent.is_dir():         # as ibeo_idc: nothing is created on the way
            print(f'carla_log to-bag: {a.output}: the folder {parent} does not exist',
                  file=sys.stderr)
            return 2
        try:
            counts = _to_bag(to_bag, rec, a, stops)
        except OSError as err:          # the output folder exists, no room, no rights
            print(f'carla_log to-bag: {err}', file=sys.stderr)
            return 2
        summary = {'bag': a.output, 'messages': counts}
        left_out = getattr(counts, 'non_finite_poses', 0)
        if left_out:
            summary['non_finite_poses'] = left_out
            print(f'carla_log to-bag: {left_out} actor poses not finite (NaN or ±Inf '
                  'recorded): left out of /tf, the actor list, markers, traffic lights and '
                  'odometry', file=sys.stderr)
        bad_twists = getattr(counts, 'non_finite_kinematics', 0)
        if bad_twists:
            summary['non_finite_kinematics'] = bad_twists
            print(f'carla_log to-bag: {bad_twists} actor velocities not finite (NaN or ±Inf '
                  'recorded): zero twist in the actor list, no odometry', file=sys.stderr)
        if rec.damage:
            summary['damage'] = rec.summary()['damage']
            print(f'carla_log to-bag: {a.output} holds the {len(rec)} frames readable '
                  f'around the damage ({rec.skipped_bytes} B skipped)', file=sys.stderr)
        summary.update(decode_errors(rec))
        if stops.fired:
            summary['interrupted'] = True
            print(f'carla_log to-bag: interrupted; {a.output} holds the first '
                  f'{counts.get("/clock", 0)} of {len(rec)} frames', file=sys.stderr)
        if a.json:
            json.dump(summary, out)
            out.write('\n')
        else:
            out.write(f'{a.output}: ' + ', '.join(f'{t} {n}' for t, n in counts.items())
                      + '\n')
    for err in rec.decode_errors.values():   # what the report above read around
        print(f'carla_log {a.command}: {a.file}: {err}', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
