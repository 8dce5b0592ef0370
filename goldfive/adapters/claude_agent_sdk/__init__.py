"""The Claude Agent SDK adapter: a goldfive task is one query on the run's Claude Code session.

``goldfive run mod:options`` and ``Runner(agent=options)`` build ``ClaudeAgentSDKAdapter(options)``
for a ``claude_agent_sdk.ClaudeAgentOptions``. Install with ``pip install 'goldfive[claude-agent-sdk]'``
(the SDK's wheel bundles the Claude Code CLI); the core never imports this package.

- ``adapter``: :class:`ClaudeAgentSDKAdapter` (one session per run, tasks on it);
- ``conversation``: the run's ``ClaudeSDKClient``: options, connect or resume, interrupt, close;
- ``turn``: one task's query: permissions, questions, hooks, injected messages, its end;
- ``tools``: the reporting tools as an in-process MCP server; ``usage``: what a query consumed;
- ``mcp_config``: ``options.mcp_servers`` given as a path or JSON text, read into a dict.
"""

from goldfive.adapters.claude_agent_sdk.adapter import FRAMEWORK, ClaudeAgentSDKAdapter
from goldfive.adapters.claude_agent_sdk.conversation import session_id_for
from goldfive.adapters.claude_agent_sdk.mcp_config import McpConfigError
from goldfive.adapters.claude_agent_sdk.usage import QueryUsage

__all__ = ["FRAMEWORK", "ClaudeAgentSDKAdapter", "McpConfigError", "QueryUsage", "session_id_for"]
