"""The run's Claude Code session: one ``ClaudeSDKClient`` (one Claude Code process), one query
per task, the conversation continued across the run's tasks (the first task's input carries the
goals, the plan and the results, a later task's only what changed since).

The client is built from the user's ``ClaudeAgentOptions`` with goldfive's parts added on a copy
(the user's object is not changed): ``can_use_tool`` (after the user's own, when there is one),
a hook matcher on each hook goldfive records, the reporting tools' in-process MCP server and
those tools in ``allowed_tools``. The session is named after the goldfive run
(:func:`session_id_for`): a run resumed by ``goldfive resume`` in another process finds its
conversation again through the SDK's session resume (``resume=``), as does a run whose client
had to be closed (a turn that would not stop, Claude Code exiting).

Cancelling a task (CANCEL, STEER) interrupts the query (``client.interrupt()``) and reads on to
its result within a share of the grace period; if that does not work in time the client is
closed (its process ended), so nothing is left running and the next task starts a new client on
the same session. The client is closed when the run ends (``RunContext.at_end``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import replace
from typing import Any, cast

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)

from goldfive.adapters.claude_agent_sdk.tools import allowed_names, reporting_server
from goldfive.adapters.claude_agent_sdk.turn import PRE_TOOL_TIMEOUT_S, QUESTION_TOOL, PermissionResult, Turn
from goldfive.adapters.claude_agent_sdk.usage import QueryUsage
from goldfive.adapters.common import task_input
from goldfive.adapters.task_prompt import Told
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext
from goldfive.run.current_run import read_injected
from goldfive.types import Session, Task

__all__ = ["HOOK_EVENTS", "Conversation", "session_id_for"]

log = logging.getLogger("goldfive.adapters.claude_agent_sdk")

#: How long a task's end waits for the SubagentStop hook of a subagent it started (Claude Code
#: can send it just after the query's result).
_SUBAGENT_STOP_WAIT_S = 2.0

#: The hooks recorded as agent steps.
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStart", "SubagentStop", "Notification")
_REPORTING = frozenset(allowed_names())
_NAMESPACE = uuid.UUID("6f1d6c1e-55a4-4b8e-9a55-1f0a6a4e0c5b")


def session_id_for(run_id: str) -> str:
    """The Claude Code session id of a goldfive run (a UUID, the same in every process)."""
    return str(uuid.uuid5(_NAMESPACE, f"goldfive-run:{run_id}"))


class Conversation:
    def __init__(
        self, options: ClaudeAgentOptions, ctx: RunContext, *, session_id: str | None, on_usage: Callable[[QueryUsage], None]
    ) -> None:
        self.user_options = options
        self.ctx = ctx
        #: The session this conversation is on; None: a session of its own that nothing resumes.
        self.session_id = session_id
        self.on_usage = on_usage
        self.turn: Turn | None = None
        self.client: ClaudeSDKClient | None = None
        #: Whether the session exists (a later client resumes it).
        self.started = False
        #: The running cost total the current client's process reported last.
        self._cost_total = 0.0
        self._stderr: deque[str] = deque(maxlen=20)
        self._server = reporting_server(lambda: self.turn)
        #: What the session was told of the run (a conversation of another process, resumed,
        #: gets the whole context again: this one does not know what that one was told).
        self.told = Told()

    @property
    def busy(self) -> bool:
        return self.turn is not None

    # -- one task ----------------------------------------------------------------------
    async def run(self, task: Task, session: Session) -> InvocationResult:
        turn = Turn(self.ctx, session, task, self._write, self._usage_of)
        self.turn = turn
        try:
            client = await self._connected()
            await turn.send([task_input(session, task, self.told, keep=False), *await read_injected(session, task.id)])
            self.told.kept(task.id)
            async with aclosing(_messages(client)) as stream:
                ended = False
                async for message in stream:
                    if await turn.on_message(message):
                        ended = True
                        break
            if not ended:
                await self._drop()
                return InvocationResult(task.id, stop_reason="exited", error=f"Claude Code ended the session{self._said()}")
            await turn.settle(_SUBAGENT_STOP_WAIT_S)
        except asyncio.CancelledError:
            await self._interrupt(turn)
            raise
        except ClaudeSDKError as exc:
            await self._drop()
            return InvocationResult(task.id, stop_reason="framework_error", error=f"{type(exc).__name__}: {exc}{self._said()}")
        finally:
            self.turn = None
        await turn.max_turns_drift()
        return turn.outcome()

    async def _interrupt(self, turn: Turn) -> None:
        """Stop the query in flight and read on to its result, within a share of the grace
        period; otherwise close the client, so its process does not outlive the task."""
        client = self.client
        if client is None:
            return
        budget = max(0.5, min(3.0, 0.6 * self.ctx.config.cancel_grace_s))
        try:
            async with asyncio.timeout(budget):
                await client.interrupt()
                async with aclosing(_messages(client)) as stream:
                    async for message in stream:
                        if isinstance(message, ResultMessage):
                            await turn.finish_query(message)
                            return
        except Exception as exc:  # isolation boundary: whatever went wrong, the client is closed below
            log.warning("could not interrupt Claude Code cleanly (%s); closing its session", type(exc).__name__)
        await self._drop()

    # -- the client ----------------------------------------------------------------------
    async def _connected(self) -> ClaudeSDKClient:
        if self.client is not None:
            return self.client
        if self.session_id is None and self.started:
            # A session the options name: a new client may not continue what this one was told.
            self.told = Told()
        client = ClaudeSDKClient(self._options(resume=self.started))
        try:
            await client.connect()
        except ClaudeSDKError:
            if self.session_id is None or self.started:
                raise
            # The session exists already: this run was resumed (another process ran it before).
            client = ClaudeSDKClient(self._options(resume=True))
            await client.connect()
        self.client, self.started, self._cost_total = client, True, 0.0
        return client

    def _usage_of(self, task_id: str, result: ResultMessage) -> QueryUsage:
        """What ``result``'s query consumed (its cost apart from the process's running total)."""
        usage = QueryUsage.from_result(task_id, result, cost_before=self._cost_total)
        if usage.total_cost_usd is not None:
            self._cost_total = usage.total_cost_usd
        self.on_usage(usage)
        return usage

    def _options(self, *, resume: bool) -> ClaudeAgentOptions:
        user = self.user_options
        hooks: dict[Any, list[HookMatcher]] = {event: list(matchers) for event, matchers in (user.hooks or {}).items()}
        for event in HOOK_EVENTS:  # PreToolUse may hold a call for the budget: a long timeout (turn.py)
            timeout = PRE_TOOL_TIMEOUT_S if event == "PreToolUse" else None
            hooks.setdefault(event, []).append(HookMatcher(hooks=[self._hook], timeout=timeout))
        changes: dict[str, Any] = {"can_use_tool": self._permission, "hooks": hooks, "stderr": self._on_stderr}
        if self.ctx.control is None and QUESTION_TOOL not in user.disallowed_tools:
            # Claude Code offers AskUserQuestion (a schema of about 4.6 KB in every model request)
            # because can_use_tool is set; with no control channel nobody could answer it.
            changes["disallowed_tools"] = [*user.disallowed_tools, QUESTION_TOOL]
        # The adapter hands options whose servers are a dict (a path or JSON text read into one).
        changes["mcp_servers"] = {**cast(dict[str, Any], user.mcp_servers), "goldfive": self._server}
        if self.session_id is not None:
            changes["resume" if resume else "session_id"] = self.session_id
        return replace(user, **changes)

    async def _write(self, messages: list[dict[str, Any]]) -> None:
        if self.client is not None:
            await self.client.query(_each(messages))

    async def _drop(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.disconnect()

    async def close(self) -> None:
        """End the client and its process (the run ended)."""
        await self._drop()

    def _on_stderr(self, line: str) -> None:
        self._stderr.append(line)
        if self.user_options.stderr is not None:
            self.user_options.stderr(line)

    def _said(self) -> str:
        lines = [line.strip() for line in self._stderr if line.strip() and "unrecognized_model" not in line]
        return f" (Claude Code said: {lines[-1][:300]})" if lines else ""

    # -- Claude Code's callbacks (they run in the SDK's tasks) -----------------------------
    async def _permission(self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> PermissionResult:
        turn = self.turn
        if turn is None:
            return PermissionResultDeny(message="no goldfive task is running")
        if tool_name in _REPORTING:  # they only report to goldfive (not in allowed_tools: that would hide the user's shadowing warnings)
            return PermissionResultAllow()
        own = self.user_options.can_use_tool
        if own is not None:  # the agent's own policy first: its denial stands
            verdict = await own(tool_name, tool_input, context)
            if isinstance(verdict, PermissionResultDeny):
                return verdict
            tool_input = verdict.updated_input if verdict.updated_input is not None else tool_input
        return await turn.permission(tool_name, tool_input, context)

    async def _hook(self, data: Any, tool_use_id: str | None, context: Any) -> Any:
        turn = self.turn
        if turn is None or not isinstance(data, dict):
            return {}
        return await turn.hook(data)


async def _each(messages: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for m in messages:
        yield m


def _messages(client: ClaudeSDKClient) -> AsyncGenerator[Any, None]:
    """The client's message stream (an async generator, so it can be closed when left early)."""
    return cast(AsyncGenerator[Any, None], client.receive_messages())
