"""LangGraphAdapter on the mechanisms people use: a LangChain v1 ``create_agent`` agent with
``HumanInTheLoopMiddleware`` (batched and per-call), and a plain ``interrupt(value)``, run
through LangChain's and LangGraph's real code with a scripted fake chat model."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import MessagesState, StateGraph
from langgraph.types import interrupt

from examples.langgraph_agent import ScriptedChatModel
from goldfive.adapters.frameworks import adapter_for
from goldfive.adapters.langgraph import LangGraphAdapter
from goldfive.adapters.langgraph.middleware import GoldfiveMiddleware
from goldfive.approvals import Outcome, Rule, RuleBook, ledger_of
from goldfive.control import AckResult, ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.run import RuntimeConfig
from tests.runtime_kit import Harness, ack_ok, static

deployed: list[str] = []


@tool
def deploy(service: str) -> str:
    """Deploy a service."""
    deployed.append(service)
    return f"deployed {service}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    deployed.clear()


def calls(*services: str) -> Callable[[list[BaseMessage]], AIMessage]:
    """First answer: deploy each service (ids c1, c2...); then say what the tools answered."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            results = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
            return AIMessage(" | ".join(results))
        return AIMessage(
            "", tool_calls=[{"name": "deploy", "args": {"service": s}, "id": f"c{n}"} for n, s in enumerate(services, 1)]
        )

    return respond


def agent(model: ScriptedChatModel, interrupt_on: Any = None, mode: str = "batched", extra: tuple[Any, ...] = ()) -> Any:
    """Built the documented way: create_agent with the middleware, no goldfive parts."""
    hitl = HumanInTheLoopMiddleware(interrupt_on=interrupt_on or {"deploy": True}, interrupt_mode=mode)  # type: ignore[arg-type]
    return create_agent(model, [deploy], middleware=[hitl, *extra])


def tool_results(model: ScriptedChatModel) -> dict[str, str]:
    return {m.tool_call_id: str(m.content) for m in model.seen[-1] if isinstance(m, ToolMessage)}


# -- HumanInTheLoopMiddleware, batched (its default) -----------------------------------------


async def test_a_create_agent_with_the_middleware_is_taken_as_it_is_and_approve_runs_the_call() -> None:
    model = ScriptedChatModel(respond=calls("api"))
    graph = agent(model)
    assert isinstance(adapter_for(graph), LangGraphAdapter)
    h = Harness(graph, SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.target_id, req.kind, req.tool_name, json.loads(req.args_json)) == ("c1", "tool", "deploy", {"service": "api"})
    assert "Tool execution requires approval" in req.prompt and deployed == []
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="c1"))
    out = await h.finish()
    assert out.success, out.reason
    assert deployed == ["api"] and out.session.completed_results["t1"] == "deployed api"
    [entry] = ledger_of(h.sink.events)
    assert (entry.target_id, entry.outcome, entry.ran_args) == ("c1", Outcome.APPROVED, {"service": "api"})


async def test_batched_calls_are_asked_together_and_a_rejection_reaches_the_model_with_its_reason() -> None:
    model = ScriptedChatModel(respond=calls("api", "db"))
    h = Harness(agent(model), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested", lambda p: p.target_id == "c1")
    await h.wait_event("approval_requested", lambda p: p.target_id == "c2")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="c2", detail="not the database on a Friday"))
    await asyncio.sleep(0.05)
    assert deployed == [] and set(h.runner.session.pending_approvals) == {"c1"}  # one resume, both decided
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="c1"))
    out = await h.finish()
    assert out.success and deployed == ["api"]
    results = tool_results(model)
    assert results["c1"] == "deployed api"
    assert results["c2"] == "User rejected the tool call for `deploy` with reason: not the database on a Friday"
    steps = {s.call_id: s.outcome for s in h.of("agent_step") if s.tool_name == "deploy"}
    assert steps == {"c1": "ok", "c2": "rejected"}


async def test_edited_arguments_go_back_as_an_edit_and_the_tool_runs_with_them() -> None:
    model = ScriptedChatModel(respond=calls("api"))
    h = Harness(agent(model), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="c1", arguments={"service": "api-canary"}))
    out = await h.finish()
    assert out.success and deployed == ["api-canary"]
    result = tool_results(model)["c1"]
    assert "a human reviewer replaced this tool call" in result and result.endswith("deployed api-canary")
    [entry] = ledger_of(h.sink.events)
    assert entry.outcome == Outcome.EDITED_APPROVED and entry.ran_args == {"service": "api-canary"}


async def test_a_rule_approves_before_anyone_is_asked_but_never_for_a_tool_on_the_never_auto_list() -> None:
    rules = RuleBook("run", [Rule("deploy")])
    model = ScriptedChatModel(respond=calls("api"))
    h = Harness(agent(model), SequentialExecutor(), static("t1"), config=RuntimeConfig(approval_rules=rules))
    h.start()
    out = await h.finish()
    assert out.success and deployed == ["api"] and h.of("approval_requested") == []
    [entry] = ledger_of(h.sink.events)
    assert entry.outcome == Outcome.APPROVED_BY_RULE

    deployed.clear()
    guarded = RuleBook("run", [Rule("deploy")], never_auto=["deploy"])
    model = ScriptedChatModel(respond=calls("api"))
    h = Harness(agent(model), SequentialExecutor(), static("t1"), config=RuntimeConfig(approval_rules=guarded))
    h.start()
    await h.wait_event("approval_requested")  # the rule does not apply: a person is asked
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="c1"))
    out = await h.finish()
    assert out.success and deployed == []


# -- only the decisions a review config allows ------------------------------------------------


async def test_per_call_mode_offers_no_edit_where_the_config_allows_none() -> None:
    model = ScriptedChatModel(respond=calls("api", "db"))
    only = {"deploy": {"allowed_decisions": ["approve", "reject"]}}
    h = Harness(agent(model, only, mode="per_call"), SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested", lambda p: p.target_id == "c1")).approval_requested
    await h.wait_event("approval_requested", lambda p: p.target_id == "c2")
    assert dict(req.metadata)["editable"] == "false"  # (v1 readers also find the tool and its arguments there)
    refused = await h.control(ControlKind.APPROVE, target_id="c1", arguments={"service": "other"})
    assert refused.result is AckResult.FAILURE and "no edited arguments" in refused.detail
    assert deployed == [] and "c1" in h.runner.session.pending_approvals
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="c1"))
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="c2", detail="later"))
    out = await h.finish()
    assert out.success and deployed == ["api"]
    assert tool_results(model)["c2"] == "User rejected the tool call for `deploy` with reason: later"


async def test_a_respond_only_tool_is_answered_on_its_behalf() -> None:
    model = ScriptedChatModel(respond=calls("api"))
    ask_user = {"deploy": {"allowed_decisions": ["respond"], "description": "Deploy api now?"}}
    h = Harness(agent(model, ask_user), SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert req.prompt == "Deploy api now?"
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="c1"))
    out = await h.finish()
    assert out.success and deployed == []  # the person answered for the tool; it did not run
    assert tool_results(model)["c1"] == "yes"


async def test_a_respond_only_tool_is_a_question_whose_typed_answer_goes_back_as_respond() -> None:
    model = ScriptedChatModel(respond=calls("api"))
    ask_user = {"deploy": {"allowed_decisions": ["respond"], "description": "Deploy api now?"}}
    h = Harness(agent(model, ask_user), SequentialExecutor(), static("t1"))
    h.start()
    asked = (await h.wait_event("question_asked")).question_asked
    assert (asked.target_id, asked.prompt, asked.free_text) == ("c1", "Deploy api now?", True)
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id="c1", text="only after 18:00"))
    out = await h.finish()
    assert out.success and deployed == []
    assert tool_results(model)["c1"] == "only after 18:00"


async def test_a_rejection_the_config_cannot_take_fails_the_task_saying_so() -> None:
    model = ScriptedChatModel(respond=calls("api"))
    approve_only = {"deploy": {"allowed_decisions": ["approve", "edit"]}}
    h = Harness(agent(model, approve_only), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="c1", detail="no"))
    out = await h.finish()
    assert not out.success and deployed == []
    [failed] = h.of("task_failed")
    assert "allows only approve, edit" in failed.reason


# -- a plain interrupt(value) is a question ----------------------------------------------------


def asking_graph(value: Any) -> Any:
    """A graph whose node asks ``interrupt(value)`` and says what it was answered."""

    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt(value)
        return {"messages": [AIMessage(f"answer {answer!r}")]}

    return StateGraph(MessagesState).add_node("ask", ask).set_entry_point("ask").compile()


@pytest.mark.parametrize(("kind", "answer"), [(ControlKind.APPROVE, True), (ControlKind.REJECT, False)])
async def test_a_plain_interrupt_is_a_question_and_approve_or_reject_resume_it_with_true_or_false(kind: ControlKind, answer: bool) -> None:
    h = Harness(asking_graph("Deploy api?"), SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.kind, req.prompt, req.tool_name, req.task_id) == ("question", "Deploy api?", "", "t1")
    assert ack_ok(await h.control(kind, target_id=req.target_id, detail="" if answer else "not today"))
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results["t1"] == f"answer {answer!r}"
    [entry] = ledger_of(h.sink.events)
    assert entry.kind == "question" and entry.outcome == (Outcome.APPROVED if answer else Outcome.REJECTED)


@pytest.mark.parametrize(("answer", "resumed"), [({"text": "eu-west-1"}, "'eu-west-1'"), ({"text": '{"region": "eu"}'}, "{'region': 'eu'}")])
async def test_a_plain_interrupt_answered_with_answer_resumes_with_the_text_or_the_json_typed(answer: dict[str, str], resumed: str) -> None:
    h = Harness(asking_graph("Which region?"), SequentialExecutor(), static("t1"))
    h.start()
    asked = (await h.wait_event("question_asked")).question_asked
    assert (asked.prompt, list(asked.options), asked.free_text) == ("Which region?", [], True)
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id=asked.target_id, **answer))
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results["t1"] == f"answer {resumed}"
    assert ledger_of(h.sink.events)[0].outcome == Outcome.ANSWERED


async def test_a_plain_interrupt_with_options_offers_them_and_resumes_with_the_one_picked() -> None:
    h = Harness(asking_graph({"question": "Which region?", "options": ["eu", "us"]}), SequentialExecutor(), static("t1"))
    h.start()
    asked = (await h.wait_event("question_asked")).question_asked
    assert list(asked.options) == ["eu", "us"]
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id=asked.target_id, option="us"))
    out = await h.finish()
    assert out.success and out.session.completed_results["t1"] == "answer 'us'"


async def test_a_question_inside_a_tool_of_a_create_agent_resumes_the_tool() -> None:
    @tool
    def release(version: str) -> str:
        """Release a version."""
        return "released" if interrupt(f"Release {version}?") else "not released"

    def respond(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(str(messages[-1].content))
        return AIMessage("", tool_calls=[{"name": "release", "args": {"version": "1.2"}, "id": "r1"}])

    h = Harness(create_agent(ScriptedChatModel(respond=respond), [release]), SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert req.prompt == "Release 1.2?"
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id=req.target_id))
    out = await h.finish()
    assert out.success and out.session.completed_results["t1"] == "released"


async def test_a_question_of_any_json_value_is_shown_as_json_and_cannot_be_edited() -> None:
    h = Harness(asking_graph({"question": "Which region?", "options": ["eu", "us"]}), SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert json.loads(req.prompt) == {"question": "Which region?", "options": ["eu", "us"]}
    refused = await h.control(ControlKind.APPROVE, target_id=req.target_id, arguments={"answer": "eu"})
    assert refused.result is AckResult.FAILURE and "question approval" in refused.detail
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id=req.target_id))
    out = await h.finish()
    assert out.success


# -- GoldfiveMiddleware ------------------------------------------------------------------------


async def test_goldfive_middleware_gives_create_agent_the_reporting_tools_and_injected_messages() -> None:
    first_call = asyncio.Event()
    release = asyncio.Event()

    class Held(ScriptedChatModel):
        calls: int = 0

        async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            self.calls += 1
            if self.calls == 1:
                first_call.set()
                await release.wait()
            return await super()._agenerate(messages, stop, run_manager, **kw)

    def respond(messages: list[BaseMessage]) -> AIMessage:
        heard = [str(m.content) for m in messages if isinstance(m, HumanMessage) and str(m.content).startswith("[user_steering]")]
        if heard:
            return AIMessage("", tool_calls=[{"name": "report_task_completed", "args": {"result": f"heard {heard}"}, "id": "done"}])
        return AIMessage("", tool_calls=[{"name": "report_task_progress", "args": {"detail": "starting"}, "id": "p1"}])

    model = Held(respond=respond)
    graph = create_agent(model, [deploy], middleware=[GoldfiveMiddleware()])
    h = Harness(graph, SequentialExecutor(), static("t1"))
    h.start()
    await asyncio.wait_for(first_call.wait(), 5)
    assert ack_ok(await h.control(ControlKind.INJECT_MESSAGE, text="only the api"))
    await h.wait_event("message_parked")
    release.set()
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results["t1"] == "heard ['[user_steering]only the api[/user_steering]']"
    assert [p.detail for p in h.of("task_progress")] == ["starting"]
    assert [d.lane for d in h.of("message_delivered")] == ["t1"]


async def test_goldfive_middleware_offers_ask_person_and_the_model_reads_the_answer() -> None:
    def respond(messages: list[BaseMessage]) -> AIMessage:
        answered = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "q1"]
        if answered:
            return AIMessage("", tool_calls=[{"name": "report_task_completed", "args": {"result": f"told {answered[0].content}"}, "id": "done"}])
        return AIMessage("", tool_calls=[{"name": "ask_person", "args": {"prompt": "Which region?", "options": ["eu", "us"]}, "id": "q1"}])

    graph = create_agent(ScriptedChatModel(respond=respond), [deploy], middleware=[GoldfiveMiddleware()])
    h = Harness(graph, SequentialExecutor(), static("t1"))
    h.start()
    asked = (await h.wait_event("question_asked")).question_asked
    assert (asked.prompt, list(asked.options), asked.task_id) == ("Which region?", ["eu", "us"], "t1")
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id=asked.target_id, text="eu, but not on Fridays"))
    out = await h.finish()
    assert out.success, out.reason
    told = json.loads(out.session.completed_results["t1"].removeprefix("told "))
    assert told == {"ok": True, "answer": "eu, but not on Fridays", "option": ""}


# -- goldfive run ------------------------------------------------------------------------------


def test_goldfive_run_takes_the_langchain_example_as_it_is(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    import examples.langchain_agent as example
    from goldfive.cli import main

    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(example, "agent", example.build(ScriptedChatModel(respond=example.ship_script)))
    result = CliRunner().invoke(
        main, ["run", "examples.langchain_agent:agent", "--goal", "ship", "--plan", "examples/langchain_plan.json", "--headless"]
    )
    assert result.exit_code == 0, result.output
    assert "3/3 tasks completed" in result.output
    # headless, nobody can approve: the call does not run and the model is told why
    assert 'deploy({"service": "api"}) rejected' in result.output
    assert result.output.count('ship model: [calls: deploy]') == 1  # the middleware's update is the same turn
