"""A Runner(hub=...) in this process against a real hub on 127.0.0.1 (port 0)."""

from __future__ import annotations

import asyncio

from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.runner import Runner
from goldfive.store.history import RunHistory
from goldfive.testing import until
from tests.remote_fixtures import Gate
from goldfive.types import Plan, Task, TaskEdge


def _runner(gate: Gate, address: str, run_id: str = "conn-1", **kw: object) -> Runner:
    tasks = [Task(f"t{i}", f"task {i}") for i in (1, 2, 3)]
    plan = Plan(tasks=tasks, edges=[TaskEdge("t1", "t2"), TaskEdge("t2", "t3")], id="p1", summary="gated")
    return Runner(agent=gate.agent, planner=StaticPlanner(plan), run_id=run_id, hub=address, **kw)  # type: ignore[arg-type]



async def test_a_connected_run_is_listed_paused_and_finishes_with_its_whole_history(tmp_path):
    host = RunHost(tmp_path / "hub.sqlite")
    server = await start_server(host, listen="127.0.0.1:0")
    gate = Gate()
    runner = _runner(gate, server.address)
    task = asyncio.create_task(runner.run("three things"))
    try:
        await asyncio.wait_for(gate.entered.wait(), 10)
        async with RemoteClient(server.address) as client:

            async def listed() -> bool:
                runs = await client.list_runs()
                return bool(runs) and runs[0].tasks_total == 3

            await until(listed)
            (run,) = host.runs()
            assert (run.origin, run.connection, run.pid) == ("connected", "connected", __import__("os").getpid())
            ack = await client.send_control("conn-1", ControlMessage(ControlKind.PAUSE))
            assert ack.result is AckResult.SUCCESS, ack
            ack = await client.send_control("conn-1", ControlMessage(ControlKind.RESUME))
            assert ack.result is AckResult.SUCCESS, ack
            gate.open()
            outcome = await asyncio.wait_for(task, 10)
            assert outcome.success
            await runner.close()
            snap = await client.get_run("conn-1")
            assert snap.summary.state == "COMPLETED"
            ack = await client.send_control("conn-1", ControlMessage(ControlKind.PAUSE))
            assert ack.result is AckResult.FAILURE
    finally:
        gate.open()
        await server.stop(None)
    seqs = [ev.sequence for ev in RunHistory(str(tmp_path / "hub.sqlite"), "conn-1").events(-1)]
    assert seqs == list(range(len(seqs))) and len(seqs) > 10
    kinds = [ev.WhichOneof("payload") for ev in RunHistory(str(tmp_path / "hub.sqlite"), "conn-1").events(-1)]
    assert "control_received" in kinds or "control_acked" in kinds, kinds


async def test_the_hubs_event_hooks_see_a_connected_runs_events(tmp_path):
    """What serve --notify-cmd hangs on (RunHost.event_hooks) hears connected runs too."""
    host = RunHost(tmp_path / "hub.sqlite")
    heard: list[str] = []
    host.event_hooks.append(lambda ev: heard.append(ev.WhichOneof("payload") or ""))
    server = await start_server(host, listen="127.0.0.1:0")
    gate = Gate()
    runner = _runner(gate, server.address, run_id="conn-hook")
    task = asyncio.create_task(runner.run("three things"))
    try:
        await asyncio.wait_for(gate.entered.wait(), 10)

        async def started() -> bool:
            return "task_started" in heard

        await until(started)
        gate.open()
        assert (await asyncio.wait_for(task, 10)).success
        await runner.close()
        assert heard[0] == "run_started" and heard[-1] == "run_completed"
    finally:
        gate.open()
        await server.stop(None)
