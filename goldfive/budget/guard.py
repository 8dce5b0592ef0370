"""BudgetGuard: a run's budget, enforced (``RunContext.budget``).

Where it acts:

- ``after_event``: ``RunContext.emit`` shows it each event once it is out. A recorded model
  call or a tool call that crosses 80% of a limit puts a ``budget_warning`` on the stream; one
  that reaches a limit pauses the run at once (``budget_reached``), so the person hears of it
  while the task's next call is being prepared.
- ``before_call``: awaited before each model call (and tool call) where the agent's framework
  lets goldfive act there (``goldfive.budget.before_model_call``). Over budget, the call does
  not start: the run pauses (if it had not yet) and the call waits until a person raises the
  budget (BUDGET) and the run goes on (RESUME, or BUDGET with resume). The call in flight
  when the limit was crossed has finished: a budget never cuts a call off.
- ``at_boundary``: the executor asks it between tasks; over budget, no task starts.
- a timer (``arm``): a ``seconds`` limit pauses the run when the clock reaches it, even if no
  gate is crossed (``budget_reached`` with where "clock"): the call in flight finishes, nothing
  new starts. Armed when the run starts or resumes and whenever its budget changes or it goes on.

Nobody can raise a budget on a run without a control channel: a call held back there raises
:class:`BudgetExhausted` (its task fails) and the run stops at the next boundary, saying why.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from dataclasses import dataclass
from typing import Any, Protocol

from goldfive import events
from goldfive.aio import detached_timer
from goldfive.budget.model import Budget, format_limit
from goldfive.errors import GoldfiveError
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.usage.ledger import UsageLedger

__all__ = ["WARN_AT", "BudgetExhausted", "BudgetGuard", "Reached"]

#: The fraction of a limit at which a warning goes out.
WARN_AT = 0.8
_SEEN = frozenset({"usage_recorded", "agent_step"})


class BudgetExhausted(GoldfiveError):
    """A call was held back by the budget and nobody can raise it (no control channel)."""


@dataclass(frozen=True, slots=True)
class Reached:
    """A limit that is used up: which, how much was used and how much was allowed."""

    limit: str
    used: float
    allowed: float

    @property
    def detail(self) -> str:
        """"tokens 50,210 of 50,000"."""
        return f"{self.limit} {format_limit(self.limit, self.used)} of {format_limit(self.limit, self.allowed)}"

    @property
    def reason(self) -> str:
        """What the run waits for, as attention and STATUS_QUERY say it."""
        return f"budget reached, {self.detail}"


class _Controls(Protocol):
    def usable(self) -> bool: ...


class BudgetedRun(Protocol):
    """What the guard needs of its run (a RunContext; named here so this module does not
    import the run, which imports it)."""

    usage: UsageLedger
    paused: bool
    ended: bool

    @property
    def controls(self) -> _Controls: ...
    def pause(self, deadline_s: float | None = None) -> None: ...
    def own_context(self) -> contextvars.Context: ...
    async def emit(self, factory: Any, *args: Any, **kwargs: Any) -> Any: ...


class BudgetGuard:
    def __init__(self, ctx: BudgetedRun, budget: Budget | None = None) -> None:
        self.ctx = ctx
        self.budget = budget if budget is not None else Budget()
        #: Tool calls made so far (``agent_step`` tool_call events; a resumed run's included).
        self.tool_calls = 0
        #: Seconds the run ran before this process took it over (``goldfive resume``).
        self.prior_s = 0.0
        self._started = time.monotonic()
        #: The limit that paused the run, until it goes on; None while within the budget.
        self.reached: Reached | None = None
        self._go = asyncio.Event()
        self._go.set()
        #: (limit, allowed) pairs already warned about: raising a limit re-arms its warning.
        self._warned: set[tuple[str, float]] = set()
        #: The seconds limit's timer, and the task that pauses the run when it fires.
        self._timer: asyncio.TimerHandle | None = None
        self._timing: asyncio.Task[None] | None = None

    # -- figures ---------------------------------------------------------------------------
    def used(self, limit: str) -> float:
        totals = self.ctx.usage.totals
        if limit == "tokens":
            return totals.tokens
        if limit == "usd":
            return totals.cost_usd
        if limit == "model_calls":
            return totals.calls
        if limit == "tool_calls":
            return self.tool_calls
        if limit == "seconds":
            return self.prior_s + time.monotonic() - self._started
        raise KeyError(limit)

    def over(self, budget: Budget | None = None) -> Reached | None:
        """The first limit of ``budget`` (this run's by default) that is used up, else None."""
        for limit, allowed in (budget or self.budget).items():
            used = self.used(limit)
            if used >= allowed:
                return Reached(limit, used, allowed)
        return None

    def describe(self) -> str:
        """"tokens 41,200 of 50,000, usd $0.40 of $2.00" (what is used of each limit)."""
        return ", ".join(
            f"{limit} {format_limit(limit, self.used(limit))} of {format_limit(limit, allowed)}" for limit, allowed in self.budget.items()
        ) or "no limits"

    # -- a resumed run -----------------------------------------------------------------------
    def seed(self, recorded: Budget | None, *, tool_calls: int, ran_s: float, paused: bool, given: Budget | None) -> bool:
        """Go on from a recording (``goldfive resume``): its budget (unless this run was
        ``given`` one of its own, which then replaces it: returns True, to be recorded), its
        tool calls and time; a run the budget held paused is held again."""
        self.tool_calls, self.prior_s = tool_calls, ran_s
        self._started = time.monotonic()
        replaced = given is not None and given != recorded
        if given is not None:
            self.budget = given
        elif recorded is not None:
            self.budget = recorded
        if paused and not self.budget.empty:
            over = self.over()
            if over is not None:
                self.reached = over
                self._go.clear()
        self.arm()
        return replaced

    # -- changing it -----------------------------------------------------------------------
    async def set(self, budget: Budget, *, author: str = "", control_id: str = "") -> None:
        """The run's budget is ``budget`` from now on (recorded as ``budget_changed``). A run
        paused by the budget stays paused: a RESUME (or BUDGET with resume) lets it go on."""
        self.budget = budget
        await self.ctx.emit(events.budget_changed, budget, author, control_id)
        self.arm()

    def release(self) -> None:
        """The run goes on (it was unpaused): the calls held back start."""
        self.reached = None
        self._go.set()
        self.arm()

    # -- the seconds limit's timer -------------------------------------------------------
    def arm(self) -> None:
        """Time the ``seconds`` limit: when the clock reaches it the run pauses, whether or not
        a gate is crossed. Re-armed for the current budget; nothing to time without a seconds
        limit, while the budget holds the run, once it ended, or outside an event loop."""
        self.disarm()
        seconds = self.budget.seconds
        if seconds is None or self.reached is not None or self.ctx.ended:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = detached_timer(max(0.0, seconds - self.used("seconds")), self._time_up)

    def disarm(self) -> None:
        """Stop timing (the run ended)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _time_up(self) -> None:
        self._timer = None
        if self.reached is None and not self.ctx.ended:
            self._timing = asyncio.get_running_loop().create_task(self._on_time(), context=self.ctx.own_context())

    async def _on_time(self) -> None:
        if self.reached is not None or self.ctx.ended or self.budget.empty:
            return
        over = self.over()
        if over is None:  # the limit moved meanwhile: time the new one
            self.arm()
            return
        await self._reach(over, "clock")

    # -- enforcement -----------------------------------------------------------------------
    async def after_event(self, ev: pb.Event) -> None:
        kind = ev.WhichOneof("payload")
        if kind not in _SEEN:
            return
        if kind == "agent_step":
            if ev.agent_step.step != "tool_call":
                return
            self.tool_calls += 1
        if self.budget.empty:
            return
        over = self.over()
        if over is not None:
            if self.reached is None:
                task_id = ev.usage_recorded.task_id if kind == "usage_recorded" else ev.agent_step.task_id
                await self._reach(over, "usage", task_id)
            return
        await self._warn()

    async def before_call(self, where: str = "model_call", task_id: str = "") -> None:
        """Before a model (or tool) call starts: returns at once within the budget; over it,
        pauses the run and waits until it may go on. Cancelling the call cancels the wait."""
        if self.reached is None:
            if self.budget.empty:
                return
            over = self.over()
            if over is None:
                return
            await self._reach(over, where, task_id)
        while self.reached is not None and not self.ctx.ended:
            if not self.ctx.controls.usable():
                raise BudgetExhausted(f"{self.reached.reason}; no control channel to raise it")
            await self._go.wait()

    async def at_boundary(self) -> bool:
        """Between tasks: True when the budget is used up (the run is paused now)."""
        if self.reached is not None:
            return self.ctx.paused
        over = None if self.budget.empty else self.over()
        if over is None:
            return False
        await self._reach(over, "task_boundary")
        return True

    async def _reach(self, over: Reached, where: str, task_id: str = "") -> None:
        self.reached = over
        self._go.clear()
        if not self.ctx.paused:
            self.ctx.pause()
        await self.ctx.emit(events.budget_reached, over.limit, over.used, over.allowed, over.detail, where, task_id)

    async def _warn(self) -> None:
        for limit, allowed in self.budget.items():
            if (limit, allowed) in self._warned:
                continue
            used = self.used(limit)
            if used >= WARN_AT * allowed:
                self._warned.add((limit, allowed))
                detail = f"{limit} {format_limit(limit, used)} of {format_limit(limit, allowed)} ({used / allowed:.0%})"
                await self.ctx.emit(events.budget_warning, limit, used, allowed, detail)
