"""LLMGoalDeriver: asks a model for the goals in a user's request, as strict JSON."""

from __future__ import annotations

import json
from typing import Any

from goldfive.errors import GoalDerivationError, LLMError
from goldfive.llm.base import CallLLM
from goldfive.llm.prompts import load_prompt, render_prompt
from goldfive.planners.parse import parse_goals_answer
from goldfive.planners.retry import AnswersExhausted, ask_until_valid
from goldfive.types import Goal


class LLMGoalDeriver:
    """Implements the GoalDeriver protocol. Raises GoalDerivationError when every answer was
    rejected (naming the last problem) or the model could not be reached."""

    def __init__(self, call_llm: CallLLM, model: str = "", max_attempts: int = 3) -> None:
        self.call_llm = call_llm
        self.model = model
        self.max_attempts = max_attempts

    async def derive(self, user_input: str, *, context: dict[str, Any] | None = None) -> list[Goal]:
        user = render_prompt(
            "goals_derive.user",
            user_input=user_input.strip() or "(empty)",
            context=json.dumps(context, default=str, sort_keys=True) if context else "(none)",
        )
        try:
            pairs = await ask_until_valid(
                self.call_llm,
                system=load_prompt("goals_derive.system"),
                user=user,
                model=self.model,
                parse=parse_goals_answer,
                max_attempts=self.max_attempts,
                what="goal deriver",
            )
        except AnswersExhausted as e:
            raise GoalDerivationError(str(e)) from None
        except LLMError as e:
            raise GoalDerivationError(f"goal deriver model call failed: {e}") from e
        return [Goal(id=gid, summary=summary) for gid, summary in pairs]
