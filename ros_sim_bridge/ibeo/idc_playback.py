"""An ``.idc`` recording played as if live (issue #11; ROS-free): the messages of
:class:`~ros_sim_bridge.ibeo.idc.IdcReader`'s index handed out, header and body bytes as they
lie in the file, at the pace of their NTP times through the shared
:class:`~ros_sim_bridge.core.replay.Playback` (rate factor, loop, start offset, pause,
resume, seek by recording time).

The driver feeds the bytes to the same session a TCP link feeds, so a recording publishes
what the live sensor would.  The IDC trailer (0x6120) is file structure, not sensor data, and
is not played.  A damaged region (:class:`~ros_sim_bridge.core.damage.Damage`) is reported once,
when play first reaches it (``on_damage``); play goes on after it.

Times: ``t`` seconds from the recording's first message time; a negative ``t`` counts from
its latest message time.  A file's times need not rise (an ECU forwards devices with clocks
of their own, a clock stepped back): a device whose clock is another (hours off the first
device's) is paced and sought on the first device's clock (:func:`one_clock`), and a time is
sought as the first message in file order at or after it.  The header times are judged once,
the file read whole (:meth:`~ros_sim_bridge.ibeo.idc.IdcReader.checked_times`), and each
message is handed out with that verdict (:class:`~ros_sim_bridge.core.ntp.CheckedTime`), which
the driver uses instead of a live check at whatever rate it plays.  An invalid header time (0, all ones, a
jump of more than ``max_jump_s``) is not waited for: the message goes out at once, and it
has its valid neighbour's time (the verdict's, for seeking and the span).
"""
from __future__ import annotations

import bisect
import itertools
from pathlib import Path
from typing import Callable, Optional, Union

from ros_sim_bridge.core.damage import Damage
from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S, CheckedTime, ntp64_to_unix_ns
from ros_sim_bridge.core.replay import Playback, recording_time
from .codec.header import DEFAULT_MAX_BODY
from .idc import IDC_TRAILER, IdcEntry, IdcReader


def one_clock(times_ns: list, devices: list, max_jump_s: float = MAX_TIME_JUMP_S) -> list:
    """The times of a recording's messages on one clock, for pacing and seeking: a device whose
    first time is more than ``max_jump_s`` from the latest time before it in the file (another
    clock: one counting from its power-up, one hours off) has all its times moved by that
    difference; the others, and a clock step within a device, stay as recorded."""
    bound = max_jump_s * 1e9
    shift: dict = {}
    latest, out = None, []
    for t, device in zip(times_ns, devices):
        if device not in shift:
            shift[device] = t - latest if latest is not None and abs(t - latest) > bound else 0
        t -= shift[device]
        latest = t if latest is None else max(latest, t)
        out.append(t)
    return out


class IdcPlayer:
    """Play ``path``: ``on_message(raw, entry, checked)`` per message on the playback thread
    (``checked``: its header time's :class:`CheckedTime`).

    ``rate`` 1.0 is real time (0: as fast as possible); ``loop`` starts again at
    ``start_offset`` after the last message; ``on_end(looping)`` runs when the last message
    was played; ``on_jump()`` before the first message after a seek or loop;
    ``on_damage(damage)`` once per damaged region; ``on_error(entry | None, exc)`` for a
    callback that raised (play goes on).
    """

    def __init__(self, path: Union[str, Path],
                 on_message: Callable[[bytes, IdcEntry, CheckedTime], None],
                 *, rate: float = 1.0, loop: bool = False, start_offset: float = 0.0,
                 paused: bool = False, max_body: int = DEFAULT_MAX_BODY,
                 max_jump_s: float = MAX_TIME_JUMP_S,
                 on_jump: Optional[Callable[[], None]] = None,
                 on_end: Optional[Callable[[bool], None]] = None,
                 on_damage: Optional[Callable[[Damage], None]] = None,
                 on_error: Optional[Callable[[Optional[IdcEntry], BaseException], None]] = None,
                 name: str = 'idc playback'):
        self.reader = IdcReader(path, max_body=max_body)
        try:
            checked = self.reader.checked_times(max_jump_s)
        except BaseException:
            self.reader.close()
            raise
        played = [i for i, e in enumerate(self.reader.entries) if e.data_type != IDC_TRAILER]
        self.entries = [self.reader.entries[i] for i in played]
        self.on_message, self.on_end, self.on_damage = on_message, on_end, on_damage
        self._on_error = on_error
        self.damages = list(self.reader.damages)
        self.chain_breaks = list(self.reader.chain_breaks)
        # time of each message (an invalid one's: its neighbour's) on the first device's clock;
        # paced by the valid ones
        self._ntp = [checked.times[i] for i in played]
        self._times = one_clock([ntp64_to_unix_ns(t) for t in self._ntp],
                                [e.device_id for e in self.entries], max_jump_s)
        self._why = {k: checked.why[i] for k, i in enumerate(played) if i in checked.why}
        # the latest time up to each message: rises whatever the clocks do (what seeks search)
        self._latest = list(itertools.accumulate(self._times, max))
        self.first_ns = self._times[0] if self._times else 0
        self.last_ns = self._latest[-1] if self._times else 0
        # each damaged region is reported before the first message after it (or at the end)
        offsets = [e.offset for e in self.entries]
        self._damage_at: dict[int, list[Damage]] = {}
        for d in self.damages:
            self._damage_at.setdefault(bisect.bisect_left(offsets, d.offset), []).append(d)
        self.damages_reported = 0
        self.bytes_skipped_reported = 0
        self.start_index = self.index_at(start_offset)
        self.playback = Playback(len(self.entries), self._stamp_ns, self._hand, speed=rate,
                                 loop=loop, start=self.start_index, paused=paused,
                                 on_jump=on_jump, on_end=self._end, on_error=self._error,
                                 name=name)

    # --- times --------------------------------------------------------------------------
    @property
    def duration_s(self) -> float:
        return (self.last_ns - self.first_ns) / 1e9

    def time_of(self, index: int) -> float:
        """Seconds from the first message to message ``index`` (the end: the duration)."""
        if index >= len(self._times):
            return self.duration_s
        return (self._times[index] - self.first_ns) / 1e9

    def index_at(self, t: float) -> int:
        """Index of the first message (in file order) at or after ``t`` s (negative: from the
        end)."""
        t = recording_time(t, self.duration_s)
        return bisect.bisect_left(self._latest, self.first_ns + round(t * 1e9))

    # --- controls -----------------------------------------------------------------------
    def start(self) -> None:
        self.playback.start()

    def pause(self) -> float:
        """Returns the recording time of the message played next."""
        return self.time_of(self.playback.pause())

    def resume(self) -> float:
        return self.time_of(self.playback.resume())

    def seek(self, t: float) -> float:
        """Play from the first message at or after ``t`` (s; negative: from the end); returns
        its recording time."""
        return self.time_of(self.playback.seek(self.index_at(t)))

    @property
    def state(self) -> str:
        return self.playback.state

    @property
    def position(self) -> int:
        return self.playback.position

    def close(self) -> None:
        self.playback.stop()
        self.reader.close()

    # --- the playback thread ------------------------------------------------------------
    def _stamp_ns(self, i: int) -> Optional[int]:
        return None if i in self._why else self._times[i]

    def _report_damage(self, i: int) -> None:
        for d in self._damage_at.pop(i, ()):           # once: not again after a loop or seek
            self.damages_reported += 1
            self.bytes_skipped_reported += d.skipped
            if self.on_damage is not None:
                self.on_damage(d)

    def _hand(self, i: int) -> None:
        if self._damage_at:
            self._report_damage(i)
        entry = self.entries[i]
        self.on_message(self.reader.raw(entry), entry, CheckedTime(self._ntp[i],
                                                                   self._why.get(i)))

    def _end(self, looping: bool) -> None:
        if self._damage_at:
            self._report_damage(len(self.entries))     # damage after the last message
        if self.on_end is not None:
            self.on_end(looping)

    def _error(self, i: int, exc: BaseException) -> None:
        entry = self.entries[i] if 0 <= i < len(self.entries) else None
        if self._on_error is None:
            raise exc
        self._on_error(entry, exc)
