"""A small deterministic kit for driving goldfive's runtime in tests.

- ``ScriptedAgent``: an async callable agent whose tasks can be *held* on an asyncio.Event the
  test releases, so "mid-task" is exact and nothing sleeps. Every start is announced on a queue.
- ``ReplanningPlanner``: keyword-only Planner that replans instantly on a drift: the new plan
  keeps every COMPLETED task and adds new tasks whose titles contain the steer note.
- ``Harness``: a Runner wired to an InMemorySink and a ControlChannel, with helpers to send
  controls, await their acks (collected by control id) and await events.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Iterable

import pytest

from goldfive import events
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.executors.sequential import SequentialExecutor
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.planners.static import StaticPlanner
from goldfive.results import ExecutionOutcome
from goldfive.runner import Runner
from goldfive.run import RuntimeConfig
from goldfive.sinks.memory import InMemorySink
from goldfive.types import DriftEvent, DriftKind, Goal, Plan, Session, Task, TaskEdge, TaskStatus

EXECUTORS: dict[str, Callable[[], Any]] = {
    "sequential": SequentialExecutor,
    "parallel": lambda: ParallelDAGExecutor(max_concurrency=4),
}

Behaviour = Callable[[Task, Session, dict[str, Any]], Awaitable[Any]]


def linear_plan(*ids: str) -> Plan:
    tasks = [Task(id=i, title=i.upper(), description=f"do {i}") for i in ids]
    edges = [TaskEdge(a, b) for a, b in zip(ids, ids[1:])]
    return Plan(tasks=tasks, edges=edges, id="p1", summary="linear")


def kinds(evs: Iterable[Event]) -> list[str]:
    return [events.kind_of(e) for e in evs]


def is_subsequence(needle: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(any(k == h for h in it) for k in needle)


class ScriptedAgent:
    """``async def agent(task, session, tools)``; returns ``"done <id>"``.

    ``hold(*ids)`` makes the next invocation of those tasks wait until ``release(id)``.
    ``on(id, fn)`` replaces the body for a task with ``await fn(task, session, tools)``.
    ``stubborn(id)`` makes a held task ignore cancellation until released.
    """

    def __init__(self, hold: Iterable[str] = ()) -> None:
        self.runs: list[str] = []
        self.cancelled: list[str] = []
        self.finished: list[str] = []
        self.starts: asyncio.Queue[str] = asyncio.Queue()
        self._gates: dict[str, asyncio.Event] = {}
        self._bodies: dict[str, Behaviour] = {}
        self._stubborn: set[str] = set()
        self._ended: dict[str, asyncio.Event] = {}
        #: Hold every invocation (until ``open_all``); ``waiting`` lists the held ones in order.
        self.hold_every = False
        self.waiting: list[str] = []
        self.hold(*hold)

    def hold(self, *ids: str) -> None:
        for i in ids:
            self._gates[i] = asyncio.Event()

    def release(self, *ids: str) -> None:
        for i in ids:
            gate = self._gates.pop(i, None)
            if gate is not None:
                gate.set()

    def open_all(self) -> None:
        """Stop holding: release every held task and hold nothing from now on."""
        self.hold_every = False
        self.release(*list(self._gates))

    def on(self, task_id: str, fn: Behaviour) -> None:
        self._bodies[task_id] = fn

    def stubborn(self, task_id: str) -> None:
        self._stubborn.add(task_id)

    async def started(self) -> str:
        """The id of the next task whose invocation started."""
        return await asyncio.wait_for(self.starts.get(), 5)

    async def __call__(self, task: Task, session: Session, tools: dict[str, Any]) -> Any:
        self.runs.append(task.id)
        self.starts.put_nowait(task.id)
        if self.hold_every and task.id not in self._gates:
            self.hold(task.id)
        try:
            gate = self._gates.get(task.id)
            if gate is not None:
                self.waiting.append(task.id)
                try:
                    await self._wait(task.id, gate)
                finally:
                    self.waiting.remove(task.id)
            body = self._bodies.get(task.id)
            out = await body(task, session, tools) if body is not None else f"done {task.id}"
        except asyncio.CancelledError:
            self.cancelled.append(task.id)
            raise
        finally:
            self._ended.setdefault(task.id, asyncio.Event()).set()
        self.finished.append(task.id)
        return out

    async def finished_event(self, task_id: str) -> None:
        """Wait until an invocation of ``task_id`` has ended (any way)."""
        await asyncio.wait_for(self._ended.setdefault(task_id, asyncio.Event()).wait(), 5)

    async def _wait(self, task_id: str, gate: asyncio.Event) -> None:
        if task_id not in self._stubborn:
            await gate.wait()
            return
        while not gate.is_set():  # not a poll: each turn awaits the gate
            try:
                await gate.wait()
            except asyncio.CancelledError:
                continue  # ignores cancellation until released


class ReplanningPlanner:
    """Keyword-only planner that replans instantly.

    refine: keep every COMPLETED task; add ``per_steer`` new chained tasks whose titles
    contain the drift's note (USER_STEER) or detail; ``fail_refines`` makes refine return None.
    """

    def __init__(self, plan: Plan, *, per_steer: int = 1, fail_refines: bool = False) -> None:
        self.plan = plan
        self.per_steer = per_steer
        self.fail_refines = fail_refines
        self.generate_calls: list[dict[str, Any]] = []
        self.refine_calls: list[dict[str, Any]] = []

    async def generate(
        self, *, goals: list[Goal], available_agents: list[str], context: dict[str, Any] | None = None
    ) -> Plan | None:
        self.generate_calls.append({"goals": goals, "available_agents": available_agents, "context": context})
        return Plan(tasks=[replace(t) for t in self.plan.tasks], edges=list(self.plan.edges), id=self.plan.id)

    async def refine(self, *, plan: Plan, drift: DriftEvent, goals: list[Goal]) -> Plan | None:
        self.refine_calls.append({"plan": plan, "drift": drift, "goals": goals})
        if self.fail_refines:
            return None
        n = len(self.refine_calls)
        note = str(drift.metadata.get("note") or drift.detail) if drift.kind == DriftKind.USER_STEER else drift.detail
        kept = [replace(t) for t in plan.tasks if t.status == TaskStatus.COMPLETED]
        new = [Task(id=f"r{n}_{k}", title=f"{note} #{k}") for k in range(1, self.per_steer + 1)]
        edges = [TaskEdge(a.id, b.id) for a, b in zip(new, new[1:])]
        return Plan(tasks=kept + new, edges=edges, id=f"p{n + 1}", summary=f"after {drift.kind}")


@dataclass
class Harness:
    """A Runner with an InMemorySink and a ControlChannel; acks collected by control id."""

    agent: Any
    executor: Any
    planner: Any
    config: RuntimeConfig | None = None
    with_control: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sink = InMemorySink()
        self.channel: ControlChannel | None = ControlChannel() if self.with_control else None
        self.runner = Runner(
            agent=self.agent,
            planner=self.planner,
            executor=self.executor,
            sinks=[self.sink],
            control=self.channel,
            config=self.config,
            **self.extra,
        )
        self.acks: dict[str, list[ControlAck]] = {}
        self._ack_waiters: dict[str, asyncio.Event] = {}
        self._collector: asyncio.Task[None] | None = None
        self.run_task: asyncio.Task[ExecutionOutcome] | None = None
        if self.channel is not None:
            self._collector = asyncio.get_running_loop().create_task(self._collect())

    async def _collect(self) -> None:
        assert self.channel is not None
        async for ack in self.channel.acks():
            self.acks.setdefault(ack.control_id, []).append(ack)
            self._ack_waiters.setdefault(ack.control_id, asyncio.Event()).set()

    # -- running -------------------------------------------------------------------
    def start(self, user_input: str | list[Goal] = "go") -> asyncio.Task[ExecutionOutcome]:
        self.run_task = asyncio.get_running_loop().create_task(self.runner.run(user_input))
        return self.run_task

    async def outcome(self) -> ExecutionOutcome:
        assert self.run_task is not None
        # a guard, not a measure: a loaded machine starting a CLI per task (Claude Code) needs more than 5 s
        return await asyncio.wait_for(self.run_task, 30)

    async def finish(self) -> ExecutionOutcome:
        """Wait for the run, close the channel, collect every ack, close the runner."""
        out = await self.outcome()
        await self.shutdown()
        return out

    async def shutdown(self) -> None:
        if self.channel is not None:
            self.channel.close()
        if self._collector is not None:
            await asyncio.wait_for(self._collector, 5)
        await self.runner.close()

    # -- controls ------------------------------------------------------------------
    async def send(self, kind: ControlKind | str, msg_id: str | None = None, **payload: Any) -> ControlMessage:
        assert self.channel is not None
        msg = ControlMessage(kind, payload=payload) if msg_id is None else ControlMessage(kind, id=msg_id, payload=payload)
        await self.channel.send(msg)
        return msg

    async def ack(self, msg: ControlMessage) -> ControlAck:
        """The (first) ack of ``msg``, waiting for it."""
        waiter = self._ack_waiters.setdefault(msg.id, asyncio.Event())
        await asyncio.wait_for(waiter.wait(), 5)
        return self.acks[msg.id][0]

    async def control(self, kind: ControlKind | str, msg_id: str | None = None, **payload: Any) -> ControlAck:
        """Send and wait for the ack."""
        return await self.ack(await self.send(kind, msg_id, **payload))

    # -- events --------------------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        return self.sink.events

    def kinds(self) -> list[str]:
        return kinds(self.sink.events)

    def of(self, kind: str) -> list[Any]:
        """Payloads of every event of ``kind``."""
        return [getattr(e, kind) for e in self.sink.events if events.kind_of(e) == kind]

    async def wait_event(self, kind: str, pred: Callable[[Any], bool] = lambda p: True) -> Event:
        """The first recorded or future event of ``kind`` whose payload satisfies ``pred``."""

        async def find() -> Event:
            async for ev in self.sink.subscribe():
                if isinstance(ev, Event) and events.kind_of(ev) == kind and pred(getattr(ev, kind)):
                    return ev
            raise AssertionError(f"the sink closed before a {kind} event arrived")

        return await asyncio.wait_for(find(), 5)

    def statuses(self) -> dict[str, TaskStatus]:
        plan = self.runner.session.plan if self.runner.session else None
        return {t.id: t.status for t in plan.tasks} if plan else {}


def ack_ok(ack: ControlAck) -> bool:
    return ack.result == AckResult.SUCCESS


def static(*ids: str) -> StaticPlanner:
    return StaticPlanner(linear_plan(*ids))


@pytest.fixture(params=sorted(EXECUTORS))
def executor(request: pytest.FixtureRequest) -> Any:
    """Every behaviour test runs once per executor."""
    return EXECUTORS[request.param]()
