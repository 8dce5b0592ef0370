"""A durable commit that fails (the disk is full) pauses the run before its next task: the
person is told ("needs you: recording failed: ..."), a RESUME goes on only once writing works
again, and a run nobody can resume stops with a non-zero exit. The disk fills for real, by
SQLite's own page limit on the recording's connection (tests/recording_full.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from goldfive.control import AckResult, ControlChannel, ControlKind, ControlMessage
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.sinks.sqlite import SQLitePersistenceSink, replay_from_sqlite
from goldfive.store.recorder import RunRecorder
from goldfive.types import Plan, Session, Task, TaskEdge
from goldfive.view.attention import attention
from goldfive.view.state import RunState
from tests.recording_full import BIG, fill, free, recorders
from tests.runtime_kit import executor, kinds  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
IDS = ("a", "b", "c", "d")


def plan(*ids: str) -> Plan:
    return Plan([Task(i, i) for i in ids], [TaskEdge(x, y) for x, y in zip(ids, ids[1:])], id="p")


async def test_a_failed_commit_pauses_the_run_until_a_resume_finds_writing_works(tmp_path: Path, executor: Any) -> None:
    db = tmp_path / "runs.sqlite"
    started: list[str] = []
    attempts: dict[str, int] = {}

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        started.append(task.id)
        attempts[task.id] = task.attempt
        if task.id == "b":
            fill(recorders(session)[0])
            await tools["report_task_progress"](detail=BIG)
        return f"{task.id} done"

    recorder, watcher, channel = SQLitePersistenceSink(db, durability="normal"), InMemorySink(), ControlChannel()
    runner = Runner(agent=agent, planner=StaticPlanner(plan(*IDS)), executor=executor, run_id="full-1",
                    sinks=[recorder, watcher], control=channel)  # fmt: skip
    run = asyncio.ensure_future(runner.run("fill the disk"))
    async for ev in watcher.subscribe():
        if getattr(ev, "WhichOneof", None) and ev.WhichOneof("payload") == "recording_failed":
            break
    status = await channel.request(ControlMessage(ControlKind.STATUS_QUERY))
    assert "state=PAUSED" in status.detail and 'needs_you="recording failed: ' in status.detail, status.detail
    assert "database or disk is full" in status.detail
    state = RunState.from_events(watcher.events)
    need = attention(state)
    assert need is not None and need.kind == "recording" and need.reason.startswith("recording failed: "), need
    assert state.phase == "PAUSED"
    assert started == ["a", "b"]  # c's start could not be recorded: its agent never ran

    still = await channel.request(ControlMessage(ControlKind.RESUME))  # nothing freed yet
    assert still.result == AckResult.FAILURE and "the recording still fails" in still.detail, still.detail
    assert started == ["a", "b"]
    free(recorder)
    ok = await channel.request(ControlMessage(ControlKind.RESUME))
    assert ok.result == AckResult.SUCCESS and "works again" in ok.detail, ok.detail
    out = await run
    await runner.close()
    assert out.success and started == list(IDS)
    assert attempts == {i: 1 for i in IDS}  # c's start taken back: its one run is its first attempt
    assert runner.recording_failures >= 1 and runner.recording_error == ""
    stored = replay_from_sqlite(db, "full-1")
    assert [e.sequence for e in stored] == list(range(len(stored)))  # nothing was lost meanwhile
    assert [e.sequence for e in stored] == [e.sequence for e in watcher.events]
    assert Counter(e.task_completed.task_id for e in stored if e.WhichOneof("payload") == "task_completed") == {i: 1 for i in IDS}
    assert "recording_failed" in kinds(stored)
    from goldfive.durable.recover import recover

    folded = recover("full-1", stored).plan
    assert folded is not None and {t.id: t.attempt for t in folded.tasks} == {i: 1 for i in IDS}  # the taken-back start is not an attempt


async def test_a_hosted_runs_recorder_raises_a_failed_commit_so_the_run_pauses(tmp_path: Path) -> None:
    db = tmp_path / "hosted.sqlite"
    recorder = RunRecorder(db)
    started: list[str] = []

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        started.append(task.id)
        if task.id == "a":
            assert recorder.sink is not None
            fill(recorder.sink)
            await tools["report_task_progress"](detail=BIG)
        return "ok"

    watcher, channel = InMemorySink(), ControlChannel()
    runner = Runner(agent=agent, planner=StaticPlanner(plan("a", "b")), run_id="hosted-1", sinks=[watcher, recorder], control=channel)
    run = asyncio.ensure_future(runner.run("go"))
    async for ev in watcher.subscribe():
        if getattr(ev, "WhichOneof", None) and ev.WhichOneof("payload") == "recording_failed":
            break
    assert started == ["a"] and RunState.from_events(watcher.events).recording_error
    assert recorder.sink is not None
    free(recorder.sink)
    assert (await channel.request(ControlMessage(ControlKind.RESUME))).result == AckResult.SUCCESS
    assert (await run).success and started == ["a", "b"]
    await runner.close()


def test_ctl_status_says_a_hosted_run_needs_you_because_its_recording_failed(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from goldfive.cli import main
    from goldfive.testing import HubThread
    from tests.cli.test_cli_remote import ServerThread

    filled = asyncio.Event()

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        if task.id == "t1":
            fill(recorders(session)[0])
            await tools["report_task_progress"](detail=BIG)
            filled.set()
        return "ok"

    def factory(*, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
        return Runner(agent=agent, planner=StaticPlanner(plan("t1", "t2")), sinks=sinks, control=control, run_id=run_id)

    class Filling(ServerThread):
        async def _start_run(self) -> None:  # the filling run, not the gated one
            self.host.start_run(factory, "fill", run_id=self.run_id)
            await filled.wait()

        def stop(self) -> None:
            HubThread.stop(self)  # no gate to open

    async def paused_on_it(st: ServerThread) -> None:
        run = st.server.host.get("r1")
        assert run is not None and run.memory is not None
        async for ev in run.memory.subscribe():
            if getattr(ev, "WhichOneof", None) and ev.WhichOneof("payload") == "recording_failed":
                return

    st = Filling(tmp_path / "runs.sqlite")
    try:
        st.call(paused_on_it(st))
        out = CliRunner().invoke(main, ["ctl", st.addr, "status", "r1"], catch_exceptions=False).output
        assert "(paused)" in out and "needs you: recording failed: " in out and "database or disk is full" in out, out
    finally:
        st.stop()


def _goldfive(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "goldfive.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_goldfive_run_headless_stops_on_a_full_disk_exits_non_zero_and_resume_reruns_nothing_completed(tmp_path: Path) -> None:
    ids = [f"t{i}" for i in range(8)]
    (tmp_path / "plan.json").write_text(json.dumps({
        "summary": "fill", "tasks": [{"id": t, "title": t} for t in ids],
        "edges": [{"from_task_id": a, "to_task_id": b} for a, b in zip(ids, ids[1:])],
    }))  # fmt: skip
    db, done = tmp_path / "runs.sqlite", tmp_path / "done.txt"
    env = {**os.environ, "GOLDFIVE_DATA_DIR": str(tmp_path / "data"), "GOLDFIVE_TEST_DONE": str(done), "GOLDFIVE_TEST_FILL_AT": "t3"}
    first = _goldfive(["run", "tests.recording_full:agent", "--goal", "fill", "--plan", str(tmp_path / "plan.json"),
                       "--headless", "--db", str(db)], env)  # fmt: skip
    assert first.returncode == 1, (first.returncode, first.stderr)
    assert "Traceback" not in first.stderr, first.stderr
    said = [line for line in first.stderr.splitlines() if "recording failed" in line]
    assert said and said[-1].startswith("goldfive: recording failed: ") and "database or disk is full" in said[-1], first.stderr
    assert [line.split()[0] for line in done.read_text().splitlines()] == ids[:4]  # no task started after the failure
    run_id = first.stderr.split("(run ")[1].split(")")[0]
    conn = sqlite3.connect(db)
    recorded_done = {r[0] for r in conn.execute("SELECT kind FROM events WHERE run_id = ?", (run_id,))}
    conn.close()
    assert "run_completed" not in recorded_done

    env["GOLDFIVE_TEST_FILL_AT"] = ""  # space was freed
    again = _goldfive(["resume", run_id, "--db", str(db), "--headless"], env)
    assert again.returncode == 0, again.stderr
    runs = Counter(line.split()[0] for line in done.read_text().splitlines())
    # Every task ran; only t3 (its completion was in the commit that failed) ran twice.
    assert set(runs) == set(ids) and [t for t, n in runs.items() if n > 1] == ["t3"], runs
    evs = replay_from_sqlite(db, run_id)
    completed = Counter(e.task_completed.task_id for e in evs if e.WhichOneof("payload") == "task_completed")
    assert completed == {t: 1 for t in ids} and kinds(evs)[-1] == "run_completed"
