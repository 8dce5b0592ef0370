"""Ray's word on why a run is not placed yet is asked in a thread (``why_pending``: Ray's state
API, which takes a second or more on a loaded machine) and shown when it comes; by then the
run may have been placed, and its process may have failed. A run whose process failed before
it connected stays PLACEMENT_FAILED with why: an answer that arrives later is about a
placement that is over. Ray's own calls are stood in for, as in test_place_again (a real
cluster cannot be made to answer its state API late on cue); only the placer is under test."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from goldfive.placement import ray_placer  # noqa: E402
from goldfive.placement.pending import PlacedRun  # noqa: E402
from goldfive.placement.ray_placer import RayPlacer  # noqa: E402
from goldfive.placement.resources import RayResources  # noqa: E402
from goldfive.placement.spec import PlacedSpec  # noqa: E402
from goldfive.remote.host import RunHost  # noqa: E402
from goldfive.store.recorder import RunRecorder  # noqa: E402

FAILED = "failed: AssertionError: this agent's dependencies are not installed on this node"


class _Call:
    """A Ray remote method whose object ref's future the test completes."""

    def __init__(self) -> None:
        self.result: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def remote(self, *args: Any) -> Any:
        ref = type("Ref", (), {})()
        ref.future = lambda: self.result
        return ref


class _Actor:
    def __init__(self) -> None:
        self._actor_id = bytes.fromhex("cd" * 16)
        self.where, self.wait = _Call(), _Call()


class _ActorClass:
    def __init__(self) -> None:
        self.actor = _Actor()

    def options(self, **kwargs: Any) -> _ActorClass:
        return self

    def remote(self, spec: PlacedSpec) -> _Actor:
        return self.actor


class _SlowToSay(RayPlacer):
    """Ray's state API answers once the test lets it (after the run's process failed)."""

    def __init__(self) -> None:
        super().__init__(RayResources())
        self.asked = threading.Event()
        self.answer = threading.Event()

    def why_pending(self, actor_ids: list[str]) -> dict[str, str]:
        self.asked.set()
        assert self.answer.wait(10)
        return {a: "Ray ALIVE: 2 node(s) can hold {CPU: 1}; Ray is starting its process or waiting for their resources to be free" for a in actor_ids}


async def test_a_run_whose_process_fails_while_ray_is_asked_why_it_waits_stays_placement_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_placer, "ASK_EVERY", 0.05)  # Ray is asked at once (3 s otherwise)
    killed: list[Any] = []
    monkeypatch.setattr(ray, "kill", lambda actor, no_restart: killed.append(actor))
    placer = _SlowToSay()
    placer._bound_host = RunHost(":memory:")
    placer.address = "127.0.0.1:1"
    placer._actor_class = actors = _ActorClass()
    recorder = RunRecorder(tmp_path / "runs.sqlite")
    run = PlacedRun("fails-1", recorder, goal_summary="g")
    try:
        placer._launch(run, PlacedSpec(run_id="fails-1", hub=placer.address, agent="hubonly:agent", goal="g"))
        assert await asyncio.to_thread(placer.asked.wait, 10), "Ray was not asked why the run waits"
        # Meanwhile the actor is placed and its process fails before the run connects.
        actors.actor.where.result.set_result(("node-1", 4242))
        actors.actor.wait.result.set_result(FAILED)
        for _ in range(500):
            if run.label == "PLACEMENT_FAILED":
                break
            await asyncio.sleep(0.01)
        assert run.label == "PLACEMENT_FAILED", run.connection
        placer.answer.set()  # Ray's answer, about a placement that is over, comes now
        assert placer._explainer is not None
        await asyncio.wait_for(placer._explainer, 10)
        assert run.label == "PLACEMENT_FAILED", run.connection
        assert run.connection == f"placement failed: its process ended before the run connected: {FAILED}"
        assert killed == [actors.actor]
    finally:
        placer.answer.set()
        for task in [*placer._watchers, placer._explainer]:
            if task is not None:
                task.cancel()
        await recorder.close()
