"""Injected messages of one run: park on the running turn, deliver, hand back (docs/protocol.md#inject_message).

``Inbox`` (goldfive.inbox) is the lane primitive; this adds what a run needs on top: the
carry-over to the next turn, and an event for every step so a message is never lost unseen.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from goldfive import events
from goldfive.inbox import Inbox, InjectedMessage

#: Carried-over messages wait on this lane for the next turn.
NEXT_TURN_LANE = ""

Emit = Callable[..., Awaitable[Any]]
EndTurn = Callable[[], Awaitable[None]]


class InjectedMessages:
    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self.inbox = Inbox()
        #: Messages handed back by a closed turn (or sent with no turn running), in order.
        self.carryover: list[InjectedMessage] = []
        #: id -> the lane it was last handed back from, so a message never read is reported
        #: against the task it was meant for.
        self._returned_from: dict[str, str] = {}

    def rebind(self, emit: Emit) -> None:
        """Emit through ``emit`` from now on (the run, once over, is held weakly: RunContext.let_go)."""
        self._emit = emit

    def running(self) -> list[str]:
        return self.inbox.running()

    def open_turn(self, lane: str) -> None:
        """Open ``lane`` for parking and move carried-over messages onto it."""
        self.inbox.open(lane)
        if self.carryover:
            pending, self.carryover = self.carryover, []
            for m in pending:
                self.inbox.park(lane, m)

    def close_turn(self, lane: str) -> list[InjectedMessage]:
        """End the turn on ``lane``: what was parked there and never read, for ``hand_back``
        (the usual turn has none, and ends without a coroutine)."""
        return self.inbox.end(lane)

    async def hand_back(self, lane: str, leftover: list[InjectedMessage]) -> None:
        """Messages a closed turn never read: recorded as returned, carried to the next turn."""
        for m in leftover:
            await self._emit(events.message_returned, message_id=m.id, lane=lane)
            self._returned_from[m.id] = lane
        self.carryover.extend(leftover)

    async def begin_turn(self, lane: str, on_end: Callable[[], None] | None = None) -> EndTurn:
        """``open_turn``, with a coroutine function that ends the turn (``on_end`` first)."""
        self.open_turn(lane)

        async def end_turn() -> None:
            if on_end is not None:
                on_end()
            leftover = self.close_turn(lane)
            if leftover:
                await self.hand_back(lane, leftover)

        return end_turn

    async def inject(self, message: InjectedMessage, lane: str | None = None) -> str:
        """Park on the running turn (the given lane, or the first running one); with no turn
        running, keep it for the next turn. Returns the lane it went to ("" = next turn)."""
        lanes = [lane] if lane else self.inbox.running()
        where = next((ln for ln in lanes if self.inbox.park(ln, message)), None)
        if where is None:
            where = NEXT_TURN_LANE
            self.carryover.append(message)
            self._returned_from.setdefault(message.id, NEXT_TURN_LANE)
        await self._emit(
            events.message_parked,
            message_id=message.id,
            lane=where,
            role=message.role,
            text=message.text,
            control_id=message.control_id,
        )
        return where

    async def drain(self, lane: str) -> list[InjectedMessage]:
        """What the turn on ``lane`` should read now; each is recorded as delivered."""
        out = self.inbox.drain(lane)
        for m in out:
            via = "next_turn" if self._returned_from.pop(m.id, None) is not None else "boundary"
            await self._emit(events.message_delivered, message_id=m.id, lane=lane, via=via)
        return out

    async def finish(self) -> None:
        """At run end: anything never delivered is reported, not silently dropped."""
        leftover, self.carryover = self.carryover, []
        for m in leftover:
            lane = self._returned_from.pop(m.id, NEXT_TURN_LANE)
            await self._emit(events.message_returned, message_id=m.id, lane=lane)
