"""``ClaudeAgentOptions.mcp_servers`` given as a path to an MCP config file or as its JSON text
(the SDK takes dict | str | Path): goldfive's reporting tools are still offered to the model,
next to the user's own servers, through the real SDK and the Claude Code CLI its wheel bundles,
offline (tests/adapters/claude_kit.py); a config that cannot be read is refused when the
adapter is made, naming what is wrong."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from goldfive.adapters.claude_agent_sdk import ClaudeAgentSDKAdapter, McpConfigError
from goldfive.adapters.claude_agent_sdk.tools import allowed_names
from goldfive.approvals import Rule, RuleBook
from goldfive.executors.sequential import SequentialExecutor
from goldfive.run import RuntimeConfig
from tests.adapters.claude_kit import MessagesServer, claude_children, options, task_of, tool_results
from tests.runtime_kit import Harness, static

DONE = "mcp__goldfive__report_task_completed"
ECHO = "mcp__mine__echo"

#: A real stdio MCP server (the mcp package the SDK depends on) with one tool, ``echo``.
_ECHO_SERVER = '''
from mcp.server import MCPServer

server = MCPServer("mine")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


server.run("stdio")
'''


def _config(home: Path) -> dict[str, Any]:
    script = home / "echo_server.py"
    script.write_text(_ECHO_SERVER)
    # alwaysLoad: Claude Code would otherwise defer the user's tool behind its ToolSearch.
    return {"mcpServers": {"mine": {"command": sys.executable, "args": [str(script)], "alwaysLoad": True}}}


def _respond(body: dict[str, Any]) -> list[Any]:
    """Call the user's echo tool, then report the task done with what it said."""
    task, results = task_of(body), tool_results(body)
    if f"done-{task}" in results:
        return [("text", f"finished {task}")]
    if f"{task}-echo" in results:
        return [("tool_use", DONE, {"result": results[f"{task}-echo"]}, f"done-{task}")]
    return [("tool_use", ECHO, {"text": "hi"}, f"{task}-echo")]


@pytest.mark.parametrize("form", ["path", "str path", "relative str path", "json"])
async def test_mcp_servers_as_a_file_or_json_keep_the_users_servers_and_add_goldfives_tools(tmp_path: Path, form: str) -> None:
    config = _config(tmp_path)
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    given: str | Path = {
        "path": tmp_path / "mcp.json",
        "str path": str(tmp_path / "mcp.json"),
        "relative str path": "mcp.json",  # Claude Code reads it from the session's cwd
        "json": json.dumps(config),
    }[form]
    server = MessagesServer(_respond)
    try:
        opts = options(server, tmp_path, mcp_servers=given)
        adapter = ClaudeAgentSDKAdapter(opts)
        assert adapter.options is opts and opts.mcp_servers == given  # the user's options are not changed
        rules = RuntimeConfig(approval_rules=RuleBook("run", [Rule(ECHO)]))  # echo runs without asking a person
        h = Harness(adapter, SequentialExecutor(), static("t1"), config=rules)
        h.start()
        out = await h.finish()
    finally:
        server.close()
    assert out.success, out.reason
    first = next(b for b in server.requests if task_of(b) == "t1")
    offered = {t["name"] for t in first.get("tools") or []}
    assert set(allowed_names()) <= offered, f"goldfive's tools missing from the model's request: {sorted(offered)}"
    assert ECHO in offered  # the user's own server is still there
    # and it ran: the task's result is what the user's tool said
    assert "echo: hi" in out.session.completed_results["t1"]
    assert claude_children() == []


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("missing.json", "cannot read"),
        ('{"mcpServers": {"mine": ', "is not JSON"),
        ('{"mine": {"command": "x"}}', "is not an MCP config"),
        ('{"mcpServers": ["x"]}', "is not an MCP config"),
        ('{"mcpServers": {"mine": {"args": []}}}', "server 'mine' is not an MCP server config"),
        ('{"mcpServers": {"mine": "x"}}', "server 'mine' is not an MCP server config"),
    ],
)
def test_an_mcp_config_that_cannot_be_merged_is_refused_when_the_adapter_is_made(tmp_path: Path, given: str, says: str) -> None:
    from claude_agent_sdk import ClaudeAgentOptions

    with pytest.raises(McpConfigError, match=says) as caught:
        ClaudeAgentSDKAdapter(ClaudeAgentOptions(cwd=str(tmp_path), mcp_servers=given))
    assert isinstance(caught.value, ValueError)
    assert "mcp_servers" in str(caught.value)


def test_a_bad_file_is_named_in_the_refusal(tmp_path: Path) -> None:
    from claude_agent_sdk import ClaudeAgentOptions

    bad = tmp_path / "mcp.json"
    bad.write_text("[1, 2]")
    with pytest.raises(McpConfigError, match=str(bad)):
        ClaudeAgentSDKAdapter(ClaudeAgentOptions(mcp_servers=bad))
