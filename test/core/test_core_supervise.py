"""No receive loop may die (issue #10, defect 3): real sockets on 127.0.0.1, real files.

A raising handler (and a raising error reporter) must leave the loop running; a loop killed
anyway (an exception raised into its thread) is recorded in ``health`` and rebuilt.
"""
import ctypes
import socket
import struct
import threading

from ros_sim_bridge.core.file_source import FileSource
from ros_sim_bridge.core.framer import Frame, MagicFramer
from ros_sim_bridge.core.tcp import TcpClient
from ros_sim_bridge.core.udp import UdpEndpoint, UdpReceiver

from conftest import free_tcp_port, wait_until

MAGIC = b'MSG!'


def framer():
    return MagicFramer('test', MAGIC, 8, lambda h: struct.unpack_from('>I', h, 4)[0], 1 << 20)


def msg(body: bytes) -> bytes:
    return MAGIC + struct.pack('>I', len(body) + 8) + bytes(8) + body


def kill_thread(name: str) -> threading.Thread:
    """Raise SystemExit inside the running thread called ``name`` (no guard catches it)."""
    [thread] = [t for t in threading.enumerate() if t.name == name and t.is_alive()]
    hit = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                                     ctypes.py_object(SystemExit))
    assert hit == 1
    thread.join(5)
    assert not thread.is_alive()
    return thread


def test_udp_loop_survives_a_raising_handler_and_a_raising_reporter():
    got = []

    def handler(data, stamp):
        if data.startswith(b'boom'):
            raise RuntimeError('handler bug')
        got.append(data)

    def reporter(endpoint, exc):
        raise ValueError('the reporter fails too')

    receiver = UdpReceiver('udp-fault-a', on_error=reporter)
    ep = receiver.add(UdpEndpoint('127.0.0.1', 0), handler)
    receiver.start()
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for i in range(20):
            tx.sendto(b'boom%d' % i, ('127.0.0.1', ep.port))
            tx.sendto(b'ok%d' % i, ('127.0.0.1', ep.port))
        assert wait_until(lambda: len(got) == 20, 5), got
    finally:
        tx.close()
        receiver.stop()
    assert receiver.health.handler_errors == 20 and receiver.health.deaths == 0
    assert 'handler bug' in receiver.health.last_handler_error


def test_udp_receive_thread_killed_is_recorded_and_rebuilt():
    got = []
    receiver = UdpReceiver('udp-fault-b')
    ep = receiver.add(UdpEndpoint('127.0.0.1', 0), lambda d, t: got.append(d))
    receiver.start()
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        tx.sendto(b'before', ('127.0.0.1', ep.port))
        assert wait_until(lambda: got == [b'before'], 5)
        kill_thread('udp-fault-b')
        assert wait_until(lambda: receiver.health.deaths == 1 and receiver.is_alive(), 5)
        assert 'SystemExit' in receiver.health.last_death
        tx.sendto(b'after', ('127.0.0.1', ep.port))
        assert wait_until(lambda: got == [b'before', b'after'], 5), got
        assert receiver.health.restarts == 1
    finally:
        tx.close()
        receiver.stop()


def _serve(port, body_count):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(('127.0.0.1', port))
    server.listen()
    server.settimeout(10)
    return server


def test_tcp_loop_survives_a_raising_event_handler():
    port = free_tcp_port()
    server = _serve(port, 0)
    frames = []

    def on_event(event, now):
        if isinstance(event, Frame) and event.body.endswith(b'boom'):
            raise RuntimeError('handler bug')
        frames.append(event)

    client = TcpClient('127.0.0.1', port, framer(), on_event, name='tcp-fault-a',
                       min_backoff=0.05, max_backoff=0.2)
    client.start()
    try:
        conn, _ = server.accept()
        conn.sendall(msg(b'one') + msg(b'boom') + msg(b'two'))
        conn.sendall(msg(b'boom') + msg(b'three'))
        assert wait_until(lambda: len(frames) == 3, 5), frames
        assert client.connected and client.connects == 1
        conn.close()
    finally:
        client.stop()
        server.close()
    assert [f.body[8:] for f in frames] == [b'one', b'two', b'three']
    assert client.health.handler_errors == 2 and client.health.deaths == 0


def test_tcp_receive_thread_killed_is_recorded_and_the_link_rebuilt():
    port = free_tcp_port()
    server = _serve(port, 0)
    frames = []
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: frames.append(e),
                       name='tcp-fault-b', min_backoff=0.05, max_backoff=0.2)
    client.start()
    try:
        conn, _ = server.accept()
        conn.sendall(msg(b'one'))
        assert wait_until(lambda: len(frames) == 1, 5)
        kill_thread('tcp-fault-b')
        assert wait_until(lambda: client.health.deaths == 1, 5)
        conn2, _ = server.accept()                   # the rebuilt link connects again
        conn2.sendall(msg(b'two'))
        assert wait_until(lambda: len(frames) == 2, 5), frames
        assert client.connects == 2 and client.is_alive()
        conn.close()
        conn2.close()
    finally:
        client.stop()
        server.close()


def test_file_source_play_survives_a_raising_handler(tmp_path):
    path = tmp_path / 'rec.bin'
    path.write_bytes(msg(b'a') + msg(b'boom') + msg(b'b'))
    got = []

    def on_event(event, now):
        if event.body.endswith(b'boom'):
            raise RuntimeError('handler bug')
        got.append(event.body[8:])

    errors = []
    src = FileSource(path, framer(), on_error=lambda e, exc: errors.append(exc))
    assert src.play(on_event, speed=0) == 3
    assert got == [b'a', b'b'] and src.health.handler_errors == 1 and len(errors) == 1


def test_tcp_client_is_back_soon_after_a_long_outage_and_does_not_hammer():
    """Defect 6: the back-off may double to 8 s (ibeo's configuration), but a peer that listens
    again after a 4 s outage is served again soon (the bench measures it: bench_reconnect.py),
    and while it is down the client tries about twice a second (``reconnect_within`` 0.5 s),
    not in a loop."""
    import time
    port = free_tcp_port()
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: None, name='tcp-outage',
                       min_backoff=0.25, max_backoff=8.0)
    client.start()
    try:
        time.sleep(4.0)                     # the peer is off: attempts at 0, .25, .75, 1.25, …
        assert 3 <= client.failures <= 12, client.failures
        server = _serve(port, 0)
        try:
            assert wait_until(lambda: client.connected, 2.5), 'not back within 2.5 s'
        finally:
            server.close()
    finally:
        client.stop()
