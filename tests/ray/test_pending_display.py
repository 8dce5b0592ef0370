"""How a run waiting for placement is shown: ``ctl runs``' line and the runs screen's row say
PENDING_PLACEMENT and the cluster's reason; a placed run's line is like any connected run's."""

from __future__ import annotations

from goldfive.cli.ctl.hub import run_line
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive_tui.runs.remote import row_from_summary

WHY = "pending placement: Ray PENDING_CREATION: no live node has {gpu_big: 1} (the run asks {CPU: 0.1, gpu_big: 1}; 3 node(s) up)"


def test_a_pending_run_shows_the_clusters_reason_in_ctl_runs_and_on_the_runs_screen() -> None:
    s = service_pb2.RunSummary(run_id="r1", state="PENDING_PLACEMENT", origin="ray", connection=WHY, goal_summary="deck")
    line = run_line(s, now=0)
    assert "PENDING_PLACEMENT" in line and line.endswith(f"deck  [{WHY}]")
    row = row_from_summary(s, [])
    assert row.state == "PENDING_PLACEMENT" and row.goal == f"deck [{WHY}]"


def test_a_placed_run_that_lost_its_actor_reads_like_a_connected_run_that_did() -> None:
    s = service_pb2.RunSummary(run_id="r1", state="RUNNING", origin="ray", connection="disconnected", goal_summary="deck")
    assert " ray(disconnected) " in run_line(s, now=0)
    row = row_from_summary(s, [])
    assert row.state == "DISCONNECTED" and row.goal == "deck"
