"""``Runner(hub=..., hub_shared=True)``: the runs of one process share one Hub.ConnectShared
stream (the process's mux, taken by the first link and closed by the last), and each run is
stored and steered as on a stream of its own."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from goldfive.control import ControlKind, ControlMessage
from goldfive.link import mux as hub_mux
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.runner import Runner
from goldfive.types import Plan, Task


async def test_runs_with_hub_shared_use_one_stream_and_finish_whole(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite"
    server = await start_server(RunHost(db), listen="127.0.0.1:0")
    gate = asyncio.Event()

    async def agent(task, session):  # type: ignore[no-untyped-def]
        if task.id == "t2":
            await gate.wait()
        return f"{task.id} done"

    plan = Plan([Task("t1", "one"), Task("t2", "two"), Task("t3", "three")], id="p")
    runners = [
        Runner(agent=agent, planner=StaticPlanner(plan), run_id=f"shared-{i}", hub=server.address)  # hub_shared: the default
        for i in range(3)
    ]
    try:
        running = [asyncio.create_task(r.run(f"run {i}")) for i, r in enumerate(runners)]
        async with RemoteClient(server.address) as client:
            for _ in range(200):
                if {s.run_id for s in await client.list_runs() if s.tasks_total == 3} >= {"shared-0", "shared-1", "shared-2"}:
                    break
                await asyncio.sleep(0.05)
            links = [r.sinks[-1] for r in runners]
            muxes = {id(link._mux) for link in links}
            assert len(muxes) == 1 and links[0]._mux is not None and links[0]._mux.streams == 1  # one stream for all three
            ack = await client.send_control("shared-1", ControlMessage(ControlKind.STEER, payload={"note": "keep it short"}))
            assert ack.result.name == "SUCCESS", ack
        gate.set()
        outcomes = await asyncio.gather(*running)
        assert all(o.success for o in outcomes)
    finally:
        gate.set()
        for r in runners:
            await r.close()
        await server.stop(None)
    assert not hub_mux._SHARED  # the last link closed the mux
    with sqlite3.connect(db) as conn:
        for i in range(3):
            seqs = [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (f"shared-{i}",))]
            assert seqs == list(range(len(seqs))) and len(seqs) > 8


async def test_a_hub_without_the_shared_stream_gets_a_stream_per_run(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A hub older than Hub.ConnectShared answers UNIMPLEMENTED: each run then connects with a
    Connect stream of its own, and nothing is lost."""
    from goldfive.hub.service import HubService
    from goldfive.pb.goldfive.v1 import service_pb2_grpc

    monkeypatch.setattr(HubService, "ConnectShared", service_pb2_grpc.HubServicer.ConnectShared)  # what an old hub answers
    db = tmp_path / "old-hub.sqlite"
    server = await start_server(RunHost(db), listen="127.0.0.1:0")

    async def agent(task, session):  # type: ignore[no-untyped-def]
        return f"{task.id} done"

    plan = Plan([Task("t1", "one"), Task("t2", "two")], id="p")
    runners = [Runner(agent=agent, planner=StaticPlanner(plan), run_id=f"old-{i}", hub=server.address) for i in range(2)]
    try:
        outcomes = await asyncio.gather(*(r.run(f"run {i}") for i, r in enumerate(runners)))
        assert all(o.success for o in outcomes)
        links = [r.sinks[-1] for r in runners]
        assert all(link._mux is None and not link.stopped for link in links)  # left the shared stream, not stopped
    finally:
        for r in runners:
            await r.close()
        await server.stop(None)
    assert not hub_mux._SHARED
    with sqlite3.connect(db) as conn:
        for i in range(2):
            seqs = [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (f"old-{i}",))]
            assert seqs == list(range(len(seqs))) and len(seqs) > 6
