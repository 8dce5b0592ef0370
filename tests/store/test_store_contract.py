"""The EventLog contract (goldfive.store.log), from SQLite (the default), PostgreSQL (a real
server) and a JSONL recording (goldfive.store.jsonl.JsonlLog): events keyed by run and sequence, runs listed, history streamed in order, duplicates
skipped and counted by append, a run named by its id or a unique prefix."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from goldfive import events as E
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.errors import ReplayError
from goldfive.store.jsonl import JsonlLog
from goldfive.store.log import EventLog, SqliteLog
from goldfive.store.postgres import PostgresStore
from goldfive.types import Session
from tests.pg_server import PgServer
from tests.store.test_store_damage import spoil_page


@pytest.fixture(params=["sqlite", "postgres", "jsonl", "jsonl-held"])
async def log(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventLog]:
    """Each case runs against every EventLog goldfive has, through the protocol alone
    ("jsonl-held": the file held open and locked, appended to on the caller's thread without
    an fsync, as JSONLPersistenceSink's log is)."""
    if request.param == "sqlite":
        found: EventLog = SqliteLog(tmp_path / "runs.sqlite")
    elif request.param == "jsonl":
        found = JsonlLog(tmp_path / "runs.jsonl")
    elif request.param == "jsonl-held":
        held = JsonlLog(tmp_path / "runs.jsonl", synchronous="NORMAL", writer_thread=False)
        held.open()
        found = held
    else:
        server: PgServer = request.getfixturevalue("pg_server")
        found = await PostgresStore.open(server.dsn)
    assert isinstance(found, EventLog)
    try:
        yield found
    finally:
        if isinstance(found, PostgresStore):
            await found.truncate_for_tests()
        await found.close()


async def _history(log: EventLog, run_id: str, after: int = -1) -> list[Event]:
    return [ev async for ev in log.events(run_id, after, chunk=7)]


def _run(run_id: str, n: int, start_ms: int) -> list[Event]:
    clock = iter(range(start_ms, start_ms + 10 * (n + 5), 10))
    s = Session(run_id=run_id, clock=lambda: next(clock))
    out = [E.run_started(s, goal_summary=f"goal of {run_id}")]
    out += [E.task_progress(s, "t1", detail=f"step {i}") for i in range(n - 2)]
    out.append(E.run_completed(s, "done"))
    return out


async def test_runs_are_listed_with_counts_in_start_order(log: EventLog) -> None:
    a, b = _run("run-a-" + uuid.uuid4().hex[:6], 5, 1_000), _run("run-b-" + uuid.uuid4().hex[:6], 30, 2_000)
    await log.append(b)
    await log.append(a)
    runs = await log.runs()
    assert [(r.run_id, r.event_count, r.last_sequence) for r in runs] == [(a[0].run_id, 5, 4), (b[0].run_id, 30, 29)]
    assert runs[0].first_emitted_at_ms == 1_000 and runs[1].last_emitted_at_ms == 2_000 + 29 * 10


async def test_history_streams_in_order_after_a_sequence_across_pages(log: EventLog) -> None:
    events = _run("run-h", 40, 5_000)
    await log.append(events[20:])  # stored out of order
    await log.append(events[:20])
    got = await _history(log, "run-h")
    assert [e.sequence for e in got] == list(range(40))
    assert [e.SerializeToString() for e in got] == [e.SerializeToString() for e in events]
    assert [e.sequence for e in await _history(log, "run-h", after=33)] == [34, 35, 36, 37, 38, 39]
    assert await _history(log, "no-such-run") == []


async def test_a_stored_sequence_is_never_overwritten(log: EventLog) -> None:
    events = _run("run-d", 4, 9_000)
    assert await log.append(events) == 4
    impostor = Event()
    impostor.CopyFrom(events[1])
    impostor.task_progress.detail = "rewritten"
    assert await log.append([impostor, *_run("run-e", 3, 9_500)]) == 3  # the impostor skipped, the rest stored
    got = await _history(log, "run-d")
    assert len(got) == 4 and got[1].task_progress.detail == "step 0"


async def test_a_run_is_named_by_its_id_or_a_unique_prefix(log: EventLog) -> None:
    await log.append(_run("abcd1234-one", 3, 1_000))
    await log.append(_run("abcd9999-two", 3, 2_000))
    assert await log.resolve("abcd1234-one") == "abcd1234-one"
    assert await log.resolve("abcd12") == "abcd1234-one"
    with pytest.raises(ReplayError, match="more than one run"):
        await log.resolve("abcd")
    with pytest.raises(ReplayError, match="no run 'zzzz'"):
        await log.resolve("zzzz")


async def test_what_a_log_stored_is_read_by_a_new_log_on_the_same_store(log: EventLog, tmp_path: Path) -> None:
    """Reopened (a new process reading the file or database), the log holds the same runs."""
    events = _run("run-reopen-" + uuid.uuid4().hex[:6], 12, 3_000)
    await log.append(events)
    if isinstance(log, SqliteLog):
        again: EventLog = SqliteLog(log.path)
    elif isinstance(log, JsonlLog):
        again = JsonlLog(log.path)
    else:
        pytest.skip("PostgreSQL: one database, which every store of it reads")
    try:
        assert [r.run_id for r in await again.runs()] == [events[0].run_id]
        assert [e.SerializeToString() for e in await _history(again, events[0].run_id)] == [e.SerializeToString() for e in events]
        assert await again.append(events[:3]) == 0
    finally:
        await again.close()


async def test_a_store_finds_nothing_wrong_with_itself_until_it_is_damaged(log: EventLog) -> None:
    await log.append(_run("run-check-" + uuid.uuid4().hex[:6], 400, 4_000))
    assert await log.check() is None
    if isinstance(log, JsonlLog):
        with open(log.path, "ab") as f:
            f.write(b'{"eventId": "torn')  # a crash mid-write
        again: EventLog = JsonlLog(log.path)
    elif isinstance(log, SqliteLog):
        await log.close()
        spoil_page(Path(log.path), 3)  # a torn write of one b-tree page
        again = SqliteLog(log.path)
    else:
        pytest.skip("PostgreSQL checks its own pages; a test cannot damage them from here")
    try:
        problem = await again.check()
        assert problem is not None and problem.strip()
        if isinstance(again, JsonlLog):
            assert problem == f"1 line of {log.path} is not an event (line 401)"
    finally:
        await again.close()


async def test_a_run_lock_has_one_holder_until_it_is_dropped(log: EventLog) -> None:
    run = "run-lock-" + uuid.uuid4().hex[:6]
    assert await log.lock(run, "writer-a") is None
    assert await log.lock(run, "writer-a") is None  # its holder again: still its
    held = await log.lock(run, "writer-b")
    assert held is not None and held.owner == "writer-a" and held.run_id == run
    await log.unlock(run, "writer-b")  # not b's to drop
    assert await log.lock(run, "writer-b") is not None
    await log.unlock(run, "writer-a")
    assert await log.lock(run, "writer-b") is None
    assert await log.lock("other-" + run, "writer-a") is None  # one lock per run


async def test_a_holder_taking_its_lock_again_while_dropping_it_is_never_refused(log: EventLog) -> None:
    """One holder only: whatever order its lock and unlock run in, a lock call of its own is
    never refused (a lock read in a second statement could find the row gone, and name
    "another writer"); and of two holders at once, exactly one gets the lock."""
    run = "run-relock-" + uuid.uuid4().hex[:6]
    for _ in range(15):
        first, _dropped, again = await asyncio.gather(log.lock(run, "writer-a"), log.unlock(run, "writer-a"), log.lock(run, "writer-a"))
        assert first is None and again is None
    await log.unlock(run, "writer-a")
    for i in range(5):
        race = f"{run}-{i}"
        a, b = await asyncio.gather(log.lock(race, "writer-a"), log.lock(race, "writer-b"))
        assert (a is None) != (b is None)
        loser = a or b
        assert loser is not None and loser.owner in ("writer-a", "writer-b")


async def _same_store(log: EventLog) -> EventLog:
    """Another log on the store ``log`` opened (another process's)."""
    if isinstance(log, SqliteLog):
        return SqliteLog(log.path)
    if isinstance(log, JsonlLog):
        return JsonlLog(log.path)
    assert isinstance(log, PostgresStore)
    return await PostgresStore.open(log.dsn)


async def test_a_lock_is_held_against_another_log_on_the_same_store_until_it_is_closed(log: EventLog) -> None:
    """Two processes (here two logs) on one store: the second is refused, naming the first,
    until the first closes."""
    run = "run-lock2-" + uuid.uuid4().hex[:6]
    one, two = await _same_store(log), await _same_store(log)
    try:
        assert await one.lock(run, "hub-one") is None
        held = await two.lock(run, "hub-two")
        assert held is not None and held.owner == "hub-one" and "hub-one" in held.describe()
        await one.close()  # its locks go with it
        assert await two.lock(run, "hub-two") is None
    finally:
        await one.close()
        await two.close()


@pytest.mark.parametrize("kind", ["sqlite", "jsonl"])
async def test_a_lock_left_by_a_process_that_is_gone_is_taken_over(kind: str, tmp_path: Path) -> None:
    import socket
    import sqlite3
    import subprocess
    import sys

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    pid = int(gone.stdout)  # reaped: no such process now
    log: EventLog
    if kind == "sqlite":
        log = SqliteLog(tmp_path / "runs.sqlite")
        assert await log.lock("warm", "me") is None  # the table exists
        with sqlite3.connect(tmp_path / "runs.sqlite") as conn:
            conn.execute("INSERT INTO run_locks (run_id, pid, host, acquired_at_ms, owner) VALUES (?, ?, ?, ?, ?)", ("r", pid, socket.gethostname(), 1, "dead-writer"))
    else:
        log = JsonlLog(tmp_path / "runs.jsonl")
        (tmp_path / "runs.jsonl.locks").mkdir()
        (tmp_path / "runs.jsonl.locks" / "r.lock").write_text(
            f'{{"pid": {pid}, "host": "{socket.gethostname()}", "acquired_at_ms": 1, "owner": "dead-writer"}}'
        )
    other = SqliteLog(tmp_path / "runs.sqlite") if kind == "sqlite" else JsonlLog(tmp_path / "runs.jsonl")
    try:
        assert await log.lock("r", "me") is None
        held = await other.lock("r", "someone")  # taken over, and held now against others
        assert held is not None and held.owner == "me"
    finally:
        await log.close()
        await other.close()


async def test_the_log_records_who_wrote_each_run_from_which_sequence(log: EventLog) -> None:
    """Provenance is the log's: a run's events are recorded as written by the writer the
    caller named for the run (``write_as``, after its own checks), or the log's own writer;
    nothing in the events sets it, and a reopened store reads the same."""
    run, other = "run-who-" + uuid.uuid4().hex[:6], "run-own-" + uuid.uuid4().hex[:6]
    events = _run(run, 10, 1_000)
    log.write_as(run, "runner:r1")
    assert await log.append(events[:4]) == 4
    assert await log.append(events[:4]) == 0  # resent, already stored: no new writer
    log.write_as(run, "operator:alice")  # taken over
    forged = Event()
    forged.CopyFrom(events[4])
    forged.event_id = "runner:r1"  # what a runner sends cannot name the writer
    assert await log.append([forged, *events[5:]]) == 6
    assert await log.append(_run(other, 3, 2_000)) == 3
    assert await log.writers(run) == [(0, "runner:r1"), (4, "operator:alice")]
    assert await log.writers(other) == [(0, "")]  # the log's own writer (unnamed here)
    late = "run-late-" + uuid.uuid4().hex[:6]  # taken over before the first writer's events were stored
    log.write_as(late, "runner:r1")
    log.write_as(late, "operator:alice", from_sequence=3)
    assert await log.append(_run(late, 6, 3_000)) == 6  # one batch, both writers' events
    assert await log.writers(late) == [(0, "runner:r1"), (3, "operator:alice")]
    again = await _same_store(log)
    try:
        assert await again.writers(run) == [(0, "runner:r1"), (4, "operator:alice")]
        assert await again.writers("no-such-run") == []
    finally:
        await again.close()
