"""``GoldfiveMiddleware``: goldfive's reporting tools and injected messages for a LangChain v1
agent (``langchain.agents.create_agent``), as one middleware.

An agent built without it runs under goldfive as it is (approvals, cancel, steer, its steps on
the event stream); with it the model can also report progress and sees a message injected
while the task runs before its next call, instead of at the task's next start::

    agent = create_agent(model, tools, middleware=[HumanInTheLoopMiddleware(...), GoldfiveMiddleware()])

Imported on its own (not from the package root), since a plain LangGraph graph needs no
``langchain``.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langgraph.config import get_config
from langgraph.runtime import Runtime

from goldfive.adapters.langgraph.tools import goldfive_tools, injected_messages

__all__ = ["GoldfiveMiddleware"]


class GoldfiveMiddleware(AgentMiddleware[Any, Any, Any]):
    """The eight reporting tools, and before each model call the messages injected into the
    running task (they join the thread's messages, so later calls see them too). Outside
    goldfive the tools say so and nothing is added."""

    def __init__(self) -> None:
        super().__init__()
        self.tools = goldfive_tools()

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages = await injected_messages(get_config())
        return {"messages": messages} if messages else None
