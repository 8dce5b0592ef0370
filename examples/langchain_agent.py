"""A LangChain v1 agent for `goldfive run`, built the documented way and steered as it is:

    goldfive run examples.langchain_agent:agent --goal "ship the api" --plan examples/langchain_plan.json

``agent`` is ``create_agent`` with LangChain's own ``HumanInTheLoopMiddleware``: every ``deploy``
call waits for a person. goldfive shows it in the approvals pane under its tool call id; ``a``
approves (it runs), ``e`` edits the arguments first (the middleware's ``edit``), ``x`` rejects
and the model reads your reason. Nothing goldfive-specific is in the agent; add
``goldfive.adapters.langgraph.middleware.GoldfiveMiddleware()`` to its middleware and the model
also gets the reporting tools and messages injected while a task runs. Offline: a scripted fake
chat model (swap in ``init_chat_model("openai:gpt-5")`` and nothing else changes).
"""

from __future__ import annotations

import re
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from examples.langgraph_agent import DELAY_S, ScriptedChatModel


def ship_script(messages: list[BaseMessage]) -> AIMessage:
    """Per task: deploy the service the task names (that asks a person), or just answer."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(f"{last.name}: {last.content}")
    task = next((m for m in reversed(messages) if isinstance(m, HumanMessage) and "Do the current task" in str(m.content)), None)
    title = re.search(r"Do the current task \(\S+\): (.*)", str(task.content) if task else "")
    text = title.group(1) if title else "the task"
    service = re.search(r"deploy (\S+)", text, re.I)
    if service:
        return AIMessage("", tool_calls=[{"name": "deploy", "args": {"service": service.group(1)}, "id": f"deploy-{len(messages)}"}])
    return AIMessage(f"{text}: done")


@tool
def deploy(service: str) -> str:
    """Deploy a service to production (pretend)."""
    return f"deployed {service}"


def build(model: Any = None) -> Any:
    model = model or ScriptedChatModel(respond=ship_script, delay_s=DELAY_S)
    return create_agent(model, [deploy], middleware=[HumanInTheLoopMiddleware(interrupt_on={"deploy": True})], name="ship")


agent = build()
