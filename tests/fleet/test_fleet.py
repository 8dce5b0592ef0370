"""Several hubs on one PostgreSQL database (goldfive.hub.fleet): real `goldfive serve --db
postgresql://...` processes on 127.0.0.1, a real server (tests/pg_server.py), runs in their own
processes (tests/hub/runner_proc.py) given both hubs' addresses."""

from __future__ import annotations

import asyncio
import collections
import signal

import psycopg
import pytest

from goldfive.errors import RemoteError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote import RemoteClient
from tests.hub.conftest import ctl, free_port, read_until, spawn, until



async def start_hub(dsn: str, reap: list, *extra: str) -> tuple[asyncio.subprocess.Process, str]:
    port = free_port()
    proc = await spawn("goldfive.cli", "serve", "--db", dsn, "--listen", f"127.0.0.1:{port}", "--interrupt-after", "3", *extra)
    reap.append(proc)
    addr = f"127.0.0.1:{port}"
    async with RemoteClient(addr) as client:

        async def up() -> bool:
            try:
                await client.list_runs(timeout=1.0)
                return True
            except RemoteError:
                if proc.returncode is not None:
                    err = (await proc.stderr.read()).decode() if proc.stderr else ""
                    raise AssertionError(f"the hub exited: {err[-2000:]}") from None
                return False

        await until(up, timeout=30, what=f"hub {addr} answering")
    return proc, addr


def stored(dsn: str, run_id: str) -> list[tuple[int, str]]:
    """Every stored row of the run (sequence, kind), straight from the table."""
    with psycopg.connect(dsn) as conn:
        return list(conn.execute("SELECT sequence, kind FROM goldfive_events WHERE run_id = %s ORDER BY sequence", (run_id,)))


def stored_events(dsn: str, run_id: str) -> list[Event]:
    out = []
    with psycopg.connect(dsn) as conn:
        for (payload,) in conn.execute("SELECT payload FROM goldfive_events WHERE run_id = %s ORDER BY sequence", (run_id,)):
            ev = Event()
            ev.ParseFromString(bytes(payload))
            out.append(ev)
    return out


async def first_approval(client: RemoteClient, run_id: str):  # type: ignore[no-untyped-def]
    """The run's one pending approval, once it asks (the run may not be registered yet)."""

    async def asking() -> bool:
        try:
            return bool((await client.get_run(run_id)).pending_approvals)
        except RemoteError:
            return False

    await until(asking, what=f"run {run_id}'s approval")
    (pending,) = (await client.get_run(run_id)).pending_approvals
    return pending


async def summary_of(client: RemoteClient, run_id: str):  # type: ignore[no-untyped-def]
    return next((r for r in await client.list_runs() if r.run_id == run_id), None)


async def test_a_run_connected_to_hub_a_is_listed_watched_and_steered_through_hub_b(pg_dsn, reap):
    _, a = await start_hub(pg_dsn, reap)
    _, b = await start_hub(pg_dsn, reap)
    runner = await spawn("tests.hub.runner_proc", f"{a},{b}", "fleet-run", "4", "0.4")
    reap.append(runner)
    async with RemoteClient(b) as client:

        async def on_b() -> bool:
            r = await summary_of(client, "fleet-run")
            return r is not None and r.tasks_total == 4 and r.hub == a and r.connection == "connected"

        await until(on_b, what="hub B listing the run connected to hub A")
        r = await summary_of(client, "fleet-run")
        assert (r.origin, r.pid) == ("followed", runner.pid)  # followed from hub A, where its runner is connected

        code, out, err = await ctl(b, "pause", "fleet-run")
        assert code == 0, (out, err)  # exit 0: the ack is SUCCESS

        async def paused() -> bool:
            return (await client.get_run("fleet-run")).paused

        await until(paused, what="B showing the pause it routed to A")
        code, out, err = await ctl(b, "steer", "fleet-run", "keep it short")
        assert code == 0, err
        code, out, err = await ctl(b, "resume", "fleet-run")
        assert code == 0, err

        async def asking() -> bool:
            return bool((await client.get_run("fleet-run")).pending_approvals)

        await until(asking, what="B showing t2's approval")
        (pending,) = (await client.get_run("fleet-run")).pending_approvals
        code, out, err = await ctl(b, "approve", "fleet-run", pending.target_id)
        assert code == 0, err
        assert await read_until(runner, "outcome", timeout=60) == "outcome True"

        async def completed() -> bool:
            r = await summary_of(client, "fleet-run")
            return r is not None and r.state == "COMPLETED"

        await until(completed, what="B showing the run completed")
        # B streams the whole history: what A wrote, read back from the database, gap-free.
        seen = [ev.sequence async for ev in _history(client, "fleet-run")]
        assert seen == list(range(len(seen))) and len(seen) > 15
    rows = stored(pg_dsn, "fleet-run")
    assert [s for s, _ in rows] == list(range(len(rows)))
    acks = [ev.control_acked for ev in stored_events(pg_dsn, "fleet-run") if ev.WhichOneof("payload") == "control_acked"]
    assert len(acks) >= 4  # pause, steer, resume, approve: each ack is in the run's own history
    with psycopg.connect(pg_dsn) as conn:
        routed = conn.execute("SELECT count(*), count(ack) FROM goldfive_controls WHERE run_id = 'fleet-run'").fetchone()
    assert routed == (4, 4)  # pause, steer, resume, approve: each went B -> A and its ack came back


async def _history(client: RemoteClient, run_id: str):  # type: ignore[no-untyped-def]
    async for batch in client.subscribe_batches(run_id, -1):
        for ev in batch:
            yield ev


async def test_hub_a_killed_its_run_moves_to_hub_b_with_a_gap_free_history(pg_dsn, reap):
    hub_a, a = await start_hub(pg_dsn, reap)
    _, b = await start_hub(pg_dsn, reap)
    # 24 tasks of 0.4 s: after t7, about 7 s are left for B to take the run and for two
    # `ctl` processes to start (several seconds each on a loaded machine) before it ends.
    runner = await spawn("tests.hub.runner_proc", f"{a},{b}", "moving-run", "24", "0.4")
    reap.append(runner)
    async with RemoteClient(a) as client:
        pending = await first_approval(client, "moving-run")
    code, out, err = await ctl(a, "approve", "moving-run", pending.target_id)
    assert code == 0, err
    await read_until(runner, "task t4")
    hub_a.send_signal(signal.SIGKILL)
    await hub_a.wait()
    await read_until(runner, "task t7")  # the run carries on while it moves
    async with RemoteClient(b) as client:

        async def on_b() -> bool:
            r = await summary_of(client, "moving-run")
            return r is not None and r.connection == "connected" and r.hub == ""  # connected to B itself

        await until(on_b, timeout=30, what="the runner connected to hub B")
        code, out, err = await ctl(b, "pause", "moving-run")
        assert code == 0, (out, err)  # exit 0: the ack is SUCCESS
        code, out, err = await ctl(b, "resume", "moving-run")
        assert code == 0, err
        assert await read_until(runner, "outcome", timeout=60) == "outcome True"
        assert await runner.wait() == 0

        async def completed() -> bool:
            r = await summary_of(client, "moving-run")
            return r is not None and r.state == "COMPLETED"

        await until(completed, what="B showing the run completed")
        seen = [ev.sequence async for ev in _history(client, "moving-run")]
    rows = stored(pg_dsn, "moving-run")
    assert [s for s, _ in rows] == list(range(len(rows))) == seen, "gap-free, each sequence once"
    assert rows[-1][1] == "run_completed"
    starts = collections.Counter(ev.task_started.task_id for ev in stored_events(pg_dsn, "moving-run") if ev.WhichOneof("payload") == "task_started")
    assert set(starts) == {f"t{i}" for i in range(1, 25)} and set(starts.values()) == {1}


async def test_a_database_that_cannot_be_reached_is_one_line_and_exit_2(tmp_path):
    port = free_port()
    proc = await spawn("goldfive.cli", "serve", "--db", f"postgresql://goldfive:secret@127.0.0.1:{port}/nowhere", "--listen", "127.0.0.1:0")
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    text = err.decode().strip()
    assert proc.returncode == 2, text
    assert len(text.splitlines()) == 1 and text.startswith("goldfive serve: error: cannot reach PostgreSQL at"), text
    assert "secret" not in text and "***" in text


async def test_the_database_lost_while_serving_the_hub_goes_on_degraded_and_writes_everything_when_it_is_back(tmp_path, reap):
    from tests.pg_server import start_postgres

    server = start_postgres()  # its own server: this test stops it
    try:
        _, a = await start_hub(server.dsn, reap)
        runner = await spawn("tests.hub.runner_proc", a, "degraded-run", "12", "0.25")
        reap.append(runner)
        await read_until(runner, "task t1")
        async with RemoteClient(a) as client:
            pending = await first_approval(client, "degraded-run")
            await asyncio.to_thread(server.stop)
            code, out, err = await ctl(a, "approve", "degraded-run", pending.target_id)
            assert code == 0, err  # controls still reach the run: the hub serves it from memory

            async def degraded() -> bool:
                await client.list_runs()
                return client.hub_warning.startswith("database unreachable")

            await until(degraded, timeout=30, what="the hub saying it is degraded")
            code, out, err = await ctl(a, "runs")
            assert code == 0 and "hub degraded: database unreachable" in err, err
            await read_until(runner, "task t5")

            async def moving() -> bool:  # live events are still served
                return (await client.get_run("degraded-run")).summary.tasks_completed >= 4

            await until(moving, what="the run's progress served from memory")
            await asyncio.to_thread(server.start)

            async def healthy() -> bool:
                await client.list_runs()
                return client.hub_warning == ""

            await until(healthy, timeout=60, what="the warning gone once the database is back")
            assert await read_until(runner, "outcome", timeout=60) == "outcome True"
            assert await runner.wait() == 0
        rows = stored(server.dsn, "degraded-run")
        assert [s for s, _ in rows] == list(range(len(rows))) and rows[-1][1] == "run_completed"
    finally:
        server.destroy()


async def test_runs_started_in_a_hub_on_postgresql_are_served_and_steered_by_every_hub(pg_dsn, reap):
    _, a = await start_hub(pg_dsn, reap)
    _, b = await start_hub(pg_dsn, reap)
    code, out, err = await ctl(a, "start", "demo", "--speed", "0.3")
    assert code == 0, err
    run_id = out.strip()
    async with RemoteClient(b) as client:

        async def on_b() -> bool:
            r = await summary_of(client, run_id)
            return r is not None and r.tasks_total > 0 and r.hub == a

        await until(on_b, what="hub B listing the run hosted by hub A")
        code, out, err = await ctl(b, "pause", run_id)
        assert code == 0, (out, err)

        async def paused() -> bool:
            return (await client.get_run(run_id)).paused

        await until(paused, what="the pause routed to A, seen on B")
        code, out, err = await ctl(b, "cancel", run_id)
        assert code == 0, (out, err)

        async def ended() -> bool:
            r = await summary_of(client, run_id)
            return r is not None and r.state in ("ABORTED", "CANCELLED", "COMPLETED")

        await until(ended, what="the run ended on B's list")
    rows = stored(pg_dsn, run_id)
    assert [s for s, _ in rows] == list(range(len(rows))) and rows[-1][1] in ("run_aborted", "run_completed")


async def test_a_control_for_a_run_whose_hub_died_is_refused_at_once_not_left_waiting(pg_dsn, reap):
    hub_a, a = await start_hub(pg_dsn, reap)
    _, b = await start_hub(pg_dsn, reap)
    runner = await spawn("tests.hub.runner_proc", a, "orphan-run", "40", "0.5")  # knows only hub A
    reap.append(runner)
    async with RemoteClient(b) as client:

        async def on_b() -> bool:
            r = await summary_of(client, "orphan-run")
            return r is not None and r.hub == a

        await until(on_b, what="B listing the run on A")
        hub_a.send_signal(signal.SIGKILL)
        await hub_a.wait()

        async def gone() -> bool:
            r = await summary_of(client, "orphan-run")
            return r is not None and r.connection == "disconnected" and r.hub == ""

        await until(gone, timeout=20, what="B showing the run disconnected once A's heartbeat stopped")
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        code, out, err = await ctl(b, "pause", "orphan-run")
        assert code == 1 and "not active" in out + err, (out, err)
        assert loop.time() - t0 < 10  # refused, not waiting for an ack that cannot come


async def test_a_run_hosted_by_a_hub_that_died_goes_on_in_another_hub_with_no_completed_task_redone(pg_dsn, reap):
    hub_a, a = await start_hub(pg_dsn, reap)
    _, b = await start_hub(pg_dsn, reap)
    code, out, err = await ctl(a, "start", "demo", "--speed", "3")
    assert code == 0, err
    run_id = out.strip()
    async with RemoteClient(b) as client:

        async def one_done() -> bool:
            r = await summary_of(client, run_id)
            return r is not None and r.tasks_completed >= 1 and r.hub == a

        await until(one_done, timeout=60, what="a first task completed on hub A")
        hub_a.send_signal(signal.SIGKILL)
        await hub_a.wait()

        async def here() -> bool:
            r = await summary_of(client, run_id)
            return r is not None and r.origin == "hosted"

        await until(here, timeout=30, what="hub B hosting the run once A was gone for --interrupt-after (3 s)")
        for _ in range(600):  # the demo asks approvals: answer them until it completes
            snap = await client.get_run(run_id)
            if snap.summary.state == "COMPLETED":
                break
            for pending in snap.pending_approvals:
                await ctl(b, "approve", run_id, pending.target_id)
            await asyncio.sleep(0.2)
        assert (await client.get_run(run_id)).summary.state == "COMPLETED"
    evs = stored_events(pg_dsn, run_id)
    assert [e.sequence for e in evs] == list(range(len(evs)))
    kinds = [e.WhichOneof("payload") for e in evs]
    assert kinds.count("run_resumed") == 1 and kinds[-1] == "run_completed"
    done = collections.Counter(e.task_completed.task_id for e in evs if e.WhichOneof("payload") == "task_completed")
    assert done and set(done.values()) == {1}, done  # no completed task ran again
