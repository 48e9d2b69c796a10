"""Test harness: real rclpy nodes on real DDS, kept on this machine.

DDS discovery stays on localhost and every test run gets its own ROS_DOMAIN_ID, set before
rclpy initialises.  ``ros`` starts one executor thread for the session; tests add the nodes
under test to it and wait for messages with :class:`Collector` (timeouts, never sleeps).
"""
from __future__ import annotations

import os
import random
import threading
import warnings
from pathlib import Path

import pytest

from ros_sim_bridge.tools.ports import TEST_DOMAINS, free_tcp_port, free_udp_ports  # noqa: F401
from ros_sim_bridge.tools.session import wait_until  # noqa: F401 (re-exported)

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ['ROS_LOCALHOST_ONLY'] = '1' if os.environ.get('ROS_DISTRO') == 'humble' else '0'
os.environ.setdefault('ROS_DOMAIN_ID', str(random.Random(os.getpid()).randint(*TEST_DOMAINS)))

SHARED = Path(__file__).resolve().parents[1].parent / 'shared'


@pytest.fixture
def closing():
    """Servers, clients and sockets to stop or close after the test (append them)."""
    items = []
    yield items
    for item in items:
        (item.stop if hasattr(item, 'stop') else item.close)()


def message_differences(a, b, path: str = '') -> list:
    """Where two rclpy messages differ (floats bit for bit up to the NaN payload): [] when
    equal.  For comparing serialised forms, whose alignment padding rclpy leaves unset."""
    import math

    import numpy as np
    if hasattr(a, 'get_fields_and_field_types'):
        if type(a) is not type(b):
            return [f'{path}: {type(a).__name__} vs {type(b).__name__}']
        return [d for name in a.get_fields_and_field_types()
                for d in message_differences(getattr(a, name), getattr(b, name),
                                             f'{path}.{name}')]
    if isinstance(a, float) or isinstance(b, float):
        equal = (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) ==
                                                      math.copysign(1, b))
        return [] if equal else [f'{path}: {a!r} vs {b!r}']
    if isinstance(a, (list, tuple, np.ndarray)) or type(a).__name__ == 'array':
        a, b = list(a), list(b)
        if len(a) != len(b):
            return [f'{path}: {len(a)} vs {len(b)} elements']
        return [d for k, (x, y) in enumerate(zip(a, b))
                for d in message_differences(x, y, f'{path}[{k}]')]
    return [] if a == b else [f'{path}: {a!r} vs {b!r}']


#: the environment of an installed executable run by a test (DDS kept on this host)
LOCAL_ENV = {**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}


def run_installed(exe: str, *args, timeout: float = 60):
    """Run an installed executable to its end: (exit code, stdout + stderr)."""
    import subprocess
    from ros_sim_bridge.tools.launcher import executable
    proc = subprocess.run([str(executable(exe)), *args], env=LOCAL_ENV, capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def one_line_naming(out: str, *words) -> str:
    """The single line of ``out`` that names every one of ``words``; no traceback."""
    assert 'Traceback' not in out, out
    lines = [line for line in out.splitlines() if all(w in line for w in words)]
    assert len(lines) == 1, out
    return lines[0]


def assert_refused_at_start(exe: str, name: str, value) -> None:
    """The installed node ``exe`` started with parameter ``name`` = ``value`` ends with exit 1
    and one FATAL line naming the parameter and the value."""
    from ros_sim_bridge.tools.launcher import ros_args
    code, out = run_installed(exe, *ros_args(parameters={name: value}))
    assert code == 1, out
    line = one_line_naming(out, 'cannot start', name)
    assert 'FATAL' in line and str(value) in line, line


def shared_path(*parts: str) -> Path:
    """A file under ../shared, or a clean skip where the folder is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f'{path} not present (../shared is optional)')
    return path


class UdpSender:
    """A UDP socket that sends to 127.0.0.1 only: ``send(data)`` to its own ``port``,
    ``send_to(port, data)`` to any other (a new sender is a new source port, as a simulator
    restart would be)."""

    def __init__(self, port: int = 0):
        import socket
        self.port = port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send(self, data: bytes) -> None:
        self.send_to(self.port, data)

    def send_to(self, port: int, data: bytes) -> None:
        self.sock.sendto(data, ('127.0.0.1', port))


class Collector:
    """Every message that arrives on a topic, for a test to wait on."""

    def __init__(self, node, msg_type, topic: str, qos=10):
        self.messages: list = []
        self._cond = threading.Condition()
        self.sub = node.create_subscription(msg_type, topic, self._on_msg, qos)
        self.topic = topic

    def _on_msg(self, msg) -> None:
        with self._cond:
            self.messages.append(msg)
            self._cond.notify_all()

    def wait_for(self, count: int = 1, timeout: float = 5.0, where=None) -> list:
        """The first ``count`` messages (matching ``where``), or an assertion naming the topic."""
        def matching():
            return [m for m in self.messages if where is None or where(m)]
        with self._cond:
            self._cond.wait_for(lambda: len(matching()) >= count, timeout)
            got = matching()
        assert len(got) >= count, f'{self.topic}: {len(got)} of {count} messages in {timeout} s'
        return got

    def clear(self) -> None:
        with self._cond:
            self.messages.clear()


class RosHarness:
    """One rclpy context and executor thread; nodes added here spin until the test ends."""

    def __init__(self):
        import rclpy
        from rclpy.executors import MultiThreadedExecutor
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.executor = MultiThreadedExecutor(num_threads=4, context=self.context)
        self.callback_errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        self.probe = self.node('test_probe')
        self._owned: list = []

    def _spin(self) -> None:
        """Spin until shutdown. A callback that raises must not end the thread (every later
        test would then wait in vain): the error is kept for the test that caused it."""
        from rclpy.executors import ExternalShutdownException
        from rclpy._rclpy_pybind11 import InvalidHandle
        while self.context.ok():
            try:
                self.executor.spin()
                return
            except ExternalShutdownException:
                return
            except InvalidHandle:
                # a node destroyed while the executor was waiting on it (test teardown race)
                continue
            except Exception as exc:  # a node's callback raised
                if not self.context.ok():
                    return
                self.callback_errors.append(exc)

    def node(self, name: str):
        node = self.rclpy.create_node(name, context=self.context)
        self.executor.add_node(node)
        return node

    def start(self, node_class, parameters: dict | None = None, **kwargs):
        """Create a node of ``node_class`` with parameter overrides and spin it."""
        from rclpy.parameter import Parameter
        overrides = [Parameter(k, value=v) for k, v in (parameters or {}).items()]
        node = node_class(context=self.context, parameter_overrides=overrides, **kwargs)
        self.executor.add_node(node)
        self._owned.append(node)
        return node

    def node_count(self, name: str, namespace: str = '/') -> int:
        """How many nodes of this name and namespace the graph holds (as the probe sees it)."""
        return self.probe.get_node_names_and_namespaces().count((name, namespace))

    def stop(self, node, timeout: float = 10.0) -> None:
        """Stop ``node`` and wait until it has left the graph: rclpy destroys a node the
        executor is still using later, and until then a new node of the same name shares its
        /rosout publisher (rcl keys it by logger name), which goes with the old node."""
        name, namespace = node.get_name(), node.get_namespace()
        before = max(self.node_count(name, namespace), 1)
        self.executor.remove_node(node)
        if hasattr(node, 'close'):
            node.close()
        node.destroy_node()
        if node in self._owned:
            self._owned.remove(node)
        assert wait_until(lambda: self.node_count(name, namespace) < before, timeout,
                          interval=0.01), \
            f'node {namespace.rstrip("/")}/{name} still in the graph {timeout} s after stop'

    def collect(self, msg_type, topic: str, qos=10, *, matched: bool = True) -> Collector:
        """Subscribe; with ``matched`` wait until a publisher is connected (DDS discovery is
        asynchronous: data sent before the match would be lost to a volatile subscriber)."""
        collector = Collector(self.probe, msg_type, topic, qos)
        if matched:
            assert wait_until(lambda: collector.sub.get_publisher_count() > 0, 10.0), \
                f'no publisher matched {topic}'
        return collector

    def diagnostics(self, name_part: str, predicate=lambda values: True,
                    timeout: float = 8.0) -> dict:
        """The key/values of the first /diagnostics status whose name contains ``name_part``
        and whose values satisfy ``predicate``; an assertion when none arrives in time."""
        from diagnostic_msgs.msg import DiagnosticArray
        diag = self.collect(DiagnosticArray, '/diagnostics', 50)
        found = {}

        def check():
            for arr in list(diag.messages):
                for st in arr.status:
                    if name_part in st.name:
                        values = {kv.key: kv.value for kv in st.values}
                        if predicate(values):
                            found.update(values)
                            return True
            return False
        assert wait_until(check, timeout), f'no /diagnostics status for {name_part!r} matched'
        return found

    def cleanup(self) -> None:
        for node in list(self._owned):
            self.stop(node)

    def shutdown(self) -> None:
        self.cleanup()
        self.executor.shutdown(timeout_sec=2.0)
        self.rclpy.shutdown(context=self.context)
        self._thread.join(timeout=2.0)


@pytest.fixture(scope='session')
def ros_session():
    harness = RosHarness()
    yield harness
    harness.shutdown()


@pytest.fixture
def ros(ros_session):
    """The session's harness; nodes started in a test are stopped after it. A callback that
    raised during the test is reported as a warning naming the error."""
    ros_session.callback_errors.clear()
    yield ros_session
    ros_session.cleanup()
    for exc in ros_session.callback_errors:
        warnings.warn(f'a ROS callback raised during this test: {exc!r}')
    for sub in list(ros_session.probe.subscriptions):
        ros_session.probe.destroy_subscription(sub)
