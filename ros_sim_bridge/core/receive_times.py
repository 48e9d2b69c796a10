"""The receive time of each message of one stream read (ROS-free).

A TCP read can return several messages: the reader was busy when they arrived, or the network
delivered a burst.  All the host observes is that every byte of the read had arrived when the
read returned, so stamping each message with that instant gives messages that were complete
at different times one shared, late receive time (two scans 80 ms apart, one stamp).

When the sender puts its own clock in every message at the time it makes it (an ibeo data
header's NTP time, spec §2.4), the spacing of those times is the best estimate of the spacing
of the arrivals: the last message of the read completed at the read time, each earlier one as
much sooner than the message after it as the sender's clock says.  That spacing holds whether
or not the sender's clock is set (one counting from power-up spaces messages as well); its
absolute value is never used.

Bounds, so that no estimate is worse than the shared stamp: a message is never stamped after
the read, before the previous message's receive time (receive times never run backwards) or
before the connection was made (``start``); a sender time that is unknown, or earlier than
the message before it (the sender's clock was set or stepped back), gives no spacing (the same
time as the message after it).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence


def spread(sent_ns: Sequence[Optional[int]], read_ns: int,
           floor_ns: Optional[int] = None) -> list[int]:
    """Receive times (ns) of the messages of one read, in stream order: ``sent_ns`` are their
    sender times (ns, any epoch; None: unknown), ``read_ns`` the host time the read returned,
    ``floor_ns`` the earliest time any of them may have (see the module docstring)."""
    times = [read_ns] * len(sent_ns)
    t, after = read_ns, None          # receive and sender time of the message after this one
    for i in range(len(sent_ns) - 1, -1, -1):
        s = sent_ns[i]
        if s is not None:
            if after is not None and s <= after:
                t -= after - s
            after = s
        times[i] = t
    low = floor_ns
    for i, t in enumerate(times):
        if low is not None and t < low:
            times[i] = t = low
        low = t
    return times


class ReadTimes:
    """The receive time of each event of a read (``TcpClient(receive_times=...)``).

    ``sent_ns(event)`` gives an event's sender time in ns (None: unknown or not a message).
    Keeps the last time handed out, so receive times never run backwards across reads;
    :meth:`start` (at every connect) sets the floor to the connection time."""

    def __init__(self, sent_ns: Callable[[Any], Optional[int]]):
        self.sent_ns = sent_ns
        self.floor_ns: Optional[int] = None

    def start(self, now_ns: int) -> None:
        """A new connection at ``now_ns``: nothing of it arrived earlier."""
        self.floor_ns = now_ns

    def __call__(self, events: Sequence[Any], read_ns: int) -> list[int]:
        times = spread([self.sent_ns(e) for e in events], read_ns, self.floor_ns)
        if times:
            self.floor_ns = times[-1]
        return times


__all__ = ['spread', 'ReadTimes']
