"""The run the calling code belongs to, as a context variable (as temporalio's
``activity.info()`` finds the current activity), not as a back-pointer inside a value.

The Runner (or an executor driven without one) binds the run with ``running(ctx)`` for its
whole life; every task the run starts from there (agents, tools, the steerer, the control
loop) inherits it, since asyncio copies the context into each new task. Code outside a run
(another run's tasks, a test after the run) sees no run, or its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import Context, ContextVar, Token
from typing import TYPE_CHECKING

from goldfive import types as _types
from goldfive.errors import GoldfiveError
from goldfive.inbox import render
from goldfive.run._current_var import CURRENT, bound_to
from goldfive.types import Session

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.context import RunContext

__all__ = ["bind", "context_of", "current", "current_or_none", "read_injected", "run_context", "running"]

_CURRENT: ContextVar[RunContext | None] = CURRENT


def current() -> RunContext:
    """The run the calling task belongs to. Raises GoldfiveError outside a running run."""
    ctx = _CURRENT.get()
    if ctx is None:
        raise GoldfiveError("no goldfive run is running here (goldfive.run.current() is for code a run calls)")
    return ctx


def current_or_none() -> RunContext | None:
    return _CURRENT.get()


@contextmanager
def running(ctx: RunContext) -> Iterator[RunContext]:
    """Bind ``ctx`` as the current run inside the block (and the tasks started in it)."""
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


def bind(ctx: RunContext | None) -> Token[RunContext | None]:
    """Make ``ctx`` the current run of the calling context from here on, for code that holds
    a run outside a ``with running(ctx)`` block (a test's rig); ``_CURRENT.reset(token)``
    undoes it. A task started afterwards inherits it; one started before does not."""
    return _CURRENT.set(ctx)


def run_context(ctx: RunContext) -> Context:
    """A fresh context in which ``ctx`` is the current run: what a run's timer (armed in an
    empty context: goldfive.aio.detached_timer) starts runs as the run's own code does."""
    return bound_to(ctx)


def context_of(session: Session) -> RunContext:
    """The current run, checked to be the one ``session`` belongs to. Raises GoldfiveError
    outside a running run or inside another one."""
    ctx = _CURRENT.get()
    if ctx is None or ctx.session is not session:
        raise GoldfiveError("this session has no running goldfive run here")
    return ctx


async def read_injected(session: Session, task_id: str) -> list[str]:
    """For agents: the injected messages waiting for the turn on ``task_id``, each rendered
    whole inside ``[user_steering]`` tags."""
    return [render(m) for m in await context_of(session).messages.drain(task_id)]


# The deprecated ``Session.context`` asks this module for the run; registered here so the value
# types import nothing of the run.
_types._register_current_run(current_or_none)
