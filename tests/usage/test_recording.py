"""Usage is recorded once per model call: from goldfive's own client (agent and planner), from
an adapter's one call, and added up per task and per run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from goldfive.run.current_run import current
from goldfive import events
from goldfive.adapters.callable import CallableAdapter
from goldfive.adapters.llm_agent import LLMAgentAdapter
from goldfive.goals import PassthroughGoalDeriver
from goldfive.llm.openai_compat import OpenAICompatClient
from goldfive.planners.llm import LLMPlanner
from goldfive.planners.static import StaticPlanner
from goldfive.run.config import RuntimeConfig
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.types import Plan, Session, Task
from goldfive.usage import (
    ModelUsage,
    RecordedUsage,
    load_prices,
    report_usage,
    totals_from_events,
    usage_from_anthropic,
    usage_from_openai,
)
from tests.fake_openai_server import FakeChatServer, Reply, chat_answer, tool_call


def _usage_events(sink: InMemorySink) -> list[Any]:
    return [e.usage_recorded for e in sink.events if events.kind_of(e) == "usage_recorded"]


def _with_usage(body: dict[str, Any], prompt: int, completion: int, cached: int = 0, model: str = "gpt-4o-mini-2024-07-18") -> dict[str, Any]:
    body = dict(body, model=model)
    body["usage"] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return body


PLAN_JSON = json.dumps({"summary": "s", "tasks": [{"id": "t1", "title": "Write", "description": "d"}], "edges": []})


async def test_goldfives_own_client_records_the_planner_and_the_agent_calls() -> None:
    replies = [
        Reply(body=_with_usage(chat_answer(PLAN_JSON), 500, 120)),
        Reply(body=_with_usage(chat_answer(None, tool_calls=[tool_call("c1", "report_task_progress", {"detail": "half"})], finish_reason="tool_calls"), 900, 40, cached=600)),
        Reply(body=_with_usage(chat_answer("done"), 1000, 30, cached=900)),
    ]
    sink = InMemorySink()
    with FakeChatServer(replies) as server:
        client = OpenAICompatClient(base_url=server.base_url, model="gpt-4o-mini", max_retries=0)
        runner = Runner(
            agent=LLMAgentAdapter(client, model_name="gpt-4o-mini"),
            planner=LLMPlanner(call_llm=client.call_llm, model="gpt-4o-mini"),
            goal_deriver=PassthroughGoalDeriver("write it"),
            sinks=[sink],
        )
        try:
            outcome = await runner.run("write it")
        finally:
            await runner.close()
            await client.aclose()
    assert outcome.success, outcome.reason
    calls = _usage_events(sink)
    assert [(u.purpose, u.task_id, u.input_tokens, u.output_tokens, u.cached_tokens) for u in calls] == [
        ("plan", "", 500, 120, 0),
        ("task", "t1", 900, 40, 600),
        ("task", "t1", 1000, 30, 900),
    ]
    assert {u.model for u in calls} == {"gpt-4o-mini-2024-07-18"}  # what the server said it ran
    assert {u.source for u in calls} == {"openai_compat"}
    assert all(u.cost_source == "prices" and u.HasField("cost_usd") for u in calls)
    assert calls[1].cost_usd == pytest.approx((300 * 0.15 + 600 * 0.075 + 40 * 0.6) / 1e6)
    assert calls[0].response_id == "chatcmpl-test"
    totals = totals_from_events(sink.events)
    assert (totals.calls, totals.input_tokens, totals.output_tokens, totals.unpriced_calls) == (3, 2400, 190, 0)


async def test_a_server_without_usage_records_nothing_rather_than_zeros() -> None:
    sink = InMemorySink()
    with FakeChatServer([Reply(body=chat_answer("done"))]) as server:
        client = OpenAICompatClient(base_url=server.base_url, model="local", max_retries=0)
        runner = Runner(agent=LLMAgentAdapter(client), planner=StaticPlanner(Plan(tasks=[Task("t1", "T")])), sinks=[sink])
        try:
            assert (await runner.run("x")).success
        finally:
            await runner.close()
            await client.aclose()
    assert _usage_events(sink) == []


async def test_an_adapter_reports_one_call_and_the_ledger_adds_it_to_its_task() -> None:
    seen: list[RecordedUsage] = []

    async def agent(task: Task, session: Session) -> str:
        ctx = current()
        ctx.usage.listen(_append(seen))
        await report_usage(ModelUsage("gpt-4o", 2000, 100, source="my_framework"), session=session, task_id=task.id)
        await report_usage(ModelUsage("llama3.1:8b", 50, 10, source="my_framework"))  # the scope knows the task
        assert ctx.usage.task_totals(task.id).calls == 2
        assert ctx.usage.totals.unpriced_calls == 1
        return "ok"

    sink = InMemorySink()
    runner = Runner(agent=CallableAdapter(agent), planner=StaticPlanner(Plan(tasks=[Task("a", "A")])), sinks=[sink])
    try:
        assert (await runner.run("x")).success
    finally:
        await runner.close()
    calls = _usage_events(sink)
    assert [(u.task_id, u.model, u.cost_source, u.HasField("cost_usd")) for u in calls] == [
        ("a", "gpt-4o", "prices", True),
        ("a", "llama3.1:8b", "", False),
    ]
    assert [r.usage.model for r in seen] == ["gpt-4o", "llama3.1:8b"]


def _append(seen: list[RecordedUsage]) -> Any:
    async def listener(recorded: RecordedUsage) -> None:
        seen.append(recorded)

    return listener


async def test_a_prices_file_prices_a_local_model(tmp_path: Any) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"llama3.1:8b": {"input": 0.1, "output": 0.2}}}))

    async def agent(task: Task, session: Session) -> str:
        await report_usage(ModelUsage("llama3.1:8b", 1_000_000, 1_000_000, source="x"))
        return "ok"

    sink = InMemorySink()
    runner = Runner(
        agent=agent, planner=StaticPlanner(Plan(tasks=[Task("a", "A")])), sinks=[sink],
        config=RuntimeConfig(prices=load_prices(path)),
    )  # fmt: skip
    try:
        assert (await runner.run("x")).success
    finally:
        await runner.close()
    [call] = _usage_events(sink)
    assert call.cost_usd == pytest.approx(0.3) and call.cost_source == "prices:prices.json"


async def test_reporting_outside_a_run_records_nothing() -> None:
    assert await report_usage(ModelUsage("gpt-4o", 1, 1)) is None
    assert await report_usage(ModelUsage("gpt-4o", 1, 1), session=Session(run_id="r")) is None


def test_openai_shapes_chat_completions_and_responses() -> None:
    chat = usage_from_openai({"prompt_tokens": 10, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 6}}, model="m", source="s")
    responses = usage_from_openai({"input_tokens": 10, "output_tokens": 4, "input_tokens_details": {"cached_tokens": 6}}, model="m", source="s")
    assert chat == responses == ModelUsage("m", 10, 4, 6, "s")
    assert usage_from_openai(None, model="m", source="s") is None
    assert usage_from_openai({"prompt_tokens": "x"}, model="m", source="s") is None


def test_anthropic_shape_adds_the_cache_to_the_input_and_keeps_a_reported_cost() -> None:
    u = usage_from_anthropic(
        {"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900, "output_tokens": 40},
        model="claude-sonnet-4-5", source="claude_agent_sdk", cost_usd=0.0123,
    )  # fmt: skip
    assert u == ModelUsage("claude-sonnet-4-5", 1005, 40, 900, "claude_agent_sdk", cost_usd=0.0123)
