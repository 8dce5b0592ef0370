"""LLMPlanner: every answer parsed and validated, bad answers retried with feedback."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from goldfive.errors import LLMError, PlannerError
from goldfive.llm import ScriptedModel
from goldfive.planners import LLMPlanner
from goldfive.protocols import Planner
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Goal, Plan, Task, TaskEdge, TaskStatus
from tests.fake_llm import FakeLLM

GOALS = [Goal("g1", "ship the thing")]


def plan_json(tasks: list[tuple[str, str]], edges: list[tuple[str, str]] = (), **extra: Any) -> str:  # type: ignore[assignment]
    return json.dumps(
        {
            "summary": "s",
            "tasks": [{"id": i, "title": t, "description": f"do {t}"} for i, t in tasks],
            "edges": [{"from_task_id": a, "to_task_id": b} for a, b in edges],
            **extra,
        }
    )


VALID = plan_json([("a", "A"), ("b", "B")], [("a", "b")])


def old_plan() -> Plan:
    return Plan(
        tasks=[
            Task("t1", "research", "dig", status=TaskStatus.COMPLETED),
            Task("t2", "draft", status=TaskStatus.RUNNING),
            Task("t3", "review", status=TaskStatus.PENDING),
            Task("t4", "publish", status=TaskStatus.PENDING),
        ],
        edges=[TaskEdge("t1", "t2"), TaskEdge("t2", "t3"), TaskEdge("t3", "t4")],
        id="p1",
        run_id="r1",
        goal_ids=["g1"],
        revision_index=2,
    )


STEER = DriftEvent(
    DriftKind.USER_STEER,
    DriftSeverity.WARNING,
    "by you: focus on fewer, higher-quality slides",
    metadata={
        "note": "focus on fewer, higher-quality slides",
        "suggested_action": "cut slides",
        "completed_results": {"t1": "industry landscape notes"},
    },
)


async def test_generate_returns_the_validated_plan_tolerating_a_fence_and_unknown_keys() -> None:
    answer = "```json\n" + plan_json([("a", "A"), ("b", "B")], [("a", "b")], id="plan-7", confidence=0.9) + "\n```"
    llm = FakeLLM(answer)
    planner = LLMPlanner(call_llm=llm, model="m1")
    assert isinstance(planner, Planner)
    plan = await planner.generate(goals=GOALS, available_agents=["worker"], context={"k": "v"})
    assert [t.id for t in plan.tasks] == ["a", "b"]
    assert plan.edges == (TaskEdge("a", "b"),)
    assert (plan.id, plan.summary, plan.goal_ids) == ("plan-7", "s", ("g1",))
    assert plan.task("a").description == "do A"
    system, user, model = llm.prompts[0]
    assert system.startswith("goldfive-prompt: plan.generate")
    assert "- g1: ship the thing" in user and "worker" in user and '"k": "v"' in user
    assert model == "m1"


async def test_generate_finds_the_json_object_inside_prose() -> None:
    plan = await LLMPlanner(call_llm=FakeLLM("Here is the plan:\n" + VALID + "\nGood luck!")).generate(
        goals=GOALS, available_agents=[]
    )
    assert [t.id for t in plan.tasks] == ["a", "b"]


BAD_ANSWERS = [
    ("I think you should first research", "not JSON: Expecting value at line 1 column 1"),
    ("   ", "empty answer"),
    ('{"summary": "no tasks key"}', "answer is missing 'tasks'"),
    ('{"tasks": []}', "'tasks' is empty"),
    ('[{"id": "a"}]', "answer is a JSON list, expected an object"),
    ('{"tasks": [{"id": "a"}]}', "tasks[0] is missing 'title'"),
    ('{"tasks": [{"id": 3, "title": "x"}]}', "tasks[0].id must be a string"),
    (plan_json([("a", "A"), ("b", "B")], [("a", "b"), ("b", "a")]), "cycle: a -> b -> a"),
    (plan_json([("a", "A")], [("a", "zzz")]), "edge to unknown task: a->zzz"),
    (plan_json([("a", "A"), ("a", "A again")]), "duplicate task id: a"),
]


@pytest.mark.parametrize(("answer", "problem"), BAD_ANSWERS, ids=[p for _, p in BAD_ANSWERS])
async def test_a_bad_answer_is_retried_with_the_problem_in_the_next_prompt(answer: str, problem: str) -> None:
    llm = FakeLLM(answer, VALID)
    plan = await LLMPlanner(call_llm=llm).generate(goals=GOALS, available_agents=[])
    assert [t.id for t in plan.tasks] == ["a", "b"]
    assert len(llm.prompts) == 2
    first, retry = llm.prompts[0][1], llm.prompts[1][1]
    assert problem not in first
    assert problem in retry
    assert "attempt 1 of 3" in retry
    assert retry.startswith(first)  # the original question is repeated in full


async def test_unknown_assignee_is_rejected_when_agents_are_known() -> None:
    bad = json.dumps({"tasks": [{"id": "a", "title": "A", "assignee_agent_id": "ghost"}], "edges": []})
    llm = FakeLLM(bad, VALID)
    await LLMPlanner(call_llm=llm).generate(goals=GOALS, available_agents=["worker"])
    assert "unknown assignee_agent_id on task a" in llm.prompts[1][1]


async def test_generate_raises_planner_error_naming_the_last_problem_after_max_attempts() -> None:
    llm = FakeLLM("nope", "", "still nope")
    planner = LLMPlanner(call_llm=llm, max_attempts=3)
    with pytest.raises(PlannerError) as err:
        await planner.generate(goals=GOALS, available_agents=[])
    assert str(err.value) == "planner answer 3/3 invalid: not JSON: Expecting value at line 1 column 1"
    assert len(llm.prompts) == 3
    assert "empty answer" in llm.prompts[2][1]  # the feedback names the previous answer's problem


async def test_generate_wraps_a_model_failure_without_retrying() -> None:
    llm = FakeLLM(LLMError("model server http://x/v1/chat/completions unreachable: ConnectError"))
    with pytest.raises(PlannerError, match="planner model call failed: .*unreachable"):
        await LLMPlanner(call_llm=llm).generate(goals=GOALS, available_agents=[])
    assert len(llm.prompts) == 1


async def test_steer_refine_deletes_pending_work_and_keeps_completed_tasks() -> None:
    answer = plan_json([("t5", "draft_focused"), ("t6", "polish_and_ship")], [("t1", "t5"), ("t5", "t6")])
    llm = FakeLLM(answer)
    old = old_plan()
    revised = await LLMPlanner(call_llm=llm).refine(plan=old, drift=STEER, goals=GOALS)
    assert revised is not None
    assert [(t.id, t.status) for t in revised.tasks] == [
        ("t1", TaskStatus.COMPLETED),
        ("t5", TaskStatus.PENDING),
        ("t6", TaskStatus.PENDING),
    ]
    assert revised.task("t1") == old.task("t1")
    assert set(revised.edges) == {TaskEdge("t1", "t5"), TaskEdge("t5", "t6")}
    assert revised.revision_index == 3
    assert (revised.revision_kind, revised.revision_severity) == ("USER_STEER", "WARNING")
    assert revised.revision_reason == "by you: focus on fewer, higher-quality slides"
    assert (revised.id, revised.run_id, revised.goal_ids) == ("p1", "r1", ("g1",))
    system, user, _ = llm.prompts[0]
    assert system.startswith("goldfive-prompt: plan.refine.user_steer")
    assert user.startswith("## Steering note\nfocus on fewer, higher-quality slides")
    assert "cut slides" in user and "- g1: ship the thing" in user
    assert "- t1: research\n  result: industry landscape notes" in user
    assert "- t2 [RUNNING]: draft" in user and "- t4 [PENDING]: publish" in user


async def test_steer_refine_renames_new_ids_that_reuse_dropped_ids_and_rewrites_edges() -> None:
    answer = plan_json([("t2", "draft again"), ("t3", "review again")], [("t1", "t2"), ("t2", "t3")])
    revised = await LLMPlanner(call_llm=FakeLLM(answer)).refine(plan=old_plan(), drift=STEER, goals=GOALS)
    assert revised is not None
    assert [t.id for t in revised.tasks] == ["t1", "t2_r3", "t3_r3"]
    assert set(revised.edges) == {TaskEdge("t1", "t2_r3"), TaskEdge("t2_r3", "t3_r3")}


async def test_a_completed_task_echoed_with_a_changed_title_is_kept_verbatim() -> None:
    answer = plan_json([("t1", "research (renamed)"), ("t5", "draft_focused")], [("t1", "t5")])
    llm = FakeLLM(answer)
    revised = await LLMPlanner(call_llm=llm).refine(plan=old_plan(), drift=STEER, goals=GOALS)
    assert revised is not None and len(llm.prompts) == 1
    assert revised.task("t1").title == "research" and revised.task("t1").status == TaskStatus.COMPLETED


async def test_a_dropped_completed_task_is_reinserted() -> None:
    revised = await LLMPlanner(call_llm=FakeLLM(plan_json([("t5", "new")]))).refine(
        plan=old_plan(), drift=STEER, goals=GOALS
    )
    assert revised is not None
    assert [t.id for t in revised.tasks] == ["t1", "t5"]


async def test_relisting_a_completed_id_as_new_work_is_fed_back_and_retried() -> None:
    relisted = json.dumps({"tasks": [{"id": "t1", "title": "research", "status": "PENDING"}, {"id": "t5", "title": "x"}]})
    llm = FakeLLM(relisted, plan_json([("t5", "x")]))
    revised = await LLMPlanner(call_llm=llm).refine(plan=old_plan(), drift=STEER, goals=GOALS)
    assert revised is not None
    assert "completed task re-listed as new work: t1 (as PENDING)" in llm.prompts[1][1]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (plan_json([("t5", "x")], [("t5", "t1")]), "edge into a completed task: t5->t1"),
        (plan_json([("t5", "x")], [("t9", "t5")]), "edge to unknown task: t9->t5"),
        (plan_json([("t1", "research")]), "answer has no new tasks"),
        (plan_json([("t5", "x"), ("t6", "y")], [("t5", "t6"), ("t6", "t5")]), "cycle: t5 -> t6 -> t5"),
    ],
)
async def test_refine_rejects_bad_revisions_with_feedback(answer: str, problem: str) -> None:
    llm = FakeLLM(answer, plan_json([("t5", "x")]))
    revised = await LLMPlanner(call_llm=llm).refine(plan=old_plan(), drift=STEER, goals=GOALS)
    assert revised is not None
    assert problem in llm.prompts[1][1]


async def test_refine_returns_none_and_keeps_last_error_when_answers_run_out() -> None:
    llm = FakeLLM("x", "y")
    planner = LLMPlanner(call_llm=llm, max_attempts=2)
    assert await planner.refine(plan=old_plan(), drift=STEER, goals=GOALS) is None
    assert planner.last_error == "planner answer 2/2 invalid: not JSON: Expecting value at line 1 column 1"
    revised = await LLMPlanner(call_llm=FakeLLM(plan_json([("t5", "x")]))).refine(plan=old_plan(), drift=STEER, goals=GOALS)
    assert revised is not None


async def test_refine_returns_none_with_the_cause_when_the_model_is_unreachable() -> None:
    planner = LLMPlanner(call_llm=FakeLLM(LLMError("model server http://h/v1 unreachable")))
    assert await planner.refine(plan=old_plan(), drift=STEER, goals=GOALS) is None
    assert "unreachable" in planner.last_error


async def test_generic_refine_keeps_reused_remaining_ids_and_stamps_the_drift_kind() -> None:
    drift = DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.CRITICAL, "search failed", task_id="t2")
    answer = plan_json([("t2", "draft"), ("fix", "retry search"), ("t4", "publish")], [("t1", "fix"), ("fix", "t2"), ("t2", "t4")])
    llm = FakeLLM(answer)
    revised = await LLMPlanner(call_llm=llm).refine(plan=old_plan(), drift=drift, goals=GOALS)
    assert revised is not None
    assert [(t.id, t.status) for t in revised.tasks] == [
        ("t1", TaskStatus.COMPLETED),
        ("t2", TaskStatus.RUNNING),  # still in flight; must not be dispatched twice
        ("fix", TaskStatus.PENDING),
        ("t4", TaskStatus.PENDING),
    ]
    assert (revised.revision_kind, revised.revision_severity, revised.revision_index) == ("TOOL_ERROR", "CRITICAL", 3)
    system, user, _ = llm.prompts[0]
    assert system.startswith("goldfive-prompt: plan.refine.drift")
    assert "kind: TOOL_ERROR" in user and "detail: search failed" in user and "- t2 -> t3" in user


async def test_drift_below_warning_is_not_replanned() -> None:
    llm = FakeLLM()
    drift = DriftEvent(DriftKind.USER_PAUSE, DriftSeverity.INFO, "paused")
    assert await LLMPlanner(call_llm=llm).refine(plan=old_plan(), drift=drift, goals=GOALS) is None
    assert llm.prompts == []


async def test_completed_tasks_in_the_revision_are_copies_of_the_old_ones() -> None:
    from goldfive.types import set_task_status

    old = old_plan()
    revised = await LLMPlanner(call_llm=FakeLLM(plan_json([("t5", "x")]))).refine(plan=old, drift=STEER, goals=GOALS)
    assert revised is not None
    set_task_status(revised.task("t1"), TaskStatus.PENDING)
    assert old.task("t1").status == TaskStatus.COMPLETED


async def test_cancelling_refine_cancels_the_model_call() -> None:
    model = ScriptedModel(delay_s=3600)
    task = asyncio.create_task(LLMPlanner(call_llm=model.call_llm).refine(plan=old_plan(), drift=STEER, goals=GOALS))
    for _ in range(5):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_scripted_model_fault_then_valid_answer_goes_through_the_retry_path() -> None:
    model = ScriptedModel(faults=['{"tasks": [{"id": "a", "title": "A"}], "edges": [{"from_task_id": "a", "to_task_id": "a"}]}'])
    planner = LLMPlanner(call_llm=model.call_llm)
    plan = await planner.generate(goals=[Goal("g1", "a slide deck about Rust")], available_agents=[])
    assert [t.id for t in plan.tasks] == ["research", "outline", "draft", "review", "publish"]
    assert "cycle: a -> a" in model.calls[1].user


@pytest.mark.parametrize(
    "wrapped",
    [
        "```\n" + VALID + "\n```",
        "Plan below.\n```JSON\n" + VALID + "```\nDone.",
        "```json\n" + VALID,  # a fence the model never closed
        "```json " + VALID + " ```",
    ],
    ids=["bare-fence", "prose-and-fence", "unclosed-fence", "one-line-fence"],
)
async def test_fenced_answers_in_the_shapes_models_produce_are_accepted(wrapped: str) -> None:
    llm = FakeLLM(wrapped)
    plan = await LLMPlanner(call_llm=llm).generate(goals=GOALS, available_agents=[])
    assert [t.id for t in plan.tasks] == ["a", "b"] and len(llm.prompts) == 1


@pytest.mark.parametrize("kind", [DriftKind.USER_STEER, DriftKind.TOOL_ERROR])
async def test_the_runs_standing_guidance_is_in_the_replan_prompt_before_its_closing_instruction(kind: DriftKind) -> None:
    from dataclasses import replace

    drift = replace(STEER, kind=kind, metadata={**STEER.metadata, "standing_guidance": ["never touch prod", "cite\nsources"]})
    llm = FakeLLM(plan_json([("t5", "x")]))
    assert await LLMPlanner(call_llm=llm).refine(plan=old_plan(), drift=drift, goals=GOALS) is not None
    user = llm.prompts[0][1]
    assert "## Standing guidance" in user and "- never touch prod\n- cite sources" in user
    assert user.rstrip().endswith("as one JSON object.") and user.index("## Standing guidance") > user.index("## Goals")
    plain = FakeLLM(plan_json([("t5", "x")]))
    await LLMPlanner(call_llm=plain).refine(plan=old_plan(), drift=replace(drift, metadata=STEER.metadata), goals=GOALS)
    assert "Standing guidance" not in plain.prompts[0][1]
