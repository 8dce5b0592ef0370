"""PydanticAIAdapter through PydanticAI's real run loop, with its own FunctionModel.

Each behaviour runs under both executors; the agent is a plain ``pydantic_ai.Agent`` handed to
the Runner as it is (the framework picker builds the adapter).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
import warnings
from typing import Any

import pytest
from pydantic_ai.messages import TextPart, ToolReturnPart

from goldfive.adapters.pydantic_ai import PydanticAIAdapter
from goldfive.control import AckResult, ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.run import RuntimeConfig
from goldfive.run.report_tool import REPORTING_TEXT
from goldfive.types import TaskStatus
from tests.adapters.pydantic_ai_kit import Script, calls, make_agent, text, tool_returns, user_texts
from tests.runtime_kit import Harness, ReplanningPlanner, executor, linear_plan, static  # noqa: F401

STEERING = "[user_steering]{}[/user_steering]"


def steps(h: Harness, step: str) -> list[Any]:
    return [s for s in h.of("agent_step") if s.step == step]


# -- a task is one run ---------------------------------------------------------------------


async def test_each_task_is_one_run_whose_input_has_the_earlier_results_and_whose_output_is_the_result(executor: Any) -> None:
    script = Script({"a": [text("alpha result")], "b": [text("beta result")]})
    agent, _ = make_agent(script)
    h = Harness(agent, executor, static("a", "b", "c"))
    assert isinstance(h.runner.adapter, PydanticAIAdapter)  # picked from the object's framework
    h.start("write it")
    out = await h.finish()
    assert out.success, out.reason
    assert dict(out.session.completed_results) == {"a": "alpha result", "b": "beta result", "c": "done c"}
    [b_first] = script.of("b")
    assert "- a: alpha result" in user_texts(b_first)[-1]  # goldfive's task input: completed results
    # PydanticAI's conversation is kept for the run: task b's run continues task a's.
    assert any(isinstance(p, TextPart) and p.content == "alpha result" for m in b_first for p in m.parts)
    assert [s.task_id for s in steps(h, "model_turn")] == ["a", "b", "c"]
    # One reporting tool among the agent's own: the final answer is the result.
    assert sorted(script.tool_names[0]) == ["goldfive_report", "lookup", "publish"]
    assert REPORTING_TEXT in user_texts(script.of("a")[0])[-1] and "report_task_completed" not in user_texts(script.of("a")[0])[-1]


async def test_the_users_agent_is_not_changed_by_a_run() -> None:
    script = Script()
    agent, _ = make_agent(script)
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    assert (await h.finish()).success
    await agent.run("plain run, no goldfive")
    assert not [n for n in script.tool_names[-1] if n.startswith("report_")]
    assert sorted(script.tool_names[-1]) == ["lookup", "publish"]


async def test_report_task_completed_by_its_old_name_ends_the_run_before_another_model_call(executor: Any) -> None:
    # Not offered (the final answer is the result), but a model following an older prompt may
    # call it: goldfive runs it instead of PydanticAI's "unknown tool" retry.
    script = Script({"a": [calls(("report_task_completed", {"result": "reported result"}, "c1")), text("never said")]})
    agent, _ = make_agent(script)
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert "report_task_completed" not in script.tool_names[0]
    assert out.session.completed_results["a"] == "reported result"
    assert len(script.of("a")) == 1
    # The next task's run continues a history whose tool call is closed by goldfive's answer.
    [b_first] = script.of("b")
    [answer] = tool_returns(b_first)
    assert answer.tool_call_id == "c1" and answer.outcome == "success"
    assert answer.content == {"ok": True, "task_id": "a", "status": "COMPLETED", "changed": True}
    [call] = [s for s in steps(h, "tool_call") if s.call_id == "c1"]
    assert (call.tool_name, call.outcome) == ("report_task_completed", "ok")


async def test_goldfive_report_failed_fails_the_task_with_its_reason() -> None:
    script = Script({"a": [calls(("goldfive_report", {"kind": "failed", "detail": "no changelog"}, "c1"))]})
    agent, _ = make_agent(script)
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    out = await h.finish()
    assert not out.success
    assert h.statuses()["a"] == TaskStatus.FAILED
    assert len(script.of("a")) == 1
    [failed] = h.of("task_failed")
    assert failed.reason == "no changelog"


async def test_report_task_failed_by_its_old_name_runs_as_the_goldfive_report_it_stands_for() -> None:
    script = Script({"a": [calls(("report_task_failed", {"reason": "no changelog", "recoverable": True}, "c1"))]})
    agent, _ = make_agent(script)
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    out = await h.finish()
    assert not out.success
    assert h.statuses()["a"] == TaskStatus.FAILED
    assert [(f.task_id, f.reason) for f in h.of("task_failed")] == [("a", "no changelog")]
    [call] = [s for s in steps(h, "tool_call") if s.call_id == "c1"]
    assert call.tool_name == "goldfive_report" and '"kind": "failed"' in call.args_json and call.outcome == "ok"


async def test_old_reporting_names_called_again_and_again_each_run_and_the_model_reads_their_answers(executor: Any) -> None:
    # PydanticAI answers a tool it was not given with a retry that counts against the run's
    # retries (one by default): a second call by an old name would end the run. Rewritten into
    # goldfive_report, every call runs.
    script = Script(
        {
            "a": [
                calls(("report_task_progress", {"detail": "half", "fraction": 0.5}, "p1")),
                calls(("report_task_progress", {"detail": "most", "fraction": 0.9}, "p2"), ("lookup", {"key": "k"}, "l1")),
                calls(("report_task_progress", {"detail": "nearly", "task_id": "a"}, "p3")),
                text("all done"),
            ]
        }
    )
    agent, ran = make_agent(script)
    h = Harness(agent, executor, static("a"))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results["a"] == "all done"
    assert [p.detail for p in h.of("task_progress")] == ["half", "most", "nearly"]
    assert ran == [{"tool": "lookup", "key": "k"}]
    last = script.of("a")[-1]
    answers = {r.tool_call_id: (r.tool_name, r.outcome, r.content) for r in tool_returns(last)}
    assert answers["p1"] == ("goldfive_report", "success", {"ok": True, "task_id": "a"})
    assert answers["p2"] == ("goldfive_report", "success", {"ok": True, "task_id": "a"})
    assert answers["p3"] == ("goldfive_report", "success", {"ok": True, "task_id": "a"})
    assert not [p for m in last for p in getattr(m, "parts", []) if getattr(p, "outcome", "") == "retried"]


# -- tool approval ---------------------------------------------------------------------------


async def test_a_call_needing_approval_waits_under_its_own_call_id_and_runs_when_approved(executor: Any) -> None:
    script = Script({"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "call-pub")), text("published")]})
    agent, ran = make_agent(script)
    h = Harness(agent, executor, static("a"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.target_id, req.kind, req.tool_name, req.task_id) == ("call-pub", "tool", "publish", "a")
    assert '"channel": "#r"' in req.args_json
    assert ran == []  # waiting: the tool has not run
    ack = await h.control(ControlKind.APPROVE, target_id="call-pub")
    assert ack.result == AckResult.SUCCESS
    out = await h.finish()
    assert out.success, out.reason
    assert ran == [{"tool": "publish", "channel": "#r", "text": "hi"}]
    [returned] = [r for r in tool_returns(script.of("a")[1]) if r.tool_call_id == "call-pub"]
    assert returned.content == "posted to #r"
    [call] = [s for s in steps(h, "tool_call") if s.tool_name == "publish"]
    assert (call.outcome, call.call_id) == ("ok", "call-pub")


async def test_a_rejected_call_does_not_run_and_the_model_reads_the_reason(executor: Any) -> None:
    script = Script({"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "call-pub")), text("ok, not published")]})
    agent, ran = make_agent(script)
    h = Harness(agent, executor, static("a"))
    h.start()
    await h.wait_event("approval_requested")
    await h.control(ControlKind.REJECT, target_id="call-pub", detail="wrong channel, use #news")
    out = await h.finish()
    assert out.success, out.reason
    assert ran == []
    [returned] = tool_returns(script.of("a")[1])
    assert "wrong channel, use #news" in str(returned.content)
    assert returned.outcome == "denied"  # PydanticAI's own denial
    [call] = [s for s in steps(h, "tool_call") if s.tool_name == "publish"]
    assert call.outcome == "rejected" and "wrong channel" in call.text


async def test_parallel_calls_each_get_their_own_approval_and_one_decision_never_resolves_another(executor: Any) -> None:
    script = Script(
        {
            "a": [
                calls(
                    ("publish", {"channel": "#one", "text": "x"}, "p1"),
                    ("publish", {"channel": "#two", "text": "y"}, "p2"),
                    ("lookup", {"key": "k"}, "l1"),
                ),
                text("done"),
            ]
        }
    )
    agent, ran = make_agent(script)
    h = Harness(agent, executor, static("a"))
    h.start()
    await h.wait_event("approval_requested", lambda r: r.target_id == "p2")
    await h.wait_event("approval_requested", lambda r: r.target_id == "p1")
    await h.control(ControlKind.APPROVE, target_id="p1")
    assert h.runner.session is not None and list(h.runner.session.pending_approvals) == ["p2"]
    assert {"tool": "publish", "channel": "#one", "text": "x"} not in ran  # runs once every call is decided
    await h.control(ControlKind.REJECT, target_id="p2", detail="not #two")
    out = await h.finish()
    assert out.success, out.reason
    assert sorted(r["channel"] if r["tool"] == "publish" else r["key"] for r in ran) == ["#one", "k"]
    returns = {r.tool_call_id: str(r.content) for r in tool_returns(script.of("a")[1])}
    assert returns["p1"] == "posted to #one" and "not #two" in returns["p2"] and returns["l1"] == "value of k"


async def test_arguments_edited_by_the_person_are_the_ones_that_run_and_the_model_is_told() -> None:
    script = Script({"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "call-pub")), text("done")]})
    agent, ran = make_agent(script)
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    await h.wait_event("approval_requested")
    ack = await h.control(ControlKind.APPROVE, target_id="call-pub", arguments={"channel": "#news", "text": "hi"})
    assert ack.result == AckResult.SUCCESS, ack.detail
    assert (await h.finish()).success
    assert ran == [{"tool": "publish", "channel": "#news", "text": "hi"}]  # ToolApproved(override_args=...)
    second = script.of("a")[1]
    assert any("edited the arguments" in t and '"#news"' in t and '"#r"' in t for t in user_texts(second))
    [call] = [s for s in steps(h, "tool_call") if s.tool_name == "publish"]
    assert "#news" in call.args_json and call.outcome == "ok"  # the arguments that ran


async def test_an_approved_call_resumes_the_run_and_the_conversation_holds_each_message_once() -> None:
    # The approval ends PydanticAI's run with DeferredToolRequests; the adapter resumes it with
    # the decision: each model answer is recorded once, and the next task continues one history.
    script = Script({"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "call-pub"), ("lookup", {"key": "k"}, "l1")), text("published")]})
    agent, ran = make_agent(script)
    h = Harness(agent, SequentialExecutor(), static("a", "b"))
    h.start()
    await h.wait_event("approval_requested")
    await h.control(ControlKind.APPROVE, target_id="call-pub")
    out = await h.finish()
    assert out.success, out.reason
    assert [r["tool"] for r in ran] == ["lookup", "publish"]
    assert [s.task_id for s in steps(h, "model_turn")] == ["a", "a", "b"]
    assert sorted((s.tool_name, s.outcome) for s in steps(h, "tool_call")) == [("lookup", "ok"), ("publish", "ok")]
    [b_request] = script.of("b")
    kinds = [type(m).__name__ for m in b_request]
    assert kinds == ["ModelRequest", "ModelResponse", "ModelRequest", "ModelResponse", "ModelRequest"], kinds
    assert sorted(r.tool_call_id for r in tool_returns(b_request)) == ["call-pub", "l1"]


async def test_a_structured_output_agent_gets_its_approvals_and_its_output_after_the_resume() -> None:
    from pydantic import BaseModel
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    class Report(BaseModel):
        channel: str

    script = Script(
        {"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "call-pub")), ModelResponse(parts=[ToolCallPart("final_result", {"channel": "#r"}, tool_call_id="out")])]}
    )
    agent: Agent[None, Report] = Agent(FunctionModel(script, model_name="scripted"), output_type=Report)
    ran: list[str] = []

    @agent.tool_plain(requires_approval=True)
    def publish(channel: str, text: str) -> str:
        ran.append(channel)
        return "posted"

    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    await h.wait_event("approval_requested")
    await h.control(ControlKind.APPROVE, target_id="call-pub")
    out = await h.finish()
    assert out.success, out.reason
    assert ran == ["#r"]
    assert h.runner.session is not None and "channel='#r'" in h.runner.session.completed_results["a"]  # the Report


async def test_an_agent_with_an_output_validator_still_asks_approvals_inside_the_run(executor: Any) -> None:
    # A run may not set an output type for such an agent: the approvals go through the capability.
    script = Script({"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "call-pub")), text("published")]})
    agent, ran = make_agent(script)
    seen: list[str] = []

    @agent.output_validator
    def keep(output: str) -> str:
        seen.append(output)
        return output

    h = Harness(agent, executor, static("a"))
    h.start()
    await h.wait_event("approval_requested")
    assert ran == []
    await h.control(ControlKind.REJECT, target_id="call-pub", detail="not today")
    out = await h.finish()
    assert out.success, out.reason
    assert ran == [] and seen == ["published"]
    [returned] = tool_returns(script.of("a")[1])
    assert "not today" in str(returned.content) and returned.outcome == "denied"


async def test_an_agent_whose_output_type_has_deferred_tool_requests_gets_its_approvals_asked() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.tools import DeferredToolRequests

    script = Script({"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "call-pub")), text("published")]})
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(script, model_name="scripted"), output_type=[str, DeferredToolRequests]
    )
    ran: list[str] = []

    @agent.tool_plain(requires_approval=True)
    def publish(channel: str, text: str) -> str:
        ran.append(channel)
        return "posted"

    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    await h.wait_event("approval_requested")
    await h.control(ControlKind.APPROVE, target_id="call-pub")
    out = await h.finish()
    assert out.success, out.reason
    assert ran == ["#r"]
    assert h.runner.session is not None and h.runner.session.completed_results["a"] == "published"


# -- injected messages ---------------------------------------------------------------------


async def test_an_injected_message_is_in_the_next_model_input(executor: Any) -> None:
    script = Script({"a": [calls(("lookup", {"key": "k"}, "l1")), text("done")]})
    gate = script.hold("a", 0)
    agent, _ = make_agent(script)
    h = Harness(agent, executor, static("a"))
    h.start()
    await script.next_request()  # the first model call is in flight
    ack = await h.control(ControlKind.INJECT_MESSAGE, text="use metric units")
    assert ack.result == AckResult.SUCCESS
    gate.set()
    out = await h.finish()
    assert out.success, out.reason
    first, second = script.of("a")
    want = STEERING.format("use metric units")
    assert want not in user_texts(first)
    assert user_texts(second)[-1] == want
    [delivered] = h.of("message_delivered")
    assert delivered.lane == "a"


# -- CANCEL and STEER --------------------------------------------------------------------------


def _pending_tasks() -> set[asyncio.Task[Any]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}


def _watch_from_here(caplog: pytest.LogCaptureFixture) -> set[asyncio.Task[Any]]:
    """The pending tasks now, with the log cleared of what collecting an earlier test's
    garbage says: a task left pending on an earlier test's closed loop is not this test's."""
    gc.collect()
    caplog.clear()
    return _pending_tasks()


async def _stopped_cleanly(h: Harness, before: set[asyncio.Task[Any]], caplog: pytest.LogCaptureFixture) -> None:
    await asyncio.sleep(0)
    assert _pending_tasks() - before == set()
    gc.collect()
    assert not [r for r in caplog.records if "destroyed but it is pending" in r.getMessage()]


async def test_cancel_in_the_middle_of_a_model_call_stops_the_run_within_the_grace_period(
    executor: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    before = _watch_from_here(caplog)
    script = Script()
    script.hold("a", 0)  # never released
    agent, _ = make_agent(script)
    h = Harness(agent, executor, static("a", "b"), config=RuntimeConfig(cancel_grace_s=2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h.start()
        await script.next_request()
        started = time.monotonic()
        await h.control(ControlKind.CANCEL, reason="stop now")
        out = await h.finish()
        elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert not out.success and "stop now" in out.reason
    assert script.cancelled == ["a"]  # the model call itself was cancelled
    assert h.of("task_cancelled")[0].task_id == "a"
    assert [t for t, _ in script.requests] == ["a"]
    await _stopped_cleanly(h, before, caplog)


async def test_steer_in_the_middle_of_a_model_call_stops_it_and_the_new_plan_runs(
    executor: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    before = _watch_from_here(caplog)
    script = Script()
    script.hold("a", 0)
    agent, _ = make_agent(script)
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b")), config=RuntimeConfig(cancel_grace_s=2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h.start()
        await script.next_request()
        started = time.monotonic()
        await h.control(ControlKind.STEER, note="shorter")
        out = await h.finish()
        elapsed = time.monotonic() - started
    assert out.success, out.reason
    assert elapsed < 2.0
    assert script.cancelled == ["a"]
    assert "r1_1" in out.session.completed_results
    await _stopped_cleanly(h, before, caplog)


async def test_parallel_tasks_reusing_a_call_id_still_get_one_approval_each() -> None:
    """A model with fixed call ids (PydanticAI's TestModel does this) in two parallel tasks."""
    from goldfive.executors.parallel import ParallelDAGExecutor
    from goldfive.planners.static import StaticPlanner
    from goldfive.types import Plan, Task

    same = calls(("publish", {"channel": "#r", "text": "hi"}, "fixed-id"))
    script = Script({"a": [same, text("a done")], "b": [same, text("b done")]})
    agent, ran = make_agent(script)
    h = Harness(agent, ParallelDAGExecutor(max_concurrency=2), StaticPlanner(Plan(tasks=[Task("a", "A"), Task("b", "B")])))
    h.start()
    first = (await h.wait_event("approval_requested")).approval_requested
    second = (await h.wait_event("approval_requested", lambda r: r.target_id != first.target_id)).approval_requested
    assert {first.target_id, second.target_id} == {"fixed-id", f"fixed-id@{second.task_id}"}
    await h.control(ControlKind.APPROVE, target_id=first.target_id)
    assert h.runner.session is not None and list(h.runner.session.pending_approvals) == [second.target_id]
    await h.control(ControlKind.REJECT, target_id=second.target_id, detail="only one post")
    out = await h.finish()
    assert out.success, out.reason
    assert len(ran) == 1


async def test_cancel_while_a_call_waits_for_approval_withdraws_it_and_the_tool_never_runs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    before = _watch_from_here(caplog)
    script = Script({"a": [calls(("publish", {"channel": "#r", "text": "hi"}, "p1"), ("publish", {"channel": "#s", "text": "yo"}, "p2"))]})
    agent, ran = make_agent(script)
    h = Harness(agent, SequentialExecutor(), static("a"), config=RuntimeConfig(cancel_grace_s=2.0))
    h.start()
    await h.wait_event("approval_requested", lambda r: r.target_id == "p2")
    await h.control(ControlKind.CANCEL, reason="stop")
    out = await h.finish()
    assert not out.success and ran == []
    assert sorted(r.target_id for r in h.of("approval_rejected") if r.detail.startswith("withdrawn")) == ["p1", "p2"]
    assert out.session.pending_approvals == {}
    await _stopped_cleanly(h, before, caplog)


async def test_an_approval_required_toolset_asks_only_for_the_calls_its_rule_names() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.toolsets import FunctionToolset

    deleted: list[str] = []

    def delete(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    script = Script({"a": [calls(("delete", {"path": "/tmp/x"}, "d1"), ("delete", {"path": "/etc/passwd"}, "d2")), text("done")]})
    risky = FunctionToolset([delete]).approval_required(lambda ctx, tool_def, args: str(args["path"]).startswith("/etc"))
    agent: Agent[None, str] = Agent(FunctionModel(script), toolsets=[risky])
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.target_id, req.tool_name) == ("d2", "delete")
    await h.control(ControlKind.REJECT, target_id="d2", detail="never /etc")
    out = await h.finish()
    assert out.success, out.reason
    assert deleted == ["/tmp/x"]
    assert [r.target_id for r in h.of("approval_requested")] == ["d2"]
    returns = {r.tool_call_id: str(r.content) for r in tool_returns(script.of("a")[1])}
    assert returns["d1"] == "deleted /tmp/x" and "never /etc" in returns["d2"]
