"""RunContext: the live wiring of one run (session, sinks, steerer, planner, control, inbox).

The Runner creates it and the executors, the steerer, the reporting tools and the adapters
reach it through ``runtime_of(session)``. Event emission goes through ``ctx.emit`` only, which
builds and fans out each event under one lock, so every sink sees sequences in order even
when tasks run concurrently.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from goldfive import events
from goldfive.inbox import Inbox, InjectedMessage, render
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.types import Session

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.control import ControlChannel
    from goldfive.tools import ReportingToolSpec

log = logging.getLogger("goldfive.runtime")

NEXT_TURN_LANE = ""  # carry-over messages wait here for the next turn


@dataclass(frozen=True)
class RuntimeConfig:
    #: Seconds a cancelled agent invocation gets to stop before it is abandoned.
    cancel_grace_s: float = 5.0
    #: Default wait for an approval when the agent gives no timeout.
    approval_default_timeout_ms: int = 600_000
    #: Largest STEER note / injected message accepted, in UTF-8 bytes.
    max_note_bytes: int = 8192


class RunContext:
    def __init__(
        self,
        session: Session,
        *,
        sinks: list[Any],
        steerer: Any,
        planner: Any,
        adapter: Any = None,
        control: "ControlChannel | None" = None,
        config: RuntimeConfig | None = None,
    ) -> None:
        from goldfive.sinks.fanout import FanOut

        self.session = session
        self.fanout = FanOut(list(sinks))
        self.steerer = steerer
        self.planner = planner
        self.adapter = adapter
        self.control = control
        self.config = config or RuntimeConfig()
        self.inbox = Inbox()
        self.carryover: list[InjectedMessage] = []
        self._carried: set[str] = set()  # ids handed back once: delivered "via next_turn"
        self.ended = False
        self._emit_lock = asyncio.Lock()
        self._tools: dict[str, dict[str, "ReportingToolSpec"]] = {}
        self.user_tools: list[Any] = []
        #: Drifts reported by tools mid-task; the executor hands them to the ladder at the
        #: next boundary, so a plan is never swapped under a running invocation.
        self.deferred_drifts: list[Any] = []
        self.paused = False
        self.pause_deadline: float | None = None
        self.pending_rewinds: list[str] = []
        #: Messages taken off the channel while the run was ending; acked by the Runner.
        self.late_messages: list[Any] = []
        session._runtime = self  # type: ignore[attr-defined]

    # -- events ------------------------------------------------------------------
    async def emit(self, factory: Callable[..., Event], *args: Any, **kwargs: Any) -> Event | None:
        """Build the event (stamping the next sequence) and hand it to every sink, in order.

        After the terminal event nothing more is written into the run."""
        async with self._emit_lock:
            if self.ended:
                # Guarantee: nothing is written into an ended run. Say so, never silently.
                log.warning("not recording %s: the run already ended", getattr(factory, "__name__", factory))
                return None
            ev = factory(self.session, *args, **kwargs)
            if events.kind_of(ev) in ("run_completed", "run_aborted"):
                self.ended = True
            await self.fanout.emit(ev)
            return ev

    # -- tools -------------------------------------------------------------------
    def tools_for(self, task_id: str) -> dict[str, "ReportingToolSpec"]:
        """The reporting tools (plus the adapter's user tools) bound to ``task_id``."""
        tools = self._tools.get(task_id)
        if tools is None:
            from goldfive.tools import build_tools

            tools = build_tools(self, task_id)
            self._tools[task_id] = tools
        return tools

    # -- injected messages ---------------------------------------------------------
    async def begin_turn(self, lane: str) -> Callable[[], Any]:
        """Open ``lane`` for parking and move carried-over messages onto it."""
        close = self.inbox.begin(lane)
        if self.carryover:
            pending, self.carryover = self.carryover, []
            for m in pending:
                self.inbox.park(lane, m)

        async def end_turn() -> None:
            self._tools.pop(lane, None)  # built per turn; a long run must not keep them all
            leftover = close()
            for m in leftover:
                await self.emit(events.message_returned, message_id=m.id, lane=lane)
                self._carried.add(m.id)
            self.carryover.extend(leftover)

        return end_turn

    async def inject(self, message: InjectedMessage, lane: str | None = None) -> str:
        """Park on the running turn (the given lane, or the only/first running one); with no
        turn running, keep it for the next turn. Returns the lane it went to ("" = next turn)."""
        lanes = [lane] if lane else self.inbox.running()
        where = next((ln for ln in lanes if self.inbox.park(ln, message)), None)
        if where is None:
            where = NEXT_TURN_LANE
            self.carryover.append(message)
            self._carried.add(message.id)
        await self.emit(
            events.message_parked,
            message_id=message.id,
            lane=where,
            role=message.role,
            text=message.text,
            control_id=message.control_id,
        )
        return where

    async def drain_messages(self, lane: str) -> list[InjectedMessage]:
        """What the turn on ``lane`` should read now; each is recorded as delivered."""
        out = self.inbox.drain(lane)
        for m in out:
            via = "next_turn" if m.id in self._carried else "boundary"
            self._carried.discard(m.id)
            await self.emit(events.message_delivered, message_id=m.id, lane=lane, via=via)
        return out

    async def finish_messages(self) -> None:
        """At run end: anything never delivered is reported, not silently dropped."""
        leftover, self.carryover = self.carryover, []
        for m in leftover:
            await self.emit(events.message_returned, message_id=m.id, lane=NEXT_TURN_LANE)


def runtime_of(session: Session) -> RunContext:
    ctx = getattr(session, "_runtime", None)
    if ctx is None:
        from goldfive.errors import GoldfiveError

        raise GoldfiveError("this session has no running goldfive runtime")
    return ctx


async def read_injected(session: Session, task_id: str) -> list[str]:
    """For agents: the injected messages waiting for the turn on ``task_id``, each rendered
    whole inside ``[user_steering]`` tags."""
    ctx = runtime_of(session)
    return [render(m) for m in await ctx.drain_messages(task_id)]
