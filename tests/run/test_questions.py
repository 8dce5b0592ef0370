"""Questions (docs/approvals.md#questions): ``question_asked``, the ANSWER control and its
checks, the ledger, timeouts, the view's "needs you: question", the waiting queue, and
goldfive's own agent asking through ``ask_person`` (the model reads the answer)."""

from __future__ import annotations

import json
from typing import Any

from goldfive.adapters.llm_agent import LLMAgentAdapter
from goldfive.approvals.ledger import Outcome, format_entry, ledger_of
from goldfive.control import AckResult, AppliedAs, ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.goals import PassthroughGoalDeriver
from goldfive.llm.openai_compat import OpenAICompatClient
from goldfive.planners.static import StaticPlanner
from goldfive.run.config import RuntimeConfig
from goldfive.types import Plan, Session, Task
from goldfive.view import RunState
from goldfive.view.attention import attention
from tests.fake_openai_server import FakeChatServer, Reply, chat_answer, tool_call
from tests.runtime_kit import Harness, ScriptedAgent, ack_ok, static


def _asking(answers: list[Any], **ask: Any) -> ScriptedAgent:
    """An agent whose task t1 asks ``ask_person(**ask)`` and keeps what it got back."""
    agent = ScriptedAgent()

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        answers.append(await tools["ask_person"](**ask))
        return "asked"

    agent.on("t1", body)
    return agent


async def test_a_question_is_asked_with_its_options_and_needs_a_person_until_answered() -> None:
    got: list[Any] = []
    h = Harness(_asking(got, prompt="Which region?", options=["eu", "us"]), SequentialExecutor(), static("t1"))
    h.start()
    asked = (await h.wait_event("question_asked")).question_asked
    assert (asked.prompt, list(asked.options), asked.free_text, asked.task_id) == ("Which region?", ["eu", "us"], True, "t1")
    # It is an approval of kind "question" too (what clients that know no questions show).
    [req] = h.of("approval_requested")
    assert (req.kind, req.target_id, req.prompt) == ("question", asked.target_id, "Which region?")
    state = RunState.from_events(h.events)
    need = attention(state)
    assert need is not None and (need.kind, need.reason) == ("question", "question: Which region?")
    [view] = state.approvals.values()
    assert view.is_question and view.options == ("eu", "us") and view.free_text

    ack = await h.control(ControlKind.ANSWER, target_id=asked.target_id, text="eu-west-1, please", author="ann", client="tui")
    assert ack_ok(ack) and ack.applied_as is AppliedAs.ANSWERED
    out = await h.finish()
    assert out.success
    assert got == [{"ok": True, "answer": "eu-west-1, please", "option": ""}]
    [answered] = h.of("question_answered")
    assert (answered.outcome, answered.text, answered.author, answered.client) == ("answered", "eu-west-1, please", "ann", "tui")
    assert attention(RunState.from_events(h.events)) is None
    [entry] = ledger_of(h.events)
    assert (entry.outcome, entry.kind, entry.author, entry.client, entry.reason) == (Outcome.ANSWERED, "question", "ann", "tui", "eu-west-1, please")
    assert "answer: eu-west-1, please" in format_entry(entry) and "by ann via tui" in format_entry(entry)


async def test_an_answer_the_question_cannot_take_is_refused_naming_why_and_nothing_changes() -> None:
    got: list[Any] = []
    h = Harness(_asking(got, prompt="Which region?", options=["eu", "us"], free_text=False), SequentialExecutor(), static("t1"))
    h.start()
    target = (await h.wait_event("question_asked")).question_asked.target_id

    not_offered = await h.control(ControlKind.ANSWER, target_id=target, option="asia")
    assert not_offered.result is AckResult.FAILURE and not_offered.applied_as is AppliedAs.REFUSED
    assert "option 'asia' was not offered (the options: eu / us)" in not_offered.detail
    typed = await h.control(ControlKind.ANSWER, target_id=target, text="eu, I think")
    assert typed.result is AckResult.FAILURE and "takes one of its options, not free text" in typed.detail
    both = await h.control(ControlKind.ANSWER, target_id=target, text="eu", option="eu")
    assert both.result is AckResult.FAILURE and "text or an option, not both" in both.detail
    blank = await h.control(ControlKind.ANSWER, target_id=target, text="  ")
    assert blank.result is AckResult.FAILURE and "answer text is empty" in blank.detail
    unknown = await h.control(ControlKind.ANSWER, target_id="q-nope", text="eu")
    assert unknown.result is AckResult.FAILURE and "no pending question 'q-nope'" in unknown.detail
    assert h.of("question_answered") == [] and target in RunState.from_events(h.events).approvals

    assert ack_ok(await h.control(ControlKind.ANSWER, target_id=target, option="us"))
    assert (await h.finish()).success
    assert got == [{"ok": True, "answer": "us", "option": "us"}]


async def test_answer_on_a_tool_approval_is_refused_and_approve_still_decides_it() -> None:
    from goldfive.adapters.callable import CallableAdapter
    from goldfive.run.user_tools import UserTool

    ran: list[str] = []

    async def deploy(service: str) -> str:
        ran.append(service)
        return "deployed"

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        return str(await tools["deploy"](service="web"))

    h = Harness(CallableAdapter(agent, tools=[UserTool(deploy, requires_approval=True)]), SequentialExecutor(), static("t1"))
    h.start()
    target = (await h.wait_event("approval_requested")).approval_requested.target_id
    refused = await h.control(ControlKind.ANSWER, target_id=target, text="yes")
    assert refused.result is AckResult.FAILURE and "is a tool approval, not a question: APPROVE or REJECT it" in refused.detail
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id=target))
    assert (await h.finish()).success and ran == ["web"]


async def test_an_older_client_answers_a_question_with_approve_and_its_detail_or_reject() -> None:
    got: list[Any] = []
    h = Harness(_asking(got, prompt="Which region?"), SequentialExecutor(), static("t1"))
    h.start()
    target = (await h.wait_event("approval_requested")).approval_requested.target_id
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id=target, detail="us-east"))
    assert (await h.finish()).success
    assert got == [{"ok": True, "answer": "us-east", "option": ""}]
    [answered] = h.of("question_answered")
    assert (answered.outcome, answered.text) == ("yes", "us-east")
    assert ledger_of(h.events)[0].outcome == Outcome.APPROVED

    got.clear()
    h = Harness(_asking(got, prompt="Ship it?"), SequentialExecutor(), static("t1"))
    h.start()
    target = (await h.wait_event("approval_requested")).approval_requested.target_id
    assert ack_ok(await h.control(ControlKind.REJECT, target_id=target, detail="after the freeze"))
    assert (await h.finish()).success
    assert got == [{"ok": True, "answer": "no: after the freeze", "option": ""}]


async def test_a_question_nobody_answers_times_out_into_the_ledger() -> None:
    got: list[Any] = []
    h = Harness(_asking(got, prompt="Still there?", timeout_ms=50), SequentialExecutor(), static("t1"))
    h.start()
    assert (await h.finish()).success
    assert got[0]["ok"] is False and "timeout" in got[0]["error"]
    [answered] = h.of("question_answered")
    assert answered.outcome == "timed_out"
    [entry] = ledger_of(h.events)
    assert (entry.outcome, entry.kind) == (Outcome.TIMED_OUT, "question")
    assert attention(RunState.from_events(h.events)) is None


async def test_a_question_under_the_runs_timeout_policy_times_out_like_an_approval() -> None:
    from goldfive.approvals.policy import ApprovalPolicy, OnTimeout

    got: list[Any] = []
    config = RuntimeConfig(approval_policy=ApprovalPolicy(OnTimeout.REJECT, 0.05))
    h = Harness(_asking(got, prompt="Still there?", options=["yes", "no"]), SequentialExecutor(), static("t1"), config=config)
    h.start()
    assert (await h.finish()).success
    [asked] = h.of("question_asked")
    assert (asked.timeout_ms, asked.on_timeout) == (50, "reject")
    assert got[0]["ok"] is False and ledger_of(h.events)[0].outcome == Outcome.TIMED_OUT


# -- goldfive's own LLM agent: the model calls ask_person and reads the answer -------------


def _call(name: str, args: dict[str, Any], call_id: str) -> Reply:
    return Reply(body=chat_answer(None, tool_calls=[tool_call(call_id, name, args)], finish_reason="tool_calls"))


async def test_goldfives_llm_agent_asks_through_ask_person_and_the_model_reads_the_answer() -> None:
    replies = [
        _call("ask_person", {"prompt": "Which region?", "options": ["eu", "us"]}, "c1"),
        _call("report_task_completed", {"result": "deployed to eu"}, "c2"),
    ]
    with FakeChatServer(replies) as server:
        client = OpenAICompatClient(base_url=server.base_url, model="test-model", api_key="sk-test", max_retries=0)
        plan = Plan(tasks=[Task("t1", "Deploy", "Deploy the service.")])
        h = Harness(
            LLMAgentAdapter(client, model_name="test-model"), SequentialExecutor(), StaticPlanner(plan),
            extra={"goal_deriver": PassthroughGoalDeriver("deploy")},
        )  # fmt: skip
        h.start("deploy")
        asked = (await h.wait_event("question_asked")).question_asked
        assert list(asked.options) == ["eu", "us"]
        assert ack_ok(await h.control(ControlKind.ANSWER, target_id=asked.target_id, option="eu"))
        out = await h.finish()
        await client.aclose()
    assert out.success, out.reason
    offered = {t["function"]["name"] for t in server.requests[0].body["tools"]}
    assert "ask_person" in offered
    tool_message = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"][-1]
    assert tool_message["tool_call_id"] == "c1" and json.loads(tool_message["content"]) == {"ok": True, "answer": "eu", "option": "eu"}
