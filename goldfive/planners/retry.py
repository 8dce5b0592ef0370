"""Ask a model until its answer parses, feeding each rejection back into the next prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from goldfive.llm.base import CallLLM
from goldfive.llm.prompts import render_prompt
from goldfive.planners.parse import AnswerError

T = TypeVar("T")


class AnswersExhausted(AnswerError):
    """Every attempt was rejected; the message names the last answer's problem."""

    def __init__(self, attempts: int, last_error: str, what: str) -> None:
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(f"{what} answer {attempts}/{attempts} invalid: {last_error}")


async def ask_until_valid(
    call_llm: CallLLM,
    *,
    system: str,
    user: str,
    model: str,
    parse: Callable[[str], T],
    max_attempts: int,
    what: str = "planner",
) -> T:
    """``parse`` raises AnswerError to reject an answer. LLMError and cancellation propagate."""
    attempts = max(1, max_attempts)
    prompt = user
    last = ""
    for attempt in range(1, attempts + 1):
        answer = await call_llm(system, prompt, model)
        try:
            return parse(answer)
        except AnswerError as e:
            last = str(e)
        prompt = user + render_prompt("plan_feedback", attempt=attempt, max_attempts=attempts, error=last)
    raise AnswersExhausted(attempts, last, what)
