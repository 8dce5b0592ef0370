"""RunHost: the runs a server hosts, live in this process or recorded in its SQLite file.

A live run is a Runner wired to an InMemorySink (history + live subscriptions), a state sink
(a RunState folded as events are emitted, so snapshots cost O(plan)), a SQLitePersistenceSink
(so the run outlives the process) and a ControlChannel; a client's control is sent with
``ControlChannel.request``, which returns the run's own ack.

A recorded run is read from the database on demand: at start only the events that shape its
summary are folded (``SUMMARY_KINDS``: no progress reports), and its history is streamed from
SQLite by sequence range, a chunk at a time, whenever a client asks for it. Every read goes
through the file's EventLog (``log``, a SqliteLog: runs listed a seek each, a run's record, its
history), each look sharing one read connection (``SqliteLog.reading``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from goldfive.approvals.policy import ApprovalReminders
from goldfive.errors import ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.history import SUMMARY_KINDS
from goldfive.store.sqlite_log import SqliteLog
from goldfive.remote.route import RUN_NOT_ACTIVE
from goldfive.store.recorder import HubRecorder
from goldfive.store.registry import HOSTED, MemoryRegistry, RunRegistry, SqliteRegistry, read_registration
from goldfive.remote.served import HUB_OWNER, Attachment, HostedRun, Origin, RunFactory, ServedRun

if TYPE_CHECKING:
    from goldfive.remote.launch import Launch
    from goldfive.types import Goal

__all__ = ["HUB_OWNER", "Attachment", "HostedRun", "Origin", "RunFactory", "RunHost", "RUN_NOT_ACTIVE", "ServedRun"]

log = logging.getLogger("goldfive.remote")


class RunHost:
    """The runs one server serves (each a :class:`ServedRun`, of any :class:`Origin`): started
    here, connected, or recorded in ``db_path`` earlier."""

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.db_path = os.fspath(db_path)
        if self.db_path != ":memory:":
            Path(self.db_path).parent.mkdir(parents=True, exist_ok=True)
        self._runs: dict[str, ServedRun] = {}
        #: The database's EventLog, for reading (this host writes through its runs' recorders).
        self.log = SqliteLog(self.db_path)
        #: Whether the runs recorded in the database are served (``load_recorded``,
        #: ``read_store``): a run asked for by id is then read from it if not listed yet.
        self._loaded = False
        #: Every run recorded in the database at the start is listed (``read_store``).
        self.listed_all = False
        self._look_s = 0.0  # how long the last look for unlisted runs took
        #: Called with every live event of every run hosted or ingested here (not history).
        self.event_hooks: list[Callable[[Event], None]] = []
        #: A hub on PostgreSQL (goldfive.hub.fleet): the recorder of the runs started here,
        #: what is told of each one started, and why the hub is degraded ("" when it is not).
        self.recorder: HubRecorder | None = None
        self.started_hooks: list[Callable[[ServedRun], None]] = []
        self.warning: Callable[[], str] = lambda: ""
        self._registry: RunRegistry | None = None
        #: Reminders and escalation of undecided approvals, for the runs started here that
        #: set none themselves (``serve --remind-after / --escalate-after``).
        self.approval_reminders: ApprovalReminders | None = None

    @property
    def registry(self) -> RunRegistry:
        """The hub's own records of its runs (goldfive.store.registry): what it started and
        how to build it again, who registered each run, what it routed. In the hub's SQLite
        file (kept in memory for ``:memory:``) unless a hub on PostgreSQL set its own."""
        if self._registry is None:
            self._registry = MemoryRegistry() if self.db_path == ":memory:" else SqliteRegistry(self.db_path)
        return self._registry

    @registry.setter
    def registry(self, registry: RunRegistry) -> None:
        self._registry = registry

    async def host(self, launch: Launch, *, started_by: str = "", run_id: str | None = None) -> ServedRun:
        """Start ``launch`` here as the hub's own run: registered (origin hosted, and the
        launch record the hub builds it from again after a restart), then started."""
        run_id = run_id or uuid.uuid4().hex
        spec = dataclasses.replace(launch.spec, started_by=started_by) if launch.spec is not None else None
        registry = self.registry
        await registry.register(run_id, HOSTED, HUB_OWNER, spec)
        try:
            run = self.start_run(launch.factory, launch.user_input, run_id=run_id)
        except BaseException:
            await registry.forget(run_id)
            raise
        run.owner = HUB_OWNER
        return run

    def mark_loaded(self) -> None:
        """From now on a run asked for by id that the database holds is served, listed or
        not yet (:meth:`get`); :meth:`read_store` lists them all."""
        self._loaded = True

    def load_recorded(self, within: float | None = None) -> int:
        """Serve the runs recorded in the database (not live), oldest first; returns how many
        were added. Only a summary of each is read; an unreadable row or page is skipped and
        shown on that run's summary, never a reason to serve nothing. With ``within``, stop
        after that many seconds (``serve`` lists the rest in the background, :meth:`read_store`)."""
        self._loaded = True
        added = 0
        deadline = None if within is None else time.monotonic() + within
        ids = self._stored_ids()
        if not ids:
            return 0
        with self.log.reading():  # one read connection for every run's record
            for run_id in ids:
                if deadline is not None and time.monotonic() > deadline:
                    break
                if run_id not in self._runs:
                    self._runs[run_id] = self._read_recorded(run_id)
                    added += 1
        return added

    async def read_store(self, *, every: float | None = None) -> None:
        """List the runs recorded in the database as they are read, oldest first, each one's
        summary folded in a worker thread (the hub answers meanwhile; a run asked for before
        its turn is read at once, see :meth:`get`); then, with ``every``, look for runs
        recorded into the database after that (another process writing to it) every
        ``every`` seconds (or ten times as long as a look took, if longer), until cancelled."""
        self._loaded = True
        while True:
            try:
                await self.read_new()
            except (sqlite3.Error, OSError) as exc:  # isolation boundary: listed next time
                log.warning("reading the runs recorded in %s failed: %s", self.db_path, exc)
            self.listed_all = True
            if every is None:
                return
            # A look costs a seek per run: with very many runs, look less often (at most a
            # tenth of the time goes to looking).
            await asyncio.sleep(max(every, 10 * self._look_s))

    async def read_new(self) -> int:
        """Serve the runs in the database that are not served yet (each listed as soon as its
        summary is read); returns how many were added. Their ids cost one seek each."""
        started = time.monotonic()
        new = await asyncio.to_thread(self._unlisted_ids)
        if self.listed_all:
            await self._read_grown()
        self._look_s = time.monotonic() - started
        if not new:
            return 0
        registrations = await self.registry.all()
        added = 0
        for run_id in new:
            if run_id in self._runs:
                continue  # asked for (or connected) meanwhile
            run = await asyncio.to_thread(self._read_recorded, run_id)
            if run_id in self._runs:
                continue
            reg = registrations.get(run_id)
            if reg is not None:
                run.owner = reg.owner
            self._runs[run_id] = run
            added += 1
        return added

    async def _read_grown(self) -> None:
        """Recorded runs that another process goes on writing into the file (``goldfive run
        --db`` on the hub's file): the events that shape their summary since the last look are
        read (in a worker thread) and folded here, so their summaries keep up."""
        watched = [
            r
            for r in self._runs.values()
            if r.origin is Origin.RECORDED and r.memory is None and r.history is not None and not r.state.finished
        ]
        if not watched:
            return
        grown = await asyncio.to_thread(self._grown, [(r.run_id, r.state.last_sequence) for r in watched])
        for run_id, after, last, events in grown:
            run = self._runs.get(run_id)
            if run is None or run.origin is not Origin.RECORDED or run.memory is not None or run.state.last_sequence != after:
                continue  # it went live here (or was read again) meanwhile
            for ev in events:
                run.fold(ev)
            state = run.state
            state.events += last - after - len(events)  # the others counted, as at the start
            state.last_sequence = max(state.last_sequence, last)

    def _grown(self, runs: list[tuple[str, int]]) -> list[tuple[str, int, int, list[Event]]]:
        """For each (run id, last sequence served) whose file holds more: the id, that sequence,
        the new last one and the summary events between (a seek per run, then its new rows)."""
        out = []
        try:
            with self.log.reading() as stored_log:
                for run_id, after in runs:
                    last = stored_log.last_sequence(run_id)
                    if last > after:
                        stored = stored_log.history(run_id).events(after, kinds=SUMMARY_KINDS)
                        try:
                            events = [ev for ev in stored if ev.sequence <= last]
                        finally:
                            stored.close()
                        out.append((run_id, after, last, events))
        except ReplayError:
            return []
        except sqlite3.Error as exc:
            log.warning("reading what was recorded since into %s failed: %s", self.db_path, exc)
        return out

    def _unlisted_ids(self) -> list[str]:
        """The runs in the database not served yet, oldest first (a worker thread calls this:
        ``_runs`` is only read, and a run added meanwhile is skipped by the caller)."""
        if self.db_path == ":memory:":
            return []
        try:
            with self.log.reading() as stored:
                runs = self._runs
                return stored.oldest_first([rid for rid in stored.run_ids(ordered=False) if rid not in runs])
        except (ReplayError, sqlite3.OperationalError):
            return []  # no database, or no events table yet: nothing was recorded

    def _stored_ids(self, prefix: str = "") -> list[str]:
        """The ids of the runs in the database (starting with ``prefix``), oldest first."""
        if self.db_path == ":memory:":
            return []
        try:
            return self.log.run_ids(prefix)
        except (ReplayError, sqlite3.OperationalError):
            return []  # no database, or no events table yet: nothing was recorded

    def _is_stored(self, run_id: str) -> bool:
        """Whether the database holds events of ``run_id`` (one seek)."""
        if self.db_path == ":memory:" or not run_id:
            return False
        try:
            return self.log.has_run(run_id)
        except (ReplayError, sqlite3.Error):
            return False

    def _read_recorded(self, run_id: str) -> ServedRun:
        """Recorded run ``run_id`` as the database holds it: its events counted and its summary
        folded (a worker thread may call this: it touches nothing the host holds)."""
        history = self.log.history(run_id, kept=True)
        try:
            rec = self.log.record(run_id)
        except ReplayError as exc:
            history.history_error = str(exc)
            return ServedRun(run_id, history=history)
        if rec.error:
            history.history_error = rec.error
        return ServedRun.recorded(history, rec.event_count, rec.last_sequence)

    def _read_stored(self, run_id: str) -> ServedRun | None:
        """Run ``run_id`` from the database now, if it is recorded there and not served yet
        (a run asked for before :meth:`read_store` reached it, or recorded by another process
        since): served from now on."""
        if not self._loaded or run_id in self._runs or not self._is_stored(run_id):
            return self._runs.get(run_id)
        run = self._read_recorded(run_id)
        reg = read_registration(self.db_path, run_id)
        if reg is not None:
            run.owner = reg.owner
        self._runs[run_id] = run
        return run

    async def load_owners(self) -> None:
        """Say whose each served run is, from the registry (after ``load_recorded``)."""
        registrations = await self.registry.all()
        for run in self._runs.values():
            reg = registrations.get(run.run_id)
            if reg is not None:
                run.owner = reg.owner

    def start_run(self, factory: RunFactory, user_input: str | list[Goal] | None, *, run_id: str | None = None) -> ServedRun:
        run_id = run_id or uuid.uuid4().hex
        if run_id in self._runs:
            raise ValueError(f"run id {run_id!r} is already hosted")
        run = ServedRun(run_id)
        run.hooks = self.event_hooks
        run.start(factory, user_input, self.db_path, recorder=self.recorder, reminders=self.approval_reminders)  # a factory that raises leaves no entry
        self._runs[run_id] = run
        for hook in self.started_hooks:
            hook(run)
        return run

    def resume_run(self, factory: RunFactory, run_id: str) -> ServedRun:
        """Continue recorded run ``run_id`` live here (``serve`` after a restart). Raises
        GoldfiveError (ResumeRefused) and leaves it recorded when it cannot go on safely."""
        run = self._runs[run_id]
        run.hooks = self.event_hooks
        run.start(factory, None, self.db_path, resume=True, reminders=self.approval_reminders)
        return run

    def adopt(self, run: ServedRun) -> None:
        """Serve ``run`` (a run connected from another process), replacing its recorded entry."""
        run.hooks = self.event_hooks
        self._runs[run.run_id] = run

    def remove(self, run_id: str) -> None:
        """Serve ``run_id`` no more (a connected run that never stored an event)."""
        self._runs.pop(run_id, None)

    def get(self, run_id: str) -> ServedRun | None:
        """The run served as ``run_id``; once the host reads its database (``read_store``,
        ``load_recorded``), a run recorded there that is not listed yet is read now."""
        run = self._runs.get(run_id)
        if run is None and self._loaded:
            run = self._read_stored(run_id)
        return run

    def resolve(self, run_id: str) -> ServedRun:
        """The run with this id, or the one run whose id starts with it (at least 4
        characters, as people copy a short prefix). LookupError says why not."""
        run = self.get(run_id)
        if run is not None:
            return run
        if self._loaded and len(run_id) >= 4:  # the runs recorded with this prefix, listed or not yet
            stored = [rid for rid in self._stored_ids(prefix=run_id) if rid not in self._runs]
            if len(stored) == 1 and not any(rid.startswith(run_id) for rid in self._runs):
                found = self._read_stored(stored[0])
                if found is not None:
                    return found
        else:
            stored = []
        matches = [r.run_id for rid, r in self._runs.items() if len(run_id) >= 4 and rid.startswith(run_id)] + stored
        if len(matches) == 1:
            return self._runs[matches[0]]
        if matches:
            ids = ", ".join(sorted(matches)[:5])
            raise LookupError(f"run id prefix {run_id!r} matches {len(matches)} runs: {ids}")
        shown = run_id if len(run_id) <= 64 else run_id[:64] + "..."  # a detail must not grow with the input
        if len(run_id) < 4:  # whether or not a run starts so: the words say what to do
            raise LookupError(f"run id prefix {shown!r} is too short: give at least 4 characters")
        raise LookupError(f"unknown run {shown!r}")

    def runs(self) -> list[ServedRun]:
        return list(self._runs.values())

    def event_ids(self) -> set[str]:
        """The ids of every event recorded here (an ingest server's duplicate filter)."""
        ids: set[str] = set()
        for run in self._runs.values():
            if run.memory is None and run.history is not None:
                ids.update(run.history.event_ids())  # from the column: nothing decoded
            else:
                ids.update(ev.event_id for ev in run.events_after(-1))
        return ids

    async def ingest(self, event: Event) -> int:
        """Store an event a remote producer pushed (the sink an IngressService feeds). Returns
        how many events the run's recording dropped since its last pushed event (ServedRun.ingest)."""
        run = self._runs.get(event.run_id)
        if run is None:
            run = self.get(event.run_id)  # a run recorded before and not listed yet: read now
        if run is None:
            run = self._runs[event.run_id] = ServedRun(event.run_id)
            run.hooks = self.event_hooks
        if run.ingest_sinks is None:
            if run.runner is not None:
                raise ValueError(f"run {event.run_id!r} is hosted here; it cannot also be pushed")
            if run.state.finished:
                raise ValueError(f"run {event.run_id!r} already ended; event {event.sequence} is late")
            await run.begin_ingest(self.db_path)
        return await run.ingest(event)

    async def close(self, *, suspend: bool = False) -> None:
        """Close every run; with ``suspend`` the runs hosted here are left interrupted (see
        ServedRun.close), not cancelled."""
        for run in list(self._runs.values()):
            await run.close(suspend=suspend)
        if self._registry is not None:
            self._registry.close()
