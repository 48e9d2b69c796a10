"""``ibeo_idc``: inspect and convert Ibeo ``.idc`` recordings.

    ibeo_idc info drive.idc                 # types, counts, time span, devices, damage
    ibeo_idc to-bag drive.idc drive_bag     # rosbag2 folder (metadata.yaml + MCAP)
    ibeo_idc make-demo demo.idc             # a synthetic ECU recording to try it on
    ibeo_idc from-hex cap.hexlog cap.idc    # a hex log (one message per line) as an .idc

``info`` and ``from-hex`` need no ROS at all.  ``to-bag`` converts every message with a ROS
form through :class:`~ros_sim_bridge.ibeo.ros.ecu_conversions.IbeoToRos` (the topics and types
listed in docs/ibeo.md) and writes them with the suite's
:class:`~ros_sim_bridge.ros.bag.BagWriter`, log time = the Ibeo header's NTP time.  Damaged
regions and messages that do not decode are reported and skipped; the conversion goes on.  A
ROS message left out of a record for a NaN or ±Inf (a transform, odometry, IMU, twist) is
counted apart, the record's other messages written.  A header time that is invalid
(:func:`~ros_sim_bridge.core.ntp.check_ntp_times`: 0, all ones, more than
``--max-time-jump`` s from its neighbours, an excursion the clock came back from) is counted
and replaced by the last valid one (the first for leading ones), in ``info``'s span as in the
bag; the message is written.
A record's own time (:mod:`~ros_sim_bridge.ibeo.record_times`: scan start, object list
mid-scan time, vehicle state, GPS, image, GpsImu, odometry, measurement list, CAN receive
time, the LUX types' too) that is 0, all ones or more than ``--max-time-jump`` s from its
header time is counted, and the header time stamps its messages.  Ctrl-C / SIGTERM close the
bag cleanly (exit 0).

A file that cannot be used (missing, empty, no Ibeo message in it, an output folder whose
parent does not exist, a value out of range) is one line on stderr and exit code 2; output
cut short by its reader (``ibeo_idc info x.idc | head``) ends quietly with exit code 0.
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from ros_sim_bridge.core.cli import finite_number, run_tool, strip_ros_args
from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S, NTP_UNIX_OFFSET
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec.header import DEFAULT_MAX_BODY
from ros_sim_bridge.ibeo.idc import IdcReader, IdcSummary, hex_messages


def format_ntp(ntp: Optional[int]) -> str:
    if ntp is None:
        return '-'
    sec = ntp >> 32
    if sec >= NTP_UNIX_OFFSET:
        t = datetime.datetime.fromtimestamp((ntp / 4294967296.0) - NTP_UNIX_OFFSET,
                                            datetime.timezone.utc)
        return t.isoformat(timespec='milliseconds')
    return f'{ntp / 4294967296.0:.3f} s after power-up (clock not set)'


#: what makes each kind of time invalid besides 0 and all ones (``{}``: the bound in s)
TIME_RULES = {'header time': 'more than {:g} s from the valid ones',
              'record time': 'more than {:g} s from its header time'}
#: what becomes of a message whose record's own time is invalid (info and to-bag alike)
RECORD_TIME_USE = 'stamped with their header time'


def invalid_time_lines(count: int, examples: list, max_jump_s: float, what: str,
                       which: str = 'header time') -> list:
    """The lines that count the messages with an invalid ``which`` (a key of
    :data:`TIME_RULES`), say ``what`` became of them and name the first."""
    if not count:
        return []
    lines = [f'{count} message{"s" * (count != 1)} with an invalid {which} (0, all ones '
             f'or {TIME_RULES[which].format(max_jump_s)}): {what}']
    lines += [f'  at byte {offset}: 0x{dt:04X} {registry.type_name(dt)}: {why}'
              for offset, dt, why in examples]
    return lines


def format_summary(s: IdcSummary, max_jump_s: float = MAX_TIME_JUMP_S) -> str:
    lines = [f'file:      {s.path}', f'size:      {s.file_size} bytes',
             f'messages:  {s.messages}',
             f'start:     {format_ntp(s.first_ntp)}', f'end:       {format_ntp(s.last_ntp)}',
             f'duration:  {s.duration_s:.3f} s']
    if s.unset_clock_messages:
        lines.append(f'           ({s.unset_clock_messages} messages before the clock was set, '
                     'stamped since power-up: not in the span)')
    lines += invalid_time_lines(s.invalid_times, s.invalid_time_examples, max_jump_s,
                                'not in the span')
    lines += invalid_time_lines(s.invalid_record_times, s.invalid_record_time_examples,
                                max_jump_s, RECORD_TIME_USE, 'record time')
    lines.append('types:')
    decodable = set(registry.registered_types())
    for dt, n in sorted(s.types.items()):
        mark = '' if dt in decodable else '  (not decoded: skipped by size)'
        lines.append(f'  0x{dt:04X} {registry.type_name(dt):<28} {n:>8}{mark}')
    lines.append('devices:   ' + (', '.join(f'{d} ({n} messages)'
                                            for d, n in sorted(s.devices.items())) or '-'))
    lines.append(f'damage:    {len(s.damages)} region(s), {s.bytes_skipped} bytes skipped')
    for d in s.damages:
        lines.append(f'  at byte {d.offset}: {d.skipped} bytes skipped ({d.reason})')
    if s.chain_breaks:
        lines.append(f'previous-size chain broken {len(s.chain_breaks)} time(s):')
        for c in s.chain_breaks[:20]:
            lines.append(f'  at byte {c.offset}: says {c.found}, previous body was {c.expected}')
    return '\n'.join(lines)


class Refused(Exception):
    """What the user asked for cannot be done: one line on stderr, exit code 2."""


def open_reader(path, max_body: int) -> IdcReader:
    """The reader of ``path``; Refused for an empty file (OSError when it cannot be opened)."""
    reader = IdcReader(path, max_body=max_body)
    if reader.file_size == 0:
        reader.close()
        raise Refused(f'{path}: empty file (0 bytes), no Ibeo message')
    return reader


def check_output_folder(path) -> None:
    """Refused when the folder ``path`` is to be written in does not exist (nothing is created
    but ``path`` itself)."""
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        raise Refused(f'{path}: the folder {parent} does not exist')


def require_messages(reader: IdcReader) -> None:
    """Refused when the file holds no Ibeo message (text, another format, all damage)."""
    if not reader.entries:
        why = (f' (at byte {reader.damages[0].offset}: {reader.damages[0].reason})'
               if reader.damages else '')
        raise Refused(f'{reader.path}: no Ibeo message in it{why}')


def cmd_info(args, stops) -> int:
    with open_reader(args.file, args.max_body) as reader:
        require_messages(reader)
        print(format_summary(reader.summary(args.max_time_jump), args.max_time_jump))
    return 0


def left_out_lines(report) -> list:
    """The lines that count the ROS messages left out of written records (a NaN / ±Inf: the
    record's other messages written, or it had none other) and name the first."""
    lines = []
    for (dt, written), (records, n) in sorted(report.left_out.items()):
        rest = "the record's other messages written" if written else \
            'the record has no other: not written'
        lines.append(f'{n} message{"s" * (n != 1)} left out of {records} × 0x{dt:04X} '
                     f'{registry.type_name(dt)} for a NaN or infinite value ({rest})')
    lines += [f'  at byte {offset}: {text}' for offset, text in report.left_out_examples]
    return lines


def live_node_name(reader: IdcReader) -> str:
    """The driver that would publish this recording live: ``ibeo_lux`` for LUX / LD-MRS types
    only, else ``ibeo_ecu`` (the name its /diagnostics statuses start with)."""
    from ros_sim_bridge.ibeo.idc import IDC_TRAILER
    lux = {registry.SCAN, registry.OBJECTS, registry.VEHICLE_STATE, registry.ERRORS_WARNINGS,
           registry.REPLY, registry.COMMAND, IDC_TRAILER}
    return 'ibeo_lux' if all(e.data_type in lux for e in reader.entries) else 'ibeo_ecu'


def cmd_to_bag(args, stops) -> int:
    out = Path(args.out)
    if out.exists():
        raise Refused(f'{out} exists; a bag is written to a new folder')
    check_output_folder(out)
    with open_reader(args.file, args.max_body) as reader:
        require_messages(reader)            # no bag at all
        node_name = args.node_name or live_node_name(reader)
        report = None
        try:                                # a stop signal: the message at hand finished, the
            with stops.deferred():          # bag closed, the summary printed, exit 0
                from ros_sim_bridge.ibeo.ros.to_bag import convert
                report = convert(reader, out, namespace=args.namespace,
                                 progress=not args.no_progress,
                                 should_stop=lambda: bool(stops.fired), node_name=node_name,
                                 max_jump_s=args.max_time_jump)
        except KeyboardInterrupt:           # raised as the deferred block ends
            pass
    if report.interrupted or stops.fired:
        size = max(reader.file_size, 1)
        print(f'ibeo_idc: interrupted at byte {report.stopped_at} of {reader.file_size} '
              f'({100 * report.stopped_at / size:.0f} %); the bag holds what was converted so '
              'far', file=sys.stderr)
    print(f'wrote {sum(report.written.values())} messages to {out}')
    for topic, n in sorted(report.written.items()):
        print(f'  {topic:<32} {n:>8}')
    for (dt, kind), n in sorted(report.undecodable.items()):
        print(f'  skipped {n} × 0x{dt:04X} {registry.type_name(dt)} ({kind})')
    for dt, n in sorted(report.without_ros_form.items()):
        print(f'  {n} × 0x{dt:04X} {registry.type_name(dt)} have no ROS form')
    for offset, text in report.first_errors:
        print(f'  at byte {offset}: {text}')
    for line in left_out_lines(report):
        print(f'  {line}')
    for line in invalid_time_lines(report.invalid_times, report.invalid_time_examples,
                                   args.max_time_jump, 'given the last valid time (the '
                                   'first for leading ones)'):
        print(f'  {line}')
    for line in invalid_time_lines(report.invalid_record_times,
                                   report.invalid_record_time_examples, args.max_time_jump,
                                   RECORD_TIME_USE, 'record time'):
        print(f'  {line}')
    if report.non_finite_points:
        print(f'  {report.non_finite_points} point(s) of {report.non_finite_scans} scan(s) with '
              'a NaN or infinite x, y or z: written as sent, those clouds not dense')
    if reader.damages:
        print(f'damage: {len(reader.damages)} region(s), '
              f'{sum(d.skipped for d in reader.damages)} bytes skipped')
        for d in reader.damages:
            print(f'  at byte {d.offset}: {d.skipped} bytes ({d.reason})')
    return 0


def cmd_make_demo(args, stops) -> int:
    from ros_sim_bridge.ibeo.ecu_recording import EcuFrames, write_recording
    try:                                     # the values checked before the file is created
        EcuFrames(scanners=args.scanners, points=args.points)
        if not (math.isfinite(args.seconds) and 0 < args.seconds <= 24 * 3600):
            raise ValueError(f'--seconds must be above 0 and at most a day, not {args.seconds}')
    except ValueError as exc:
        raise Refused(str(exc)) from None
    check_output_folder(args.file)
    n = write_recording(args.file, seconds=args.seconds, scanners=args.scanners,
                        points=args.points, coordinates=args.coordinates)
    print(f'wrote {n} messages to {args.file}')
    return 0


def cmd_from_hex(args, stops) -> int:
    """The messages of a hex log, their bytes unchanged, back to back in a new ``.idc``;
    bad lines are named and skipped, a log without any message is refused."""
    src, out = Path(args.file), Path(args.out)
    check_output_folder(out)
    if out.exists() and src.exists() and out.samefile(src):
        raise Refused(f'{out} is the input file')
    if out.is_symlink() or out.exists() and not out.is_file():   # a link, a device, a FIFO:
        raise Refused(f'{out} exists and is not a regular file')    # replaced, not written
    part = out.with_name(out.name + '.part')
    if part.exists() or part.is_symlink():
        raise Refused(f'{part} exists (another conversion into {out}?)')
    written, bad = 0, []
    try:
        with open(src, 'rb') as f, open(part, 'wb') as w:
            for number, data, why in hex_messages(f):
                if data is None:
                    bad.append((number, why))
                else:
                    w.write(data)
                    written += 1
        if not written:
            first = f' (line {bad[0][0]}: {bad[0][1]})' if bad else ' (no line in it)'
            raise Refused(f'{src}: no Ibeo message in it{first}')
        os.replace(part, out)
    finally:
        if part.exists():
            part.unlink()
    for number, why in bad[:10]:
        print(f'ibeo_idc: {src}: line {number} skipped: {why}', file=sys.stderr)
    if len(bad) > 10:
        print(f'ibeo_idc: {src}: {len(bad) - 10} more lines skipped', file=sys.stderr)
    print(f'wrote {written} messages to {out}' + (f' ({len(bad)} bad lines skipped)'
                                                  if bad else ''))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog='ibeo_idc', description=__doc__.split('\n')[0])
    p.add_argument('--max-body', type=int, default=DEFAULT_MAX_BODY,
                   help=f'largest message body accepted (bytes, default {DEFAULT_MAX_BODY})')
    p.add_argument('--max-time-jump', default=MAX_TIME_JUMP_S,
                   type=finite_number(inclusive=False, what='a finite number of seconds'),
                   help='s a header time may lie from the valid ones before it counts as '
                        f'invalid (default {MAX_TIME_JUMP_S:g}); 0 and all ones always do')
    sub = p.add_subparsers(dest='command', required=True)
    info = sub.add_parser('info', help='types, counts, time span, devices, damage')
    info.add_argument('file')
    info.set_defaults(run=cmd_info)
    bag = sub.add_parser('to-bag', help='convert to a rosbag2 folder (MCAP)')
    bag.add_argument('file')
    bag.add_argument('out', help='new bag folder')
    bag.add_argument('--namespace', default='/ibeo',
                     help='prefix of the relative topics (default /ibeo)')
    bag.add_argument('--no-progress', action='store_true', help='no progress bar')
    bag.add_argument('--node-name', default='',
                     help='/diagnostics status names start with "<name>: " (default: the live '
                          'driver\'s, ibeo_lux for a LUX / LD-MRS recording, else ibeo_ecu)')
    bag.set_defaults(run=cmd_to_bag)
    demo = sub.add_parser('make-demo', help='write a synthetic ECU recording')
    demo.add_argument('file')
    demo.add_argument('--seconds', type=float, default=4.0)
    demo.add_argument('--scanners', type=int, default=3)
    demo.add_argument('--points', type=int, default=6000, help='points per 0x2205 scan')
    demo.add_argument('--coordinates', choices=('vehicle', 'scanner', 'both'), default='vehicle',
                      help="the scans' points in vehicle coordinates, in each scanner's own, or "
                           'alternating frame by frame')
    demo.set_defaults(run=cmd_make_demo)
    hexp = sub.add_parser('from-hex', help='a hex log (one message per line, e.g. a .hexlog '
                          'capture) as a binary .idc, the message bytes unchanged')
    hexp.add_argument('file', help='hex log: one complete Ibeo message per line')
    hexp.add_argument('out', help='.idc file to write (replaced if it exists)')
    hexp.set_defaults(run=cmd_from_hex)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line: SIGINT/SIGTERM and a reader that went away end it with 0
    (core.cli.run_tool); what cannot be done is one line and exit code 2."""
    args = parser().parse_args(strip_ros_args(sys.argv[1:] if argv is None else argv))
    return run_tool(lambda stops: _run(args, stops), executable=argv is None)


def _run(args, stops) -> int:
    try:
        return args.run(args, stops)
    except BrokenPipeError:         # the reader went away: run_tool ends quietly
        raise
    except (Refused, OSError) as exc:   # refused; missing, a directory, no room for the bag
        print(f'ibeo_idc: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
