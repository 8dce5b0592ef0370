"""A hub on a large SQLite file answers first and lists the recorded runs as it reads them
(issue 27 part 3); a run asked for before its turn is read at once; runs other processes record
into the file after the hub started are picked up (issue 23)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import goldfive.remote.server as server_mod
from goldfive.errors import DamagedStoreError
from goldfive.remote import RemoteClient, RunHost
from goldfive.remote.server import serve
from goldfive.remote.summaries import summary
from goldfive.sinks import SQLitePersistenceSink
from goldfive.testing import until
from tests.store.test_store_damage import _damaged_db, record, story


def test_a_run_asked_for_before_the_listing_reaches_it_is_read_at_once_and_listed_once(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    record(db, story("aaaa-run"), story("bbbb-run", progress=5), story("cccc-run"))
    host = RunHost(db)
    host.mark_loaded()
    assert host.runs() == []  # nothing read yet
    run = host.get("bbbb-run")
    assert run is not None and run.origin == "recorded"
    row = summary(run)
    assert (row.state, row.goal_summary, row.tasks_completed, run.state.events) == ("COMPLETED", "a story", 1, 10)
    assert host.resolve("cccc") is host.get("cccc-run")  # a prefix the listing has not reached
    assert host.get("dddd-run") is None
    with pytest.raises(LookupError, match="unknown run 'dddd'"):
        host.resolve("dddd")

    asyncio.run(host.read_store())
    assert [r.run_id for r in host.runs()] == ["bbbb-run", "cccc-run", "aaaa-run"]  # each once
    assert host.get("bbbb-run") is run and host.listed_all


def test_the_listing_is_oldest_first_and_a_prefix_of_two_runs_is_refused_naming_both(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    late, early = story("abcd-late"), story("abcd-early")
    for ev in late:
        ev.emitted_at.FromMilliseconds(1_800_000_000_000 + ev.sequence)
    record(db, late, early)
    host = RunHost(db)
    assert host.load_recorded() == 2
    assert [r.run_id for r in host.runs()] == ["abcd-early", "abcd-late"]
    fresh = RunHost(db)
    fresh.mark_loaded()
    with pytest.raises(LookupError, match="matches 2 runs: abcd-early, abcd-late"):
        fresh.resolve("abcd")


def test_a_hub_picks_up_runs_recorded_into_its_file_after_it_started(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    record(db, story("first-run"))

    async def go() -> None:
        host = RunHost(db)
        reading = asyncio.create_task(host.read_store(every=0.02))
        try:
            await until(lambda: host.listed_all, "the first listing")
            assert [r.run_id for r in host.runs()] == ["first-run"]
            sink = SQLitePersistenceSink(db)  # another writer of the same file
            for ev in story("later-run"):
                await sink.emit(ev)
            await sink.close()
            await until(lambda: host.get("later-run") in host.runs(), "the run recorded after the start")
            assert summary(host.runs()[-1]).state == "COMPLETED"
            assert len(host.runs()) == 2
        finally:
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)

    asyncio.run(go())


def test_serve_answers_before_the_recorded_runs_are_listed_and_lists_them_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "runs.sqlite"
    record(db, *(story(f"run-{i:04d}") for i in range(5)))
    monkeypatch.setattr(server_mod, "LIST_WAIT", 0.0)  # as for a file too large to list in time
    monkeypatch.setattr(server_mod, "CHECK_WAIT", 0.0)

    async def go() -> None:
        ready: asyncio.Future[server_mod.RemoteServer] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(serve("127.0.0.1:0", db_path=db, ready=ready))
        server = await ready
        try:
            async with RemoteClient(server.address) as client:
                listed = await until(lambda: _all_listed(client, 5), "every recorded run listed")
            assert sorted(r.run_id for r in listed) == [f"run-{i:04d}" for i in range(5)]
            assert {r.state for r in listed} == {"COMPLETED"}
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(go())


async def _all_listed(client: RemoteClient, n: int) -> list[object] | None:
    runs = await client.list_runs()
    return runs if len(runs) == n else None


def test_a_damaged_file_whose_check_outlasts_the_start_stops_serving_with_the_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _damaged_db(tmp_path)
    gate = threading.Event()
    real_check = server_mod.check_database

    def slow_check(path: object) -> str | None:  # the real check, held back as a large file's is
        gate.wait(10)
        return real_check(path)  # type: ignore[arg-type]

    monkeypatch.setattr(server_mod, "check_database", slow_check)
    monkeypatch.setattr(server_mod, "CHECK_WAIT", 0.0)

    async def go() -> None:
        ready: asyncio.Future[server_mod.RemoteServer] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(serve("127.0.0.1:0", db_path=db, ready=ready))
        server = await ready  # listening while the check goes on
        async with RemoteClient(server.address) as client:
            await client.list_runs()
            assert "checking the database's integrity" in client.hub_warning
        gate.set()
        with pytest.raises(DamagedStoreError, match=r"runs.sqlite is damaged \(.*malformed.*\); --allow-damaged-db"):
            await asyncio.wait_for(task, 10)

    asyncio.run(go())


def test_a_recorded_run_another_process_goes_on_writing_keeps_its_summary_current(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    events = story("growing-run", progress=4)
    record(db, events[:3])  # started, planned, its task started: then the hub looks

    async def go() -> None:
        host = RunHost(db)
        reading = asyncio.create_task(host.read_store(every=0.02))
        try:
            await until(lambda: host.listed_all, "the first listing")
            run = host.get("growing-run")
            assert run is not None and summary(run).state == "INTERRUPTED" and run.state.events == 3
            sink = SQLitePersistenceSink(db)  # its own process goes on writing
            for ev in events[3:]:
                await sink.emit(ev)
            await sink.close()
            await until(lambda: run.state.finished, "the run's end read from the file")
            row = summary(run)
            assert (row.state, row.tasks_completed, run.state.events, run.state.last_sequence) == ("COMPLETED", 1, 9, 8)
            assert host.runs() == [run]
        finally:
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)

    asyncio.run(go())
