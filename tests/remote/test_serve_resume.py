"""``goldfive serve`` continues the runs it hosted when a stop interrupted them (unless
``--no-resume``): the history goes on gap-free and the run is served live again."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteClient
from goldfive.remote.server import RemoteServer, serve
from goldfive.remote.launch import Launch
from goldfive.runner import Runner
from goldfive.store.registry import LaunchSpec
from goldfive.types import Plan, Session, Task, TaskEdge

RUN = "hosted-run-1"
PLAN = Plan([Task(f"t{i}", f"task {i}") for i in range(1, 4)], [TaskEdge("t1", "t2"), TaskEdge("t2", "t3")], id="p")


def factory_with(agent: Any) -> Any:
    def factory(*, sinks: Any, control: Any, run_id: str) -> Runner:
        return Runner(agent=agent, planner=StaticPlanner(PLAN), sinks=sinks, control=control, run_id=run_id)

    return factory


async def quick(task: Task, session: Session) -> str:
    return f"did {task.id} (attempt {task.attempt})"


async def start(db: Path, **kw: Any) -> tuple[asyncio.Task[None], RemoteServer]:
    ready: asyncio.Future[RemoteServer] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(serve("127.0.0.1:0", db_path=db, ready=ready, **kw))
    return task, await asyncio.wait_for(ready, 10)


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def crash_copy(db: Path, to: Path) -> Path:
    src, dst = sqlite3.connect(db), sqlite3.connect(to)
    src.backup(dst)
    src.close()
    dst.close()
    return to


async def interrupted_recording(tmp_path: Path) -> Path:
    """A served run stopped in the middle of t2, as a kill leaves it on disk."""
    entered, gate = asyncio.Event(), asyncio.Event()

    async def held(task: Task, session: Session) -> str:
        if task.id == "t2":
            entered.set()
            await gate.wait()
        return f"did {task.id}"

    db = tmp_path / "runs.sqlite"
    serving, _ = await start(db, runs=[Launch(factory_with(held), "three tasks", LaunchSpec("test"))])
    await asyncio.wait_for(entered.wait(), 10)
    hosted = [r for r in sqlite3.connect(db).execute("SELECT DISTINCT run_id FROM events")]
    copy = crash_copy(db, tmp_path / "crashed.sqlite")
    gate.set()
    await stop(serving)
    assert len(hosted) == 1
    return copy


async def test_serve_resumes_its_interrupted_run_after_a_restart(tmp_path: Path) -> None:
    crashed = await interrupted_recording(tmp_path)
    serving, server = await start(crashed, resume_with=lambda launch: factory_with(quick) if launch.target == "test" else None)
    try:
        async with RemoteClient(server.address) as client:
            [summary] = await client.list_runs()
            events = []
            async for ev in client.subscribe(summary.run_id, -1):
                events.append(ev)
                if ev.WhichOneof("payload") in ("run_completed", "run_aborted"):
                    break
            assert [e.sequence for e in events] == list(range(len(events)))  # recorded part, then live
            kinds = [e.WhichOneof("payload") for e in events]
            assert kinds.count("run_resumed") == 1 and kinds[-1] == "run_completed"
            resumed = next(e.run_resumed for e in events if e.WhichOneof("payload") == "run_resumed")
            assert list(resumed.interrupted_task_ids) == ["t2"]
            done = [e.task_completed.result_summary for e in events if e.WhichOneof("payload") == "task_completed"]
            assert done == ["did t1", "did t2 (attempt 2)", "did t3 (attempt 1)"]
            snap = await client.get_run(summary.run_id)
            assert snap.summary.state == "COMPLETED"
    finally:
        await stop(serving)


async def test_serve_with_no_resume_leaves_the_run_interrupted(tmp_path: Path) -> None:
    crashed = await interrupted_recording(tmp_path)
    serving, server = await start(crashed, resume_with=None)
    try:
        async with RemoteClient(server.address) as client:
            [summary] = await client.list_runs()
            assert summary.state == "INTERRUPTED"
    finally:
        await stop(serving)
