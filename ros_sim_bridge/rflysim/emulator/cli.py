"""The ``rflysim_sim`` executable: argument checks, a :class:`~.scene.Scene` and a
:class:`~.server.Sender` sending it (``python -m ros_sim_bridge.rflysim.emulator.cli --help``)."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from ros_sim_bridge.core.cli import number_problem, parse_args, run_main, stop_requested
from ros_sim_bridge.rflysim import codec

from .scene import DEFAULT_GPS_ORIGIN, Scene
from .server import FORMS, Sender


def _floats(text: str, n: int, what: str) -> tuple:
    try:
        values = tuple(float(v) for v in text.split(','))
    except ValueError:
        raise argparse.ArgumentTypeError(f'{what}: {text!r} is not {n} comma-separated numbers')
    if len(values) != n:
        raise argparse.ArgumentTypeError(f'{what}: {n} comma-separated numbers, got {len(values)}')
    return values


def _ids(text: str) -> list:
    try:
        ids = [int(v) for v in text.strip('[] ').split(',') if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f'--ids: {text!r} is not a list of integers')
    if not ids or any(not 1 <= i <= 255 for i in ids):
        raise argparse.ArgumentTypeError('--ids: CopterIDs 1..255')
    return ids


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog='rflysim_sim',
        description='Send RflySim ground truth for N simulated multicopters over UDP '
                    '(vehicle i → port base + 2·(i − 1)).')
    who = p.add_mutually_exclusive_group()
    who.add_argument('--vehicles', type=int, default=None, metavar='N',
                     help='CopterIDs 1..N (default: 3)')
    who.add_argument('--ids', type=_ids, default=None, metavar='ID,ID,…',
                     help='explicit CopterIDs, e.g. 1,2,5')
    p.add_argument('--rate', type=float, default=100.0, metavar='HZ',
                   help='truth packets per second per vehicle (default 100)')
    p.add_argument('--duration', type=float, default=0.0, metavar='S',
                   help='seconds to send; 0 = until Ctrl-C (default)')
    p.add_argument('--host', default='127.0.0.1', help='destination address (default 127.0.0.1)')
    p.add_argument('--base-port', type=int, default=codec.TRUTH_BASE_PORT,
                   help='port of CopterID 1 (default 30101)')
    p.add_argument('--form', choices=sorted(FORMS), default='bare168',
                   help='bare168: SOut2Simulator (current CopterSim); legacy200: old '
                        'netDataShort; simple112: SOut2SimulatorSimpleTime; doc200: the '
                        "document's netDataShort (default bare168)")
    p.add_argument('--gps-origin', type=lambda s: _floats(s, 3, '--gps-origin'),
                   default=DEFAULT_GPS_ORIGIN, metavar='LAT,LON,ALT',
                   help='map origin, degrees and metres (default %(default)s)')
    p.add_argument('--gps-order', choices=sorted(codec.GPS_ORDERS), default='lat_lon_alt',
                   help='order of PosGPS on the wire (default lat_lon_alt, as the document says)')
    p.add_argument('--origin-period', type=float, default=1.0, metavar='S',
                   help='seconds between GPS-origin packets (0: only at start; default 1)')
    p.add_argument('--collision-period', type=float, default=10.0, metavar='S',
                   help='seconds between scripted collisions (0: none)')
    p.add_argument('--quiet', action='store_true', help='no summary')
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``rflysim_sim`` executable; SIGINT/SIGTERM end it with exit code 0 (core.cli)."""
    return run_main(lambda: _main(argv))


def argument_problem(args) -> Optional[str]:
    """The first argument out of range, as one line naming it; None when all are fine."""
    problem = number_problem(args, positive=('rate',),   # a duration of -1 ran for ever
                             non_negative=('duration', 'origin_period', 'collision_period'))
    if problem:
        return problem
    if args.vehicles is not None and not 1 <= args.vehicles <= 255:
        return '--vehicles must be 1..255'
    return None


def _main(argv: Optional[Sequence[str]]) -> int:
    args = parse_args(build_parser(), argv, argument_problem)
    ids = args.ids or list(range(1, (args.vehicles or 3) + 1))
    scene = Scene(ids, gps_origin=args.gps_origin, gps_order=args.gps_order,
                  collision_period=args.collision_period)
    try:
        sender = Sender(scene, host=args.host, base_port=args.base_port, form=args.form,
                        rate=args.rate, origin_period=args.origin_period)
    except Exception as exc:  # bad port range etc.
        print(f'rflysim_sim: {exc}', file=sys.stderr)
        return 2
    if not args.quiet:
        ports = ', '.join(f'{cid}→{port}' for cid, port in sender.ports.items())
        print(f'rflysim_sim: {args.form} at {args.rate:g} Hz to {args.host} ({ports})',
              flush=True)
    with sender:
        sender.run(args.duration, stop=stop_requested)
    if not args.quiet:
        print(f'rflysim_sim: sent {sender.total_truth} truth packets '
              f'({", ".join(f"{k}: {v}" for k, v in sender.sent.items())}), '
              f'{sender.extras["gps_origin"]} GPS origins, {sender.extras["crash"]} crash '
              f'notices, {sender.bytes_sent} bytes, {sender.errors} send errors', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
