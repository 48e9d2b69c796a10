"""core.receive_times: the messages of one read get receive times spaced by their sender's
clock, bounded by the read time, the previous message and the connection; and TcpClient hands
each event its own time (the read time when the hook fails, the stream going on)."""
from __future__ import annotations

import socket
import struct
import time

from ros_sim_bridge.core.framer import Frame, MagicFramer
from ros_sim_bridge.core.receive_times import ReadTimes, spread
from ros_sim_bridge.core.tcp import TcpClient

from conftest import free_tcp_port, wait_until

MS = 1_000_000
READ = 5_000 * MS


def test_two_messages_of_one_read_spaced_by_the_sender_clock():
    # sender times 80 ms apart (any epoch: a clock counting from power-up spaces as well)
    assert spread([1234 * MS, 1314 * MS], READ) == [READ - 80 * MS, READ]
    assert spread([-7 * MS, 73 * MS, 153 * MS], READ) == [READ - 160 * MS, READ - 80 * MS, READ]


def test_one_message_gets_the_read_time():
    assert spread([1234 * MS], READ) == [READ]
    assert spread([], READ) == []


def test_unknown_sender_times_take_the_time_of_the_next_message():
    # a garbage event (None) between two messages; a last one without a time: the read time
    assert spread([0, None, 50 * MS], READ) == [READ - 50 * MS, READ, READ]
    assert spread([0, 50 * MS, None], READ) == [READ - 50 * MS, READ, READ]


def test_a_sender_clock_stepping_back_gives_no_spacing():
    # the second message's clock is earlier (the clock was set): no negative spacing
    assert spread([900 * MS, 100 * MS], READ) == [READ, READ]
    assert spread([0, 900 * MS, 100 * MS], READ) == [READ - 900 * MS, READ, READ]


def test_never_before_the_floor_and_never_backwards():
    # a jump of the sender clock (set from power-up counting to 2026) would say years earlier
    floor = READ - 30 * MS
    got = spread([1234 * 10**9, 1_795_000_000 * 10**9, 1_795_000_000 * 10**9 + 20 * MS], READ,
                 floor)
    assert got == [floor, READ - 20 * MS, READ]
    assert spread([0, 80 * MS], READ, floor) == [floor, READ]


def test_read_times_keeps_the_floor_across_reads_and_restarts_at_a_connect():
    times = ReadTimes(lambda e: e)
    times.start(READ - 1000 * MS)
    assert times([0, 80 * MS], READ) == [READ - 80 * MS, READ]
    # the next read: its first message cannot come before the last one handed out
    assert times([0, 500 * MS], READ + 100 * MS) == [READ, READ + 100 * MS]
    times.start(READ + 200 * MS)                    # reconnect
    assert times([0, 300 * MS], READ + 250 * MS) == [READ + 200 * MS, READ + 250 * MS]


MAGIC = b'MSG!'


def stamped(sent_ms: int, body: bytes = b'x') -> bytes:
    return MAGIC + struct.pack('>IQ', 16 + len(body), sent_ms) + body


def test_tcp_client_hands_each_event_its_receive_time():
    """Two messages in one sendall: 80 ms apart by their sender stamps; a hook that raises
    gives the read time to every event and the stream goes on."""
    def sent(e):
        return struct.unpack_from('>Q', e.header, 8)[0] * MS if isinstance(e, Frame) else None
    hook = ReadTimes(sent)
    broken = {'on': False}

    def receive_times(events, read_ns):
        if broken['on']:
            raise RuntimeError('hook bug')
        return hook(events, read_ns)
    framer = MagicFramer('test', MAGIC, 16, lambda h: struct.unpack_from('>I', h, 4)[0] - 16,
                         1 << 20)
    got, errors = [], []
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    port = free_tcp_port()
    srv.bind(('127.0.0.1', port))
    srv.listen(1)
    client = TcpClient('127.0.0.1', port, framer, lambda e, t: got.append((e, t)),
                       receive_times=receive_times, on_error=lambda c, exc: errors.append(exc),
                       min_backoff=0.05)
    client.start()
    try:
        conn, _ = srv.accept()
        assert wait_until(lambda: client.connected)
        before = time.time_ns()
        conn.sendall(stamped(1000) + stamped(1080))
        assert wait_until(lambda: len(got) == 2)
        after = time.time_ns()
        (_, t1), (_, t2) = got
        assert t2 - t1 == 80 * MS and before <= t2 <= after
        broken['on'] = True
        conn.sendall(stamped(2000) + stamped(2080))
        assert wait_until(lambda: len(got) == 4)
        assert got[2][1] == got[3][1] and len(errors) == 1     # reported, not fatal
        conn.close()
    finally:
        client.stop()
        srv.close()
