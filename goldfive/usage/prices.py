"""Model prices: a small table shipped as package data, overridable with a file.

A price is looked up by the model's name as the provider spells it, after dropping what only
says where it was served (``openai:``, ``models/``, ``@20250929``) and a date suffix
(``gpt-4o-2024-08-06`` is priced as ``gpt-4o``). Nothing else is guessed: a model that is not
in the table has no price, and its calls are recorded with their tokens and no cost.

A file given with ``--prices FILE`` has the shipped file's shape (``{"models": {NAME: {"input":
USD per million tokens, "output": ..., "cached_input": ...}}}``); its entries replace or add to
the shipped ones. ``cached_input`` defaults to ``input`` (no cache discount is assumed).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from goldfive.errors import GoldfiveError
from goldfive.usage.model import CostSource, ModelUsage

__all__ = ["Price", "PriceTable", "PricesError", "default_prices", "load_prices"]

_PREFIXES = re.compile(r"^(?:[a-z0-9_.-]+[:/])+")  # openai:, google-gla:, models/, openai/
_DATE = re.compile(r"(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-latest)$")
_MILLION = 1_000_000


class PricesError(GoldfiveError):
    """A prices file that cannot be read or does not have the expected shape."""


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float

    def cost(self, usage: ModelUsage) -> float:
        fresh = usage.input_tokens - usage.cached_tokens
        return (fresh * self.input + usage.cached_tokens * self.cached_input + usage.output_tokens * self.output) / _MILLION


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, Price] = field(default_factory=dict)
    #: The cost_source recorded for a price from this table ("prices", "prices:my.json").
    origin: str = CostSource.PRICES.value
    #: Names that came from an override file: their cost_source names the file.
    overridden: frozenset[str] = frozenset()
    override_origin: str = ""

    def price(self, model: str) -> tuple[Price, str] | None:
        """The price of ``model`` and where it came from, or None when it has none."""
        for name in _candidates(model):
            price = self.prices.get(name)
            if price is not None:
                return price, (self.override_origin if name in self.overridden else self.origin)
        return None

    def cost(self, usage: ModelUsage) -> tuple[float | None, str]:
        """What the call cost and where that figure came from. A cost the framework reported
        wins over the table; no price is (None, "")."""
        if usage.cost_usd is not None:
            return usage.cost_usd, CostSource.REPORTED.value
        found = self.price(usage.model)
        if found is None:
            return None, CostSource.UNKNOWN.value
        price, origin = found
        return price.cost(usage), origin

    def with_overrides(self, prices: dict[str, Price], origin: str) -> PriceTable:
        merged = dict(self.prices)
        merged.update(prices)
        return PriceTable(merged, self.origin, self.overridden | frozenset(prices), origin)


def _candidates(model: str) -> list[str]:
    name = model.strip().lower()
    out = [name]
    bare = _PREFIXES.sub("", name)
    if bare != name:
        out.append(bare)
    undated = _DATE.sub("", bare)
    if undated != bare:
        out.append(undated)
    return out


def _parse(data: Any, where: str) -> dict[str, Price]:
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise PricesError(f"{where}: expected an object with a \"models\" object")
    out: dict[str, Price] = {}
    for name, entry in models.items():
        if not isinstance(entry, dict):
            raise PricesError(f"{where}: {name}: expected an object with input and output prices")
        try:
            values = {k: float(entry[k]) for k in ("input", "output")}
            values["cached_input"] = float(entry.get("cached_input", values["input"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise PricesError(f"{where}: {name}: input and output must be numbers (USD per million tokens): {exc}") from None
        if any(not math.isfinite(v) or v < 0 for v in values.values()):
            raise PricesError(f"{where}: {name}: prices must be finite and not negative")
        out[str(name).strip().lower()] = Price(**values)
    return out


_DEFAULT: PriceTable | None = None


def default_prices() -> PriceTable:
    """The table shipped with goldfive (``goldfive/usage/prices.json``), read once."""
    global _DEFAULT
    if _DEFAULT is None:
        text = resources.files("goldfive.usage").joinpath("prices.json").read_text(encoding="utf-8")
        _DEFAULT = PriceTable(_parse(json.loads(text), "goldfive/usage/prices.json"))
    return _DEFAULT


def load_prices(path: str | os.PathLike[str], base: PriceTable | None = None) -> PriceTable:
    """``base`` (the shipped table) with the entries of the file at ``path`` on top.
    Raises PricesError, in one line, for a file that cannot be read or parsed."""
    where = os.fspath(path)
    try:
        with open(where, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise PricesError(f"cannot read prices file {where}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise PricesError(f"prices file {where} is not JSON: {exc}") from None
    base = default_prices() if base is None else base
    return base.with_overrides(_parse(data, where), f"{CostSource.PRICES.value}:{os.path.basename(where)}")
