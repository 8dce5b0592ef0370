"""Budgets that pause and ask (docs/cost.md#budgets).

``Runner(budget=Budget(tokens=50_000, usd=2))`` (or ``--budget tokens=50000,usd=2``): at 80%
of a limit a ``budget_warning`` goes out; at the limit the run PAUSES, no new model or tool
call starts (the one in flight finishes), and it needs a person ("budget reached, tokens
50,210 of 50,000"). A BUDGET control raises it; RESUME goes on only once the budget allows.

An adapter enforces it where its framework lets it act before a model call, with
``goldfive.budget.gate.before_model_call`` (and ``before_tool_call``); every run is checked between tasks.
"""

from __future__ import annotations

from goldfive.budget.guard import WARN_AT, BudgetExhausted, BudgetGuard, Reached
from goldfive.budget.model import LIMITS, Budget, BudgetError, format_limit, parse_changes

__all__ = [
    "LIMITS",
    "WARN_AT",
    "Budget",
    "BudgetError",
    "BudgetExhausted",
    "BudgetGuard",
    "Reached",
    "format_limit",
    "parse_changes",
]
