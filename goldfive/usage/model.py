"""The values of usage accounting: one model call's figures, and a running total.

``ModelUsage`` is what a reporter knows about one call (tokens, maybe a cost the framework
computed itself). ``UsageTotals`` is a sum a budget, a header or a summary reads; it is a frozen
value, so a reader holding one never sees it change under it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["CostSource", "ModelUsage", "Purpose", "RecordedUsage", "UsageTotals"]


class Purpose(StrEnum):
    """What a model call was made for."""

    TASK = "task"
    PLAN = "plan"
    REPLAN = "replan"
    GOALS = "goals"


class CostSource(StrEnum):
    """Where a recorded cost came from."""

    #: The framework computed it (the Claude Agent SDK's ``total_cost_usd``).
    REPORTED = "reported"
    #: The price table shipped with goldfive.
    PRICES = "prices"
    #: Not known: the model has no price (the tokens are still recorded).
    UNKNOWN = ""


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """One model call as its reporter saw it.

    ``input_tokens`` counts every input token, cached ones included (the OpenAI convention;
    an Anthropic-style reporter adds its cache reads and writes to ``input_tokens``);
    ``cached_tokens`` is the part of it read from the provider's cache. ``cost_usd`` is a cost
    the framework itself reported; leave it None and goldfive prices the call from its table.
    ``source`` names where the figures came from (``"pydantic_ai"``, ``"adk"``...).
    """

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    source: str = ""
    cost_usd: float | None = None
    response_id: str = ""
    duration_ms: int = 0
    #: The framework's own OpenTelemetry span of this call, when its instrumentation made one.
    otel_trace_id: str = ""
    otel_span_id: str = ""

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "cached_tokens", "duration_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.cached_tokens > self.input_tokens:
            raise ValueError(f"cached_tokens ({self.cached_tokens}) exceed input_tokens ({self.input_tokens})")
        if self.cost_usd is not None and not (self.cost_usd >= 0 and self.cost_usd != float("inf")):
            raise ValueError(f"cost_usd must be a finite non-negative number, got {self.cost_usd!r}")


@dataclass(frozen=True, slots=True)
class RecordedUsage:
    """A call as it was recorded: where it belongs and what it cost (None: not known)."""

    usage: ModelUsage
    task_id: str
    purpose: Purpose
    cost_usd: float | None
    cost_source: str


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """A sum of model calls. ``cost_usd`` adds up the calls whose cost is known;
    ``unpriced_calls`` says how many are left out of it, so "$0.42" is never shown for a run
    that also spent tokens on a model without a price."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    #: Model name -> calls, for a summary line ("gpt-4o-mini x12").
    models: tuple[tuple[str, int], ...] = field(default=(), compare=False)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost_known(self) -> bool:
        """Every call's cost is known (also true for no calls at all)."""
        return self.unpriced_calls == 0

    def plus(self, usage: ModelUsage, cost_usd: float | None) -> UsageTotals:
        models = dict(self.models)
        models[usage.model] = models.get(usage.model, 0) + 1
        return UsageTotals(
            calls=self.calls + 1,
            input_tokens=self.input_tokens + usage.input_tokens,
            output_tokens=self.output_tokens + usage.output_tokens,
            cached_tokens=self.cached_tokens + usage.cached_tokens,
            cost_usd=self.cost_usd + (cost_usd or 0.0),
            unpriced_calls=self.unpriced_calls + (cost_usd is None),
            models=tuple(models.items()),
        )
