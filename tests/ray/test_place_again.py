"""RayPlacer.place_again (a fleet hub placing again a run whose hub is gone) lists Ray's actors
and ends the gone hub's in a thread: the hub's event loop keeps serving meanwhile (the listing
waits up to CONNECT_TIMEOUT for each actor's answer). Ray's own calls are stood in for (a real
cluster takes seconds to start; the other tests here run one): only the placer is under test. Here,
not in tests/placement, because importing Ray takes seconds and only tests/ray's worker pays it
already; the test itself takes well under a second and starts no cluster."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from goldfive.placement.pending import PlacedRun  # noqa: E402
from goldfive.placement.ray_placer import RayPlacer  # noqa: E402
from goldfive.placement.resources import RayResources  # noqa: E402
from goldfive.remote.host import RunHost  # noqa: E402
from goldfive.store.recorder import RunRecorder  # noqa: E402
from goldfive.store.registry import LaunchSpec  # noqa: E402


class _Remote:
    """A Ray remote method: ``.remote()`` gives an object ref whose future never completes."""

    def remote(self, *args: Any) -> Any:
        ref = type("Ref", (), {})()
        ref.future = concurrent.futures.Future
        return ref


class _Actor:
    def __init__(self, name: str) -> None:
        self._actor_id = bytes.fromhex("ab" * 16)
        self.name = name
        self.where = self.wait = self.dials = _Remote()


class _ActorClass:
    """``ray.remote(RunActor)``: records the actors created."""

    def __init__(self) -> None:
        self.created: list[Any] = []

    def options(self, **kwargs: Any) -> _ActorClass:
        self.name = kwargs["name"]
        return self

    def remote(self, spec: Any) -> _Actor:
        self.created.append(spec)
        return _Actor(self.name)


async def test_placing_a_run_again_lists_and_ends_rays_actors_off_the_hubs_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop_ran = threading.Event()
    seen: dict[str, bool] = {}
    gone_hubs_actor = _Actor("run-again-1")

    def list_named_actors() -> list[str]:  # blocking, as Ray's is: returns once the loop has run
        seen["listing"] = loop_ran.wait(2.0)
        return ["run-again-1"]

    def wait(refs: list[Any], num_returns: int, timeout: float) -> tuple[list[Any], list[Any]]:
        return list(refs), []

    killed: list[Any] = []

    def kill(actor: Any, no_restart: bool) -> None:
        loop_ran.clear()
        seen["kill"] = loop_ran.wait(2.0)
        killed.append(actor)

    monkeypatch.setattr(ray.util, "list_named_actors", list_named_actors)
    monkeypatch.setattr(ray, "get_actor", lambda name: gone_hubs_actor)
    monkeypatch.setattr(ray, "wait", wait)
    monkeypatch.setattr(ray, "get", lambda ref: {"again-1": "127.0.0.1:9"})  # dials the gone hub
    monkeypatch.setattr(ray, "kill", kill)

    placer = RayPlacer(RayResources())
    placer._bound_host = RunHost(":memory:")
    placer.address = "127.0.0.1:1"
    placer._actor_class = _ActorClass()
    recorder = RunRecorder(tmp_path / "runs.sqlite")
    run = PlacedRun("again-1", recorder, goal_summary="g")

    async def ticking() -> None:
        while True:
            loop_ran.set()
            await asyncio.sleep(0.001)

    ticker = asyncio.create_task(ticking())
    await asyncio.sleep(0)
    loop_ran.clear()
    try:
        await asyncio.wait_for(placer.place_again(run, LaunchSpec(target="m:agent", goal="g")), 10)
        assert seen == {"listing": True, "kill": True}  # the loop ran while each blocking call waited
        assert killed == [gone_hubs_actor]  # one copy of the run: the gone hub's actor is ended
        assert [s.run_id for s in placer._actor_class.created] == ["again-1"]  # and a new one placed
        assert placer._host.get("again-1") is run.run
    finally:
        ticker.cancel()
        for task in [*placer._watchers, placer._explainer]:
            if task is not None:
                task.cancel()
        await recorder.close()
