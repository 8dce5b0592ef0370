"""Each framework adapter with a hook before the model call holds the next call once the budget
is used up (the call in flight finished), and lets it go once a person raises the budget."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from goldfive import Budget
from goldfive.control import AppliedAs, ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.run import RuntimeConfig
from tests.runtime_kit import Harness, static

CONFIG = RuntimeConfig(budget=Budget(model_calls=1), cancel_grace_s=2)


async def _held_then_raised(h: Harness, calls: Any) -> None:
    """The first model call uses the budget up: the second does not start until BUDGET."""
    h.start()
    reached = await h.wait_event("budget_reached")
    assert reached.budget_reached.detail == "model_calls 1 of 1"
    await asyncio.sleep(0.3)  # time enough for a framework to start its next call, were it let
    assert calls() == 1
    assert len(h.of("usage_recorded")) == 1
    ack = await h.control(ControlKind.BUDGET, model_calls=5, resume=True)
    assert ack.applied_as == AppliedAs.BUDGET_SET_RESUMED, ack.detail
    out = await h.finish()
    assert out.success, out.reason
    assert calls() == 2


async def test_pydantic_ai_holds_the_next_model_request() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    seen: list[int] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(1)
        usage = RequestUsage(input_tokens=100, output_tokens=10)
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("report_task_progress", {"detail": "half"}, tool_call_id="p1")], usage=usage, model_name="gpt-4o-mini")
        return ModelResponse(parts=[TextPart("done")], usage=usage, model_name="gpt-4o-mini")

    h = Harness(Agent(FunctionModel(answer, model_name="gpt-4o-mini")), SequentialExecutor(), static("a"), config=CONFIG)
    await _held_then_raised(h, lambda: len(seen))


async def test_openai_agents_hold_the_next_model_call() -> None:
    from agents import Agent
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
    from agents.usage import Usage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    def usage() -> Usage:
        return Usage(requests=1, input_tokens=100, output_tokens=10, total_tokens=110,
                     input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
                     output_tokens_details=OutputTokensDetails(reasoning_tokens=0))  # fmt: skip

    model = ScriptedModel([
        ModelStep(output=[function_call("report_task_progress", {"detail": "half"}, call_id="p1")], usage=usage()),
        ModelStep(output=[assistant_message("done")], usage=usage()),
    ])  # fmt: skip
    h = Harness(Agent(name="worker", instructions="work", model=model), SequentialExecutor(), static("a"), config=CONFIG)
    await _held_then_raised(h, lambda: len(model.calls))


async def test_adk_holds_the_next_model_call_in_before_model_callback() -> None:
    from google.adk.agents import LlmAgent

    from tests.adapters.adk_kit import ScriptedLlm, call, say

    llm = ScriptedLlm().script(call("report_task_progress", detail="half"), say("done"))
    h = Harness(LlmAgent(name="worker", model=llm, instruction="do it"), SequentialExecutor(), static("a"), config=CONFIG)
    await _held_then_raised(h, lambda: len(llm.seen))


async def test_langgraph_holds_the_next_model_call_in_goldfives_pre_model_hook() -> None:
    from examples.langgraph_agent import ScriptedChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langgraph.prebuilt import ToolNode, create_react_agent

    from goldfive.adapters.langgraph import goldfive_pre_model_hook, goldfive_tools

    usage = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}

    def respond(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage("done", usage_metadata=usage, response_metadata={"model_name": "gpt-4o-mini"})  # type: ignore[arg-type]
        return AIMessage("", tool_calls=[{"name": "report_task_progress", "args": {"detail": "half"}, "id": "p1"}],
                         usage_metadata=usage, response_metadata={"model_name": "gpt-4o-mini"})  # type: ignore[arg-type]  # fmt: skip

    model = ScriptedChatModel(respond=respond, seen=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(model, ToolNode(goldfive_tools()), pre_model_hook=goldfive_pre_model_hook)
    h = Harness(graph, SequentialExecutor(), static("a"), config=CONFIG)
    await _held_then_raised(h, lambda: len(model.seen))
