"""LLM access: the ``call_llm`` / chat protocols, an OpenAI-compatible client, an offline model."""

from goldfive.llm.base import PROMPT_MARKER, CallLLM, ChatModel, ChatResult, ToolCall, prompt_kind
from goldfive.llm.openai_compat import OpenAICompatClient
from goldfive.llm.prompts import load_prompt, render_prompt
from goldfive.llm.scripted import ScriptedCall, ScriptedModel

# A literal list (kept sorted) so type checkers see the re-exports.
__all__ = [
    "CallLLM",
    "ChatModel",
    "ChatResult",
    "OpenAICompatClient",
    "PROMPT_MARKER",
    "ScriptedCall",
    "ScriptedModel",
    "ToolCall",
    "load_prompt",
    "prompt_kind",
    "render_prompt",
]
