"""Shared transports over real sockets on 127.0.0.1 and real files."""
import socket
import struct
import threading
import time

from ros_sim_bridge.core.framer import Frame, MagicFramer
from ros_sim_bridge.core.file_source import FileSource
from ros_sim_bridge.core.tcp import KEEPALIVE, SETTLED_LINK_S, RetryWaits, TcpClient
from ros_sim_bridge.core.udp import UdpEndpoint, UdpReceiver

from conftest import free_tcp_port, wait_until

MAGIC = b'MSG!'


def framer():
    return MagicFramer('test', MAGIC, 8, lambda h: struct.unpack_from('>I', h, 4)[0], 1 << 20)


def msg(body: bytes, stamp: int = 0) -> bytes:
    return MAGIC + struct.pack('>I', len(body) + 8) + struct.pack('>Q', stamp) + body


def test_udp_receiver_delivers_every_datagram_and_survives_handler_errors():
    got, errors = [], []
    receiver = UdpReceiver(on_error=lambda ep, exc: errors.append(exc))

    def handler(data, stamp):
        if data == b'boom':
            raise RuntimeError('handler bug')
        got.append((data, stamp))

    a = receiver.add(UdpEndpoint('127.0.0.1', 0, name='a'), handler)
    b = receiver.add(UdpEndpoint('127.0.0.1', 0, name='b'), handler)
    receiver.start()
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for i in range(500):
            tx.sendto(b'a%d' % i, ('127.0.0.1', a.port))
            tx.sendto(b'b%d' % i, ('127.0.0.1', b.port))
            if i == 250:
                tx.sendto(b'boom', ('127.0.0.1', a.port))
        assert wait_until(lambda: len(got) == 1000)
    finally:
        tx.close()
        receiver.stop()
    assert {d for d, _ in got} == {b'a%d' % i for i in range(500)} | {b'b%d' % i for i in range(500)}
    assert all(abs(s - time.time_ns()) < 10e9 for _, s in got)
    assert len(errors) == 1 and 'handler bug' in str(errors[0])
    assert a.receive_buffer >= 1 << 20 or a.receive_buffer > 0


def test_udp_kernel_drop_counter_counts_overflow():
    ep = UdpEndpoint('127.0.0.1', 0, receive_buffer=4096)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _ in range(2000):  # nobody reads: the small buffer overflows
            tx.sendto(b'x' * 1000, ('127.0.0.1', ep.port))
        received = ep.drain(limit=10000)
        tx.sendto(b'last', ('127.0.0.1', ep.port))
        assert wait_until(lambda: bool(received.extend(ep.drain()) or received[-1][0] == b'last'))
    finally:
        tx.close()
        ep.close()
    assert 0 < len(received) < 2001
    assert ep.kernel_drops == 2001 - len(received)


class Server:
    """A TCP server on 127.0.0.1 that sends what the test gives it."""

    def __init__(self, port: int):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', port))
        self.sock.listen()
        self.sock.settimeout(5)

    def accept(self):
        conn, _ = self.sock.accept()
        return conn

    def close(self):
        self.sock.close()


def test_tcp_client_connects_late_reconnects_and_frames():
    port = free_tcp_port()
    events, connects, drops = [], [], []
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: events.append(e),
                       on_connect=lambda: connects.append(1), on_disconnect=drops.append,
                       min_backoff=0.05, max_backoff=0.2)
    client.start()
    try:
        time.sleep(0.3)  # sensor is off: the client keeps trying
        assert client.failures >= 1 and not client.connected
        server = Server(port)
        conn = server.accept()
        assert wait_until(lambda: client.connected)
        conn.sendall(b'junk' + msg(b'one') + msg(b'two')[:10])  # second cut mid-message
        assert wait_until(lambda: len([e for e in events if isinstance(e, Frame)]) == 1)
        conn.close()  # sensor vanishes mid-message
        conn = server.accept()  # and comes back
        conn.sendall(msg(b'three'))
        assert wait_until(lambda: len([e for e in events if isinstance(e, Frame)]) == 2)
        assert client.send(b'command')
        assert conn.recv(100) == b'command'
        conn.close()
        server.close()
    finally:
        client.stop()
    bodies = [e.body[8:] for e in events if isinstance(e, Frame)]
    assert bodies == [b'one', b'three']  # the partial 'two' is not invented
    assert len(connects) == 2 and len(drops) >= 1


def test_tcp_send_when_disconnected_is_false_not_an_exception():
    client = TcpClient('127.0.0.1', free_tcp_port(), framer(), lambda e, t: None)
    assert client.send(b'x') is False


def test_tcp_send_overtaken_by_the_peer_dropping_says_the_link_was_lost():
    """A send whose socket the receive thread closes (the peer dropped) between the send's
    connected check and its write is False, and ``last_failure`` (which the ibeo command
    services quote) says the link was lost, not a raw '[Errno 9] Bad file descriptor'."""
    port = free_tcp_port()
    server = Server(port)
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: None, min_backoff=30.0,
                       max_backoff=30.0, reconnect_within=0.0)     # no reconnect meanwhile
    client.start()
    sent = []
    try:
        conn = server.accept()
        assert wait_until(lambda: client.connected)
        with client._send_lock:         # the send passes its check, then waits to write
            sender = threading.Thread(target=lambda: sent.append(client.send(b'command')))
            sender.start()
            sender.join(0.3)
            assert sender.is_alive()
            conn.close()                # the peer drops: the receive thread closes the socket
            assert wait_until(lambda: client.last_failure == 'peer closed the connection')
        sender.join(5.0)
    finally:
        client.stop()
        server.close()
    assert sent == [False]
    assert client.last_failure == 'send: the link was lost'


def test_file_source_reads_and_paces(tmp_path):
    path = tmp_path / 'rec.bin'
    path.write_bytes(b'\x00' + msg(b'a', 0) + msg(b'b', 100_000_000) + msg(b'c', 200_000_000))
    src = FileSource(path, framer(), chunk_size=7)
    assert [e.body[8:] for e in src.events() if isinstance(e, Frame)] == [b'a', b'b', b'c']
    got = []
    start = time.monotonic()
    n = src.play(lambda e, t: got.append(e), speed=2.0,
                 stamp_ns=lambda e: struct.unpack_from('>Q', e.body)[0] if isinstance(e, Frame) else None)
    elapsed = time.monotonic() - start
    assert n == 4 and 0.08 < elapsed < 1.0  # 200 ms of recording at 2x
    stop = threading.Event()
    stop.set()
    assert src.play(lambda e, t: None, stop=stop) == 0


def test_tcp_retry_now_cuts_the_back_off_short():
    """A client waiting out a long back-off connects at once when told the peer is back."""
    port = free_tcp_port()
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: None, min_backoff=30.0,
                       max_backoff=30.0, reconnect_within=0)
    client.start()
    server = socket.socket()
    try:
        assert wait_until(lambda: client.failures >= 1, 5.0)     # refused, now waiting 30 s
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(('127.0.0.1', port))
        server.listen(1)
        time.sleep(0.3)
        assert not client.connected
        t0 = time.monotonic()
        client.retry_now()
        assert wait_until(lambda: client.connected, 5.0)
        assert time.monotonic() - t0 < 3.0 and client.failures == 1
    finally:
        client.stop()
        server.close()
    assert not client.is_alive()


def test_retry_waits_are_capped_and_a_settled_link_is_retried_at_once():
    """The reconnect schedule: the doubling back-off capped at ``reconnect_within`` while the
    peer is down; at once after a settled link drops (then the back-off starts again); after a
    link that hung up at once the back-off goes on."""
    waits = RetryWaits(0.25, 8.0, 0.5)
    assert [waits.after_failure() for _ in range(4)] == [0.25, 0.5, 0.5, 0.5]
    assert waits.after_link(SETTLED_LINK_S) == 0.0
    assert waits.after_failure() == 0.25
    assert [waits.after_link(0.01) for _ in range(3)] == [0.5, 0.5, 0.5]
    uncapped = RetryWaits(0.25, 2.0, 0)
    assert [uncapped.after_failure() for _ in range(5)] == [0.25, 0.5, 1.0, 2.0, 2.0]


def test_tcp_client_retries_at_once_when_a_settled_link_drops():
    """The peer resets a link that had been up for a while and still listens: the client is
    back at once, not after its back-off (30 s here)."""
    port = free_tcp_port()
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: None, min_backoff=30.0,
                       max_backoff=30.0, reconnect_within=0)
    server = Server(port)
    client.start()
    try:
        conn = server.accept()
        assert wait_until(lambda: client.connected)
        time.sleep(SETTLED_LINK_S + 0.1)
        conn.close()                                   # the peer drops the link
        conn = server.accept()                         # socket.timeout after 5 s: not back
        assert wait_until(lambda: client.connects == 2)
        conn.close()
    finally:
        client.stop()
        server.close()


def test_tcp_client_backs_off_from_a_peer_that_hangs_up_at_once():
    """A peer that accepts and closes every connection at once is knocked on like a dead one
    (the back-off grows, capped at reconnect_within), not in a loop (the back-off was reset
    by each accepted connection: every 50 ms here)."""
    port = free_tcp_port()
    server = Server(port)
    server.sock.settimeout(0.1)
    stop = threading.Event()

    def hang_up():
        while not stop.is_set():
            try:
                server.accept().close()
            except socket.timeout:
                continue
    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: None, min_backoff=0.05,
                       max_backoff=8.0, reconnect_within=0.4)
    client.start()
    try:
        time.sleep(2.0)        # waits .05, .1, .2, .4, .4, …: about 8 connections in 2 s
        assert 2 <= client.connects <= 12, client.connects
    finally:
        client.stop()
        stop.set()
        thread.join(timeout=5)
        server.close()

def test_tcp_client_rebuilds_a_link_whose_peer_went_silent():
    """The peer keeps the connection open but sends nothing more (power cut without FIN/RST
    reaching us, a frozen device): after ``data_timeout`` without a byte the client counts it,
    says why, closes the link and connects again; the peer is served on the new link."""
    port = free_tcp_port()
    server = Server(port)
    frames, drops = [], []
    client = TcpClient('127.0.0.1', port, framer(),
                       lambda e, t: frames.append(e) if isinstance(e, Frame) else None,
                       on_disconnect=drops.append, data_timeout=1.0, min_backoff=0.05)
    client.start()
    try:
        first = server.accept()
        first.sendall(msg(b'hello'))            # then silence, the connection left open
        second = server.accept()                # socket.timeout: the client waited for ever
        assert client.data_timeouts == 1 and client.silent
        first.settimeout(5)
        assert first.recv(16) == b''            # the client closed the silent link
        assert wait_until(lambda: drops == ['no data for 1 s (data_timeout)']), drops
        second.sendall(msg(b'again'))
        assert wait_until(lambda: len(frames) == 2)
        assert not client.silent                # a byte came: the peer speaks again
        assert client.connects == 2 and client.last_failure == drops[0]
        first.close()
        second.close()                          # lost for another reason: not silence
        third = server.accept()                 # silent again: timed out
        fourth = server.accept()
        assert client.data_timeouts == 2 and client.silent
        fourth.close()                          # lost before any byte, but not for silence
        assert wait_until(lambda: len(drops) == 4) and not client.silent
        third.close()
    finally:
        client.stop()
        server.close()
    assert [f.body[8:] for f in frames] == [b'hello', b'again']
    assert drops[1:] == ['peer closed the connection', 'no data for 1 s (data_timeout)',
                         'peer closed the connection']


def test_tcp_client_asks_the_kernel_to_probe_an_idle_link():
    """TCP keepalive on every link, with short probe times where the platform has them: a
    peer that vanished is found by the kernel even on a link that is idle by design."""
    port = free_tcp_port()
    server = Server(port)
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: None)
    client.start()
    try:
        conn = server.accept()
        assert wait_until(lambda: client.connected)
        sock = client._sock
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        assert KEEPALIVE, 'no keepalive timing option on this platform'
        for name, value in KEEPALIVE.items():
            assert sock.getsockopt(socket.IPPROTO_TCP, getattr(socket, name)) == value, name
        conn.close()
    finally:
        client.stop()
        server.close()


class RecordReader:
    """A framer with the buffered protocol: fixed 6-byte records, each read into its own
    bytearray (what a camera framer does with a frame)."""

    def __init__(self):
        self.record, self.filled, self.buffers = bytearray(6), 0, []

    def reset(self):
        self.record, self.filled = bytearray(6), 0

    def get_buffer(self, sizehint=-1):
        view = memoryview(self.record)[self.filled:]
        self.buffers.append(view.obj)
        return view

    def buffer_updated(self, n):
        self.filled += n
        if self.filled < 6:
            return []
        done, self.record, self.filled = self.record, bytearray(6), 0
        return [done]

    def feed(self, data):  # pragma: no cover - the client must not use it
        raise AssertionError('a buffered framer is read into, not fed')


def test_tcp_client_reads_into_a_buffered_framer():
    """recv_into the framer's own buffer: records split across sends arrive whole, in order,
    each in the buffer the framer handed out."""
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(1)
    records = [b'rec%03d' % i for i in range(200)]
    stream = b''.join(records)

    def serve():
        conn, _ = srv.accept()
        for a in range(0, len(stream), 5):      # 5-byte sends: every split point of a record
            conn.sendall(stream[a:a + 5])
        time.sleep(0.5)
        conn.close()
    threading.Thread(target=serve, daemon=True).start()
    reader, got = RecordReader(), []
    client = TcpClient('127.0.0.1', srv.getsockname()[1], reader,
                       lambda ev, now: got.append(ev), min_backoff=5.0)
    client.start()
    try:
        assert wait_until(lambda: len(got) == len(records), 10.0)
    finally:
        client.stop()
        srv.close()
    assert [bytes(g) for g in got] == records
    assert all(any(g is b for b in reader.buffers) for g in got)
    assert client.bytes_received == len(stream) and client.health.handler_errors == 0


def test_tcp_client_reports_a_message_cut_short_by_the_peer_closing():
    """The peer closes inside a message: the client hands one TRUNCATED CodecError to the
    handler (a decode error, not only a reconnect), then frames the next connection's data."""
    from ros_sim_bridge.core.binary import CodecError
    port = free_tcp_port()
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(('127.0.0.1', port))
    server.listen(2)
    events = []
    client = TcpClient('127.0.0.1', port, framer(), lambda e, t: events.append(e),
                       min_backoff=0.05, max_backoff=0.1)
    client.start()
    try:
        conn, _ = server.accept()
        whole = msg(b'x' * 100, 1)
        conn.sendall(msg(b'first', 0) + whole[:40])        # then close inside the second
        conn.close()
        conn, _ = server.accept()
        conn.sendall(msg(b'after', 2))
        assert wait_until(lambda: any(isinstance(e, Frame) and e.body.endswith(b'after')
                                      for e in events), 10.0)
        conn.close()
    finally:
        client.stop()
        server.close()
    cuts = [e for e in events if isinstance(e, CodecError)]
    assert len(cuts) == 1 and cuts[0].kind == 'truncated', cuts
    assert [e.body[8:] for e in events if isinstance(e, Frame)] == [b'first', b'after']
