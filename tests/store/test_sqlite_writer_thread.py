"""A SQLite recording written in a worker thread (a hub's group commit): the rows it stored are
freed in that thread, not on the event loop that queued them (freeing 60,000 rows is ~6 ms of
a thread, and a hub's ticker step after a commit did it on the loop, where a control waits)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from goldfive import events as E
from goldfive.errors import SinkError
from goldfive.sinks.sqlite import SQLitePersistenceSink
from goldfive.store.log import SqliteLog
from goldfive.store.sqlite_log import Row, row_of
from goldfive.testing import until
from goldfive.types import Session


class _Payload(bytearray):
    """A row's payload that says which thread freed it."""

    freed_in: list[int] = []

    def __del__(self) -> None:
        _Payload.freed_in.append(threading.get_ident())


def _row(event: object) -> Row:
    run_id, seq, event_id, kind, ms, payload = row_of(event)  # type: ignore[arg-type]
    return (run_id, seq, event_id, kind, ms, _Payload(payload))


@pytest.fixture(autouse=True)
def _clean() -> None:
    _Payload.freed_in.clear()


async def test_a_sink_with_a_writer_thread_frees_the_rows_it_stored_in_that_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SQLitePersistenceSink, "_queued", staticmethod(_row))
    sink = SQLitePersistenceSink(tmp_path / "hub.sqlite", writer_thread=True, batch_size=10_000, flush_interval=60)
    s = Session(run_id="r")
    try:
        await sink.emit_many([E.run_started(s, goal_summary="g")] + [E.task_progress(s, "t1", detail=str(i)) for i in range(2_499)])
        await sink.flush()
        await until(lambda: len(_Payload.freed_in) == 2_500, "the stored rows freed")
        assert threading.get_ident() not in _Payload.freed_in  # not one freed on the loop's thread
        assert [ev.sequence for ev in sink.replay("r")] == list(range(2_500))  # and every one stored
    finally:
        await sink.close()


async def test_a_failed_write_leaves_the_rows_whole_to_retry(tmp_path: Path) -> None:
    """``release`` empties the caller's list only once its rows are stored."""
    log = SqliteLog(tmp_path / "hub.sqlite", writer_thread=True)
    s = Session(run_id="r")
    rows = [row_of(E.run_started(s, goal_summary="g")), row_of(E.task_progress(s, "t1"))]
    try:
        log.open().execute("PRAGMA query_only=1")  # every write fails now
        with pytest.raises(SinkError):
            await log.append_rows(rows, release=True)
        assert len(rows) == 2
        log.open().execute("PRAGMA query_only=0")
        assert await log.append_rows(rows, release=True) == 2
        await until(lambda: rows == [], "the stored rows freed")
        assert [ev.sequence for ev in log.committed_run("r")] == [0, 1]
    finally:
        await log.close()
