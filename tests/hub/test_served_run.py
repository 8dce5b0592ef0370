"""One ServedRun for every way a run is served (issue 22): its origin is said explicitly (an
Origin, whose value is what RunSummary.origin says on the wire), never inferred from which of
its parts are set, and a placed run is a connected run with a placement part, not a subclass."""

from __future__ import annotations

import asyncio
from pathlib import Path

from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.hub import ConnectedRun
from goldfive.hub.hooked import HookedRun
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.placement import PlacedRun
from goldfive.remote import HostedRun, RunHost
from goldfive.remote.host import Origin, ServedRun
from goldfive.remote.summaries import summary
from tests.test_store_damage import record, story


class _Stream:
    """The runner's end of a Hub.Connect stream, as ConnectedRun.attach needs it."""

    host, pid = "node-7", 4242

    def __init__(self) -> None:
        self.sent: list[service_pb2.HubMessage] = []

    def send(self, msg: service_pb2.HubMessage) -> None:
        self.sent.append(msg)

    def goodbye(self, why: str) -> None: ...

    def end(self) -> None: ...


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

        connected = ConnectedRun("c-run", None)  # type: ignore[arg-type]
        assert connected.origin is Origin.CONNECTED and summary(connected).origin == "connected"
        assert not connected.started_by_hub and connected.placement is None and connected.label == ""

        hooked = HookedRun("h-run", "claude-code", None)
        assert hooked.origin is Origin.HOOKED and summary(hooked).origin == "claude-code"
        await host.close()

    asyncio.run(go())


def test_a_placed_run_is_a_connected_run_with_its_placement_from_pending_to_placed() -> None:
    placed = PlacedRun("p-run", None, goal_summary="two steps")  # type: ignore[arg-type]
    assert type(placed) is ConnectedRun and isinstance(placed, ServedRun)
    assert placed.origin is Origin.PLACED and placed.started_by_hub
    row = summary(placed)
    assert (row.origin, row.state, row.connection, row.goal_summary) == ("ray", "PENDING_PLACEMENT", "pending placement", "two steps")
    placed.placement_waiting("no node has 4 GPUs")
    assert summary(placed).connection == "pending placement: no node has 4 GPUs"
    placed.attach(_Stream())
    assert placed.placement is not None and placed.placement.placed and placed.placement.pending_reason == ""
    row = summary(placed)
    assert row.connection == "connected" and row.host == "node-7" and row.pid == 4242
    placed.placement_failed("too late")  # an actor connected: its placement stands
    assert summary(placed).state != "PLACEMENT_FAILED"

    failed = ConnectedRun.placed_run("f-run", None)  # type: ignore[arg-type]
    failed.placement_failed("ModuleNotFoundError: agent")
    assert (summary(failed).state, summary(failed).connection) == ("PLACEMENT_FAILED", "placement failed: ModuleNotFoundError: agent")


def test_the_old_names_still_import() -> None:
    assert HostedRun is ServedRun
