"""A single-run actor refused by its hub (another live hub holds the run's lock: an old copy)
ends itself instead of staying idle until ``ray kill``; any other end is left for the placer
to read (``wait``). The decision, without Ray (tests/ray is slow)."""

from __future__ import annotations

from types import SimpleNamespace

from goldfive.placement.actor import RunActor, leaves_after


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
