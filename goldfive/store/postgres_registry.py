"""The hub's registry (goldfive.store.registry) in a PostgreSQL database shared by several hubs:
one registration per run for the whole fleet, so a runner refused by one hub is refused by
every hub, and a hub continues only the runs some hub of the fleet started.

Routed controls are written behind, as :class:`~goldfive.store.registry.SqliteRegistry` writes
them: ``routed`` queues the row and returns, a task of the registry's own writes what waits in
one transaction ``linger`` (20 ms) after the first (the controls sent meanwhile share it, and no
control waits for the database before it goes down the runner's stream); ``routed_controls`` sees the rows still
waiting; ``close`` then ``await aclose()`` writes what is left. What the row says (the control's
author) is what the hub's own checks put on the control, as before.

Placed runs' locks (:class:`~goldfive.store.registry.PlacedRunLocks`) are the fleet's run
locks (``goldfive_run_locks``, held under the hub's id, alive while its heartbeat is):
``register_many(..., hold=...)`` takes them with the registrations in one transaction, as
SQLite's registry does, so a run is its placing hub's from the moment it is placed, not only
once its actor connects."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from collections.abc import Sequence

from goldfive.errors import GoldfiveError
from goldfive.store.locks import LockHolder, RunLocked
from goldfive.store.postgres import PostgresStore
from goldfive.store.registry import LaunchSpec, Marks, Registration, RoutedControl, _marks, _now_ms, _registration

__all__ = ["PostgresRegistry"]

log = logging.getLogger("goldfive.hub")

_RoutedRow = tuple[str, str, str, str, str, int]
_INSERT_ROUTED = (
    "INSERT INTO goldfive_routed (run_id, control_id, kind, author, target_id, sent_at_ms)"
    " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (run_id, control_id) DO NOTHING"
)


class PostgresRegistry:
    """``hub_id`` and ``gone_after``: the fleet's id of the hub this registry serves, under
    which it holds placed runs' locks, and after how many seconds without a heartbeat another
    hub's lock is stale (the fleet's ``interrupt_after``). Without ``hub_id`` it holds none
    (``register_many(hold=...)`` and ``hold_runs`` refuse)."""

    def __init__(self, store: PostgresStore, *, linger: float = 0.02, hub_id: str = "", gone_after: float = 30.0) -> None:
        self.store = store
        self.hub_id = hub_id
        self.gone_after = gone_after
        #: Runs whose lock this registry took for its hub (``let_go`` drops only those). Not
        #: a cache for ``hold_runs``: another hub takes this hub's locks once its heartbeat
        #: stalls for ``gone_after``, so the database is asked each time (read, not written).
        self._holding: set[str] = set()
        #: How long the writer task waits after a routed control before writing, so that the
        #: controls sent meanwhile share its transaction (the PostgresSink's flush interval).
        self.linger = linger
        # Routed controls waiting for the writer task, and those it is writing now.
        self._routed_queue: list[_RoutedRow] = []
        self._routed_writing: list[_RoutedRow] = []
        self._routed_task: asyncio.Task[None] | None = None
        self._routed_wake = asyncio.Event()  # set: the writer task has something to do
        self._routed_batch = asyncio.Event()  # set (and replaced) when a batch is done
        self._closed = False
        #: Routed controls the writer task could not write (its log says why).
        self.routed_failures = 0

    async def register(self, run_id: str, origin: str, owner: str, launch: LaunchSpec | None = None) -> Registration:
        async with self.store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_runs (run_id, origin, owner, launch, created_at_ms) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (run_id) DO NOTHING",
                (run_id, origin, owner, launch.to_json() if launch is not None else None, _now_ms()),
            )
            row = await (
                await conn.execute(
                    "SELECT run_id, origin, owner, launch, created_at_ms FROM goldfive_runs WHERE run_id = %s", (run_id,)
                )
            ).fetchone()
        assert row is not None
        return _registration(tuple(row))

    async def register_many(self, rows: Sequence[tuple[str, str, str, LaunchSpec | None]], *, hold: str | None = None) -> None:
        """Record each ``(run_id, origin, owner, launch)`` unless it is recorded already, in one
        transaction. ``hold``: in the same transaction take each run's lock for this hub (its
        fleet id: ``hold`` names the purpose, the hub's id is the holder the other hubs check
        against its heartbeat); RunLocked when another live hub holds one (nothing is written)."""
        now = _now_ms()
        async with self.store.connection() as conn, conn.transaction():
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO goldfive_runs (run_id, origin, owner, launch, created_at_ms) VALUES (%s, %s, %s, %s, %s)"
                    " ON CONFLICT (run_id) DO NOTHING",
                    [(run_id, origin, owner, launch.to_json() if launch is not None else None, now) for run_id, origin, owner, launch in rows],
                )
            if hold is not None:
                refused = await self.store.take_locks_in(conn, [r[0] for r in rows], self._hub(), self.gone_after)
                if refused:
                    first = next(iter(refused.values()))
                    raise RunLocked(f"run {first.run_id} is held by {first.describe()}")  # rolls the transaction back
        if hold is not None:
            self._holding.update(r[0] for r in rows)

    async def hold_runs(self, run_ids: Sequence[str], holder: str) -> dict[str, LockHolder]:
        """Take the locks of ``run_ids`` for this hub (free, already its, or held by a hub
        gone for ``gone_after`` seconds), in one transaction; returns the runs another live
        hub holds, with who holds each. ``holder`` names the purpose (see ``register_many``).
        A lock this registry took is checked (read), not taken again: a placed run's actor
        connecting writes nothing when the run is still this hub's."""
        if not run_ids:
            return {}
        hub = self._hub()
        todo = list(run_ids)
        async with self.store.connection() as conn:
            ours = [r for r in todo if r in self._holding]
            if ours:
                # Taken by this hub already (at placement, with the registration, or taking the
                # run back): whether it still is is read, not written again. Another hub takes
                # one only once this hub's heartbeat stalls; that one, and one gone, are taken below.
                cur = await conn.execute(
                    "SELECT run_id FROM goldfive_run_locks WHERE run_id = ANY(%s::text[]) AND owner = %s", (ours, hub)
                )
                still = {str(r) for (r,) in await cur.fetchall()}
                todo = [r for r in todo if r not in still]
            if not todo:
                return {}
            async with conn.transaction():
                refused = await self.store.take_locks_in(conn, todo, hub, self.gone_after)
        self._holding.update(r for r in todo if r not in refused)
        self._holding.difference_update(refused)
        return refused

    async def held_elsewhere(self, run_id: str) -> LockHolder | None:
        """Who holds ``run_id``'s lock when it is another hub seen within ``gone_after``
        seconds; None when it is free, this hub's, or a gone hub's (nothing is taken)."""
        return await self.store.live_holder(run_id, self._hub(), self.gone_after)

    async def let_go(self, run_ids: Sequence[str], holder: str) -> None:
        """Drop the locks of ``run_ids`` this hub holds (their runs ended, or the hub stops)."""
        mine = [r for r in run_ids if r in self._holding]
        self._holding.difference_update(mine)
        if mine:
            await self.store.drop_locks(mine, self._hub())

    def _hub(self) -> str:
        if not self.hub_id:
            raise GoldfiveError("this registry holds no run locks: it was made without the fleet's hub id")
        return self.hub_id

    async def get(self, run_id: str) -> Registration | None:
        async with self.store.connection() as conn:
            row = await (
                await conn.execute(
                    "SELECT run_id, origin, owner, launch, created_at_ms FROM goldfive_runs WHERE run_id = %s", (run_id,)
                )
            ).fetchone()
        return _registration(tuple(row)) if row is not None else None

    async def all(self) -> dict[str, Registration]:
        async with self.store.connection() as conn:
            rows = await (await conn.execute("SELECT run_id, origin, owner, launch, created_at_ms FROM goldfive_runs")).fetchall()
        return {r.run_id: r for r in (_registration(tuple(row)) for row in rows)}

    async def forget(self, run_id: str) -> None:
        """Drop the registry's rows of ``run_id`` (who wrote its events is the log's to
        forget: PostgresStore.forget_run)."""
        self._routed_queue = [r for r in self._routed_queue if r[0] != run_id]
        while any(r[0] == run_id for r in self._routed_writing):  # must not land after the delete
            await self._routed_batch.wait()
        async with self.store.connection() as conn:
            for table in ("goldfive_runs", "goldfive_routed", "goldfive_marks"):
                await conn.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))

    async def routed(self, run_id: str, control: RoutedControl) -> None:
        """Queued for the writer task (returns at once; ``routed_controls`` sees it)."""
        if self._closed:
            raise GoldfiveError("the hub's registry is closed")
        self._routed_queue.append(
            (run_id, control.control_id, control.kind, control.author, control.target_id, control.sent_at_ms or _now_ms())
        )
        self._routed_wake.set()
        if self._routed_task is None or self._routed_task.done():
            self._routed_task = asyncio.get_running_loop().create_task(self._write_routed(), name="goldfive-routed-writer")

    async def _write_routed(self) -> None:
        """The writer task: what waits, in one transaction at a time, until closed."""
        try:
            while True:
                if not self._routed_queue:
                    if self._closed:
                        return
                    self._routed_wake.clear()
                    await self._routed_wake.wait()
                    continue
                if not self._closed and self.linger > 0:  # the rest of a burst joins this write
                    await asyncio.sleep(self.linger)
                self._routed_writing, self._routed_queue = self._routed_queue, []
                rows = self._routed_writing
                try:
                    async with self.store.connection() as conn, conn.transaction():
                        async with conn.cursor() as cur:
                            await cur.executemany(_INSERT_ROUTED, rows)
                except asyncio.CancelledError:
                    self._routed_queue[:0] = rows  # not written: still waiting
                    raise
                except Exception as exc:  # kept in the hub's memory; a restarted hub will not verify them
                    self.routed_failures += len(rows)
                    log.warning("hub: could not record %d routed controls (%s): %s", len(rows), ", ".join(r[1] for r in rows[:3]), exc)
                self._batch_done()
        finally:
            self._batch_done()

    def _batch_done(self) -> None:
        self._routed_writing = []
        done, self._routed_batch = self._routed_batch, asyncio.Event()
        done.set()

    async def flush_routed(self, timeout: float | None = None) -> bool:
        """Wait until every routed control given so far is written (or failed, counted in
        ``routed_failures``); False when ``timeout`` seconds passed first."""

        async def written() -> None:
            while self._routed_queue or self._routed_writing:
                await self._routed_batch.wait()

        try:
            await asyncio.wait_for(written(), timeout)
        except TimeoutError:
            return False
        return True

    async def routed_controls(self, run_id: str) -> dict[str, RoutedControl]:
        # taken before the read: a row written while it runs is in one or the other
        waiting = [r for r in (*self._routed_writing, *self._routed_queue) if r[0] == run_id]
        async with self.store.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT control_id, kind, author, target_id, sent_at_ms FROM goldfive_routed WHERE run_id = %s", (run_id,)
                )
            ).fetchall()
        out = {str(c): RoutedControl(str(c), str(k), str(a), str(t), int(ms)) for c, k, a, t, ms in rows}
        for _, c, k, a, t, ms in waiting:  # not written yet: as good as written for whoever asks here
            out.setdefault(c, RoutedControl(c, k, a, t, ms))
        return out

    async def mark(self, run_id: str, mark: str, by: str) -> None:
        async with self.store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_marks (run_id, mark, by_whom, at_ms) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (run_id, mark) DO NOTHING",
                (run_id, mark, by, _now_ms()),
            )

    async def unmark(self, run_id: str, mark: str) -> None:
        async with self.store.connection() as conn:
            await conn.execute("DELETE FROM goldfive_marks WHERE run_id = %s AND mark = %s", (run_id, mark))

    async def marks(self) -> Marks:
        async with self.store.connection() as conn:
            rows = await (await conn.execute("SELECT run_id, mark, by_whom, at_ms FROM goldfive_marks")).fetchall()
        return _marks([tuple(r) for r in rows])

    def close(self) -> None:
        """No control is recorded from now on; the writer task writes what waits and ends
        (``await aclose()`` waits for it). The store's pool is closed by its owner."""
        self._closed = True
        self._routed_wake.set()

    async def aclose(self, timeout: float = 30.0) -> None:
        """``close``, and wait (up to ``timeout`` s) until the routed controls still waiting
        are written; those left then are said in the log."""
        self.close()
        task = self._routed_task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            log.warning("hub: %d routed controls not recorded on closing (the database did not answer in %g s)",
                        len(self._routed_queue), timeout)  # fmt: skip
