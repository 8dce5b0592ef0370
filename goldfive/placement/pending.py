"""PlacedRun: a run the hub placed on a cluster, shown from the moment it is asked for.

Until its actor first connects it is "pending placement" (the summary's state is
PENDING_PLACEMENT, its connection says why, in the cluster's words); from then on it is a
connected run like any other (:class:`~goldfive.hub.connected.ConnectedRun`): the actor's
events are stored and served by the hub, controls go down its stream. When its actor is
restarted elsewhere, the new one connects as the same run and takes it over. A run the hub
recorded before it restarted is placed again as one (``PlacedRun.from_recorded``): its history
stays served while a new actor is placed, which continues it.
"""

from __future__ import annotations

from typing import Any

from goldfive.hub.connected import ConnectedRun
from goldfive.remote.host import HostedRun
from goldfive.store.history import RunHistory
from goldfive.store.recorder import RunRecorder

__all__ = ["PENDING_PLACEMENT", "PLACEMENT_FAILED", "PlacedRun"]

PENDING_PLACEMENT = "pending placement"
PLACEMENT_FAILED = "placement failed"


class PlacedRun(ConnectedRun):
    origin = "ray"
    #: Started by its hub (several hubs on one database: another hub places it again when
    #: this one is gone; goldfive.hub.fleet).
    started_by_hub = True

    def __init__(
        self, run_id: str, recorder: RunRecorder, *, goal_summary: str = "", history: RunHistory | None = None
    ) -> None:
        super().__init__(run_id, recorder, history=history)
        self.connection = PENDING_PLACEMENT
        #: Whether an actor ever connected as this run.
        self.placed = False
        #: Why the cluster has not placed it yet ("" before anyone asked the cluster).
        self.pending_reason = ""
        #: The placed process's id on the cluster (Ray's actor id), for an operator's tools.
        self.actor_id = ""
        if goal_summary:
            self.state.goal_summary = goal_summary

    @classmethod
    def from_recorded(cls, old: HostedRun, recorder: RunRecorder) -> PlacedRun:
        """A run this hub recorded (its actor gone with the last hub), to be placed again."""
        run = super().from_recorded(old, recorder)
        assert isinstance(run, PlacedRun)
        return run

    @property
    def label(self) -> str:
        """PENDING_PLACEMENT until the first actor connects (PLACEMENT_FAILED if its process
        ended first), then the run's own phase."""
        if self.placed or self.state.finished:
            return ""
        return "PLACEMENT_FAILED" if self.connection.startswith(PLACEMENT_FAILED) else "PENDING_PLACEMENT"

    def failed(self, reason: str) -> None:
        """The placed process ended before the run ever connected (e.g. the agent's module
        could not be imported on the node)."""
        if not self.placed:
            self.pending_reason = reason
            self.connection = f"{PLACEMENT_FAILED}: {reason}"

    def waiting(self, reason: str) -> None:
        """The cluster's latest word on why the run is not placed (ignored once it is)."""
        if not self.placed:
            self.pending_reason = reason
            self.connection = f"{PENDING_PLACEMENT}: {reason}" if reason else PENDING_PLACEMENT

    def attach(self, conn: Any, goal_summary: str = "") -> None:
        self.placed = True
        self.pending_reason = ""
        super().attach(conn, goal_summary)
