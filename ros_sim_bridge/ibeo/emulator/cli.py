"""``ibeo_lux_sim``: the ibeo LUX / LD-MRS or ECU emulator on 127.0.0.1.

    python -m ros_sim_bridge.ibeo.emulator.cli --port 12002 --rate 12.5 --layers 4
    python -m ros_sim_bridge.ibeo.emulator.cli --replay capture.hexlog --replay-speed 0
    python -m ros_sim_bridge.ibeo.emulator.cli --ecu --scanners 4 --points 60000 --rate 12.5
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Optional, Sequence

from ros_sim_bridge.core.cli import parse_args, run_main
from ros_sim_bridge.ibeo.emulator.scene import (DEFAULT_HOST, DEFAULT_PORT, RATES_HZ, EcuScene,
                                               LuxScene)
from ros_sim_bridge.ibeo.emulator.server import LuxServer, load_messages


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``ibeo_lux_sim`` executable; SIGINT/SIGTERM end it with exit code 0 (core.cli)."""
    return run_main(lambda: _main(argv))


def _main(argv: Optional[Sequence[str]]) -> int:
    ap = argparse.ArgumentParser(prog='ibeo_lux_sim', description='ibeo LUX / LD-MRS emulator (TCP, Ibeo protocol)')
    ap.add_argument('--host', default=DEFAULT_HOST, help='address to listen on (127.0.0.1)')
    ap.add_argument('--port', type=int, default=DEFAULT_PORT, help='TCP port (12002)')
    ap.add_argument('--rate', type=float, default=12.5,
                    help=f'scan rate Hz (LUX: one of {RATES_HZ}; ECU: any > 0)')
    ap.add_argument('--layers', type=int, default=4, choices=(4, 8))
    ap.add_argument('--duration', type=float, default=0.0, help='seconds to run (0 = forever)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--warning-period', type=float, default=8.0,
                    help='LUX: mean seconds between 0x2030 warnings (8)')
    ap.add_argument('--device-id', type=int, default=0)
    ap.add_argument('--replay', help='hex log (one message per line) or raw Ibeo stream / .idc')
    ap.add_argument('--replay-speed', type=float, default=1.0, help='0 = as fast as possible')
    ap.add_argument('--loop', action='store_true', help='loop the replay')
    ap.add_argument('--ecu', action='store_true',
                    help='be an Ibeo ECU / FUSION SYSTEM (needs Set Filter from each client)')
    ap.add_argument('--scanners', type=int, default=4, help='ECU: scanners fused (4)')
    ap.add_argument('--points', type=int, default=60_000, help='ECU: points per 0x2205 (60000)')
    args = parse_args(ap, argv)

    def refuse(text: str) -> int:
        print(f'ibeo_lux_sim: {text}', file=sys.stderr)
        return 2
    if args.ecu:
        try:
            scene = EcuScene(args.rate, scanners=args.scanners, points=args.points,
                             seed=args.seed, start_unix_ns=time.time_ns())
        except ValueError as exc:
            return refuse(f'--ecu: {exc}')
    else:
        if args.rate not in RATES_HZ:
            ap.error(f'--rate: a LUX scans at one of {RATES_HZ} Hz')
        if not (args.warning_period > 0 and math.isfinite(args.warning_period)):
            return refuse(f'--warning-period must be > 0 s, not {args.warning_period}')
        scene = LuxScene(args.layers, args.rate, seed=args.seed, start_unix_ns=time.time_ns(),
                         port=args.port, warning_period_s=args.warning_period)
    if not (args.replay_speed >= 0 and math.isfinite(args.replay_speed)):
        return refuse(f'--replay-speed must be >= 0 (0: as fast as possible), not '
                      f'{args.replay_speed}')
    replay = None
    if args.replay:
        try:
            replay = load_messages(args.replay)
        except OSError as exc:
            return refuse(f'--replay: {exc}')
        if not replay:
            return refuse(f'--replay {args.replay}: no Ibeo message in it (a hex log holds one '
                          'message per line; a binary stream or .idc its bytes)')
    try:
        server = LuxServer(scene, args.host, args.port, replay=replay,
                           replay_speed=args.replay_speed, replay_loop=args.loop,
                           device_id=args.device_id)
    except OSError as exc:                  # the port is taken, the address not ours
        return refuse(f'cannot listen on {args.host}:{args.port}: {exc}')
    what = (f'replay of {len(replay)} messages' if replay
            else f'ECU: {args.scanners} scanners, {args.points} points per scan, '
                 f'{args.rate:g} Hz' if args.ecu
            else f'{args.layers} layers, {args.rate:.1f} Hz')
    print(f'{"ECU" if args.ecu else "LUX"} emulator on {args.host}:{server.port} ({what})', flush=True)
    try:
        server.serve_forever(args.duration or None)
    finally:
        server.stop()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
