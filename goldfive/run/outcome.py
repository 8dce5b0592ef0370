"""ControlOutcome: what a handler decided for one control (its ack, and the effect the
ControlLoop applies once the ack is out), and the helpers handlers build it with.

``ok`` takes what the control was applied as and reads the rest from ``ACK_MEANING``: an
outcome ends the run exactly when its row says so, and carries the STEER to replan exactly
when a replan follows, so the run does what the views and resume read off the ack.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from goldfive.control import AckResult, AppliedAs, ControlAck, ControlMessage
from goldfive.controls.payloads import Cancel, Control, Steer
from goldfive.run.acks import ACK_MEANING, Follows

__all__ = ["ControlOutcome", "Effect", "RunCancelled", "fail", "ok", "refused", "unsupported"]

#: What a control does once its ack is out (what the awaitable returns is not read).
Effect = Callable[[], Awaitable[Any]]


class RunCancelled(Exception):
    """Internal: a CANCEL (or an escalation nobody answered) ends the run. Raised through the
    planner, the ladder and the executor up to the Runner, which records RunAborted."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class ControlOutcome:
    ack: ControlAck
    #: Applied after the ack is published.
    effect: Effect | None = None
    #: A STEER whose replan runs after the ack (after the in-flight invocation is cancelled,
    #: with ``cancel_invocation``).
    steer: Control[Steer] | None = None
    #: Abort the run (CANCEL).
    cancel_run: bool = False
    cancel_reason: str = ""
    #: Stop the in-flight invocation(s) (STEER with a replanning planner, GOLDFIVE_STEER).
    cancel_invocation: bool = False
    #: Re-run the interrupted task(s) afterwards (GOLDFIVE_STEER).
    rerun_cancelled: bool = False

    @property
    def steer_message(self) -> ControlMessage | None:
        """goldfive v1's name (docs/protocol.md#steer-delete-and-replan): the STEER as it was sent."""
        return None if self.steer is None else self.steer.message

    async def apply(self) -> None:
        if self.effect is not None:
            await self.effect()


#: Read once (an enum member read is slow on Python 3.11: see handlers._STATUS).
_SUCCESS = AckResult.SUCCESS

#: Per AppliedAs, read once from ACK_MEANING: (the run ends, a replan follows).
_RUN_FLAGS = {applied: (m.ends_run, m.follows is Follows.REPLAN) for applied, m in ACK_MEANING.items()}


def ok(c: Control[Any], applied_as: AppliedAs, detail: str, *, effect: Effect | None = None, **kw: Any) -> ControlOutcome:
    """A SUCCESS ack saying what ``c`` was applied as; what the run does next per ACK_MEANING."""
    ends_run, replans = _RUN_FLAGS[applied_as]
    ack = ControlAck(c.message.id, _SUCCESS, detail, applied_as=applied_as)
    out = ControlOutcome(ack=ack, effect=effect, **kw)
    if ends_run:
        out.cancel_run = True
        out.cancel_reason = c.payload.why if isinstance(c.payload, Cancel) else detail
    if replans and isinstance(c.payload, Steer):
        out.steer = c
    return out


def refused(control_id: str, result: AckResult, detail: str) -> ControlOutcome:
    return ControlOutcome(ack=ControlAck(control_id, result, detail, applied_as=AppliedAs.REFUSED))


def fail(c: Control[Any], detail: str) -> ControlOutcome:
    return refused(c.id, AckResult.FAILURE, detail)


def unsupported(c: Control[Any], detail: str = "") -> ControlOutcome:
    return refused(c.id, AckResult.UNSUPPORTED, detail or f"unsupported control kind {c.kind_name}")
