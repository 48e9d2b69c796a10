"""A node spinning in a background thread and waiting helpers, for the demo, benchmarks and
tests (not for drivers)."""
from __future__ import annotations

import contextlib
import os
import random
import threading
import time


def keep_dds_local(domain_range: tuple[int, int]) -> None:
    """DDS discovery on this machine only, in a domain of our own unless one is set."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(*domain_range)))


@contextlib.contextmanager
def background_node(name: str, *, own_context: bool = False):
    """rclpy initialised, one node spinning in a thread; all of it shut down cleanly after.

    ``own_context``: a private rclpy context with rclpy's signal handlers off, for a tool that
    handles SIGINT/SIGTERM itself (the runner) or shares its process with other contexts."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    context = rclpy.Context() if own_context else None
    if own_context:
        rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    else:
        rclpy.init()
    node = rclpy.create_node(name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin():
        try:
            executor.spin()
        except ExternalShutdownException:
            pass
    thread = threading.Thread(target=spin, name=f'{name}-spin', daemon=True)
    thread.start()
    try:
        yield node
    finally:
        # wakes the executor, so its thread ends before the process does
        (context.try_shutdown if context is not None else rclpy.try_shutdown)()
        thread.join(timeout=5.0)
        executor.shutdown()
        node.destroy_node()


def wait_until(predicate, timeout: float = 5.0, interval: float = 0.01) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` s have passed; its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def call_service(node, srv_type, name: str, request, timeout: float = 5.0):
    """One call of service ``name`` from ``node`` (spinning elsewhere); None when the service
    does not appear or answer within ``timeout`` s."""
    client = node.create_client(srv_type, name)
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            return None
        future = client.call_async(request)
        return future.result() if wait_until(future.done, timeout, 0.02) else None
    finally:
        node.destroy_client(client)
