"""Placed runs: a run the hub placed on a cluster, shown from the moment it is asked for.

Such a run is a ServedRun of origin PLACED holding a
:class:`~goldfive.hub.connected.RunnerAttachment` (its ``placement`` part says where the
placement stands): until its actor first connects it is
"pending placement" (the summary's state is PENDING_PLACEMENT, its connection says why, in the
cluster's words); from then on it is a connected run like any other: the actor's events are
stored and served by the hub, controls go down its stream. When its actor is restarted
elsewhere, the new one connects as the same run and takes it over. A run the hub recorded
before it restarted is placed again as one (``RunnerAttachment.from_recorded(old, recorder,
placed=True)``): its history stays served while a new actor is placed, which continues it.
"""

from __future__ import annotations

from goldfive.hub.connected import PENDING_PLACEMENT, PLACEMENT_FAILED, RunnerAttachment
from goldfive.store.recorder import HubRecorder

__all__ = ["PENDING_PLACEMENT", "PLACEMENT_FAILED", "PlacedRun"]


def PlacedRun(run_id: str, recorder: HubRecorder, *, goal_summary: str = "") -> RunnerAttachment:  # noqa: N802 (the class it was)
    """A run this hub places on a cluster: its runner part (``RunnerAttachment.placed_run``;
    the served run is its ``run``). Once a class of its own."""
    return RunnerAttachment.placed_run(run_id, recorder, goal_summary=goal_summary)
