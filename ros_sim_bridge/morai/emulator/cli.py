"""The ``morai_sim`` executable: a :class:`~.scene.MoraiScene` served by a
:class:`~.server.MoraiEmulator` (``python -m ros_sim_bridge.morai.emulator.cli --help``)."""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Optional, Sequence

from ros_sim_bridge.core.cli import number_problem, parse_args, run_main
from ros_sim_bridge.morai import codec as morai

from .scene import DEFAULT_RELEASE, LOG, RELEASES, MoraiScene
from .server import LOOPBACK, RECV_PORTS, SEND_PORTS, MoraiEmulator


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog='morai_sim', description='MORAI SIM UDP emulator (loopback by default).')
    ap.add_argument('--host', default=LOOPBACK,
                    help='destination host for status datagrams (default 127.0.0.1)')
    ap.add_argument('--bind', default=LOOPBACK,
                    help='address to bind the command ports on (default 127.0.0.1)')
    ap.add_argument('--rate', type=float, default=20.0, help='status rate in Hz (default 20)')
    ap.add_argument('--duration', type=float, default=0.0,
                    help='seconds to run, 0 = until interrupted')
    ap.add_argument('--release', choices=list(RELEASES), default=DEFAULT_RELEASE,
                    help='layout preset (default %(default)s)')
    ap.add_argument('--ego-layout', choices=morai.ego_status.LAYOUT_NAMES)
    ap.add_argument('--object-layout', choices=morai.object_info.LAYOUT_NAMES)
    ap.add_argument('--collision-layout', choices=morai.collision.LAYOUT_NAMES)
    ap.add_argument('--collision-period', type=float, default=30.0,
                    help='seconds between scripted collisions, 0 = none')
    for name, port in SEND_PORTS.items():
        ap.add_argument(f'--{name.replace("_", "-")}-port', type=int, default=port,
                        help=f'send {name} to this port (default {port}; -1 = do not send)')
    ap.add_argument('--multi-ego-setting-send-port', type=int, default=-1,
                    help='also send Multi Ego Setting to this port (default: off)')
    for name, port in RECV_PORTS.items():
        ap.add_argument(f'--{name.replace("_", "-")}-listen-port', type=int, default=port,
                        help=f'receive {name} on this port (default {port}; -1 = off)')
    ap.add_argument('--log-level', default='INFO', type=str.upper,
                    choices=('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'))
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``morai_sim`` executable; SIGINT/SIGTERM end it with exit code 0 (core.cli)."""
    return run_main(lambda: _main(argv))


def argument_problem(args) -> Optional[str]:
    """The first argument out of range, as one line naming it (None: all fine).  The same
    checks as rflysim_sim: a bad value is an exit 2, never a traceback or a run for ever."""
    problem = number_problem(args, positive=('rate',),
                             non_negative=('duration', 'collision_period'))
    if problem:
        return problem
    ports = [(f'{n}_port', 'a UDP port 1..65535, or -1: do not send', False) for n in SEND_PORTS]
    ports.append(('multi_ego_setting_send_port', 'a UDP port 1..65535, or -1: do not send',
                  False))
    ports += [(f'{n}_listen_port', 'a UDP port 1..65535, 0: any free port, or -1: off', True)
              for n in RECV_PORTS]
    for option, what, zero_ok in ports:
        port = getattr(args, option)
        if not (port == -1 or (zero_ok and port == 0) or 1 <= port <= 65535):
            return f'--{option.replace("_", "-")} must be {what} (got {port})'
    return None


def _main(argv: Optional[Sequence[str]]) -> int:
    args = parse_args(build_parser(), argv, argument_problem)
    logging.basicConfig(level=args.log_level,
                        format='%(asctime)s %(name)s %(levelname)s %(message)s')
    scene = MoraiScene(args.release, ego_layout=args.ego_layout,
                       object_layout=args.object_layout, collision_layout=args.collision_layout,
                       collision_period=args.collision_period)
    send = {n: getattr(args, f'{n}_port') for n in SEND_PORTS if getattr(args, f'{n}_port') >= 0}
    if args.multi_ego_setting_send_port >= 0:
        send['multi_ego_setting'] = args.multi_ego_setting_send_port
    recv = {n: getattr(args, f'{n}_listen_port') for n in RECV_PORTS
            if getattr(args, f'{n}_listen_port') >= 0}
    try:
        emu = MoraiEmulator(scene, dest_host=args.host, bind_host=args.bind, send_ports=send,
                            recv_ports=recv, rate=args.rate)
    except OSError as exc:          # a port in use, an address not here: named, exit 1
        print(f'morai_sim: {exc.strerror or exc}', file=sys.stderr)
        return 1
    with emu:
        LOG.info('MORAI emulator: layouts %s/%s/%s, sending to %s %s, listening on %s',
                 scene.ego_layout, scene.object_layout, scene.collision_layout, args.host,
                 send, emu.bound_ports)
        emu.serve(args.duration or None)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
