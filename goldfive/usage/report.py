"""Reporting a model call: the one function every adapter and model client calls.

``await report_usage(usage, session=session, task_id=task.id)`` records one call of a task's
agent. Without ``session`` the call is attributed to what the current asyncio context is
running for: the executor opens a scope around each agent invocation and the Runner around the
planner and the goal deriver (``usage_scope``), so a model client deep inside them (goldfive's
OpenAI-compatible client, the offline scripted model) reports without being told which run or
task it serves. Outside any run nothing is recorded and None is returned.

Adapters normalise their framework's figures into a ``ModelUsage`` first; the
``usage_from_*`` helpers here cover the plain-dict shapes (OpenAI chat completions and
Responses, Anthropic Messages) so an adapter has no arithmetic to get wrong.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from goldfive.usage.model import ModelUsage, Purpose, RecordedUsage

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.context import RunContext
    from goldfive.types import Session

__all__ = [
    "UsageScope",
    "current_scope",
    "report_usage",
    "usage_from_anthropic",
    "usage_from_openai",
    "usage_scope",
]


@dataclass(frozen=True, slots=True)
class UsageScope:
    ctx: RunContext
    task_id: str
    purpose: Purpose


_SCOPE: ContextVar[UsageScope | None] = ContextVar("goldfive_usage_scope", default=None)


def current_scope() -> UsageScope | None:
    return _SCOPE.get()


def open_scope(ctx: RunContext, task_id: str, purpose: Purpose = Purpose.TASK) -> Token[UsageScope | None]:
    """``usage_scope`` without the context manager (the executor's per-task path: no
    generator frame per invocation); ``close_scope`` the returned token in a ``finally``."""
    return _SCOPE.set(UsageScope(ctx, task_id, purpose))


def close_scope(token: Token[UsageScope | None]) -> None:
    _SCOPE.reset(token)


@contextmanager
def usage_scope(ctx: RunContext, task_id: str = "", purpose: Purpose = Purpose.TASK) -> Iterator[UsageScope]:
    """Attribute the model calls made inside this block (in this asyncio context and the tasks
    it starts) to ``task_id`` of the run ``ctx``."""
    scope = UsageScope(ctx, task_id, purpose)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


async def report_usage(
    usage: ModelUsage, *, session: Session | None = None, task_id: str | None = None
) -> RecordedUsage | None:
    """Record one model call: priced, on the event stream (``usage_recorded``), in the totals.

    With ``session`` the call belongs to that run (and to ``task_id``, else to the current
    scope's task when it is the same run, else the session's current task); without it, to
    the current scope. Returns what was recorded, or None outside any run."""
    scope = _SCOPE.get()
    if session is not None:
        from goldfive.run.current_run import current_or_none

        ctx = current_or_none()
        if ctx is None or ctx.session is not session:
            return None
        if task_id is None:
            task_id = scope.task_id if scope is not None and scope.ctx is ctx else session.current_task_id
        purpose = scope.purpose if scope is not None and scope.ctx is ctx else Purpose.TASK
        return await ctx.usage.record(usage, task_id=task_id, purpose=purpose)
    if scope is None:
        return None
    return await scope.ctx.usage.record(usage, task_id=scope.task_id if task_id is None else task_id, purpose=scope.purpose)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_from_openai(data: Mapping[str, Any] | None, *, model: str, source: str, response_id: str = "") -> ModelUsage | None:
    """From an OpenAI ``usage`` object: chat completions (``prompt_tokens``,
    ``completion_tokens``, ``prompt_tokens_details.cached_tokens``) or Responses
    (``input_tokens``, ``output_tokens``, ``input_tokens_details.cached_tokens``). None when
    there is no usage (some compatible servers send none)."""
    if not isinstance(data, Mapping):
        return None
    inp = _int(data.get("prompt_tokens")) or _int(data.get("input_tokens"))
    out = _int(data.get("completion_tokens")) or _int(data.get("output_tokens"))
    details = data.get("prompt_tokens_details") or data.get("input_tokens_details") or {}
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    if not (inp or out):
        return None
    return ModelUsage(model=model, input_tokens=inp, output_tokens=out, cached_tokens=min(cached, inp), source=source, response_id=response_id)


def usage_from_anthropic(
    data: Mapping[str, Any] | None, *, model: str, source: str, cost_usd: float | None = None, response_id: str = ""
) -> ModelUsage | None:
    """From an Anthropic Messages ``usage`` object, whose ``input_tokens`` leaves out the cache:
    input = input_tokens + cache_creation_input_tokens + cache_read_input_tokens, cached = the
    cache reads. ``cost_usd`` is a cost the SDK reported (the Claude Agent SDK's
    ``total_cost_usd``), which then wins over the price table."""
    if not isinstance(data, Mapping):
        return None
    read = _int(data.get("cache_read_input_tokens"))
    inp = _int(data.get("input_tokens")) + _int(data.get("cache_creation_input_tokens")) + read
    out = _int(data.get("output_tokens"))
    if not (inp or out) and cost_usd is None:
        return None
    return ModelUsage(
        model=model, input_tokens=inp, output_tokens=out, cached_tokens=read, source=source,
        cost_usd=cost_usd, response_id=response_id,
    )  # fmt: skip
