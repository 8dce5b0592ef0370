"""The run lock decides which hub a placed run belongs to (serve --ray; issue 27 part 5),
without Ray: the locks a placing hub takes with its registrations (one transaction for a
burst), and an actor whose run's lock another live hub holds is refused by the hub it dials
and ends its run there (the agent never runs), on a stream of its own and on a pool's shared
stream; with the lock free the hub takes it and the run goes on."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from goldfive.placement.actor import RunPool, run_placed
from goldfive.placement.pending import PlacedRun
from goldfive.placement.spec import PlacedSpec
from goldfive.store import locks
from goldfive.store.registry import PLACED, PLACED_LOCK_HOLDER, LaunchSpec, SqliteRegistry
from goldfive.testing import HubThread

LAUNCH = LaunchSpec(target="demo", goal="g")
PLAN = {"summary": "one step", "tasks": [{"id": "a", "title": "A"}], "edges": []}
#: Notes in a file that it ran: a refused copy must never get here.
MARKING = """
from pathlib import Path

async def agent(task, session):
    Path(__file__).with_suffix(".ran").write_text(task.id)
    return "did " + task.id
"""


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _commits(conn: sqlite3.Connection) -> list[str]:
    seen: list[str] = []
    conn.set_trace_callback(lambda sql: seen.append(sql.split()[0].upper()) if sql.split()[0].upper() in ("BEGIN", "COMMIT") else None)
    return seen


def test_a_burst_of_placements_takes_its_locks_with_its_registrations_in_one_commit(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite"
    registry = SqliteRegistry(db)
    try:
        seen = _commits(registry._conn)
        run_ids = [uuid.uuid4().hex for _ in range(1000)]
        asyncio.run(registry.register_many([(r, PLACED, "", LAUNCH) for r in run_ids], hold=PLACED_LOCK_HOLDER))
        assert seen == ["BEGIN", "COMMIT"], "one transaction for the burst (its fsync is the cost, not the rows)"
        # held: asked again (a run's actor connecting), nothing is read or written
        seen.clear()
        assert asyncio.run(registry.hold_runs(run_ids[:10], PLACED_LOCK_HOLDER)) == {}
        assert seen == []
    finally:
        registry.close()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT pid, owner, count(*) FROM run_locks GROUP BY pid, owner").fetchall()
    assert rows == [(os.getpid(), PLACED_LOCK_HOLDER, 1000)]


def test_a_burst_with_a_run_held_by_another_live_hub_registers_none_of_it(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite"
    other = sqlite3.connect(db, isolation_level=None)
    registry = SqliteRegistry(db)
    try:
        assert locks.take(other, "r1", str(db), "another hub") is None  # alive: this very process, as another holder
        with pytest.raises(locks.RunLocked, match="run r1 is held by another hub"):
            asyncio.run(registry.register_many([("r0", PLACED, "", LAUNCH), ("r1", PLACED, "", LAUNCH)], hold=PLACED_LOCK_HOLDER))
        assert asyncio.run(registry.all()) == {}
        assert locks.holder(other, "r0") is None
    finally:
        registry.close()
        locks.drop(other, "r1", str(db), "another hub")
        other.close()


def test_holding_runs_takes_free_and_stale_locks_and_names_the_live_holders_of_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite"
    other = sqlite3.connect(db, isolation_level=None)
    registry = SqliteRegistry(db)
    try:
        locks.ensure_table(other)
        other.execute("INSERT INTO run_locks (run_id, pid, host, acquired_at_ms, owner) VALUES ('gone', ?, ?, 1, 'a killed hub')", (_dead_pid(), locks.socket.gethostname()))
        other.execute("INSERT INTO run_locks (run_id, pid, host, acquired_at_ms, owner) VALUES ('broken', 'x', 7, 1, 'a killed hub')")
        assert locks.take(other, "live", str(db), "another hub") is None
        seen = _commits(registry._conn)
        refused = asyncio.run(registry.hold_runs(["free", "gone", "live", "broken"], PLACED_LOCK_HOLDER))
        assert seen == ["BEGIN", "COMMIT"]
        assert sorted(refused) == ["broken", "live"]
        assert refused["live"].owner == "another hub"
        assert "unreadable lock row" in refused["broken"].host  # never taken blind
        for run_id in ("free", "gone"):
            held = locks.holder(other, run_id)
            assert held is not None and held.owner == PLACED_LOCK_HOLDER and held.alive(str(db))
        asyncio.run(registry.let_go(["free", "gone", "live"], PLACED_LOCK_HOLDER))  # not "live": another holder's
        assert locks.holder(other, "free") is None and locks.holder(other, "gone") is None
        assert locks.holder(other, "live") is not None
    finally:
        registry.close()
        locks.drop(other, "live", str(db), "another hub")
        other.close()


def _placed(hub: HubThread, tmp_path: Path) -> PlacedSpec:
    """A run registered as placed by the hub (as RayPlacer.place records it) and its spec."""
    name = f"marking_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(MARKING, encoding="utf-8")
    run_id = uuid.uuid4().hex
    hub.call(hub.host.registry.register(run_id, PLACED, "", LaunchSpec(target=f"{name}:agent", goal="one step")))
    hub.host.adopt(PlacedRun(run_id, hub.server.extra[0].recorder, goal_summary="one step").run)  # as the placer serves it
    spec = PlacedSpec(run_id=run_id, hub=hub.addr, agent=f"{name}:agent", goal="one step", plan_json=json.dumps(PLAN), search_dir=str(tmp_path))
    return spec


def _ran(spec: PlacedSpec, tmp_path: Path) -> bool:
    return (tmp_path / f"{spec.agent.split(':')[0]}.ran").exists()


@pytest.mark.parametrize("shared", [False, True], ids=["own-stream", "pool"])
def test_an_actor_whose_run_another_live_hub_holds_is_refused_and_ends_its_run_without_running_it(tmp_path: Path, shared: bool) -> None:
    db = tmp_path / "hub.sqlite"
    hub = HubThread(db)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        spec = _placed(hub, tmp_path)
        assert locks.take(other, spec.run_id, str(db), "the hub that placed it again") is None
        if shared:
            outcome = RunPool("p").run(spec)
        else:
            outcome = asyncio.run(asyncio.wait_for(run_placed(spec), 30))
        assert outcome.startswith("refused: FAILED_PRECONDITION: run " + spec.run_id + " belongs to another hub (the hub that placed it again")
        assert "holds its lock" in outcome
        assert not _ran(spec, tmp_path), "the refused copy ran the agent"
        run = hub.host.get(spec.run_id)
        assert run is None or not list(run.events_after(-1)), "nothing of the refused copy is recorded"
    finally:
        hub.stop()
        locks.drop(other, spec.run_id, str(db), "the hub that placed it again")
        other.close()


def test_an_actor_whose_runs_lock_is_free_or_stale_is_taken_by_the_hub_it_dials_and_goes_on(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite"
    hub = HubThread(db)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        spec = _placed(hub, tmp_path)
        locks.ensure_table(other)  # held by a hub that was killed: stale
        other.execute("INSERT INTO run_locks (run_id, pid, host, acquired_at_ms, owner) VALUES (?, ?, ?, 1, 'a killed hub')", (spec.run_id, _dead_pid(), locks.socket.gethostname()))
        assert asyncio.run(asyncio.wait_for(run_placed(spec), 30)) == "completed"
        assert _ran(spec, tmp_path)
        held = locks.holder(other, spec.run_id)
        assert held is not None and held.owner == PLACED_LOCK_HOLDER and held.alive(str(db))  # the hub's now
    finally:
        hub.stop()
        other.close()


async def test_on_a_shared_database_a_runner_of_a_placed_run_another_live_hub_holds_is_refused(pg_dsn: str) -> None:
    """Several hubs on PostgreSQL: the lock is the fleet's (a live hub's heartbeat keeps it).
    Hub B holds a placed run's lock (it placed the run again): an old copy dialing hub A is
    refused there, nothing of it is recorded; once B lets the run go, A takes it."""
    import grpc

    from tests.hub.drive import Stream
    from tests.hub.test_hub_trust import R1, _serve_until_ready, _stop

    task_a, a = await _serve_until_ready(pg_dsn)  # type: ignore[arg-type]
    task_b, b = await _serve_until_ready(pg_dsn)  # type: ignore[arg-type]
    run_id = uuid.uuid4().hex
    try:
        await a.host.registry.register(run_id, PLACED, "r1", LAUNCH)
        fleet_b = b.extra[0].fleet
        assert await fleet_b.tables.take_run(run_id, 60)
        async with grpc.aio.insecure_channel(a.address) as channel:
            old_copy = Stream(channel, R1)
            await old_copy.call.write(_hello(run_id))
            exc = await old_copy.refused()
            assert exc.code() is grpc.StatusCode.FAILED_PRECONDITION
            assert exc.details().startswith(f"run {run_id} belongs to another hub ({fleet_b.hub_id} (process {os.getpid()} on ")
            assert exc.details().endswith("which holds its lock: this copy of it must end")
            await fleet_b.tables.drop_run(run_id)  # B let it go (its run ended elsewhere, or B is gone)
            taken = Stream(channel, R1)
            welcome = await taken.hello_as(run_id)
            assert welcome.WhichOneof("body") == "welcome"
            await taken.call.done_writing()
    finally:
        await _stop(task_b)
        await _stop(task_a)


async def test_on_a_shared_database_a_placement_takes_the_runs_lock_with_its_registration(pg_dsn: str) -> None:
    """PostgreSQL as SQLite: a placing hub's burst of registrations takes the runs' locks in
    the same transaction (the fleet's locks, under the hub's id), so another hub cannot take
    a placed run before its actor connects; a burst holding a run another live hub holds
    registers none of it; a run that ends lets its lock go."""
    from goldfive.store.registry import placed_run_locks
    from tests.hub.test_hub_trust import _serve_until_ready, _stop

    task_a, a = await _serve_until_ready(pg_dsn)  # type: ignore[arg-type]
    task_b, b = await _serve_until_ready(pg_dsn)  # type: ignore[arg-type]
    try:
        fleet_a, fleet_b = a.extra[0].fleet, b.extra[0].fleet
        locking = placed_run_locks(a.host.registry)
        assert locking is not None, "the PostgreSQL registry takes no lock at placement"
        run_ids = [uuid.uuid4().hex for _ in range(50)]
        await locking.register_many([(r, PLACED, "r1", LAUNCH) for r in run_ids], hold=PLACED_LOCK_HOLDER)
        assert {r for r, reg in (await a.host.registry.all()).items() if reg.origin == PLACED} == set(run_ids)
        for run_id in run_ids[:3]:
            assert not await fleet_b.tables.take_run(run_id, 60), "another live hub took a run just placed"
        assert await fleet_a.tables.take_run(run_ids[0], 60)  # the placing hub's own
        assert await locking.hold_runs(run_ids, PLACED_LOCK_HOLDER) == {}

        held_by_b = uuid.uuid4().hex
        assert await fleet_b.tables.take_run(held_by_b, 60)
        fresh = uuid.uuid4().hex
        with pytest.raises(locks.RunLocked, match=f"run {held_by_b} is held by {fleet_b.hub_id}"):
            await locking.register_many([(fresh, PLACED, "r1", LAUNCH), (held_by_b, PLACED, "r1", LAUNCH)], hold=PLACED_LOCK_HOLDER)
        assert await a.host.registry.get(fresh) is None and await a.host.registry.get(held_by_b) is None
        assert await fleet_b.tables.take_run(fresh, 60), "a refused burst left a lock behind"
        refused = await locking.hold_runs([held_by_b], PLACED_LOCK_HOLDER)
        assert refused[held_by_b].owner == fleet_b.hub_id
        held = await locking.held_elsewhere(held_by_b)  # read only: why this hub's actor of it ended
        assert held is not None and held.owner == fleet_b.hub_id
        assert await locking.held_elsewhere(run_ids[3]) is None  # this hub's

        await locking.let_go(run_ids[:2], PLACED_LOCK_HOLDER)  # their runs ended
        assert await fleet_b.tables.take_run(run_ids[1], 60)
        assert not await fleet_b.tables.take_run(run_ids[2], 60)
    finally:
        await _stop(task_b)
        await _stop(task_a)


def _hello(run_id: str):  # type: ignore[no-untyped-def]
    from goldfive.pb.goldfive.v1 import service_pb2

    return service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id=run_id, host="old-actor", pid=7, resume_after=-1))


async def test_on_a_shared_database_a_placed_runs_actor_connecting_checks_the_lock_its_hub_holds_and_takes_it_not_again(
    pg_dsn: str,
) -> None:
    """The placing hub took the run's lock with its registration: when the run's actor
    connects, the hub reads that it still holds it; the lock's row is not written again
    (neither by the placed-run check nor by the fleet's claim). Had another hub taken it
    meanwhile (this hub's heartbeat looked stale to it), the actor is refused as before."""
    import grpc
    import psycopg

    from goldfive.store.registry import placed_run_locks
    from tests.hub.drive import Stream
    from tests.hub.test_hub_trust import R1, _serve_until_ready, _stop

    async def row_version(run_id: str) -> tuple[str, str]:
        """The lock row's owner and its version (xmin: every write of the row changes it)."""
        async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as conn:
            row = await (await conn.execute("SELECT owner, xmin::text FROM goldfive_run_locks WHERE run_id = %s", (run_id,))).fetchone()
        assert row is not None
        return str(row[0]), str(row[1])

    task_a, a = await _serve_until_ready(pg_dsn)  # type: ignore[arg-type]
    task_b, b = await _serve_until_ready(pg_dsn)  # type: ignore[arg-type]
    try:
        fleet_a, fleet_b = a.extra[0].fleet, b.extra[0].fleet
        locking = placed_run_locks(a.host.registry)
        assert locking is not None
        mine, taken = uuid.uuid4().hex, uuid.uuid4().hex
        await locking.register_many([(mine, PLACED, "r1", LAUNCH), (taken, PLACED, "r1", LAUNCH)], hold=PLACED_LOCK_HOLDER)
        placed = await row_version(mine)
        assert placed[0] == fleet_a.hub_id
        async with grpc.aio.insecure_channel(a.address) as channel:
            actor = Stream(channel, R1)
            welcome = await actor.hello_as(mine)
            assert welcome.WhichOneof("body") == "welcome"
            assert await row_version(mine) == placed, "the connecting actor's lock was taken again"
            await actor.call.done_writing()

            # Hub B took the other run (as it does when A's heartbeat looks stale to it): A's
            # actor of it is an old copy, although A took that lock at placement.
            async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as conn:
                await conn.execute("UPDATE goldfive_run_locks SET owner = %s WHERE run_id = %s", (fleet_b.hub_id, taken))
            old_copy = Stream(channel, R1)
            await old_copy.call.write(_hello(taken))
            exc = await old_copy.refused()
            assert exc.code() is grpc.StatusCode.FAILED_PRECONDITION
            assert exc.details().startswith(f"run {taken} belongs to another hub ({fleet_b.hub_id} ")
            assert (await row_version(taken))[0] == fleet_b.hub_id
    finally:
        await _stop(task_b)
        await _stop(task_a)
