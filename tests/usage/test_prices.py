"""The price table: lookups by the provider's spelling, the cost formula, override files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldfive.usage import ModelUsage, PricesError, default_prices, load_prices


def test_a_listed_model_is_priced_per_million_tokens_with_cached_input_cheaper() -> None:
    usage = ModelUsage("gpt-4o-mini", input_tokens=1_000_000, output_tokens=1_000_000, cached_tokens=400_000)
    cost, source = default_prices().cost(usage)
    # 600k fresh at 0.15 + 400k cached at 0.075 + 1M out at 0.60
    assert cost == pytest.approx(0.09 + 0.03 + 0.60)
    assert source == "prices"


@pytest.mark.parametrize(
    "spelling",
    ["gpt-4o", "GPT-4o", "openai:gpt-4o", "openai/gpt-4o", "gpt-4o-2024-08-06", "openai:gpt-4o-2024-11-20"],
)
def test_provider_prefixes_and_date_suffixes_find_the_base_model(spelling: str) -> None:
    found = default_prices().price(spelling)
    assert found is not None and found[0].input == 2.5


@pytest.mark.parametrize(
    "spelling", ["claude-sonnet-4-5-20250929", "anthropic:claude-sonnet-4-5", "claude-sonnet-4-5@20250929"]
)
def test_anthropic_spellings(spelling: str) -> None:
    found = default_prices().price(spelling)
    assert found is not None and (found[0].input, found[0].output) == (3.0, 15.0)


def test_gemini_through_a_models_prefix() -> None:
    found = default_prices().price("models/gemini-2.5-flash")
    assert found is not None and found[0].output == 2.5


@pytest.mark.parametrize("model", ["llama3.1:8b", "gpt-4o-mini-turbo-xl", "my-finetune", ""])
def test_an_unknown_model_has_no_price_and_its_cost_is_not_guessed(model: str) -> None:
    assert default_prices().cost(ModelUsage(model, 100, 100)) == (None, "")


def test_a_cost_the_framework_reported_wins_over_the_table() -> None:
    assert default_prices().cost(ModelUsage("gpt-4o", 100, 100, cost_usd=0.5)) == (0.5, "reported")
    assert default_prices().cost(ModelUsage("unknown", 100, 100, cost_usd=0.0)) == (0.0, "reported")


def test_a_prices_file_adds_and_replaces_entries_and_says_where_the_price_came_from(tmp_path: Path) -> None:
    path = tmp_path / "team-prices.json"
    path.write_text(json.dumps({"models": {"llama3.1:8b": {"input": 0.0, "output": 0.0}, "gpt-4o": {"input": 1, "output": 2}}}))
    table = load_prices(path)
    assert table.cost(ModelUsage("llama3.1:8b", 1000, 1000)) == (0.0, "prices:team-prices.json")
    assert table.cost(ModelUsage("gpt-4o", 1_000_000, 0)) == (1.0, "prices:team-prices.json")
    assert table.cost(ModelUsage("gpt-4o-mini", 1_000_000, 0)) == (pytest.approx(0.15), "prices")


def test_cached_input_defaults_to_the_input_price(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"models": {"m": {"input": 4, "output": 8}}}))
    cost, _ = load_prices(path).cost(ModelUsage("m", 1_000_000, 0, cached_tokens=500_000))
    assert cost == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json", "is not JSON"),
        ('{"prices": {}}', '"models" object'),
        ('{"models": {"m": {"input": "cheap", "output": 1}}}', "must be numbers"),
        ('{"models": {"m": {"input": -1, "output": 1}}}', "not negative"),
        ('{"models": {"m": [1, 2]}}', "expected an object"),
    ],
)
def test_a_bad_prices_file_is_refused_in_one_line(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(PricesError, match=says) as info:
        load_prices(path)
    assert "\n" not in str(info.value)


def test_a_missing_prices_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(PricesError, match="cannot read prices file .*nope.json"):
        load_prices(tmp_path / "nope.json")


def test_usage_refuses_impossible_figures() -> None:
    with pytest.raises(ValueError, match="cached_tokens"):
        ModelUsage("m", input_tokens=10, cached_tokens=11)
    with pytest.raises(ValueError, match="non-negative"):
        ModelUsage("m", input_tokens=-1)
    with pytest.raises(ValueError, match="cost_usd"):
        ModelUsage("m", cost_usd=float("nan"))
