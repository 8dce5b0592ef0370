"""LLMGoalDeriver: goals as strict JSON, with the same parse/validate/retry pattern."""

from __future__ import annotations

import pytest

from goldfive.errors import GoalDerivationError, GoldfiveError, LLMError
from goldfive.planners import LLMGoalDeriver
from goldfive.protocols import GoalDeriver
from goldfive.types import Goal
from tests.fake_llm import FakeLLM


async def test_derive_returns_the_goals_and_sends_the_request() -> None:
    llm = FakeLLM('```json\n{"goals": [{"id": "deck", "summary": "a deck about Python", "priority": 1}]}\n```')
    deriver = LLMGoalDeriver(call_llm=llm, model="m")
    assert isinstance(deriver, GoalDeriver)
    goals = await deriver.derive("make me a deck about Python", context={"audience": "eng"})
    assert goals == [Goal("deck", "a deck about Python")]
    system, user, model = llm.prompts[0]
    assert system.startswith("goldfive-prompt: goals.derive")
    assert "make me a deck about Python" in user and '"audience": "eng"' in user and model == "m"


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("goals: be good", "not JSON"),
        ("", "empty answer"),
        ('{"objectives": []}', "answer is missing 'goals'"),
        ('{"goals": []}', "'goals' is empty"),
        ('{"goals": [{"id": "a"}]}', "goals[0] is missing 'summary'"),
        ('{"goals": [{"id": "a", "summary": "x"}, {"id": "a", "summary": "y"}]}', "duplicate goal id: a"),
    ],
)
async def test_bad_answers_are_retried_with_the_problem_fed_back(answer: str, problem: str) -> None:
    llm = FakeLLM(answer, '{"goals": [{"id": "g1", "summary": "ok"}]}')
    goals = await LLMGoalDeriver(call_llm=llm).derive("do it")
    assert goals == [Goal("g1", "ok")]
    assert problem in llm.prompts[1][1]


async def test_exhaustion_raises_a_goldfive_error_naming_the_last_problem() -> None:
    llm = FakeLLM("x", "", '{"goals": []}')
    with pytest.raises(GoalDerivationError) as err:
        await LLMGoalDeriver(call_llm=llm, max_attempts=3).derive("do it")
    assert str(err.value) == "goal deriver answer 3/3 invalid: 'goals' is empty"
    assert isinstance(err.value, GoldfiveError)


async def test_model_failure_is_reported_as_goal_derivation_error() -> None:
    with pytest.raises(GoalDerivationError, match="goal deriver model call failed: down"):
        await LLMGoalDeriver(call_llm=FakeLLM(LLMError("down"))).derive("do it")
