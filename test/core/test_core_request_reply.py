"""core/request_reply.py: a blocking request/reply over real threads (no ROS, no sockets)."""
import threading
import time

import pytest

from ros_sim_bridge.core.request_reply import Busy, RequestReply


def later(seconds, fn, *args):
    t = threading.Timer(seconds, fn, args)
    t.start()
    return t


def test_the_reply_of_its_key_wakes_the_caller_and_others_are_not_taken():
    rr = RequestReply()
    with rr.expect(7) as waiter:
        assert not rr.resolve(8, 'not mine')            # nobody waits for 8: the receiver's
        later(0.05, rr.resolve, 7, 'reply')
        t0 = time.monotonic()
        assert waiter.wait(5.0) and waiter.reply == 'reply' and waiter.error == ''
        assert time.monotonic() - t0 < 2.0
    assert not rr.waiting(7)


def test_a_timeout_returns_in_time_polls_and_a_late_reply_is_nobodys():
    rr = RequestReply()
    polls = []
    with rr.expect('ref') as waiter:
        t0 = time.monotonic()
        assert not waiter.wait(0.3, poll=lambda: polls.append(time.monotonic()),
                               poll_every=0.1)
        took = time.monotonic() - t0
    assert 0.29 <= took < 1.0 and len(polls) >= 3        # every 0.1 s and once at the end
    assert not rr.resolve('ref', 'late')


def test_a_poll_may_hand_the_reply_over_itself():
    rr = RequestReply()
    waiter = rr.expect(1)
    assert waiter.wait(2.0, poll=lambda: rr.resolve(1, 'from the tick'))
    assert waiter.reply == 'from the tick'
    waiter.close()


def test_failures_reach_the_waiting_callers():
    rr = RequestReply()
    a, b = rr.expect(1), rr.expect(2)
    assert rr.fail(1, 'malformed reply') and not rr.fail(3, 'x')
    assert a.wait(0) and (a.reply, a.error) == (None, 'malformed reply')
    later(0.05, rr.fail_all, 'link lost')
    assert b.wait(5.0) and b.error == 'link lost'
    a.close(), b.close()


def test_one_at_a_time_waits_for_the_previous_caller():
    rr = RequestReply(one_at_a_time=True)
    first = rr.expect(1)
    with pytest.raises(Busy):
        rr.expect(2, turn_timeout=0.05)
    later(0.05, first.close)
    with rr.expect(2, turn_timeout=5.0) as second:      # the turn passed on at close
        first.close()                                    # a second close changes nothing
        with pytest.raises(Busy):
            rr.expect(3, turn_timeout=0.0)
        assert rr.resolve(2, 'ok') and second.reply == 'ok'
    rr.expect(3, turn_timeout=0.0).close()


def test_many_callers_each_get_their_own_reply():
    rr = RequestReply()
    got = {}

    def caller(key):
        with rr.expect(key) as w:
            started.wait()
            w.wait(5.0)
            got[key] = w.reply
    started = threading.Event()
    threads = [threading.Thread(target=caller, args=(k,)) for k in range(20)]
    for t in threads:
        t.start()
    while sum(rr.waiting(k) for k in range(20)) < 20:
        time.sleep(0.001)
    started.set()
    for k in reversed(range(20)):
        assert rr.resolve(k, k * 10)
    for t in threads:
        t.join(5.0)
    assert got == {k: k * 10 for k in range(20)}
