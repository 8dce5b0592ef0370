"""The user's MCP servers as a dict, whatever form ``ClaudeAgentOptions.mcp_servers`` takes.

The SDK takes a dict of servers, a path to an MCP config file, or that file's JSON text. It
hands the last two to Claude Code's ``--mcp-config`` as they are, and only one config goes
there, so goldfive's in-process server (which the SDK serves only when it is named in a dict)
could not be added next to them. A path or a JSON text is therefore read here into the dict
form, the way Claude Code reads it: a text starting with ``{`` is JSON, anything else a file,
a relative one in the session's cwd. The servers in it are passed on unchanged (Claude Code
expands their ``${VAR}``s as it would have); a config that cannot be read is refused with why.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

from goldfive.errors import GoldfiveError

__all__ = ["McpConfigError", "servers_as_dict"]

_SHAPE = '{"mcpServers": {"<name>": {"command": ...} or {"url": ...}}}'


class McpConfigError(GoldfiveError, ValueError):
    """``ClaudeAgentOptions.mcp_servers`` names a config that cannot be read or is not an MCP
    config, so goldfive's reporting tools could not be added to it."""


def servers_as_dict(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    """``options`` with ``mcp_servers`` as a dict (``options`` itself when it is one already).
    Raises McpConfigError naming the file or the text and what is wrong with it."""
    value = options.mcp_servers
    if isinstance(value, dict):
        return options
    return replace(options, mcp_servers=_read(value, options.cwd))


def _read(value: str | Path, cwd: str | Path | None) -> dict[str, Any]:
    if not value:  # "" gives Claude Code no config (the SDK passes none): no servers
        return {}
    if isinstance(value, str) and value.lstrip().startswith("{"):
        where, text = "the config text in ClaudeAgentOptions.mcp_servers", value
    else:
        path = Path(value)
        if not path.is_absolute():
            path = Path(cwd if cwd is not None else os.getcwd()) / path
        where = f"the MCP config file {path} (ClaudeAgentOptions.mcp_servers)"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise McpConfigError(f"cannot read {where}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"{where} is not JSON: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f"{where} is not an MCP config: it needs the shape {_SHAPE}")
    for name, server in servers.items():
        if not isinstance(server, dict) or not any(isinstance(server.get(k), str) for k in ("command", "url")):
            raise McpConfigError(f"{where}: server {name!r} is not an MCP server config (an object with a command or a url)")
    return servers
