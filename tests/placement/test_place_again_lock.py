"""A run placed again (a fleet hub taking over a gone hub's run) lets its lock go when it
ends, as a run the hub placed first does. Without Ray (tests/ray is slow): the actor and
Ray's answer on it are stand-ins; the lock is the hub's SQLite registry's."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from goldfive.hub.connected import RunnerAttachment
from goldfive.placement.ray_placer import RayPlacer
from goldfive.placement.resources import RayResources
from goldfive.store import locks
from goldfive.store.registry import PLACED, PLACED_LOCK_HOLDER, LaunchSpec
from goldfive.testing import HubThread


class _Actors:
    """Ray's actor class as the placer calls it (``options(...).remote(spec)``)."""

    def options(self, **_: Any) -> _Actors:
        return self

    def remote(self, spec: Any) -> Any:
        return SimpleNamespace(_actor_id=bytes.fromhex(uuid.uuid4().hex))


def test_a_run_placed_again_drops_its_lock_when_it_ends(tmp_path: Path) -> None:
    db = str(tmp_path / "hub.sqlite")
    hub = HubThread(db)
    placer = RayPlacer(RayResources(), advertise=hub.addr)
    service = hub.server.extra[0]
    placer.bind(hub.host, service, hub.addr)
    placer._actor_class = _Actors()
    placer._live_actors = lambda: {}  # type: ignore[method-assign]  # the gone hub's actor is gone too
    ends = asyncio.Event()

    async def follow(run: Any, actor: Any, ended: Any) -> bool:  # Ray's answer: the run ended
        await ends.wait()
        return False  # (nothing to end: the stand-in actor is not Ray's)

    placer._follow = follow  # type: ignore[method-assign]
    other = sqlite3.connect(db, isolation_level=None)
    run_id = uuid.uuid4().hex
    launch = LaunchSpec(target="demo", goal="g")
    try:
        registry: Any = hub.host.registry
        hub.call(registry.register(run_id, PLACED, "", launch))
        # The takeover takes the lock, then has the run placed again.
        assert hub.call(registry.hold_runs([run_id], PLACED_LOCK_HOLDER)) == {}
        run = RunnerAttachment.placed_run(run_id, service.recorder, goal_summary="g")
        hub.call(placer.place_again(run, launch))
        held = locks.holder(other, run_id)
        assert held is not None and held.owner == PLACED_LOCK_HOLDER  # while it runs

        async def end() -> None:
            ends.set()
            await asyncio.gather(*placer._watchers)

        hub.call(end())
        assert locks.holder(other, run_id) is None
    finally:
        hub.stop()
        other.close()
