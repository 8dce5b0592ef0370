"""The hub's registry on a real PostgreSQL server (goldfive.store.postgres_registry): routed
controls are written behind, off the control's path, and seen while they wait; who wrote a
run's events is the log's (PostgresStore.forget_run), never deleted by the registry."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest

from goldfive import events as E
from goldfive.errors import GoldfiveError
from goldfive.store.postgres import PostgresStore
from goldfive.store.postgres_registry import PostgresRegistry
from goldfive.store.registry import RoutedControl
from goldfive.types import Session


def _routed_rows(dsn: str) -> list[tuple[str, str, str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT run_id, control_id, author, target_id FROM goldfive_routed ORDER BY control_id").fetchall()
    return [(str(r), str(c), str(a), str(t)) for r, c, a, t in rows]


async def test_a_routed_control_is_seen_while_its_row_waits_and_written_on_closing(pg_dsn: str) -> None:
    store = await PostgresStore.open(pg_dsn)
    registry = PostgresRegistry(store)
    try:
        async with await psycopg.AsyncConnection.connect(pg_dsn) as locker:
            async with locker.transaction():  # no row can be inserted until this ends: the writer waits
                await locker.execute("LOCK TABLE goldfive_routed IN EXCLUSIVE MODE")
                t0 = time.perf_counter()
                await asyncio.wait_for(registry.routed("r1", RoutedControl("c1", "APPROVE", "alice", "call-1", 5)), 2)
                await asyncio.wait_for(registry.routed("r2", RoutedControl("c2", "PAUSE", "bob")), 2)
                took = time.perf_counter() - t0
                assert took < 0.5, f"routed() waited {took:.2f} s for the database"
                # a reader (a hub checking a ledger entry) sees it before it is written
                assert await registry.routed_controls("r1") == {"c1": RoutedControl("c1", "APPROVE", "alice", "call-1", 5)}
                assert set(await registry.routed_controls("r2")) == {"c2"}
                assert _routed_rows(pg_dsn) == []
                assert not await registry.flush_routed(0.05)  # still waiting for the lock
                registry.close()  # the hub stops: nothing new is taken, what waits is still written
                with pytest.raises(GoldfiveError, match="closed"):
                    await registry.routed("r1", RoutedControl("c3", "RESUME", "carol"))
        await registry.aclose(10)
        assert _routed_rows(pg_dsn) == [("r1", "c1", "alice", "call-1"), ("r2", "c2", "bob", "")]
        assert registry.routed_failures == 0
        # read back by another registry (a hub restarted, or another hub of the fleet)
        again = PostgresRegistry(store)
        assert await again.routed_controls("r1") == {"c1": RoutedControl("c1", "APPROVE", "alice", "call-1", 5)}
    finally:
        await registry.aclose(1)
        await store.close()


async def test_a_burst_of_routed_controls_is_all_written_and_a_forgotten_run_keeps_none(pg_dsn: str) -> None:
    store = await PostgresStore.open(pg_dsn)
    registry = PostgresRegistry(store)
    try:
        for i in range(50):
            await registry.routed("kept", RoutedControl(f"k{i:02d}", "STATUS_QUERY", "alice"))
        await registry.routed("gone", RoutedControl("g1", "PAUSE", "alice"))
        await registry.forget("gone")  # its waiting row is dropped, not written after the delete
        assert await registry.flush_routed(10)
        rows = _routed_rows(pg_dsn)
        assert [c for _, c, _, _ in rows] == [f"k{i:02d}" for i in range(50)]
        assert await registry.routed_controls("gone") == {}
    finally:
        await registry.aclose(10)
        await store.close()


async def test_who_wrote_a_run_is_the_logs_to_forget_and_only_for_a_run_with_no_events(pg_dsn: str) -> None:
    store = await PostgresStore.open(pg_dsn)
    store.writer = "hub"
    registry = PostgresRegistry(store)
    try:
        await registry.register("kept", "connected", "alice")
        store.write_as("kept", "alice")
        await store.append([E.run_started(Session(run_id="kept"), goal_summary="g")])
        await registry.forget("kept")  # the registry's rows only: the log's provenance stays
        assert await registry.get("kept") is None
        assert await store.writers("kept") == [(0, "alice")]
        assert not await store.forget_run("kept")  # it stored events: who wrote them is kept
        assert await store.writers("kept") == [(0, "alice")]

        store.write_as("empty", "bob")  # a runner that said hello and left
        assert await store.forget_run("empty")
        await store.append([E.run_started(Session(run_id="empty"), goal_summary="g")])  # the same id, later
        assert await store.writers("empty") == [(0, "hub")]  # bob's name was dropped with the run
    finally:
        await registry.aclose(10)
        await store.close()
