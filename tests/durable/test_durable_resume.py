"""Durable runs: a run continues from its recording after its process stopped.

A stop is made the way a crash leaves the disk: while the run is in the middle of something,
the SQLite file is copied with SQLite's backup API (what is committed, nothing else), and the
copy is resumed by a new Runner."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from goldfive.control import AckResult, ControlChannel, ControlKind, ControlMessage
from goldfive.durable.store import ResumeRefused
from goldfive.planners.static import StaticPlanner
from goldfive.run.user_tools import UserTool
from goldfive.adapters.callable import CallableAdapter
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.sinks.sqlite import SQLitePersistenceSink, replay_from_sqlite
from goldfive.types import Plan, Session, Task, TaskEdge, TaskStatus
from tests.runtime_kit import executor, kinds  # noqa: F401

RUN = "run-durable-1"


def plan(*ids: str) -> Plan:
    return Plan([Task(i, i) for i in ids], [TaskEdge(a, b) for a, b in zip(ids, ids[1:])], id="p")


def crash_copy(db: Path, to: Path) -> Path:
    """What a killed process leaves on disk: the committed rows, no more."""
    src, dst = sqlite3.connect(db), sqlite3.connect(to)
    src.backup(dst)
    src.close()
    dst.close()
    return to


class Agent:
    """Records ``(task id, attempt)`` for each task it finishes; ``hold`` blocks a task."""

    def __init__(self, hold: str = "") -> None:
        self.done: list[tuple[str, int]] = []
        self.hold = hold
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def __call__(self, task: Task, session: Session) -> str:
        if task.id == self.hold:
            self.entered.set()
            await self.gate.wait()
        self.done.append((task.id, task.attempt))
        return f"{task.id} full result text, attempt {task.attempt}"


async def run_until_held(tmp_path: Path, executor: Any, ids: tuple[str, ...], hold: str, *, before_crash: Any = None) -> Path:
    """Run ``ids`` recording durably, copy the file while ``hold`` runs, let it finish."""
    db = tmp_path / "runs.sqlite"
    agent = Agent(hold=hold)
    channel = ControlChannel()
    runner = Runner(
        agent=agent, planner=StaticPlanner(plan(*ids)), executor=executor, run_id=RUN,
        sinks=[SQLitePersistenceSink(db, durability="normal")], control=channel,
    )  # fmt: skip
    task = asyncio.ensure_future(runner.run("do the things"))
    await agent.entered.wait()
    if before_crash is not None:
        await before_crash(channel)
    copy = crash_copy(db, tmp_path / "crashed.sqlite")
    agent.gate.set()
    channel.send_nowait(ControlMessage(ControlKind.RESUME))  # the original, if paused, finishes too
    await task
    await runner.close()
    return copy


def sequences_of(db: Path) -> list[int]:
    return [e.sequence for e in replay_from_sqlite(db, RUN)]


async def test_a_resumed_run_skips_completed_tasks_and_reruns_the_interrupted_one(tmp_path: Path, executor: Any) -> None:
    crashed = await run_until_held(tmp_path, executor, ("a", "b", "c"), hold="b")
    agent = Agent()
    out = await Runner.resume(RUN, store=crashed, agent=agent, planner=StaticPlanner(plan("a", "b", "c")), executor=type(executor)())
    assert out.success, out.reason
    assert agent.done == [("b", 2), ("c", 1)]  # a is not run again; b knows it is a second attempt
    assert out.session.completed_results["a"] == "a full result text, attempt 1"
    evs = replay_from_sqlite(crashed, RUN)
    assert [e.sequence for e in evs] == list(range(len(evs)))
    resumed = [e.run_resumed for e in evs if e.WhichOneof("payload") == "run_resumed"]
    assert len(resumed) == 1 and list(resumed[0].interrupted_task_ids) == ["b"] and resumed[0].resume_count == 1
    assert "running again: b" in resumed[0].detail and kinds(evs)[-1] == "run_completed"


async def test_a_paused_run_comes_back_paused(tmp_path: Path, executor: Any) -> None:
    async def pause(channel: ControlChannel) -> None:
        ack = await channel.request(ControlMessage(ControlKind.PAUSE))
        assert ack.result == AckResult.SUCCESS

    crashed = await run_until_held(tmp_path, executor, ("a", "b", "c"), hold="b", before_crash=pause)
    agent, channel, sink = Agent(), ControlChannel(), InMemorySink()
    runner = Runner.resuming(
        RUN, store=crashed, agent=agent, planner=StaticPlanner(plan("a", "b", "c")), executor=type(executor)(),
        control=channel, sinks=[sink],
    )  # fmt: skip
    task = asyncio.ensure_future(runner.run())
    status = await channel.request(ControlMessage(ControlKind.STATUS_QUERY))
    assert "state=PAUSED" in status.detail and agent.done == []
    await channel.request(ControlMessage(ControlKind.RESUME))
    out = await task
    await runner.close()
    assert out.success and agent.done == [("b", 2), ("c", 1)]
    resumed = [e for e in sink.events if e.WhichOneof("payload") == "run_resumed"]
    assert len(resumed) == 1 and resumed[0].run_resumed.paused
    assert sink.events[0].WhichOneof("payload") == "run_started"  # a watcher sees the run from its start
    assert [e.sequence for e in sink.events] == list(range(len(sink.events)))


async def test_an_undelivered_injected_message_reaches_the_task_that_runs_again(tmp_path: Path, executor: Any) -> None:
    async def inject(channel: ControlChannel) -> None:
        await channel.request(ControlMessage(ControlKind.INJECT_MESSAGE, payload={"text": "use the canary"}))

    crashed = await run_until_held(tmp_path, executor, ("a", "b"), hold="b", before_crash=inject)
    read: list[str] = []

    async def reader(task: Task, session: Session) -> str:
        import goldfive

        read.extend(await goldfive.read_injected(session, task.id))
        return "ok"

    out = await Runner.resume(RUN, store=crashed, agent=reader, planner=StaticPlanner(plan("a", "b")), executor=type(executor)())
    assert out.success and read == ["[user_steering]use the canary[/user_steering]"]


async def test_a_pending_approval_is_asked_again_when_its_task_runs_again(tmp_path: Path, executor: Any) -> None:
    db = tmp_path / "runs.sqlite"
    asked = asyncio.Event()

    def deploy() -> dict[str, Any]:
        return {"deployed": True}

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        result = await tools["deploy"]()
        return str(result)

    channel, sink = ControlChannel(), InMemorySink()
    adapter = CallableAdapter(agent, tools=[UserTool(deploy, requires_approval=True)])
    runner = Runner(agent=adapter, planner=StaticPlanner(plan("a")), executor=executor, run_id=RUN,
                    sinks=[SQLitePersistenceSink(db, durability="normal"), sink], control=channel)  # fmt: skip
    task = asyncio.ensure_future(runner.run("ship"))
    async for ev in sink.subscribe():
        if not hasattr(ev, "WhichOneof") or ev.WhichOneof("payload") != "approval_requested":
            continue
        asked.set()
        break
    crashed = crash_copy(db, tmp_path / "crashed.sqlite")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await runner.close()

    channel2, sink2 = ControlChannel(), InMemorySink()
    adapter2 = CallableAdapter(agent, tools=[UserTool(deploy, requires_approval=True)])
    resumed = Runner.resuming(RUN, store=crashed, agent=adapter2, planner=StaticPlanner(plan("a")),
                              executor=type(executor)(), control=channel2, sinks=[sink2])  # fmt: skip
    run2 = asyncio.ensure_future(resumed.run())
    seen_resume = False
    async for ev in sink2.subscribe():  # the recorded history comes first, then the new run
        kind = ev.WhichOneof("payload") if hasattr(ev, "WhichOneof") else ""
        seen_resume = seen_resume or kind == "run_resumed"
        if seen_resume and kind == "approval_requested":
            target = ev.approval_requested.target_id
            break
    first = next(e.run_resumed for e in sink2.events if e.WhichOneof("payload") == "run_resumed")
    assert len(first.pending_approval_ids) == 1 and "1 approval(s) asked again" in first.detail
    await channel2.request(ControlMessage(ControlKind.APPROVE, payload={"target_id": target}))
    out = await run2
    await resumed.close()
    assert out.success and "deployed" in out.session.completed_results["a"]


# -- refusals: one clear line, nothing written ---------------------------------------------------


async def test_resume_refuses_a_completed_run_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    runner = Runner(agent=Agent(), planner=StaticPlanner(plan("a")), run_id=RUN, sinks=[SQLitePersistenceSink(db, durability="normal")])
    assert (await runner.run("go")).success
    await runner.close()
    before = sequences_of(db)
    with pytest.raises(ResumeRefused, match=f"run {RUN} completed"):
        Runner.resuming(RUN, store=db, agent=Agent(), planner=StaticPlanner(plan("a")))
    assert sequences_of(db) == before


async def test_resume_refuses_a_plan_that_does_not_match_the_recording(tmp_path: Path, executor: Any) -> None:
    crashed = await run_until_held(tmp_path, executor, ("a", "b"), hold="b")
    before = sequences_of(crashed)
    with pytest.raises(ResumeRefused, match=r"the plan's tasks \(a, x\) do not match the recording's \(a, b\)"):
        Runner.resuming(RUN, store=crashed, agent=Agent(), planner=StaticPlanner(plan("a", "x")))
    assert sequences_of(crashed) == before


async def test_resume_refuses_a_run_a_live_process_holds_and_takes_over_a_stale_lock(tmp_path: Path, executor: Any) -> None:
    from goldfive.store.locks import process_started

    crashed = await run_until_held(tmp_path, executor, ("a", "b"), hold="b")
    conn = sqlite3.connect(crashed)
    # A live process that is not us, with its own start time (a row naming only its pid would
    # carry our start time, which is another process's: a reused pid, so a dead holder).
    conn.execute("UPDATE run_locks SET pid = ?, started = ?", (os.getppid(), process_started(os.getppid())))
    conn.commit()
    with pytest.raises(ResumeRefused, match=f"run {RUN} is still running in process {os.getppid()}"):
        Runner.resuming(RUN, store=crashed, agent=Agent(), planner=StaticPlanner(plan("a", "b")))
    conn.execute("UPDATE run_locks SET pid = ?", (2**22 + 12345,))  # no such process: stale
    conn.commit()
    conn.close()
    out = await Runner.resume(RUN, store=crashed, agent=Agent(), planner=StaticPlanner(plan("a", "b")))
    assert out.success


def _write_foreign_row(db: Path, sequence: int) -> None:
    """What another process writing the run (without its lock) leaves: a row at ``sequence``."""
    from goldfive.pb.goldfive.v1 import events_pb2 as pb

    ev = pb.Event(event_id=f"foreign-{sequence}", run_id=RUN, sequence=sequence, task_progress=pb.TaskProgress(task_id="x", detail="not ours"))
    conn = sqlite3.connect(db, timeout=10)
    with conn:
        conn.execute("INSERT INTO events VALUES (?, ?, ?, 'task_progress', 0, ?)", (RUN, sequence, ev.event_id, ev.SerializeToString()))
    conn.close()


@pytest.mark.parametrize("where", ["at_resume", "mid_run"])
async def test_a_run_whose_writes_are_refused_as_duplicates_stops_at_once(tmp_path: Path, executor: Any, where: str) -> None:
    from goldfive.errors import RecordingConflictError

    crashed = await run_until_held(tmp_path, executor, ("a", "b", "c", "d"), hold="b")
    last = sequences_of(crashed)[-1]
    foreign: list[int] = []

    class Racing(Agent):
        async def __call__(self, task: Task, session: Session) -> str:
            if where == "mid_run" and not foreign:  # another writer gets two sequences ahead of us
                foreign.append(session.last_sequence + 2)
                _write_foreign_row(crashed, foreign[0])
            return await super().__call__(task, session)

    agent, watcher = Racing(), InMemorySink()
    runner = Runner.resuming(RUN, store=crashed, agent=agent, planner=StaticPlanner(plan("a", "b", "c", "d")),
                             executor=type(executor)(), sinks=[watcher])  # fmt: skip
    if where == "at_resume":
        foreign.append(last + 1)  # the other process's RunResumed took the sequence ours needs
        _write_foreign_row(crashed, foreign[0])
    with pytest.raises(RecordingConflictError, match="another process is writing this run"):
        await runner.run()
    await runner.close()
    assert agent.done == ([] if where == "at_resume" else [("b", 2)])  # no task starts after the refusal
    stored = sequences_of(crashed)
    assert stored[-1] == foreign[0]  # nothing of ours after the other writer's row: the batch that met it was not stored
    if where == "at_resume":
        assert stored == list(range(last + 2))
    assert kinds(watcher.events)[-1] == "run_aborted"  # the watcher learns how it ended


async def test_resume_names_an_unknown_or_ambiguous_run(tmp_path: Path, executor: Any) -> None:
    crashed = await run_until_held(tmp_path, executor, ("a", "b"), hold="b")
    with pytest.raises(ResumeRefused, match="no run 'nope'"):
        Runner.resuming("nope", store=crashed, agent=Agent(), planner=StaticPlanner(plan("a", "b")))
    out = await Runner.resume(RUN[:8], store=crashed, agent=Agent(), planner=StaticPlanner(plan("a", "b")))
    assert out.success  # a unique prefix names the run


async def test_the_lock_row_lives_while_the_run_does_and_goes_when_it_ends(tmp_path: Path, executor: Any) -> None:
    crashed = await run_until_held(tmp_path, executor, ("a", "b"), hold="b")
    rows = sqlite3.connect(crashed).execute("SELECT run_id, pid FROM run_locks").fetchall()
    assert rows == [(RUN, os.getpid())]  # the crashed run held it (we are that process)
    db = tmp_path / "runs.sqlite"
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM run_locks").fetchone() == (0,)  # ended: dropped


async def test_a_recording_whose_name_holds_a_hash_or_a_question_mark_is_read_for_resume(tmp_path: Path) -> None:
    """The file is opened by its own name: ``#`` and ``?`` were read as a URI's fragment and
    query, so resume found "no such table" in another file."""
    from goldfive import events
    from goldfive.durable.store import open_log, read_run, resolve_run

    path = tmp_path / "run #2?.sqlite"
    s = Session(run_id=RUN)
    sink = SQLitePersistenceSink(path)
    await sink.emit(events.run_started(s, goal_summary="g"))
    await sink.close()
    log = open_log(path)
    assert resolve_run(log, RUN[:8]) == RUN
    assert [e.sequence for e in read_run(log, RUN)[0]] == [0]


async def test_a_run_scope_rule_made_during_the_run_still_approves_after_resume(tmp_path: Path, executor: Any) -> None:
    """ "Approve and don't ask again" (scope run) during a run, the process stops, the run is
    resumed: the rule is read back from the recording and approves the matching call without
    asking; a rule removed before the stop stays removed, and the rule keeps its id."""
    db = tmp_path / "runs.sqlite"
    entered, gate = asyncio.Event(), asyncio.Event()

    def deploy(env: str) -> dict[str, Any]:
        return {"deployed": env}

    def lint() -> str:
        return "clean"

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        if task.id == "b" and not gate.is_set():
            entered.set()
            await gate.wait()
        if task.id == "a":
            await tools["lint"]()
        deployed = await tools["deploy"](env="dev")
        if task.id == "b":
            await tools["lint"]()
        return str(deployed)

    def tools() -> list[UserTool]:
        return [UserTool(deploy, requires_approval=True), UserTool(lint, requires_approval=True)]

    channel, sink = ControlChannel(), InMemorySink()
    runner = Runner(agent=CallableAdapter(agent, tools=tools()), planner=StaticPlanner(plan("a", "b")), executor=executor,
                    run_id=RUN, sinks=[SQLitePersistenceSink(db, durability="normal"), sink], control=channel)  # fmt: skip
    task = asyncio.ensure_future(runner.run("ship"))
    decided = 0
    async for ev in sink.subscribe():
        if hasattr(ev, "WhichOneof") and ev.WhichOneof("payload") == "approval_requested":
            p = ev.approval_requested
            always = {"scope": "run", "match": {"env": {"kind": "exact", "value": "dev"}}} if p.tool_name == "deploy" else True
            ack = await channel.request(ControlMessage(ControlKind.APPROVE, payload={"target_id": p.target_id, "always": always}))
            assert ack.result == AckResult.SUCCESS, ack.detail
            decided += 1
            if decided == 2:  # a's lint and deploy; b holds before its own
                break
    await entered.wait()
    ack = await channel.request(ControlMessage("approval_rules", payload={"op": "remove", "rule_id": "R1"}))  # lint's
    assert ack.result == AckResult.SUCCESS, ack.detail
    crashed = crash_copy(db, tmp_path / "crashed.sqlite")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await runner.close()

    gate.set()
    channel2, sink2 = ControlChannel(), InMemorySink()
    resumed = Runner.resuming(RUN, store=crashed, agent=CallableAdapter(agent, tools=tools()), planner=StaticPlanner(plan("a", "b")),
                              executor=type(executor)(), control=channel2, sinks=[sink2])  # fmt: skip
    run2 = asyncio.ensure_future(resumed.run())
    asked_again: list[str] = []
    seen_resume = False
    async for ev in sink2.subscribe():
        kind = ev.WhichOneof("payload") if hasattr(ev, "WhichOneof") else ""
        seen_resume = seen_resume or kind == "run_resumed"
        if seen_resume and kind == "approval_requested":  # without the rule, b's deploy asks a person
            asked_again.append(ev.approval_requested.tool_name)
            await channel2.request(ControlMessage(ControlKind.APPROVE, payload={"target_id": ev.approval_requested.target_id}))
        if kind in ("run_completed", "run_aborted"):
            break
    out = await run2
    await resumed.close()
    assert asked_again == ["lint"] and out.success  # deploy's rule holds; lint's, removed, does not and "dev" in out.session.completed_results["b"]
    after = [e for e in sink2.events if e.sequence > next(e.sequence for e in sink2.events if e.WhichOneof("payload") == "run_resumed")]
    decided_by = [(e.approval_decided.tool_name, e.approval_decided.rule_id) for e in after if e.WhichOneof("payload") == "approval_decided"]
    assert decided_by == [("deploy", "R2"), ("lint", "")]  # the rule keeps its id; lint's R1 is gone: a person decided


async def _six_events(path: Path) -> list[Any]:
    from goldfive import events

    s = Session(run_id=RUN)
    emitted = [events.run_started(s, goal_summary="g")]
    emitted += [events.task_progress(s, "a", detail=f"step {i}") for i in range(5)]
    sink = SQLitePersistenceSink(path)
    for ev in emitted:
        await sink.emit(ev)
    await sink.close()
    return emitted


@pytest.mark.parametrize("spoil", ["undecodable", "another_events_payload"])
async def test_resume_reads_a_run_up_to_a_row_that_is_not_its_event(tmp_path: Path, spoil: str) -> None:
    """Resume reads its run through the recording's log: a row that does not decode, or that
    holds the payload of another sequence (main took that as the event at the row's place and
    read on), ends what is read there; it and every later row are counted as left out."""
    from goldfive.durable.store import open_log, read_run

    path = tmp_path / "runs.sqlite"
    emitted = await _six_events(path)
    conn = sqlite3.connect(path)
    with conn:
        bad = b"\xff\xff\xff\xff" if spoil == "undecodable" else conn.execute("SELECT payload FROM events WHERE sequence = 4").fetchone()[0]
        conn.execute("UPDATE events SET payload = ? WHERE sequence = 2", (bad,))
    conn.close()
    assert read_run(open_log(path), RUN) == (emitted[:2], 4)


async def test_resume_names_what_is_wrong_with_a_file_that_is_no_recording(tmp_path: Path) -> None:
    from goldfive.durable.store import open_log, resolve_run

    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(ResumeRefused, match="no recording at"):
        open_log(tmp_path / "missing.sqlite")
    with pytest.raises(ResumeRefused, match="no such table: events"):
        resolve_run(open_log(other), RUN)
