"""``goldfive ctl ADDR approve --args / --always``, ``rules list|add|remove`` and ``ledger``
against a real server (its own event loop in a thread); the ledger read back after the server
restarts on the same recording."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any


from goldfive.adapters.callable import CallableAdapter
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteServer, RunHost, start_server
from goldfive.runner import Runner
from goldfive.run.user_tools import UserTool
from goldfive.types import Plan, Session, Task
from goldfive.testing import ctl

RUN = "appr-1"
CALLS = [
    {"service": "web", "replicas": 9},  # approved with edited arguments and --always
    {"service": "web", "replicas": 2},  # approved by the rule
    {"service": "db", "replicas": 2},  # outside the rule: rejected
]


class Served:
    def __init__(self, db: Path, *, with_run: bool = True) -> None:
        self.ran: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server: RemoteServer = self.call(self._start(db, with_run))

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(20)

    async def _start(self, db: Path, with_run: bool) -> RemoteServer:
        host = RunHost(db)
        if not with_run:
            host.load_recorded()
        server = await start_server(host, listen="127.0.0.1:0")
        if with_run:
            host.start_run(self._factory, "deploy things", run_id=RUN)
        return server

    def _factory(self, *, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
        async def deploy(service: str, replicas: int) -> str:
            self.ran.append({"service": service, "replicas": replicas})
            return "deployed"

        async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
            for args in CALLS:
                await tools["deploy"](**args)
            return "ok"

        adapter = CallableAdapter(agent, tools=[UserTool(deploy, requires_approval=True)])
        plan = Plan([Task("t1", "deploy")], [], id="p")
        return Runner(agent=adapter, planner=StaticPlanner(plan), sinks=sinks, control=control, run_id=run_id)

    async def _requested(self, n: int) -> str:
        run = self.server.host.get(RUN)
        assert run is not None
        seen = []
        async for ev in run.stream(-1):
            if ev.WhichOneof("payload") == "approval_requested":
                seen.append(ev.approval_requested.target_id)
                if len(seen) == n:
                    return seen[-1]
        raise AssertionError("the run ended first")

    def requested(self, n: int) -> str:
        """The id of the n-th approval the run asked for, waiting for it."""
        return str(self.call(asyncio.wait_for(self._requested(n), 10)))

    def finish(self) -> None:
        run = self.server.host.get(RUN)
        assert run is not None and run.task is not None
        self.call(asyncio.wait_for(asyncio.shield(run.task), 10))

    def stop(self) -> None:
        self.call(self.server.stop(None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def test_ctl_edits_approves_makes_rules_and_reads_the_ledger_back_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    s = Served(db)
    try:
        addr = s.server.address
        first = s.requested(1)
        bad = ctl(addr, "approve", RUN, first, "--args", '{"service": "web", "replicas": "one"}')
        assert bad.exit_code == 1 and "argument 'replicas' must be integer, got string" in bad.output
        assert ctl(addr, "approve", RUN, first, "--args", "[1]").exit_code == 2
        good = ctl(addr, "approve", RUN, first, "--args", '{"service": "web", "replicas": 3}', "--always",
                   "--match", '{"service": {"kind": "exact", "value": "web"}, "replicas": {"kind": "range", "low": 1, "high": 5}}')  # fmt: skip
        assert good.exit_code == 0 and "edited arguments" in good.output, good.output
        third = s.requested(2)  # the second call was approved by the rule: the next ask is the third
        listed = ctl(addr, "rules", "list", RUN)
        assert listed.exit_code == 0 and listed.output.startswith("R1    run      deploy: replicas in [1, 5], service = 'web'")
        added = ctl(addr, "rules", "add", RUN, "deploy", "--match", '{"service": {"kind": "glob", "value": "d*"}}')
        assert added.exit_code == 0 and added.output.startswith("added R2: deploy: service like d*")
        assert ctl(addr, "rules", "remove", RUN, "R2").output.startswith("removed R2")
        assert ctl(addr, "rules", "remove", RUN, "R9").exit_code == 1
        assert ctl(addr, "rules", "add", RUN, "deploy", "--match", '{"x": {"kind": "nope"}}').exit_code == 1
        assert ctl(addr, "reject", RUN, third, "--detail", "not the db").exit_code == 0
        s.finish()
        assert s.ran == [{"service": "web", "replicas": 3}, {"service": "web", "replicas": 2}]
        ledger = ctl(addr, "ledger", RUN)
        assert ledger.exit_code == 0
        lines = ledger.output.strip().splitlines()
        assert [ln.split()[3] for ln in lines] == ["EDITED_APPROVED", "APPROVED_BY_RULE", "REJECTED"]
        assert "via ctl" in lines[0] and 'asked {"replicas":9,"service":"web"} -> ran {"replicas":3,"service":"web"}' in lines[0]
        assert "approved by rule R1 (made by " in lines[1]
        assert "reason: not the db" in lines[2] and "(did not run)" in lines[2]
        as_json = json.loads(ctl(addr, "--json", "ledger", RUN).output)
        assert [e["client"] for e in as_json] == ["ctl", "", "ctl"]
    finally:
        s.stop()
    again = Served(db, with_run=False)
    try:
        assert ctl(again.server.address, "ledger", RUN).output == ledger.output
    finally:
        again.stop()
