"""LLMAgentAdapter against a real local chat-completions server (tests/fake_openai_server.py)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from typing import Any

import pytest

from goldfive import events
from goldfive.adapters.llm_agent import LLMAgentAdapter
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.goals import PassthroughGoalDeriver
from goldfive.llm.openai_compat import OpenAICompatClient
from goldfive.planners.static import StaticPlanner
from goldfive.pb.goldfive.v1 import types_pb2
from goldfive.results import ExecutionOutcome
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.run.tools import OFFERED_TOOL_NAMES
from goldfive.run.user_tools import UserTool
from goldfive.types import Plan, Task
from tests.fake_openai_server import FakeChatServer, Reply, chat_answer, tool_call


def _call(name: str, args: dict[str, Any], call_id: str = "c1") -> Reply:
    return Reply(body=chat_answer(None, tool_calls=[tool_call(call_id, name, args)], finish_reason="tool_calls"))


def _raw_call(name: str, arguments: str) -> Reply:
    tc = {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return Reply(body=chat_answer(None, tool_calls=[tc], finish_reason="tool_calls"))


class Harness:
    def __init__(self, base_url: str, *, tools: list[Any] = (), max_steps: int = 12, control: ControlChannel | None = None) -> None:  # type: ignore[assignment]
        self.client = OpenAICompatClient(base_url=base_url, model="test-model", api_key="sk-test", max_retries=0)
        self.adapter = LLMAgentAdapter(self.client, model_name="test-model", tools=tools, max_steps=max_steps)
        self.sink = InMemorySink()
        plan = Plan(tasks=[Task("t1", "Write the intro", "Two paragraphs about goldfive.")])
        self.runner = Runner(
            agent=self.adapter,
            planner=StaticPlanner(plan),
            goal_deriver=PassthroughGoalDeriver("document goldfive"),
            sinks=[self.sink],
            control=control,
        )

    async def run(self) -> ExecutionOutcome:
        try:
            return await self.runner.run("document goldfive")
        finally:
            await self.runner.close()
            await self.client.aclose()

    def of(self, kind: str) -> list[Any]:
        return [getattr(e, kind) for e in self.sink.events if events.kind_of(e) == kind]

    def drifts(self, kind: str) -> list[Any]:
        return [d for d in self.of("drift_detected") if d.kind == types_pb2.DriftKind.Value(f"DRIFT_KIND_{kind}")]


def _tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def test_tool_loop_reports_progress_then_completion_and_stops_there() -> None:
    replies = [
        _call("report_task_progress", {"detail": "outlined both paragraphs", "fraction": 0.5}),
        _call("report_task_completed", {"result": "intro written"}, "c2"),
    ]
    with FakeChatServer(replies) as server:
        h = Harness(server.base_url)
        outcome = await h.run()
    assert outcome.success, outcome.reason
    assert len(server.requests) == 2  # terminal after report_task_completed: no extra model call
    first = server.requests[0].body
    assert first["model"] == "test-model"
    offered = {t["function"]["name"] for t in first["tools"]}
    assert set(OFFERED_TOOL_NAMES) <= offered and "report_task_started" not in offered
    system = first["messages"][0]["content"]
    assert "document goldfive" in system and "Write the intro" in system and "- t1 [RUNNING]" in system
    progress = h.of("task_progress")
    assert [(p.task_id, p.detail, p.fraction) for p in progress] == [("t1", "outlined both paragraphs", 0.5)]
    assert [c.result_summary for c in h.of("task_completed")] == ["intro written"]
    # The second request carries the assistant's tool call and the tool's JSON result.
    second = server.requests[1].body["messages"]
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"][0]["function"]["name"] == "report_task_progress"
    assert json.loads(second[-1]["content"])["ok"] is True and second[-1]["tool_call_id"] == "c1"


async def test_report_task_started_is_not_offered_but_a_call_to_it_still_runs() -> None:
    replies = [_call("report_task_started", {}), Reply(body=chat_answer("done"))]
    with FakeChatServer(replies) as server:
        h = Harness(server.base_url)
        outcome = await h.run()
    assert outcome.success, outcome.reason
    assert "report_task_started" not in {t["function"]["name"] for t in server.requests[0].body["tools"]}
    answer = json.loads(server.requests[1].body["messages"][-1]["content"])
    assert answer["ok"] is True and answer["status"] == "RUNNING"  # an old prompt's call: accepted, no error


async def test_a_final_text_answer_completes_the_task_with_that_text() -> None:
    with FakeChatServer([Reply(body=chat_answer("Here is the intro."))]) as server:
        h = Harness(server.base_url)
        outcome = await h.run()
    assert outcome.success
    assert [c.result_summary for c in h.of("task_completed")] == ["Here is the intro."]


@pytest.mark.parametrize(
    "reply",
    [chat_answer(None, refusal="I can't help with that"), chat_answer("", finish_reason="content_filter")],
    ids=["refusal", "content_filter"],
)
async def test_a_refusal_is_an_agent_refusal_drift_and_fails_the_task(reply: dict[str, Any]) -> None:
    with FakeChatServer([Reply(body=reply)]) as server:
        h = Harness(server.base_url)
        outcome = await h.run()
    assert not outcome.success
    [drift] = h.drifts("AGENT_REFUSAL")
    assert drift.severity == types_pb2.DRIFT_SEVERITY_WARNING and drift.current_task_id == "t1"
    assert "refused" in drift.detail
    assert "refused" in h.of("task_failed")[0].reason


async def test_a_length_finish_is_context_pressure() -> None:
    with FakeChatServer([Reply(body=chat_answer("The intro is cut", finish_reason="length"))]) as server:
        h = Harness(server.base_url)
        outcome = await h.run()
    [drift] = h.drifts("CONTEXT_PRESSURE")
    assert drift.severity == types_pb2.DRIFT_SEVERITY_WARNING
    assert "length" in drift.detail
    assert outcome.success  # the partial answer is the result; the drift records the pressure
    assert h.of("task_completed")[0].result_summary == "The intro is cut"


async def test_the_step_limit_is_too_many_steps_and_fails_the_task() -> None:
    replies = [_call("report_task_progress", {"detail": f"step {i}"}, f"c{i}") for i in range(5)]
    with FakeChatServer(replies) as server:
        h = Harness(server.base_url, max_steps=3)
        outcome = await h.run()
    assert len(server.requests) == 3
    [drift] = h.drifts("TOO_MANY_STEPS")
    assert drift.severity == types_pb2.DRIFT_SEVERITY_WARNING and "3 model calls" in drift.detail
    assert not outcome.success and "step limit exceeded" in outcome.reason


async def test_a_raising_tool_is_a_tool_error_drift_and_the_model_reads_the_error() -> None:
    def lookup(query: str) -> str:
        """Look something up."""
        raise RuntimeError("search index offline")

    replies = [_call("lookup", {"query": "goldfive"}), Reply(body=chat_answer("wrote it without the lookup"))]
    with FakeChatServer(replies) as server:
        h = Harness(server.base_url, tools=[lookup])
        outcome = await h.run()
    assert outcome.success
    [drift] = h.drifts("TOOL_ERROR")
    assert "search index offline" in drift.detail
    [tool_msg] = _tool_messages(server.requests[1].body)
    assert "search index offline" in tool_msg["content"] and json.loads(tool_msg["content"])["ok"] is False
    assert server.requests[0].body["tools"][-1]["function"]["parameters"]["required"] == ["query"]


async def test_invalid_json_arguments_go_back_to_the_model_with_a_schema_violation() -> None:
    replies = [_raw_call("report_task_progress", '{"detail": "half'), Reply(body=chat_answer("done"))]
    with FakeChatServer(replies) as server:
        h = Harness(server.base_url)
        outcome = await h.run()
    assert outcome.success
    [drift] = h.drifts("SCHEMA_VIOLATION")
    assert drift.severity == types_pb2.DRIFT_SEVERITY_INFO and "not valid JSON" in drift.detail
    [tool_msg] = _tool_messages(server.requests[1].body)
    assert "not valid JSON" in json.loads(tool_msg["content"])["error"]
    assert h.of("task_progress") == []  # the malformed call never ran


async def test_an_unknown_tool_name_is_reported_back_to_the_model() -> None:
    replies = [_call("delete_everything", {}), Reply(body=chat_answer("done"))]
    with FakeChatServer(replies) as server:
        h = Harness(server.base_url)
        await h.run()
    [tool_msg] = _tool_messages(server.requests[1].body)
    assert "unknown tool 'delete_everything'" in tool_msg["content"]
    assert h.drifts("SCHEMA_VIOLATION")


async def test_an_injected_message_is_delivered_before_the_next_model_call() -> None:
    gate = threading.Event()
    replies = [
        Reply(body=_call("report_task_progress", {"detail": "drafting"}).body, gate=gate),
        Reply(body=chat_answer("short intro")),
    ]
    channel = ControlChannel()
    with FakeChatServer(replies) as server:
        h = Harness(server.base_url, control=channel)
        parked = asyncio.Event()

        async def inject_while_the_server_holds_the_answer() -> None:
            async with h.sink.subscribe() as sub:
                await asyncio.to_thread(server.gate_reached.wait, 10)
                await channel.send(ControlMessage(ControlKind.INJECT_MESSAGE, payload={"text": "use short sentences"}))
                async for ev in sub:
                    if events.kind_of(ev) == "message_parked":
                        parked.set()
                        break
            gate.set()

        helper = asyncio.create_task(inject_while_the_server_holds_the_answer())
        outcome = await h.run()
        await helper
    assert outcome.success and parked.is_set()
    first_users = [m["content"] for m in server.requests[0].body["messages"] if m["role"] == "user"]
    second_users = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "user"]
    assert "[user_steering]use short sentences[/user_steering]" not in first_users
    assert second_users[-1] == "[user_steering]use short sentences[/user_steering]"
    [delivered] = h.of("message_delivered")
    assert (delivered.lane, delivered.via) == ("t1", "boundary")


async def test_a_cancel_closes_the_in_flight_request_and_ends_the_run() -> None:
    channel = ControlChannel()
    with FakeChatServer([Reply(hang=True)]) as server:
        h = Harness(server.base_url, control=channel)

        async def cancel_when_the_request_hangs() -> None:
            await asyncio.to_thread(server.hang_started.wait, 10)
            await channel.send(ControlMessage(ControlKind.CANCEL, payload={"reason": "stop now"}))

        helper = asyncio.create_task(cancel_when_the_request_hangs())
        started = time.monotonic()
        outcome = await h.run()
        await helper
        closed = await asyncio.to_thread(server.hang_closed.wait, 5)
    assert time.monotonic() - started < 3
    assert not outcome.success and "stop now" in outcome.reason
    assert closed  # the server saw the client close the connection
    assert [c.task_id for c in h.of("task_cancelled")] == ["t1"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_an_unreachable_server_ends_the_run_quickly_with_a_reason_naming_the_url() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    h = Harness(url)
    started = time.monotonic()
    outcome = await asyncio.wait_for(h.run(), 10)
    assert time.monotonic() - started < 3
    assert not outcome.success
    assert f"{url}/chat/completions" in outcome.reason and "unreachable" in outcome.reason
    assert events.kind_of(h.sink.events[-1]) == "run_aborted"
    assert url in h.sink.events[-1].run_aborted.reason
    assert url in h.of("task_failed")[0].reason


def test_max_steps_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_steps"):
        LLMAgentAdapter(OpenAICompatClient(base_url="http://127.0.0.1:1/v1", model="m"), max_steps=0)


def test_user_tools_accept_plain_functions_and_usertools() -> None:
    def ping() -> str:
        return "pong"

    adapter = LLMAgentAdapter(
        OpenAICompatClient(base_url="http://127.0.0.1:1/v1", model="m"),
        tools=[ping, UserTool(ping, name="ping2", requires_approval=True)],
        name="writer",
    )
    assert [t.name for t in adapter.user_tools] == ["ping", "ping2"]
    assert adapter.user_tools[1].needs_approval({}) is True
    assert adapter.available_agents == ["writer"]
