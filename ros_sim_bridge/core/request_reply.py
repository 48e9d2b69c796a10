"""Blocking request/reply over an asynchronous link, ROS-free and thread-safe.

A caller (a service callback) registers the key its reply will carry
(:meth:`RequestReply.expect`), sends its request, and waits with a timeout
(:meth:`Waiter.wait`); the link's receive thread hands each reply over by its key
(:meth:`RequestReply.resolve`) or fails it (:meth:`~RequestReply.fail`,
:meth:`~RequestReply.fail_all` when the link drops).  A reply nobody waits for is the
receiver's to handle (``resolve`` returns False).  With ``one_at_a_time`` one request is
outstanding at a time: ``expect`` waits for the previous caller to finish.

Used by the monoDrive command services (keyed by ``reference``) and the ibeo LUX commands
(keyed by command id).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Hashable, Optional


class Busy(Exception):
    """``one_at_a_time``: another request was still outstanding when the wait ended."""


class Waiter:
    """One request waiting for its reply; a context manager that stops waiting on exit."""

    def __init__(self, owner: 'RequestReply', key: Hashable):
        self.key = key
        self.reply: Any = None
        self.error = ''             # why there is no reply (a failure handed over)
        self._owner = owner
        self._closed = False
        self._event = threading.Event()

    @property
    def done(self) -> bool:
        """A reply or a failure was handed over."""
        return self._event.is_set()

    def wait(self, timeout: float, *, poll: Optional[Callable[[], None]] = None,
             poll_every: float = 0.1) -> bool:
        """Wait up to ``timeout`` s for the reply (or a failure); True when one came.
        ``poll`` is called every ``poll_every`` s while waiting and once at the end (a
        session's timers: what it hands over counts)."""
        deadline = time.monotonic() + timeout
        while not self._event.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                if poll is not None:
                    poll()
                break
            if self._event.wait(min(poll_every, left) if poll is not None else left):
                break
            if poll is not None:
                poll()
        return self._event.is_set()

    def _set(self, reply: Any, error: str) -> None:
        self.reply, self.error = reply, error
        self._event.set()

    def close(self) -> None:
        """Stop waiting: a reply handed over later is the receiver's (``resolve``: False)."""
        self._owner._forget(self)

    def __enter__(self) -> 'Waiter':
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RequestReply:
    def __init__(self, *, one_at_a_time: bool = False):
        self._lock = threading.Lock()
        self._waiting: dict[Hashable, Waiter] = {}
        self._turn = threading.Lock() if one_at_a_time else None

    def expect(self, key: Hashable, *, turn_timeout: float = -1) -> Waiter:
        """A waiter for the reply keyed ``key``; register it *before* the request goes out.
        ``one_at_a_time``: waits up to ``turn_timeout`` s (< 0: no limit) for the previous
        request to finish, else :class:`Busy`."""
        if self._turn is not None and not self._turn.acquire(timeout=turn_timeout):
            raise Busy(key)
        waiter = Waiter(self, key)
        with self._lock:
            self._waiting[key] = waiter
        return waiter

    def waiting(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._waiting

    def resolve(self, key: Hashable, reply: Any) -> bool:
        """Hand ``reply`` to the caller waiting for ``key``; False when none waits."""
        with self._lock:
            waiter = self._waiting.pop(key, None)
        if waiter is None:
            return False
        waiter._set(reply, '')
        return True

    def fail(self, key: Hashable, error: str) -> bool:
        """Tell the caller waiting for ``key`` that no reply comes, and why."""
        with self._lock:
            waiter = self._waiting.pop(key, None)
        if waiter is None:
            return False
        waiter._set(None, error)
        return True

    def fail_all(self, error: str) -> int:
        """Fail every waiting caller (the link dropped, the node stops); how many."""
        with self._lock:
            waiters, self._waiting = list(self._waiting.values()), {}
        for waiter in waiters:
            waiter._set(None, error)
        return len(waiters)

    def _forget(self, waiter: Waiter) -> None:
        with self._lock:
            if waiter._closed:
                return
            waiter._closed = True
            if self._waiting.get(waiter.key) is waiter:
                del self._waiting[waiter.key]
        if self._turn is not None:
            self._turn.release()
