"""A single-run actor refused by its hub (another live hub holds the run's lock: an old copy)
ends itself instead of staying idle until ``ray kill``; any other end is left for the placer
to read (``wait``). The decision, without Ray (tests/ray is slow)."""

from __future__ import annotations

import logging
import sqlite3
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from goldfive.hub.connected import RunnerAttachment
from goldfive.placement.actor import RunActor, leaves_after
from goldfive.placement.ray_placer import RayPlacer
from goldfive.placement.resources import RayResources
from goldfive.store import locks
from goldfive.store.registry import PLACED, PLACED_LOCK_HOLDER, LaunchSpec
from goldfive.testing import HubThread


def test_only_a_refused_run_ends_its_actor() -> None:
    assert leaves_after("refused: run r1 is held by another live hub of the fleet, which runs it")
    for outcome in ("completed", "ended: cancelled", "already ended (completed: done)", "failed: RemoteError: gone", ""):
        assert not leaves_after(outcome), outcome


def test_an_actor_whose_run_was_refused_leaves_and_one_whose_run_ended_stays() -> None:
    """RunActor calls ``leave`` after a refusal only (outside Ray, ``leave`` ends nothing)."""
    left: list[str] = []

    class Watched(RunActor):
        def leave(self) -> None:
            left.append("left")

    actor = Watched.__new__(Watched)  # the run itself is not started: its end is given below
    actor._run = SimpleNamespace(spec=SimpleNamespace(run_id="r1"))  # type: ignore[assignment]
    actor._ended("completed")
    assert left == []
    actor._ended("refused: held by hub-b")
    assert left == ["left"]
    RunActor.leave(actor)  # no Ray here: nothing to end, no error


def _placer_with_a_placed_run(tmp_path: Path) -> tuple[HubThread, RayPlacer, RunnerAttachment]:
    """A hub (its SQLite file) with a run it placed: registered with its lock, as
    ``RayPlacer.place`` does, and served pending placement. No Ray: the placer is only bound."""
    hub = HubThread(tmp_path / "hub.sqlite")
    placer = RayPlacer(RayResources(), advertise=hub.addr)
    service = hub.server.extra[0]
    placer.bind(hub.host, service, hub.addr)
    run_id = uuid.uuid4().hex
    hub.call(hub.host.registry.register_many([(run_id, PLACED, "", LaunchSpec(target="demo", goal="g"))], hold=PLACED_LOCK_HOLDER))  # type: ignore[attr-defined]
    run = RunnerAttachment.placed_run(run_id, service.recorder, goal_summary="g")
    hub.host.adopt(run.run)
    return hub, placer, run


def test_a_hubs_actor_ended_while_another_live_hub_holds_the_run_says_so_and_leaves_the_run_unfailed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another live hub holds the run's lock (it placed the run again or took it back) and
    this hub's actor of it ended (refused, or ended by that hub): the log says who holds the
    run, and the placement is not marked failed (the run is that hub's)."""
    hub, placer, run = _placer_with_a_placed_run(tmp_path)
    db = str(tmp_path / "hub.sqlite")
    other = sqlite3.connect(db, isolation_level=None)
    try:
        hub.call(hub.host.registry.let_go([run.run_id], PLACED_LOCK_HOLDER))  # type: ignore[attr-defined]
        assert locks.take(other, run.run_id, db, "hub B") is None  # alive: this very process, as another holder
        with caplog.at_level(logging.INFO, logger="goldfive.placement"):
            hub.call(placer._actor_ended(run, "Ray gave up on its actor: ActorDiedError", "the actor died"))
        assert not run.connection.startswith("placement failed")
        said = [r.getMessage() for r in caplog.records if r.name == "goldfive.placement"]
        assert any(m.startswith(f"run {run.run_id} is held by hub B (process ") for m in said), said
        assert not any("Ray gave up" in m or "Ray actor is gone" in m for m in said), said
    finally:
        hub.stop()
        locks.drop(other, run.run_id, db, "hub B")
        other.close()


def test_a_hubs_actor_ended_while_this_hub_holds_the_run_marks_the_placement_failed(tmp_path: Path) -> None:
    hub, placer, run = _placer_with_a_placed_run(tmp_path)
    try:
        hub.call(placer._actor_ended(run, "Ray gave up on its actor: ActorDiedError", "the actor died"))
        assert run.connection == "placement failed: Ray gave up on its actor: ActorDiedError"
    finally:
        hub.stop()
