"""The Google ADK adapter through ADK's real Runner, flow, tool confirmation and plugins, with a
scripted ``BaseLlm`` (tests/adapters/adk_kit.py): no network, no API key."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool
from google.adk.tools.tool_context import ToolContext

import goldfive.adapters.adk as adk_module
from goldfive.adapters.adk import ADKAdapter
from goldfive.adapters.common import ToolDecision
from goldfive.control import AckResult, ControlKind
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.executors.sequential import SequentialExecutor
from goldfive.run import RuntimeConfig
from goldfive.runner import Runner
from goldfive.types import TaskStatus
from tests.adapters.adk_kit import ScriptedLlm, call, calls, say, warm_up_adk
from tests.runtime_kit import Harness, ReplanningPlanner, linear_plan, static

GRACE_S = 2.0


class Hold:
    """A model step that waits until released; records whether it was cancelled."""

    def __init__(self, then: Any = None) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False
        self.then = then if then is not None else say("late answer")

    async def __call__(self, request: Any) -> Any:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return self.then


class Tools:
    """User tools; records what ran with which arguments."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def write_file(self, path: str, text: str = "") -> dict[str, Any]:
        """Write a file."""
        self.ran.append(("write_file", {"path": path, "text": text}))
        return {"written": path}

    def delete_file(self, path: str, tool_context: ToolContext) -> dict[str, Any]:
        """Delete a file; asks for confirmation itself (ADK's dynamic confirmation)."""
        if tool_context.tool_confirmation is None:
            tool_context.request_confirmation(hint=f"really delete {path}?")
            return {"status": "waiting"}
        if not tool_context.tool_confirmation.confirmed:
            return {"status": "kept"}
        self.ran.append(("delete_file", {"path": path}))
        return {"deleted": path}


def make_agent(llm: ScriptedLlm, tools: Tools | None = None) -> LlmAgent:
    t = tools or Tools()
    return LlmAgent(
        name="worker",
        model=llm,
        instruction="do the task",
        tools=[FunctionTool(t.write_file, require_confirmation=True), FunctionTool(t.delete_file)],
    )


def harness(agent: Any, *ids: str, parallel: bool = False, planner: Any = None) -> Harness:
    return Harness(
        agent,
        ParallelDAGExecutor(max_concurrency=4) if parallel else SequentialExecutor(),
        planner or static(*ids),
        config=RuntimeConfig(cancel_grace_s=GRACE_S),
    )


def tool_steps(h: Harness, name: str) -> list[Any]:
    return [s for s in h.of("agent_step") if s.step == "tool_call" and s.tool_name == name]


@pytest.fixture(scope="module", autouse=True)
def _adk_warmed_up() -> None:
    warm_up_adk()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Any connection that is not to this machine fails the test (ADK must not reach Google)."""
    attempts: list[Any] = []
    real = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost") and self.family != socket.AF_UNIX:
            attempts.append(address)
            raise OSError(f"test: no network ({address})")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield attempts


# -- a run ---------------------------------------------------------------------------------


async def test_each_task_is_one_adk_run_in_the_runs_one_session_and_sees_earlier_results(no_network: list[Any]) -> None:
    llm = ScriptedLlm().script(say("the outline: three parts"), say("the draft, after the outline"))
    agent = make_agent(llm)
    tools_before = list(agent.tools)
    h = harness(agent, "a", "b")  # Runner(agent=<LlmAgent>) picks the ADK adapter
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results == {"a": "the outline: three parts", "b": "the draft, after the outline"}
    assert "the outline: three parts" in llm.seen[1]  # task b's input: task a's result
    assert "Do the current task (b)" in llm.seen[1] and "Do the current task (a)" in llm.seen[1]  # one ADK session
    assert "report_task_completed" in llm.tools_offered[0] and "write_file" in llm.tools_offered[0]
    assert "report_task_started" not in llm.tools_offered[0]  # accepted when called, not offered
    assert agent.tools == tools_before  # the user's agent is not changed
    turns = [s for s in h.of("agent_step") if s.step == "model_turn"]
    assert [(s.task_id, s.framework, s.text) for s in turns] == [
        ("a", "adk", "the outline: three parts"), ("b", "adk", "the draft, after the outline"),
    ]
    assert no_network == []


async def test_report_task_completed_ends_the_task_with_no_further_model_call() -> None:
    llm = ScriptedLlm().script(
        call("report_task_progress", detail="halfway", fraction=0.5),
        call("report_task_completed", result="reported result"),
        say("never asked for"),
    )
    h = harness(make_agent(llm), "a")
    h.start()
    out = await h.finish()
    assert out.success and out.session.completed_results == {"a": "reported result"}
    assert len(llm.seen) == 2
    assert [p.detail for p in h.of("task_progress")] == ["halfway"]
    assert [s.outcome for s in tool_steps(h, "report_task_completed")] == ["ok"]


async def test_a_call_to_the_hidden_report_task_started_still_runs_and_the_task_goes_on() -> None:
    llm = ScriptedLlm().script(call("report_task_started"), say("done after starting"))
    h = harness(make_agent(llm), "a")
    h.start()
    out = await h.finish()
    assert out.success and out.session.completed_results == {"a": "done after starting"}
    assert "report_task_started" not in llm.tools_offered[0]
    assert "response report_task_started {'ok': True, 'task_id': 'a', 'status': 'RUNNING'" in llm.seen[1]


async def test_report_task_failed_fails_the_task() -> None:
    llm = ScriptedLlm().script(call("report_task_failed", reason="no data", recoverable=False))
    h = harness(make_agent(llm), "a")
    h.start()
    out = await h.finish()
    assert not out.success
    assert h.statuses()["a"] == TaskStatus.FAILED


async def test_a_model_error_fails_the_task_with_one_line() -> None:
    async def boom(request: Any) -> Any:
        raise RuntimeError("model exploded")

    h = harness(make_agent(ScriptedLlm().script(boom)), "a")
    h.start()
    out = await h.finish()
    assert not out.success and "model exploded" in out.reason


# -- approvals -------------------------------------------------------------------------


async def test_a_confirmed_tool_waits_for_approval_then_runs_on_approve() -> None:
    tools = Tools()
    llm = ScriptedLlm().script(call("write_file", path="notes.md", text="hi"), say("wrote it"))
    h = harness(make_agent(llm, tools), "a")
    h.start()
    ev = await h.wait_event("approval_requested")
    req = ev.approval_requested
    assert req.tool_name == "write_file" and req.target_id.startswith("adk-")
    assert json.loads(req.args_json) == {"path": "notes.md", "text": "hi"}
    await asyncio.sleep(0.05)
    assert tools.ran == []  # waits
    ack = await h.control(ControlKind.APPROVE, target_id=req.target_id)
    assert ack.result == AckResult.SUCCESS
    out = await h.finish()
    assert out.success and out.session.completed_results == {"a": "wrote it"}
    assert tools.ran == [("write_file", {"path": "notes.md", "text": "hi"})]
    assert "response write_file {'written': 'notes.md'}" in llm.seen[1]
    [step] = tool_steps(h, "write_file")
    assert (step.outcome, step.call_id) == ("ok", req.target_id)


async def test_reject_with_a_reason_does_not_run_and_the_model_reads_the_reason() -> None:
    tools = Tools()
    llm = ScriptedLlm().script(call("write_file", path="/etc/passwd"), say("ok, I will not"))
    h = harness(make_agent(llm, tools), "a")
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.REJECT, target_id=req.target_id, detail="never touch /etc")
    out = await h.finish()
    assert out.success
    assert tools.ran == []
    assert "The user rejected the call to write_file: never touch /etc" in llm.seen[1]
    [step] = tool_steps(h, "write_file")
    assert step.outcome == "rejected" and "never touch /etc" in step.text


async def test_parallel_calls_each_have_their_own_approval_and_one_decision_never_resolves_another() -> None:
    tools = Tools()
    llm = ScriptedLlm().script(
        calls(("write_file", {"path": "a.md"}, None), ("write_file", {"path": "b.md"}, None)),
        say("one of two"),
    )
    h = harness(make_agent(llm, tools), "a")
    h.start()
    await h.wait_event("approval_requested")
    await h.wait_event("approval_requested", lambda p: len([e for e in h.of("approval_requested")]) == 2)
    first, second = h.of("approval_requested")
    assert first.target_id != second.target_id
    by_path = {json.loads(r.args_json)["path"]: r.target_id for r in (first, second)}
    await h.control(ControlKind.REJECT, target_id=by_path["b.md"], detail="not b")
    await asyncio.sleep(0.05)
    assert tools.ran == [] and len(llm.seen) == 1  # b's rejection did not resolve a's approval
    assert by_path["a.md"] in out_pending(h)
    await h.control(ControlKind.APPROVE, target_id=by_path["a.md"])
    out = await h.finish()
    assert out.success
    assert tools.ran == [("write_file", {"path": "a.md", "text": ""})]
    assert "{'written': 'a.md'}" in llm.seen[1] and "not b" in llm.seen[1]


def out_pending(h: Harness) -> set[str]:
    assert h.runner.session is not None
    return set(h.runner.session.pending_approvals)


async def test_a_tool_asking_for_confirmation_itself_is_asked_too() -> None:
    tools = Tools()
    llm = ScriptedLlm().script(call("delete_file", path="old.log"), say("deleted"))
    h = harness(make_agent(llm, tools), "a")
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert req.tool_name == "delete_file" and "really delete old.log?" in req.prompt
    await h.control(ControlKind.APPROVE, target_id=req.target_id)
    assert (await h.finish()).success
    assert tools.ran == [("delete_file", {"path": "old.log"})]


async def test_edited_arguments_run_instead_and_the_model_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control plane's edit-then-approve (issue 15) arrives as ToolDecision.arguments."""

    async def edited(ctx: Any, **kw: Any) -> ToolDecision:
        return ToolDecision("approve", arguments={"path": "safe/notes.md", "text": "hi"})

    monkeypatch.setattr(adk_module, "ask_tool_approval", edited)
    tools = Tools()
    llm = ScriptedLlm().script(call("write_file", path="../notes.md", text="hi"), say("wrote it"))
    h = harness(make_agent(llm, tools), "a")
    h.start()
    assert (await h.finish()).success
    assert tools.ran == [("write_file", {"path": "safe/notes.md", "text": "hi"})]
    assert "A person changed the arguments before approving" in llm.seen[1] and "../notes.md" in llm.seen[1]
    [step] = tool_steps(h, "write_file")
    assert json.loads(step.args_json)["path"] == "safe/notes.md"


# -- injection -------------------------------------------------------------------------


async def test_an_injected_message_is_in_the_next_model_input_and_stays_for_the_rest_of_the_task() -> None:
    hold = Hold(then=call("report_task_progress", detail="step one"))
    llm = ScriptedLlm().script(hold, call("report_task_progress", detail="step two"), say("done with it"))
    h = harness(make_agent(llm), "a")
    h.start()
    await asyncio.wait_for(hold.entered.wait(), 5)
    ack = await h.control(ControlKind.INJECT_MESSAGE, text="use short sentences")
    assert ack.result == AckResult.SUCCESS
    hold.release.set()
    assert (await h.finish()).success
    assert "use short sentences" not in llm.seen[0]
    assert "[user_steering]" in llm.seen[1] and "use short sentences" in llm.seen[1]
    assert llm.seen[2].count("use short sentences") == 1  # kept in the ADK session, once


# -- cancellation ----------------------------------------------------------------------


@pytest.fixture
def leak_watch(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """Asyncio's "Task was destroyed but it is pending" and never-awaited warnings, collected."""
    gc.collect()  # what earlier tests left pending on their closed loops is not this test's
    caplog.set_level(logging.ERROR, logger="asyncio")
    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield found
        gc.collect()
        found += [str(w.message) for w in caught if "never awaited" in str(w.message) or "destroyed" in str(w.message)]
    found += [r.getMessage() for r in caplog.records if "destroyed" in r.getMessage()]


def others() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]


async def test_cancel_mid_model_call_stops_the_adk_run_within_the_grace_period(
    leak_watch: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="google_adk")
    hold = Hold()
    llm = ScriptedLlm().script(hold)
    adapter = ADKAdapter(make_agent(llm))
    h = harness(adapter, "a", "b")
    h.start()
    await asyncio.wait_for(hold.entered.wait(), 5)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    ack = await h.control(ControlKind.CANCEL)
    out = await h.outcome()
    assert loop.time() - t0 < GRACE_S
    assert ack.result == AckResult.SUCCESS and not out.success
    assert hold.cancelled  # the model call in flight was cancelled, not left running
    await h.shutdown()
    # ADK's own abort ran: its root task was cancelled by ADK, the session sealed.
    assert not [r.getMessage() for r in caplog.records if "external cancellation" in r.getMessage()]
    listed = await adapter.session_service.list_sessions(app_name=adapter.app_name, user_id=adapter.user_id)
    [only] = listed.sessions
    adk_session = await adapter.session_service.get_session(app_name=adapter.app_name, user_id=adapter.user_id, session_id=only.id)
    assert adk_session is not None and any(e.error_code == "INVOCATION_ABORTED" for e in adk_session.events)
    await asyncio.sleep(0)
    assert others() == []
    assert leak_watch == []


async def test_steer_mid_model_call_stops_the_run_then_the_revised_plan_runs(leak_watch: list[str]) -> None:
    hold = Hold()
    llm = ScriptedLlm().script(say("a done"), hold)
    agent = make_agent(llm)
    h = harness(agent, planner=ReplanningPlanner(linear_plan("a", "b")))
    h.start()
    await asyncio.wait_for(hold.entered.wait(), 5)
    ack = await h.control(ControlKind.STEER, note="make it shorter")
    assert ack.result == AckResult.SUCCESS
    out = await h.finish()
    assert out.success, out.reason
    assert hold.cancelled
    assert "b" in [p.task_id for p in h.of("task_cancelled")]
    assert any("make it shorter" in seen for seen in llm.seen[2:])  # the new task ran in ADK
    await asyncio.sleep(0)
    assert others() == []
    assert leak_watch == []


# -- parallel tasks of one run ------------------------------------------------------------


async def test_parallel_tasks_of_one_run_each_get_their_own_adk_session() -> None:
    holds = [Hold(then=say("x")), Hold(then=say("y"))]
    llm = ScriptedLlm().script(*holds)
    adapter = ADKAdapter(make_agent(llm))
    h = Harness(adapter, ParallelDAGExecutor(max_concurrency=4), static("a"), config=RuntimeConfig())
    from goldfive.planners.static import StaticPlanner
    from goldfive.types import Plan, Task

    h.runner.planner = StaticPlanner(Plan(tasks=[Task("a", "A"), Task("b", "B")]))
    h.start()
    await asyncio.wait_for(asyncio.gather(holds[0].entered.wait(), holds[1].entered.wait()), 5)
    for hold in holds:
        hold.release.set()
    out = await h.finish()
    assert out.success and sorted(out.session.completed_results.values()) == ["x", "y"]
    listed = await adapter.session_service.list_sessions(app_name=adapter.app_name, user_id=adapter.user_id)
    assert len(listed.sessions) == 2
    await adapter.aclose()


def test_the_adapter_refuses_what_is_not_an_adk_agent() -> None:
    with pytest.raises(TypeError, match="google.adk agent"):
        ADKAdapter(object())  # type: ignore[arg-type]


def test_goldfive_runner_picks_the_adk_adapter_for_an_adk_agent() -> None:
    runner = Runner(agent=make_agent(ScriptedLlm()), planner=static("a"))
    assert isinstance(runner.adapter, ADKAdapter)


async def test_after_a_steer_the_runs_adk_session_is_sealed_by_adk_and_kept_for_the_next_task() -> None:
    tools = Tools()
    llm = ScriptedLlm().script(call("write_file", path="x.md"), say("after the steer"))
    adapter = ADKAdapter(make_agent(llm, tools))
    h = harness(adapter, planner=ReplanningPlanner(linear_plan("a")))
    h.start()
    await h.wait_event("approval_requested")  # the invocation paused on write_file's confirmation
    assert (await h.control(ControlKind.STEER, note="skip the file")).result == AckResult.SUCCESS
    out = await h.finish()
    assert out.success, out.reason
    assert tools.ran == []
    assert "Do the current task (a)" in llm.seen[-1]  # the new task ran in the same ADK session
    listed = await adapter.session_service.list_sessions(app_name=adapter.app_name, user_id=adapter.user_id)
    assert len(listed.sessions) == 1


async def test_a_message_injected_while_a_call_waits_for_approval_reaches_the_model_after_it() -> None:
    tools = Tools()
    llm = ScriptedLlm().script(call("write_file", path="n.md"), say("done"))
    h = harness(make_agent(llm, tools), "a")
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (await h.control(ControlKind.INJECT_MESSAGE, text="also add a title")).result == AckResult.SUCCESS
    await h.control(ControlKind.APPROVE, target_id=req.target_id)
    assert (await h.finish()).success
    assert tools.ran == [("write_file", {"path": "n.md", "text": ""})]
    assert "{'written': 'n.md'}" in llm.seen[1] and "also add a title" in llm.seen[1]


async def test_the_agents_own_tool_callbacks_still_run_and_see_the_denial() -> None:
    seen: list[Any] = []

    def after_tool(tool: Any, args: dict[str, Any], tool_context: Any, tool_response: Any) -> None:
        seen.append((tool.name, dict(tool_response)))

    llm = ScriptedLlm().script(call("write_file", path="x"), say("fine"))
    agent = make_agent(llm).clone(update={"after_tool_callback": after_tool})
    h = harness(agent, "a")
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.REJECT, target_id=req.target_id, detail="not now")
    assert (await h.finish()).success
    assert seen[-1][0] == "write_file" and "not now" in seen[-1][1]["error"]
