"""The intervention ladder (docs/protocol.md#the-intervention-ladder): drift -> level, as one overridable table."""

from __future__ import annotations

from enum import IntEnum

from goldfive.types import DriftKind, DriftSeverity


class InterventionLevel(IntEnum):
    OBSERVE = 0
    ABSORB = 1
    NUDGE = 2
    CANCEL_REINVOKE = 3
    PAUSE_ESCALATE = 4
    TERMINATE = 5


L = InterventionLevel
Sev = DriftSeverity  # S means TaskStatus elsewhere: one meaning per short alias

#: (kind, severity) -> level. Kinds not listed fall back to DEFAULT_BY_SEVERITY.
LADDER: dict[tuple[DriftKind, DriftSeverity], InterventionLevel] = {
    (DriftKind.USER_STEER, Sev.WARNING): L.ABSORB,
    (DriftKind.USER_PAUSE, Sev.INFO): L.OBSERVE,
    (DriftKind.USER_CANCEL, Sev.CRITICAL): L.OBSERVE,  # the executor aborts; the drift is audit only
    (DriftKind.CUSTOM, Sev.INFO): L.OBSERVE,
    (DriftKind.LOOPING_REASONING, Sev.CRITICAL): L.NUDGE,
    (DriftKind.GOAL_DRIFT, Sev.WARNING): L.NUDGE,
    (DriftKind.GOAL_DRIFT, Sev.CRITICAL): L.NUDGE,
    (DriftKind.TASK_TIMEOUT, Sev.WARNING): L.NUDGE,
    (DriftKind.CONTEXT_PRESSURE, Sev.WARNING): L.NUDGE,
    (DriftKind.HUMAN_INTERVENTION_REQUIRED, Sev.CRITICAL): L.OBSERVE,
    (DriftKind.REFINE_VALIDATION_FAILED, Sev.CRITICAL): L.OBSERVE,  # never refine on it (loop risk)
    (DriftKind.REPEATED_FAILURE, Sev.CRITICAL): L.PAUSE_ESCALATE,
    (DriftKind.RUNAWAY_DELEGATION, Sev.CRITICAL): L.CANCEL_REINVOKE,
}

DEFAULT_BY_SEVERITY: dict[DriftSeverity, InterventionLevel] = {
    Sev.INFO: L.OBSERVE,
    Sev.WARNING: L.ABSORB,
    Sev.CRITICAL: L.ABSORB,
}


def ladder_level(
    kind: DriftKind, severity: DriftSeverity, occurrences: int = 1
) -> InterventionLevel:
    """The level for one drift. A repeat of a drift that already escalated to
    PAUSE_ESCALATE goes to TERMINATE."""
    level = LADDER.get((kind, severity), DEFAULT_BY_SEVERITY[severity])
    if level == L.PAUSE_ESCALATE and occurrences > 1:
        return L.TERMINATE
    return level
