"""The state of a MORAI link, without ROS or sockets: its sim-time base.

Ego Status (data_length 152 on), Object Info and Collision Data in their newer layouts carry
the simulator's time as ``sec``/``nsec`` (SUPPLEMENT §1.3, §1.4); the other messages do not.
One time base serves every message type of the link::

    clock = SimTime(max_ns)
    stamp_ns = clock.on_status(sec, nsec, now_ns)   # a message with a sim time: its own time
    stamp_ns = clock.now(now_ns)                    # one without: the sim time now
    stamp_ns = clock.stamp_ns(value, now_ns)        # either, for a decoded value

:meth:`SimTime.on_status` checks the pair (``sec`` 0 … ``max_ns`` // 1e9, ``nsec``
0 … 999999999; else a ``CodecError`` of kind ``bad_value``, and the time base is left as it
was) and keeps sim time − receive time; :meth:`SimTime.now` is the receive time plus that
offset, held within 0 … ``max_ns``, or the receive time itself until a first sim time
arrives.  Times are integer nanoseconds.
"""
from __future__ import annotations

from typing import Optional

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError

NS_PER_S = 1_000_000_000


class SimTime:
    """The sim-time base of one MORAI link, driven by explicit calls (see the module text).

    ``max_ns`` is the last time a stamp can hold (the caller's: e.g. int32 seconds of a ROS
    stamp); ``source`` names the link in errors."""

    def __init__(self, max_ns: int, source: str = 'MORAI'):
        self.max_ns = int(max_ns)
        self.source = source
        #: sim time − receive time (ns) at the last message with a sim time; None before one
        self.offset_ns: Optional[int] = None

    def on_status(self, sec: int, nsec: int, now_ns: int) -> int:
        """The sim time (ns) of a message carrying ``sec``/``nsec``, received at ``now_ns``;
        it becomes the time base.  CodecError (bad_value) when no stamp can hold it."""
        sec, nsec = int(sec), int(nsec)
        max_sec = self.max_ns // NS_PER_S
        if not 0 <= sec <= max_sec:
            raise CodecError(self.source, f'sec {sec} is outside 0 … {max_sec}', field='sec',
                             kind=BAD_VALUE)
        if not 0 <= nsec < NS_PER_S:
            raise CodecError(self.source, f'nsec {nsec} is outside 0 … 999999999',
                             field='nsec', kind=BAD_VALUE)
        sim_ns = sec * NS_PER_S + nsec
        self.offset_ns = sim_ns - now_ns
        return sim_ns

    def now(self, now_ns: int) -> int:
        """The sim time (ns) at receive time ``now_ns`` as the last sim time tells it, held
        within 0 … ``max_ns`` (rather than dropping a valid message); ``now_ns`` itself before
        a first sim time."""
        if self.offset_ns is None:
            return now_ns
        return min(max(0, now_ns + self.offset_ns), self.max_ns)

    def stamp_ns(self, value, now_ns: int) -> int:
        """:meth:`on_status` for a decoded value whose layout has ``sec``/``nsec`` (not None),
        else :meth:`now`."""
        sec, nsec = getattr(value, 'sec', None), getattr(value, 'nsec', None)
        if sec is not None and nsec is not None:
            return self.on_status(sec, nsec, now_ns)
        return self.now(now_ns)
