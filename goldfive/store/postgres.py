"""PostgreSQL store: what the SQLite store holds (every run's events, keyed by run and
sequence; per-run resume locks), for several hubs sharing one database. Optional extra:
``pip install 'goldfive[postgres]'`` (psycopg 3, async, with a connection pool).

The schema is created and migrated by goldfive itself: ``goldfive_schema`` holds one version
number; a database whose version is newer than this goldfive knows is refused with one line,
and a database that cannot be reached is one line too (:class:`StoreUnavailable`).

Writes: :meth:`PostgresStore.append` inserts a batch in one transaction; a (run, sequence)
already stored is skipped and counted (the first one stays, as in SQLite). Reads stream a
run's history in sequence order by keyset pages, never the whole run in memory.
:class:`PostgresSink` is the EventSink that batches a live run's events into it.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, NamedTuple

from google.protobuf.message import DecodeError
import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from goldfive.compat import decode_recorded
from goldfive.errors import GoldfiveError, ReplayError, SinkError
from goldfive.settings import redact_dsn
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.locks import LockHolder
from goldfive.store.provenance import Writers
from goldfive.store.recording_sink import RecordingSink
from goldfive.store.sqlite import RunInfo
from goldfive.store.sqlite_log import Row, row_of

__all__ = ["EVENTS_CHANNEL", "SCHEMA_VERSION", "PostgresSink", "PostgresStore", "SchemaTooNew", "StoreUnavailable", "redact"]

log = logging.getLogger("goldfive.store")
# The pool logs every failed connection attempt (a warning each time, while the database is
# away); goldfive says once that writes fail and once that they work again.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

#: The schema this goldfive writes. Bump it with a new entry in _MIGRATIONS.
SCHEMA_VERSION = 4
CHUNK = 1000
#: The channel every hub LISTENs on for "run R is stored through sequence S" (goldfive.hub.fleet).
EVENTS_CHANNEL = "goldfive_events"

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE goldfive_events ("
        " run_id TEXT NOT NULL, sequence BIGINT NOT NULL, event_id TEXT NOT NULL, kind TEXT NOT NULL,"
        " emitted_at_ms BIGINT NOT NULL, payload BYTEA NOT NULL, PRIMARY KEY (run_id, sequence))",
        "CREATE TABLE goldfive_run_locks ("
        " run_id TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,"
        " acquired_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    ),
    # Several hubs on one database (goldfive.hub.fleet): who is up, which hub each run's
    # runner is connected to, and the controls routed from one hub to another with their acks.
    2: (
        "CREATE TABLE goldfive_hubs ("
        " hub_id TEXT PRIMARY KEY, address TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,"
        " started_at TIMESTAMPTZ NOT NULL DEFAULT now(), seen_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        "CREATE TABLE goldfive_run_owners ("
        " run_id TEXT PRIMARY KEY, hub_id TEXT NOT NULL, runner_host TEXT NOT NULL, runner_pid INTEGER NOT NULL,"
        " hosted BOOLEAN NOT NULL DEFAULT false, since TIMESTAMPTZ NOT NULL DEFAULT now())",
        "CREATE TABLE goldfive_controls ("
        " id BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL, from_hub TEXT NOT NULL, to_hub TEXT NOT NULL,"
        " control BYTEA NOT NULL, ack BYTEA, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), acked_at TIMESTAMPTZ)",
    ),
    # The hubs' own records (goldfive.store.registry): who registered each run and what a hub
    # started (with its launch), who wrote its events, which controls a hub routed to it.
    3: (
        "CREATE TABLE goldfive_runs ("
        " run_id TEXT PRIMARY KEY, origin TEXT NOT NULL, owner TEXT NOT NULL, launch TEXT, created_at_ms BIGINT NOT NULL)",
        "CREATE TABLE goldfive_writers ("
        " run_id TEXT NOT NULL, from_sequence BIGINT NOT NULL, writer TEXT NOT NULL, PRIMARY KEY (run_id, from_sequence))",
        "CREATE TABLE goldfive_routed ("
        " run_id TEXT NOT NULL, control_id TEXT NOT NULL, kind TEXT NOT NULL, author TEXT NOT NULL, target_id TEXT NOT NULL,"
        " sent_at_ms BIGINT NOT NULL, PRIMARY KEY (run_id, control_id))",
    ),
    # A person's marks on a run (goldfive.store.registry: acknowledged, archived).
    4: (
        "CREATE TABLE goldfive_marks ("
        " run_id TEXT NOT NULL, mark TEXT NOT NULL, by_whom TEXT NOT NULL, at_ms BIGINT NOT NULL, PRIMARY KEY (run_id, mark))",
    ),
}


class StoreUnavailable(GoldfiveError):
    """The database cannot be reached or used."""


class SchemaTooNew(GoldfiveError):
    """The database was written by a newer goldfive."""


class _Columns(NamedTuple):
    """A batch of rows as the columns one INSERT unnests."""

    run_ids: list[str]
    sequences: list[int]
    event_ids: list[str]
    kinds: list[str]
    emitted_at_ms: list[int]
    payloads: list[bytes]


#: The DSN without its password, for messages.
redact = redact_dsn


class PostgresStore:
    """Open with ``await PostgresStore.open(dsn)``; close with ``await store.close()``."""

    def __init__(self, pool: AsyncConnectionPool, dsn: str) -> None:
        self._pool = pool
        self.dsn = dsn
        #: Events refused because a different event was stored at their (run, sequence).
        self.conflicts = 0
        self.last_conflict = ""
        self._held: dict[str, str] = {}  # run id -> the holder ``lock`` took it for
        #: Who this store's appends are recorded as written by (``write_as`` names another for a run).
        self._writers = Writers("")

    @classmethod
    async def open(cls, dsn: str, *, min_size: int = 1, max_size: int = 4, timeout: float = 5.0) -> PostgresStore:
        try:  # one connection first: its error says why (the pool's says only that it timed out)
            probe = await psycopg.AsyncConnection.connect(dsn, connect_timeout=max(1, int(timeout)))
        except Exception as exc:
            raise StoreUnavailable(f"cannot reach PostgreSQL at {redact(dsn)}: {_one_line(exc)}") from None
        await probe.close()
        pool = AsyncConnectionPool(dsn, min_size=min_size, max_size=max_size, open=False, timeout=timeout)
        try:
            await pool.open(wait=True, timeout=timeout)
        except Exception as exc:  # PoolTimeout wraps the connection error; say where, in one line
            await pool.close()
            raise StoreUnavailable(f"cannot reach PostgreSQL at {redact(dsn)}: {_one_line(exc)}") from None
        store = cls(pool, dsn)
        try:
            await store.migrate()
        except BaseException:
            await pool.close()
            raise
        return store

    async def close(self) -> None:
        """Drop the locks taken through ``lock`` and close the pool. Idempotent."""
        if self._pool.closed:
            return
        for run_id, holder in list(self._held.items()):
            try:
                await self.drop_lock(run_id, holder)
            except Exception as exc:  # an unreachable database: the row stays, said once
                log.warning("could not drop the lock of run %s on closing: %s", run_id, _one_line(exc))
                break
        self._held.clear()
        await self._pool.close()

    def connection(self, timeout: float | None = None) -> AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]:
        """A connection of the store's pool (waiting up to ``timeout`` s for one), for the
        other tables goldfive.store keeps in this database: the registry's
        (goldfive.store.postgres_registry) and the fleet's (goldfive.store.postgres_fleet).
        Only goldfive.store writes SQL."""
        return self._pool.connection(timeout=timeout)

    # -- schema ------------------------------------------------------------------------------
    async def schema_version(self) -> int:
        async with self._pool.connection() as conn:
            await conn.execute("CREATE TABLE IF NOT EXISTS goldfive_schema (version INTEGER NOT NULL)")
            row = await (await conn.execute("SELECT max(version) FROM goldfive_schema")).fetchone()
            return int(row[0]) if row and row[0] is not None else 0

    async def migrate(self) -> None:
        """Bring the schema to SCHEMA_VERSION; refuse a newer one. Concurrent hubs serialise
        on an advisory lock, so each migration runs once."""
        async with self._pool.connection() as conn:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext('goldfive_schema'))")
                await conn.execute("CREATE TABLE IF NOT EXISTS goldfive_schema (version INTEGER NOT NULL)")
                row = await (await conn.execute("SELECT max(version) FROM goldfive_schema")).fetchone()
                have = int(row[0]) if row and row[0] is not None else 0
                if have > SCHEMA_VERSION:
                    raise SchemaTooNew(
                        f"the database at {redact(self.dsn)} has goldfive schema version {have}, newer than this "
                        f"goldfive understands ({SCHEMA_VERSION}); upgrade goldfive"
                    )
                for version in range(have + 1, SCHEMA_VERSION + 1):
                    for statement in _MIGRATIONS[version]:
                        await conn.execute(statement)
                    await conn.execute("INSERT INTO goldfive_schema (version) VALUES (%s)", (version,))
                    log.info("goldfive schema migrated to version %d", version)

    # -- events ------------------------------------------------------------------------------
    async def append(self, events: Sequence[Event], *, notify: str = "") -> int:
        """Store a batch in one transaction; returns how many were new (duplicates skipped).

        With ``notify`` (the writing hub's id), the same transaction tells every hub listening
        on EVENTS_CHANNEL how far each run of the batch is now stored: one notification per
        run, "HUB<TAB>RUN<TAB>LAST_SEQUENCE", delivered when (and only if) it commits."""
        return await self.append_rows([row_of(e) for e in events], notify=notify)

    async def append_rows(self, rows: Sequence[Row], *, notify: str = "") -> int:
        """``append`` of events encoded already (``row_of``, as the SQLite log's rows: the
        PostgresSink encodes each at emit, so the record is fixed then and the event is not
        copied). ``rows`` itself is not changed."""
        if not rows:
            return 0
        # One statement per batch (arrays unnested server-side), not one per row.
        cols = _Columns(*map(list, zip(*rows)))
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "INSERT INTO goldfive_events SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[],"
                " %s::bigint[], %s::bytea[]) ON CONFLICT DO NOTHING",
                cols,
            )
            inserted = cur.rowcount
            if inserted is not None and 0 <= inserted < len(rows):
                await self._find_conflicts(conn, cols)
            keys = list(zip(cols[0], cols[1]))
            noted = await self._note_writers(conn, keys)
            if notify:
                last: dict[str, int] = {}
                for run_id, seq in keys:
                    last[run_id] = max(seq, last.get(run_id, -1))
                notes = [f"{notify}\t{run}\t{seq}" for run, seq in last.items()]
                await conn.execute("SELECT pg_notify(%s, n) FROM unnest(%s::text[]) AS n", (EVENTS_CHANNEL, notes))
        self._writers.stored(noted)  # committed
        return len(rows) if inserted is None or inserted < 0 else inserted

    # -- provenance --------------------------------------------------------------------------
    @property
    def writer(self) -> str:
        """Who this store records its appends as written by, unless ``write_as`` says."""
        return self._writers.default

    @writer.setter
    def writer(self, name: str) -> None:
        self._writers.default = name

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """Record ``run_id``'s events from ``from_sequence`` on as written by ``writer``: the
        name of a credential the caller verified (a hub's runner token), never one a peer sent."""
        self._writers.assign(run_id, writer, from_sequence)

    async def _note_writers(self, conn: psycopg.AsyncConnection[Any], keys: Sequence[tuple[str, int]]) -> dict[str, str]:
        """In the append's transaction: the writer ranges of the batch, its (run, sequence)
        pairs (goldfive.store.provenance; a batch's first sequence of a run counts, stored now
        or resent)."""
        runs = {run_id for run_id, _ in keys}
        last: dict[str, tuple[int, str]] = {}
        before: dict[str, int] = {}
        if any(self._writers.needs_query(r) for r in runs):
            rows = await (
                await conn.execute(
                    "SELECT DISTINCT ON (run_id) run_id, from_sequence, writer FROM goldfive_writers"
                    " WHERE run_id = ANY(%s) ORDER BY run_id, from_sequence DESC",
                    (list(runs),),
                )
            ).fetchall()
            last = {str(r): (int(q), str(w)) for r, q, w in rows}
            mins = await (
                await conn.execute(  # each run's lowest stored sequence: one index probe a run
                    "SELECT r, (SELECT sequence FROM goldfive_events WHERE run_id = r ORDER BY sequence LIMIT 1)"
                    " FROM unnest(%s::text[]) AS r",
                    (list(runs),),
                )
            ).fetchall()
            before = {str(r): int(q) for r, q in mins if q is not None}
        # the batch is stored already (this transaction): "stored before" is below its lowest
        ranges, lasts = self._writers.ranges(
            keys, last.get, lambda run_id, seq: before.get(run_id, seq) < seq
        )
        if ranges:
            await conn.execute(
                "INSERT INTO goldfive_writers (run_id, from_sequence, writer)"
                " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[])"
                " ON CONFLICT (run_id, from_sequence) DO UPDATE SET writer = excluded.writer",
                ([r for r, _, _ in ranges], [q for _, q, _ in ranges], [w for _, _, w in ranges]),
            )
        return lasts

    async def forget_run(self, run_id: str) -> bool:
        """Drop the provenance of ``run_id`` if it stored no event (a runner that left after
        its hello): its writer ranges, and the writer ``write_as`` named. False, and nothing
        dropped, when it has events (the log keeps who wrote them)."""
        async with self._pool.connection() as conn:
            row = await (
                await conn.execute(
                    "WITH stored AS (SELECT EXISTS (SELECT 1 FROM goldfive_events WHERE run_id = %s) AS has_events),"
                    " dropped AS (DELETE FROM goldfive_writers WHERE run_id = %s AND NOT (SELECT has_events FROM stored))"
                    " SELECT has_events FROM stored",
                    (run_id, run_id),
                )
            ).fetchone()
        if row is not None and row[0]:
            return False
        self._writers.forget(run_id)
        return True

    async def writers(self, run_id: str) -> list[tuple[int, str]]:
        """Who wrote the run's events: (from_sequence, writer) ranges, in order."""
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT from_sequence, writer FROM goldfive_writers WHERE run_id = %s ORDER BY from_sequence", (run_id,)
            )
            return [(int(q), str(w)) for q, w in await cur.fetchall()]

    async def _find_conflicts(self, conn: psycopg.AsyncConnection[Any], cols: _Columns) -> None:
        """Some rows of a batch were not inserted: the same event sent again (a runner
        resending what it was not told was stored) is expected; a *different* event at a
        stored (run, sequence) is a conflict, counted and named (``conflicts``), never
        dropped silently."""
        rows = await (
            await conn.execute(
                "SELECT e.run_id, e.sequence, e.event_id FROM goldfive_events e"
                " JOIN unnest(%s::text[], %s::bigint[]) AS b(run_id, sequence) USING (run_id, sequence)",
                (cols[0], cols[1]),
            )
        ).fetchall()
        stored = {(str(r), int(q)): str(eid) for r, q, eid in rows}
        found: list[str] = []
        for run_id, sequence, event_id in zip(cols[0], cols[1], cols[2]):
            have = stored.get((run_id, sequence))
            if have is not None and have != event_id:
                self.conflicts += 1
                self.last_conflict = f"run {run_id} sequence {sequence}"
                found.append(f"event {event_id} of run {run_id} at sequence {sequence} (stored: {have})")
        if found:  # one line per batch, never one per event
            more = f" and {len(found) - 3} more" if len(found) > 3 else ""
            log.error("%d events were not stored: a different event is stored at their place: %s%s", len(found), "; ".join(found[:3]), more)

    async def list_runs(self) -> list[RunInfo]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT run_id, count(*), min(emitted_at_ms), max(emitted_at_ms), max(sequence)"
                " FROM goldfive_events GROUP BY run_id ORDER BY min(emitted_at_ms), run_id"
            )
            return [RunInfo(r, int(n), int(first), int(last), int(seq)) for r, n, first, last, seq in await cur.fetchall()]

    async def runs(self) -> list[RunInfo]:
        """``list_runs``, by the EventLog protocol's name (goldfive.store.log)."""
        return await self.list_runs()

    async def resolve(self, ref: str) -> str:
        """The run ``ref`` names: its full id or a unique prefix of 4+ characters."""
        from goldfive.store.naming import match_run

        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT DISTINCT run_id FROM goldfive_events WHERE run_id >= %s AND run_id < %s ORDER BY run_id",
                (ref, ref + "\uffff"),
            )
            ids = [str(r[0]) for r in await cur.fetchall()]
        if not ids:
            raise ReplayError(f"no run {ref!r} in the fleet's database")
        return match_run(ids, ref, "the fleet's database")

    async def check(self) -> str | None:
        """None: PostgreSQL checks its own pages (and refuses a database whose schema is newer
        than this goldfive's when the store opens); the EventLog protocol's ``check``."""
        return None

    async def last_sequence(self, run_id: str) -> int:
        async with self._pool.connection() as conn:
            row = await (await conn.execute("SELECT max(sequence) FROM goldfive_events WHERE run_id = %s", (run_id,))).fetchone()
            return int(row[0]) if row and row[0] is not None else -1

    async def events(self, run_id: str, after: int = -1, *, chunk: int = CHUNK) -> AsyncGenerator[Event, None]:
        """The run's events with sequence > ``after``, in order, a page at a time. A row that
        does not decode is skipped and logged (as SQLite's damaged rows are)."""
        while True:
            async with self._pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT sequence, payload FROM goldfive_events WHERE run_id = %s AND sequence > %s"
                    " ORDER BY sequence LIMIT %s",
                    (run_id, after, chunk),
                )
                rows = await cur.fetchall()
            for sequence, payload in rows:
                after = int(sequence)
                try:
                    ev = decode_recorded(bytes(payload))
                except DecodeError as exc:
                    log.error("run %s sequence %d does not decode, skipped: %s", run_id, sequence, exc)
                    continue
                yield ev
            if len(rows) < chunk:
                return

    # -- resume locks ------------------------------------------------------------------------
    async def take_lock(self, run_id: str, owner: str) -> LockHolder | None:
        """Take the run's lock for ``owner``: None when ``owner`` holds it now (taken, or
        already), else who does. Taking it (or finding it already ``owner``'s) and reading who
        holds it otherwise is one statement, so the answer is never about a row that another
        statement changed in between (a holder dropping its lock while it takes it again)."""
        me = (run_id, owner, socket.gethostname(), os.getpid())
        async with self._pool.connection() as conn:
            for _ in range(3):
                row = await (
                    await conn.execute(
                        "WITH taken AS (INSERT INTO goldfive_run_locks (run_id, owner, host, pid) VALUES (%s, %s, %s, %s)"
                        " ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner"
                        " WHERE goldfive_run_locks.owner = excluded.owner RETURNING owner)"
                        " SELECT true, '', '', 0, 0::bigint FROM taken"
                        " UNION ALL SELECT false, owner, host, pid, (extract(epoch FROM acquired_at) * 1000)::bigint"
                        " FROM goldfive_run_locks WHERE run_id = %s AND NOT EXISTS (SELECT 1 FROM taken)",
                        (*me, run_id),
                    )
                ).fetchone()
                if row is None:
                    continue  # its holder committed after this statement began: ask again
                mine, who, host, pid, at = row
                return None if mine else LockHolder(run_id, int(pid), str(host), int(at), str(who))
        return LockHolder(run_id, -1, "(another writer)", 0)

    async def lock(self, run_id: str, holder: str) -> LockHolder | None:
        """The EventLog protocol's ``lock`` (``take_lock``)."""
        held = await self.take_lock(run_id, holder)
        if held is None:
            self._held[run_id] = holder
        return held

    async def unlock(self, run_id: str, holder: str) -> None:
        if self._held.get(run_id) == holder:
            del self._held[run_id]
        await self.drop_lock(run_id, holder)

    async def take_lock_from_gone(self, run_id: str, hub_id: str, gone_after: float) -> bool:
        """Take the run's lock for hub ``hub_id`` (several hubs on one database): free, already
        this hub's, or held by a hub not seen for ``gone_after`` seconds (its heartbeat in
        goldfive_hubs stopped or it said goodbye). True when it is this hub's now."""
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "INSERT INTO goldfive_run_locks (run_id, owner, host, pid) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, host = excluded.host,"
                " pid = excluded.pid, acquired_at = now()"
                " WHERE goldfive_run_locks.owner = excluded.owner OR NOT EXISTS (SELECT 1 FROM goldfive_hubs h"
                " WHERE h.hub_id = goldfive_run_locks.owner AND h.seen_at > now() - make_interval(secs => %s))",
                (run_id, hub_id, socket.gethostname(), os.getpid(), gone_after),
            )
            return cur.rowcount == 1

    async def take_locks_in(
        self, conn: psycopg.AsyncConnection[Any], run_ids: Sequence[str], hub_id: str, gone_after: float
    ) -> dict[str, LockHolder]:
        """``take_lock_from_gone`` for many runs in one statement, on ``conn`` (inside the
        caller's transaction: refused runs roll back with it if the caller raises). Returns
        the runs held by a live hub other than ``hub_id``, each with its holder."""
        wanted = list(dict.fromkeys(run_ids))  # one row may be updated once per statement
        if not wanted:
            return {}
        # The final SELECT reads the snapshot from before the INSERT: a refused run's row there
        # is its holder. One another transaction committed meanwhile is not in it: then
        # "another writer", as take_lock says.
        rows = await (
            await conn.execute(
                "WITH wanted AS (SELECT unnest(%s::text[]) AS run_id),"
                " taken AS (INSERT INTO goldfive_run_locks (run_id, owner, host, pid) SELECT run_id, %s, %s, %s FROM wanted"
                " ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid, acquired_at = now()"
                " WHERE goldfive_run_locks.owner = excluded.owner OR NOT EXISTS (SELECT 1 FROM goldfive_hubs h"
                " WHERE h.hub_id = goldfive_run_locks.owner AND h.seen_at > now() - make_interval(secs => %s))"
                " RETURNING run_id)"
                " SELECT w.run_id, l.owner, l.host, l.pid, (extract(epoch FROM l.acquired_at) * 1000)::bigint"
                " FROM wanted w LEFT JOIN goldfive_run_locks l USING (run_id) WHERE w.run_id NOT IN (SELECT run_id FROM taken)",
                (wanted, hub_id, socket.gethostname(), os.getpid(), gone_after),
            )
        ).fetchall()
        refused: dict[str, LockHolder] = {}
        for run_id, who, host, pid, at in rows:
            if who is None:
                refused[str(run_id)] = LockHolder(str(run_id), -1, "(another writer)", 0)
            else:
                refused[str(run_id)] = LockHolder(str(run_id), int(pid), str(host), int(at), str(who))
        return refused

    async def live_holder(self, run_id: str, hub_id: str, gone_after: float) -> LockHolder | None:
        """The holder of ``run_id``'s lock when it is a hub other than ``hub_id`` seen within
        ``gone_after`` seconds, else None (read only)."""
        async with self._pool.connection() as conn:
            row = await (
                await conn.execute(
                    "SELECT l.owner, l.host, l.pid, (extract(epoch FROM l.acquired_at) * 1000)::bigint FROM goldfive_run_locks l"
                    " JOIN goldfive_hubs h ON h.hub_id = l.owner"
                    " WHERE l.run_id = %s AND l.owner <> %s AND h.seen_at > now() - make_interval(secs => %s)",
                    (run_id, hub_id, gone_after),
                )
            ).fetchone()
        if row is None:
            return None
        who, host, pid, at = row
        return LockHolder(run_id, int(pid), str(host), int(at), str(who))

    async def drop_locks(self, run_ids: Sequence[str], owner: str) -> None:
        """``drop_lock`` for many runs, in one statement."""
        async with self._pool.connection() as conn:
            await conn.execute("DELETE FROM goldfive_run_locks WHERE run_id = ANY(%s::text[]) AND owner = %s", (list(run_ids), owner))

    async def drop_lock(self, run_id: str, owner: str) -> None:
        async with self._pool.connection() as conn:
            await conn.execute("DELETE FROM goldfive_run_locks WHERE run_id = %s AND owner = %s", (run_id, owner))

    async def truncate_for_tests(self) -> None:
        async with self._pool.connection() as conn:
            for table in (
                "goldfive_events", "goldfive_run_locks", "goldfive_hubs", "goldfive_run_owners", "goldfive_controls",
                "goldfive_runs", "goldfive_writers", "goldfive_routed", "goldfive_marks",
            ):  # fmt: skip
                await conn.execute(sql.SQL("TRUNCATE {}").format(sql.Identifier(table)))


class PostgresSink(RecordingSink[Row]):
    """An EventSink writing a live run's events to a PostgresStore: a RecordingSink over the
    store (a batch goes when it holds ``batch_size`` events, ``flush_interval`` seconds after
    its first event, on :meth:`sync` and on :meth:`close`; a failed write keeps the batch for
    the next, up to ``max_pending`` events, None: no bound, for a hub whose runners keep every
    event it has not confirmed, and is retried by a timer). ``notify``: see
    PostgresStore.append. Closing the sink writes what it holds; the store stays open (a
    hub's other runs write through it)."""

    log: PostgresStore

    def __init__(
        self,
        store: PostgresStore,
        *,
        batch_size: int = 500,
        flush_interval: float = 0.05,
        max_pending: int | None = 100_000,
        notify: str = "",
    ) -> None:
        super().__init__(store, batch_size=batch_size, flush_interval=flush_interval, max_pending=max_pending)
        self.store = store
        self.notify = notify

    def __str__(self) -> str:
        return f"PostgresSink({redact(self.store.dsn)})"

    @property
    def error(self) -> str:
        """Why writing fails now, or "" (``write_error``)."""
        return self.write_error

    #: What is queued per event: its row, encoded at emit (as the SQLite sink's).
    _queued = staticmethod(row_of)

    async def _append(self, batch: list[Row]) -> int:
        try:
            return await self.store.append_rows(batch, notify=self.notify)
        except Exception as exc:  # psycopg's errors, the pool's timeout: one line, kept and retried
            raise SinkError(f"writing {len(batch)} events to PostgreSQL failed: {_one_line(exc)}") from exc

    async def _close_log(self) -> None:
        pass  # the store is shared: its owner closes it


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text}: {' '.join(str(cause).split())}"
    return text or type(exc).__name__
