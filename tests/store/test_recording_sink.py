"""RecordingSink(log): a run recorded into any EventLog (SQLite, JSONL) through one batching
sink: what the runner emitted is what the log holds, batches wait for their size, timer or a
sync, and a log that refuses the append keeps the events for the next one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from goldfive import events as E
from goldfive.errors import SinkError
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.store.jsonl import JsonlLog
from goldfive.store.log import EventLog, SqliteLog
from goldfive.store.recording_sink import RecordingSink
from goldfive.types import Plan, Session, Task, TaskEdge
from goldfive.testing import until


def make_log(kind: str, path: Path) -> EventLog:
    return SqliteLog(path.with_suffix(".sqlite")) if kind == "sqlite" else JsonlLog(path.with_suffix(".jsonl"))


@pytest.mark.parametrize("kind", ["sqlite", "jsonl"])
async def test_a_run_recorded_through_the_sink_is_what_the_runner_emitted(kind: str, tmp_path: Path) -> None:
    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        await tools["report_task_progress"](detail=f"working on {task.id}")
        return f"{task.id} done"

    plan = Plan([Task("a", "a"), Task("b", "b")], [TaskEdge("a", "b")], id="p")
    recorder, watcher = RecordingSink(make_log(kind, tmp_path / "runs")), InMemorySink()
    await Runner(agent=agent, planner=StaticPlanner(plan), run_id="rec-1", sinks=[recorder, watcher]).run("two tasks")
    again = make_log(kind, tmp_path / "runs")
    got = [ev.SerializeToString() async for ev in again.events("rec-1")]
    assert got == [ev.SerializeToString() for ev in watcher.events] and len(got) > 8
    assert recorder.written == len(got) and recorder.duplicates == 0
    await again.close()


@pytest.mark.parametrize("kind", ["sqlite", "jsonl"])
async def test_events_wait_for_the_batch_the_timer_or_a_sync(kind: str, tmp_path: Path) -> None:
    log = make_log(kind, tmp_path / "runs")
    sink = RecordingSink(log, batch_size=5, flush_interval=0.05)
    s = Session(run_id="r")
    events = [E.run_started(s, goal_summary="g")] + [E.task_progress(s, "t", detail=str(i)) for i in range(6)]
    for ev in events[:4]:
        await sink.emit(ev)
    assert (sink.pending, sink.written) == (4, 0)
    await sink.emit(events[4])  # the fifth: a batch
    assert (sink.pending, sink.written) == (0, 5)
    await sink.emit(events[5])
    await until(lambda: sink.written == 6)  # the timer
    await sink.emit(events[6])
    await sink.sync()  # a durable state change does not wait for the timer
    assert sink.written == 7 and [e.sequence async for e in log.events("r")] == list(range(7))
    await sink.emit(events[6])
    await sink.close()  # a duplicate is the log's to skip, and counted
    assert (sink.written, sink.duplicates) == (7, 1)


async def test_a_refused_append_keeps_the_events_and_raises_until_the_log_takes_them(tmp_path: Path) -> None:
    folder = tmp_path / "not-yet"
    sink = RecordingSink(JsonlLog(folder / "runs.jsonl"), batch_size=100, max_pending=100)
    s = Session(run_id="r")
    await sink.emit(E.run_started(s, goal_summary="g"))
    with pytest.raises(SinkError, match=r"writing 1 events to .*runs.jsonl failed"):
        await sink.sync()
    assert sink.pending == 1 and "No such file or directory" in sink.write_error
    folder.mkdir()
    await sink.emit(E.run_completed(s, "done"))
    await sink.sync()
    assert (sink.pending, sink.written, sink.write_error) == (0, 2, "")
    await sink.close()
    assert [e.sequence async for e in JsonlLog(folder / "runs.jsonl").events("r")] == [0, 1]
