"""UsageLedger: a run's model calls, priced, recorded and added up.

Every call goes through ``record``: it is priced (``PriceTable.cost``), put on the event stream
as ``usage_recorded`` and added to the run's totals and its task's. ``totals`` and
``task_totals`` are what a budget reads; both are frozen values. A resumed run's ledger is
seeded from its recording (``seed``), so its totals go on from where they were.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.usage.model import ModelUsage, Purpose, RecordedUsage, UsageTotals
from goldfive.usage.prices import PriceTable, default_prices

__all__ = ["UsageLedger", "totals_from_events"]

#: ``async def listener(recorded)``: told of every call once it is recorded (a budget).
Listener = Callable[[RecordedUsage], Awaitable[None]]


class UsageLedger:
    def __init__(self, emit: Callable[..., Awaitable[Any]], prices: PriceTable | None = None) -> None:
        self._emit = emit
        self.prices = prices if prices is not None else default_prices()
        self._totals = UsageTotals()
        self._by_task: dict[str, UsageTotals] = {}
        self._listeners: list[Listener] = []

    @property
    def totals(self) -> UsageTotals:
        """The run's calls so far (all tasks, the planner and the goal deriver)."""
        return self._totals

    def task_totals(self, task_id: str) -> UsageTotals:
        """The calls made for ``task_id`` so far (every attempt of it)."""
        return self._by_task.get(task_id, UsageTotals())

    def rebind(self, emit: Callable[..., Awaitable[Any]]) -> None:
        """Record through ``emit`` from now on (the run, once over, is held weakly: RunContext.let_go)."""
        self._emit = emit

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` after each recorded call (in the run's task, in order)."""
        self._listeners.append(listener)

    async def record(self, usage: ModelUsage, *, task_id: str = "", purpose: Purpose = Purpose.TASK) -> RecordedUsage:
        from goldfive import events

        cost, cost_source = self.prices.cost(usage)
        recorded = RecordedUsage(usage, task_id, purpose, cost, cost_source)
        self._add(recorded)
        await self._emit(events.usage_recorded, recorded)
        for listener in self._listeners:
            await listener(recorded)
        return recorded

    def _add(self, recorded: RecordedUsage) -> None:
        self._totals = self._totals.plus(recorded.usage, recorded.cost_usd)
        if recorded.task_id:
            self._by_task[recorded.task_id] = self.task_totals(recorded.task_id).plus(recorded.usage, recorded.cost_usd)

    def seed(self, history: Iterable[pb.Event]) -> None:
        """Add the calls a recording already holds (``goldfive resume``): the totals go on."""
        for ev in history:
            if ev.WhichOneof("payload") == "usage_recorded":
                self._add(recorded_from_pb(ev.usage_recorded))


def recorded_from_pb(p: pb.UsageRecorded) -> RecordedUsage:
    usage = ModelUsage(
        model=p.model,
        input_tokens=p.input_tokens,
        output_tokens=p.output_tokens,
        cached_tokens=min(p.cached_tokens, p.input_tokens),
        source=p.source,
        response_id=p.response_id,
        duration_ms=p.duration_ms,
        otel_trace_id=p.otel_trace_id,
        otel_span_id=p.otel_span_id,
    )
    try:
        purpose = Purpose(p.purpose)
    except ValueError:
        purpose = Purpose.TASK
    cost = p.cost_usd if p.HasField("cost_usd") and p.cost_usd >= 0 else None
    return RecordedUsage(usage, p.task_id, purpose, cost, p.cost_source)


def totals_from_events(history: Iterable[pb.Event]) -> UsageTotals:
    """The totals of the ``usage_recorded`` events in ``history``."""
    totals = UsageTotals()
    for ev in history:
        if ev.WhichOneof("payload") == "usage_recorded":
            r = recorded_from_pb(ev.usage_recorded)
            totals = totals.plus(r.usage, r.cost_usd)
    return totals
