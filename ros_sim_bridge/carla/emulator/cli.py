"""``python -m ros_sim_bridge.carla.emulator.cli out.log --seconds 60 --vehicles 10 --layout
ue4-0.9.13``: a recorder file of the generator's scripted scene (:mod:`.scene`)."""
from __future__ import annotations

import argparse
import sys

from ros_sim_bridge.core.cli import number_problem, parse_args, run_main

from .scene import LAYOUTS, Scene
from .writer import write

PROG = 'python -m ros_sim_bridge.carla.emulator.cli'


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description='Write a CARLA recorder file of a '
                                 'scripted scene.')
    ap.add_argument('output')
    ap.add_argument('--seconds', type=float, default=20.0)
    ap.add_argument('--rate', type=float, default=20.0, help='frames per second')
    ap.add_argument('--vehicles', type=int, default=4, help='at least 1 (the hero)')
    ap.add_argument('--walkers', type=int, default=2)
    ap.add_argument('--traffic-lights', type=int, default=2)
    ap.add_argument('--layout', choices=sorted(LAYOUTS), default='ue4-0.9.13')
    return ap


def argument_problem(a) -> str | None:
    """The first argument the scene cannot be made of, as one line (exit 2)."""
    problem = number_problem(a, positive=('seconds', 'rate'),
                             non_negative=('walkers', 'traffic_lights'))
    if problem is None and a.vehicles < 1:
        problem = f'--vehicles must be at least 1, the hero (got {a.vehicles})'
    return problem


def main(argv=None) -> int:
    """Exit 0 with the file written; 2 on a bad argument; 0 on SIGINT/SIGTERM."""
    return run_main(lambda: _main(argv))


def _main(argv) -> int:
    a = parse_args(build_parser(), argv, argument_problem)
    scene = Scene(a.seconds, a.rate, a.vehicles, a.walkers, a.traffic_lights)
    with open(a.output, 'wb') as out:
        n = write(out, scene, a.layout)
    print(f'{a.output}: {scene.frames} frames, {scene.seconds:g} s, {n} bytes, layout '
          f'{a.layout}, destroyed actor {scene.destroyed}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
