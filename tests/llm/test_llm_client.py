"""OpenAICompatClient against a real local chat-completions server."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from goldfive.errors import GoldfiveError, LLMError
from goldfive.llm import ChatModel, OpenAICompatClient, ToolCall
from goldfive.settings import DEFAULT_LLM_BASE_URL, LLMSettings
from tests.fake_openai_server import FakeChatServer, Reply, chat_answer, tool_call

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def _client(server: FakeChatServer, **kw: object) -> OpenAICompatClient:
    kw.setdefault("sleep", SleepRecorder())
    return OpenAICompatClient(base_url=server.base_url, model="test-model", api_key="sk-test", **kw)  # type: ignore[arg-type]


async def test_plain_answer_and_the_request_carries_model_messages_and_auth() -> None:
    with FakeChatServer([Reply(body=chat_answer("hello there"))]) as server:
        async with _client(server) as client:
            assert isinstance(client, ChatModel)
            result = await client.chat(MESSAGES)
    assert result.content == "hello there"
    assert result.finish_reason == "stop"
    assert result.tool_calls == ()
    req = server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.body["model"] == "test-model"
    assert req.body["messages"] == MESSAGES
    assert "tools" not in req.body


async def test_tool_calls_are_parsed_and_tools_are_sent() -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]
    answer = chat_answer(None, tool_calls=[tool_call("c1", "lookup", {"q": "x"})], finish_reason="tool_calls")
    with FakeChatServer([Reply(body=answer)]) as server:
        async with _client(server) as client:
            result = await client.chat(MESSAGES, tools=tools, model="other-model")
    assert result.content == ""
    assert result.finish_reason == "tool_calls"
    assert result.tool_calls == (ToolCall(id="c1", name="lookup", arguments_json='{"q": "x"}'),)
    assert server.requests[0].body["tools"] == tools
    assert server.requests[0].body["model"] == "other-model"


async def test_refusal_is_reported_and_call_llm_raises_naming_it() -> None:
    refusal = chat_answer(None, refusal="I can't help with that")
    with FakeChatServer([Reply(body=refusal), Reply(body=refusal)]) as server:
        async with _client(server) as client:
            result = await client.chat(MESSAGES)
            with pytest.raises(LLMError, match="refused: I can't help with that"):
                await client.call_llm("sys", "user", "")
    assert result.refusal == "I can't help with that"
    assert result.content == ""


async def test_length_finish_is_passed_through() -> None:
    with FakeChatServer([Reply(body=chat_answer("truncat", finish_reason="length"))]) as server:
        async with _client(server) as client:
            result = await client.chat(MESSAGES)
    assert (result.content, result.finish_reason) == ("truncat", "length")


async def test_call_llm_sends_system_and_user_and_returns_content() -> None:
    with FakeChatServer([Reply(body=chat_answer('{"a": 1}'))]) as server:
        async with _client(server) as client:
            text = await client.call_llm("the system", "the user", "m2")
    assert text == '{"a": 1}'
    assert server.requests[0].body["messages"] == [
        {"role": "system", "content": "the system"},
        {"role": "user", "content": "the user"},
    ]
    assert server.requests[0].body["model"] == "m2"


async def test_500_then_success_is_retried_with_backoff() -> None:
    sleeps = SleepRecorder()
    with FakeChatServer([Reply(status=500, body={"error": {"message": "boom"}}), Reply(body=chat_answer("fine"))]) as server:
        async with _client(server, sleep=sleeps, backoff_s=0.25) as client:
            result = await client.chat(MESSAGES)
    assert result.content == "fine"
    assert len(server.requests) == 2
    assert client.requests_sent == 2
    assert sleeps.delays == [0.25]


async def test_429_honours_a_small_retry_after() -> None:
    sleeps = SleepRecorder()
    with FakeChatServer([Reply(status=429, headers={"Retry-After": "2"}), Reply(body=chat_answer("ok now"))]) as server:
        async with _client(server, sleep=sleeps, backoff_s=0.1) as client:
            result = await client.chat(MESSAGES)
    assert result.content == "ok now"
    assert sleeps.delays == [2.0]


async def test_429_with_a_long_retry_after_fails_without_waiting() -> None:
    sleeps = SleepRecorder()
    with FakeChatServer([Reply(status=429, headers={"Retry-After": "3600"})]) as server:
        async with _client(server, sleep=sleeps) as client:
            with pytest.raises(LLMError, match="retry after 3600s"):
                await client.chat(MESSAGES)
    assert sleeps.delays == []


async def test_5xx_retries_are_bounded_and_back_off_exponentially() -> None:
    sleeps = SleepRecorder()
    replies = [Reply(status=503, body={"error": {"message": "overloaded"}}) for _ in range(5)]
    with FakeChatServer(replies) as server:
        async with _client(server, sleep=sleeps, max_retries=2, backoff_s=0.5) as client:
            with pytest.raises(LLMError, match=r"HTTP 503 after 3 attempts: overloaded") as err:
                await client.chat(MESSAGES)
    assert server.base_url in str(err.value)
    assert len(server.requests) == 3
    assert sleeps.delays == [0.5, 1.0]


async def test_other_4xx_is_not_retried_and_names_the_server_message() -> None:
    sleeps = SleepRecorder()
    with FakeChatServer([Reply(status=401, body={"error": {"message": "bad key"}})]) as server:
        async with _client(server, sleep=sleeps) as client:
            with pytest.raises(LLMError, match="HTTP 401: bad key"):
                await client.chat(MESSAGES)
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_unreachable_port_raises_llm_error_naming_the_url_promptly() -> None:
    with socket.socket() as s:  # a port that was free a moment ago has no listener now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    client = OpenAICompatClient(base_url=url, model="m", api_key="", timeout_s=30)
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        await client.chat(MESSAGES)
    await client.aclose()
    assert time.monotonic() - started < 5
    assert f"{url}/chat/completions" in str(err.value)
    assert "unreachable" in str(err.value)
    assert isinstance(err.value, GoldfiveError)


async def test_non_json_body_raises_llm_error_saying_so() -> None:
    with FakeChatServer([Reply(body="<html>gateway</html>")]) as server:
        async with _client(server) as client:
            with pytest.raises(LLMError, match=r"non-JSON body \(HTTP 200\).*gateway"):
                await client.chat(MESSAGES)


async def test_shape_invalid_body_names_the_missing_part() -> None:
    with FakeChatServer([Reply(body={"id": "x"}), Reply(body={"choices": [{"finish_reason": "stop"}]})]) as server:
        async with _client(server) as client:
            with pytest.raises(LLMError, match="'choices' missing"):
                await client.chat(MESSAGES)
            with pytest.raises(LLMError, match=r"'choices\[0\]\.message' missing"):
                await client.chat(MESSAGES)


async def test_cancelling_the_caller_closes_the_in_flight_request() -> None:
    with FakeChatServer([Reply(hang=True)]) as server:
        async with _client(server) as client:
            task = asyncio.create_task(client.chat(MESSAGES))
            assert await asyncio.to_thread(server.hang_started.wait, 5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The server's blocked read returns EOF only once our side closed the socket.
            assert await asyncio.to_thread(server.hang_closed.wait, 5)


async def test_a_server_that_never_answers_times_out_with_llm_error() -> None:
    with FakeChatServer([Reply(hang=True)]) as server:
        async with _client(server, timeout_s=0.2) as client:
            with pytest.raises(LLMError, match=r"timed out \(ReadTimeout, limit 0.2s\)") as err:
                await client.chat(MESSAGES)
    assert server.base_url in str(err.value)


async def test_consecutive_calls_reuse_one_pooled_connection() -> None:
    with FakeChatServer() as server:
        async with _client(server) as client:
            await client.chat(MESSAGES)
            await client.chat(MESSAGES)
    assert len(server.requests) == 2
    assert server.requests[0].client_port == server.requests[1].client_port


async def test_missing_model_is_a_clear_error() -> None:
    client = OpenAICompatClient(base_url="http://127.0.0.1:9/v1", model="", api_key="")
    with pytest.raises(LLMError, match="no model configured"):
        await client.chat(MESSAGES)


def test_settings_read_goldfive_names_then_openai_fallbacks() -> None:
    assert LLMSettings.from_env({}) == LLMSettings(DEFAULT_LLM_BASE_URL, "", "")
    fallback = LLMSettings.from_env({"OPENAI_BASE_URL": "http://o/v1", "OPENAI_API_KEY": "ok"})
    assert (fallback.base_url, fallback.api_key) == ("http://o/v1", "ok")
    own = LLMSettings.from_env(
        {
            "GOLDFIVE_LLM_BASE_URL": "http://g/v1",
            "OPENAI_BASE_URL": "http://o/v1",
            "GOLDFIVE_LLM_MODEL": "llama3",
            "GOLDFIVE_LLM_API_KEY": "gk",
            "OPENAI_API_KEY": "ok",
        }
    )
    assert own == LLMSettings("http://g/v1", "llama3", "gk")


def test_client_takes_missing_values_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDFIVE_LLM_BASE_URL", "http://env-host:1234/v1/")
    monkeypatch.setenv("GOLDFIVE_LLM_MODEL", "env-model")
    monkeypatch.setenv("GOLDFIVE_LLM_API_KEY", "env-key")
    client = OpenAICompatClient(model="arg-model")
    assert client.url == "http://env-host:1234/v1/chat/completions"
    assert (client.model, client.api_key) == ("arg-model", "env-key")
