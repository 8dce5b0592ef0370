"""Each framework adapter reports every model call's usage, as its framework gives it, through
the one call (``report_usage``): tokens, the cached part, the model, where the figures came from."""

from __future__ import annotations

import warnings
from typing import Any

from langchain_core.messages import AIMessage

from goldfive.executors.sequential import SequentialExecutor
from goldfive.run import RuntimeConfig
from tests.runtime_kit import Harness, static


def usage_of(h: Harness) -> list[Any]:
    return h.of("usage_recorded")


async def test_pydantic_ai_reports_each_responses_request_usage() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=1200, cache_read_tokens=1000, output_tokens=40)
        return ModelResponse(parts=[TextPart("done")], usage=usage, model_name="gpt-4o-mini", provider_response_id="resp-1")

    h = Harness(Agent(FunctionModel(answer, model_name="gpt-4o-mini")), SequentialExecutor(), static("a"))
    h.start()
    assert (await h.finish()).success
    [u] = usage_of(h)
    assert (u.task_id, u.model, u.input_tokens, u.cached_tokens, u.output_tokens, u.source, u.response_id) == (
        "a", "gpt-4o-mini", 1200, 1000, 40, "pydantic_ai", "resp-1")
    assert u.cost_source == "prices" and u.cost_usd > 0
    assert not u.otel_span_id  # the agent is not instrumented: no framework span to link


async def test_openai_agents_reports_the_sdks_usage_with_cached_tokens() -> None:
    from agents import Agent
    from agents.testing import ModelStep, ScriptedModel, assistant_message
    from agents.usage import Usage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    usage = Usage(requests=1, input_tokens=900, output_tokens=30, total_tokens=930,
                  input_tokens_details=InputTokensDetails(cached_tokens=512, cache_write_tokens=0),
                  output_tokens_details=OutputTokensDetails(reasoning_tokens=0))  # fmt: skip
    model = ScriptedModel([ModelStep(output=[assistant_message("done")], usage=usage, response_id="resp-9")])
    agent = Agent(name="worker", instructions="work", model=model)
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    assert (await h.finish()).success
    [u] = usage_of(h)
    assert (u.task_id, u.input_tokens, u.cached_tokens, u.output_tokens, u.source, u.response_id) == (
        "a", 900, 512, 30, "openai_agents", "resp-9")
    # a scripted Model object names no model: the tokens are kept, the cost is not guessed
    assert not u.HasField("cost_usd") and u.cost_source == ""


async def test_adk_reports_usage_metadata_with_thoughts_as_output() -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    from tests.adapters.adk_kit import ScriptedLlm

    meta = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=2000, cached_content_token_count=1500, candidates_token_count=60, thoughts_token_count=40, total_token_count=2100
    )
    reply = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="done")]), usage_metadata=meta, model_version="gemini-2.5-flash")
    llm = ScriptedLlm().script(reply)
    h = Harness(LlmAgent(name="worker", model=llm, instruction="do it"), SequentialExecutor(), static("a"), config=RuntimeConfig(cancel_grace_s=2))
    h.start()
    assert (await h.finish()).success
    [u] = usage_of(h)
    assert (u.task_id, u.model, u.input_tokens, u.cached_tokens, u.output_tokens, u.source) == (
        "a", "gemini-2.5-flash", 2000, 1500, 100, "adk")
    assert u.cost_usd == (500 * 0.3 + 1500 * 0.075 + 100 * 2.5) / 1e6


async def test_langgraph_reports_langchains_usage_metadata() -> None:
    from examples.langgraph_agent import ScriptedChatModel
    from langgraph.prebuilt import create_react_agent

    def respond(messages: list[Any]) -> AIMessage:
        return AIMessage(
            "done", usage_metadata={"input_tokens": 700, "output_tokens": 20, "total_tokens": 720,
                                    "input_token_details": {"cache_read": 300}},
            response_metadata={"model_name": "claude-haiku-4-5-20251001"}, id="msg-1",
        )  # fmt: skip

    with warnings.catch_warnings():  # the tests of this adapter build their graphs the same way
        warnings.simplefilter("ignore")
        graph = create_react_agent(ScriptedChatModel(respond=respond), tools=[])
    h = Harness(graph, SequentialExecutor(), static("a"))
    h.start()
    assert (await h.finish()).success
    [u] = usage_of(h)
    assert (u.task_id, u.model, u.input_tokens, u.cached_tokens, u.output_tokens, u.source, u.response_id) == (
        "a", "claude-haiku-4-5-20251001", 700, 300, 20, "langchain", "msg-1")
    assert u.cost_source == "prices" and u.cost_usd > 0
