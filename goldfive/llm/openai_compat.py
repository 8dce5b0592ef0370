"""A client for any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM, llama.cpp).

Cancelling the awaiting task cancels the request and closes its connection (httpx), so a STEER
or CANCEL that interrupts a model call leaves nothing running on our side.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from goldfive.errors import LLMError
from goldfive.llm.base import ChatResult, ToolCall
from goldfive.settings import LLMSettings
from goldfive.usage.report import report_usage, usage_from_openai

#: The ``source`` of the usage this client records.
USAGE_SOURCE = "openai_compat"

#: A Retry-After above this is not waited out: the call fails and says so.
MAX_RETRY_AFTER_S = 30.0
_CONNECT_TIMEOUT_S = 5.0


class OpenAICompatClient:
    """POSTs ``{base_url}/chat/completions``; implements the ChatModel protocol.

    Values not given come from :meth:`LLMSettings.from_env`. 429 and 5xx answers are retried up
    to ``max_retries`` times with exponential backoff (``backoff_s``, doubled each time, or the
    server's Retry-After when that is at most ``MAX_RETRY_AFTER_S``); other failures raise
    :class:`LLMError` at once. ``sleep`` is injectable so tests can observe the waits.
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        env = LLMSettings.from_env()
        self.base_url = (base_url if base_url is not None else env.base_url).rstrip("/")
        self.model = model if model is not None else env.model
        self.api_key = api_key if api_key is not None else env.api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._sleep = sleep
        self._client: httpx.AsyncClient | None = None
        self.requests_sent = 0

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _http(self) -> httpx.AsyncClient:
        # Created lazily so the client binds to the loop that first uses it; reused for pooling.
        if self._client is None:
            timeout = httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, _CONNECT_TIMEOUT_S))
            self._client = httpx.AsyncClient(timeout=timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> "OpenAICompatClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def call_llm(self, system: str, user: str, model: str = "") -> str:
        """The planner protocol. A refusal raises LLMError carrying the model's words."""
        result = await self.chat(
            [{"role": "system", "content": system}, {"role": "user", "content": user}], tools=None, model=model
        )
        if result.refusal and not result.content:
            raise LLMError(f"model refused: {result.refusal}")
        return result.content

    async def chat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, model: str = ""
    ) -> ChatResult:
        use_model = model or self.model
        if not use_model:
            raise LLMError(f"no model configured for {self.url} (pass model= or set GOLDFIVE_LLM_MODEL)")
        body: dict[str, Any] = {"model": use_model, "messages": messages}
        if tools:
            body["tools"] = tools
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        started = time.monotonic()
        response = await self._post_with_retries(body, headers)
        result = _parse_chat(response, self.url)
        usage = usage_from_openai(
            result.raw.get("usage"), model=str(result.raw.get("model") or use_model),
            source=USAGE_SOURCE, response_id=str(result.raw.get("id") or ""),
        )  # fmt: skip
        if usage is not None:
            usage = replace(usage, duration_ms=int((time.monotonic() - started) * 1000))
            result = replace(result, usage=usage)
            # Recorded here, once per call, for whichever run and task this call serves
            # (the planner's, the goal deriver's or an agent's: goldfive.usage.usage_scope).
            await report_usage(usage)
        return result

    async def _post_with_retries(self, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        attempt = 0
        while True:
            try:
                self.requests_sent += 1
                response = await self._http().post(self.url, json=body, headers=headers)
            except httpx.TimeoutException as e:
                raise LLMError(f"model server {self.url} timed out ({type(e).__name__}, limit {self.timeout_s}s)") from e
            except httpx.HTTPError as e:
                raise LLMError(f"model server {self.url} unreachable: {type(e).__name__}: {e}") from e
            status = response.status_code
            if status < 400:
                return response
            retryable = status == 429 or status >= 500
            if not retryable or attempt >= self.max_retries:
                tries = f" after {attempt + 1} attempts" if retryable else ""
                raise LLMError(f"model server {self.url} answered HTTP {status}{tries}: {_error_text(response)}")
            delay = self.backoff_s * (2**attempt)
            retry_after = _retry_after(response)
            if retry_after is not None:
                if retry_after > MAX_RETRY_AFTER_S:
                    raise LLMError(
                        f"model server {self.url} answered HTTP {status} asking to retry after "
                        f"{retry_after:g}s (more than {MAX_RETRY_AFTER_S:g}s): {_error_text(response)}"
                    )
                delay = retry_after
            attempt += 1
            await self._sleep(delay)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:  # an HTTP date: treat as "not small"
        return None


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    except ValueError:
        pass
    return response.text[:200] or "(empty body)"


def _parse_chat(response: httpx.Response, url: str) -> ChatResult:
    try:
        data = response.json()
    except ValueError as e:
        raise LLMError(f"model server {url} sent a non-JSON body (HTTP {response.status_code}): {response.text[:120]!r}") from e

    def bad(what: str) -> LLMError:
        return LLMError(f"model server {url} sent an invalid chat-completions answer: {what}")

    if not isinstance(data, dict):
        raise bad(f"top level is {type(data).__name__}, expected an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise bad("'choices' missing or empty")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise bad("'choices[0].message' missing")
    msg = choice["message"]
    content = msg.get("content") or ""
    if not isinstance(content, str):
        raise bad("'message.content' is not a string")
    calls: list[ToolCall] = []
    for i, tc in enumerate(msg.get("tool_calls") or ()):
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise bad(f"'tool_calls[{i}].function.name' missing")
        args = fn.get("arguments", "")
        if not isinstance(args, str):  # some servers send an object instead of its JSON text
            args = json.dumps(args)
        calls.append(ToolCall(id=str(tc.get("id") or f"call_{i}"), name=fn["name"], arguments_json=args or "{}"))
    return ChatResult(
        content=content,
        tool_calls=tuple(calls),
        finish_reason=str(choice.get("finish_reason") or ""),
        refusal=str(msg.get("refusal") or ""),
        raw=data,
    )
