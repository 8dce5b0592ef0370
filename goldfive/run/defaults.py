"""What the command line sets once for every run its process starts (``--prices``, ``--otel``,
``--budget``, the GOLDFIVE_WATCHDOG_* thresholds): a run whose RuntimeConfig leaves them unset takes these.
A program sets its own in RuntimeConfig and never needs this module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from goldfive.approvals.reviewer import Reviewer
from goldfive.budget.model import Budget
from goldfive.usage.prices import PriceTable
from goldfive.watchdog.config import WatchdogConfig

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.protocols import EventSink

__all__ = ["RunDefaults", "install_run_defaults", "run_defaults"]


@dataclass(frozen=True)
class RunDefaults:
    prices: PriceTable | None = None
    watchdog: WatchdogConfig = WatchdogConfig()
    #: A sink every run of this process also gets (the OTel export), or None.
    extra_sink: EventSink | None = None
    #: The budget of every run that does not set its own (``--budget``, ``serve --budget``).
    budget: Budget | None = None
    #: The reviewer of every run that does not set its own (``--approvals review``).
    reviewer: Reviewer | None = None

    def sinks(self) -> list[EventSink]:
        return [self.extra_sink] if self.extra_sink is not None else []


_current = RunDefaults()


def run_defaults() -> RunDefaults:
    return _current


def install_run_defaults(defaults: RunDefaults) -> None:
    global _current
    _current = defaults
