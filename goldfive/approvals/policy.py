"""What happens when nobody decides an approval: wait, reject at a deadline, or pause and escalate."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class OnTimeout(StrEnum):
    #: Wait until someone decides (the default): a deadline only warns.
    WAIT = "wait"
    #: At the deadline the call does not run; recorded as TIMED_OUT, never as a person's rejection.
    REJECT = "reject"
    #: At the deadline the run pauses (no new task starts) and the approval waits on for a person.
    ESCALATE = "escalate"


@dataclass(frozen=True)
class ApprovalPolicy:
    """Per tool (``UserTool(policy=...)``) or per run (``RuntimeConfig.approval_policy``)."""

    on_timeout: OnTimeout = OnTimeout.WAIT
    #: Seconds until the policy acts; None waits without a deadline (whatever ``on_timeout`` says).
    timeout_s: float | None = None
    #: Seconds before the deadline that an ApprovalExpiring warning goes out (at most a fifth
    #: of the deadline, so a short one still warns before it acts).
    warn_before_s: float = 30.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "on_timeout", OnTimeout(self.on_timeout))
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s}")
        if self.warn_before_s < 0:
            raise ValueError(f"warn_before_s must be >= 0, got {self.warn_before_s}")

    @property
    def deadline_s(self) -> float | None:
        """When the policy acts; None when it never does (WAIT, or no deadline)."""
        return None if self.on_timeout is OnTimeout.WAIT else self.timeout_s

    @property
    def warn_at_s(self) -> float | None:
        """When the warning goes out, or None (no deadline, or one too short to warn before)."""
        deadline = self.deadline_s
        if deadline is None or deadline < 1.0:
            return None
        return deadline - min(self.warn_before_s, deadline / 5)


#: The run's policy when nobody gives one: wait until decided.
WAIT_FOREVER = ApprovalPolicy()
