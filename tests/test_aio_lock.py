"""goldfive.aio.FifoLock: the lock RunContext.emit takes for every event (one holder, waiters
served in arrival order, a cancelled waiter never leaves the lock held)."""

from __future__ import annotations

import asyncio

import pytest

from goldfive.aio import FifoLock


async def test_waiters_are_served_in_arrival_order_and_nobody_barges_in() -> None:
    lock, order = FifoLock(), []
    assert lock.try_acquire()

    async def take(name: str) -> None:
        async with lock:
            order.append(name)
            await asyncio.sleep(0)

    waiters = [asyncio.ensure_future(take(n)) for n in "abc"]
    await asyncio.sleep(0)  # all three wait
    lock.release()  # handed to "a": still locked, so a newcomer cannot take it
    assert lock.locked() and not lock.try_acquire()
    await asyncio.gather(*waiters)
    assert order == ["a", "b", "c"] and not lock.locked()


async def test_a_waiter_cancelled_before_or_after_the_hand_over_leaves_the_lock_usable() -> None:
    lock = FifoLock()
    await lock.acquire()
    early, late, last = (asyncio.ensure_future(lock.acquire()) for _ in range(3))
    await asyncio.sleep(0)
    early.cancel()  # before the hand-over: skipped
    await asyncio.sleep(0)
    lock.release()  # handed to late ...
    late.cancel()  # ... which is cancelled before it runs: it hands the lock on to last
    await asyncio.gather(early, late, last, return_exceptions=True)
    assert early.cancelled() and late.cancelled() and last.done() and not last.cancelled()
    assert lock.locked()
    lock.release()
    assert not lock.locked() and lock.try_acquire()


def test_releasing_a_lock_nobody_holds_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="not acquired"):
        FifoLock().release()
