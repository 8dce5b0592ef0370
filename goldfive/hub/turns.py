"""Turns: the hub's ingest never holds its event loop for long (issue 27).

A control a person sent waits, at every hop through the hub (its call read, sent down the
runner's stream, the ack read back, the answer written), for the callback the loop is running
to return. Storing and folding events is the bulk of what a busy hub runs: a frame of a
hundred runs' events, a runner's resent batch of 500, the confirmations after a group commit.
That work goes in turns of at most :data:`TURN_SECONDS` of the loop, and between two turns the
loop runs everything else that is ready (I/O, a control's handler, watchers) first.

One :class:`Turns` serves the whole hub: a worker whose turn is used up waits for the
:meth:`Turns.next` baton, handed to one waiting worker per pass of the loop, so a hundred
streams' workers do not each take a turn between two hops of a control. A worker starting
fresh work (a new frame) does not wait: small frames cost no extra pass of the loop.

While a control is in flight through the hub (:meth:`Turns.hurry`, from its send down the
runner's stream to its ack), a turn is :data:`URGENT_SECONDS` instead: the control's every hop
waits for a fraction of a millisecond of ingest, and ingest still goes on between them (it is
not stopped while the runner answers). The baton belongs to the event loop
(:func:`loop_turns`): every hub and stream served on one loop shares it.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TURN_SECONDS", "URGENT_SECONDS", "Turn", "Turns", "loop_turns"]

#: The longest stretch of ingest work the hub runs on its event loop before it lets the loop
#: turn (a control waits for at most about this at each hop through the hub).
TURN_SECONDS = 0.001
#: The same while a control is in flight through the hub (``Turns.hurry``).
URGENT_SECONDS = 0.0002

_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Turns] = weakref.WeakKeyDictionary()


def loop_turns() -> Turns:
    """The running event loop's baton (made on first use)."""
    loop = asyncio.get_running_loop()
    turns = _BY_LOOP.get(loop)
    if turns is None:
        turns = _BY_LOOP[loop] = Turns()
    return turns


class Turns:
    """The hub's baton for long ingest work: see the module doc."""

    def __init__(self, seconds: float = TURN_SECONDS, urgent_seconds: float = URGENT_SECONDS) -> None:
        self.seconds = seconds
        self.urgent_seconds = min(urgent_seconds, seconds)
        #: Controls in flight now (``hurry``).
        self.urgent = 0
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._scheduled = False
        #: Turns handed over so far (benches and tests).
        self.handed = 0

    @property
    def budget(self) -> float:
        """The length of a turn now: shorter while a control is in flight."""
        return self.urgent_seconds if self.urgent else self.seconds

    @contextmanager
    def hurry(self) -> Iterator[None]:
        """A control is in flight (a person waits for its ack): turns are short meanwhile."""
        self.urgent += 1
        try:
            yield
        finally:
            self.urgent -= 1

    def turn(self) -> Turn:
        """A worker's turn, starting now."""
        return Turn(self)

    def _wait(self) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiting.append(fut)
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._hand)
        return fut

    def _hand(self) -> None:
        """One waiting worker goes on (in the loop's next pass, behind what is ready now);
        the next one a pass later."""
        self._scheduled = False
        waiting = self._waiting
        while waiting:
            fut = waiting.popleft()
            if not fut.done():  # (a cancelled worker's is done)
                fut.set_result(None)
                self.handed += 1
                break
        if waiting:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._hand)


class Turn:
    """One worker's stretch of work on the loop: ``due`` once it has run ``Turns.seconds``;
    ``await next()`` then lets the loop turn and starts the next stretch."""

    __slots__ = ("started", "turns")

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self.started = time.perf_counter()

    def due(self) -> bool:
        return time.perf_counter() - self.started >= self.turns.budget

    async def next(self) -> None:
        await self.turns._wait()
        self.started = time.perf_counter()

    async def check(self) -> bool:
        """Let the loop turn if this stretch is used up; True when it did (the caller looks
        again at what may have changed meanwhile, e.g. a lane taken over)."""
        if time.perf_counter() - self.started < self.turns.budget:
            return False
        await self.next()
        return True
