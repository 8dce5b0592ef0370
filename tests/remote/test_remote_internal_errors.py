"""A Runs call that fails unexpectedly on the server reaches the client as INTERNAL with a
sentence saying what was being done, never a Python exception name; the traceback goes to
the server's log. Deliberate statuses (NOT_FOUND, INVALID_ARGUMENT) are unchanged."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from goldfive.control import ControlKind, ControlMessage
from goldfive.errors import RemoteError
from goldfive.pb.goldfive.v1 import control_pb2, service_pb2, service_pb2_grpc
from goldfive.remote import RemoteClient, RunHost, start_server


class _BrokenRun:
    run_id = "broken1"

    def stream(self, after: int) -> AsyncIterator[Any]:
        async def events() -> AsyncIterator[Any]:
            raise KeyError("sequence table")
            yield  # pragma: no cover

        return events()

    async def control(self, msg: ControlMessage, timeout: float) -> Any:
        if msg.kind is ControlKind.REWIND_TO:
            raise ValueError("no task 'zzz' to rewind to")  # a refusal the run explains
        raise RuntimeError("channel in a bad state")


class BrokenHost(RunHost):
    """Lists runs with a bug; its one run "broken1" fails every stream and control."""

    def runs(self) -> list[Any]:
        raise ValueError("bad row in the runs table")

    def resolve(self, run_id: str) -> Any:
        if run_id == "broken1":
            return _BrokenRun()
        return super().resolve(run_id)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[RemoteClient]:
    server = await start_server(BrokenHost(tmp_path / "runs.sqlite"), listen="127.0.0.1:0")
    async with RemoteClient(server.address) as c:
        yield c
    await server.stop(None)


async def _refusal(call: Any) -> RemoteError:
    with pytest.raises(RemoteError) as caught:
        await call
    return caught.value


def _no_python_names(message: str) -> None:
    for name in ("ValueError", "RuntimeError", "KeyError", "Exception", "Traceback", "Unexpected"):
        assert name not in message


async def test_an_unexpected_failure_listing_runs_is_internal_and_said_in_words(
    client: RemoteClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="goldfive.remote"):
        err = await _refusal(client.list_runs())
    assert err.code == "INTERNAL"
    assert str(err) == "INTERNAL: the server failed while listing the runs; its log has the details"
    assert "bad row in the runs table" in caplog.text and "Traceback" in caplog.text  # for the operator


async def test_an_unexpected_failure_in_a_stream_a_control_or_a_snapshot_is_internal(client: RemoteClient) -> None:
    err = await _refusal(client.send_control("broken1", ControlMessage(ControlKind.PAUSE)))
    assert (err.code, str(err)) == (
        "INTERNAL",
        "INTERNAL: the server failed while sending a PAUSE control to run 'broken1'; its log has the details",
    )
    with pytest.raises(RemoteError) as caught:
        async for _ in client.subscribe("broken1"):
            pass
    assert caught.value.code == "INTERNAL"
    assert "while streaming the events of run 'broken1'" in str(caught.value)
    snap = await _refusal(client.get_run("broken1"))  # _BrokenRun has no state to snapshot
    assert str(snap) == "INTERNAL: the server failed while reading run 'broken1'; its log has the details"
    for message in (str(err), str(caught.value)):
        _no_python_names(message)


async def test_deliberate_statuses_are_kept(client: RemoteClient) -> None:
    assert (await _refusal(client.get_run("nope"))).code == "NOT_FOUND"
    rewind = ControlMessage(ControlKind.REWIND_TO, payload={"task_id": "zzz"})
    err = await _refusal(client.send_control("broken1", rewind))
    assert str(err) == "INVALID_ARGUMENT: no task 'zzz' to rewind to"


async def test_a_control_with_deeply_nested_extra_json_is_invalid_argument(client: RemoteClient) -> None:
    stub = service_pb2_grpc.RunsStub(client._channel)
    control = control_pb2.ControlEvent(id="c1", kind=control_pb2.CONTROL_KIND_PAUSE, extra_json="[" * 100_000)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.SendControl(service_pb2.SendControlRequest(run_id="broken1", control=control))
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == "malformed control: extra_json is nested too deeply"
