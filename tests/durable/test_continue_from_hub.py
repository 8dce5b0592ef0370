"""A runner whose process died continues its run from the hub's record: ``history_from_hub``
reads what the hub holds, ``Runner.continue_from_events`` goes on after it (nothing sent twice,
no completed task run again). Not Ray-specific: this is what a restarted Ray actor does."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from goldfive.adapters.callable import CallableAdapter
from goldfive.durable.from_hub import history_from_hub
from goldfive.durable.resume import ResumeRefused
from goldfive.errors import RemoteError
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RunHost, start_server
from goldfive.runner import Runner
from goldfive.types import Plan, Session, Task, TaskEdge, TaskStatus

ROOT = Path(__file__).resolve().parents[2]
IDS = ["a", "b", "c"]
RUN_ID = "run-continued-from-hub"

RUNNER = textwrap.dedent(
    """
    import asyncio, sys
    from goldfive.runner import Runner
    from goldfive.planners.static import StaticPlanner
    from goldfive.types import Plan, Task, TaskEdge

    async def agent(task, session):
        print(f"task {task.id}", flush=True)
        await asyncio.sleep(0.5 if task.id == "a" else 60)
        return f"{task.id} done"

    async def main(addr):
        plan = Plan([Task(t, t) for t in "abc"], [TaskEdge("a", "b"), TaskEdge("b", "c")], id="p")
        runner = Runner(agent=agent, planner=StaticPlanner(plan), run_id=%r, hub=addr)
        await runner.run("three steps")

    asyncio.run(main(sys.argv[1]))
    """
    % RUN_ID
)


def _plan() -> Plan:
    return Plan([Task(t, t) for t in IDS], [TaskEdge("a", "b"), TaskEdge("b", "c")], id="p")


async def _agent(task: Task, session: Session) -> str:
    return f"{task.id} done again"


async def test_a_run_whose_process_died_continues_from_the_hubs_record_without_redoing_completed_tasks(tmp_path: Path) -> None:
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    (tmp_path / "dying_runner.py").write_text(RUNNER)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(tmp_path / "dying_runner.py"), server.address,
        stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        while (await asyncio.wait_for(proc.stdout.readline(), 30)).strip() != b"task b":
            pass
        run = server.host.get(RUN_ID)
        assert run is not None
        for _ in range(200):  # the hub has stored b's start (events go up within milliseconds)
            if run.state.tasks["b"].status is TaskStatus.RUNNING:
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # the process dies mid-task, as on a lost node
        await proc.wait()

        history = await history_from_hub(server.address, RUN_ID)
        assert [ev.sequence for ev in history] == list(range(len(history)))
        runner = Runner(agent=CallableAdapter(_agent), planner=StaticPlanner(_plan()), run_id=RUN_ID, hub=server.address)
        link = runner.sinks[-1]
        runner.continue_from_events(RUN_ID, history, holder=link)
        try:
            outcome = await runner.run()
        finally:
            await runner.close()  # SinkError if the hub had refused anything (e.g. history sent again)
        assert outcome.success, outcome.reason
        assert link.sessions == 1 and not link.stopped

        events = run.events_after(-1)
        assert [ev.sequence for ev in events] == list(range(len(events)))
        assert events[len(history)].WhichOneof("payload") == "run_resumed"
        assert list(events[len(history)].run_resumed.interrupted_task_ids) == ["b"]
        started = Counter(ev.task_started.task_id for ev in events if ev.WhichOneof("payload") == "task_started")
        completed = Counter(ev.task_completed.task_id for ev in events if ev.WhichOneof("payload") == "task_completed")
        assert started == Counter({"a": 1, "b": 2, "c": 1})
        assert completed == Counter({"a": 1, "b": 1, "c": 1})
        assert outcome.session.completed_results["a"] == "a done"  # the first process's result, kept
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await server.stop(None)


async def test_history_from_hub_of_a_run_the_hub_does_not_know_is_not_found(tmp_path: Path) -> None:
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    try:
        with pytest.raises(RemoteError) as info:
            await history_from_hub(server.address, "nope")
        assert info.value.code == "NOT_FOUND"
    finally:
        await server.stop(None)


async def test_continue_from_events_refuses_an_ended_run_and_a_history_with_a_gap(tmp_path: Path) -> None:
    from goldfive.sinks.memory import InMemorySink

    sink = InMemorySink()
    done = Runner(agent=_agent, planner=StaticPlanner(_plan()), sinks=[sink], run_id="r1")
    await done.run("go")
    await done.close()
    fresh = Runner(agent=_agent, planner=StaticPlanner(_plan()))
    with pytest.raises(ResumeRefused, match="completed"):
        fresh.continue_from_events("r1", sink.events)
    with pytest.raises(ResumeRefused, match="not gap-free from 0: event 3"):
        fresh.continue_from_events("r1", sink.events[:3] + sink.events[4:])


PLANNING_RUNNER = textwrap.dedent(
    """
    import asyncio, sys
    from goldfive.runner import Runner

    class SlowPlanner:
        async def generate(self, *, goals, available_agents, context=None):
            print("planning", flush=True)
            await asyncio.sleep(60)

        async def refine(self, *, plan, drift, goals):
            return plan

    async def agent(task, session):
        return "never"

    async def main(addr):
        runner = Runner(agent=agent, planner=SlowPlanner(), run_id=%r, hub=addr)
        await runner.run("three steps")

    asyncio.run(main(sys.argv[1]))
    """
    % (RUN_ID + "-planning")
)


async def test_a_run_whose_process_died_while_planning_is_planned_again_after_the_hubs_last_event(tmp_path: Path) -> None:
    run_id = RUN_ID + "-planning"
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    (tmp_path / "planning_runner.py").write_text(PLANNING_RUNNER)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(tmp_path / "planning_runner.py"), server.address,
        stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert (await asyncio.wait_for(proc.stdout.readline(), 30)).strip() == b"planning"
        for _ in range(200):  # the hub holds run_started and goal_derived
            run = server.host.get(run_id)
            if run is not None and run.state.last_sequence >= 1:
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        await proc.wait()

        history = await history_from_hub(server.address, run_id)
        assert [ev.WhichOneof("payload") for ev in history] == ["run_started", "goal_derived"]
        runner = Runner(agent=CallableAdapter(_agent), planner=StaticPlanner(_plan()), run_id=run_id, hub=server.address)
        runner.continue_from_events(run_id, history, holder=runner.sinks[-1])
        try:
            outcome = await runner.run()
        finally:
            await runner.close()
        assert outcome.success, outcome.reason
        run = server.host.get(run_id)
        assert run is not None
        events = run.events_after(-1)
        kinds = [ev.WhichOneof("payload") for ev in events]
        assert [ev.sequence for ev in events] == list(range(len(events)))
        assert kinds[:4] == ["run_started", "goal_derived", "run_resumed", "goal_derived"]
        assert kinds.count("run_started") == 1 and kinds.count("plan_submitted") == 1
        assert kinds.count("task_completed") == 3 and kinds[-1] == "run_completed"
        assert events[2].run_resumed.resumed_after_sequence == 1
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await server.stop(None)
