"""`make demo`: the whole suite against its built-in emulators, recorded, tabled and pictured.

1. ``ros_sim_bridge_run --sim --record BAG`` for a fixed time (a progress line): every driver as
   its installed executable with its config/<source>.yaml, in namespace /<source>, as
   ``ros2 launch ros_sim_bridge all.launch.py sim:=true`` starts them; every topic recorded
   through DDS into a rosbag2 MCAP folder (``ros2 bag info/play`` and Foxglove read it).
2. A table per topic from the bag: type, count, rate, one decoded sample.
3. a picture drawn from the bag (bag_report.render; make demo: build/demo.png).
4. The per-driver checks (each driver against its emulator, services called), as before.

DDS stays on this machine, in a demo-specific domain.
"""
from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
from pathlib import Path

from ros_sim_bridge.core.cli import run_main
from ros_sim_bridge.tools.ports import DEMO_DOMAINS
from ros_sim_bridge.tools.session import background_node, keep_dds_local
from ros_sim_bridge.tools.suite import SOURCES, demo_module

#: the suite's sources (namespaces the recording must hold)
CHECKS_SOURCES = tuple(SOURCES)
#: per-driver checks: name → module with run(node, seconds) -> lines (each source's
#: ``demo_check``, its ``ros/demo.py``)
CHECKS = {s.demo_check: demo_module(s) for s in SOURCES.values() if s.demo_check}
#: topics that stay empty in a healthy run: collisions (none in the demo), monoDrive's raw
#: replies (only for replies nobody waited for and unknown sensors)
QUIET_TOPICS = ('collision', '/raw')


def unexpectedly_empty(bag: dict) -> list[str]:
    """The topics of a recording (bag_report.read_bag: topic → (type, messages)) that hold
    no message but should: not :data:`QUIET_TOPICS`, not /parameter_events."""
    return [t for t, (_, msgs) in bag.items()
            if not msgs and not t.endswith(QUIET_TOPICS) and t != '/parameter_events']


def record_suite(bag: Path, seconds: float) -> int:
    """The suite with emulators for ``seconds``, recorded to ``bag`` (replaced if present)."""
    from ros_sim_bridge.tools import run
    if bag.exists():
        shutil.rmtree(bag)
    sets = [f'{s.name}.{k}={v}' for s in SOURCES.values() for k, v in s.demo_set]
    args = run.build_parser().parse_args([
        '--sim', '--free-ports', '--quiet', '--record', str(bag), '--duration', str(seconds),
        *(x for item in sets for x in ('--set', item))])
    show = run.progress_line(seconds)
    drivers = []                # what drives a source while it is recorded (demo_driver)
    try:
        for s in SOURCES.values():
            if s.demo_driver:
                drivers.append(getattr(importlib.import_module(demo_module(s)), s.demo_driver)())

        def progress(elapsed, recorder):
            for driver in drivers:
                driver(elapsed)
            show(elapsed, recorder)
        code = run.run(args, progress)
    finally:
        for driver in drivers:
            driver.close()
    sys.stderr.write('\n')
    return code


def run_checks(names, seconds: float) -> bool:
    failed = False
    with background_node('sim_bridge_demo') as node:
        for name in names:
            try:
                module = importlib.import_module(CHECKS[name])
                print('\n'.join(module.run(node, seconds)), flush=True)
            except Exception as exc:  # say what failed, go on with the next driver
                print(f'{name} check failed: {exc!r}', file=sys.stderr, flush=True)
                failed = True
    return not failed


def main(argv=None) -> int:
    """SIGINT/SIGTERM end it with exit code 0 after the running check has stopped its
    children (core.cli.run_main)."""
    return run_main(lambda: _main(argv))


def _main(argv) -> int:
    parser = argparse.ArgumentParser(prog='sim_bridge_demo', description=__doc__.splitlines()[0])
    parser.add_argument('--suite-seconds', type=float, default=10.0,
                        help='run time of the whole suite once every driver is up (the bag '
                        'also holds what arrived while they started and stopped)')
    parser.add_argument('--bag', type=Path, default=Path('build/demo_bag'),
                        help='rosbag2 folder to record (replaced)')
    parser.add_argument('--picture', type=Path, default=Path('build/demo.png'),
                        help='top-down picture drawn from the bag')
    parser.add_argument('--seconds', type=float, default=4.0, help='time per driver check')
    parser.add_argument('--only', choices=list(CHECKS), action='append',
                        help='run only these per-driver checks')
    parser.add_argument('--no-suite', action='store_true', help='skip the recorded suite run')
    parser.add_argument('--no-checks', action='store_true', help='skip the per-driver checks')
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    keep_dds_local(DEMO_DOMAINS)
    print(f'ros_sim_bridge demo (ROS_DOMAIN_ID={os.environ["ROS_DOMAIN_ID"]}, DDS on localhost)',
          flush=True)
    ok = True
    if not args.no_suite:
        from ros_sim_bridge.tools import bag_report
        print(f'\n== the suite with its emulators, {args.suite_seconds:.0f} s once every driver '
              f'is up, recorded (start-up and stop included) to {args.bag}', flush=True)
        if record_suite(args.bag, args.suite_seconds) != 0:
            # said above by the runner (a child that failed or did not stop on SIGINT); the
            # recording stands, judged below by what it holds
            print('warning: the suite did not run or stop cleanly (see above)', file=sys.stderr)
        bag = bag_report.read_bag(args.bag)
        spaces = {t.split('/')[1] for t, (_, msgs) in bag.items() if msgs and t.count('/') > 1}
        missing = [name for name in CHECKS_SOURCES if name not in spaces]
        if missing:
            print(f'error: nothing recorded from {", ".join(missing)}', file=sys.stderr)
            ok = False
        print('\n'.join(bag_report.table(bag)), flush=True)
        empty = unexpectedly_empty(bag)
        if empty:
            print(f'warning: no messages on {", ".join(empty)}', file=sys.stderr)
        print(f'picture: {bag_report.render(bag, args.picture)} (from {args.bag})', flush=True)
    if not args.no_checks:
        print('\n== per-driver checks', flush=True)
        ok = run_checks(args.only or list(CHECKS), args.seconds) and ok
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
