"""What the phone, link and approvers tests share: a real hub (``serve()``, its own event loop
in a thread) with named operator tokens, a hosted run whose agent calls a ``deploy`` tool that
needs approval, and optionally the approval pages (``--http``) and notice routes."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from goldfive.adapters.callable import CallableAdapter
from goldfive.budget import Budget
from goldfive.approvals.approvers import Approvers
from goldfive.approvals.policy import ApprovalPolicy, ApprovalReminders
from goldfive.phone.config import PhoneConfig
from goldfive.planners.static import StaticPlanner
from goldfive.remote.launch import Launch
from goldfive.remote.server import RemoteServer, serve
from goldfive.run.user_tools import UserTool
from goldfive.runner import Runner
from goldfive.types import Plan, Session, Task

#: Operator tokens of the hub: name -> secret.
TOKENS = {"alice": "alice-secret-token-0001", "bob": "bob-secret-token-00002", "carol": "carol-secret-token-0003"}
#: Long arguments: a phone page must wrap them, never scroll sideways.
LONG_ARGS = {
    "service": "payments-api",
    "replicas": 3,
    "image": "registry.example.com/platform/payments-api@sha256:" + "0123456789abcdef" * 4,
    "note": "Roll out the fix for the double-charge bug found in last night's batch; keep the old replica set for an hour.",
}


class PhoneHub:
    """``serve()`` with a run that asks to ``deploy`` each of ``calls`` in turn."""

    def __init__(
        self,
        tmp: Path,
        *,
        approvers: tuple[str, ...] = (),
        http: bool = True,
        calls: list[dict[str, Any]] | None = None,
        notify: tuple[str, ...] = (),
        escalate: tuple[str, ...] = (),
        reminders: ApprovalReminders | None = None,
        link_ttl_s: float = 3600.0,
        policy: ApprovalPolicy | None = None,
        tokens: dict[str, str] | None = None,
        runner_tokens: dict[str, str] | None = None,
        questions: list[dict[str, Any]] | None = None,
        budget: Budget | None = None,
        approval: bool = True,
    ) -> None:
        self.tmp = tmp
        self.ran: list[dict[str, Any]] = []
        #: ``ask_person`` calls the agent makes before its deploy calls, and what each returned.
        self.questions = questions or []
        self.answers: list[dict[str, Any]] = []
        self.calls = calls if calls is not None else [LONG_ARGS]
        self.policy = policy
        #: The run's budget, and whether its deploy calls need approval.
        self.budget, self.approval = budget, approval
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        tokens = TOKENS if tokens is None else tokens
        kwargs: dict[str, Any] = dict(
            notify_cmd=list(notify), escalate_cmd=list(escalate), reminders=reminders,
            approvers=Approvers.parse(approvers) if approvers else None,
            http=PhoneConfig("127.0.0.1:0", link_ttl_s=link_ttl_s) if http else None,
            runner_token=[f"{n}={s}" for n, s in (runner_tokens or {}).items()],
        )  # fmt: skip
        self.server: RemoteServer = self.call(self._start([f"{n}={s}" for n, s in tokens.items()], kwargs))
        (run,) = self.server.host.runs()
        self.run_id = run.run_id

    def call(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self, tokens: list[str], kwargs: dict[str, Any]) -> RemoteServer:
        ready: asyncio.Future[RemoteServer] = self.loop.create_future()
        launch = Launch(self._factory, "deploy the fix")
        self.task = self.loop.create_task(
            serve("127.0.0.1:0", tokens, db_path=str(self.tmp / "hub.sqlite"), runs=[launch], ready=ready, **kwargs)
        )
        done, _ = await asyncio.wait({ready, self.task}, return_when=asyncio.FIRST_COMPLETED)
        if self.task in done:
            self.task.result()  # raises what serve raised
        return ready.result()

    def _factory(self, *, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
        async def deploy(service: str, replicas: int, image: str = "", note: str = "") -> str:
            """Deploy a service."""
            self.ran.append({k: v for k, v in {"service": service, "replicas": replicas, "image": image, "note": note}.items() if v})
            return "deployed"

        async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
            for ask in self.questions:
                self.answers.append(await tools["ask_person"](**ask))
            for args in self.calls:
                await tools["deploy"](**args)
            return "ok"

        adapter = CallableAdapter(agent, tools=[UserTool(deploy, requires_approval=self.approval, policy=self.policy)])
        plan = Plan([Task("ship", "Ship the payments fix")], [], id="p")
        return Runner(agent=adapter, planner=StaticPlanner(plan), sinks=sinks, control=control, run_id=run_id, budget=self.budget)

    @property
    def addr(self) -> str:
        return self.server.address

    @property
    def pages(self) -> Any:
        return self.server.pages

    async def _requested(self, n: int) -> str:
        run = self.server.host.get(self.run_id)
        assert run is not None
        seen = []
        async for ev in run.stream(-1):
            if ev.WhichOneof("payload") == "approval_requested":
                seen.append(ev.approval_requested.target_id)
                if len(seen) == n:
                    return seen[-1]
        raise AssertionError("the run ended first")

    def requested(self, n: int = 1) -> str:
        """The target id of the n-th approval the run asked for, once the hub holds it."""
        return str(self.call(asyncio.wait_for(self._requested(n), 20)))

    def link(self, target_id: str, to: str = "link") -> str:
        """A link to ``target_id`` issued to ``to``, as a notice would carry it."""
        async def make() -> str:
            from goldfive.phone.items import KINDS

            run = self.server.host.get(self.run_id)
            assert run is not None
            item = KINDS["approval"].find(self.run_id, run.state, target_id)
            assert item is not None
            return str(self.pages.link_url(item, to))

        return str(self.call(make()))

    def events(self) -> list[Any]:
        run = self.server.host.get(self.run_id)
        assert run is not None
        return list(run.events_after(-1))

    def ledger(self) -> list[Any]:
        from goldfive.approvals import ledger_of

        return ledger_of(self.events())

    def wait_ran(self, n: int = 1, timeout: float = 20) -> list[dict[str, Any]]:
        async def wait() -> None:
            while len(self.ran) < n:
                await asyncio.sleep(0.02)

        self.call(asyncio.wait_for(wait(), timeout), timeout + 5)
        return self.ran

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.task.cancel)

        async def settle() -> None:
            await asyncio.gather(self.task, return_exceptions=True)

        try:
            self.call(settle(), 30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


def notices(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
