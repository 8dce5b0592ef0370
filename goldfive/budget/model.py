"""Budget: a run's limits, as a value, and how they are written (``tokens=50000,usd=2``).

A limit left out (None) does not limit. ``tokens`` counts input and output tokens (cached
input included), ``usd`` the cost of the calls whose price is known, ``model_calls`` and
``tool_calls`` the calls made, ``seconds`` the run's time since it started (a resumed run's
time before the stop included).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from goldfive.errors import GoldfiveError

__all__ = ["LIMITS", "Budget", "BudgetError", "format_limit", "used_line"]

#: The limits, in the order they are checked and shown.
LIMITS = ("tokens", "usd", "model_calls", "tool_calls", "seconds")
_INTEGER = frozenset({"tokens", "model_calls", "tool_calls"})
_SUFFIX = {"k": 1_000, "m": 1_000_000}
_NUMBER = re.compile(r"^\$?([0-9][0-9_]*(?:\.[0-9]+)?|\.[0-9]+)([kKmM]?)$")
#: Words that remove a limit in a change ("tokens=none").
_NO_LIMIT = frozenset({"none", "off", "0"})


class BudgetError(GoldfiveError, ValueError):
    """A budget that cannot be read: says which limit and what was wrong, in one line."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a run may use before it pauses and asks (``Runner(budget=...)``)."""

    tokens: int | None = None
    usd: float | None = None
    model_calls: int | None = None
    tool_calls: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        for name in LIMITS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise BudgetError(f"budget {name} must be a number, got {value!r}")
            if name in _INTEGER:
                if not isinstance(value, int):
                    if not (math.isfinite(value) and value == int(value)):
                        raise BudgetError(f"budget {name} must be a whole number, got {value!r}")
                    object.__setattr__(self, name, int(value))
            elif not math.isfinite(value):
                raise BudgetError(f"budget {name} must be a finite number, got {value!r}")
            else:
                object.__setattr__(self, name, float(value))
            if getattr(self, name) <= 0:
                raise BudgetError(f"budget {name} must be above 0, got {value!r} (leave it out for no limit)")

    # -- reading and writing ------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> Budget:
        """``"tokens=50000,usd=2,model_calls=40,tool_calls=100,seconds=600"``: any of them, in
        any order. ``50k`` and ``1.5M`` are accepted for counts, ``$2`` for usd. Raises
        BudgetError naming the part that is wrong."""
        return cls().changed(parse_changes(text))

    def changed(self, changes: dict[str, float | int | None]) -> Budget:
        """This budget with ``changes`` applied (a value of None removes that limit)."""
        unknown = sorted(set(changes) - set(LIMITS))
        if unknown:
            raise BudgetError(f"unknown budget limit {unknown[0]!r}; the limits are {', '.join(LIMITS)}")
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def empty(self) -> bool:
        """No limit at all (read at every task boundary: spelled out, no generator)."""
        return self.tokens is None and self.usd is None and self.model_calls is None and self.tool_calls is None and self.seconds is None

    def items(self) -> list[tuple[str, float]]:
        """The limits that are set, in ``LIMITS`` order."""
        return [(name, getattr(self, name)) for name in LIMITS if getattr(self, name) is not None]

    def describe(self) -> str:
        """"tokens 50,000, usd $2.00"; "no limits" for an empty budget."""
        return ", ".join(f"{name} {format_limit(name, value)}" for name, value in self.items()) or "no limits"

    def spec(self) -> str:
        """What ``parse`` reads back: "tokens=50000,usd=2"."""
        return ",".join(f"{name}={_plain(value)}" for name, value in self.items())

    def to_payload(self) -> dict[str, Any]:
        return {name: value for name, value in self.items()}


def parse_changes(text: str) -> dict[str, float | int | None]:
    """``"tokens=100000,usd=none"`` -> {"tokens": 100000, "usd": None}. Raises BudgetError."""
    if not isinstance(text, str) or not text.strip():
        raise BudgetError("empty budget: give limits as tokens=50000,usd=2 (any of " + ", ".join(LIMITS) + ")")
    out: dict[str, float | int | None] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, raw = part.partition("=")
        name, raw = name.strip().lower().replace("-", "_"), raw.strip()
        if not sep or not raw:
            raise BudgetError(f"budget part {part!r}: expected LIMIT=VALUE, e.g. tokens=50000")
        if name not in LIMITS:
            raise BudgetError(f"budget part {part!r}: unknown limit {name!r}; the limits are {', '.join(LIMITS)}")
        if name in out:
            raise BudgetError(f"budget part {part!r}: {name} is given twice")
        out[name] = read_value(name, raw)
    if not out:
        raise BudgetError("empty budget: give limits as tokens=50000,usd=2")
    return out


def read_value(name: str, raw: str) -> float | int | None:
    """One limit's value as written: a number (``50k``, ``1.5M``, ``$2``) or none/off/0 (no limit)."""
    if raw.strip().lower() in _NO_LIMIT:
        return None
    m = _NUMBER.match(raw.strip())
    if m is None or (raw.startswith("$") and name != "usd"):
        raise BudgetError(f"budget {name}={raw}: not a number (e.g. {name}={_EXAMPLE[name]}; none for no limit)")
    value = float(m.group(1).replace("_", "")) * _SUFFIX.get(m.group(2).lower(), 1)
    if name in _INTEGER:
        if value != int(value):
            raise BudgetError(f"budget {name}={raw}: must be a whole number")
        return int(value)
    return value


_EXAMPLE = {"tokens": "50000", "usd": "2", "model_calls": "40", "tool_calls": "100", "seconds": "600"}


def format_limit(name: str, value: float) -> str:
    """A figure of limit ``name`` as people read it: 50,210 / $2.03 / 612 s."""
    if name == "usd":
        return f"${value:,.2f}"
    if name == "seconds":  # a short limit keeps its tenths: "0.2 s of 0.2 s", not "0 s of 0 s"
        return f"{value:.1f} s" if value < 10 and value != int(value) else f"{value:,.0f} s"
    return f"{int(value):,}"


def used_line(limits: dict[str, float], used: dict[str, float]) -> str:
    """"tokens 41,200 of 50,000, usd $0.40 of $2.00": what is used of each limit (a limit with
    no figure in ``used`` shows its value alone)."""
    return ", ".join(
        f"{name} {format_limit(name, used[name])} of {format_limit(name, allowed)}" if name in used else f"{name} {format_limit(name, allowed)}"
        for name, allowed in ((n, limits[n]) for n in LIMITS if n in limits)
    )  # fmt: skip


def _plain(value: float) -> str:
    return str(int(value)) if float(value) == int(value) else repr(float(value))


