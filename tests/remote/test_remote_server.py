"""The Runs gRPC service against a real server on 127.0.0.1 (port 0): streams, controls, errors,
auth, TLS, reconnects and restarts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.errors import RemoteError, ServeConfigError
from goldfive.pb.goldfive.v1 import control_pb2, service_pb2, service_pb2_grpc
from goldfive.remote import RemoteClient, RemoteServer, RunHost, start_server
from goldfive.remote.auth import check_listen
from tests.remote_fixtures import Gate, gated_factory, self_signed_cert


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[RemoteServer, Gate]]:
    gate = Gate()
    host = RunHost(tmp_path / "runs.sqlite")
    server = await start_server(host, listen="127.0.0.1:0")
    host.start_run(gated_factory(gate), "do three things", run_id="r1")
    await gate.entered.wait()
    yield server, gate
    gate.open()
    await server.stop(None)


async def _sequences(client: RemoteClient, run_id: str, after: int = -1) -> list[int]:
    return [ev.sequence async for ev in client.subscribe(run_id, after)]


async def test_subscribe_serves_history_then_live_without_gap_or_duplicate(served):
    server, gate = served
    async with RemoteClient(server.address) as client:
        got: list[tuple[int, str]] = []
        history_read = asyncio.Event()

        async def read() -> None:
            async for ev in client.subscribe("r1", -1):
                got.append((ev.sequence, ev.WhichOneof("payload")))
                if ev.WhichOneof("payload") == "task_started":
                    history_read.set()

        reader = asyncio.create_task(read())
        await history_read.wait()
        # Live from here: these events are emitted after the subscriber took the history.
        ack = await client.send_control("r1", ControlMessage(ControlKind.STATUS_QUERY))
        assert ack.result is AckResult.SUCCESS
        gate.open()
        await reader
    sequences = [s for s, _ in got]
    assert sequences == list(range(len(sequences)))
    assert got[-1][1] == "run_completed"
    assert "control_acked" in {k for _, k in got}
    async with RemoteClient(server.address) as client:
        assert await _sequences(client, "r1", after=5) == sequences[6:]


async def test_send_control_returns_the_runs_own_ack(served):
    server, _ = served
    async with RemoteClient(server.address) as client:
        pause = ControlMessage(ControlKind.PAUSE)
        ack = await client.send_control("r1", pause)
        assert (ack.control_id, ack.result) == (pause.id, AckResult.SUCCESS)
        assert "paus" in ack.detail
        rewind = ControlMessage(ControlKind.REWIND_TO, payload={"task_id": "no-such-task"})
        ack = await client.send_control("r1", rewind)
        assert (ack.control_id, ack.result) == (rewind.id, AckResult.FAILURE)
        assert "no-such-task" in ack.detail
        snap = await client.get_run("r1")
        assert snap.paused and snap.summary.state == "PAUSING"  # its running task has not finished yet
        assert [t.id for t in snap.plan.tasks] == ["t1", "t2", "t3"]


async def _code(coro) -> tuple[str, str]:
    with pytest.raises(RemoteError) as info:
        await coro
    return info.value.code, str(info.value)


async def test_empty_or_oversized_steer_is_invalid_argument_naming_the_size(served):
    server, _ = served
    async with RemoteClient(server.address) as client:
        code, text = await _code(client.send_control("r1", ControlMessage(ControlKind.STEER, payload={"note": "  "})))
        assert code == "INVALID_ARGUMENT" and "empty" in text
        # 4097 characters but 8194 UTF-8 bytes: the limit is on bytes.
        big = ControlMessage(ControlKind.STEER, payload={"note": "é" * 4097})
        code, text = await _code(client.send_control("r1", big))
        assert code == "INVALID_ARGUMENT" and "8194 bytes" in text and "8192" in text
        at_limit = ControlMessage(ControlKind.STEER, payload={"note": "n" * 8192})
        ack = await client.send_control("r1", at_limit)
        assert ack.control_id == at_limit.id


async def test_malformed_control_is_invalid_argument_with_the_reason(served):
    server, _ = served
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.RunsStub(channel)
        cases = {
            "no kind": control_pb2.ControlEvent(id="c1"),
            "extra_json": control_pb2.ControlEvent(id="c2", kind=control_pb2.CONTROL_KIND_PAUSE, extra_json="{oops"),
            "task_id": control_pb2.ControlEvent(id="c3", kind=control_pb2.CONTROL_KIND_REWIND_TO),
            "intervention ladder": control_pb2.ControlEvent(id="c4", kind=control_pb2.CONTROL_KIND_GOLDFIVE_STEER),
        }
        for reason, control in cases.items():
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.SendControl(service_pb2.SendControlRequest(run_id="r1", control=control))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason in info.value.details()
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.SendControl(service_pb2.SendControlRequest(run_id="r1"))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_unknown_run_is_not_found_on_every_rpc(served):
    server, _ = served
    async with RemoteClient(server.address) as client:
        for call in (
            client.get_run("nope"),
            client.send_control("nope", ControlMessage(ControlKind.PAUSE)),
            _sequences(client, "nope"),
        ):
            code, text = await _code(call)
            assert code == "NOT_FOUND" and "nope" in text


async def test_a_client_gone_mid_stream_leaves_no_subscription(served):
    server, _ = served
    run = server.host.get("r1")
    assert run is not None and run.memory is not None
    unsubscribed = asyncio.Event()
    original = run.memory._unsubscribe

    def spy(sub):
        original(sub)
        unsubscribed.set()

    run.memory._unsubscribe = spy  # type: ignore[method-assign]
    async with RemoteClient(server.address) as client:
        stream = client.subscribe("r1")
        await anext(stream)
        assert run.memory.subscriber_count == 1
        await stream.aclose()
        await asyncio.wait_for(unsubscribed.wait(), 5)
    assert run.memory.subscriber_count == 0


async def test_token_missing_or_wrong_is_unauthenticated(tmp_path):
    host = RunHost(tmp_path / "runs.sqlite")
    server = await start_server(host, listen="127.0.0.1:0", token="s3cret")
    try:
        for token in (None, "wrong"):
            async with RemoteClient(server.address, token=token) as client:
                code, _ = await _code(client.list_runs())
                assert code == "UNAUTHENTICATED"
                code, _ = await _code(_sequences(client, "r1"))
                assert code == "UNAUTHENTICATED"
        async with RemoteClient(server.address, token="s3cret") as client:
            assert await client.list_runs() == []
            code, _ = await _code(client.get_run("r1"))
            assert code == "NOT_FOUND"  # past the token check
    finally:
        await server.stop(None)


async def test_tls_server_refuses_a_plaintext_client_and_serves_one_with_the_ca(tmp_path):
    cert, key = self_signed_cert(tmp_path)
    host = RunHost(tmp_path / "runs.sqlite")
    server = await start_server(host, listen="127.0.0.1:0", tls_cert=cert, tls_key=key)
    try:
        async with RemoteClient(server.address) as plain:
            code, _ = await _code(plain.list_runs(timeout=3))
            assert code == "UNAVAILABLE"
        async with RemoteClient(server.address, tls_ca=cert) as secure:
            assert await secure.list_runs() == []
    finally:
        await server.stop(None)


async def test_non_loopback_listen_without_token_or_client_certs_is_refused(tmp_path):
    with pytest.raises(ServeConfigError, match="not a loopback address"):
        await start_server(RunHost(tmp_path / "runs.sqlite"), listen="0.0.0.0:0")
    check_listen("0.0.0.0:7531", token="t" * 16, client_certs=False)  # a long token makes it acceptable
    check_listen("[::1]:7531", token=None, client_certs=False)
    with pytest.raises(ServeConfigError):
        check_listen("example.org:7531", token=None, client_certs=False)


async def test_follow_resumes_after_the_server_goes_away_without_loss_or_duplicate(tmp_path):
    gate = Gate()
    host = RunHost(tmp_path / "runs.sqlite")
    server = await start_server(host, listen="127.0.0.1:0")
    run = host.start_run(gated_factory(gate), "do three things", run_id="r1")
    await gate.entered.wait()
    states: list[str] = []
    got: list[int] = []
    seen_some = asyncio.Event()
    async with RemoteClient(server.address, max_backoff=0.2) as client:

        async def read() -> None:
            async for ev in client.follow("r1", on_state=lambda s, d: states.append(s)):
                got.append(ev.sequence)
                if len(got) == 3:
                    seen_some.set()

        reader = asyncio.create_task(read())
        await seen_some.wait()
        await server.stop(None, close_runs=False)
        assert run.channel is not None
        run.channel.send_nowait(ControlMessage(ControlKind.STATUS_QUERY))  # events while cut off
        server = await start_server(host, listen=server.address)
        gate.open()
        await asyncio.wait_for(reader, 20)
    await server.stop(None)
    assert got == list(range(len(got)))
    assert len(got) > 10
    assert "reconnecting" in states and states[-1] == "ended"


async def test_a_restarted_server_still_serves_a_finished_runs_history(tmp_path):
    db = tmp_path / "runs.sqlite"
    gate = Gate()
    gate.open()
    host = RunHost(db)
    server = await start_server(host, listen="127.0.0.1:0")
    run = host.start_run(gated_factory(gate), "do three things", run_id="r1")
    assert run.task is not None
    await run.task
    async with RemoteClient(server.address) as client:
        before = await _sequences(client, "r1")
    await server.stop(None)

    host2 = RunHost(db)
    assert host2.load_recorded() == 1
    server2 = await start_server(host2, listen="127.0.0.1:0")
    try:
        async with RemoteClient(server2.address) as client:
            assert await _sequences(client, "r1") == before == list(range(len(before)))
            (summary,) = await client.list_runs()
            assert (summary.run_id, summary.state, summary.tasks_completed) == ("r1", "COMPLETED", 3)
            snap = await client.get_run("r1")
            assert snap.last_sequence == before[-1]
            ack = await client.send_control("r1", ControlMessage(ControlKind.PAUSE))
            assert (ack.result, ack.detail) == (AckResult.FAILURE, "run not active")
    finally:
        await server2.stop(None)


async def test_a_control_the_run_never_acks_is_deadline_exceeded_and_ids_in_flight_are_unique(tmp_path):
    from goldfive.control import ControlChannel
    from goldfive.remote.host import HostedRun

    host = RunHost(tmp_path / "runs.sqlite")
    stuck = HostedRun("stuck")
    from goldfive.remote.route import LocalRoute

    channel = ControlChannel()  # nobody receives from it: no ack will ever come
    stuck.route = LocalRoute(channel)
    queued = asyncio.Event()
    original = channel.send_nowait

    def send_nowait(m: ControlMessage) -> None:
        original(m)
        queued.set()

    channel.send_nowait = send_nowait  # type: ignore[method-assign]
    host._runs["stuck"] = stuck
    server = await start_server(host, listen="127.0.0.1:0", ack_timeout=1.0)
    try:
        async with RemoteClient(server.address) as client:
            msg = ControlMessage(ControlKind.PAUSE)
            first = asyncio.create_task(client.send_control("stuck", msg))
            await queued.wait()  # the first one is on the channel, waiting for its ack
            code, text = await _code(client.send_control("stuck", ControlMessage(ControlKind.PAUSE, id=msg.id)))
            assert code == "INVALID_ARGUMENT" and "already waiting" in text
            code, text = await _code(first)
            assert code == "DEADLINE_EXCEEDED" and msg.id in text
    finally:
        await server.stop(None)


async def test_a_reader_that_falls_behind_gets_the_gap_refilled_in_order():
    from goldfive.pb.goldfive.v1 import events_pb2
    from goldfive.remote.host import HostedRun
    from goldfive.sinks.memory import InMemorySink

    run = HostedRun("r")
    run.memory = InMemorySink()
    await run.memory.emit(events_pb2.Event(run_id="r", sequence=0))
    stream = run.stream(-1)
    assert (await anext(stream)).sequence == 0
    # 12,000 events while the reader is not reading: more than its live buffer holds.
    for seq in range(1, 12_001):
        await run.memory.emit(events_pb2.Event(run_id="r", sequence=seq))
    await run.memory.close()
    rest = [ev.sequence async for ev in stream]
    assert rest == list(range(1, 12_001))


async def test_a_hosted_run_that_raises_or_fails_to_close_does_not_take_the_host_down(tmp_path, caplog):
    class Broken:
        async def run(self, user_input: str) -> None:
            raise RuntimeError("agent exploded")

        async def close(self) -> None:
            raise RuntimeError("close exploded")

    def bad_factory(**kw: object) -> None:
        raise ValueError("bad factory")

    host = RunHost(tmp_path / "runs.sqlite")
    with pytest.raises(ValueError, match="bad factory"):
        host.start_run(bad_factory, "x", run_id="never")
    assert host.get("never") is None
    broken = host.start_run(lambda **kw: Broken(), "x", run_id="broken")
    fine = host.start_run(gated_factory(Gate()), "y", run_id="fine")
    assert broken.task is not None
    assert await broken.task is None
    await host.close()  # closes "fine" too, despite "broken" failing to close
    assert fine.channel is not None and fine.channel.closed
    assert "agent exploded" in caplog.text and "close exploded" in caplog.text
