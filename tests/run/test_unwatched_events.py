"""The events the run does not hand to the watchdog (``goldfive.run.context.UNWATCHED``) are
of kinds the watchdog ignores: skipping it for them loses no finding."""

from __future__ import annotations

from typing import Any, Callable

from goldfive import events
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.run.context import UNWATCHED
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session
from goldfive.watchdog.watchdog import _WATCHED

_BUILD: dict[Callable[..., Any], Callable[[Session], events.Event]] = {
    events.control_received: lambda s: events.control_received(s, ControlMessage(ControlKind.APPROVE, payload={"target_id": "c1"})),
    events.control_acked: lambda s: events.control_acked(s, ControlAck("x", AckResult.SUCCESS), "APPROVE"),
    events.approval_requested: lambda s: events.approval_requested(s, target_id="c1", kind="tool", tool_name="t"),
    events.approval_granted: lambda s: events.approval_granted(s, "c1"),
    events.approval_rejected: lambda s: events.approval_rejected(s, "c1"),
    events.approval_decided: lambda s: events.approval_decided(s, target_id="c1", outcome="approved"),
    events.drift_detected: lambda s: events.drift_detected(s, DriftEvent(DriftKind.CUSTOM, DriftSeverity.INFO, "d", "t1")),
}


def test_every_event_kept_from_the_watchdog_is_of_a_kind_it_does_not_watch() -> None:
    session = Session(run_id="r1")
    assert set(UNWATCHED) <= set(_BUILD), "a factory added to UNWATCHED needs a line here"
    for factory in UNWATCHED:
        kind = _BUILD[factory](session).WhichOneof("payload")
        assert kind not in _WATCHED, f"{factory.__name__} builds {kind}, which the watchdog watches"


def test_the_watched_kinds_are_still_handed_to_the_watchdog() -> None:
    assert not {f for f in UNWATCHED if f.__name__ in _WATCHED}
    assert events.agent_step not in UNWATCHED and events.task_progress not in UNWATCHED
