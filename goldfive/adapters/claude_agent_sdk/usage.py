"""What one Claude Code query consumed, from its ``ResultMessage``: the value goldfive's usage
reporting takes over (tokens, cache, cost in USD, per model).

Each task's query (and an interrupted one: its tokens were spent too) yields one
:class:`QueryUsage`, made by ``Conversation._usage_of`` (which also keeps it on the adapter's
per-run list, ``ClaudeAgentSDKAdapter.usage(session)``) and recorded by ``Turn.finish_query`` as
an ``agent_step`` of step ``usage`` whose ``args`` are :meth:`QueryUsage.as_dict`: the one line
to turn into goldfive's usage report once it exists.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from claude_agent_sdk import ResultMessage

__all__ = ["QueryUsage"]


def _int(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class QueryUsage:
    task_id: str
    #: Claude Code's session id (the conversation the query belongs to).
    session_id: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    #: This query's cost in USD, as Claude Code priced it; None when it did not say.
    cost_usd: float | None = None
    #: Claude Code's ``total_cost_usd``: the running total of its process (every query of the
    #: session since the client started), not this query's alone.
    total_cost_usd: float | None = None
    #: Model calls in the query.
    num_turns: int = 0
    duration_ms: int = 0
    duration_api_ms: int = 0
    #: Per model: Claude Code's ``modelUsage`` as it gave it (inputTokens, outputTokens, costUSD...).
    model_usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The query was interrupted (CANCEL, STEER) or ended in an error.
    is_error: bool = False

    @classmethod
    def from_result(cls, task_id: str, result: ResultMessage, *, cost_before: float = 0.0) -> QueryUsage:
        """The usage of ``result``; ``cost_before`` is the running total its process had
        reported before this query (0 for its first)."""
        usage = result.usage if isinstance(result.usage, dict) else {}
        models = result.model_usage if isinstance(result.model_usage, dict) else {}
        cost = result.total_cost_usd
        return cls(
            task_id=task_id,
            session_id=result.session_id,
            input_tokens=_int(usage, "input_tokens"),
            output_tokens=_int(usage, "output_tokens"),
            cache_read_input_tokens=_int(usage, "cache_read_input_tokens"),
            cache_creation_input_tokens=_int(usage, "cache_creation_input_tokens"),
            cost_usd=max(float(cost) - cost_before, 0.0) if isinstance(cost, int | float) else None,
            total_cost_usd=float(cost) if isinstance(cost, int | float) else None,
            num_turns=result.num_turns,
            duration_ms=result.duration_ms,
            duration_api_ms=result.duration_api_ms,
            model_usage={str(k): dict(v) for k, v in models.items() if isinstance(v, dict)},
            is_error=result.is_error,
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        cost = f", ${self.cost_usd:.6f}" if self.cost_usd is not None else ""
        return f"{self.input_tokens} in / {self.output_tokens} out tokens, {self.num_turns} model calls{cost}"
