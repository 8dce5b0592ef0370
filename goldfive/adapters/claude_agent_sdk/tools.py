"""goldfive's eight reporting tools for Claude, as one in-process SDK MCP server ("goldfive").

Claude sees them as ``mcp__goldfive__<name>``; they are allowed without asking (they only
report to goldfive). Each call runs the tool of the task the conversation is on
(``current_turn``); a call with no task running says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, Protocol, cast

from claude_agent_sdk import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server

from goldfive.run.context import RunContext
from goldfive.run.tools import OFFERED_TOOL_NAMES, build_tools



class Turn(Protocol):
    """What a reporting tool reads of the running turn (goldfive.adapters.claude_agent_sdk.turn.Turn,
    typed here by its shape so the two modules do not import each other)."""

    ctx: RunContext
    task: Any
    reported: str

__all__ = ["SERVER", "allowed_names", "reporting_server"]

SERVER = "goldfive"
_TERMINAL = ("report_task_completed", "report_task_failed")


def allowed_names() -> list[str]:
    """The reporting tools as Claude names them (for ``allowed_tools``)."""
    return [f"mcp__{SERVER}__{name}" for name in OFFERED_TOOL_NAMES]


def reporting_server(current_turn: Callable[[], Turn | None]) -> dict[str, Any]:
    """The server's entry for ``ClaudeAgentOptions.mcp_servers``.

    ``alwaysLoad``: Claude Code defers MCP tools behind its ToolSearch tool by default, so the
    model's request would carry none of goldfive's tools until the model searched for them
    (report_task_failed, ask_person, the drift reports in effect hidden). With ``alwaysLoad`` on
    this server (Claude Code's per-server setting; the SDK passes an sdk server's keys through
    to it), goldfive's tools are in every request, while the user's own MCP servers keep
    whatever tool search does for them.
    """
    # The schemas do not depend on the run: built from a placeholder context.
    specs = build_tools(cast(RunContext, SimpleNamespace(session=None, steerer=None, user_tools=[])), "")
    tools = [_tool(specs[name].name, specs[name].description, specs[name].parameters, current_turn) for name in OFFERED_TOOL_NAMES]
    config: McpSdkServerConfig = create_sdk_mcp_server(SERVER, tools=tools)
    return {**config, "alwaysLoad": True}


def _tool(name: str, description: str, parameters: dict[str, Any], current_turn: Callable[[], Turn | None]) -> SdkMcpTool[Any]:
    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        turn = current_turn()
        if turn is None:
            out: dict[str, Any] = {"ok": False, "error": f"{name}: no goldfive task is running"}
        else:
            out = await turn.ctx.tools_for(turn.task.id)[name](**args)
            if name in _TERMINAL and out.get("ok"):
                turn.reported = str(args.get("result") or args.get("reason") or "")
        return {"content": [{"type": "text", "text": json.dumps(out, default=str)}], "is_error": out.get("ok") is False}

    return SdkMcpTool(name=name, description=description, input_schema=parameters, handler=handler)
