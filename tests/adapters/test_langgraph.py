"""LangGraphAdapter through LangGraph's real code paths (create_react_agent, ToolNode, interrupt,
InMemorySaver) with a scripted fake chat model."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import time
import warnings
from typing import Any, Callable

import pytest
from click.testing import CliRunner
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import Command

from examples.langgraph_agent import ScriptedChatModel, build, tidy_script
from goldfive.adapters.common import ToolDecision
from goldfive.adapters.frameworks import adapter_for
from goldfive.adapters.langgraph import LangGraphAdapter, ask_first, goldfive_pre_model_hook, goldfive_tools
from goldfive.adapters.langgraph.requests import read_request
from goldfive.cli import main
from goldfive.control import ControlKind
from goldfive.types import Plan, Task, TaskStatus
from tests.runtime_kit import Harness, ReplanningPlanner, ack_ok, linear_plan, static
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner


class HeldModel(ScriptedChatModel):
    """ScriptedChatModel whose calls can be held: ``hold(call_index)`` is awaited before answering."""

    hold: Any = None
    calls: int = 0
    cancelled: list[int] = []

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        index, self.calls = self.calls, self.calls + 1
        if self.hold is not None:
            try:
                await self.hold(index)
            except asyncio.CancelledError:
                self.cancelled.append(index)
                raise
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


def react(model: ScriptedChatModel, *tools: Any, ask: tuple[str, ...] = ("delete_file",)) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(
            model, ToolNode([*tools, *goldfive_tools()], awrap_tool_call=ask_first(*ask)), pre_model_hook=goldfive_pre_model_hook
        )


deleted: list[str] = []


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    deleted.clear()


def inputs_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def script(*steps: Callable[[list[BaseMessage]], AIMessage]) -> Callable[[list[BaseMessage]], AIMessage]:
    """Answers in order, then ``tidy_script`` for the rest."""
    queue = list(steps)
    return lambda msgs: queue.pop(0)(msgs) if queue else tidy_script(msgs)


def call(name: str, cid: str, **args: Any) -> Callable[[list[BaseMessage]], AIMessage]:
    return lambda msgs: AIMessage("", tool_calls=[{"name": name, "args": args, "id": cid}])


# -- a run ------------------------------------------------------------------------------------


async def test_a_run_completes_and_the_second_task_sees_the_first_on_the_same_thread() -> None:
    model = ScriptedChatModel(respond=tidy_script)
    graph = react(model, delete_file)
    h = Harness(graph, SequentialExecutor(), static("t1", "t2", "t3"))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results == {f"t{i}": f"T{i}: done" for i in (1, 2, 3)}
    second_task_input = model.seen[1]
    assert "t1: T1: done" in inputs_text(second_task_input)  # the completed result, in the task input
    # one thread per run: the second task's model input holds the first task's whole turn
    assert [type(m).__name__ for m in second_task_input[:3]] == ["HumanMessage", "AIMessage", "ToolMessage"]
    steps = h.of("agent_step")
    assert [(s.step, s.tool_name, s.outcome) for s in steps[:2]] == [("model_turn", "", ""), ("tool_call", "report_task_completed", "ok")]
    assert steps[1].call_id == "t1-done"


async def test_a_graph_without_goldfive_tools_or_checkpointer_runs_as_it_is() -> None:
    model = ScriptedChatModel(respond=lambda msgs: AIMessage(f"answer {len(msgs)}"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(model, [])
    adapter = adapter_for(graph)
    assert isinstance(adapter, LangGraphAdapter) and adapter.user_graph is graph
    h = Harness(graph, SequentialExecutor(), static("t1", "t2"))
    h.start()
    out = await h.finish()
    assert out.success
    assert out.session.completed_results == {"t1": "answer 1", "t2": "answer 3"}  # t2 sees t1's turn
    assert graph.checkpointer is None  # the user's graph is not changed


async def test_without_memory_each_task_starts_from_an_empty_thread() -> None:
    model = ScriptedChatModel(respond=tidy_script)
    h = Harness(LangGraphAdapter(react(model), memory=False), SequentialExecutor(), static("t1", "t2"))
    h.start()
    out = await h.finish()
    assert out.success
    assert len(model.seen[1]) == 1 and "t1: T1: done" in inputs_text(model.seen[1])


async def test_the_reporting_tools_and_hook_are_harmless_outside_goldfive() -> None:
    tools = goldfive_tools()
    assert "report_task_completed" in [t.name for t in tools] and "report_task_started" not in [t.name for t in tools]
    [progress] = [t for t in tools if t.name == "report_task_progress"]
    assert "not running under goldfive" in str(await progress.ainvoke({"detail": "x"}))
    assert await goldfive_pre_model_hook({"messages": []}, {}) == {"messages": []}
    with pytest.raises(TypeError, match="compiled LangGraph graph"):
        LangGraphAdapter(object())


# -- approvals -------------------------------------------------------------------------------


async def test_a_tool_that_asks_first_waits_and_approve_runs_it() -> None:
    model = ScriptedChatModel(respond=script(call("delete_file", "c1", path="a.txt")))
    h = Harness(react(model, delete_file), SequentialExecutor(), static("t1"))
    h.start()
    ev = await h.wait_event("approval_requested")
    req = ev.approval_requested
    assert (req.target_id, req.tool_name, req.task_id) == ("c1", "delete_file", "t1")
    assert deleted == []
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="c1"))
    out = await h.finish()
    assert out.success and deleted == ["a.txt"]
    [tool_msg] = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert tool_msg.content == "deleted a.txt"
    [step] = [s for s in h.of("agent_step") if s.tool_name == "delete_file"]
    assert (step.outcome, step.call_id, step.text) == ("ok", "c1", "deleted a.txt")


async def test_reject_with_a_reason_does_not_run_the_tool_and_the_model_reads_the_reason() -> None:
    model = ScriptedChatModel(respond=script(call("delete_file", "c1", path="a.txt")))
    h = Harness(react(model, delete_file), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="c1", detail="keep a.txt, it is the config"))
    out = await h.finish()
    assert out.success and deleted == []
    [tool_msg] = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert "rejected the call to delete_file: keep a.txt, it is the config" in str(tool_msg.content)
    assert tool_msg.status == "error"
    [step] = [s for s in h.of("agent_step") if s.tool_name == "delete_file"]
    assert step.outcome == "rejected"


async def test_parallel_calls_each_get_their_own_approval_and_one_decision_resolves_one_call() -> None:
    two = lambda msgs: AIMessage(  # noqa: E731
        "",
        tool_calls=[
            {"name": "delete_file", "args": {"path": "a"}, "id": "ca"},
            {"name": "delete_file", "args": {"path": "b"}, "id": "cb"},
        ],
    )
    model = ScriptedChatModel(respond=script(two))
    h = Harness(react(model, delete_file), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested", lambda p: p.target_id == "ca")
    await h.wait_event("approval_requested", lambda p: p.target_id == "cb")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="cb", detail="not b"))
    await asyncio.sleep(0.05)
    assert set(h.runner.session.pending_approvals) == {"ca"}  # deciding cb left ca waiting
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="ca"))
    out = await h.finish()
    assert out.success and deleted == ["a"]
    results = {m.tool_call_id: str(m.content) for m in model.seen[1] if isinstance(m, ToolMessage)}
    assert results["ca"] == "deleted a" and "not b" in results["cb"]


async def test_edited_arguments_resume_as_an_edit_and_the_tool_runs_with_them() -> None:
    # The person's edit reaches the graph as LangGraph's HumanResponse "edit" (the adapter's mapping).
    request = {"action_request": {"action": "delete_file", "args": {"path": "a.txt"}}, "config": {"allow_edit": True}}
    answer = read_request(request, None, []).answer([ToolDecision("approve", arguments={"path": "b.txt"})])
    assert answer == {"type": "edit", "args": {"action": "delete_file", "args": {"path": "b.txt"}}}
    model = ScriptedChatModel(respond=script(call("delete_file", "c1", path="a.txt"), lambda m: AIMessage("ok")))
    graph = react(model, delete_file).copy({"checkpointer": InMemorySaver()})
    config: Any = {"configurable": {"thread_id": "t"}}
    first = [c async for c in graph.astream({"messages": [HumanMessage("go")]}, config, stream_mode="updates")]
    [interrupt] = [i for c in first for i in c.get("__interrupt__", ())]
    async for _ in graph.astream(Command(resume={interrupt.id: answer}), config, stream_mode="updates"):
        pass
    assert deleted == ["b.txt"]
    [tool_msg] = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert tool_msg.content.startswith("deleted b.txt") and "changed the arguments" in tool_msg.content


async def test_a_hand_written_interrupt_in_the_list_form_is_answered_in_the_same_form() -> None:
    from langgraph.graph import MessagesState, StateGraph
    from langgraph.types import interrupt

    def send(state: MessagesState) -> dict[str, Any]:
        request = {"action_request": {"action": "send_mail", "args": {"to": "ops"}}, "description": "Send the report?"}
        [answer] = interrupt([request])
        return {"messages": [AIMessage(f"answer {answer['type']}")]}

    graph = StateGraph(MessagesState).add_node("send", send).set_entry_point("send").compile()
    h = Harness(graph, SequentialExecutor(), static("t1"))
    h.start()
    ev = await h.wait_event("approval_requested")
    assert (ev.approval_requested.tool_name, ev.approval_requested.prompt) == ("send_mail", "Send the report?")
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id=ev.approval_requested.target_id))
    out = await h.finish()
    assert out.success and out.session.completed_results["t1"] == "answer accept"


async def test_parallel_tasks_do_not_share_a_thread_while_both_run() -> None:
    both = asyncio.Event()
    arrived: list[int] = []

    async def hold(index: int) -> None:
        arrived.append(index)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)

    model = HeldModel(respond=lambda msgs: AIMessage(f"saw {len(msgs)}"), hold=hold)
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B")], id="p")
    h = Harness(react(model), ParallelDAGExecutor(max_concurrency=2), StaticPlanner(plan))
    h.start()
    out = await h.finish()
    assert out.success
    assert [len(seen) for seen in model.seen] == [1, 1]  # each saw only its own task input


async def test_a_static_breakpoint_fails_the_task_saying_what_to_use_instead() -> None:
    model = ScriptedChatModel(respond=script(call("delete_file", "c1", path="a.txt")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(model, [delete_file], interrupt_before=["tools"])
    h = Harness(graph, SequentialExecutor(), static("t1"))
    h.start()
    out = await h.finish()
    assert not out.success and deleted == []
    [failed] = h.of("task_failed")
    assert "static breakpoint" in failed.reason and "ask_first" in failed.reason


# -- injected messages ------------------------------------------------------------------------


async def test_an_injected_message_is_in_the_next_model_input() -> None:
    release = asyncio.Event()
    first_call = asyncio.Event()

    async def hold(index: int) -> None:
        if index == 0:
            first_call.set()
            await release.wait()

    model = HeldModel(respond=script(call("report_task_progress", "p1", detail="drafting")), hold=hold)
    h = Harness(react(model), SequentialExecutor(), static("t1"))
    h.start()
    await asyncio.wait_for(first_call.wait(), 5)
    assert ack_ok(await h.control(ControlKind.INJECT_MESSAGE, text="use short sentences"))
    await h.wait_event("message_parked")
    release.set()
    out = await h.finish()
    assert out.success
    assert "use short sentences" not in inputs_text(model.seen[0])
    assert model.seen[1][-1].content == "[user_steering]use short sentences[/user_steering]"
    [delivered] = h.of("message_delivered")
    assert delivered.lane == "t1"


# -- cancel and steer -------------------------------------------------------------------------


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(record.getMessage())


async def _stops_cleanly(kind: ControlKind, **payload: Any) -> tuple[Harness, HeldModel, float]:
    started = asyncio.Event()
    never = asyncio.Event()

    async def hold(index: int) -> None:
        if index == 0:
            started.set()
            await never.wait()

    model = HeldModel(respond=tidy_script, hold=hold)
    planner = ReplanningPlanner(linear_plan("t1", "t2"))
    h = Harness(react(model), SequentialExecutor(), planner)
    h.start()
    await asyncio.wait_for(started.wait(), 5)
    begun = time.monotonic()
    assert ack_ok(await h.control(kind, **payload))
    return h, model, begun


@pytest.mark.parametrize("kind", [ControlKind.CANCEL, ControlKind.STEER])
async def test_cancel_and_steer_stop_a_model_call_in_flight_without_leftovers(kind: ControlKind) -> None:
    # An earlier test on this worker may have left a task pending on its own, closed loop;
    # collect it now so that only this test's tasks can trip the check below.
    gc.collect()
    handler = _Warnings()
    logging.getLogger("asyncio").addHandler(handler)
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            payload = {"reason": "stop now"} if kind is ControlKind.CANCEL else {"note": "smaller steps"}
            h, model, begun = await _stops_cleanly(kind, **payload)
            if kind is ControlKind.CANCEL:
                out = await h.finish()
                assert not out.success and "stop now" in out.reason
            else:
                out = await h.finish()
                assert out.success, out.reason
                statuses = h.statuses()
                assert statuses["r1_1"] == TaskStatus.COMPLETED
            elapsed = time.monotonic() - begun
            assert model.cancelled == [0]  # the model call in flight was cancelled, not left running
            assert h.of("task_cancelled")[0].task_id == "t1"
            assert elapsed < 5.0  # the default cancel grace period
            gc.collect()
            await asyncio.sleep(0)
        leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert leftovers == []
    finally:
        logging.getLogger("asyncio").removeHandler(handler)
        loop.set_exception_handler(None)
    texts = handler.texts + [str(w.message) for w in caught] + [str(e.get("message")) for e in errors]
    assert not [t for t in texts if "destroyed but it is pending" in t or "never awaited" in t], texts


async def test_a_cancel_while_a_call_waits_for_a_person_withdraws_it_and_the_tool_never_runs() -> None:
    from goldfive.run.approvals import WITHDRAWN

    model = ScriptedChatModel(respond=script(call("delete_file", "c1", path="a.txt")))
    h = Harness(react(model, delete_file), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.CANCEL, reason="not now"))
    out = await h.finish()
    assert not out.success and deleted == []
    assert [(r.target_id, r.detail) for r in h.of("approval_rejected")] == [("c1", WITHDRAWN)]
    assert h.runner.session.pending_approvals == {}
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_after_a_cancelled_task_the_run_goes_on_on_a_fresh_thread() -> None:
    h, model, _ = await _stops_cleanly(ControlKind.STEER, note="again")
    out = await h.finish()
    assert out.success
    steered_input = model.seen[0]  # the cancelled call never answered
    assert isinstance(steered_input[0], HumanMessage) and "r1_1" in str(steered_input[0].content)


# -- goldfive run ------------------------------------------------------------------------------


def test_goldfive_run_takes_the_example_graph_as_it_is(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    import examples.langgraph_agent as example

    monkeypatch.setattr(example, "agent", build(ScriptedChatModel(respond=tidy_script)))
    result = CliRunner().invoke(
        main,
        ["run", "examples.langgraph_agent:agent", "--goal", "tidy", "--plan", "examples/langgraph_plan.json", "--headless"],
    )
    assert result.exit_code == 0, result.output
    assert "3/3 tasks completed" in result.output
    assert re.search(r"clean delete_file\(\{\"path\": \"build/old.log\"\}\) rejected", result.output), result.output
