"""The runner's side: the bounded buffer that spills to disk, and a run that starts before
its hub is up."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from goldfive import events
from goldfive.control import ControlChannel
from goldfive.link import EventBuffer, HubLink
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RunHost, start_server
from goldfive.runner import Runner
from goldfive.types import Plan, Session, Task, TaskEdge
from tests.hub.conftest import free_port, until


def _events(n: int) -> list:  # type: ignore[type-arg]
    session = Session(run_id="buf")
    return [events.task_progress(session, "t1", detail=f"step {i}") for i in range(n)]


def test_past_its_memory_bound_the_buffer_keeps_the_oldest_on_disk_and_loses_none(tmp_path: Path) -> None:
    buf = EventBuffer(max_memory=3, spill_dir=tmp_path)
    for ev in _events(10):
        buf.append(ev)
    assert len(buf) == 10 and buf.spill_path is not None and buf.spill_path.exists()
    assert [e.sequence for e in buf.after(-1, 100)] == list(range(10))
    assert [e.sequence for e in buf.after(5, 2)] == [6, 7]
    buf.forget_through(4)
    assert len(buf) == 5 and buf.first_sequence == 5
    assert [e.sequence for e in buf.after(-1, 100)] == [5, 6, 7, 8, 9]
    spill = buf.spill_path
    buf.forget_through(9)
    assert len(buf) == 0 and buf.spill_path is None and not spill.exists()


async def test_a_run_that_starts_before_its_hub_delivers_everything_once_the_hub_is_up(tmp_path: Path) -> None:
    port = free_port()
    addr = f"127.0.0.1:{port}"
    released = asyncio.Event()

    async def agent(task: Task, session: object) -> str:
        await released.wait()
        return "done"

    ids = [f"t{i}" for i in range(1, 6)]
    plan = Plan([Task(t, t) for t in ids], [TaskEdge(a, b) for a, b in zip(ids, ids[1:])], id="p")
    runner = Runner(agent=agent, planner=StaticPlanner(plan), run_id="early", hub=addr)
    link = runner.sinks[-1]
    assert isinstance(link, HubLink)
    link.buffer = EventBuffer(max_memory=4, spill_dir=tmp_path)  # a small bound: this run spills
    run = asyncio.create_task(runner.run("five things"))
    released.set()

    async def ended_unheard() -> bool:  # the run reached its end with no hub to hear it
        return any(e.WhichOneof("payload") == "run_completed" for e in link.buffer.after(-1, 1000))

    await until(ended_unheard, what="the run going on without a hub")
    assert link.buffer.spilled_total > 0 and link.confirmed == -1 and not run.done()  # close waits for the hub
    db = tmp_path / "hub.sqlite"
    server = await start_server(RunHost(db), listen=addr)
    try:
        outcome = await asyncio.wait_for(run, 30)
        assert outcome.success
        await runner.close()
        assert link.confirmed == link.buffer.last_sequence and len(link.buffer) == 0
        assert link.buffer.spill_path is None and not list(tmp_path.glob("*.spill"))
    finally:
        await server.stop(None)
    with sqlite3.connect(db) as conn:
        seqs = [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = 'early' ORDER BY sequence")]
    assert seqs == list(range(len(seqs))) and len(seqs) > 12


async def _quick_run(addr: str, run_id: str, **kw: object) -> tuple[Runner, HubLink]:
    async def agent(task: Task, session: object) -> str:
        return "done"

    plan = Plan([Task("t1", "t1")], [], id="p")
    runner = Runner(agent=agent, planner=StaticPlanner(plan), run_id=run_id, hub=addr, **kw)  # type: ignore[arg-type]
    link = runner.sinks[-1]
    assert isinstance(link, HubLink)
    link.close_timeout = 5
    return runner, link


async def test_over_tls_with_a_token_the_run_is_delivered_and_a_wrong_token_is_said_not_dropped(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    from tests.remote_fixtures import self_signed_cert

    cert, key = self_signed_cert(tmp_path)
    token = "t" * 24
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", token=token, tls_cert=cert, tls_key=key)
    addr = f"localhost:{server.port}"
    try:
        runner, link = await _quick_run(addr, "secure", hub_token=token, hub_tls_ca=str(cert))
        assert (await runner.run("one thing")).success
        await runner.close()
        assert link.confirmed == link.buffer.last_sequence and not link.stopped
        assert server.host.get("secure") is not None and server.host.get("secure").state.finished  # type: ignore[union-attr]

        runner, link = await _quick_run(addr, "refused", hub_token="w" * 24, hub_tls_ca=str(cert))
        assert (await runner.run("one thing")).success  # the run itself is not affected
        await runner.close()
        assert "UNAUTHENTICATED" in link.stopped and len(link.buffer) > 0
        assert any("not confirmed by the hub" in r.getMessage() and "UNAUTHENTICATED" in r.getMessage() for r in caplog.records)
        assert server.host.get("refused") is None
    finally:
        await server.stop(None)


async def test_a_hub_that_lost_confirmed_events_is_named_not_fed_a_gap(tmp_path: Path) -> None:
    port = free_port()
    addr = f"127.0.0.1:{port}"
    first = await start_server(RunHost(tmp_path / "a.sqlite"), listen=addr)
    gate = asyncio.Event()

    async def agent(task: Task, session: object) -> str:
        await gate.wait()
        return "done"

    runner = Runner(agent=agent, planner=StaticPlanner(Plan([Task("t1", "t1")], [], id="p")), run_id="lost", hub=addr)
    link = runner.sinks[-1]
    assert isinstance(link, HubLink)
    link.close_timeout = 5
    run = asyncio.create_task(runner.run("one thing"))

    async def confirmed() -> bool:
        return link.confirmed >= 3

    await until(confirmed, what="the first hub confirmed the start")
    await first.stop(None)
    second = await start_server(RunHost(tmp_path / "b.sqlite"), listen=addr)  # another database
    try:

        async def said() -> bool:
            return bool(link.stopped)

        await until(said, what="the link names the loss")
        assert "database replaced" in link.stopped
        kept = second.host.get("lost")  # no gap stored (a run that stored nothing is forgotten when its runner leaves)
        assert kept is None or kept.state.last_sequence == -1
        gate.set()
        assert (await asyncio.wait_for(run, 10)).success  # the run itself goes on
        await runner.close()
    finally:
        gate.set()
        await second.stop(None)


def test_the_hub_token_falls_back_to_goldfive_token(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GOLDFIVE_TOKEN", "from-the-environment-123")
    runner = Runner(agent=lambda task, session: None, hub="127.0.0.1:1")  # type: ignore[arg-type, return-value]
    link = runner.sinks[-1]
    assert isinstance(link, HubLink) and runner.control is link.control
    assert dict(link._metadata)["authorization"] == "Bearer from-the-environment-123"
    given = Runner(agent=lambda task, session: None, hub="127.0.0.1:1", hub_token="given-token-4567890")  # type: ignore[arg-type, return-value]
    assert dict(given.sinks[-1]._metadata)["authorization"] == "Bearer given-token-4567890"


async def test_events_to_send_on_a_stream_the_hub_already_ended_end_that_session_not_the_link(tmp_path: Path) -> None:
    # A killed hub: the call's status arrives (done() is true) a few loop steps before the
    # reader raises it; the writer waking in between must see a broken session (_Ended, so the
    # link reconnects), not grpc's InvalidStateError, which ended the link's task for good.
    from goldfive.link.runner import _Ended

    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    try:
        link = HubLink(server.address, ControlChannel())
        for ev in _events(3):
            link.buffer.append(ev)
        call = link._open().Connect()
        await call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id="buf", resume_after=-1)))
        assert (await call.read()).WhichOneof("body") == "welcome"
        for part in server.extra:
            part.end_streams()
        await asyncio.wait_for(call.code(), 5)  # the call is over; nobody read its end yet
        assert call.done()
        with pytest.raises(_Ended, match="ended while sending"):
            await link.out.write(call, -1)
        assert link._channel is not None
        await link._channel.close()
    finally:
        await server.stop(None)


async def test_an_unexpected_failure_in_a_session_reconnects_and_loses_nothing(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    try:
        runner, link = await _quick_run(server.address, "hiccup")
        real_after, failed = link.buffer.after_entries, []

        def after_once_broken(sequence: int, limit: int) -> tuple[list[int], list[bytes]]:
            if not failed:
                failed.append(sequence)
                raise RuntimeError("a bug in the first session")
            return real_after(sequence, limit)

        link.buffer.after_entries = after_once_broken  # type: ignore[method-assign]
        assert (await runner.run("one thing")).success
        await runner.close()  # before: the task died and close waited for its timeout, then raised
        assert failed and link.sessions == 2 and link.confirmed == link.buffer.last_sequence and not link.stopped
        assert link.errors == ["RuntimeError: a bug in the first session"]
        assert any("failed unexpectedly" in r.getMessage() for r in caplog.records)
        assert server.host.get("hiccup").state.finished  # type: ignore[union-attr]
    finally:
        await server.stop(None)


def test_the_buffer_returns_what_follows_a_sequence_in_order_after_confirmations_and_gaps() -> None:
    buf = EventBuffer(max_memory=100)
    evs = _events(20)
    for ev in evs:
        buf.append(ev)
    for seq in range(-1, 22):
        for limit in (1, 3, 50):
            assert [e.sequence for e in buf.after(seq, limit)] == list(range(seq + 1, 20))[:limit]
    buf.forget_through(7)
    assert [e.sequence for e in buf.after(3, 2)] == [8, 9]
    odd = EventBuffer(max_memory=100)  # not consecutive (never from a run, but never wrong either)
    for ev in (evs[0], evs[2], evs[5]):
        odd.append(ev)
    assert [e.sequence for e in odd.after(1, 5)] == [2, 5] and [e.sequence for e in odd.after(2, 5)] == [5]
