"""ScriptedModel: a deterministic offline model for the demo and the tests. No network.

It answers by the prompt's ``goldfive-prompt:`` marker, with text that goes through the same
parsing and validation as a real model's answers.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from goldfive.errors import LLMError
from goldfive.llm.base import ChatResult, prompt_kind
from goldfive.llm.scripted_agent import agent_turn
from goldfive.llm.scripted_plans import answer_drift, answer_generate, answer_goals, answer_review, answer_steer
from goldfive.usage.model import ModelUsage
from goldfive.usage.report import report_usage

#: The model name (and usage source) of the scripted model's usage, when it reports any.
SCRIPTED_MODEL = "scripted"

_TEXT_ANSWERS = {
    "plan.generate": answer_generate,
    "plan.refine.user_steer": answer_steer,
    "plan.refine.drift": answer_drift,
    "goals.derive": answer_goals,
    "approval.review": answer_review,
}

Fault = str | ChatResult | BaseException


@dataclass(frozen=True)
class ScriptedCall:
    """One request the model received (for tests and the demo's log)."""

    kind: str
    system: str
    user: str
    messages: tuple[dict[str, Any], ...] = ()


class ScriptedModel:
    """Implements ChatModel. Each answer first waits ``delay_s * speed`` seconds (cancellable;
    ``speed`` scales the demo's pace, 0 means instant).

    ``faults`` are answered first, one per call, before any scripted answer: a string is returned
    as the answer text, a ChatResult as the chat result, an exception is raised.
    """

    def __init__(
        self, delay_s: float = 0.0, speed: float = 1.0, *, faults: Iterable[Fault] = (), report_usage: bool = False
    ) -> None:
        self.delay_s = delay_s
        self.speed = speed
        #: Report each answer's tokens (estimated: 4 characters a token) as model "scripted",
        #: as a real model client reports its server's figures. The demo turns it on.
        self.report_usage = report_usage
        self.faults: deque[Fault] = deque(faults)
        self.calls: list[ScriptedCall] = []

    async def _wait(self) -> None:
        delay = self.delay_s * self.speed
        if delay > 0:
            await asyncio.sleep(delay)

    async def _report(self, prompt: str, answer: str, started: float) -> None:
        if self.report_usage:
            took = int((time.monotonic() - started) * 1000)
            usage = ModelUsage(SCRIPTED_MODEL, -(-len(prompt) // 4), -(-len(answer) // 4), source=SCRIPTED_MODEL, duration_ms=took)
            await report_usage(usage)

    def _fault(self) -> str | ChatResult | None:
        """The next fault to answer with; an exception fault is raised here."""
        if not self.faults:
            return None
        fault = self.faults.popleft()
        if isinstance(fault, BaseException):
            raise fault
        return fault

    async def call_llm(self, system: str, user: str, model: str = "") -> str:
        kind = prompt_kind(system)
        self.calls.append(ScriptedCall(kind, system, user))
        started = time.monotonic()
        await self._wait()
        fault = self._fault()
        if fault is not None:
            return fault.content if isinstance(fault, ChatResult) else fault
        answer = _TEXT_ANSWERS.get(kind)
        if answer is None:
            raise LLMError(f"scripted model has no script for prompt kind {kind or '(no goldfive-prompt marker)'!r}")
        text = answer(user)
        await self._report(system + user, text, started)
        return text

    async def chat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, model: str = ""
    ) -> ChatResult:
        system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
        user = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        kind = prompt_kind(system)
        self.calls.append(ScriptedCall(kind, system, user, tuple(messages)))
        started = time.monotonic()
        await self._wait()
        fault = self._fault()
        if isinstance(fault, ChatResult):
            return fault
        if fault is not None:
            return ChatResult(content=fault, finish_reason="stop")
        answer = _TEXT_ANSWERS.get(kind)
        result: ChatResult | None = None
        if answer is not None:
            result = ChatResult(content=answer(user), finish_reason="stop")
        elif kind == "agent.task" or tools:
            result = agent_turn(messages, tools)
        if result is not None:
            said = result.content + "".join(c.name + c.arguments_json for c in result.tool_calls)
            await self._report("".join(str(m.get("content") or "") for m in messages), said, started)
            return result
        raise LLMError(f"scripted model has no script for prompt kind {kind or '(no goldfive-prompt marker)'!r}")
