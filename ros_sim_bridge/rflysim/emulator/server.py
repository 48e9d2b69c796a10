"""The RflySim truth sender: a :class:`~.scene.Scene`'s states as datagrams over a plain UDP
socket, paced at a rate or as fast as possible, counting what it sent."""
from __future__ import annotations

import math
import socket
import time
from typing import Optional

from ros_sim_bridge.rflysim import codec

from .scene import Scene

# CLI names of the truth forms → codec form names.
FORMS = {
    'bare168': codec.FORM_SOUT2SIMULATOR,
    'legacy200': codec.FORM_NETDATASHORT_LEGACY,
    'simple112': codec.FORM_SIMPLE_TIME,
    'doc200': codec.FORM_NETDATASHORT_DOC,
}


class Sender:
    """Sends a :class:`Scene` over UDP: vehicle ``i`` → ``host:base_port + 2·(i − 1)``.

    Step ``k`` is scene time ``k / rate``.  Per step and vehicle: one truth datagram in
    ``form``; a 12-byte crash notice when a collision starts (``crash_notices``); a 32-byte GPS
    origin at step 0 and every ``origin_period`` s (0: never).  Counters: ``sent`` (truth
    datagrams per CopterID), ``extras`` ({'crash': n, 'gps_origin': n}), ``bytes_sent``,
    ``errors`` (failed sends), ``steps``.
    """

    def __init__(self, scene: Scene, *, host: str = '127.0.0.1',
                 base_port: int = codec.TRUTH_BASE_PORT, form: str = 'bare168',
                 rate: float = 100.0, origin_period: float = 1.0, crash_notices: bool = True):
        if form in FORMS:
            form = FORMS[form]
        if form not in codec.TRUTH_FORMS:
            raise ValueError(f'form must be one of {sorted(FORMS)}')
        if not rate or rate <= 0:
            raise ValueError('rate must be > 0')
        self.scene = scene
        self.host = host
        self.form = form
        self.rate = float(rate)
        self.origin_period = origin_period
        self.crash_notices = crash_notices
        self.ports = {cid: codec.truth_port(cid, base_port) for cid in scene.copter_ids}
        self.sent = {cid: 0 for cid in scene.copter_ids}
        self.extras = {'crash': 0, 'gps_origin': 0}
        self.bytes_sent = 0
        self.errors = 0
        self.steps = 0
        self._last_target: dict = {cid: None for cid in scene.copter_ids}
        self._prepared: dict = {}
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    # pure part: what step k sends
    def datagrams(self, step: int) -> list:
        """[(copter_id, port, kind, bytes)] for step ``step`` (kind 'truth', 'crash',
        'gps_origin').  Updates the collision-edge memory, nothing else."""
        t = step / self.rate
        out = []
        origin_now = step == 0 or (self.origin_period and self.origin_period > 0 and
                                   math.floor(t / self.origin_period) >
                                   math.floor((step - 1) / self.rate / self.origin_period))
        for cid in self.scene.copter_ids:
            port = self.ports[cid]
            if origin_now:
                out.append((cid, port, 'gps_origin', codec.encode_gps_origin(
                    codec.GpsOrigin(cid, self.scene.origin_gps()))))
            state = self.scene.state(cid, t)
            out.append((cid, port, 'truth', codec.encode_truth(state, self.form)))
            target = state.collision_target
            if self.crash_notices and target is not None and self._last_target[cid] is None:
                out.append((cid, port, 'crash', codec.encode_crash_notice(
                    codec.CrashNotice(cid, target))))
            self._last_target[cid] = target
        return out

    def prepare(self, count: int) -> None:
        """Render the next ``count`` steps now, so that sending them later costs only the
        ``sendto`` calls (for benchmarks of a receiver)."""
        self._prepared = {k: self.datagrams(k) for k in range(self.steps, self.steps + count)}

    def step(self) -> int:
        """Send the next step now; returns the number of datagrams sent."""
        n = 0
        batch = self._prepared.pop(self.steps, None)
        if batch is None:
            batch = self.datagrams(self.steps)
        for cid, port, kind, data in batch:
            try:
                self._sock.sendto(data, (self.host, port))
            except OSError:
                self.errors += 1
                continue
            n += 1
            self.bytes_sent += len(data)
            if kind == 'truth':
                self.sent[cid] += 1
            else:
                self.extras[kind] += 1
        self.steps += 1
        return n

    def send_packets(self, count: int, *, paced: bool = True) -> int:
        """``count`` steps (one truth datagram per vehicle each), at ``rate`` or unpaced."""
        return self._loop(lambda k: k < count, paced)

    def run(self, duration: Optional[float] = None, *, stop=None) -> int:
        """Send at ``rate`` for ``duration`` s (None or ≤ 0: until ``stop()`` is true or
        KeyboardInterrupt).  Returns the number of datagrams sent."""
        end = None if duration is None or duration <= 0 else duration

        def more(k):
            if stop is not None and stop():
                return False
            return end is None or k < round(end * self.rate)
        try:
            return self._loop(more, True)
        except KeyboardInterrupt:
            return sum(self.sent.values()) + sum(self.extras.values())

    def _loop(self, more, paced: bool) -> int:
        total = 0
        k = 0
        period = 1.0 / self.rate
        start = time.monotonic()
        while more(k):
            if paced:
                delay = start + k * period - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            total += self.step()
            k += 1
        return total

    @property
    def total_truth(self) -> int:
        return sum(self.sent.values())

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> 'Sender':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
