"""``ros_sim_bridge_run``: the suite without ``ros2 launch`` (issue #14).

    ros_sim_bridge_run [--sim] [--config FILE] [--record BAG] [--duration S] [--only SRC,...]
                       [--set SRC.PARAM=VALUE ...] [--free-ports]

Starts the drivers of tools/suite.py (the table all.launch.py uses) as child processes, each in
namespace /<source> with config/<source>.yaml, then ``--config`` (a params file with sections
for any of the nodes) and ``--set``; ``--sim`` also starts the built-in emulators. ``--record``
writes every topic, discovered through DDS, to a new rosbag2 MCAP folder (CDR as received, via
ros/bag.py). Ends after ``--duration`` s or on SIGINT/SIGTERM: children get SIGINT, then SIGTERM;
exit 0 (1 when a child failed on its own, e.g. a port it could not bind).
"""
from __future__ import annotations

import argparse
import importlib
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

import yaml

from ros_sim_bridge.core.cli import finite_number
from ros_sim_bridge.tools import suite
from ros_sim_bridge.tools.launcher import NodeProcess, config_file, ros_value, stop_all
from ros_sim_bridge.tools.ports import free_tcp_port, free_udp_ports
from ros_sim_bridge.tools.session import background_node


#: (kind, port) handed out by :func:`pick_port` in this run
_HANDED_OUT: set = set()


def pick_port(kind: str, count: int, step: int) -> int:
    """A free loopback port (or ``count`` ports ``step`` apart) for ``--free-ports``, none of
    them handed out before in this run: the nodes bind their ports only when they start, so a
    port free now could else be named twice (e.g. a MORAI listen port and an emulator's)."""
    for _ in range(200):
        base = free_tcp_port() if kind == 'tcp' else free_udp_ports(count, step)
        ports = {(kind, base + i * step) for i in range(count)}
        if not ports & _HANDED_OUT:
            _HANDED_OUT.update(ports)
            return base
    raise OSError(f'no {kind} port on 127.0.0.1 that this run has not handed out already')


def message_class(msgtype: str):
    """The rclpy class of ``pkg/msg/Name`` (rosidl_runtime_py's get_message, which PyPI lacks)."""
    package, kind, name = msgtype.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


def publisher_qos(node, topic: str):
    """The QoS a subscription to ``topic`` needs to hear every publisher, as ``ros2 bag`` picks
    it: reliable only if all offer it, transient-local (latched) likewise; deep history."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    infos = node.get_publishers_info_by_topic(topic)
    reliable = bool(infos) and all(
        i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
    latched = bool(infos) and all(
        i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
    return QoSProfile(depth=1000,
                      reliability=ReliabilityPolicy.RELIABLE if reliable
                      else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                      else DurabilityPolicy.VOLATILE)


class Recorder:
    """Every topic seen through DDS, subscribed raw and written as CDR to a BagWriter.

    Like ``ros2 bag record -a``: topics are discovered every ``period`` s; each subscription
    takes the publishers' QoS (reliable only if all offer it, transient-local likewise, so latched
    topics arrive too). Types the bag's type store does not know are reported, not recorded.
    """

    def __init__(self, node, writer, period: float = 0.25, exclude=()):
        self.node = node
        self.writer = writer
        self.exclude = set(exclude)
        self.subs: dict[str, object] = {}
        self.skipped: dict[str, str] = {}
        self.lock = threading.Lock()
        self.closed = False
        self.last_write = time.monotonic()
        self.timer = node.create_timer(period, self.discover)

    def drain(self, quiet: float = 0.5, timeout: float = 10.0) -> None:
        """Wait until nothing was written for ``quiet`` s (messages still queued in DDS for a
        busy recorder are taken before the end), at most ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and time.monotonic() - self.last_write < quiet:
            time.sleep(0.05)

    def discover(self) -> None:
        from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
        for topic, types in self.node.get_topic_names_and_types():
            if topic in self.subs or topic in self.skipped or topic in self.exclude:
                continue
            if not self.node.get_publishers_info_by_topic(topic):
                continue   # only subscribers so far: its QoS is not known yet
            msgtype = types[0]
            if msgtype not in self.writer.store.types:
                self.skipped[topic] = f'type {msgtype} unknown to the bag type store'
                continue
            try:
                cls = message_class(msgtype)
            except (AttributeError, ImportError, ValueError) as exc:
                self.skipped[topic] = f'type {msgtype} not importable: {exc}'
                continue
            qos = publisher_qos(self.node, topic)
            with self.lock:            # the bag offers on replay what the publishers offered
                self.writer.add_topic(
                    topic, msgtype, latched=qos.durability == DurabilityPolicy.TRANSIENT_LOCAL,
                    reliable=qos.reliability == ReliabilityPolicy.RELIABLE)

            def on_msg(cdr, topic=topic, msgtype=msgtype):
                with self.lock:
                    if not self.closed:
                        self.writer.write(topic, time.time_ns(), cdr, msgtype)
                        self.last_write = time.monotonic()
            self.subs[topic] = self.node.create_subscription(cls, topic, on_msg, qos,
                                                             raw=True)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.writer.close()


class Suite:
    """The chosen sources' drivers (and emulators) as child processes."""

    def __init__(self, *, sim: bool = False, only=None, configs=(), settings=None,
                 free_ports: bool = False, quiet: bool = False):
        self.plans = []
        settings = settings or {}
        for name in only or suite.SOURCES:
            source = STARTABLE[name]
            values = {'sim': 'true' if sim else 'false'}
            parameters = dict(settings.get(name) or {})
            for arg in emulator_arguments(source):   # --set morai.release=26.R1: as launch does
                if arg.name in parameters:
                    value = parameters.pop(arg.name)     # its text, as launch has it
                    values[arg.name] = value if isinstance(value, str) else ros_value(value)
            self.plans.append(suite.plan(
                source, values, config_file(source.config), extra_files=configs,
                parameters=parameters, pick_port=pick_port if free_ports else None,
                optional=only is None))
        for p in self.plans:
            if p.left_out:
                print(f'ros_sim_bridge_run: {p.left_out} (--set {p.source.name}.'
                      f'{p.source.required}=… or --sim)', file=sys.stderr)
        self.plans = [p for p in self.plans if not p.left_out]
        listening: dict = {}                 # emulator port → source (ibeo and ibeo_ecu: 12002)
        for p in self.plans:
            args = p.emulator_args or []
            if '--port' in args:
                port = args[args.index('--port') + 1]
                if port in listening:
                    raise ValueError(
                        f'--sim: the emulators of {listening[port]} and {p.source.name} would '
                        f'both listen on TCP port {port}; add --free-ports or --set '
                        f'{p.source.name}.port=<another port>')
                listening[port] = p.source.name
        self.quiet = quiet
        self.processes: list[NodeProcess] = []

    def start(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix='ros_sim_bridge_run_')
        for p in self.plans:
            files = list(p.params_files)
            if p.overrides:   # a params file, as launch_ros does (rcl refuses `-p name:=''`)
                path = Path(self._tmp.name) / f'{p.source.name}_overrides.yaml'
                path.write_text(yaml.safe_dump(
                    {f'/**/{p.source.node_name}': {'ros__parameters': p.overrides}}))
                files.append(path)
            self.processes.append(NodeProcess(
                p.source.executable, params_file=files, namespace=p.namespace,
                quiet=self.quiet, log_level=p.log_level))
            if p.emulator_args is not None:
                self.processes.append(NodeProcess(p.source.emulator, args=p.emulator_args,
                                                  quiet=self.quiet))

    def failed(self) -> list[str]:
        """Children that ended on their own (a driver that could not start, …), with the last
        lines they wrote when quiet (its reason)."""
        return [f'{p.name} (exit {p.proc.returncode})'
                + ''.join(f'\n    {line}' for line in p.last_lines())
                for p in self.processes if not p.running()]

    def stop(self) -> dict[str, int]:
        emulators = {p.source.emulator for p in self.plans}
        # drivers first (an emulator that goes first is a lost link in their logs)
        codes = stop_all([p for p in self.processes if p.name not in emulators])
        codes.update(stop_all([p for p in self.processes if p.name in emulators]))
        if getattr(self, '_tmp', None) is not None:
            self._tmp.cleanup()
        return codes


#: a number of seconds on the command line
SECONDS = finite_number(what='a finite number of seconds')


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog='ros_sim_bridge_run', description='Run the suite without ros2 launch: each driver '
        '(and with --sim its emulator) as a child process in namespace /<source>, optionally '
        'recording every topic to a rosbag2 folder.')
    ap.add_argument('--sim', action='store_true', help='also start the built-in emulators')
    ap.add_argument('--config', action='append', default=[], metavar='FILE',
                    help='params file applied after config/<source>.yaml (repeatable)')
    ap.add_argument('--record', metavar='BAG', help='record every topic to this new folder')
    ap.add_argument('--duration', type=SECONDS, default=0.0, metavar='S',
                    help='seconds to run once every driver is up (0: until Ctrl-C); a '
                    '--record bag also holds what arrived while they started and stopped')
    ap.add_argument('--only', metavar='SRC,...', help='sources to start: '
                    + ','.join(suite.SOURCES) + ' (default: all), or ' + ','.join(
                        suite.EXTRA_SOURCES) + ' (the ibeo node with an ECU\'s settings, '
                    'instead of ibeo)')
    ap.add_argument('--set', action='append', default=[], metavar='SRC.PARAM=VALUE',
                    help='set a node parameter (YAML value), e.g. rflysim.copter_ids=[1,2,3], '
                    'or an emulator argument of the launch file, e.g. morai.release=26.R1')
    ap.add_argument('--free-ports', action='store_true',
                    help='move every source port to a free loopback port (local --sim runs)')
    ap.add_argument('--startup-timeout', type=SECONDS, default=30.0, metavar='S',
                    help='seconds to wait for the drivers to come up before --duration counts')
    ap.add_argument('--quiet', action='store_true', help="children's output to /dev/null")
    ap.add_argument('--progress', action='store_true', help='a progress line on stderr')
    return ap


def emulator_arguments(source) -> list:
    """The launch arguments of ``source`` that feed its emulator only (``release``,
    ``sim_layers``, …): ``--set`` takes them too."""
    return [a for a in source.arguments if a.parameter is None]


def warn_unknown_settings(settings: dict, only: list[str]) -> None:
    """A ``--set`` for a source not started, or naming a parameter its config file does not
    list (a typo such as ``copter_id``), is said once; it is passed on as given."""
    for name, params in settings.items():
        source = STARTABLE[name]
        if name not in only:
            print(f'ros_sim_bridge_run: --set {name}.…: {name} is not started (--only)',
                  file=sys.stderr)
            continue
        known = {*suite.file_parameters(config_file(source.config), source.node_name),
                 'use_sim_time', *(a.name for a in emulator_arguments(source))}
        for param in sorted(set(params) - known):
            print(f'ros_sim_bridge_run: --set {name}.{param}: config/{source.config} lists '
                  f'no such parameter of {source.node_name} (a typo?)', file=sys.stderr)


#: what --only takes: the suite's sources (all of them by default) and those with a launch
#: file of their own (``ibeo_ecu``: the ibeo node and emulator in ECU mode)
STARTABLE = {**suite.SOURCES, **suite.EXTRA_SOURCES}


def parse_only(text: Optional[str]) -> list[str]:
    if text is None:
        return list(suite.SOURCES)
    names = list(dict.fromkeys(n.strip() for n in text.split(',') if n.strip()))  # once each
    if not names:
        raise ValueError(f'--only {text!r}: no source named; known: {list(STARTABLE)}')
    unknown = [n for n in names if n not in STARTABLE]
    if unknown:
        raise ValueError(f'--only: unknown source(s) {unknown}; known: {list(STARTABLE)}')
    return names


def run(args, on_progress=None) -> int:
    """Run the suite as ``args`` say; returns the exit code. ``on_progress(elapsed, recorder)``
    is called about once a second."""
    from ros_sim_bridge.ros.bag import BagWriter

    only = parse_only(args.only)
    settings = suite.parse_set(args.set, STARTABLE)
    warn_unknown_settings(settings, only)
    if args.record and not Path(args.record).absolute().parent.is_dir():
        raise ValueError(f'--record {args.record}: the folder '
                         f'{Path(args.record).absolute().parent} does not exist')
    stop = threading.Event()        # before the suite is planned (imports take a while):
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT,
                                                                     signal.SIGTERM)}
    failed: list[str] = []
    codes: dict = {}
    recorder = None
    try:
        the_suite = Suite(sim=args.sim, only=only if args.only else None, configs=args.config,
                          settings=settings,
                          free_ports=args.free_ports, quiet=args.quiet)
        writer = BagWriter(args.record) if args.record else None  # refuses an existing folder
        with background_node('ros_sim_bridge_recorder', own_context=True) as node:
            recorder = Recorder(node, writer) if writer else None
            try:
                the_suite.start()
                # the clock starts once every driver is up (imports take seconds on a busy machine)
                wanted = {(p.source.node_name, '/' + p.namespace if p.namespace else '/')
                          for p in the_suite.plans}
                deadline = time.monotonic() + args.startup_timeout
                while not stop.is_set() and time.monotonic() < deadline and not the_suite.failed():
                    if wanted <= set(node.get_node_names_and_namespaces()):
                        break
                    stop.wait(0.1)
                else:                  # (a child that ended is said below)
                    missing = wanted - set(node.get_node_names_and_namespaces())
                    if missing and not stop.is_set() and not the_suite.failed():
                        print(f'ros_sim_bridge_run: not up after {args.startup_timeout:.0f} s: '
                              + ', '.join(f'{ns.rstrip("/")}/{n}' for n, ns in sorted(missing)),
                              file=sys.stderr)
                start = time.monotonic()
                while not stop.is_set():
                    elapsed = time.monotonic() - start
                    if args.duration and elapsed >= args.duration:
                        break
                    if on_progress:
                        on_progress(elapsed, recorder)
                    failed = the_suite.failed()
                    if failed and len(failed) == len(the_suite.processes):
                        break
                    stop.wait(min(1.0, args.duration - elapsed) if args.duration else 1.0)
                if not stop.is_set():   # after a stop signal children end on their own too
                    failed = the_suite.failed()   # (a terminal's Ctrl-C reaches them all)
            finally:
                codes = the_suite.stop()
                if recorder is not None:
                    recorder.drain()     # what the children published last is on its way
    finally:
        if recorder is not None:
            recorder.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
    for said in failed:
        name, _, lines = said.partition('\n')
        print(f'ros_sim_bridge_run: {name} ended before the suite did'
              + (f'; its last lines:\n{lines}' if lines else ''), file=sys.stderr)
    if recorder is not None:
        for topic, why in sorted(recorder.skipped.items()):
            print(f'ros_sim_bridge_run: not recorded {topic}: {why}', file=sys.stderr)
    bad = {n: c for n, c in codes.items() if c not in (0, None) and
           not any(f.startswith(n + ' ') for f in failed)}
    for name, code in bad.items():
        print(f'ros_sim_bridge_run: {name} exited {code} on SIGINT', file=sys.stderr)
    return 1 if failed or bad else 0


def progress_line(duration: float):
    def show(elapsed, recorder):
        counts = recorder.writer.counts if recorder else {}
        total = f'{duration:.0f}' if duration else '∞'
        sys.stderr.write(f'\r[ros_sim_bridge_run] {elapsed:5.1f}/{total} s  '
                         f'{len(counts)} topics  {sum(counts.values())} messages   ')
        sys.stderr.flush()
    return show


def main(argv=None) -> int:
    args = build_parser().parse_args(argv if argv is not None else sys.argv[1:])
    try:
        code = run(args, progress_line(args.duration) if args.progress else None)
    except (ValueError, OSError) as exc:   # a bad value; a path that exists, is no folder, …
        print(f'ros_sim_bridge_run: {exc}', file=sys.stderr)
        return 2
    if args.progress:
        sys.stderr.write('\n')
    if args.record:
        print(f'ros_sim_bridge_run: bag {Path(args.record)}')
    return code


if __name__ == '__main__':
    sys.exit(main())
