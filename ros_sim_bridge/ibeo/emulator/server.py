"""The ibeo emulator's TCP server: streams a scene (:mod:`.scene`) or recorded messages on
127.0.0.1 (default port 12002) to every connected client, answers their 0x2010 commands, and
start/stop measure really gate the stream.

With ``replay=[raw messages]`` (:func:`load_messages`: a hex log or an .idc) it streams
recorded Ibeo messages instead of the scene, from the beginning for each client, paced by the
recorded header times.  With an :class:`~.scene.EcuScene` it is an ECU (spec §20): a client
gets nothing until its Set Filter arrives, then only the data types it asked for; Set Filter is
answered ``00 05`` (``80 05`` when malformed).
"""
from __future__ import annotations

import selectors
import socket
import threading
import time
from pathlib import Path
from typing import Optional, Sequence

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.cli import stop_requested
from ros_sim_bridge.core.file_source import FileSource, pacing_gaps
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.ibeo.codec import commands as cmd
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import set_filter as sf
from ros_sim_bridge.ibeo.codec.framing import make_framer
from ros_sim_bridge.ibeo.codec.header import decode_header, encode_message
from ros_sim_bridge.ibeo.emulator.scene import (DEFAULT_HOST, DEFAULT_PORT, LuxScene, Message)
from ros_sim_bridge.ibeo.idc import hex_messages


# --- replay helpers ------------------------------------------------------------------------

def load_messages(path) -> list[bytes]:
    """Complete Ibeo messages from a hex log (one message per line: the lines that are not a
    complete message are left out) or a binary stream/.idc."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode('ascii')
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines and all(len(ln) % 2 == 0 for ln in lines):
            bytes.fromhex(lines[0])                 # ValueError: not a hex log
            return [m for _, m, _ in hex_messages(ln.encode() for ln in lines) if m is not None]
    except (UnicodeDecodeError, ValueError):
        pass
    source = FileSource(path, make_framer(decode=False))   # replayed verbatim
    return [e.header + e.body for e in source.events() if isinstance(e, Frame)]


def replay_delays(messages: Sequence[bytes], speed: float = 1.0, max_gap_s: float = 1.0
                  ) -> list[float]:
    """Seconds to wait before each message: recorded header-time gaps / speed (0 = no pacing),
    by the file source's pacing rule."""
    return pacing_gaps([decode_header(m).stamp_ns for m in messages], speed, max_gap_s)


# --- TCP server ----------------------------------------------------------------------------

class _Client:
    def __init__(self, sock: socket.socket, addr):
        self.sock = sock
        self.addr = addr
        self.framer = make_framer(decode=False)   # a malformed command gets a failure reply
        self.replay_index = 0
        self.replay_due = 0.0
        self.filter: Optional[sf.SetFilter] = None   # ECU mode: nothing is sent before one


class LuxServer:
    """TCP server on ``host:port`` (port 0 = any free port; see :attr:`port`).

    Streams the scene (or ``replay`` messages) to every client while measuring, and answers
    0x2010 commands with 0x2020 replies.  ``start()`` runs it on a thread; ``stop()`` ends it.
    With an :class:`EcuScene` each client gets only the data types of its Set Filter (none
    before it sent one); :attr:`filters` lists the filters received, in order.
    """

    def __init__(self, scene=None, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT, *, replay: Optional[Sequence[bytes]] = None,
                 replay_speed: float = 1.0, replay_loop: bool = False, device_id: int = 0,
                 realtime_clock: bool = True):
        self.scene = scene or LuxScene(start_unix_ns=time.time_ns() if realtime_clock
                                       else 1_700_000_000_000_000_000)
        self.host = host
        self.device_id = device_id
        self.replay = list(replay) if replay is not None else None
        self.replay_delays = replay_delays(self.replay, replay_speed) if self.replay else []
        self.replay_loop = replay_loop
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, port))
        self._listener.listen(8)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self.scene.params[0x1001] = self.scene.saved_params[0x1001] = self.port
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._listener, selectors.EVENT_READ, None)
        self._clients: list[_Client] = []
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self.commands_received = 0
        self.messages_sent = 0
        self.bad_input = 0
        self.ecu = getattr(self.scene, 'ecu', False)
        self.filters: list[sf.SetFilter] = []

    # lifecycle
    def start(self) -> 'LuxServer':
        self._thread = threading.Thread(target=self.serve_forever, name='lux-emulator',
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        for c in list(self._clients):
            self._drop(c)
        try:
            self._sel.unregister(self._listener)
        except (KeyError, ValueError):
            pass
        self._listener.close()
        self._sel.close()

    def __enter__(self) -> 'LuxServer':
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def serve_forever(self, duration: Optional[float] = None) -> None:
        deadline = None if not duration else time.monotonic() + duration
        next_tick = time.monotonic()
        while not self._stop.is_set() and not stop_requested():
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                break
            wake = [next_tick] if self.replay is None else \
                [c.replay_due for c in self._clients if self._replay_pending(c)] or [now + 0.05]
            timeout = min(max(0.0, min(wake) - now), 0.05)
            for key, _ in self._sel.select(timeout):
                if key.data is None:
                    self._accept()
                else:
                    self._read(key.data)
            now = time.monotonic()
            if self.replay is not None:
                self._replay_tick(now)
            elif now >= next_tick:
                if self.ecu:
                    if any(c.filter is not None for c in self._clients):
                        self._broadcast_filtered(self.scene.step())
                    else:
                        self.scene.idle()     # nobody to send to: keep the clock going
                elif self.scene.measuring:
                    data = self.scene.step_bytes(self.device_id)
                    self._broadcast(data)
                else:
                    self.scene.idle()
                next_tick += self.scene.period_s
                if next_tick < now - self.scene.period_s:   # fell behind: do not burst
                    next_tick = now + self.scene.period_s

    # connections
    def _accept(self) -> None:
        try:
            sock, addr = self._listener.accept()
        except (BlockingIOError, OSError):
            return
        sock.setblocking(True)
        sock.settimeout(2.0)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = _Client(sock, addr)
        client.replay_due = time.monotonic() + (self.replay_delays[0] if self.replay_delays else 0)
        self._clients.append(client)
        self._sel.register(sock, selectors.EVENT_READ, client)

    def _drop(self, c: _Client) -> None:
        if c in self._clients:
            self._clients.remove(c)
        try:
            self._sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.close()

    def _send(self, c: _Client, data: bytes) -> bool:
        try:
            c.sock.sendall(data)
            return True
        except OSError:
            self._drop(c)
            return False

    def _broadcast(self, data: bytes) -> None:
        for c in list(self._clients):
            if self._send(c, data):
                self.messages_sent += 1

    def _broadcast_filtered(self, msgs: list[Message]) -> None:
        """ECU mode: each client the messages its Set Filter accepts (encoded once)."""
        wire = [(m.data_type, m.to_bytes(self.device_id)) for m in msgs]
        for c in list(self._clients):
            if c.filter is None:
                continue
            data = b''.join(raw for dt, raw in wire if c.filter.accepts(dt))
            if data and self._send(c, data):
                self.messages_sent += 1

    def _set_filter(self, c: _Client, body: bytes) -> None:
        """ECU Set Filter (§20): remember it for this client, answer 00 05 (80 05: malformed)."""
        try:
            flt = sf.decode_set_filter(body)
        except CodecError:
            self.bad_input += 1
            ok = False
        else:
            c.filter = flt
            self.filters.append(flt)
            ok = True
        self._send(c, encode_message(registry.REPLY, sf.encode_set_filter_reply(ok),
                                     device_id=self.device_id,
                                     ntp=self.scene.ntp_at(self.scene.time_s)))

    def _read(self, c: _Client) -> None:
        try:
            data = c.sock.recv(65536)
        except (BlockingIOError, socket.timeout):
            return
        except OSError:
            data = b''
        if not data:
            self._drop(c)
            return
        for ev in c.framer.feed(data):
            if not isinstance(ev, Frame):
                self.bad_input += 1
                continue
            header = decode_header(ev.header)
            if header.data_type != registry.COMMAND:
                continue
            if self.ecu and sf.is_set_filter(ev.body):
                self.commands_received += 1
                self._set_filter(c, ev.body)
                continue
            try:
                command = cmd.decode_command(ev.body, header)
            except CodecError:
                self.bad_input += 1
                self.scene.pending_warnings.add('W-Command')
                cid = int.from_bytes(ev.body[:2], 'little') if len(ev.body) >= 2 else 0
                self._send(c, encode_message(registry.REPLY, cmd.encode_reply(cmd.failure(cid)),
                                             device_id=self.device_id))
                continue
            self.commands_received += 1
            reply = self.scene.handle_command(command)
            if reply is not None:
                ntp = self.scene.ntp_at(self.scene.time_s)
                self._send(c, encode_message(registry.REPLY, cmd.encode_reply(reply),
                                             device_id=self.device_id, ntp=ntp))

    # replay
    def _replay_pending(self, c: _Client) -> bool:
        return self.scene.measuring and c.replay_index < len(self.replay)

    def _replay_tick(self, now: float) -> None:
        """Each client the messages due, one pass over the recording at most: an unpaced loop
        (replay_speed 0) still lets commands and new clients in between."""
        for c in list(self._clients):
            for _ in range(len(self.replay)):
                if not (self._replay_pending(c) and c.replay_due <= now):
                    break
                if not self._send(c, self.replay[c.replay_index]):
                    break
                self.messages_sent += 1
                c.replay_index += 1
                if c.replay_index == len(self.replay) and self.replay_loop:
                    c.replay_index = 0
                if c.replay_index < len(self.replay):
                    c.replay_due += self.replay_delays[c.replay_index]
            if not self.scene.measuring:
                c.replay_due = max(c.replay_due, now)
