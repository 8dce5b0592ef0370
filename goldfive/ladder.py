"""The intervention ladder (docs/protocol.md#the-intervention-ladder): drift -> level, as one overridable table."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from goldfive.types import DriftKind, DriftSeverity

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.control import ControlMessage


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
    # The watchdog's drifts (goldfive.watchdog) climb INFO, WARNING, CRITICAL as a task stays
    # stuck: INFO is observed (the warning a person sees), WARNING nudges, CRITICAL pauses.
    (DriftKind.LOOPING_TOOL_CALL, Sev.WARNING): L.NUDGE,
    (DriftKind.LOOPING_TOOL_CALL, Sev.CRITICAL): L.PAUSE_ESCALATE,
    (DriftKind.UNCERTAIN_PROGRESS, Sev.WARNING): L.NUDGE,
    (DriftKind.UNCERTAIN_PROGRESS, Sev.CRITICAL): L.PAUSE_ESCALATE,
    (DriftKind.LOOPING_REASONING, Sev.WARNING): L.NUDGE,
    (DriftKind.TASK_TIMEOUT, Sev.CRITICAL): L.PAUSE_ESCALATE,
}

#: (kind, severity) -> (n, level): from the nth occurrence on, the drift goes to ``level``
#: instead (LOOPING_REASONING CRITICAL nudges first, docs/protocol.md#the-intervention-ladder, and pauses when it comes back).
REPEATS: dict[tuple[DriftKind, DriftSeverity], tuple[int, InterventionLevel]] = {
    (DriftKind.LOOPING_REASONING, Sev.CRITICAL): (2, L.PAUSE_ESCALATE),
}

DEFAULT_BY_SEVERITY: dict[DriftSeverity, InterventionLevel] = {
    Sev.INFO: L.OBSERVE,
    Sev.WARNING: L.ABSORB,
    Sev.CRITICAL: L.ABSORB,
}


def ladder_level(
    kind: DriftKind, severity: DriftSeverity, occurrences: int = 1
) -> InterventionLevel:
    """The level for one drift; ``occurrences`` counts this kind at this severity on this
    task, this one included. A repeat of a drift that already escalated to PAUSE_ESCALATE goes
    to TERMINATE."""
    level = LADDER.get((kind, severity), DEFAULT_BY_SEVERITY[severity])
    first_pause = 1
    repeat = REPEATS.get((kind, severity))
    if repeat is not None and occurrences >= repeat[0]:
        level, first_pause = repeat[1], repeat[0]
    if level == L.PAUSE_ESCALATE and occurrences > first_pause:
        return L.TERMINATE
    return level


@dataclass
class DriftOutcome:
    """What the ladder decided for one drift. ``intervention`` is a control for the run's
    ControlLoop to apply (GOLDFIVE_STEER, GOLDFIVE_PAUSE_ESCALATE): a policy decides, the loop
    that owns the run acts, and the person's channel never carries it."""

    level: InterventionLevel
    revised: bool = False
    error: str = ""
    intervention: ControlMessage | None = None
