"""CallableAdapter: a plain async function as the agent.

``fn`` is ``async def fn(task, session)`` or ``async def fn(task, session, tools)``; it returns
a ``str`` or an ``InvocationResult``. ``tools`` maps each reporting-tool name (and each user
tool's name) to a ReportingToolSpec, callable with keyword arguments. Injected messages for the
running turn: ``await goldfive.read_injected(session, task.id)``.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Iterable

from goldfive.adapters.common import recording_tools
from goldfive.results import InvocationResult
from goldfive.run.current_run import current
from goldfive.run.user_tools import UserTool
from goldfive.types import Session, Task


class CallableAdapter:
    def __init__(
        self,
        fn: Callable[..., Awaitable[Any]],
        available_agents: list[str] | None = None,
        tools: Iterable[UserTool | Callable[..., Any]] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"CallableAdapter needs an async callable, got {type(fn).__name__}")
        self.fn = fn
        self._agents = list(available_agents or [getattr(fn, "__name__", "agent")])
        self.user_tools = [t if isinstance(t, UserTool) else UserTool(t) for t in (tools or [])]
        self._wants_tools = _accepts_three(fn)

    @property
    def available_agents(self) -> list[str]:
        return self._agents

    async def invoke(self, task: Task, session: Session) -> InvocationResult:
        if self._wants_tools:
            ctx = current()
            out = await self.fn(task, session, recording_tools(ctx, task.id, ctx.tools_for(task.id)))
        else:
            out = await self.fn(task, session)
        if isinstance(out, InvocationResult):
            return out
        return InvocationResult(task_id=task.id, text="" if out is None else str(out))


def _accepts_three(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3
