"""What an acked control means, as one table: ``ACK_MEANING``.

A handler (``goldfive.run.handlers``) says what it applied a control as (``AppliedAs``, on the
ack); this table says what that implies, and every reader takes it from here:

- the run: an outcome that ends the run, or that a replan follows, is built from the row
  (``goldfive.run.outcome.ok``);
- the views (``goldfive.view.state.RunState``): whether the run is paused;
- resume (``goldfive.durable.recover``): the pause, a CANCEL that still holds, the STEER ids
  already processed, and the effects to apply again when the recording has the ack but not
  the event that shows the effect landed.

Recordings made before acks carried ``applied_as`` are read by ``legacy_applied_as``, which
matches what the handlers of that time wrote in the ack's English detail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from goldfive.control import AckResult, AppliedAs, ControlAck

__all__ = ["ACK_MEANING", "PROCESSED_STEER_IDS", "AckMeaning", "Follows", "PauseChange", "applied_as_of", "legacy_applied_as", "meaning_of"]


#: session.state key: the dedupe ids of the STEERs already applied (spec 1.c), a bounded FIFO.
#: A STEER whose row says ``steer_seen`` adds its id; a retry with the same id is a DUPLICATE.
PROCESSED_STEER_IDS = "goldfive.processed_steer_ids"


class PauseChange(StrEnum):
    NONE = "NONE"
    #: The run is paused from the ack on (a running task finishes first).
    PAUSES = "PAUSES"
    #: The run is not paused from the ack on.
    UNPAUSES = "UNPAUSES"


class Follows(StrEnum):
    """The event that shows the acked effect landed."""

    NOTHING = "NOTHING"
    #: A USER_STEER drift, then the replan.
    REPLAN = "REPLAN"
    #: A message parked for the agent (MessageParked with the control's id).
    MESSAGE = "MESSAGE"
    #: The task set back to PENDING (TaskTransitioned, reason "rewind").
    REWIND = "REWIND"
    #: ApprovalGranted / ApprovalRejected.
    DECISION = "DECISION"
    #: A CUSTOM INFO drift holding the status.
    SNAPSHOT = "SNAPSHOT"
    #: The steer queue or the standing guidance changed (steer_queued, steer_queue_changed,
    #: guidance_added, guidance_removed with the control's id).
    NOTE = "NOTE"


#: Effects a resumed run applies again when the recording has the ack but not what follows.
_APPLIED_AGAIN = frozenset({Follows.REPLAN, Follows.MESSAGE, Follows.REWIND})


@dataclass(frozen=True, slots=True)
class AckMeaning:
    pause: PauseChange = PauseChange.NONE
    #: The run ends (CANCEL): a resumed run ends cancelled at once.
    ends_run: bool = False
    follows: Follows = Follows.NOTHING
    #: A STEER's dedupe id counts as processed: a retry is a DUPLICATE (spec 1.c).
    steer_seen: bool = False

    @property
    def applied_again_on_resume(self) -> bool:
        return self.follows in _APPLIED_AGAIN


NOTHING = AckMeaning()

ACK_MEANING: Mapping[AppliedAs, AckMeaning] = MappingProxyType(
    {
        AppliedAs.PAUSED: AckMeaning(pause=PauseChange.PAUSES),
        AppliedAs.RESUMED: AckMeaning(pause=PauseChange.UNPAUSES),
        AppliedAs.CANCELLED: AckMeaning(pause=PauseChange.UNPAUSES, ends_run=True),
        AppliedAs.REPLANNED: AckMeaning(follows=Follows.REPLAN, steer_seen=True),
        AppliedAs.QUEUED: AckMeaning(follows=Follows.REPLAN, steer_seen=True),
        AppliedAs.NOTED: AckMeaning(follows=Follows.MESSAGE, steer_seen=True),
        AppliedAs.DUPLICATE: NOTHING,
        AppliedAs.REWOUND: AckMeaning(follows=Follows.REWIND),
        AppliedAs.DECIDED: AckMeaning(follows=Follows.DECISION),
        AppliedAs.INJECTED: AckMeaning(follows=Follows.MESSAGE),
        AppliedAs.STATUS: AckMeaning(follows=Follows.SNAPSHOT),
        AppliedAs.INTERCEPT_SET: NOTHING,
        AppliedAs.RESTARTED: NOTHING,
        AppliedAs.RULES: NOTHING,
        AppliedAs.UNCHANGED: NOTHING,
        AppliedAs.REFUSED: NOTHING,
        AppliedAs.ANSWERED: AckMeaning(follows=Follows.DECISION),
        # The note waits in the queue (steer_queued follows) and is replanned on later, as its own STEER.
        AppliedAs.QUEUED_LATER: AckMeaning(follows=Follows.NOTE, steer_seen=True),
        AppliedAs.STANDING: AckMeaning(follows=Follows.NOTE, steer_seen=True),
        AppliedAs.QUEUE_CHANGED: AckMeaning(follows=Follows.NOTE),
        AppliedAs.WITHDRAWN: AckMeaning(follows=Follows.NOTE),
        AppliedAs.QUEUE_LISTED: NOTHING,
        AppliedAs.GUIDANCE_LISTED: NOTHING,
        AppliedAs.GUIDANCE_REMOVED: AckMeaning(follows=Follows.NOTE),
        AppliedAs.MADE_STANDING: AckMeaning(follows=Follows.NOTE),
        AppliedAs.BUDGET_SET: NOTHING,
        AppliedAs.BUDGET_SET_RESUMED: AckMeaning(pause=PauseChange.UNPAUSES),
    }
)


def applied_as_of(ack: ControlAck, kind: str) -> AppliedAs | None:
    """What the control was applied as: the ack's field, else read the old way."""
    if ack.applied_as is not None:
        return ack.applied_as
    return legacy_applied_as(kind, ack.result, ack.detail)


def meaning_of(ack: ControlAck, kind: str) -> AckMeaning:
    """The row for ``ack`` (of a control of ``kind``); a kind nobody knows implies nothing."""
    applied = applied_as_of(ack, kind)
    return NOTHING if applied is None else ACK_MEANING[applied]


_LEGACY_BY_KIND: Mapping[str, AppliedAs] = MappingProxyType(
    {
        "PAUSE": AppliedAs.PAUSED,
        "GOLDFIVE_PAUSE_ESCALATE": AppliedAs.PAUSED,
        "RESUME": AppliedAs.RESUMED,
        "CANCEL": AppliedAs.CANCELLED,
        "REWIND_TO": AppliedAs.REWOUND,
        "APPROVE": AppliedAs.DECIDED,
        "REJECT": AppliedAs.DECIDED,
        "INJECT_MESSAGE": AppliedAs.INJECTED,
        "STATUS_QUERY": AppliedAs.STATUS,
        "INTERCEPT_TRANSFER": AppliedAs.INTERCEPT_SET,
        "APPROVAL_RULES": AppliedAs.RULES,
        "BUDGET": AppliedAs.BUDGET_SET,
    }
)


def legacy_applied_as(kind: str, result: AckResult | str, detail: str) -> AppliedAs | None:
    """What an ack without ``applied_as`` was applied as, from its kind and the English detail
    the handlers wrote before the field existed. For recordings made before it (and acks of a
    custom handler that did not say); never for an ack that has the field. None: a kind this
    version knows nothing about (it implies nothing)."""
    if result != AckResult.SUCCESS:
        return AppliedAs.REFUSED
    kind = kind.upper()
    if kind == "STEER":
        if detail.startswith("duplicate"):
            return AppliedAs.DUPLICATE
        if "planner cannot replan" in detail:
            return AppliedAs.NOTED
        if "applied to the plan once" in detail:
            return AppliedAs.QUEUED
        return AppliedAs.REPLANNED
    if kind == "GOLDFIVE_STEER":
        return AppliedAs.RESTARTED if detail.startswith("restarting") else AppliedAs.UNCHANGED
    return _LEGACY_BY_KIND.get(kind)
