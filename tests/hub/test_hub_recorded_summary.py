"""A run a hub serves from its database (after a restart) is summarised as it was while
live: its usage, its budget, the questions it asked (an answered one needs nobody). The trial: after `goldfive serve`
restarted, a demo run listed at "2.7k tok $0.0081" said "no model calls" (COST "·")."""

from __future__ import annotations

from pathlib import Path

from goldfive import events
from goldfive.budget import Budget
from goldfive.remote import RunHost
from goldfive.remote.summaries import summary
from goldfive.sinks import SQLitePersistenceSink
from goldfive.types import Session
from goldfive.usage import ModelUsage, Purpose, RecordedUsage


async def test_a_recorded_runs_summary_keeps_its_usage_budget_and_open_question(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite"
    s = Session(run_id="rec-usage-1")
    sink = SQLitePersistenceSink(db)
    for ev in (
        events.run_started(s, goal_summary="spend a little"),
        events.budget_changed(s, Budget(tokens=5000)),
        events.usage_recorded(s, RecordedUsage(ModelUsage("gpt-4o", 2000, 700, 0, "openai_compat"), "t1", Purpose.TASK, 0.0081, "prices")),
        events.approval_requested(s, target_id="q1", kind="question", prompt="which channel?"),
        events.question_asked(s, target_id="q1", prompt="which channel?", options=("#eng", "#all")),
        events.question_answered(s, "q1", outcome="ANSWERED", option="#eng", author="ada"),
        events.approval_requested(s, target_id="q2", kind="question", prompt="and when?"),
        events.question_asked(s, target_id="q2", prompt="and when?", options=("now", "later")),
    ):
        await sink.emit(ev)
    await sink.close()

    host = RunHost(db)
    assert host.load_recorded() == 1
    (run,) = host.runs()
    out = summary(run)
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.calls) == (2000, 700, 1)
    assert abs(out.usage.cost_usd - 0.0081) < 1e-9
    assert out.budget == "tokens 2,700 of 5,000"
    # the answered question needs nobody (it did after a restart); the open one keeps its options
    assert [(a.target_id, a.options) for a in run.state.waiting_for_a_person()] == [("q2", ("now", "later"))]
    assert out.needs_you == "question: and when?"
