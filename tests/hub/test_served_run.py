"""One ServedRun for every way a run is served (issue 22): its origin is said explicitly (an
Origin, whose value is what RunSummary.origin says on the wire), never inferred from which of
its parts are set. A connected, placed or hooked run is a ServedRun holding an attachment
(its runner's stream, a placement part, its hooks), never a subclass."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.hub import RunnerAttachment, runner_of
from goldfive.hub.hooked import HookAttachment, hook_of
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.placement import PlacedRun
from goldfive.remote import HostedRun, RunHost
from goldfive.remote.host import Origin, ServedRun
from goldfive.remote.summaries import summary
from tests.store.test_store_damage import record, story


class _Stream:
    """The runner's end of a Hub.Connect stream, as RunnerAttachment.attach needs it."""

    host, pid = "node-7", 4242

    def __init__(self) -> None:
        self.sent: list[service_pb2.HubMessage] = []

    def send(self, msg: service_pb2.HubMessage) -> None:
        self.sent.append(msg)

    def goodbye(self, why: str) -> None: ...

    def end(self) -> None: ...


async def _no_forward(run_id: str, msg: ControlMessage, timeout: float) -> ControlAck:
    return ControlAck(msg.id, AckResult.FAILURE, "not routed in this test")


def test_every_kind_of_served_run_says_its_origin_and_the_wire_keeps_its_words(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    record(db, story("done-run"))

    async def go() -> None:
        host = RunHost(db)
        host.load_recorded()
        recorded = host.get("done-run")
        assert recorded is not None and recorded.origin is Origin.RECORDED and summary(recorded).origin == "recorded"
        ack = await recorded.control(ControlMessage(ControlKind.PAUSE), 1.0)
        assert ack.result is AckResult.FAILURE and ack.detail == "run not active"

        pushed = story("pushed-run")
        await host.ingest(pushed[0])
        run = host.get("pushed-run")
        assert run is not None and run.origin is Origin.PUSHED and summary(run).origin == "pushed"
        for ev in pushed[1:]:
            await host.ingest(ev)
        assert run.origin is Origin.RECORDED  # its producer is done: served as recorded

        att = RunnerAttachment.new("c-run", None)  # type: ignore[arg-type]
        connected = att.run
        assert type(connected) is ServedRun and runner_of(connected) is att and hook_of(connected) is None
        assert connected.origin is Origin.CONNECTED and summary(connected).origin == "connected"
        assert not att.started_by_hub and att.placement is None and connected.label == ""
        with_runner = _Stream()
        att.attach(with_runner)  # type: ignore[arg-type]
        assert (connected.host, connected.pid, connected.connection, connected.live) == ("node-7", 4242, "connected", True)
        att.forward = _no_forward
        att.elsewhere("hub-b:50051", "node-8", 7)  # its runner went to another hub of the fleet
        row = summary(connected)
        assert connected.origin is Origin.FOLLOWED and (row.origin, row.hub, row.host) == ("followed", "hub-b:50051", "node-8")
        att.attach(with_runner)  # type: ignore[arg-type]  # and came back here
        assert connected.origin is Origin.CONNECTED and connected.hub == ""
        with_hooks = HookAttachment.new("h-run", "claude-code", None)
        hooked = with_hooks.run
        assert type(hooked) is ServedRun and hook_of(hooked) is with_hooks and runner_of(hooked) is None
        assert hooked.origin is Origin.HOOKED and summary(hooked).origin == "claude-code"
        for attached in (connected, hooked):  # its events come from its runner or its hooks: a producer is refused
            host.adopt(attached)
            with pytest.raises(ValueError, match="cannot also be pushed"):
                await host.ingest(story(attached.run_id)[0])
        await host.close()

    asyncio.run(go())


def test_a_placed_run_is_a_connected_run_with_its_placement_from_pending_to_placed() -> None:
    part = PlacedRun("p-run", None, goal_summary="two steps")  # type: ignore[arg-type]
    placed = part.run
    assert type(placed) is ServedRun and runner_of(placed) is part
    assert placed.origin is Origin.PLACED and part.started_by_hub
    row = summary(placed)
    assert (row.origin, row.state, row.connection, row.goal_summary) == ("ray", "PENDING_PLACEMENT", "pending placement", "two steps")
    part.placement_waiting("no node has 4 GPUs")
    assert summary(placed).connection == "pending placement: no node has 4 GPUs"
    part.attach(_Stream())  # type: ignore[arg-type]
    assert part.placement is not None and part.placement.placed and part.placement.pending_reason == ""
    row = summary(placed)
    assert row.connection == "connected" and row.host == "node-7" and row.pid == 4242 and row.origin == "ray"
    part.placement_failed("too late")  # an actor connected: its placement stands
    assert summary(placed).state != "PLACEMENT_FAILED"

    failed = RunnerAttachment.placed_run("f-run", None)  # type: ignore[arg-type]
    failed.placement_failed("ModuleNotFoundError: agent")
    row = summary(failed.run)
    assert (row.state, row.connection) == ("PLACEMENT_FAILED", "placement failed: ModuleNotFoundError: agent")


def test_the_old_names_still_import() -> None:
    assert HostedRun is ServedRun


def test_ctl_shows_a_followed_runs_connection_as_it_does_a_connected_ones() -> None:
    from goldfive.cli.ctl.hub import run_line

    row = service_pb2.RunSummary(run_id="f1", state="RUNNING", origin="followed", connection="disconnected", host="node-8", pid=7)
    assert "followed(disconnected)" in run_line(row, now=0.0)
    row.connection, row.hub = "connected", "hub-b:50051"
    line = run_line(row, now=0.0)
    assert "followed " in line and "node-8:7 via hub hub-b:50051" in line
