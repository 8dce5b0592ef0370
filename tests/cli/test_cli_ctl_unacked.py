"""A control that gets no ack in time is reported as sent (with its id), never as lost, and
``goldfive ctl ADDR ack RUN ID`` looks its ack up later instead of resending it."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from goldfive.cli import main
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RunHost, start_server
from goldfive.runner import Runner
from goldfive.types import Plan, Task
from tests.remote_fixtures import Gate


class SlowToRecordControls:
    """A sink that holds the run's control loop on a control_received until ``release``."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def emit(self, event: Any) -> None:
        if event.WhichOneof("payload") == "control_received":
            await self.release.wait()

    async def close(self) -> None:
        pass


def test_a_control_not_acked_in_time_is_reported_sent_and_its_ack_can_be_looked_up(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    gate, slow = Gate(), SlowToRecordControls()

    def factory(*, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
        plan = Plan([Task("t1", "task 1")], id="p1")
        return Runner(agent=gate.agent, planner=StaticPlanner(plan), sinks=[*sinks, slow], control=control, run_id=run_id)

    async def start() -> Any:
        host = RunHost(tmp_path / "runs.sqlite")
        server = await start_server(host, listen="127.0.0.1:0", ack_timeout=0.3)
        host.start_run(factory, "one task", run_id="r1")
        await gate.entered.wait()
        return server

    server = asyncio.run_coroutine_threadsafe(start(), loop).result(20)
    try:
        result = CliRunner().invoke(main, ["ctl", server.address, "pause", "r1"])
        assert result.exit_code == 2
        assert "PAUSE sent, not yet acked (control " in result.output
        control_id = result.output.split("(control ")[1].split(")")[0]
        assert f"ctl {server.address} ack r1 {control_id}" in result.output

        pending = CliRunner().invoke(main, ["ctl", server.address, "ack", "r1", control_id])
        assert pending.exit_code == 1 and "not yet acked" in pending.output

        loop.call_soon_threadsafe(slow.release.set)
        for _ in range(100):  # the run acks it once the sink lets go
            looked = CliRunner().invoke(main, ["ctl", server.address, "ack", "r1", control_id])
            if looked.exit_code == 0:
                break
            asyncio.run(asyncio.sleep(0.05))
        assert looked.exit_code == 0 and looked.output.startswith("PAUSE SUCCESS")
    finally:
        loop.call_soon_threadsafe(gate.open)
        asyncio.run_coroutine_threadsafe(server.stop(None), loop).result(20)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
