"""Usage figures as people read them: the same words in the TUI, ``ctl`` and the event log."""

from __future__ import annotations

from goldfive.usage.model import UsageTotals

__all__ = ["format_cost", "format_rate", "format_tokens", "format_totals", "format_usd"]


def format_tokens(n: int) -> str:
    """1234 -> "1.2k", 2_500_000 -> "2.5M"."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def format_usd(value: float) -> str:
    if value == 0:
        return "$0"
    if value < 0.01:
        return f"${value:.4f}"
    if value < 100:
        return f"${value:.2f}"
    return f"${value:,.0f}"


def format_cost(totals: UsageTotals) -> str:
    """"$0.42"; "$0.42+?" when some calls have no price; "?" when none has; "" for no calls."""
    if totals.calls == 0:
        return ""
    if totals.unpriced_calls == totals.calls:
        return "?"
    return format_usd(totals.cost_usd) + ("+?" if totals.unpriced_calls else "")


def format_rate(usd_per_hour: float | None) -> str:
    return "" if usd_per_hour is None else f"{format_usd(usd_per_hour)}/h"


def format_totals(totals: UsageTotals) -> str:
    """"12.3k tok (cached 1.0k) $0.42 in 9 calls"."""
    if totals.calls == 0:
        return "no model calls"
    cached = f" (cached {format_tokens(totals.cached_tokens)})" if totals.cached_tokens else ""
    cost = format_cost(totals)
    unpriced = f", {totals.unpriced_calls} without a price" if totals.unpriced_calls else ""
    calls = "call" if totals.calls == 1 else "calls"
    return f"{format_tokens(totals.tokens)} tok{cached} {cost} in {totals.calls} {calls}{unpriced}"
