"""A damaged recording database: undecodable rows, corrupted pages, writes that fail. The
server keeps serving what it can and says what is wrong, never silently."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goldfive.errors import DamagedStoreError, SinkError
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.pb.goldfive.v1 import types_pb2 as tpb
from goldfive.remote import RemoteClient, RemoteServer, RunHost, start_server
from goldfive.remote.host import HostedRun
from goldfive.remote.server import serve
from goldfive.remote.service import summary
from goldfive.sinks import SQLitePersistenceSink
from goldfive.store.recorder import RunRecorder
from goldfive.testing import ctl


def story(run_id: str, progress: int = 3) -> list[pb.Event]:
    kinds: list[dict[str, Any]] = [
        {"run_started": pb.RunStarted(goal_summary="a story")},
        {"plan_submitted": pb.PlanSubmitted(plan=tpb.Plan(id="p", tasks=[tpb.Task(id="t1", title="one")]))},
        {"task_started": pb.TaskStarted(task_id="t1")},
        *({"task_progress": pb.TaskProgress(task_id="t1", detail=f"step {i}")} for i in range(progress)),
        {"task_completed": pb.TaskCompleted(task_id="t1")},
        {"run_completed": pb.RunCompleted(outcome_summary="done")},
    ]
    out = []
    for seq, payload in enumerate(kinds):
        ev = pb.Event(event_id=f"{run_id}-{seq}", run_id=run_id, sequence=seq, **payload)
        ev.emitted_at.FromMilliseconds(1_700_000_000_000 + seq)
        out.append(ev)
    return out


def record(db: Path, *runs: list[pb.Event]) -> None:
    async def write() -> None:
        sink = SQLitePersistenceSink(db)
        for events in runs:
            for ev in events:
                await sink.emit(ev)
        await sink.close()

    asyncio.run(write())


def spoil_row(db: Path, run_id: str, kind: str) -> int:
    conn = sqlite3.connect(db)
    (seq,) = conn.execute("SELECT MIN(sequence) FROM events WHERE run_id = ? AND kind = ?", (run_id, kind)).fetchone()
    conn.execute("UPDATE events SET payload = x'ffffffff' WHERE run_id = ? AND sequence = ?", (run_id, seq))
    conn.commit()
    conn.close()
    return int(seq)


def spoil_page(db: Path, page: int) -> None:
    """Overwrite one b-tree page header, as a torn write or a bad disk would."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with open(db, "r+b") as f:
        f.seek(page_size * page)
        f.write(b"\x0d" + b"\xff" * 7)


class RecordedServer:
    """``serve``'s start (database check, recorded runs) on an event loop in a thread, so
    click's CliRunner can call asyncio.run for ``ctl``."""

    def __init__(self, db: Path, **kw: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ready: asyncio.Future[RemoteServer] = asyncio.run_coroutine_threadsafe(self._future(), self.loop).result(5)
        self.task = asyncio.run_coroutine_threadsafe(self._start(db, kw), self.loop)
        self.server = asyncio.run_coroutine_threadsafe(self._wait(), self.loop).result(20)

    async def _future(self) -> asyncio.Future[RemoteServer]:
        return asyncio.get_running_loop().create_future()

    async def _start(self, db: Path, kw: dict[str, Any]) -> None:
        await serve("127.0.0.1:0", db_path=db, ready=self.ready, **kw)

    async def _wait(self) -> RemoteServer:
        return await self.ready

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.task.cancel)
        try:
            self.task.result(10)
        except BaseException:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[Any]:
    servers: list[RecordedServer] = []

    def start(db: Path, **kw: Any) -> RecordedServer:
        servers.append(RecordedServer(db, **kw))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def test_an_undecodable_row_is_skipped_and_ctl_runs_says_the_history_is_damaged(tmp_path, recorded):
    db = tmp_path / "runs.sqlite"
    record(db, story("good-run"), story("sick-run"))
    bad = spoil_row(db, "sick-run", "task_started")
    server = recorded(db)
    out = ctl(server.server.address, "runs")
    assert out.exit_code == 0
    lines = {line.split()[0]: line for line in out.output.splitlines()}
    assert "history damaged: 1 unreadable event skipped" in lines["sick-run"]
    assert "damaged" not in lines["good-run"] and "COMPLETED" in lines["good-run"]
    tail = ctl(server.server.address, "tail", "sick-run")
    assert tail.exit_code == 0
    assert len(tail.output.strip().splitlines()) == len(story("sick-run")) - 1  # all but sequence `bad`
    assert bad == 2


def test_a_damaged_row_met_while_streaming_history_is_counted_once(tmp_path):
    db = tmp_path / "runs.sqlite"
    record(db, story("r1", progress=5))
    bad = spoil_row(db, "r1", "task_progress")
    host = RunHost(db)
    assert host.load_recorded() == 1
    run = host.get("r1")
    assert run is not None and run.state.finished == "COMPLETED"  # the summary needs no progress rows
    for _ in range(2):
        sequences = [ev.sequence for ev in run.events_after(-1)]
        assert bad not in sequences and len(sequences) == len(story("r1", progress=5)) - 1
    assert run.damaged == 1 and summary(run).damaged_events == 1


def test_recorded_history_is_read_from_the_database_not_held_in_memory(tmp_path):
    db = tmp_path / "runs.sqlite"
    record(db, story("r1", progress=50))
    host = RunHost(db)
    host.load_recorded()
    run = host.get("r1")
    assert run is not None and run.history is not None
    assert run._history == [] and run.memory is None
    assert summary(run).tasks_completed == 1 and run.state.last_sequence == len(story("r1", progress=50)) - 1
    assert [ev.sequence for ev in run.events_after(40)] == list(range(41, 55))


def _damaged_db(tmp_path: Path) -> Path:
    db = tmp_path / "runs.sqlite"
    long = [pb.Event(event_id=f"a{i}", run_id="a", sequence=i, task_progress=pb.TaskProgress(task_id="t", detail="x" * 100)) for i in range(3000)]
    record(db, long, story("b"))
    spoil_page(db, 40)
    return db


def test_serve_refuses_a_database_that_fails_its_integrity_check_naming_the_finding(tmp_path):
    db = _damaged_db(tmp_path)
    with pytest.raises(DamagedStoreError, match=r"database .*runs.sqlite is damaged \(.*malformed.*\); --allow-damaged-db"):
        asyncio.run(serve("127.0.0.1:0", db_path=db))


def test_goldfive_serve_on_a_damaged_database_exits_2_with_one_line(tmp_path):
    db = _damaged_db(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "goldfive.cli", "serve", "--listen", "127.0.0.1:0", "--db", str(db)],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, GOLDFIVE_DATA_DIR=str(tmp_path)),
    )  # fmt: skip
    assert proc.returncode == 2
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert line.startswith("goldfive serve: error: database ") and "is damaged" in line


def test_allow_damaged_db_serves_what_is_readable_and_says_what_is_not(tmp_path, recorded):
    db = _damaged_db(tmp_path)
    server = recorded(db, allow_damaged_db=True)
    out = ctl(server.server.address, "runs")
    assert out.exit_code == 0
    lines = {line.split()[0]: line for line in out.output.splitlines()}
    assert "COMPLETED" in lines["b"] and "damaged" not in lines["b"]
    assert "history damaged:" in lines["a"] and "unreadable" in lines["a"]


async def test_a_failing_database_marks_the_run_degraded_and_bounds_what_waits_unwritten(tmp_path, caplog):
    recorder = RunRecorder(tmp_path / "runs.sqlite", max_pending=10, batch_size=5)
    assert recorder.sink is not None
    recorder.sink._conn.execute("PRAGMA query_only=1")  # every write now fails
    run = HostedRun("r1")
    run.recorder = recorder
    caplog.set_level(logging.WARNING, "goldfive.sinks")
    for ev in story("r1", progress=25):  # 30 events
        await recorder.emit(ev)  # never raises to the run
    s = summary(run)
    assert "readonly" in s.write_error
    assert (s.unwritten_events, s.dropped_events) == (10, 20)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 2  # writing started to fail; the bound was reached: not one per batch
    from goldfive.remote.health import health_note

    assert health_note(s).startswith("DEGRADED, not recording: ") and "20 unwritten events dropped" in health_note(s)
    recorder.sink._conn.execute("PRAGMA query_only=0")
    await recorder.close()
    assert summary(run).write_error == "" and recorder.sink.written == 10


async def test_an_event_emitted_when_an_earlier_write_failure_is_raised_is_still_kept(tmp_path):
    sink = SQLitePersistenceSink(tmp_path / "runs.sqlite", flush_interval=0.01)
    sink._conn.execute("PRAGMA query_only=1")
    first, second = story("r1")[:2]
    await sink.emit(first)
    await asyncio.sleep(0.05)  # the timer's flush fails; nobody was there to hear it
    with pytest.raises(SinkError, match="readonly"):
        await sink.emit(second)
    sink._conn.execute("PRAGMA query_only=0")
    await sink.close()
    assert sink.written == 2


async def test_a_pushed_run_whose_recording_drops_events_refuses_the_event_that_finds_it(tmp_path):
    """HostIngest (serve --ingest): once the run's recording has dropped events (its bound
    reached while writes fail), the event that finds it raises, so the producer is not told it
    was received; the ones before are taken."""
    from goldfive.remote.ingest import HostIngest

    host = RunHost(tmp_path / "hub.sqlite")
    ingest = HostIngest(host)
    evs = story("p1", progress=25)
    await ingest.emit(evs[0])
    run = host.get("p1")
    assert run is not None and run.recorder is not None
    sink = run.recorder.sink
    sink.batch_size, sink.max_pending = 5, 10
    sink._conn.execute("PRAGMA query_only=1")  # every write now fails
    for ev in evs[1:10]:
        await ingest.emit(ev)  # kept unwritten, up to the bound
    assert (run.unwritten, run.dropped) == (10, 0)
    with pytest.raises(SinkError, match=r"recording of run p1 is failing \(.*readonly.*\); events were dropped"):
        await ingest.emit(evs[10])
    assert run.dropped == 1
    sink._conn.execute("PRAGMA query_only=0")
    await sink.flush()  # writing works again: the next events are taken
    await ingest.emit(evs[11])
    await ingest.emit(evs[12])
    assert run.dropped == 1
    await host.close()
