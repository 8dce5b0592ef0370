"""The LLM protocols: the one-shot ``call_llm`` and the chat interface tool-calling agents use.

Messages and tools use the OpenAI chat-completions JSON shapes, so any OpenAI-compatible
server (OpenAI, Ollama, vLLM, llama.cpp) and the offline scripted model are interchangeable.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from goldfive.usage.model import ModelUsage

#: ``async def call_llm(system: str, user: str, model: str) -> str``
CallLLM = Callable[[str, str, str], Awaitable[str]]

#: Every prompt file carries a line ``goldfive-prompt: <kind>`` (the system prompt's first
#: line) so an offline model can tell which question it is answering.
PROMPT_MARKER = "goldfive-prompt:"
_MARKER_RE = re.compile(r"^goldfive-prompt:\s*(\S+)\s*$", re.MULTILINE)


def prompt_kind(text: str) -> str:
    """The kind named by the first marker line in ``text`` ("" when there is none)."""
    m = _MARKER_RE.search(text)
    return m.group(1) if m else ""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    #: The arguments exactly as the model sent them (a JSON object as text, maybe malformed).
    arguments_json: str


@dataclass(frozen=True)
class ChatResult:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = ""
    refusal: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    #: The call's tokens, when the server reported them (the model client has already
    #: recorded them with ``report_usage``; this is for the caller's own use).
    usage: ModelUsage | None = field(default=None, compare=False)


@runtime_checkable
class ChatModel(Protocol):
    """A model usable both by planners (``call_llm``) and by tool-calling agents (``chat``).

    Cancelling the awaiting task cancels the call (and closes any in-flight request).
    """

    async def chat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, model: str = ""
    ) -> ChatResult: ...

    async def call_llm(self, system: str, user: str, model: str = "") -> str: ...
