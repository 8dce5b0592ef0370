"""The gates an adapter awaits before a model or tool call: the run's budget enforced there.

Over budget the run pauses and the call waits until a person raises the budget and the run
goes on (``goldfive.budget.guard``). Outside a run they do nothing.
"""

from __future__ import annotations

from goldfive.run.current_run import current_or_none
from goldfive.usage.report import current_scope

__all__ = ["before_model_call", "before_tool_call"]


async def before_model_call(task_id: str | None = None) -> None:
    """Await before a model call starts: at once within the run's budget; over it, the run
    pauses and this waits until a person raises the budget and the run goes on (raises
    BudgetExhausted when nobody can: no control channel). Cancelling it cancels the wait."""
    await _gate("model_call", task_id)


async def before_tool_call(task_id: str | None = None) -> None:
    """The same, before a tool call starts."""
    await _gate("tool_call", task_id)


async def _gate(where: str, task_id: str | None) -> None:
    ctx = current_or_none()
    if ctx is None:
        return
    guard = ctx.budget
    if guard.reached is None and guard.budget.empty:
        return
    if task_id is None:
        scope = current_scope()
        task_id = scope.task_id if scope is not None and scope.ctx is ctx else ctx.session.current_task_id
    await guard.before_call(where, task_id)
