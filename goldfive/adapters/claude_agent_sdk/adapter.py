"""ClaudeAgentSDKAdapter: a goldfive task is one query on the run's Claude Code session.

``goldfive run mod:options`` and ``Runner(agent=options)`` build ``ClaudeAgentSDKAdapter(options)``
for a ``claude_agent_sdk.ClaudeAgentOptions`` (see ``goldfive.adapters.frameworks``).

- One ``ClaudeSDKClient`` per goldfive run (conversation.py), one query per task; the run's tasks
  continue one conversation, also across ``goldfive resume`` (the SDK's session resume). Tasks
  the parallel executor runs at the same time as the run's session is busy, and every task with
  ``memory=False``, get a client and session of their own, closed when the task ends.
- Permissions, questions, hooks, injected messages, usage: turn.py.
- CANCEL and STEER interrupt the query within the grace period; the run's client is closed
  when the run ends, so no Claude Code process outlives it.
"""

from __future__ import annotations

import weakref
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

from goldfive.adapters.claude_agent_sdk.conversation import Conversation, session_id_for
from goldfive.adapters.claude_agent_sdk.mcp_config import servers_as_dict
from goldfive.adapters.claude_agent_sdk.turn import FRAMEWORK
from goldfive.adapters.claude_agent_sdk.usage import QueryUsage
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext
from goldfive.run.current_run import current
from goldfive.types import Session, Task

__all__ = ["FRAMEWORK", "ClaudeAgentSDKAdapter"]


class ClaudeAgentSDKAdapter:
    """An AgentAdapter for the Claude Agent SDK (Claude Code).

    ``options`` configure every session (model, tools, cwd, permission mode, the user's own
    hooks and ``can_use_tool``, which goldfive runs before asking a person). Sessions live in
    Claude Code's config directory for ``options.cwd``: a resumed run needs the same ones.
    ``options.mcp_servers`` may be a dict, a path or JSON text (read when the adapter is made;
    McpConfigError when it cannot be): goldfive's reporting server is added to its servers.
    """

    #: Claude Code's tools are its own; goldfive adds only the reporting tools.
    user_tools: tuple[Any, ...] = ()

    def __init__(self, options: ClaudeAgentOptions | None = None, *, name: str = "claude", memory: bool = True) -> None:
        options = options if options is not None else ClaudeAgentOptions()
        if not isinstance(options, ClaudeAgentOptions):
            raise TypeError(f"ClaudeAgentSDKAdapter takes claude_agent_sdk.ClaudeAgentOptions, got {type(options).__name__}")
        if options.permission_prompt_tool_name:
            raise ValueError("goldfive answers Claude Code's permission prompts itself: leave permission_prompt_tool_name unset")
        self.options = options
        #: What every session is made from: ``options`` with a path or JSON text in
        #: ``mcp_servers`` read into a dict, so goldfive's server can be added (mcp_config.py).
        self._session_options = servers_as_dict(options)
        self.name = name
        #: True: the run's tasks continue one conversation; False: each task starts a new one.
        self.memory = memory
        self._runs: weakref.WeakKeyDictionary[RunContext, Conversation] = weakref.WeakKeyDictionary()
        self._usage: dict[str, list[QueryUsage]] = {}  # by session id

    @property
    def available_agents(self) -> list[str]:
        return [self.name]

    def usage(self, session: Session) -> list[QueryUsage]:
        """What each query of ``session``'s run consumed, in order (empty when none ran)."""
        return list(self._usage.get(session.session_id, []))

    async def invoke(self, task: Task, session: Session) -> InvocationResult:
        ctx = current()
        usage = self._usage.setdefault(session.session_id, [])
        conversation = self._runs.get(ctx) if self.memory else None
        if self.memory and conversation is None:
            conversation = Conversation(self._session_options, ctx, session_id=self._session_id(session), on_usage=usage.append)
            self._runs[ctx] = conversation
            ctx.at_end(conversation.close)
        if conversation is not None and not conversation.busy:
            return await conversation.run(task, session)
        own = Conversation(self._session_options, ctx, session_id=None, on_usage=usage.append)
        try:
            return await own.run(task, session)
        finally:
            await own.close()

    def _session_id(self, session: Session) -> str | None:
        """The run's session id, unless the options name a session of their own."""
        o = self.options
        if o.resume or o.session_id or o.continue_conversation:
            return None
        return session_id_for(session.run_id)
