"""``python -m ros_sim_bridge.carla.emulator.cli out.log --seconds 60 --vehicles 10 --layout ue4``:
a recorder file of the generator's scripted scene (:mod:`.scene`)."""
from __future__ import annotations

import argparse
import sys

from .scene import LAYOUTS, Scene
from .writer import write


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description='Write a CARLA recorder file of a scripted scene.')
    ap.add_argument('output')
    ap.add_argument('--seconds', type=float, default=20.0)
    ap.add_argument('--rate', type=float, default=20.0, help='frames per second')
    ap.add_argument('--vehicles', type=int, default=4)
    ap.add_argument('--walkers', type=int, default=2)
    ap.add_argument('--traffic-lights', type=int, default=2)
    ap.add_argument('--layout', choices=sorted(LAYOUTS), default='ue4-0.9.13')
    a = ap.parse_args(argv)
    scene = Scene(a.seconds, a.rate, a.vehicles, a.walkers, a.traffic_lights)
    with open(a.output, 'wb') as out:
        n = write(out, scene, a.layout)
    print(f'{a.output}: {scene.frames} frames, {n} bytes, layout {a.layout}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
