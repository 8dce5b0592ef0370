"""ScriptedModel: deterministic offline answers that go through the real parsing paths."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from goldfive.errors import LLMError
from goldfive.adapters.task_prompt import DEFAULT_REPORTING
from goldfive.llm import ChatModel, ChatResult, ScriptedModel, load_prompt, prompt_kind, render_prompt
from goldfive.planners import LLMGoalDeriver, LLMPlanner
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Goal, TaskStatus, set_task_status

DECK = [Goal("g1", "build me a slide deck about Python")]


def _tool(name: str, props: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"type": "object", "properties": props or {}}
    if required:
        params["required"] = required
    return {"type": "function", "function": {"name": name, "description": name, "parameters": params}}


REPORTING = [
    _tool("report_task_progress", {"task_id": {"type": "string"}, "fraction": {"type": "number"}, "detail": {"type": "string"}}),
    _tool("report_task_completed", {"task_id": {"type": "string"}, "summary": {"type": "string"}}, ["summary"]),
]
PUBLISH = _tool("publish_deck", {"title": {"type": "string"}, "slides": {"type": "integer"}}, ["title", "slides"])


def _agent_messages(task_id: str, title: str) -> list[dict[str, Any]]:
    system = render_prompt(
        "agent_task.system",
        reporting=DEFAULT_REPORTING,
        goals="- g1: build me a slide deck about Python",
        plan="- research\n- publish",
        completed="(none)",
        task_id=task_id,
        task_title=title,
        task_description="do it",
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": f"Work on task {task_id}."}]


async def _run_agent(
    model: ScriptedModel, messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_results: dict[str, Any]
) -> list[ChatResult]:
    """A minimal tool loop: answer each tool call with ``tool_results[name]`` (default {"ok": true})."""
    turns: list[ChatResult] = []
    for _ in range(10):
        result = await model.chat(messages, tools=tools, model="scripted")
        turns.append(result)
        if not result.tool_calls:
            return turns
        messages.append(
            {
                "role": "assistant",
                "content": result.content or None,
                "tool_calls": [
                    {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments_json}}
                    for tc in result.tool_calls
                ],
            }
        )
        for tc in result.tool_calls:
            content = json.dumps(tool_results.get(tc.name, {"ok": True}))
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": content})
    raise AssertionError("agent script did not finish")


def test_every_prompt_file_names_its_kind_on_the_first_line() -> None:
    expected = {
        "plan_generate.system": "plan.generate",
        "plan_refine_steer.system": "plan.refine.user_steer",
        "plan_refine_drift.system": "plan.refine.drift",
        "goals_derive.system": "goals.derive",
        "agent_task.system": "agent.task",
        "approval_review.system": "approval.review",
    }
    for name, kind in expected.items():
        text = load_prompt(name)
        assert text.splitlines()[0] == f"goldfive-prompt: {kind}"
        assert prompt_kind(text) == kind


async def test_slide_deck_goal_gets_the_five_task_linear_plan_in_a_json_fence() -> None:
    model = ScriptedModel()
    assert isinstance(model, ChatModel)
    plan = await LLMPlanner(call_llm=model.call_llm).generate(goals=DECK, available_agents=["deck"])
    assert [t.id for t in plan.tasks] == ["research", "outline", "draft", "review", "publish"]
    assert [(e.from_task_id, e.to_task_id) for e in plan.edges] == [
        ("research", "outline"),
        ("outline", "draft"),
        ("draft", "review"),
        ("review", "publish"),
    ]
    assert plan.task("research").title == "Research Python"
    assert all(t.description for t in plan.tasks)
    raw = await model.call_llm(model.calls[0].system, model.calls[0].user, "")
    assert raw.startswith("```json\n")


async def test_other_goals_get_a_three_task_plan_from_the_goal_text() -> None:
    model = ScriptedModel()
    plan = await LLMPlanner(call_llm=model.call_llm).generate(
        goals=[Goal("g1", "summarise the quarterly sales report")], available_agents=[]
    )
    assert len(plan.tasks) == 3
    assert all("summarise the quarterly sales report" in t.title for t in plan.tasks)
    assert len(plan.edges) == 2


async def test_steer_replan_puts_the_note_in_new_titles_and_keeps_completed_work() -> None:
    model = ScriptedModel()
    planner = LLMPlanner(call_llm=model.call_llm)
    plan = await planner.generate(goals=DECK, available_agents=[])
    for tid in ("research", "outline"):
        set_task_status(plan.task(tid), TaskStatus.COMPLETED)
    set_task_status(plan.task("draft"), TaskStatus.RUNNING)
    note = "focus on fewer, higher-quality slides"
    revised = await planner.refine(plan=plan, drift=DriftEvent(DriftKind.USER_STEER, DriftSeverity.WARNING, note), goals=DECK)
    assert revised is not None
    new = [t for t in revised.tasks if t.status == TaskStatus.PENDING]
    assert new[0].title == f"draft: {note}"
    assert [t.id.split("_")[0] for t in new] == ["draft", "review", "publish"]
    assert all("fewer, higher-quality" in t.title for t in new)
    assert [t.id for t in revised.tasks if t.status == TaskStatus.COMPLETED] == ["research", "outline"]
    assert not {t.id for t in new} & {t.id for t in plan.tasks}
    assert revised.predecessors(new[0].id) == ["outline"]


async def test_goal_derivation_answers_one_goal_per_request_line() -> None:
    goals = await LLMGoalDeriver(call_llm=ScriptedModel().call_llm).derive("build a deck about Go\nthen mail it")
    assert [(g.id, g.summary) for g in goals] == [("g1", "build a deck about Go"), ("g2", "then mail it")]


async def test_agent_script_reports_progress_then_completes_then_answers_text() -> None:
    model = ScriptedModel()
    turns = await _run_agent(model, _agent_messages("research", "Research Python"), REPORTING, {})
    names = [tc.name for t in turns for tc in t.tool_calls]
    assert names == ["report_task_progress", "report_task_completed"]
    progress = json.loads(turns[0].tool_calls[0].arguments_json)
    assert progress["task_id"] == "research" and "Research Python" in progress["detail"]
    completed = json.loads(turns[1].tool_calls[0].arguments_json)
    assert set(completed) == {"task_id", "summary"}  # only what the schema declares
    assert "Python" in completed["summary"]
    assert turns[-1].finish_reason == "stop" and turns[-1].content.startswith("Done with Research Python")
    assert [t.tool_calls[0].id for t in turns[:2]] == ["call_1", "call_2"]


async def test_publish_task_calls_publish_deck_and_reports_the_published_result() -> None:
    turns = await _run_agent(
        ScriptedModel(),
        _agent_messages("publish", "Publish the deck"),
        [*REPORTING, PUBLISH],
        {"publish_deck": {"url": "https://decks.example/python"}},
    )
    assert [tc.name for t in turns for tc in t.tool_calls] == ["report_task_progress", "publish_deck", "report_task_completed"]
    publish_args = json.loads(turns[1].tool_calls[0].arguments_json)
    assert publish_args["slides"] == 8 and "Python" in publish_args["title"]
    summary = json.loads(turns[2].tool_calls[0].arguments_json)["summary"]
    assert summary.startswith("published the 8-slide deck: https://decks.example/python")


async def test_rejected_publish_completes_saying_publishing_was_rejected() -> None:
    turns = await _run_agent(
        ScriptedModel(),
        _agent_messages("publish", "Publish the deck"),
        [*REPORTING, PUBLISH],
        {"publish_deck": {"skipped": True, "reason": "rejected by user"}},
    )
    summary = json.loads(turns[2].tool_calls[0].arguments_json)["summary"]
    assert summary == "publishing was rejected (rejected by user); the deck was not published"
    assert "publishing was rejected" in turns[-1].content


async def test_non_publish_task_never_calls_publish_deck_even_when_offered() -> None:
    turns = await _run_agent(ScriptedModel(), _agent_messages("draft", "Draft the slides"), [*REPORTING, PUBLISH], {})
    assert "publish_deck" not in [tc.name for t in turns for tc in t.tool_calls]


async def test_user_steering_in_the_history_is_mentioned_in_the_next_detail() -> None:
    messages = _agent_messages("draft", "Draft the slides")
    messages.append({"role": "user", "content": "[user_steering]use dark theme[/user_steering]"})
    result = await ScriptedModel().chat(messages, tools=REPORTING)
    assert "following steering: use dark theme" in json.loads(result.tool_calls[0].arguments_json)["detail"]


async def test_faults_are_answered_first_then_the_script_resumes() -> None:
    model = ScriptedModel(faults=["not json", ChatResult(content="", finish_reason="length"), LLMError("down")])
    system = load_prompt("plan_generate.system")
    assert await model.call_llm(system, "## Goals\n- g1: x", "") == "not json"
    assert (await model.chat([{"role": "system", "content": system}])).finish_reason == "length"
    with pytest.raises(LLMError, match="down"):
        await model.call_llm(system, "", "")
    assert '"tasks"' in await model.call_llm(system, "## Goals\n- g1: x", "")
    assert [c.kind for c in model.calls] == ["plan.generate"] * 4


async def test_a_prompt_without_a_marker_is_an_error_not_a_made_up_answer() -> None:
    with pytest.raises(LLMError, match="no goldfive-prompt marker"):
        await ScriptedModel().call_llm("you are helpful", "hi", "")


async def test_each_answer_waits_delay_times_speed_and_the_wait_is_cancellable() -> None:
    instant = ScriptedModel(delay_s=3600, speed=0.0)
    assert await asyncio.wait_for(instant.call_llm(load_prompt("goals_derive.system"), "hi", ""), 1)
    slow = ScriptedModel(delay_s=3600, speed=1.0)
    task = asyncio.create_task(slow.chat(_agent_messages("draft", "Draft"), tools=REPORTING))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
