"""SQLitePersistenceSink, list_runs and replay_from_sqlite on a real database file."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest

from goldfive import events
from goldfive.compat import decode_recorded, recorded_bytes
from goldfive.testing import until
from goldfive.errors import DuplicateEventError, ReplayError, SinkError
from goldfive.sinks import RunInfo, SQLitePersistenceSink, list_runs, replay_from_sqlite
from goldfive.types import Session


def _session(run_id: str, start_ms: int = 1_700_000_000_000) -> Session:
    ticks = iter(range(start_ms, start_ms + 1_000_000, 10))
    return Session(run_id=run_id, clock=lambda: next(ticks))


def _run(s: Session, n: int) -> list:
    return [events.run_started(s, goal_summary="g")] + [events.task_progress(s, "t", detail=str(i)) for i in range(n - 1)]


async def test_round_trip_through_replay_from_sqlite_in_sequence_order(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    sink = SQLitePersistenceSink(db)
    evs = _run(_session("r1"), 5)
    for ev in evs:
        await sink.emit(ev)
    await sink.close()
    assert replay_from_sqlite(db, "r1") == evs
    assert replay_from_sqlite(db, "unknown") == []


async def test_columns_hold_the_envelope_and_the_serialized_event(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    sink = SQLitePersistenceSink(db, table="goldfive_events")
    ev = events.task_started(_session("r1"), "t1")
    await sink.emit(ev)
    await sink.close()
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT run_id, sequence, event_id, kind, emitted_at_ms, payload FROM goldfive_events").fetchone()
    assert row[:5] == ("r1", 0, ev.event_id, "task_started", 1_700_000_000_000)
    # The serialized event, marked with the recording schema (goldfive.compat).
    assert row[5] == recorded_bytes(ev) and row[5].startswith(ev.SerializeToString())
    assert decode_recorded(row[5]) == ev


async def test_list_runs_reports_each_run_across_two_runs(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    sink = SQLitePersistenceSink(db)
    for ev in _run(_session("a", 1000), 3) + _run(_session("b", 5000), 4):
        await sink.emit(ev)
    await sink.close()
    assert list_runs(db) == [RunInfo("a", 3, 1000, 1020, 2), RunInfo("b", 4, 5000, 5030, 3)]


async def test_file_database_uses_wal_journal_mode(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    sink = SQLitePersistenceSink(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    await sink.close()


async def test_batch_is_committed_by_the_timer_without_close(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    sink = SQLitePersistenceSink(db, flush_interval=0.01)
    await sink.emit(events.task_started(_session("r1"), "t1"))
    assert sink.pending == 1 and replay_from_sqlite(db, "r1") == []
    await asyncio.sleep(0.05)
    assert sink.pending == 0
    assert [e.task_started.task_id for e in replay_from_sqlite(db, "r1")] == ["t1"]
    await sink.close()


async def test_full_batch_is_committed_inside_emit(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    sink = SQLitePersistenceSink(db, flush_interval=60, batch_size=4)
    for ev in _run(_session("r1"), 4):
        await sink.emit(ev)
    assert sink.pending == 0 and sink.written == 4
    assert len(replay_from_sqlite(db, "r1")) == 4
    await sink.close()


async def test_duplicate_is_counted_logged_and_raised_and_the_rest_is_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "runs.db"
    s = _session("r1")
    first, second = events.task_started(s, "t1"), events.task_started(s, "t2")
    clash = events.task_completed(Session(run_id="r1"), "other")  # sequence 0 again
    sink = SQLitePersistenceSink(db, flush_interval=60)
    await sink.emit(first)
    await sink.flush()
    await sink.emit(clash)
    await sink.emit(second)
    with caplog.at_level(logging.WARNING, logger="goldfive.sinks"):
        with pytest.raises(DuplicateEventError, match=r"\('r1', 0\)"):
            await sink.flush()
    assert sink.duplicates == 1
    assert sink.errors == [str(DuplicateEventError(f"{db}:events already holds (run_id, sequence) ('r1', 0)"))]
    assert any("run_id=r1 sequence=0" in r.getMessage() for r in caplog.records)
    await sink.close()
    assert replay_from_sqlite(db, "r1") == [first, second]  # the first stored event stays


async def test_duplicates_are_never_logged_per_event(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A runner and a hub writing one database once logged a line per event (issue 23 item
    5): one warning for the first batch with duplicates, the total at close."""
    db = tmp_path / "runs.db"
    evs = _run(_session("r1"), 40)
    first = SQLitePersistenceSink(db)
    for ev in evs:
        await first.emit(ev)
    await first.close()
    again = SQLitePersistenceSink(db, flush_interval=60)
    with caplog.at_level(logging.WARNING, logger="goldfive.sinks"):
        for ev in evs:  # every event twice over, a flush per event as a durable run does
            await again.emit(ev)
            with pytest.raises(DuplicateEventError):
                await again.flush()
        await again.close()
    assert again.duplicates == 40
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "run_id=r1 sequence=0" in lines[0] and "40 duplicate events" in lines[1]


async def test_duplicate_found_by_the_timer_is_raised_by_the_next_call(tmp_path: Path) -> None:
    sink = SQLitePersistenceSink(tmp_path / "runs.db", flush_interval=0.01)
    ev = events.task_started(_session("r1"), "t1")
    await sink.emit(ev)
    await sink.emit(ev)  # same event twice within one batch
    await asyncio.sleep(0.05)
    assert sink.duplicates == 1
    with pytest.raises(DuplicateEventError):
        await sink.close()
    assert sink.closed


@pytest.mark.parametrize("table", ["", "1events", "events; DROP TABLE x", "a" * 64, "ev-ents"])
def test_bad_table_name_raises_value_error_naming_it(tmp_path: Path, table: str) -> None:
    with pytest.raises(ValueError, match="invalid SQLite table name"):
        SQLitePersistenceSink(tmp_path / "runs.db", table=table)


async def test_memory_database_works_through_the_sink(tmp_path: Path) -> None:
    sink = SQLitePersistenceSink(":memory:")
    evs = _run(_session("r1"), 3)
    for ev in evs:
        await sink.emit(ev)
    await sink.flush()
    assert sink.replay("r1") == evs
    assert sink.list_runs() == [RunInfo("r1", 3, 1_700_000_000_000, 1_700_000_000_020, 2)]
    await sink.close()
    with pytest.raises(SinkError, match="closed"):
        await sink.emit(evs[0])


def test_reading_a_missing_file_raises_replay_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(ReplayError, match="missing.db"):
        replay_from_sqlite(missing, "r1")
    with pytest.raises(ReplayError, match="missing.db"):
        list_runs(missing)
    assert not missing.exists()


async def test_reading_a_missing_table_raises_replay_error(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    await SQLitePersistenceSink(db).close()
    with pytest.raises(ReplayError, match="'other'"):
        list_runs(db, table="other")


def test_unopenable_path_raises_sink_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SinkError, match="no-such-dir"):
        SQLitePersistenceSink(tmp_path / "no-such-dir" / "runs.db")


def test_file_that_is_not_a_database_raises_sink_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SinkError, match="bogus.db"):
        SQLitePersistenceSink(bogus)


async def test_emit_many_stores_a_batch_as_emit_would_in_order_with_its_columns(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    evs = _run(_session("r1"), 5) + _run(_session("r2"), 3)
    sink = SQLitePersistenceSink(db, batch_size=4, flush_interval=60)
    await sink.emit_many(evs[:6])  # past batch_size: written whole, at once
    assert sink.pending == 0 and sink.written == 6
    await sink.emit_many(evs[6:])
    await sink.close()
    assert replay_from_sqlite(db, "r1") == evs[:5] and replay_from_sqlite(db, "r2") == evs[5:]
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT event_id, kind, emitted_at_ms FROM events WHERE run_id = 'r1' AND sequence = 1").fetchone()
    assert row == (evs[1].event_id, "task_progress", evs[1].emitted_at.ToMilliseconds())


async def test_emit_many_refuses_a_stored_key_as_emit_does_and_keeps_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    s = _session("r1")
    first, second = events.task_started(s, "t1"), events.task_started(s, "t2")
    clash = events.task_completed(Session(run_id="r1"), "other")  # sequence 0 again
    sink = SQLitePersistenceSink(db, flush_interval=60)
    await sink.emit_many([first])
    await sink.flush()
    await sink.emit_many([clash, second])
    with pytest.raises(DuplicateEventError, match=r"\('r1', 0\)"):
        await sink.flush()
    assert sink.duplicates == 1
    await sink.close()
    assert replay_from_sqlite(db, "r1") == [first, second]
    closed = SQLitePersistenceSink(tmp_path / "other.db")
    await closed.close()
    with pytest.raises(SinkError):
        await closed.emit_many([first])


async def test_with_a_writer_thread_flush_writes_off_the_loop_and_rows_added_meanwhile_go_next(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    runs = [_run(_session(f"r{i}"), 50) for i in range(20)]
    sink = SQLitePersistenceSink(db, writer_thread=True, batch_size=100_000, flush_interval=60)
    for step in range(50):  # interleaved, as many runs arrive at a hub
        await sink.emit_many([run[step] for run in runs[:10]])
    first = asyncio.create_task(sink.flush())
    await until(lambda: sink.pending == 0)  # the write took the rows: it runs in the worker thread now
    for step in range(50):
        await sink.emit_many([run[step] for run in runs[10:]])
    assert sink.pending == 500  # not written by the loop while the worker writes
    await first
    assert sink.written == 500
    await sink.flush()
    assert sink.written == 1000 and sink.pending == 0
    await sink.emit(events.run_completed(Session(run_id="late"), outcome_summary="x"))
    await sink.close()  # the last row is written on close
    for i, run in enumerate(runs):
        assert replay_from_sqlite(db, f"r{i}") == run
    assert len(replay_from_sqlite(db, "late")) == 1


async def test_a_runner_and_its_hub_record_to_different_default_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`goldfive serve` and `goldfive run --hub` on one machine: two files, never one."""
    from goldfive.cli.local import _recording_sink
    from goldfive.remote.server import default_db_path as serve_default

    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    runner_sink = _recording_sink(None)
    await runner_sink.close()
    assert Path(runner_sink.path) == tmp_path / "runs.sqlite"
    assert serve_default() == tmp_path / "hub.sqlite"


async def test_an_event_changed_after_it_was_emitted_is_recorded_as_it_was_emitted(tmp_path: Path) -> None:
    """The sink queues each event's row, encoded at emit: the caller may reuse the message."""
    db = tmp_path / "runs.db"
    sink = SQLitePersistenceSink(db, flush_interval=60)
    s = _session("r1")
    one, many = events.task_progress(s, "t", detail="as emitted"), [events.task_progress(s, "t", detail="as emitted too")]
    await sink.emit(one)
    await sink.emit_many(many)
    kept = [one.SerializeToString(), many[0].SerializeToString()]
    one.task_progress.detail = many[0].task_progress.detail = "changed later"
    one.sequence = 7
    await sink.close()
    assert [ev.SerializeToString() for ev in replay_from_sqlite(db, "r1")] == kept


async def test_a_run_another_writer_holds_is_fenced_with_its_queued_events_and_the_others_are_kept(tmp_path: Path) -> None:
    from goldfive.errors import RecordingConflictError
    from goldfive.store.sqlite_log import SqliteLog

    db = tmp_path / "runs.db"
    other = SqliteLog(db)
    assert other.take_lock("b", "another writer") is None
    sink = SQLitePersistenceSink(db, durability="normal", flush_interval=60)
    a, b = _session("a"), _session("b")
    await sink.emit(events.run_started(a, goal_summary="ours"))
    await sink.emit(events.task_progress(b, "t", detail="queued before its start"))
    await sink.emit(events.run_started(b, goal_summary="theirs"))  # b's lock is held: b is fenced
    await sink.emit(events.task_progress(a, "t", detail="still ours"))
    assert sink.pending == 2  # a's two rows; b's queued row left out with its start
    with pytest.raises(RecordingConflictError, match="another writer"):
        await sink.sync()
    assert sink.fenced == 2 and [ev.sequence for ev in replay_from_sqlite(db, "a")] == [0, 1]
    assert replay_from_sqlite(db, "b") == []
    await sink.close()
    await other.close()
