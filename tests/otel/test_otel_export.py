"""The OTel export, checked on what an OTLP receiver on loopback decodes: the GenAI tree of a
demo run, usage on chat spans, span events for approvals, controls and drifts, content only
when asked, both protocols and headers from the standard variables."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from goldfive import events
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.demo import DEMO_GOAL, make_demo_runner
from goldfive.errors import GoldfiveError
from goldfive.otel import OTelSink
from goldfive.settings import OTelSettings
from goldfive.sinks.memory import InMemorySink
from goldfive.types import Session
from goldfive.usage import ModelUsage, Purpose, RecordedUsage
from tests.otel.receiver import GrpcReceiver, HttpReceiver, Receiver


async def run_demo(otel: OTelSink, *, pause_first: bool = False) -> str:
    sink, channel = InMemorySink(), ControlChannel()
    runner = make_demo_runner(sinks=[sink, otel], control=channel, speed=40)

    async def operator() -> None:
        async with sink.subscribe() as sub:
            async for ev in sub:
                kind = events.kind_of(ev)
                if kind == "task_started" and pause_first:
                    await channel.send(ControlMessage(ControlKind.STATUS_QUERY, payload={"author": "ana", "client": "ctl"}))
                if kind == "approval_requested":
                    target = ev.approval_requested.target_id
                    await channel.send(ControlMessage(ControlKind.APPROVE, payload={"target_id": target, "author": "ana", "client": "tui"}))

    helper = asyncio.create_task(operator())
    try:
        out = await runner.run(DEMO_GOAL)
    finally:
        helper.cancel()
        await runner.close()
        await otel.shutdown()
    assert out.success, out.reason
    assert runner.session is not None
    return runner.session.run_id


def _settings(rx: Receiver, **kw: Any) -> OTelSettings:
    return OTelSettings(endpoint=rx.endpoint, **kw)


async def test_a_demo_run_is_one_genai_trace_workflow_plan_agents_tools_and_chats() -> None:
    with HttpReceiver() as rx:
        run_id = await run_demo(OTelSink(settings=_settings(rx)), pause_first=True)
    [root] = rx.named("invoke_workflow")
    assert root.name == "invoke_workflow goldfive" and root.parent == b""
    a = root.attrs
    assert (a["gen_ai.operation.name"], a["gen_ai.conversation.id"], a["session.id"]) == ("invoke_workflow", run_id, run_id)
    assert root.resource["service.name"] == "goldfive"
    assert {s.span.trace_id for s in rx.spans} == {root.span.trace_id}  # one trace

    [plan] = rx.named("plan")
    assert plan.parent == root.id and plan.attrs["gen_ai.operation.name"] == "plan"
    plan_chats = [s for s in rx.children(plan) if s.name.startswith("chat ")]
    assert len(plan_chats) == 2  # goal derivation and planning, each one model call

    agents = rx.named("invoke_agent")
    assert sorted(s.attrs["goldfive.task.id"] for s in agents) == ["draft", "outline", "publish", "research", "review"]
    assert all(s.parent == root.id and s.attrs["gen_ai.operation.name"] == "invoke_agent" for s in agents)
    publish = next(s for s in agents if s.attrs["goldfive.task.id"] == "publish")
    tools = {s.attrs["gen_ai.tool.name"]: s for s in rx.children(publish) if s.name.startswith("execute_tool")}
    assert {"publish_deck", "report_task_progress", "report_task_completed"} <= set(tools)
    deck = tools["publish_deck"]
    assert deck.attrs["gen_ai.operation.name"] == "execute_tool" and deck.attrs["goldfive.framework"] == "goldfive"
    # it starts when the call began (its approval's wait included), to the millisecond
    assert deck.span.start_time_unix_nano <= deck.span.end_time_unix_nano

    chats = rx.named("chat ")
    assert all(c.span.kind == c.span.SPAN_KIND_CLIENT for c in chats)
    c = next(c for c in rx.children(publish) if c.name.startswith("chat "))
    assert c.attrs["gen_ai.request.model"] == "scripted" and c.attrs["gen_ai.usage.input_tokens"] > 0
    assert c.attrs["gen_ai.usage.output_tokens"] > 0 and c.attrs["goldfive.usage.cost_usd"] > 0

    [approval] = publish.events("goldfive.approval")
    assert (approval["goldfive.approval.outcome"], approval["goldfive.approval.author"], approval["goldfive.approval.client"]) == (
        "APPROVED", "ana", "tui")
    assert approval["goldfive.approval.timed_out"] is False and approval["goldfive.approval.edited"] is False
    controls = root.events("goldfive.control")
    assert any(e["goldfive.control.kind"] == "STATUS_QUERY" and e["goldfive.control.client"] == "ctl" for e in controls)
    assert any(e["goldfive.control.outcome"] == "SUCCESS" for e in root.events("goldfive.control.ack"))
    # nothing the agent or the person wrote went out
    every = {k for s in rx.spans for k in s.attrs}
    assert not every & {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.input.messages", "gen_ai.output.messages"}


async def test_content_goes_out_only_when_asked() -> None:
    with HttpReceiver() as rx:
        await run_demo(OTelSink(settings=_settings(rx, capture_content=True)))
    [root] = rx.named("invoke_workflow")
    assert DEMO_GOAL in root.attrs["gen_ai.input.messages"]
    deck = next(s for s in rx.named("execute_tool publish_deck"))
    assert '"slides"' in deck.attrs["gen_ai.tool.call.arguments"] and "decks.example.com" in deck.attrs["gen_ai.tool.call.result"]


async def test_grpc_and_headers_from_the_standard_variables() -> None:
    with GrpcReceiver() as rx:
        settings = OTelSettings.from_env({
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint,
            "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20s3cret,x-team=ops",
            "OTEL_SERVICE_NAME": "deck-agents",
        })  # fmt: skip
        await run_demo(OTelSink(settings=settings))
    assert rx.named("invoke_workflow") and rx.named("invoke_agent")
    assert rx.spans[0].resource["service.name"] == "deck-agents"
    assert any(h.get("authorization") == "Bearer s3cret" and h.get("x-team") == "ops" for h in rx.headers)


def test_settings_read_the_standard_variables() -> None:
    s = OTelSettings.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"})
    assert (s.protocol, s.endpoint, s.capture_content) == ("http/protobuf", "http://collector:4318/v1/traces", False)
    s = OTelSettings.from_env({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://x/traces", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
    assert (s.endpoint, s.capture_content) == ("https://x/traces", True)
    assert OTelSettings.from_env({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}).endpoint == "http://localhost:4317"
    with pytest.raises(GoldfiveError, match="http/protobuf"):
        OTelSettings.from_env({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})


async def test_a_chat_span_the_framework_made_is_linked_not_made_twice() -> None:
    s = Session(run_id="r-link", clock=lambda: 1_700_000_000_000)
    framework = RecordedUsage(
        ModelUsage("gemini-2.5-flash", 900, 80, source="adk", otel_trace_id="0af7651916cd43dd8448eb211c80319c", otel_span_id="b7ad6b7169203331"),
        "t1", Purpose.TASK, 0.0004, "prices",
    )  # fmt: skip
    ours = RecordedUsage(ModelUsage("gpt-4o-mini", 100, 10, source="openai_compat"), "t1", Purpose.TASK, 0.0001, "prices")
    stream = [
        events.run_started(s, goal_summary="g"),
        events.task_started(s, "t1", "researcher"),
        events.usage_recorded(s, framework),
        events.usage_recorded(s, ours),
        events.task_completed(s, "t1", "ok"),
        events.run_completed(s, "1/1"),
    ]
    with HttpReceiver() as rx:
        otel = OTelSink(settings=_settings(rx))
        for ev in stream:
            await otel.emit(ev)
        await otel.shutdown()
    [agent] = rx.named("invoke_agent")
    assert [c.attrs["gen_ai.request.model"] for c in rx.children(agent) if c.name.startswith("chat")] == ["gpt-4o-mini"]
    [link] = agent.span.links
    assert link.span_id.hex() == "b7ad6b7169203331" and link.trace_id.hex() == "0af7651916cd43dd8448eb211c80319c"
    assert {a.key for a in link.attributes} >= {"gen_ai.usage.input_tokens", "goldfive.link"}
