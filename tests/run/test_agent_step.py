"""The agent_step event: one model turn or tool call inside a framework adapter's run."""

from __future__ import annotations

import json

import pytest

from goldfive import events
from goldfive.event_format import format_event
from goldfive.types import Session


def test_tool_call_step_carries_arguments_and_outcome() -> None:
    session = Session(run_id="r1")
    ev = events.agent_step(
        session, task_id="t1", step="tool_call", framework="pydantic_ai", tool_name="publish",
        call_id="c1", args={"slides": 3, "bad": "\ud800"}, text="done", outcome="ok",
    )
    p = ev.agent_step
    assert json.loads(p.args_json) == {"slides": 3, "bad": "\ufffd"}
    assert (p.tool_name, p.call_id, p.outcome, ev.sequence) == ("publish", "c1", "ok", 0)
    assert "publish(" in format_event(ev) and "ok" in format_event(ev)


def test_unknown_step_is_refused_without_taking_a_sequence() -> None:
    session = Session(run_id="r1")
    with pytest.raises(ValueError, match="model_turn"):
        events.agent_step(session, task_id="t1", step="thinking", framework="x")
    assert events.agent_step(session, task_id="t1", step="model_turn", framework="x", text="hi").sequence == 0
