"""Goal derivers that need no model."""

from __future__ import annotations

from typing import Any

from goldfive.types import Goal


class PassthroughGoalDeriver:
    """One pre-configured goal, whatever the input."""

    def __init__(self, summary: str = "run", goal_id: str = "g1") -> None:
        self._goal = Goal(id=goal_id, summary=summary)

    async def derive(self, user_input: str, *, context: dict[str, Any] | None = None) -> list[Goal]:
        return [self._goal]


class LiteralGoalDeriver:
    """The input text is the goal; a multi-line input gives one goal per non-empty line."""

    async def derive(self, user_input: str, *, context: dict[str, Any] | None = None) -> list[Goal]:
        lines = [ln.strip() for ln in str(user_input).splitlines() if ln.strip()]
        return [Goal(id=f"g{i + 1}", summary=ln) for i, ln in enumerate(lines)] or [Goal("g1", "")]


def __getattr__(name: str) -> object:
    if name == "LLMGoalDeriver":
        from goldfive.planners.goals import LLMGoalDeriver

        return LLMGoalDeriver
    raise AttributeError(f"module 'goldfive.goals' has no attribute {name!r}")
