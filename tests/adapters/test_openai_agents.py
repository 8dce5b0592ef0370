"""The OpenAI Agents SDK adapter through the SDK's real Runner, with the SDK's own ScriptedModel."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
import warnings
from typing import Any

import pytest
from agents import Agent, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from goldfive.adapters import common
from goldfive.adapters.frameworks import adapter_for
from goldfive.adapters.openai_agents import OpenAIAgentsAdapter
from goldfive.adapters.openai_agents.bridge import EDITED_NOTE
from goldfive.control import ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.pb.goldfive.v1 import types_pb2
from goldfive.run.report_tool import REPORTING_TEXT
from goldfive.run import RuntimeConfig
from goldfive.types import TaskStatus
from tests.runtime_kit import Harness, ReplanningPlanner, ack_ok, linear_plan, static


def model_of(*steps: Any) -> ScriptedModel:
    return ScriptedModel(list(steps))


class Held:
    """Model steps that wait inside the model call until released (or cancelled)."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False
        #: monotonic() when the model call saw its cancellation.
        self.cancelled_at = 0.0

    def step(self, *output: Any) -> ModelStep:
        async def respond(call: Any) -> list[Any]:
            self.entered.set()
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled, self.cancelled_at = True, time.monotonic()
                raise
            return list(output)

        return ModelStep.respond(respond)


def user_texts(call: Any) -> list[str]:
    return [str(i.get("content")) for i in call.input if isinstance(i, dict) and i.get("role") == "user"]


def outputs(call: Any) -> dict[str, str]:
    return {i["call_id"]: str(i["output"]) for i in call.input if isinstance(i, dict) and i.get("type") == "function_call_output"}


def steps_of(h: Harness, step: str) -> list[Any]:
    return [s for s in h.of("agent_step") if s.step == step]


# -- the user's tools ----------------------------------------------------------------------
ran: list[str] = []


@function_tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy to a target."""
    ran.append(target)
    return f"deployed to {target}"


@function_tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@function_tool
def explode(x: int) -> str:
    """Always raises."""
    raise ValueError(f"no {x}")


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


def rig(model: ScriptedModel, *ids: str, tools: list[Any] | None = None, planner: Any = None, config: RuntimeConfig | None = None) -> tuple[Harness, Agent[Any]]:
    agent = Agent(name="worker", instructions="work", model=model, tools=list(tools or []))
    h = Harness(agent=agent, executor=SequentialExecutor(), planner=planner or static(*(ids or ("t1",))), config=config)
    return h, agent


# -- a task is one run --------------------------------------------------------------------
async def test_three_tasks_complete_each_seeing_the_earlier_results_and_the_agent_is_left_unchanged() -> None:
    model = model_of([assistant_message("facts: A")], [assistant_message("draft: B")], [assistant_message("final: C")])
    h, agent = rig(model, "a", "b", "c", tools=[lookup])
    tools_before, behavior_before = agent.tools, agent.tool_use_behavior
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert h.runner.session.completed_results == {"a": "facts: A", "b": "draft: B", "c": "final: C"}
    second = model.calls[1]
    assert "- a: facts: A" in user_texts(second)[-1] and "Do the current task (b)" in user_texts(second)[-1]
    # one SDK session per goldfive run: task c's run sees the conversation of a and b; a's input
    # has the goals and the plan, b's and c's only what changed since
    third = model.calls[2].input
    a_in, b_in, c_in = user_texts(model.calls[2])
    assert len(third) == 5  # a's input and answer, b's input and answer, c's input
    assert "## Plan\n- a [RUNNING]: A\n- b [PENDING]: B (after a)" in a_in and "## Goals" not in b_in
    assert b_in == "Plan changes since your previous task: a COMPLETED.\n\nCompleted since:\n- a: facts: A\n\nCurrent task description: do b\n\nDo the current task (b): B"
    assert c_in == "Plan changes since your previous task: b COMPLETED.\n\nCompleted since:\n- b: draft: B\n\nCurrent task description: do c\n\nDo the current task (c): C"
    [memory] = h.runner.session.state["goldfive.openai_agents.sessions"]
    kept = [i["content"] for i in await memory.get_items() if i.get("role") == "user"]
    assert kept == [a_in, b_in, c_in]
    # one reporting tool: the final output is the result, the other reports are its kinds
    assert [t.name for t in model.calls[0].tools] == ["lookup", "goldfive_report"]
    assert REPORTING_TEXT in a_in and "report_task_completed" not in a_in
    assert agent.tools is tools_before and [t.name for t in agent.tools] == ["lookup"]
    assert agent.tool_use_behavior == behavior_before
    assert [s.text for s in steps_of(h, "model_turn")] == ["facts: A", "draft: B", "final: C"]


async def test_the_frameworks_picker_builds_this_adapter_for_an_agent() -> None:
    agent = Agent(name="picked", model=model_of())
    adapter = adapter_for(agent)
    assert isinstance(adapter, OpenAIAgentsAdapter) and adapter.available_agents == ["picked"]


async def test_report_task_completed_ends_the_run_with_the_reported_result_and_no_further_model_call() -> None:
    model = model_of([function_call("report_task_progress", {"detail": "half"}, call_id="p1"),
                      function_call("report_task_completed", {"result": "all done"}, call_id="r1")])
    h, _ = rig(model)
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert h.runner.session.completed_results["t1"] == "all done"
    assert len(model.calls) == 1 and model.remaining_steps == 0
    calls = {s.tool_name: s for s in steps_of(h, "tool_call")}
    assert calls["report_task_progress"].outcome == "ok" and calls["report_task_completed"].call_id == "r1"
    assert "half" in h.runner.session.task_progress["t1"]


async def test_report_task_started_is_not_on_the_agent_but_a_call_to_it_runs_and_the_run_goes_on() -> None:
    model = model_of([function_call("report_task_started", {}, call_id="s1")], [assistant_message("done")])
    h, _ = rig(model)
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert "report_task_started" not in {t.name for t in model.calls[0].tools}
    answer = json.loads(outputs(model.calls[1])["s1"])
    assert answer["ok"] is True and answer["status"] == "RUNNING"  # an old prompt's call: no error
    assert h.runner.session.completed_results["t1"] == "done"


async def test_an_unknown_tool_named_alongside_a_final_answer_still_fails_the_task() -> None:
    # No model call follows (the user's stop_on_first_tool ends the run): the adapter raises it.
    model = model_of([function_call("lookup", {"key": "k"}, call_id="l1"), function_call("no_such_tool", {}, call_id="n1")])
    agent = Agent(name="worker", instructions="work", model=model, tools=[lookup], tool_use_behavior="stop_on_first_tool")
    h = Harness(agent=agent, executor=SequentialExecutor(), planner=static("t1"))
    h.start()
    out = await h.finish()
    assert not out.success and "ModelBehaviorError" in out.reason and "no_such_tool" in out.reason


async def test_report_task_failed_fails_the_task_with_the_reason() -> None:
    model = model_of([function_call("report_task_failed", {"reason": "no data"}, call_id="f1")])
    h, _ = rig(model)
    h.start()
    out = await h.finish()
    assert not out.success and h.statuses()["t1"] == TaskStatus.FAILED
    assert "no data" in out.reason


# -- one reporting tool: goldfive_report --------------------------------------------------------
def drift_kinds(h: Harness) -> list[str]:
    return [types_pb2.DriftKind.Name(d.kind) for d in h.of("drift_detected")]


async def test_goldfive_report_failed_fails_the_task_with_the_reason_and_ends_the_run() -> None:
    model = model_of([function_call("goldfive_report", {"kind": "failed", "detail": "the API is gone", "recoverable": True}, call_id="f1")])
    h, _ = rig(model, "a", "b")
    h.start()
    out = await h.finish()
    assert not out.success and h.statuses()["a"] == TaskStatus.FAILED and "the API is gone" in out.reason
    assert len(model.calls) == 1 and model.remaining_steps == 0  # no model call after the failure
    assert "DRIFT_KIND_TASK_FAILED_RECOVERABLE" in drift_kinds(h)
    [step] = [s for s in steps_of(h, "tool_call") if s.tool_name == "goldfive_report"]
    assert step.call_id == "f1" and json.loads(step.args_json)["kind"] == "failed"


async def test_goldfive_report_progress_new_work_and_divergence_are_reported_and_the_final_output_completes() -> None:
    model = model_of(
        [function_call("goldfive_report", {"kind": "progress", "detail": "half", "fraction": 0.5}, call_id="p1"),
         function_call("goldfive_report", {"kind": "new_work", "detail": "migrate the db", "description": "v2 schema"}, call_id="n1"),
         function_call("goldfive_report", {"kind": "divergence", "detail": "the spec changed"}, call_id="d1")],
        [assistant_message("the result")],
    )  # fmt: skip
    h, _ = rig(model)
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert h.runner.session.completed_results["t1"] == "the result" and h.statuses()["t1"] == TaskStatus.COMPLETED
    assert h.runner.session.task_progress["t1"] == ["half"]
    assert {"DRIFT_KIND_NEW_WORK_DISCOVERED", "DRIFT_KIND_PLAN_DIVERGENCE"} <= set(drift_kinds(h))
    answers = {k: json.loads(v) for k, v in outputs(model.calls[1]).items()}
    assert answers["p1"]["ok"] is True and answers["n1"]["queued_for_replan"] is True


async def test_goldfive_report_question_asks_a_person_and_the_model_reads_the_answer() -> None:
    ask = {"kind": "question", "detail": "Which region?", "options": ["eu", "us"]}
    model = model_of([function_call("goldfive_report", ask, call_id="q1")], [assistant_message("deployed to eu")])
    h, _ = rig(model)
    h.start()
    asked = (await h.wait_event("question_asked")).question_asked
    assert (asked.prompt, list(asked.options), asked.task_id) == ("Which region?", ["eu", "us"], "t1")
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id=asked.target_id, option="eu"))
    out = await h.finish()
    assert out.success, out.reason
    assert json.loads(outputs(model.calls[1])["q1"]) == {"ok": True, "answer": "eu", "option": "eu"}


async def test_goldfive_report_with_a_bad_kind_or_no_detail_answers_an_error_runs_nothing_and_the_run_goes_on() -> None:
    model = model_of(
        [function_call("goldfive_report", {"kind": "completed", "detail": "x"}, call_id="k1"),
         function_call("goldfive_report", {"kind": "failed", "detail": " "}, call_id="k2"),
         function_call("goldfive_report", {"kind": "progress", "detail": "x", "colour": "red"}, call_id="k3")],
        [assistant_message("done anyway")],
    )  # fmt: skip
    h, _ = rig(model)
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    answers = {k: json.loads(v) for k, v in outputs(model.calls[1]).items()}
    assert all(a["ok"] is False for a in answers.values())
    assert "kind must be one of progress, failed" in answers["k1"]["error"] and "needs a non-empty detail" in answers["k2"]["error"]
    assert "unknown argument(s): colour" in answers["k3"]["error"]
    assert h.statuses()["t1"] == TaskStatus.COMPLETED and "t1" not in h.runner.session.task_progress


async def test_old_reporting_tool_names_are_not_offered_but_still_run_with_their_arguments() -> None:
    model = model_of(
        [function_call("report_new_work_discovered", {"title": "add a cache"}, call_id="o1"),
         function_call("report_task_progress", {"detail": "bad", "fraction": "lots"}, call_id="o2")],
        [assistant_message("done")],
    )  # fmt: skip
    h, _ = rig(model)
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert not {t.name for t in model.calls[0].tools} & {"report_task_completed", "report_new_work_discovered", "report_task_progress"}
    answers = {k: json.loads(v) for k, v in outputs(model.calls[1]).items()}
    assert answers["o1"] == {"ok": True, "queued_for_replan": True}
    assert answers["o2"]["ok"] is False and "fraction" in answers["o2"]["error"]  # checked as the tool checks it
    assert "DRIFT_KIND_NEW_WORK_DISCOVERED" in drift_kinds(h)
    calls = {s.tool_name: s for s in steps_of(h, "tool_call")}
    assert calls["report_new_work_discovered"].outcome == "ok" and calls["report_task_progress"].outcome == "error"


async def test_report_task_failed_by_its_old_name_ends_the_run_before_another_model_call() -> None:
    model = model_of([function_call("report_task_failed", {"reason": "no data"}, call_id="f1")])
    h, _ = rig(model, "a", "b")
    h.start()
    out = await h.finish()
    assert not out.success and h.statuses()["a"] == TaskStatus.FAILED and "no data" in out.reason
    assert len(model.calls) == 1 and model.remaining_steps == 0


# -- without an SDK session: a brief per task ----------------------------------------------------
async def test_without_a_session_each_task_gets_a_brief_bounded_whatever_the_plan_size() -> None:
    sizes: dict[int, list[int]] = {}
    for n in (13, 40):
        ids = [f"t{i}" for i in range(n)]
        model = model_of(*[[assistant_message(f"result {i} " + "x" * 1000)] for i in range(n)])
        agent = Agent(name="worker", instructions="work", model=model)
        h = Harness(agent=OpenAIAgentsAdapter(agent, session_factory=None), executor=SequentialExecutor(), planner=static(*ids))
        h.start()
        out = await h.finish()
        assert out.success, out.reason
        inputs = [user_texts(c)[-1] for c in model.calls]
        assert all(len(user_texts(c)) == 1 for c in model.calls)  # a fresh conversation per task
        later = inputs[n // 2]
        assert f"- t{n // 2 - 1}: result {n // 2 - 1} " in later  # the result it depends on (cut)
        assert f"{n} tasks: {n // 2} COMPLETED, 1 RUNNING, {n - n // 2 - 1} PENDING" in later
        assert f"This task comes after: t{n // 2 - 1}\nThen: t{n // 2 + 1}" in later
        assert "[COMPLETED]" not in later and f"- t{n // 2 - 2}:" not in later  # no plan lines, no other results
        assert REPORTING_TEXT in later and later.endswith(f"description: do t{n // 2}\n\nDo the current task (t{n // 2}): T{n // 2}")
        sizes[n] = [len(i) for i in inputs]
    assert max(sizes[40]) < 2000 and max(sizes[40]) - max(sizes[13]) < 20  # bounded: not the plan's size


async def test_a_raising_tool_is_recorded_as_an_error_with_a_tool_error_drift_and_the_run_goes_on() -> None:
    model = model_of([function_call("explode", {"x": 3}, call_id="e1")], [assistant_message("recovered")])
    h, _ = rig(model, tools=[explode])
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    [step] = [s for s in steps_of(h, "tool_call") if s.tool_name == "explode"]
    assert step.outcome == "error" and "ValueError: no 3" in step.text
    drifts = [d for d in h.of("drift_detected") if d.kind == types_pb2.DriftKind.Value("DRIFT_KIND_TOOL_ERROR")]
    assert drifts and "no 3" in drifts[0].detail
    assert "e1" in outputs(model.calls[1])


async def test_the_step_limit_fails_the_task_with_too_many_steps() -> None:
    model = model_of(*[[function_call("lookup", {"key": str(i)}, call_id=f"l{i}")] for i in range(2)])
    agent = Agent(name="worker", model=model, tools=[lookup])
    h = Harness(agent=OpenAIAgentsAdapter(agent, max_turns=2), executor=SequentialExecutor(), planner=static("t1"))
    h.start()
    out = await h.finish()
    assert not out.success and "step limit exceeded" in out.reason
    assert any(d.kind == types_pb2.DriftKind.Value("DRIFT_KIND_TOO_MANY_STEPS") for d in h.of("drift_detected"))


# -- approvals through needs_approval and run interruptions ----------------------------------
async def test_a_call_needing_approval_waits_and_runs_once_approved() -> None:
    model = model_of([function_call("deploy", {"target": "prod"}, call_id="call-d1")], [assistant_message("shipped")])
    h, _ = rig(model, tools=[deploy])
    h.start()
    ev = await h.wait_event("approval_requested")
    req = ev.approval_requested
    assert (req.target_id, req.tool_name, json.loads(req.args_json)) == ("call-d1", "deploy", {"target": "prod"})
    assert ran == [] and len(model.calls) == 1
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="call-d1"))
    out = await h.finish()
    assert out.success, out.reason
    assert ran == ["prod"]
    assert outputs(model.calls[1])["call-d1"] == "deployed to prod"
    [step] = [s for s in steps_of(h, "tool_call") if s.tool_name == "deploy"]
    assert (step.outcome, step.call_id) == ("ok", "call-d1")


async def test_a_rejected_call_does_not_run_and_the_model_reads_the_reason() -> None:
    model = model_of([function_call("deploy", {"target": "prod"}, call_id="call-d1")], [assistant_message("ok, staging first")])
    h, _ = rig(model, tools=[deploy])
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="call-d1", detail="deploy to staging first"))
    out = await h.finish()
    assert out.success, out.reason
    assert ran == []
    told = outputs(model.calls[1])["call-d1"]
    assert "rejected" in told and "deploy to staging first" in told
    [step] = [s for s in steps_of(h, "tool_call") if s.tool_name == "deploy"]
    assert step.outcome == "rejected" and "deploy to staging first" in step.text


async def test_parallel_calls_are_asked_separately_and_one_decision_never_resolves_the_other() -> None:
    model = model_of(
        [function_call("deploy", {"target": "prod"}, call_id="c-prod"), function_call("deploy", {"target": "staging"}, call_id="c-stg")],
        [assistant_message("one of two")],
    )
    h, _ = rig(model, tools=[deploy])
    h.start()
    await h.wait_event("approval_requested", lambda p: p.target_id == "c-prod")
    await h.wait_event("approval_requested", lambda p: p.target_id == "c-stg")
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="c-stg"))
    await h.wait_event("approval_granted")
    assert "c-prod" in h.runner.session.pending_approvals and ran == []
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="c-prod", detail="not prod"))
    out = await h.finish()
    assert out.success, out.reason
    assert ran == ["staging"]
    told = outputs(model.calls[1])
    assert told["c-stg"] == "deployed to staging" and "not prod" in told["c-prod"]


async def test_an_approval_with_edited_arguments_runs_the_call_with_them_and_tells_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # The wire for edited arguments (APPROVE payload "arguments") is issue 15's; here the real
    # approval flow runs and its decision carries the person's arguments.
    real = common.ask_tool_approval

    async def approve_with_edit(*args: Any, **kwargs: Any) -> common.ToolDecision:
        decision = await real(*args, **kwargs)
        return common.ToolDecision(decision.outcome, decision.reason, {"target": "canary"})

    monkeypatch.setattr("goldfive.adapters.openai_agents.adapter.ask_tool_approval", approve_with_edit)
    model = model_of([function_call("deploy", {"target": "prod"}, call_id="call-d1")], [assistant_message("canary it is")])
    h, _ = rig(model, tools=[deploy])
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="call-d1"))
    out = await h.finish()
    assert out.success, out.reason
    assert ran == ["canary"]
    told = outputs(model.calls[1])["call-d1"]
    assert told.startswith(EDITED_NOTE.split("{")[0]) and '"canary"' in told and told.endswith("deployed to canary")
    [step] = [s for s in steps_of(h, "tool_call") if s.tool_name == "deploy"]
    assert json.loads(step.args_json) == {"target": "canary"}


# -- INJECT_MESSAGE ----------------------------------------------------------------------------
async def test_an_injected_message_reaches_the_next_model_call_and_stays_in_place() -> None:
    held = Held()
    model = model_of(
        held.step(function_call("lookup", {"key": "a"}, call_id="l1")),
        [function_call("lookup", {"key": "b"}, call_id="l2")],
        [assistant_message("done")],
    )
    h, _ = rig(model, tools=[lookup])
    h.start()
    await asyncio.wait_for(held.entered.wait(), 5)
    assert ack_ok(await h.control(ControlKind.INJECT_MESSAGE, text="use the canary"))
    held.release.set()
    out = await h.finish()
    assert out.success, out.reason
    marker = "[user_steering]use the canary[/user_steering]"
    assert not any(marker in t for t in user_texts(model.calls[0]))
    second, third = model.calls[1].input, model.calls[2].input
    where = [i for i, item in enumerate(second) if isinstance(item, dict) and marker in str(item.get("content"))]
    assert where == [len(second) - 1]  # after l1's output, just before this call
    assert third[where[0]] == second[where[0]]  # still there, same place, for the later call


# -- CANCEL and STEER in the middle of a model call --------------------------------------------
def _asyncio_noise(caplog: pytest.LogCaptureFixture) -> list[str]:
    gc.collect()
    return [r.getMessage() for r in caplog.records if r.name == "asyncio" or "destroyed" in r.getMessage()]


async def test_cancel_during_a_model_call_stops_the_run_within_the_grace_period_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    held = Held()
    model = model_of(held.step(assistant_message("never")))
    h, _ = rig(model, "t1", "t2", config=RuntimeConfig(cancel_grace_s=2.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h.start()
        await asyncio.wait_for(held.entered.wait(), 5)
        started = time.monotonic()
        assert ack_ok(await h.control(ControlKind.CANCEL))
        out = await h.finish()
        elapsed = time.monotonic() - started
    assert not out.success and held.cancelled
    assert elapsed < 2.0
    assert h.statuses() == {"t1": TaskStatus.CANCELLED, "t2": TaskStatus.CANCELLED}
    assert h.of("invocation_abandoned") == []
    assert [str(w.message) for w in caught if "never awaited" in str(w.message) or "destroyed" in str(w.message)] == []
    assert _asyncio_noise(caplog) == []
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()] == []


async def test_steer_during_a_model_call_cancels_it_and_the_revised_plan_runs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    held = Held()
    model = model_of(held.step(assistant_message("never")), [assistant_message("steered work done")])
    planner = ReplanningPlanner(linear_plan("t1"))
    h, _ = rig(model, planner=planner, config=RuntimeConfig(cancel_grace_s=2.0))
    h.start()
    await asyncio.wait_for(held.entered.wait(), 5)
    started = time.monotonic()
    assert ack_ok(await h.control(ControlKind.STEER, note="focus on the API"))
    out = await h.finish()
    assert out.success, out.reason
    assert held.cancelled and held.cancelled_at - started < 2.0
    assert h.statuses() == {"r1_1": TaskStatus.COMPLETED}  # the revised plan replaced t1
    assert any(c.task_id == "t1" for c in h.of("task_cancelled"))
    assert "focus on the API" in user_texts(model.calls[1])[-1]
    assert h.of("invocation_abandoned") == []
    assert _asyncio_noise(caplog) == []


async def test_cancel_while_an_approval_waits_withdraws_it() -> None:
    model = model_of([function_call("deploy", {"target": "prod"}, call_id="call-d1")])
    h, _ = rig(model, tools=[deploy])
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.CANCEL))
    out = await h.finish()
    assert not out.success and ran == []
    assert h.runner.session.pending_approvals == {}
    assert any("withdrawn" in r.detail for r in h.of("approval_rejected"))


# -- the parallel executor: concurrent tasks never share one SDK conversation -------------------
async def test_concurrent_tasks_each_hold_their_own_sdk_session_so_conversations_never_interleave() -> None:
    from goldfive.executors.parallel import ParallelDAGExecutor
    from goldfive.planners.static import StaticPlanner
    from goldfive.types import Plan, Task, TaskEdge

    y_done = asyncio.Event()

    async def respond(call: Any) -> list[Any]:
        task = user_texts(call)[-1].rsplit("Do the current task (", 1)[1][0]
        if task == "x" and not outputs(call):
            return [function_call("lookup", {"key": "x"}, call_id="lx")]
        if task == "x":  # x's second turn waits until y ran start to end
            await y_done.wait()
        if task == "y":
            y_done.set()
        return [assistant_message(f"{task} done")]

    model = model_of(*[ModelStep.respond(respond) for _ in range(4)])
    agent = Agent(name="worker", model=model, tools=[lookup])
    plan = Plan(tasks=[Task("x", "X"), Task("y", "Y"), Task("z", "Z")], edges=[TaskEdge("x", "z"), TaskEdge("y", "z")])
    h = Harness(agent=agent, executor=ParallelDAGExecutor(max_concurrency=2), planner=StaticPlanner(plan))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    z_call = model.calls[-1]
    asked = [t.rsplit("task (", 1)[1][0] for t in user_texts(z_call)]
    # z continues one earlier conversation whole, never a mix of x and y. Which one depends on
    # which of the two parallel tasks took the run's session first (the executor starts both
    # at once): x's comes with its tool call, y's with none.
    assert asked in (["x", "z"], ["y", "z"]), asked
    assert list(outputs(z_call)) == (["lx"] if asked[0] == "x" else [])


# -- the user's own SDK settings and the SDK's own errors ---------------------------------------
async def test_the_users_input_filter_still_runs_after_goldfive_put_the_injected_messages_in() -> None:
    from agents import RunConfig
    from agents.run_config import CallModelData, ModelInputData

    seen: list[int] = []

    def users_filter(data: CallModelData[Any]) -> ModelInputData:
        seen.append(len(data.model_data.input))
        return ModelInputData(input=[*data.model_data.input, {"role": "user", "content": "from the user's filter"}], instructions=data.model_data.instructions)

    model = model_of([assistant_message("ok")])
    agent = Agent(name="worker", model=model)
    adapter = OpenAIAgentsAdapter(agent, run_config=RunConfig(tracing_disabled=True, call_model_input_filter=users_filter))
    h = Harness(agent=adapter, executor=SequentialExecutor(), planner=static("t1"))
    h.start()
    assert (await h.finish()).success
    assert seen == [1] and user_texts(model.calls[0])[-1] == "from the user's filter"


async def test_an_sdk_error_fails_the_task_with_its_name_and_message() -> None:
    model = model_of([function_call("no_such_tool", {}, call_id="n1")])
    h, _ = rig(model)
    h.start()
    out = await h.finish()
    assert not out.success and h.statuses()["t1"] == TaskStatus.FAILED
    assert "ModelBehaviorError" in out.reason and "no_such_tool" in out.reason


def test_the_adapter_refuses_what_is_not_an_sdk_agent_and_a_zero_turn_limit() -> None:
    with pytest.raises(TypeError, match="agents.Agent"):
        OpenAIAgentsAdapter(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_turns"):
        OpenAIAgentsAdapter(Agent(name="a"), max_turns=0)


async def test_two_concurrent_tasks_whose_models_reuse_a_call_id_are_asked_under_distinct_ids() -> None:
    from goldfive.executors.parallel import ParallelDAGExecutor
    from goldfive.planners.static import StaticPlanner
    from goldfive.types import Plan, Task

    async def respond(call: Any) -> list[Any]:
        if outputs(call):
            return [assistant_message("deployed")]
        task = user_texts(call)[-1].rsplit("Do the current task (", 1)[1][0]
        return [function_call("deploy", {"target": task}, call_id="c1")]

    model = model_of(*[ModelStep.respond(respond) for _ in range(4)])
    agent = Agent(name="worker", model=model, tools=[deploy])
    plan = Plan(tasks=[Task("x", "X"), Task("y", "Y")], edges=[])
    h = Harness(agent=agent, executor=ParallelDAGExecutor(max_concurrency=2), planner=StaticPlanner(plan))
    h.start()
    first = await h.wait_event("approval_requested")
    second = await h.wait_event("approval_requested", lambda p: p.target_id != first.approval_requested.target_id)
    targets = {first.approval_requested.target_id, second.approval_requested.target_id}
    assert "c1" in targets and targets - {"c1"} <= {"c1@x", "c1@y"}
    for target in sorted(targets):
        assert ack_ok(await h.control(ControlKind.APPROVE, target_id=target))
    out = await h.finish()
    assert out.success, out.reason
    assert sorted(ran) == ["x", "y"]
