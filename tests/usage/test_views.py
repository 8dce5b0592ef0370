"""Usage as every screen shows it: RunState folds it (live and in replay), the Runs service
summarises it, ``ctl`` prints it."""

from __future__ import annotations

import pytest

from goldfive import events
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.types import Plan, Session, Task
from goldfive.usage import ModelUsage, Purpose, RecordedUsage, UsageTotals
from goldfive.usage.format import format_cost, format_totals
from goldfive.view import RunState


class Clock:
    def __init__(self) -> None:
        self.ms = 1_700_000_000_000

    def __call__(self) -> int:
        return self.ms


def _story() -> tuple[list[object], Clock]:
    clock = Clock()
    s = Session(run_id="r1", clock=clock)
    evs = [events.run_started(s, goal_summary="g"), events.plan_submitted(s, Plan([Task("a", "A"), Task("b", "B")]))]
    evs.append(events.usage_recorded(s, RecordedUsage(ModelUsage("gpt-4o", 1000, 100, 200), "", Purpose.PLAN, 0.01, "prices")))
    evs.append(events.task_started(s, "a"))
    for _ in range(3):
        clock.ms += 20_000
        evs.append(events.usage_recorded(s, RecordedUsage(ModelUsage("gpt-4o", 2000, 100), "a", Purpose.TASK, 0.02, "prices")))
    clock.ms += 20_000
    evs.append(events.usage_recorded(s, RecordedUsage(ModelUsage("local-llama", 500, 50), "a", Purpose.TASK, None, "")))
    return evs, clock


def test_run_state_folds_usage_per_run_and_per_task() -> None:
    evs, _ = _story()
    state = RunState.from_events(evs)  # type: ignore[arg-type]
    assert (state.usage.calls, state.usage.input_tokens, state.usage.output_tokens, state.usage.cached_tokens) == (5, 7500, 450, 200)
    assert state.usage.cost_usd == pytest.approx(0.07) and state.usage.unpriced_calls == 1
    a = state.tasks["a"].usage
    assert (a.calls, a.input_tokens, a.unpriced_calls) == (4, 6500, 1) and state.tasks["b"].usage.calls == 0
    assert format_cost(state.usage) == "$0.07+?"
    assert format_totals(a) == "6.8k tok $0.06+? in 4 calls, 1 without a price"


def test_the_burn_rate_is_the_recent_spend_per_hour() -> None:
    evs, clock = _story()
    state = RunState.from_events(evs)  # type: ignore[arg-type]
    # $0.07 over the 80 s since the start
    assert state.burn_rate(clock.ms) == pytest.approx(0.07 * 3600 / 80)
    assert RunState().burn_rate() is None


def test_a_summary_carries_the_totals_and_a_snapshot_each_tasks() -> None:
    from goldfive import conv

    evs, _ = _story()
    state = RunState.from_events(evs)  # type: ignore[arg-type]
    wire = conv.to_pb_usage_totals(state.usage)
    summary = service_pb2.RunSummary(run_id="r1", usage=wire)
    back = conv.from_pb_usage_totals(summary.usage)
    assert back == UsageTotals(5, 7500, 450, 200, pytest.approx(0.07), 1)  # type: ignore[arg-type]

    from goldfive.cli.ctl_hub import run_line, usage_words

    assert usage_words(summary) == "8.0k tok $0.07+?"
    assert "8.0k tok $0.07+?" in run_line(summary, now=0)
    assert usage_words(service_pb2.RunSummary(run_id="r2")) == "no model calls"
