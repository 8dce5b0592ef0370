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


@dataclass(frozen=True)
class ApprovalReminders:
    """When an undecided approval is announced again, and when it goes to a second person.

    Per run (``RuntimeConfig.approval_reminders``; a hub sets it for the runs it hosts with
    ``serve --remind-after / --escalate-after``), for every approval of the run whatever its
    timeout policy: a reminder (ApprovalReminded) every ``remind_after_s`` seconds until the
    escalation, and one escalation (ApprovalEscalated) after ``escalate_after_s``. An approval
    whose policy acts at a deadline is escalated before it acts (at its warning, if the
    interval would come later)."""

    remind_after_s: float | None = None
    escalate_after_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("remind_after_s", "escalate_after_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value}")
        if self.remind_after_s is not None and self.escalate_after_s is not None and self.escalate_after_s <= self.remind_after_s:
            raise ValueError(
                f"the escalation ({self.escalate_after_s:g} s) must come after the first reminder ({self.remind_after_s:g} s)"
            )

    def schedule(self, policy: ApprovalPolicy) -> list[tuple[float, str]]:
        """``(seconds after the request, "remind" | "escalate:interval" | "escalate:deadline")``,
        in order, for an approval under ``policy``: every reminder before the escalation (at
        most :data:`MAX_REMINDERS`), then the escalation, all before the policy's deadline."""
        deadline = policy.deadline_s
        before = deadline if deadline is None else (policy.warn_at_s if policy.warn_at_s is not None else deadline / 2)
        out: list[tuple[float, str]] = []
        escalate_at = self.escalate_after_s
        why = "interval"
        if escalate_at is not None and before is not None and escalate_at >= before:
            escalate_at, why = before, "deadline"
        if self.remind_after_s is not None:
            limits = [x for x in (escalate_at, before) if x is not None]
            end = min(limits) if limits else None
            at = self.remind_after_s
            while (end is None or at < end) and len(out) < MAX_REMINDERS:
                out.append((at, "remind"))
                at += self.remind_after_s
        if escalate_at is not None:
            out.append((escalate_at, f"escalate:{why}"))
        return out


#: Reminders of one approval, at most (one an interval, until its escalation or deadline).
MAX_REMINDERS = 10

#: The run's policy when nobody gives one: wait until decided.
WAIT_FOREVER = ApprovalPolicy()
