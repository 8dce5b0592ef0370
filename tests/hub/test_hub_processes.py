"""A real hub (127.0.0.1, port 0) and runs in separate processes using ``Runner(hub=...)``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.errors import RemoteError
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.store.history import RunHistory
from tests.hub.conftest import ctl, free_port, read_until, spawn, until


def _stored(db: Path, run_id: str) -> list[int]:
    """Every stored row's sequence, duplicates included (straight from the table)."""
    with sqlite3.connect(db) as conn:
        return [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))]


async def test_a_run_in_another_process_is_paused_steered_and_approved_from_ctl_and_finishes(tmp_path, reap):
    db = tmp_path / "hub.sqlite"
    server = await start_server(RunHost(db), listen="127.0.0.1:0")
    addr = server.address
    try:
        runner = await spawn("tests.hub.runner_proc", addr, "proc-run", "3", "0.3")
        reap.append(runner)
        async with RemoteClient(addr) as client:

            async def listed() -> bool:
                return any(r.run_id == "proc-run" and r.tasks_total == 3 for r in await client.list_runs())

            await until(listed, what="the connected run listed with its plan")
            (run,) = server.host.runs()
            assert (run.origin, run.connection, run.pid) == ("connected", "connected", runner.pid)

            code, out, err = await ctl(addr, "pause", "proc-run")
            assert code == 0, err
            assert (await client.get_run("proc-run")).paused
            code, out, err = await ctl(addr, "steer", "proc-run", "keep it short")
            assert code == 0, err
            code, out, err = await ctl(addr, "resume", "proc-run")
            assert code == 0, err

            async def asking() -> bool:
                return bool((await client.get_run("proc-run")).pending_approvals)

            await until(asking, what="the approval of t2's tool call")
            (pending,) = (await client.get_run("proc-run")).pending_approvals
            assert pending.tool_name == "publish"
            code, out, err = await ctl(addr, "approve", "proc-run", pending.target_id)
            assert code == 0, err
            assert await read_until(runner, "outcome") == "outcome True"
            assert await runner.wait() == 0

            async def completed() -> bool:
                return (await client.get_run("proc-run")).summary.state == "COMPLETED"

            await until(completed, what="the run completed on the hub")
    finally:
        await server.stop(None)
    seqs = _stored(db, "proc-run")
    assert seqs == list(range(len(seqs))) and len(seqs) > 15
    acked = [ev.control_acked for ev in RunHistory(str(db), "proc-run").events(-1) if ev.WhichOneof("payload") == "control_acked"]
    assert len(acked) >= 4  # pause, steer, resume, approve: each ack is in the run's own history


async def test_the_hub_killed_and_restarted_mid_run_ends_with_the_whole_history_once(tmp_path, reap):
    db, port = tmp_path / "hub.sqlite", free_port()
    addr = f"127.0.0.1:{port}"
    hub = await spawn("tests.hub.hub_proc", str(db), str(port))
    reap.append(hub)
    await read_until(hub, "listening")
    runner = await spawn("tests.hub.runner_proc", addr, "restart-run", "16", "0.1")
    reap.append(runner)
    await read_until(runner, "task t1")
    # t2 waits for an approval: approve it through the first hub, then kill that hub.
    async with RemoteClient(addr) as client:

        async def asking() -> bool:
            try:
                return bool((await client.get_run("restart-run")).pending_approvals)
            except RemoteError:  # not registered yet: the runner connects in the background
                return False

        await until(asking, what="the approval")
        (pending,) = (await client.get_run("restart-run")).pending_approvals
        ack = await client.send_control("restart-run", ControlMessage(ControlKind.APPROVE, payload={"target_id": pending.target_id}))
        assert ack.result is AckResult.SUCCESS, ack
    await read_until(runner, "task t4")
    hub.kill()
    await hub.wait()
    await read_until(runner, "task t8")  # the run carries on without its hub
    hub = await spawn("tests.hub.hub_proc", str(db), str(port))
    reap.append(hub)
    await read_until(hub, "listening")
    assert await read_until(runner, "outcome", timeout=30) == "outcome True"
    assert await runner.wait() == 0
    async with RemoteClient(addr) as client:
        snap = await client.get_run("restart-run")
        assert snap.summary.state == "COMPLETED"
    hub.terminate()
    await hub.wait()
    seqs = _stored(db, "restart-run")
    assert seqs == list(range(len(seqs))), "gap-free, no duplicate"
    last = list(RunHistory(str(db), "restart-run").events(-1))[-1]
    assert last.WhichOneof("payload") == "run_completed"


async def test_a_killed_runner_shows_disconnected_at_once_then_interrupted(tmp_path, reap):
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", interrupt_after=1.0)
    try:
        runner = await spawn("tests.hub.runner_proc", server.address, "doomed", "3", "30")
        reap.append(runner)
        await read_until(runner, "task t1")
        async with RemoteClient(server.address) as client:

            async def connection(want: str) -> bool:
                runs = await client.list_runs()
                return bool(runs) and server.host.runs()[0].connection == want

            async def running() -> bool:  # the hub has the run's start, not only its runner's hello
                runs = await client.list_runs()
                return bool(runs) and runs[0].state == "RUNNING" and await connection("connected")

            await until(running, what="connected and running")
            runner.kill()
            await runner.wait()
            await until(lambda: connection("disconnected"), timeout=0.9, what="disconnected at once")
            (summary,) = await client.list_runs()
            assert summary.state == "RUNNING"
            await until(lambda: connection("interrupted"), timeout=5, what="interrupted after the timeout")
            (summary,) = await client.list_runs()
            assert summary.state == "INTERRUPTED"
    finally:
        await server.stop(None)
