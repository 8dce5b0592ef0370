"""Hub.Connect spoken directly (a runner's side written by hand) against a real hub: takeover,
bad sequences, events of another run, an operator who leaves in the middle of a control."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest

from goldfive import conv, events
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1 import control_pb2, service_pb2, service_pb2_grpc
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.types import Session
from tests.hub.drive import CallDriver, run_events


class _Runner(CallDriver):
    """One Hub.Connect stream, driven by the test."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.call: Any = service_pb2_grpc.HubStub(self.channel).Connect()

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close()


@pytest.fixture
async def hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", interrupt_after=60)
    yield server
    await server.stop(None)


def _stored(server: Any, run_id: str) -> list[int]:
    with sqlite3.connect(server.host.db_path) as conn:
        return [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))]


async def test_events_are_confirmed_once_stored_and_a_reconnect_resumes_after_them(hub):
    r = _Runner(hub.address)
    welcome = await r.hello("by-hand")
    assert welcome.welcome.stored_through == -1
    await r.send(run_events("by-hand", 5))
    confirmed = await r.read_until("confirmed_sequence")
    assert confirmed.confirmed_sequence == 4 and _stored(hub, "by-hand") == [0, 1, 2, 3, 4]
    await r.close()
    again = _Runner(hub.address)
    assert (await again.hello("by-hand", resume_after=2)).welcome.stored_through == 4
    await again.send(run_events("by-hand", 3, start=4)[1:])  # 5, 6
    assert (await again.read_until("confirmed_sequence")).confirmed_sequence == 6
    assert _stored(hub, "by-hand") == list(range(7))
    await again.close()


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (lambda: run_events("mine", 3, start=1), "backwards"),  # 1, 2, 3 after 2: 1 goes backwards
        (lambda: run_events("mine", 2, start=5), "gap"),
        (lambda: [*run_events("mine", 1, start=3), *run_events("theirs", 1, start=4)], "theirs"),
    ],
)
async def test_a_bad_batch_is_refused_whole_and_the_stream_closed(hub, bad, why):
    r = _Runner(hub.address)
    await r.hello("mine")
    await r.send(run_events("mine", 3))
    assert (await r.read_until("confirmed_sequence")).confirmed_sequence == 2
    await r.send(bad())
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await r.read_until("never")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and why in err.value.details()
    await r.close()
    assert _stored(hub, "mine") == [0, 1, 2]  # nothing of the bad batch
    assert _stored(hub, "theirs") == []


async def test_a_stream_must_start_with_a_sensible_hello(hub):
    r = _Runner(hub.address)
    await r.send(run_events("x", 1))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await r.read()
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "RunnerHello" in err.value.details()
    await r.close()
    r = _Runner(hub.address)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await r.hello("x" * 1000)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "at most 128" in err.value.details()
    await r.close()


async def test_the_same_run_id_connecting_twice_the_second_takes_over_and_the_first_is_told(hub):
    first, second = _Runner(hub.address), _Runner(hub.address)
    await first.hello("twice", pid=111)
    await first.send(run_events("twice", 2))
    assert (await first.read_until("confirmed_sequence")).confirmed_sequence == 1
    assert (await second.hello("twice", pid=222)).welcome.stored_through == 1
    bye = await first.read_until("goodbye")
    assert "took it over" in bye.goodbye and "222" in bye.goodbye
    assert await first.read() is grpc.aio.EOF
    (run,) = hub.host.runs()
    assert (run.pid, run.connection) == (222, "connected")
    await second.send(run_events("twice", 3, start=1)[1:])  # 2, 3
    assert (await second.read_until("confirmed_sequence")).confirmed_sequence == 3
    await first.close()
    await second.close()


async def test_an_operator_who_leaves_mid_control_still_gets_the_control_acked_in_the_history(hub):
    r = _Runner(hub.address)
    await r.hello("steered")
    await r.send(run_events("steered", 2))
    await r.read_until("confirmed_sequence")
    async with RemoteClient(hub.address) as client:
        pending = asyncio.create_task(client.send_control("steered", ControlMessage(ControlKind.PAUSE, id="c-1")))
        control = (await r.read_until("control")).control
        assert control.id == "c-1" and control.kind == control_pb2.CONTROL_KIND_PAUSE
        pending.cancel()  # the operator goes away before the ack
        with pytest.raises(asyncio.CancelledError):
            await pending
        await asyncio.sleep(0.1)
        # The run acks anyway; its ack is an event of its own history, then the ack itself.
        acked = events.control_acked(Session(run_id="steered"), ControlAck("c-1", AckResult.SUCCESS), "PAUSE")
        acked.sequence = 2
        await r.send([acked])
        ack = service_pb2.RunnerMessage(ack=conv.to_pb_control_ack(ControlAck("c-1", AckResult.SUCCESS)))
        await r.call.write(ack)
        assert (await r.read_until("confirmed_sequence")).confirmed_sequence == 2
        # A second operator's control is answered with its own ack.
        second = asyncio.create_task(client.send_control("steered", ControlMessage(ControlKind.RESUME, id="c-2")))
        assert (await r.read_until("control")).control.id == "c-2"
        await r.call.write(service_pb2.RunnerMessage(ack=conv.to_pb_control_ack(ControlAck("c-2", AckResult.SUCCESS))))
        assert (await asyncio.wait_for(second, 10)).result is AckResult.SUCCESS
    assert _stored(hub, "steered") == [0, 1, 2]
    with sqlite3.connect(hub.host.db_path) as conn:
        (kind,) = conn.execute("SELECT kind FROM events WHERE run_id = 'steered' AND sequence = 2").fetchone()
    assert kind == "control_acked"
    await r.close()


async def test_a_control_for_a_disconnected_run_fails_at_once_saying_why(hub):
    r = _Runner(hub.address)
    await r.hello("gone")
    await r.send(run_events("gone", 2))
    await r.read_until("confirmed_sequence")
    await r.close()
    await asyncio.sleep(0.2)
    (run,) = hub.host.runs()
    assert run.connection == "disconnected"
    async with RemoteClient(hub.address) as client:
        ack = await client.send_control("gone", ControlMessage(ControlKind.PAUSE))
    assert ack.result is AckResult.FAILURE and "disconnected" in ack.detail


async def test_events_of_a_connected_run_pushed_over_the_old_ingest_are_refused(hub):
    r = _Runner(hub.address)
    await r.hello("owned")
    await r.send(run_events("owned", 2))
    await r.read_until("confirmed_sequence")
    (run,) = hub.host.runs()
    with pytest.raises(ValueError, match="connected over Hub.Connect"):
        await hub.host.ingest(run_events("owned", 3)[2])
    assert run.memory is not None and not run.memory.closed and run.state.last_sequence == 1
    await r.close()


async def test_a_runner_whose_run_id_the_hub_already_holds_further_stops_and_says_so(hub):
    from tests.hub.test_hub_link import _quick_run

    r = _Runner(hub.address)
    await r.hello("reused")
    await r.send(run_events("reused", 30))
    await r.read_until("confirmed_sequence")
    await r.close()
    runner, link = await _quick_run(hub.address, "reused")
    assert (await runner.run("one thing")).success
    await runner.close()
    assert "another run uses this id" in link.stopped
    assert _stored(hub, "reused") == list(range(30))  # the first run's history untouched
