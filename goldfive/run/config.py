"""Per-run settings and the limits every boundary checks a control against.

The limits are defined here once; the run's ControlLoop, the gRPC service and the TUI all
check a control with ``validate_control`` (``goldfive.run.validate``), which reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from goldfive.approvals.policy import WAIT_FOREVER, ApprovalPolicy, ApprovalReminders
from goldfive.approvals.reviewer import Reviewer
from goldfive.approvals.rules import RuleBook
from goldfive.budget.model import Budget
from goldfive.usage.prices import PriceTable
from goldfive.watchdog.config import WatchdogConfig


@dataclass(frozen=True)
class ControlLimits:
    #: Largest STEER note / injected message accepted, in UTF-8 bytes.
    max_note_bytes: int = 8192
    #: Largest control accepted as a whole: its payload encoded as JSON, in UTF-8 bytes.
    max_control_bytes: int = 64 * 1024
    #: Longest id a control may carry or name (its own id, a task id, an approval target).
    max_id_chars: int = 256


#: The limits in force when nobody passes others.
DEFAULT_LIMITS = ControlLimits()


@dataclass(frozen=True)
class RuntimeConfig:
    #: Seconds a cancelled agent invocation gets to stop before it is abandoned.
    cancel_grace_s: float = 5.0
    #: Kept for callers that set it; an approval's wait is set by ``approval_policy``.
    approval_default_timeout_ms: int = 600_000
    #: What happens when nobody decides an approval (a tool's own policy wins): wait by default.
    approval_policy: ApprovalPolicy = WAIT_FOREVER
    #: When an undecided approval is announced again and escalated (None: never).
    approval_reminders: ApprovalReminders | None = None
    #: The run's reviewer: a model decides routine tool calls under a person's instructions
    #: and asks a person about the rest (None: the process's, ``--approvals review``, else none).
    approval_reviewer: Reviewer | None = None
    #: This run's rules for "always" (the library API); rules added while it runs join them.
    approval_rules: RuleBook | None = None
    #: Also apply the rules saved on this machine (``goldfive.approvals.default_rules_path``).
    use_machine_rules: bool = False
    #: Where the machine's rules are saved (None: the user data directory).
    machine_rules_path: Path | None = None
    #: What a control may carry; see ControlLimits.
    limits: ControlLimits = DEFAULT_LIMITS
    #: Model prices for the run's usage (None: the process's, goldfive.run.defaults, else the
    #: table shipped with goldfive).
    prices: PriceTable | None = None
    #: The stall and loop detectors' thresholds (``WatchdogConfig(enabled=False)``: off; None:
    #: the process's, which the command line reads from GOLDFIVE_WATCHDOG_*).
    watchdog: WatchdogConfig | None = None
    #: How much the run may use before it pauses and asks (None: the process's default,
    #: ``--budget``, else no limit). See docs/cost.md#budgets.
    budget: Budget | None = None
    #: Who gave ``budget``: recorded as the author of the budget_changed that sets it
    #: (``goldfive resume --budget`` names the person at the terminal).
    budget_author: str = ""

    @property
    def max_note_bytes(self) -> int:
        return self.limits.max_note_bytes
