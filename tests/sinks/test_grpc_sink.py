"""GRPCSink against a real GoldfiveIngress server on 127.0.0.1: delivery once, resending across a
server restart with duplicates dropped by the collector, and loud failure on close."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1 import events_pb2, service_pb2_grpc
from goldfive.remote.ingest import IngressService
from goldfive.sinks.grpc_sink import GRPCSink
from goldfive.sinks.memory import InMemorySink
from goldfive.testing import free_port as _free_port


def _event(seq: int) -> events_pb2.Event:
    ev = events_pb2.Event(event_id=f"e{seq}", run_id="r1", sequence=seq)
    ev.task_progress.task_id = "t1"
    ev.task_progress.detail = f"step {seq}"
    return ev


async def _start(service: IngressService, listen: str = "127.0.0.1:0") -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server()
    service_pb2_grpc.add_GoldfiveIngressServicer_to_server(service, server)
    port = server.add_insecure_port(listen)
    await server.start()
    return server, port


async def _received(store: InMemorySink, count: int) -> None:
    """Returns once ``store`` holds ``count`` events."""
    if len(store.events) >= count:
        return
    async with store.subscribe(after_sequence=-1) as sub:
        async for _ in sub:
            if len(store.events) >= count:
                return


async def test_events_arrive_once_in_order():
    store = InMemorySink()
    service = IngressService(store)
    server, port = await _start(service)
    sink = GRPCSink(f"127.0.0.1:{port}")
    try:
        for seq in range(500):
            await sink.emit(_event(seq))
        await sink.close()
    finally:
        await server.stop(None)
    assert [e.sequence for e in store.events] == list(range(500))
    assert (sink.acknowledged, sink.pending, service.duplicates) == (500, 0, 0)


async def test_a_server_restart_mid_stream_loses_nothing_and_duplicates_nothing():
    store = InMemorySink()
    service = IngressService(store)  # the collector's state outlives its transport
    server, port = await _start(service)
    # A long linger keeps the first call open, so the restart cuts it mid-stream.
    sink = GRPCSink(f"127.0.0.1:{port}", linger=30.0, max_backoff=0.2)
    for seq in range(200):
        await sink.emit(_event(seq))
    await _received(store, 200)
    assert sink.acknowledged == 0  # stored, but the call was never answered
    await server.stop(None)
    for seq in range(200, 400):
        await sink.emit(_event(seq))  # buffered while the collector is away
    server, _ = await _start(service, f"127.0.0.1:{port}")
    try:
        await sink.close(timeout=15)
    finally:
        await server.stop(None)
    assert [e.sequence for e in store.events] == list(range(400))
    assert service.duplicates == 200  # the unanswered call was resent whole and dropped
    assert sink.acknowledged == 400


async def test_ingress_drops_duplicates_by_event_id_and_counts_every_event_received():
    store = InMemorySink()
    service = IngressService(store, known_event_ids=["e0"])
    server, port = await _start(service)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = service_pb2_grpc.GoldfiveIngressStub(channel)
            resp = await stub.StreamEvents(iter([_event(0), _event(1), _event(1), _event(2)]))
    finally:
        await server.stop(None)
    assert (resp.received, resp.error) == (4, "")
    assert [e.sequence for e in store.events] == [1, 2]
    assert service.duplicates == 2


async def test_close_reports_what_could_not_be_delivered():
    sink = GRPCSink(f"127.0.0.1:{_free_port()}", max_buffer=3, max_backoff=0.05)
    for seq in range(5):
        await sink.emit(_event(seq))
    with pytest.raises(SinkError) as info:
        await sink.close(timeout=0.3)
    text = str(info.value)
    assert "3 events not delivered (sequences 2..4)" in text
    assert "2 dropped when the buffer was full" in text
    assert "UNAVAILABLE" in text
    with pytest.raises(SinkError, match="closed"):
        await sink.emit(_event(5))


async def test_a_collector_that_cannot_store_gets_the_event_again():
    class FlakyStore(InMemorySink):
        failed = False

        async def emit(self, event: events_pb2.Event) -> None:
            if event.sequence == 3 and not self.failed:
                self.failed = True
                raise OSError("disk full")
            await super().emit(event)

    store = FlakyStore()
    server, port = await _start(IngressService(store))
    sink = GRPCSink(f"127.0.0.1:{port}", max_backoff=0.05)
    try:
        for seq in range(6):
            await sink.emit(_event(seq))
        await sink.close(timeout=10)
    finally:
        await server.stop(None)
    assert [e.sequence for e in store.events] == list(range(6))
    assert any("disk full" in e for e in sink.errors)


async def test_a_run_pushed_by_grpcsink_is_served_live_by_the_host(tmp_path):
    from goldfive.control import AckResult, ControlKind, ControlMessage
    from goldfive.remote import RemoteClient, RunHost, start_server
    from goldfive.remote.ingest import HostIngest
    from tests.remote_fixtures import Gate, gated_factory

    host = RunHost(tmp_path / "runs.sqlite")
    server = await start_server(host, listen="127.0.0.1:0", ingress=IngressService(HostIngest(host)))
    gate = Gate()
    sink = GRPCSink(server.address, linger=0.01)
    runner = gated_factory(gate)(sinks=[sink], control=None, run_id="pushed")
    producer = asyncio.create_task(runner.run("do three things"))
    try:
        await gate.entered.wait()
        await sink.flush(10)
        async with RemoteClient(server.address) as client:
            (summary,) = await client.list_runs()
            assert (summary.run_id, summary.state) == ("pushed", "RUNNING")
            ack = await client.send_control("pushed", ControlMessage(ControlKind.PAUSE))
            assert ack.result is AckResult.FAILURE and "remote producer" in ack.detail
            got = []
            async for ev in client.follow("pushed"):
                got.append(ev.sequence)
                if len(got) == 1:
                    gate.open()
        await producer
        assert got == list(range(len(got))) and len(got) > 8
        assert (await client_state(server.address)) == "COMPLETED"
    finally:
        gate.open()
        await server.stop(None)


async def client_state(addr: str) -> str:
    from goldfive.remote import RemoteClient

    async with RemoteClient(addr) as client:
        return (await client.get_run("pushed")).summary.state


async def test_grpcsink_presents_a_client_certificate_to_a_collector_that_requires_one(tmp_path):
    from goldfive.remote import RunHost, start_server
    from tests.remote_fixtures import ca_signed_client_cert, self_signed_cert

    server_cert, server_key = self_signed_cert(tmp_path)
    ca, cert, key = ca_signed_client_cert(tmp_path / "producer")
    store = InMemorySink()
    server = await start_server(
        RunHost(tmp_path / "runs.sqlite"),
        listen="127.0.0.1:0",
        tls_cert=server_cert,
        tls_key=server_key,
        tls_client_ca=ca,
        ingress=IngressService(store),
    )
    try:
        sink = GRPCSink(server.address, tls_ca=server_cert, tls_client_cert=cert, tls_client_key=key, linger=0.01)
        for seq in range(3):
            await sink.emit(_event(seq))
        await sink.close()
        assert sink.acknowledged == 3 and [e.sequence for e in store.events] == [0, 1, 2]
        stranger = GRPCSink(server.address, tls_ca=server_cert, close_timeout=1.0, linger=0.01)
        await stranger.emit(_event(3))
        with pytest.raises(SinkError):
            await stranger.close()  # no certificate: the handshake fails, nothing is delivered
        assert stranger.acknowledged == 0 and len(store.events) == 3
    finally:
        await server.stop(None)
