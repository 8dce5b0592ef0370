"""The intervention ladder (spec CONTROL.md 7.d): drift -> level, as one overridable table."""

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
S = DriftSeverity

#: (kind, severity) -> level. Kinds not listed fall back to DEFAULT_BY_SEVERITY.
LADDER: dict[tuple[DriftKind, DriftSeverity], InterventionLevel] = {
    (DriftKind.USER_STEER, S.WARNING): L.ABSORB,
    (DriftKind.USER_PAUSE, S.INFO): L.OBSERVE,
    (DriftKind.USER_CANCEL, S.CRITICAL): L.OBSERVE,  # the executor aborts; the drift is audit only
    (DriftKind.CUSTOM, S.INFO): L.OBSERVE,
    (DriftKind.LOOPING_REASONING, S.CRITICAL): L.NUDGE,
    (DriftKind.GOAL_DRIFT, S.WARNING): L.NUDGE,
    (DriftKind.GOAL_DRIFT, S.CRITICAL): L.NUDGE,
    (DriftKind.TASK_TIMEOUT, S.WARNING): L.NUDGE,
    (DriftKind.CONTEXT_PRESSURE, S.WARNING): L.NUDGE,
    (DriftKind.HUMAN_INTERVENTION_REQUIRED, S.CRITICAL): L.OBSERVE,
    (DriftKind.REFINE_VALIDATION_FAILED, S.CRITICAL): L.OBSERVE,  # never refine on it (loop risk)
    (DriftKind.REPEATED_FAILURE, S.CRITICAL): L.PAUSE_ESCALATE,
    (DriftKind.RUNAWAY_DELEGATION, S.CRITICAL): L.CANCEL_REINVOKE,
}

DEFAULT_BY_SEVERITY: dict[DriftSeverity, InterventionLevel] = {
    S.INFO: L.OBSERVE,
    S.WARNING: L.ABSORB,
    S.CRITICAL: L.ABSORB,
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
