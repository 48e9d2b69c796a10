"""``source:=file`` for the ibeo nodes (:mod:`.node`): an ``.idc`` recording played through
:class:`~ros_sim_bridge.ibeo.idc_playback.IdcPlayer` (paced by the messages' NTP times, rate
factor, loop, start offset), its message bytes fed to the same framer → session → dispatch
path a TCP read feeds; the ~/pause, ~/resume and ~/seek services.
"""
from __future__ import annotations

import math
import time
from typing import Optional

from ros_sim_bridge.ibeo.codec import objects_ecu, registry
from ros_sim_bridge.ibeo.idc_playback import IdcPlayer
from ros_sim_bridge.ibeo.session import LuxSession
from ros_sim_bridge.ibeo.ros.ecu_conversions import cap_object_list, message_type

#: the types the LUX path publishes itself (the ECU converter is not asked about them)
LUX_TYPES = frozenset((registry.SCAN, registry.OBJECTS, registry.VEHICLE_STATE,
                       registry.ERRORS_WARNINGS, registry.REPLY, registry.COMMAND))


class FilePlayback:
    """``source:=file`` of :class:`~.node.IbeoLuxNode` and the ~/pause, ~/resume, ~/seek
    services (the node's service table calls the ``srv_*`` methods; with ``source:=tcp`` they
    answer that no file plays).  ``player``: the recording's
    :class:`~ros_sim_bridge.ibeo.idc_playback.IdcPlayer` (its index built, nothing played
    until :meth:`start`), None with ``source:=tcp``.  Each played message goes to ``data``
    (:class:`~.dispatch.DataDispatch`) as the events a TCP read gives."""

    def __init__(self, p, *, session: LuxSession, data, link, diagnostics, logger):
        self.p = p
        self.session = session
        self.data = data                         # dispatch.DataDispatch
        self.link = link                         # the link's stream (damage, failures)
        self.diagnostics = diagnostics
        self.logger = logger
        self.player: Optional[IdcPlayer] = None
        if p.source == 'file':
            self.player = IdcPlayer(p.file, self._on_file_message, rate=p.rate, loop=p.loop,
                                    start_offset=p.start_offset, paused=p.start_paused,
                                    max_body=p.max_message_bytes, max_jump_s=p.max_time_jump,
                                    on_jump=self._on_jump, on_end=self._on_end,
                                    on_damage=self._on_damage, on_error=self._on_player_error,
                                    name='ibeo-idc-playback')

    def start(self) -> None:
        """Play: the playback thread is supervised like a TCP link (the diagnostics watch
        it)."""
        p, log = self.p, self.logger
        pl = self.player
        self.diagnostics.watch(pl.playback)
        log.info(f'playing {p.file}: {len(pl.entries)} messages, {pl.duration_s:.3f} s, from '
                 f'{pl.time_of(pl.start_index):.3f} s at ×{p.rate:g}'
                 + (' (looping)' if p.loop else '') + (' (paused)' if p.start_paused else '')
                 + (f'; {len(pl.damages)} damaged region(s), '
                    f'{sum(d.skipped for d in pl.damages)} bytes skipped' if pl.damages else '')
                 + (f'; layers {p.layers}' if p.layers else
                    '; layers 0: 4 layers assumed (no sensor to ask; set layers:=8 for an '
                    '8-layer recording)'))
        self.session.connection_made()
        pl.start()

    def _on_file_message(self, raw: bytes, entry, checked) -> None:
        """One recorded message, on the playback thread: the bytes a TCP read would give,
        framed as the recording's index framed them (what ``ibeo_idc to-bag`` converts), with
        the player's verdict on its header time (the session checks no time again)."""
        now_ns = time.time_ns()
        for event in self.session.framer.whole(raw):
            self.data.on_event(event, now_ns, checked)

    def _on_jump(self) -> None:
        """A seek or a loop: the stream is discontinuous, as after a reconnect."""
        for ev in self.session.connection_lost():
            self.data.dispatch(ev, time.time_ns(), None)
        self.session.connection_made()

    def _on_end(self, looping: bool) -> None:
        pl = self.player
        if looping:       # the first loop at INFO; the others (maybe many a second) at DEBUG
            loops = pl.playback.loops
            log = self.logger.info if loops == 1 else self.logger.debug
            log(f'end of {self.p.file}: looping (loop {loops}'
                + ('; the next ones are logged at DEBUG level and counted in /diagnostics, '
                   '`loops`)' if loops == 1 else ')'))
            return
        for ev in self.session.connection_lost():     # a waiting 8-layer half goes out alone
            self.data.dispatch(ev, time.time_ns(), None)
        self.logger.info(f'end of {self.p.file}: {pl.playback.handed} messages played; '
                               'finished (the node stays up: ~/seek or ~/resume plays again)')

    def _on_damage(self, damage) -> None:
        text = (f'{self.p.file}: {damage.skipped} damaged bytes skipped at byte '
                f'{damage.offset} ({damage.reason})')
        self.link.error('damaged_file', text)
        self.diagnostics.log_limited(self.link.name, 'damaged_file', text)

    def _on_player_error(self, entry, exc: BaseException) -> None:
        at = f' (message at byte {entry.offset})' if entry is not None else ''
        self.link.error('internal_error', repr(exc))
        self.diagnostics.log_limited(self.link.name, 'internal_error',
                                     f'{self.link.name}: playback failed{at}: {exc!r}', 'error')

    def _no_file(self, res):
        res.success = False
        res.message = ('not playing a file: playback services work with source:=file '
                       f'(this node reads the sensor at {self.p.host}:{self.p.port})')
        return res

    def srv_pause(self, req, res):
        if self.player is None:
            return self._no_file(res)
        pl = self.player
        if pl.state == 'finished':          # nothing left to hold back
            res.success = False
            res.message = (f'play has finished (end of file, {pl.duration_s:.3f} s): nothing to '
                           f'pause; ~/resume plays again from {pl.time_of(pl.start_index):.3f} s, '
                           '~/seek from any time')
            return res
        t = pl.pause()
        res.success, res.message = True, f'paused before {t:.3f} s'
        return res

    def srv_resume(self, req, res):
        if self.player is None:
            return self._no_file(res)
        t = self.player.resume()
        res.success, res.message = True, f'playing from {t:.3f} s'
        return res

    def srv_seek(self, req, res):
        if self.player is None:
            return self._no_file(res)
        if not math.isfinite(req.time):
            res.success, res.message = False, f'time must be finite, not {req.time}'
            return res
        res.time = self.player.seek(req.time)
        res.success = True
        res.message = (f'at {res.time:.3f} s of {self.player.duration_s:.3f} s'
                       + (' (paused)' if self.player.state == 'paused' else ''))
        return res


def recording_outputs(reader, entries, converter) -> dict:
    """ECU topic → message type of what a recording holds: the smallest message of each ECU /
    FUSION data type in ``entries`` through ``converter`` (a fresh one: its state is not the
    node's), an object list without its objects (the topics do not depend on them), so a
    recording opening with lists of 65,535 objects starts at once.  A message that does not
    decode adds nothing (its topics, if any, get their publishers on first use)."""
    smallest: dict = {}
    for entry in entries:
        best = smallest.get(entry.data_type)
        if entry.data_type not in LUX_TYPES and (best is None or entry.size < best.size):
            smallest[entry.data_type] = entry
    out: dict = {}
    for entry in smallest.values():
        try:
            record = reader.decode(entry)
            if isinstance(record, objects_ecu.EcuObjectList):
                record = cap_object_list(record, 0, 0).record
            pairs = converter.convert(reader.header(entry), record)
        except Exception:           # damaged or without a layout: it plays as it will
            continue
        for topic, msg in pairs:
            out.setdefault(topic, message_type(msg))
    return out
