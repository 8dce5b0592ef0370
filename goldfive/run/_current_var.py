"""The context variable that holds the current run, alone in a module that imports nothing of
the run, so the run's context (goldfive.run.context) can bind itself without importing
goldfive.run.current_run, which names the RunContext type."""

from __future__ import annotations

from contextvars import Context, ContextVar
from typing import Any

#: The current run (a RunContext) or None; read and set through goldfive.run.current_run.
CURRENT: ContextVar[Any] = ContextVar("goldfive_current_run", default=None)


def bound_to(run: Any) -> Context:
    """A fresh context in which ``run`` is the current run."""
    context = Context()
    context.run(CURRENT.set, run)
    return context
