"""What a graph is built with so goldfive can reach inside a turn (LangGraph and LangChain v1).

A compiled graph's tools (the model's binding and the ``ToolNode``) are fixed when it is
compiled; nothing can add a tool to it afterwards. So a graph that should report progress and
read injected messages mid-turn is built with these: :func:`goldfive_tools` among its tools and
:func:`goldfive_pre_model_hook` as ``create_react_agent``'s ``pre_model_hook`` (a hand-written
graph awaits :func:`injected_messages` in its model node; a LangChain v1 ``create_agent`` takes
``goldfive.adapters.langgraph.middleware.GoldfiveMiddleware``). They find the run and the task in
the run's config; outside goldfive the tools say so and the hook adds nothing.
:func:`ask_first` makes named tools ask a person first (the Agent Inbox request).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import interrupt

from goldfive.adapters.common import to_text
from goldfive.budget.gate import before_model_call
from goldfive.run.context import RunContext
from goldfive.run.current_run import current, read_injected
from goldfive.run.tools import OFFERED_TOOL_NAMES, build_tools
from goldfive.types import Session

__all__ = ["CONFIG_KEY", "Binding", "ask_first", "binding", "goldfive_pre_model_hook", "goldfive_tools", "injected_messages"]

#: The key of the run's config under ``configurable`` that tells goldfive's tools which task runs.
CONFIG_KEY = "goldfive"


@dataclass(frozen=True)
class Binding:
    session: Session
    task_id: str


def binding(config: RunnableConfig | None) -> Binding | None:
    found = ((config or {}).get("configurable") or {}).get(CONFIG_KEY)
    return found if isinstance(found, Binding) else None


def goldfive_tools() -> list[BaseTool]:
    """The reporting tools agents are offered, as LangChain tools, for the graph's model and
    ToolNode (a graph is compiled with them once)."""
    # The schemas do not depend on the run: build them once from a placeholder context.
    specs = build_tools(cast(RunContext, SimpleNamespace(session=None, steerer=None, user_tools=[])), "")
    return [_reporting_tool(specs[name].name, specs[name].description, specs[name].parameters) for name in OFFERED_TOOL_NAMES]


def _reporting_tool(name: str, description: str, parameters: dict[str, Any]) -> BaseTool:
    async def run(config: RunnableConfig, **kwargs: Any) -> dict[str, Any]:
        bound = binding(config)
        if bound is None:
            return {"ok": False, "error": f"{name}: this graph is not running under goldfive"}
        spec = current().tools_for(bound.task_id).get(name)
        if spec is None:
            return {"ok": False, "error": f"{name}: not available in this run"}
        return await spec(**kwargs)

    return StructuredTool(name=name, description=description, args_schema=parameters, coroutine=run)


async def injected_messages(config: RunnableConfig | None) -> list[HumanMessage]:
    """The messages injected into the running task, to add to the model's input (empty outside goldfive)."""
    bound = binding(config)
    if bound is None:
        return []
    # Both hooks that call this run before each model call: over budget the run pauses there.
    await before_model_call(bound.task_id)
    return [HumanMessage(text) for text in await read_injected(bound.session, bound.task_id)]


async def goldfive_pre_model_hook(state: Any, config: RunnableConfig) -> dict[str, Any]:
    """``create_react_agent(..., pre_model_hook=goldfive_pre_model_hook)``: before each model
    call, the injected messages join the thread's messages (so later calls see them too)."""
    return {"messages": await injected_messages(config)}


def ask_first(*tool_names: str) -> Any:
    """A ``ToolNode(tools, awrap_tool_call=ask_first("delete_file"))`` wrapper: a call to a named
    tool interrupts with LangGraph's human-in-the-loop request and runs, runs with edited
    arguments, or returns the person's denial to the model, as the resume value says."""
    names = frozenset(tool_names)

    async def wrapper(request: Any, execute: Any) -> Any:
        call = request.tool_call
        if call["name"] not in names:
            return await execute(request)
        answer = interrupt(
            {
                "action_request": {"action": call["name"], "args": dict(call["args"])},
                "config": {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": False},
                "description": f"Run {call['name']}?",
                "tool_call_id": call["id"],
            }
        )
        kind = answer.get("type") if isinstance(answer, dict) else None
        if kind == "accept":
            return await execute(request)
        if kind == "edit" and isinstance(answer.get("args"), dict) and isinstance(answer["args"].get("args"), dict):
            edited = answer["args"]["args"]
            result = await execute(request.override(tool_call={**call, "args": edited}))
            if isinstance(result, ToolMessage) and isinstance(result.content, str):
                note = f"\n(A person changed the arguments before approving; it ran with {to_text(edited)}.)"
                result = result.model_copy(update={"content": result.content + note})
            return result
        text = answer.get("args") if isinstance(answer, dict) else None
        denial = text if isinstance(text, str) and text else f"The call to {call['name']} was not approved; it did not run."
        return ToolMessage(content=denial, tool_call_id=call["id"], name=call["name"], status="error")

    return wrapper
