"""A LangGraph agent for `goldfive run`, runnable offline with a scripted fake chat model:

    goldfive run examples.langgraph_agent:agent --goal "tidy the repo" --plan examples/langgraph_plan.json

``agent`` is a plain ``create_react_agent`` graph. It is built with goldfive's reporting tools
and pre-model hook (so the model can report progress and sees injected messages), and its
``delete_file`` tool asks a person first through LangGraph's ``interrupt()`` (``ask_first``).
Swap ``ScriptedChatModel()`` for a real chat model (``ChatOpenAI(...)``) and nothing else changes.
"""

from __future__ import annotations

import asyncio
import re
import warnings
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, create_react_agent

from goldfive.adapters.langgraph import ask_first, goldfive_pre_model_hook, goldfive_tools

DELAY_S = 0.2  # seconds per model call, so there is time to press keys


class ScriptedChatModel(BaseChatModel):
    """A fake chat model: ``respond(messages)`` gives each answer; every input is kept in ``seen``."""

    respond: Callable[[list[BaseMessage]], AIMessage]
    delay_s: float = 0.0
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self  # the script already knows the tools' names

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.respond(list(messages)))])

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return ChatResult(generations=[ChatGeneration(message=self.respond(list(messages)))])


def tidy_script(messages: list[BaseMessage]) -> AIMessage:
    """Per task: delete the file the task names (that asks first), or just report the work done."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(
            "",
            tool_calls=[{"name": "report_task_completed", "args": {"result": f"{last.name}: {last.content}"}, "id": f"done-{last.tool_call_id}"}],
        )
    task = next((m for m in reversed(messages) if isinstance(m, HumanMessage) and "Do the current task" in str(m.content)), None)
    match = re.search(r"Do the current task \((\S+)\): (.*)", str(task.content) if task else "")
    task_id, title = match.groups() if match else ("t", "the task")
    path = re.search(r"delete (\S+)", title, re.I)
    if path:
        return AIMessage("", tool_calls=[{"name": "delete_file", "args": {"path": path.group(1)}, "id": f"{task_id}-del"}])
    return AIMessage("", tool_calls=[{"name": "report_task_completed", "args": {"result": f"{title}: done"}, "id": f"{task_id}-done"}])


@tool
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    return f"deleted {path}"


def build(model: BaseChatModel | None = None) -> Any:
    model = model or ScriptedChatModel(respond=tidy_script, delay_s=DELAY_S)
    tools = [delete_file, *goldfive_tools()]
    with warnings.catch_warnings():  # create_react_agent is deprecated in favour of langchain's create_agent
        warnings.simplefilter("ignore")
        return create_react_agent(
            model,
            ToolNode(tools, awrap_tool_call=ask_first("delete_file")),
            pre_model_hook=goldfive_pre_model_hook,
            name="tidy",
        )


agent = build()
