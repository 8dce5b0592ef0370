"""One helper for ending asyncio tasks: cancel, then wait for them to finish.

Waiting uses ``asyncio.wait`` rather than awaiting the task itself, so a cancel of the
*caller* propagates instead of passing for the task's own cancellation and being swallowed.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import types
from collections import deque
from collections.abc import Callable, Collection, Coroutine, Generator
from typing import Any

log = logging.getLogger("goldfive.aio")


def detached_timer(delay_s: float, callback: Callable[..., object], *args: Any) -> asyncio.TimerHandle:
    """``call_later`` armed in an empty context, for a timer of an object that must not outlive
    its owner (a run's budget seconds, a task's timeout). asyncio keeps a timer until its due
    time, cancelled or not, and with it the context it was armed in: a finished run's timer due
    in an hour kept the run (its context variable) alive that long. ``callback`` runs with no
    context variable set; what needs the run's starts in ``current_run.run_context(run)``."""
    return asyncio.get_running_loop().call_later(delay_s, callback, *args, context=contextvars.Context())


async def cancel_and_wait(
    tasks: Collection[asyncio.Future[Any]], *, timeout: float | None = None
) -> set[asyncio.Future[Any]]:
    """Cancel every unfinished task and wait up to ``timeout`` seconds for them to end.

    Returns the tasks still running after the timeout (an agent that ignores its
    cancellation). Each task's eventual exception is retrieved when it ends, so nothing is
    reported as "never retrieved". The caller decides what to say about them."""
    live = [t for t in tasks if not t.done()]
    for t in live:
        t.cancel()
        t.add_done_callback(retrieve)
    if not live:
        return set()
    _, stuck = await asyncio.wait(live, timeout=timeout)
    return set(stuck)


def retrieve(fut: asyncio.Future[Any]) -> None:
    """Done-callback: take a finished task's exception so asyncio does not warn about it."""
    if not fut.cancelled() and fut.exception() is not None:
        log.debug("abandoned task ended with %r", fut.exception())


async def first_done(futures: Collection[asyncio.Future[Any]]) -> set[asyncio.Future[Any]]:
    """Wait until at least one of ``futures`` is done; return the ones that are.

    ``asyncio.wait(..., FIRST_COMPLETED)`` without its bookkeeping: this runs once per task
    of a run, so its cost is the run's. Cancelling the caller leaves the futures untouched."""
    done = {f for f in futures if f.done()}
    if done:
        return done
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake(_: asyncio.Future[Any]) -> None:
        if not waiter.done():
            waiter.set_result(None)

    for f in futures:
        f.add_done_callback(wake)
    try:
        await waiter
    finally:
        for f in futures:
            f.remove_done_callback(wake)
    return {f for f in futures if f.done()}


class Completions:
    """The futures of a batch as they complete, in that order, at O(1) per completion.

    ``first_done`` over a batch of N running tasks would register N callbacks for every
    completion (O(N^2) for a wide stage of a DAG); this registers each task's callback once."""

    def __init__(self, futures: Collection[asyncio.Future[Any]]) -> None:
        self._done: deque[asyncio.Future[Any]] = deque()
        self._waiter: asyncio.Future[None] | None = None
        for f in futures:
            f.add_done_callback(self._on_done)

    def _on_done(self, fut: asyncio.Future[Any]) -> None:
        self._done.append(fut)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def ready(self) -> asyncio.Future[None]:
        """Done once a completion is waiting to be taken."""
        if self._waiter is None or self._waiter.done():
            self._waiter = asyncio.get_running_loop().create_future()
            if self._done:
                self._waiter.set_result(None)
        return self._waiter

    def wake(self, fut: asyncio.Future[None]) -> None:
        """Have ``fut`` set at the next completion (at once when one is waiting): the
        caller's own future, shared with its other sources, so it wakes without a hop."""
        self._waiter = fut
        if self._done and not fut.done():
            fut.set_result(None)

    def take(self) -> list[asyncio.Future[Any]]:
        """The completions not taken yet, in the order they happened."""
        out = list(self._done)
        self._done.clear()
        return out


class FifoLock:
    """``asyncio.Lock``'s guarantee (one holder, waiters served first come first served) with
    an uncontended take that needs no await (``try_acquire``): ``RunContext.emit`` takes it for
    every event. A release hands the lock straight to the first waiter, so nobody barges in
    between.

    ``RunContext.emit`` writes ``try_acquire`` and ``release`` out on these two slots (its
    uncontended path, with no call): a change to what they mean changes it too."""

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def locked(self) -> bool:
        return self._locked

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds or awaits it; False (nothing taken) otherwise."""
        if self._locked or self._waiters:
            return False
        self._locked = True
        return True

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut  # done: the releaser handed the lock over (it stays locked)
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # handed over, then cancelled: hand it on
            else:
                self._waiters.remove(fut)
            raise

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("FifoLock is not acquired")
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return
        self._locked = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()



def start_eagerly(coro: Coroutine[Any, Any, Any], context: contextvars.Context) -> asyncio.Future[Any] | None:
    """Run ``coro`` in ``context`` in the caller's call, up to its first real suspension
    (``asyncio.eager_task_factory`` of Python 3.12, for one coroutine). None when it finished
    there (its result is dropped); else a Task that carries it on from where it suspended, in
    the same context. An exception it raised before suspending is held in the returned future,
    never raised to the caller: whoever owns the work awaits the future and sees it."""
    try:
        yielded = context.run(coro.send, None)
    except StopIteration:
        return None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # handed to the owner through the future, as a task would
        failed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        failed.set_exception(exc)
        return failed
    return asyncio.get_running_loop().create_task(_carry_on(coro, yielded), context=context)


async def _carry_on(coro: Coroutine[Any, Any, Any], yielded: Any) -> Any:
    return await _resume(coro, yielded)


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], yielded: Any) -> Generator[Any, Any, Any]:
    """``yield from coro`` for a coroutine already started: the future it suspended on goes to
    the task first, then every value and exception the task sends is passed on."""
    while True:
        try:
            value = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                yielded = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                yielded = coro.send(value)
            except StopIteration as stop:
                return stop.value
