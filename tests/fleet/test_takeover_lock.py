"""A run whose hub is gone is taken over by another hub of the fleet under the run's lock (one
hub takes it): the lock's row is written once for that, by the takeover, on a real PostgreSQL
server. A placed run is placed again and its new actor connects: before, the takeover wrote
the lock, the fleet's claim of the run wrote it again and the connecting actor a third time;
a run hosted in its hub's process, continued in the new hub's, had it written twice. Ray is
not needed to show it: a placer that serves the run as placed stands in for it (no actor
starts), and the test connects as the new actor, as tests/placement/test_placed_lock.py does."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

import psycopg

from goldfive.store.postgres import PostgresStore
from goldfive.store.postgres_registry import PostgresRegistry
from goldfive.store.registry import HOSTED, PLACED, PLACED_LOCK_HOLDER, LaunchSpec
from tests.hub.drive import Stream, run_events

if TYPE_CHECKING:
    from goldfive.hub.connected import RunnerAttachment
    from goldfive.hub.service import HubService
    from goldfive.remote.host import RunHost

LAUNCH = LaunchSpec(target="demo", goal="g")
#: The fleet id of the hub that placed the run and is gone (no heartbeat row: never seen).
GONE = "gone0000hub00000"
#: Every write of a lock row, noted by the database itself.
NOTE_LOCK_WRITES = """
CREATE TABLE lock_writes (n serial PRIMARY KEY, run_id text, owner text, op text);
CREATE FUNCTION note_lock_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO lock_writes (run_id, owner, op) VALUES (NEW.run_id, NEW.owner, TG_OP); RETURN NEW; END $$;
CREATE TRIGGER note_lock_write AFTER INSERT OR UPDATE ON goldfive_run_locks FOR EACH ROW EXECUTE FUNCTION note_lock_write();
"""


class ServesPlaced:
    """A placer that places nothing: a run placed again is served pending placement, as
    RayPlacer.place_again serves it before its actor starts."""

    def __init__(self) -> None:
        self.placed_again: asyncio.Queue[str] = asyncio.Queue()
        self.host: RunHost | None = None

    def bind(self, host: RunHost, hub: HubService, address: str) -> None:
        self.host = host

    async def place(self, request: Any, started_by: str = "") -> str:
        raise AssertionError("nothing is started here")

    async def place_again(self, run: RunnerAttachment, launch: LaunchSpec) -> None:
        assert self.host is not None
        self.host.adopt(run.run)
        self.placed_again.put_nowait(run.run_id)

    async def resume_recorded(self) -> list[str]:
        return []

    async def close(self) -> None:
        return None


async def _lock_writes(dsn: str, run_id: str) -> list[tuple[str, str]]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        rows = await (await conn.execute("SELECT owner, op FROM lock_writes WHERE run_id = %s ORDER BY n", (run_id,))).fetchall()
    return [(str(owner), str(op)) for owner, op in rows]


async def _gone_hubs_run(pg_dsn: str, origin: str) -> str:
    """What a gone hub left: the run (started by it, its first events stored), its lock and
    its ownership (hosted: started by a hub of the fleet); the database notes lock writes."""
    run_id = uuid.uuid4().hex
    store = await PostgresStore.open(pg_dsn)
    try:
        await store.migrate()
        await store.append(run_events(run_id, 3))
        gone = PostgresRegistry(store, hub_id=GONE, gone_after=3)
        await gone.register_many([(run_id, origin, "r1", LAUNCH)], hold=PLACED_LOCK_HOLDER)
        async with store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_run_owners (run_id, hub_id, runner_host, runner_pid, hosted) VALUES (%s, %s, 'gone-host', 7, true)",
                (run_id, GONE),
            )
            await conn.execute(NOTE_LOCK_WRITES)
    finally:
        await store.close()
    return run_id


async def test_a_placed_run_taken_from_a_gone_hub_and_placed_again_writes_its_lock_once(pg_dsn: str) -> None:
    import grpc

    from tests.hub.test_hub_trust import R1, _serve_until_ready, _stop

    run_id = await _gone_hubs_run(pg_dsn, PLACED)
    placer = ServesPlaced()
    task, hub = await _serve_until_ready(pg_dsn, placer=placer, interrupt_after=3)  # type: ignore[arg-type]
    try:
        fleet = hub.extra[0].fleet
        assert await asyncio.wait_for(placer.placed_again.get(), 30) == run_id
        for _ in range(300):  # the takeover claims the run once it has placed it again
            owner = fleet.ownership.of(run_id)
            if owner is not None and owner.hub_id == fleet.hub_id:
                break
            await asyncio.sleep(0.02)
        assert owner is not None and owner.hub_id == fleet.hub_id
        async with grpc.aio.insecure_channel(hub.address) as channel:
            actor = Stream(channel, R1)  # the run's new actor connects
            welcome = await actor.hello_as(run_id)
            assert welcome.WhichOneof("body") == "welcome"
            writes = await _lock_writes(pg_dsn, run_id)
            assert writes == [(fleet.hub_id, "UPDATE")], f"the lock was written {len(writes)} times: {writes}"
            await actor.call.done_writing()
    finally:
        await _stop(task)


async def test_a_hosted_run_taken_from_a_gone_hub_and_continued_here_writes_its_lock_once(pg_dsn: str) -> None:
    from tests.hub.test_hub_trust import _serve_until_ready, _stop

    run_id = await _gone_hubs_run(pg_dsn, HOSTED)
    task, hub = await _serve_until_ready(pg_dsn, interrupt_after=3)  # type: ignore[arg-type]
    try:
        fleet = hub.extra[0].fleet
        for _ in range(500):  # the takeover claims the run once it goes on here
            owner = fleet.ownership.of(run_id)
            if owner is not None and owner.hub_id == fleet.hub_id:
                break
            await asyncio.sleep(0.02)
        assert owner is not None and owner.hub_id == fleet.hub_id and owner.hosted
        writes = await _lock_writes(pg_dsn, run_id)
        assert writes == [(fleet.hub_id, "UPDATE")], f"the lock was written {len(writes)} times: {writes}"
    finally:
        await _stop(task)
