"""A call_llm stand-in that answers from a list and records every prompt."""

from __future__ import annotations


class FakeLLM:
    """Answers in order; records every (system, user) prompt it was sent."""

    def __init__(self, *answers: str | BaseException) -> None:
        self.answers = list(answers)
        self.prompts: list[tuple[str, str, str]] = []

    async def __call__(self, system: str, user: str, model: str) -> str:
        self.prompts.append((system, user, model))
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer
