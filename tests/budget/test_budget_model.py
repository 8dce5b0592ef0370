"""goldfive.Budget: a validated value, and ``--budget`` text read with errors that say what is wrong."""

from __future__ import annotations

import pytest

from goldfive import Budget, BudgetError


def test_a_budget_is_read_from_the_words_of_the_command_line() -> None:
    b = Budget.parse("tokens=50000, usd=2,model_calls=40,tool-calls=1.5k,seconds=600")
    assert b == Budget(tokens=50_000, usd=2.0, model_calls=40, tool_calls=1_500, seconds=600.0)
    assert Budget.parse("tokens=1.5M,usd=$0.25") == Budget(tokens=1_500_000, usd=0.25)
    assert Budget.parse(b.spec()) == b
    assert b.describe() == "tokens 50,000, usd $2.00, model_calls 40, tool_calls 1,500, seconds 600 s"
    assert Budget(seconds=0.3).describe() == "seconds 0.3 s" and Budget(seconds=2).describe() == "seconds 2 s"
    assert Budget().empty and Budget().describe() == "no limits"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty budget"),
        ("tokens", "budget part 'tokens': expected LIMIT=VALUE"),
        ("tokens=", "expected LIMIT=VALUE"),
        ("dollars=5", "unknown limit 'dollars'; the limits are tokens, usd, model_calls, tool_calls, seconds"),
        ("tokens=lots", "budget tokens=lots: not a number (e.g. tokens=50000; none for no limit)"),
        ("tokens=1.5", "budget tokens=1.5: must be a whole number"),
        ("tokens=$5", "budget tokens=$5: not a number"),
        ("usd=-1", "budget usd=-1: not a number"),
        ("tokens=5,tokens=6", "tokens is given twice"),
    ],
)
def test_a_budget_that_cannot_be_read_says_which_part_and_why(text: str, words: str) -> None:
    with pytest.raises(BudgetError) as err:
        Budget.parse(text)
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"tokens": 0}, "budget tokens must be above 0"),
        ({"usd": -2.0}, "budget usd must be above 0"),
        ({"usd": float("nan")}, "budget usd must be a finite number"),
        ({"tokens": 2.5}, "budget tokens must be a whole number"),
        ({"model_calls": True}, "budget model_calls must be a number"),
        ({"seconds": "60"}, "budget seconds must be a number"),
    ],
)
def test_a_budget_built_in_code_is_validated(kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(BudgetError) as err:
        Budget(**kwargs)  # type: ignore[arg-type]
    assert words in str(err.value)


def test_a_change_replaces_the_limits_it_names_and_none_removes_one() -> None:
    b = Budget(tokens=100, usd=1.0)
    assert b.changed({"tokens": 500, "usd": None}) == Budget(tokens=500)
    with pytest.raises(BudgetError, match="unknown budget limit 'calls'"):
        b.changed({"calls": 3})
