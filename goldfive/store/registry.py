"""The hub's own records of its runs: what it started, who registered each run, what it routed.

Everything a hub decides about a run (whether it may continue it after a restart and how to
build it, which credential may reconnect it, whether a decision in its ledger is one the hub
routed) is read from here, never from the run's events: a runner writes those, and a runner
is trusted with its own data, not with the hub's decisions.

- **Registrations** (``hub_runs``): one row per run, written once by the hub when a run first
  appears. ``origin`` says how (``hosted``: started by the hub, ``placed``: started by the hub
  on a cluster, ``connected``: a runner registered it, ``pushed``: a GoldfiveIngress producer),
  ``owner`` is the name of the credential that may connect as it, and ``launch`` (only for runs
  the hub started) what the hub needs to build it again. The insert is conditional: the first
  registration stands.
- **Who wrote each run** is not here: the event log records it with the events
  (``EventLog.write_as`` / ``writers``, goldfive.store.provenance), for every run a hub serves
  (its own hosted runs as ``hub``). A file written before keeps its ``hub_writers`` table,
  read by nothing.
- **Routed controls** (``hub_routed``): every control the hub sent down a runner's stream,
  with its author, so a decision the runner reports can be checked against it. The hub checks
  a live run's reports against the controls it holds in memory; the rows are for a hub that
  restarts. :class:`SqliteRegistry` writes them behind (a thread of its own, in order), so a
  control is never held up by the hub's group commit of events (which holds the file's write
  lock) nor its event loop by the write; ``close`` writes what is left. A hub on PostgreSQL
  writes them behind too, from a task (goldfive.store.postgres_registry). A hub that dies
  within that write (milliseconds, or while a commit holds the file) loses the row: a decision
  reported later under that control is then stored as not verified, never as verified.
- **Marks** (``hub_marks``): what a person said about a run as a whole, which is not part of
  the run: its failure was seen (``acknowledged``), it is put away (``archived``).

:class:`SqliteRegistry` keeps them in the hub's SQLite file; a hub on PostgreSQL keeps the same
rows in the shared database (:mod:`goldfive.store.postgres_registry`). Both implement
:class:`RunRegistry`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from goldfive.errors import GoldfiveError
from goldfive.store import locks

log = logging.getLogger("goldfive.hub")

__all__ = [
    "ACKNOWLEDGED",
    "ARCHIVED",
    "CONNECTED",
    "HOOKED",
    "MARKS",
    "HOSTED",
    "PLACED",
    "PLACED_LOCK_HOLDER",
    "PUSHED",
    "PlacedRunLocks",
    "LaunchSpec",
    "MemoryRegistry",
    "Registration",
    "RoutedControl",
    "RunMark",
    "RunRegistry",
    "SqliteRegistry",
    "placed_run_locks",
    "read_registration",
]

HOSTED = "hosted"
PLACED = "placed"
CONNECTED = "connected"
PUSHED = "pushed"
#: An agent session the hub writes from its hooks' reports (goldfive.hub.hooked).
HOOKED = "hooked"
#: The name a hub holds the locks of the runs it placed under (goldfive.store.locks, in its
#: SQLite file: with the process's pid and host): the lock decides which hub a placed run is.
PLACED_LOCK_HOLDER = "hub placing runs"
#: Runs the hub started itself: the only ones it may continue, and only from ``launch``.
STARTED_BY_HUB = frozenset({HOSTED, PLACED})

#: A person has seen that the run failed: it needs nobody any more.
ACKNOWLEDGED = "acknowledged"
#: Put away: left out of the lists of runs unless asked for.
ARCHIVED = "archived"
MARKS = (ACKNOWLEDGED, ARCHIVED)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hub_runs ("
    " run_id TEXT PRIMARY KEY, origin TEXT NOT NULL, owner TEXT NOT NULL, launch TEXT,"
    " created_at_ms INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hub_routed ("
    " run_id TEXT NOT NULL, control_id TEXT NOT NULL, kind TEXT NOT NULL, author TEXT NOT NULL,"
    " target_id TEXT NOT NULL, sent_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, control_id))",
    "CREATE TABLE IF NOT EXISTS hub_marks ("
    " run_id TEXT NOT NULL, mark TEXT NOT NULL, by_whom TEXT NOT NULL, at_ms INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, mark))",
)


@dataclass(frozen=True)
class LaunchSpec:
    """How the hub started a run, as the hub itself recorded it: enough to build it again.

    ``cwd`` is where the hub imported the agent from at the time, kept for the person reading
    it; a continued run is imported from the hub's own search directory, never from a
    recorded one."""

    target: str
    goal: str = ""
    plan_json: str = ""
    speed: float = 1.0
    base_url: str = ""
    model: str = ""
    started_by: str = ""
    cwd: str = ""
    #: The run's own budget as given at the start ("tokens=50000,usd=2"; "" none): kept for
    #: the person reading it. A continued run keeps the budget its recording holds (raised,
    #: perhaps), never this one again.
    budget: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LaunchSpec:
        """The spec the hub wrote; GoldfiveError when the row is not one (damaged)."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise GoldfiveError(f"the hub's launch record does not parse: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("target"), str) or not data["target"]:
            raise GoldfiveError("the hub's launch record names no target")
        known = {f: data[f] for f in cls.__dataclass_fields__ if f in data}
        try:
            spec = cls(**known)
            float(spec.speed)
        except (TypeError, ValueError) as exc:
            raise GoldfiveError(f"the hub's launch record is malformed: {exc}") from None
        return spec


@dataclass(frozen=True)
class Registration:
    run_id: str
    origin: str
    #: The credential that may connect as this run ("" on a hub without tokens, "hub" for a
    #: run the hub hosts in its own process).
    owner: str
    launch: LaunchSpec | None = None
    created_at_ms: int = 0

    @property
    def started_by_hub(self) -> bool:
        return self.origin in STARTED_BY_HUB


@dataclass(frozen=True)
class RoutedControl:
    """A control the hub sent to a run's runner."""

    control_id: str
    kind: str
    author: str
    target_id: str = ""
    sent_at_ms: int = field(default=0, compare=False)


@dataclass(frozen=True)
class RunMark:
    """A person's mark on a run (one of :data:`MARKS`), who made it and when."""

    run_id: str
    mark: str
    by: str
    at_ms: int = field(default=0, compare=False)


#: run id -> its marks by name.
Marks = dict[str, dict[str, RunMark]]


def _marks(rows: list[tuple[Any, ...]]) -> Marks:
    out: Marks = {}
    for run_id, mark, by, at in rows:
        out.setdefault(str(run_id), {})[str(mark)] = RunMark(str(run_id), str(mark), str(by), int(at))
    return out


class RunRegistry(Protocol):
    """The hub's records of its runs (see the module's docstring). Every method may raise
    the store's own error when the database cannot be used; callers that serve a live run
    treat that as degraded, never as permission."""

    async def register(self, run_id: str, origin: str, owner: str, launch: LaunchSpec | None = None) -> Registration:
        """Record the run unless it is recorded already; the registration that stands."""
        ...

    async def get(self, run_id: str) -> Registration | None: ...

    async def all(self) -> dict[str, Registration]: ...

    async def forget(self, run_id: str) -> None:
        """Drop a run that never stored an event (its runner left after its hello)."""
        ...

    async def routed(self, run_id: str, control: RoutedControl) -> None: ...

    async def routed_controls(self, run_id: str) -> dict[str, RoutedControl]: ...

    async def mark(self, run_id: str, mark: str, by: str) -> None:
        """Put ``mark`` (one of :data:`MARKS`) on the run; marking it again changes nothing."""
        ...

    async def unmark(self, run_id: str, mark: str) -> None: ...

    async def marks(self) -> Marks:
        """Every run's marks (runs without any are left out)."""
        ...

    def close(self) -> None:
        """Release what the registry holds open (its own connection, if any)."""
        ...


def _now_ms() -> int:
    return int(time.time() * 1000)


def _registration(row: tuple[Any, ...]) -> Registration:
    run_id, origin, owner, launch, created = row
    spec = None
    if launch:
        try:
            spec = LaunchSpec.from_json(str(launch))
        except GoldfiveError:
            spec = None  # a damaged row builds nothing; the run stays as it is
    return Registration(str(run_id), str(origin), str(owner), spec, int(created or 0))


_RoutedRow = tuple[str, str, str, str, str, int]


@runtime_checkable
class PlacedRunLocks(Protocol):
    """A registry that takes placed runs' locks with their registrations, in one commit
    (SQLite's in its file; PostgreSQL's as the fleet's run locks, under the hub's id). The
    lock, not whether an address answers, decides which hub a placed run is
    (docs/deployment.md)."""

    async def register_many(self, rows: Sequence[tuple[str, str, str, LaunchSpec | None]], *, hold: str | None = None) -> None: ...

    async def hold_runs(self, run_ids: Sequence[str], holder: str) -> dict[str, locks.LockHolder]: ...

    async def let_go(self, run_ids: Sequence[str], holder: str) -> None: ...

    async def held_elsewhere(self, run_id: str) -> locks.LockHolder | None:
        """Who holds ``run_id``'s lock when it is another live hub; None when it is free,
        this hub's or stale. Reads only."""
        ...


def placed_run_locks(registry: RunRegistry) -> PlacedRunLocks | None:
    """``registry`` as one that holds placed runs' locks, or None when it does not."""
    return registry if isinstance(registry, PlacedRunLocks) else None


class SqliteRegistry:
    """The registry in the hub's SQLite file (its own connection, next to the events).
    Routed controls are written behind, by a thread with a connection of its own (see the
    module's docstring); every other record is written before its method returns."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        try:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            for statement in _SCHEMA:
                self._conn.execute(statement)
        except sqlite3.Error:
            self._conn.close()
            raise
        # Routed controls waiting for the writer thread, and those it is writing now.
        self._routed_cv = threading.Condition()
        self._routed_queue: list[_RoutedRow] = []
        self._routed_writing: list[_RoutedRow] = []
        self._routed_thread: threading.Thread | None = None
        self._routed_stop = False
        #: Routed controls the writer thread could not write (its log says why).
        self.routed_failures = 0
        #: Run id -> the holder this process took its lock for here (``hold_runs``): asked
        #: again, it is held (nobody takes a live process's lock), so nothing is read.
        self._holding: dict[str, str] = {}

    def close(self) -> None:
        """Write the routed controls still waiting, then close."""
        thread = self._routed_thread
        if thread is not None:
            with self._routed_cv:
                self._routed_stop = True
                self._routed_cv.notify_all()
            thread.join()
            self._routed_thread = None
        self._conn.close()

    def flush_routed(self, timeout: float | None = None) -> bool:
        """Wait (blocking) until every routed control given so far is written; False when
        ``timeout`` seconds passed first."""
        with self._routed_cv:
            return self._routed_cv.wait_for(lambda: not self._routed_queue and not self._routed_writing, timeout)

    def _write_routed(self) -> None:
        """The writer thread: what waits, in one transaction at a time, until closed."""
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
        try:
            while True:
                with self._routed_cv:
                    self._routed_cv.wait_for(lambda: self._routed_queue or self._routed_stop)
                    if not self._routed_queue:
                        return  # stopped, and nothing left
                    self._routed_writing, self._routed_queue = self._routed_queue, []
                rows = self._routed_writing
                try:
                    with conn:  # one transaction: BEGIN, the rows, COMMIT on leaving (ROLLBACK on an error)
                        conn.execute("BEGIN")
                        conn.executemany(
                            "INSERT INTO hub_routed (run_id, control_id, kind, author, target_id, sent_at_ms)"
                            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, control_id) DO NOTHING",
                            rows,
                        )
                except sqlite3.Error as exc:  # kept in the hub's memory; a restarted hub will not verify them
                    self.routed_failures += len(rows)
                    log.warning("hub: could not record %d routed controls (%s): %s", len(rows), ", ".join(r[1] for r in rows[:3]), exc)
                with self._routed_cv:
                    self._routed_writing = []
                    self._routed_cv.notify_all()
        finally:
            conn.close()

    async def register(self, run_id: str, origin: str, owner: str, launch: LaunchSpec | None = None) -> Registration:
        self._conn.execute(
            "INSERT INTO hub_runs (run_id, origin, owner, launch, created_at_ms) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id) DO NOTHING",
            (run_id, origin, owner, launch.to_json() if launch is not None else None, _now_ms()),
        )
        found = await self.get(run_id)
        assert found is not None
        return found

    async def register_many(self, rows: Sequence[tuple[str, str, str, LaunchSpec | None]], *, hold: str | None = None) -> None:
        """Record each ``(run_id, origin, owner, launch)`` unless it is recorded already, all
        in one transaction: a burst of starts costs one commit, not one each. ``hold``: in the
        same transaction, take each run's lock for this process as ``hold`` (a hub placing
        runs holds them while it lives: ``hold_runs``); RunLocked when one is held by another
        live process (nothing is written then)."""
        now = _now_ms()
        self._conn.execute("BEGIN IMMEDIATE" if hold is not None else "BEGIN")
        try:
            self._conn.executemany(
                "INSERT INTO hub_runs (run_id, origin, owner, launch, created_at_ms) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id) DO NOTHING",
                [(run_id, origin, owner, launch.to_json() if launch is not None else None, now) for run_id, origin, owner, launch in rows],
            )
            if hold is not None:
                refused = locks.take_many_in(self._conn, [r[0] for r in rows], self.path, hold)
                if refused:
                    first = next(iter(refused.values()))
                    raise locks.RunLocked(f"run {first.run_id} is held by {first.describe()}")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        if hold is not None:
            locks.held(self.path, [r[0] for r in rows])
            self._holding.update((r[0], hold) for r in rows)

    async def hold_runs(self, run_ids: Sequence[str], holder: str) -> dict[str, locks.LockHolder]:
        """Take the locks of ``run_ids`` for this process as ``holder``, in one transaction
        (goldfive.store.locks.take_many: free, stale, or this process's already); returns the
        runs held by another live process, with who holds each. A hub that places runs holds
        them while it lives, and takes a run's lock before it takes the run back or places it
        again: the lock decides which hub a placed run belongs to."""
        todo = [r for r in run_ids if self._holding.get(r) != holder]
        if not todo:
            return {}
        refused = locks.take_many(self._conn, todo, self.path, holder)
        self._holding.update((r, holder) for r in todo if r not in refused)
        return refused

    async def let_go(self, run_ids: Sequence[str], holder: str) -> None:
        """Drop the locks of ``run_ids`` this process holds as ``holder`` (their runs ended,
        or the hub stops), in one transaction."""
        mine = [r for r in run_ids if self._holding.get(r) == holder]
        for r in mine:
            del self._holding[r]
        if mine:
            locks.drop_many(self._conn, mine, self.path, holder)

    async def held_elsewhere(self, run_id: str) -> locks.LockHolder | None:
        found = locks.holder(self._conn, run_id)
        if found is None or not found.alive(self.path):
            return None
        mine = self._holding.get(run_id) == found.owner and (found.pid, found.host) == (os.getpid(), socket.gethostname())
        return None if mine else found

    async def get(self, run_id: str) -> Registration | None:
        row = self._conn.execute(
            "SELECT run_id, origin, owner, launch, created_at_ms FROM hub_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return _registration(row) if row is not None else None

    async def all(self) -> dict[str, Registration]:
        rows = self._conn.execute("SELECT run_id, origin, owner, launch, created_at_ms FROM hub_runs").fetchall()
        return {r.run_id: r for r in map(_registration, rows)}

    async def forget(self, run_id: str) -> None:
        with self._routed_cv:
            self._routed_queue = [r for r in self._routed_queue if r[0] != run_id]
        if self._routed_writing:  # one being written now must not land after the delete
            await asyncio.to_thread(self.flush_routed, 60.0)
        for table in ("hub_runs", "hub_routed", "hub_marks"):
            self._conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))

    async def routed(self, run_id: str, control: RoutedControl) -> None:
        """Queued for the writer thread (returns at once; ``routed_controls`` sees it)."""
        row = (run_id, control.control_id, control.kind, control.author, control.target_id, control.sent_at_ms or _now_ms())
        if self.path == ":memory:":  # a connection of the thread's own would be another database
            self._conn.execute(
                "INSERT INTO hub_routed (run_id, control_id, kind, author, target_id, sent_at_ms) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, control_id) DO NOTHING",
                row,
            )
            return
        with self._routed_cv:
            if self._routed_stop:
                raise GoldfiveError("the hub's registry is closed")
            self._routed_queue.append(row)
            self._routed_cv.notify_all()
            if self._routed_thread is None:
                self._routed_thread = threading.Thread(target=self._write_routed, name="goldfive-routed-writer", daemon=True)
                self._routed_thread.start()

    async def routed_controls(self, run_id: str) -> dict[str, RoutedControl]:
        # The rows waiting first, then the table: a row the writer thread commits in between
        # is in one or the other (read the other way round, it was in neither).
        with self._routed_cv:  # not written yet: as good as written for whoever asks here
            waiting = [row for row in (*self._routed_writing, *self._routed_queue) if row[0] == run_id]
        rows = self._conn.execute(
            "SELECT control_id, kind, author, target_id, sent_at_ms FROM hub_routed WHERE run_id = ?", (run_id,)
        ).fetchall()
        out = {str(c): RoutedControl(str(c), str(k), str(a), str(t), int(s)) for c, k, a, t, s in rows}
        for _, c, k, a, t, s in waiting:
            out.setdefault(c, RoutedControl(c, k, a, t, s))
        return out

    async def mark(self, run_id: str, mark: str, by: str) -> None:
        self._conn.execute(
            "INSERT INTO hub_marks (run_id, mark, by_whom, at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (run_id, mark) DO NOTHING",
            (run_id, mark, by, _now_ms()),
        )

    async def unmark(self, run_id: str, mark: str) -> None:
        self._conn.execute("DELETE FROM hub_marks WHERE run_id = ? AND mark = ?", (run_id, mark))

    async def marks(self) -> Marks:
        return _marks(self._conn.execute("SELECT run_id, mark, by_whom, at_ms FROM hub_marks").fetchall())


class MemoryRegistry:
    """The registry of a hub that keeps nothing on disk (``--db :memory:``, tests)."""

    def __init__(self) -> None:
        self._runs: dict[str, Registration] = {}
        self._routed: dict[str, dict[str, RoutedControl]] = {}
        self._marks: Marks = {}

    async def register(self, run_id: str, origin: str, owner: str, launch: LaunchSpec | None = None) -> Registration:
        return self._runs.setdefault(run_id, Registration(run_id, origin, owner, launch, _now_ms()))

    async def get(self, run_id: str) -> Registration | None:
        return self._runs.get(run_id)

    async def all(self) -> dict[str, Registration]:
        return dict(self._runs)

    async def forget(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
        self._routed.pop(run_id, None)
        self._marks.pop(run_id, None)

    async def routed(self, run_id: str, control: RoutedControl) -> None:
        self._routed.setdefault(run_id, {}).setdefault(control.control_id, control)

    async def routed_controls(self, run_id: str) -> dict[str, RoutedControl]:
        return dict(self._routed.get(run_id, {}))

    async def mark(self, run_id: str, mark: str, by: str) -> None:
        self._marks.setdefault(run_id, {}).setdefault(mark, RunMark(run_id, mark, by, _now_ms()))

    async def unmark(self, run_id: str, mark: str) -> None:
        self._marks.get(run_id, {}).pop(mark, None)

    async def marks(self) -> Marks:
        return {run_id: dict(m) for run_id, m in self._marks.items() if m}

    def close(self) -> None:
        return None


def read_registration(path: str | os.PathLike[str], run_id: str) -> Registration | None:
    """The hub's registration of ``run_id`` in the SQLite file ``path``, read only (None when
    the file has no hub tables or no row: a run recorded by a local process)."""
    try:
        conn = sqlite3.connect(f"file:{os.fspath(path)}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute(
            "SELECT run_id, origin, owner, launch, created_at_ms FROM hub_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return _registration(row) if row is not None else None
