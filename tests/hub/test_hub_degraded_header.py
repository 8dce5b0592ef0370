"""A hub that says it is degraded (its database lost: goldfive.hub.fleet) is shown as such by
`ctl runs` and in the attached TUI's header, and no longer once it recovers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from goldfive.remote import RemoteClient, RunHost, start_server
from tests.remote_fixtures import Gate, gated_factory
from tui.grpc_source import DEGRADED, GrpcRunSource


async def test_the_attached_header_says_when_the_hub_is_degraded_and_when_it_is_not_any_more(tmp_path: Path) -> None:
    gate = Gate()
    host = RunHost(tmp_path / "runs.sqlite")
    warning = [""]
    host.warning = lambda: warning[0]
    server = await start_server(host, listen="127.0.0.1:0")
    states: list[tuple[str, str]] = []
    source = GrpcRunSource(server.address, "deg1", on_state=lambda s, d: states.append((s, d)))
    source.hub_poll = 0.05
    try:
        host.start_run(gated_factory(gate), "three things", run_id="deg1")
        await gate.entered.wait()
        reading = asyncio.create_task(_drain(source))

        async def seen(state: str) -> None:
            for _ in range(200):
                if states and states[-1][0] == state:
                    return
                await asyncio.sleep(0.02)
            raise AssertionError(f"no {state!r} in {states[-5:]}")

        await seen("connected")
        warning[0] = "database unreachable: 12 event(s) held in memory until it is back"
        await seen(f"connected · {DEGRADED}")
        assert states[-1][1].startswith("database unreachable")
        async with RemoteClient(server.address) as client:
            await client.list_runs()
            assert client.hub_warning.startswith("database unreachable")
            assert (await client.get_run("deg1")).hub_warning == warning[0]
        warning[0] = ""
        await seen("connected")
        reading.cancel()
    finally:
        gate.open()
        await source.stop()
        await server.stop(None)


async def _drain(source: GrpcRunSource) -> None:
    async for _ in source.events():
        pass
