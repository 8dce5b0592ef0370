"""``goldfive ctl ADDR waiting`` lists a question with its options and ``ctl ADDR answer`` answers
it, against a real hub (its own event loop in a thread): a refused option changes nothing, the
answer reaches the agent, and the ledger says who answered, through ctl."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from goldfive.adapters.callable import CallableAdapter
from goldfive.cli import main
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteServer, RunHost, start_server
from goldfive.runner import Runner
from goldfive.types import Plan, Session, Task

RUN = "ask-1"


class Served:
    def __init__(self, db: Path) -> None:
        self.answers: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server: RemoteServer = self.call(self._start(db))

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(20)

    async def _start(self, db: Path) -> RemoteServer:
        host = RunHost(db)
        server = await start_server(host, listen="127.0.0.1:0")
        host.start_run(self._factory, "deploy", run_id=RUN)
        return server

    def _factory(self, *, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
        async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
            self.answers.append(await tools["ask_person"](prompt="Which region?", options=["eu", "us"], free_text=False))
            self.answers.append(await tools["ask_person"](prompt="Any note for the release?"))
            return "ok"

        plan = Plan([Task("t1", "deploy")], [], id="p")
        return Runner(agent=CallableAdapter(agent), planner=StaticPlanner(plan), sinks=sinks, control=control, run_id=run_id)

    def finish(self) -> None:
        run = self.server.host.get(RUN)
        assert run is not None and run.task is not None
        self.call(asyncio.wait_for(asyncio.shield(run.task), 10))

    def stop(self) -> None:
        self.call(self.server.stop(None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def ctl(*args: str) -> Any:
    return CliRunner().invoke(main, ["ctl", *args], catch_exceptions=False)


def _waiting(addr: str, prompt: str) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        items = json.loads(ctl(addr, "--json", "waiting", RUN).output)
        if items and items[0]["prompt"] == prompt:
            return dict(items[0])
        time.sleep(0.05)
    raise AssertionError(f"no question {prompt!r} came")


def test_ctl_waiting_lists_a_question_and_ctl_answer_answers_it_over_a_real_hub(tmp_path: Path) -> None:
    s = Served(tmp_path / "runs.sqlite")
    try:
        addr = s.server.address
        first = _waiting(addr, "Which region?")
        assert (first["kind"], first["options"], first.get("free_text", False)) == ("question", ["eu", "us"], False)
        text = ctl(addr, "waiting", RUN).output
        assert "question" in text and "Which region?  options: eu / us (pick one)" in text
        runs = json.loads(ctl(addr, "--json", "runs").output)
        assert [r["needs_you"] for r in runs if r["run_id"] == RUN] == ["question: Which region?"]

        target = first["target_id"]
        assert f"question waiting: {target} Which region?" in ctl(addr, "status", RUN).output
        assert ctl(addr, "answer", RUN, target).exit_code != 0  # neither TEXT nor --option
        refused = ctl(addr, "answer", RUN, target, "--option", "asia")
        assert refused.exit_code == 1 and "option 'asia' was not offered (the options: eu / us)" in refused.output, refused.output
        typed = ctl(addr, "answer", RUN, target, "eu please")
        assert typed.exit_code == 1 and "not free text" in typed.output
        picked = ctl(addr, "answer", RUN, target, "--option", "eu")
        assert picked.exit_code == 0 and picked.output.startswith("ANSWER SUCCESS: answered"), picked.output

        second = _waiting(addr, "Any note for the release?")
        assert ctl(addr, "answer", RUN, second["target_id"], "ship after lunch").exit_code == 0
        s.finish()
        assert s.answers == [{"ok": True, "answer": "eu", "option": "eu"}, {"ok": True, "answer": "ship after lunch", "option": ""}]
        ledger = json.loads(ctl(addr, "--json", "ledger", RUN).output)
        assert [(e["outcome"], e["reason"], e["client"]) for e in ledger] == [("ANSWERED", "eu", "ctl"), ("ANSWERED", "ship after lunch", "ctl")]
        assert all(e["author"] for e in ledger)
    finally:
        s.stop()
