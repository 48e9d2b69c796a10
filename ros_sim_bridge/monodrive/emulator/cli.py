"""``monodrive_sim``: the monoDrive simulator emulator's command line (argparse only; the
scene is :mod:`.scene`, the sockets :mod:`.server`)."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from ros_sim_bridge.core.cli import number_problem, parse_args, run_main
from ros_sim_bridge.monodrive.codec import control
from ros_sim_bridge.monodrive.emulator.server import DEFAULT_HOST, DEFAULT_PORT, MonoDriveSim


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog='monodrive_sim',
                                 description='monoDrive simulator emulator (JSON over TCP)')
    ap.add_argument('--host', default=DEFAULT_HOST, help='address to listen on (127.0.0.1)')
    ap.add_argument('--port', type=int, default=DEFAULT_PORT, help='control port (8999)')
    ap.add_argument('--rate', type=float, default=10.0, help='scene and sensor rate, Hz')
    ap.add_argument('--header', type=int, choices=(12, 16), default=16,
                    help='sensor header generation: 12 (2019 – May 2020) or 16 bytes')
    ap.add_argument('--reply-magic', choices=('new', 'legacy'), default='new',
                    help='reply magic: new 0x6d6f6e6f or legacy 0x6f6e6f6d (clients ≤ May 2020)')
    ap.add_argument('--no-reference', action='store_true', help='omit reference from replies')
    ap.add_argument('--sensors', help='JSON sensor list to stream from the start')
    ap.add_argument('--duration', type=float, default=0.0, help='seconds to run (0 = forever)')
    args = parse_args(ap, argv, argument_problem)
    return run_main(lambda: _serve(args))


def argument_problem(args) -> Optional[str]:
    """The first argument out of range as one line naming it, None when all are fine (the
    checks of rflysim_sim and morai_sim: exit 2, never a traceback)."""
    problem = number_problem(args, positive=('rate',), non_negative=('duration',))
    if problem:
        return problem
    if not 0 <= args.port <= 65535:
        return f'--port must be a TCP port 1..65535, or 0: any free port (got {args.port})'
    return None


def _serve(args) -> int:
    """Build and serve until ``--duration`` or a stop signal (core.cli.run_main: exit 0)."""
    try:
        sim = MonoDriveSim(args.host, args.port, rate=args.rate, header_size=args.header,
                           reply_magic=(control.CLIENT_MAGIC if args.reply_magic == 'new'
                                        else control.LEGACY_REPLY_MAGIC),
                           echo_reference=not args.no_reference,
                           log=lambda text: print(f'monodrive_sim: {text}', flush=True))
        if args.sensors:
            from ros_sim_bridge.monodrive.codec.config import load_config
            for sensor_cfg in load_config(args.sensors, 'sensors').sensors():
                sim.configure_sensor(sensor_cfg)
    except OSError as exc:        # a port in use (named), an address not on this host
        print(f'monodrive_sim: {exc.strerror or exc}', file=sys.stderr)
        return 1
    except ValueError as exc:     # a bad --sensors file
        print(f'monodrive_sim: {exc}', file=sys.stderr)
        return 2
    print(f'monodrive_sim: control on {args.host}:{sim.port}, {args.rate:g} Hz, '
          f'{args.header}-byte sensor headers', flush=True)
    try:
        sim.start()
        sim.serve_forever(args.duration or None)
    finally:
        sim.stop()
        print(f'monodrive_sim: {len(sim.received)} control messages, {sim.errors} errors',
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())

