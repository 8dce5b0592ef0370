"""What a run's model calls cost: usage reporting, prices and totals.

An adapter reports each model call once, with :func:`report_usage`; goldfive prices it from a
small table shipped as data (:func:`default_prices`, overridable with :func:`load_prices` /
``--prices FILE``), records it as a ``usage_recorded`` event and adds it to the run's
:class:`UsageLedger` (``context_of(session).usage``: ``totals``, ``task_totals(task_id)``).
"""

from goldfive.usage.ledger import UsageLedger, recorded_from_pb, totals_from_events
from goldfive.usage.model import CostSource, ModelUsage, Purpose, RecordedUsage, UsageTotals
from goldfive.usage.prices import Price, PriceTable, PricesError, default_prices, load_prices
from goldfive.usage.report import (
    UsageScope,
    current_scope,
    report_usage,
    usage_from_anthropic,
    usage_from_openai,
    usage_scope,
)

__all__ = [
    "CostSource",
    "ModelUsage",
    "Price",
    "PriceTable",
    "PricesError",
    "Purpose",
    "RecordedUsage",
    "UsageLedger",
    "UsageScope",
    "UsageTotals",
    "current_scope",
    "default_prices",
    "load_prices",
    "recorded_from_pb",
    "report_usage",
    "totals_from_events",
    "usage_from_anthropic",
    "usage_from_openai",
    "usage_scope",
]
