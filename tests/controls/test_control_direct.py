"""A control answered in its sender's call (issue 27): while the executor waits parked on a
running batch with nothing queued, a STATUS_QUERY, APPROVE, REJECT or ANSWER is handled in the
``send`` itself (ControlChannel.answer_directly), in the run's context, with no task switch on
either side; everything a control promises still holds (recorded, then acked, then its effect;
one at a time, in send order; the ack after a durable commit)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from goldfive.aio import start_eagerly
from goldfive.control import AckResult, ControlChannel, ControlKind, ControlMessage
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink
from goldfive.testing import until
from goldfive.types import Goal, Plan, Session, Task

EXECUTORS = [SequentialExecutor, ParallelDAGExecutor]


def _kinds(sink: InMemorySink) -> list[str]:
    return [e.WhichOneof("payload") or "" for e in sink.events]


class _Rig:
    """A one-task run whose agent holds until released; the executor waits parked on it."""

    def __init__(self, executor: type, sinks: list[Any], agent: Any = None) -> None:
        self.gate, self.started = asyncio.Event(), asyncio.Event()

        async def held(task: Task, session: Session) -> str:
            self.started.set()
            await self.gate.wait()
            return "ok"

        self.ch = ControlChannel()
        plan = Plan(tasks=[Task("a", "a")], id="p")
        self.runner = Runner(agent=agent or held, planner=StaticPlanner(plan), executor=executor(), sinks=sinks, control=self.ch)
        self.run: asyncio.Future[Any] | None = None

    async def __aenter__(self) -> _Rig:
        self.run = asyncio.ensure_future(self.runner.run([Goal("g1", "direct")]))
        await self.started.wait()
        for _ in range(3):  # the executor is parked on its batch now
            await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.gate.set()
        assert self.run is not None
        await until(lambda: self.run is not None and self.run.done())
        self.ch.close()
        await self.runner.close()


@pytest.mark.parametrize("executor", EXECUTORS)
async def test_a_status_query_sent_while_a_task_runs_is_answered_in_the_send_itself(executor: type) -> None:
    sink = InMemorySink()
    async with _Rig(executor, [sink]) as rig:
        before = len(sink.events)
        rig.ch.send_nowait(ControlMessage(ControlKind.STATUS_QUERY, id="q1"))
        # No await in between: recorded, acked and its snapshot out before send returned.
        assert _kinds(sink)[before:] == ["control_received", "control_acked", "drift_detected"]
        ack = rig.ch._outbox.get_nowait()
        assert (ack.control_id, ack.result) == ("q1", AckResult.SUCCESS)
        # It ran in the run's context (the snapshot's drift is the steerer's, which finds the run
        # as goldfive.run.current()), not in this test's, where no run is bound.
        assert sink.events[-1].drift_detected.detail.startswith("status_query control_id=q1 current_task=a")
        ack2 = await rig.ch.request(ControlMessage(ControlKind.STATUS_QUERY, id="q2"))
        assert ack2.result == AckResult.SUCCESS and ack2.control_id == "q2"
    assert rig.run is not None and (await rig.run).success


@pytest.mark.parametrize("executor", EXECUTORS)
async def test_a_control_queued_first_is_handled_first_and_a_pause_still_goes_through_the_executor(executor: type) -> None:
    sink = InMemorySink()
    async with _Rig(executor, [sink]) as rig:
        acks: list[str] = []
        rig.ch.send_nowait(ControlMessage(ControlKind.PAUSE, id="p1"))  # queued: not a direct kind
        rig.ch.send_nowait(ControlMessage(ControlKind.STATUS_QUERY, id="q1"))  # queued behind it
        assert "control_received" not in _kinds(sink)
        await until(lambda: rig.ch._outbox.qsize() == 2)
        acks = [rig.ch._outbox.get_nowait().control_id for _ in range(2)]
        assert acks == ["p1", "q1"]
        received = [e.control_received.control.id for e in sink.events if e.WhichOneof("payload") == "control_received"]
        assert received == ["p1", "q1"]
        await rig.ch.request(ControlMessage(ControlKind.RESUME))


class _SlowSink:
    """A sink whose emit waits on ``go`` for a control_received of ``slow_id``: a direct answer
    suspends in the middle of its handling."""

    def __init__(self, slow_id: str) -> None:
        self.slow_id = slow_id
        self.go = asyncio.Event()
        self.kinds: list[tuple[str, str]] = []

    async def emit(self, ev: Any) -> None:
        kind = ev.WhichOneof("payload")
        cid = ev.control_received.control.id if kind == "control_received" else ev.control_acked.ack.control_id if kind == "control_acked" else ""
        if kind == "control_received" and cid == self.slow_id:
            await self.go.wait()
        self.kinds.append((kind, cid))

    async def close(self) -> None:
        pass


@pytest.mark.parametrize("executor", EXECUTORS)
async def test_a_direct_answer_that_has_to_wait_finishes_before_the_next_control_is_handled(executor: type) -> None:
    slow = _SlowSink("q1")
    async with _Rig(executor, [slow]) as rig:
        first = asyncio.ensure_future(rig.ch.request(ControlMessage(ControlKind.STATUS_QUERY, id="q1")))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(rig.ch.request(ControlMessage(ControlKind.STATUS_QUERY, id="q2")))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not first.done() and not second.done()  # q1 waits in its sink; q2 waits for q1
        slow.go.set()
        assert (await first).result == AckResult.SUCCESS and (await second).result == AckResult.SUCCESS
        controls = [k for k in slow.kinds if k[1]]
        assert controls == [("control_received", "q1"), ("control_acked", "q1"), ("control_received", "q2"), ("control_acked", "q2")]


class _DurableSink(InMemorySink):
    """An in-memory sink with a ``sync`` (a durable recorder's commit) that waits on ``commit``."""

    def __init__(self) -> None:
        super().__init__()
        self.commit = asyncio.Event()
        self.commit.set()
        self.synced = 0

    async def sync(self) -> None:
        await self.commit.wait()
        self.synced = len(self.events)


@pytest.mark.parametrize("executor", EXECUTORS)
async def test_with_a_durable_sink_a_direct_answer_is_acked_only_once_its_record_is_committed(executor: type) -> None:
    sink = _DurableSink()
    async with _Rig(executor, [sink]) as rig:
        sink.commit.clear()
        acked = asyncio.ensure_future(rig.ch.request(ControlMessage(ControlKind.STATUS_QUERY, id="q1")))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not acked.done() and rig.ch._outbox.empty()  # control_acked is written, not committed
        assert _kinds(sink)[-1] == "control_acked"
        sink.commit.set()
        ack = await acked
        assert ack.result == AckResult.SUCCESS and sink.synced >= len(_kinds(sink)) - 1


async def test_an_approve_sent_while_the_agent_waits_is_decided_in_the_send_itself() -> None:
    from goldfive.adapters.callable import CallableAdapter
    from goldfive.run.user_tools import UserTool

    ran: list[int] = []

    def publish(n: int) -> dict[str, Any]:
        ran.append(n)
        return {"ok": True}

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        await tools["publish"](n=1)
        return "ok"

    sink, ch = InMemorySink(), ControlChannel()
    adapter = CallableAdapter(agent, tools=[UserTool(publish, requires_approval=True)])
    plan = Plan(tasks=[Task("a", "a")], id="p")
    runner = Runner(agent=adapter, planner=StaticPlanner(plan), sinks=[sink], control=ch)
    run = asyncio.ensure_future(runner.run([Goal("g1", "direct")]))
    try:
        await until(lambda: "approval_requested" in _kinds(sink))
        for _ in range(3):
            await asyncio.sleep(0)
        target = next(e.approval_requested.target_id for e in sink.events if e.WhichOneof("payload") == "approval_requested")
        before = len(sink.events)
        ch.send_nowait(ControlMessage(ControlKind.APPROVE, id="a1", payload={"target_id": target, "author": "ann"}))
        # Decided in the send: recorded, acked, granted and in the ledger, before the tool ran.
        assert _kinds(sink)[before:] == ["control_received", "control_acked", "approval_granted", "approval_decided"]
        assert ran == []
        decided = sink.events[-1].approval_decided
        assert (decided.author, decided.control_id, decided.outcome) == ("ann", "a1", "APPROVED")
        out = await run
        assert out.success and ran == [1]
    finally:
        await until(lambda: run.done())
        ch.close()
        await runner.close()


async def test_an_executor_with_its_own_control_hook_gets_every_control_through_its_queue() -> None:
    from goldfive.run.dispatch import ControlOutcome, dispatch_control

    seen: list[str] = []

    class Hooked(SequentialExecutor):
        async def _handle_custom(self, msg: ControlMessage, *, session: Session, **kw: Any) -> ControlOutcome:
            seen.append(str(msg.kind))
            return await dispatch_control(msg, session=session, **kw)

    sink = InMemorySink()
    async with _Rig(Hooked, [sink]) as rig:
        rig.ch.send_nowait(ControlMessage(ControlKind.STATUS_QUERY, id="q1"))
        assert "control_received" not in _kinds(sink)  # queued for the executor, not answered here
        await until(lambda: rig.ch._outbox.qsize() == 1)
        assert seen == ["STATUS_QUERY"]


async def test_start_eagerly_runs_to_the_first_suspension_then_carries_on_in_a_task_in_the_same_context() -> None:
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("v", default="caller")
    ctx = contextvars.copy_context()
    ctx.run(var.set, "run")
    gate = asyncio.Event()
    seen: list[str] = []

    async def work() -> str:
        seen.append(var.get())
        await gate.wait()
        seen.append(var.get())
        return "done"

    async def quick() -> None:
        seen.append("quick " + var.get())

    assert start_eagerly(quick(), ctx) is None and seen == ["quick run"]
    seen.clear()
    job = start_eagerly(work(), ctx)
    assert job is not None and seen == ["run"] and var.get() == "caller"
    gate.set()
    assert await job == "done" and seen == ["run", "run"]

    async def broken() -> None:
        raise ValueError("boom")

    failed = start_eagerly(broken(), ctx)
    assert failed is not None
    with pytest.raises(ValueError, match="boom"):
        await failed

    gate2 = asyncio.Event()

    async def waits() -> None:
        await gate2.wait()

    job2 = start_eagerly(waits(), ctx)
    assert job2 is not None
    job2.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job2


@pytest.mark.parametrize("kind", [ControlKind.STATUS_QUERY, ControlKind.PAUSE])
async def test_a_control_whose_payload_is_not_an_object_is_refused_and_the_run_goes_on(kind: ControlKind) -> None:
    sink = InMemorySink()
    async with _Rig(SequentialExecutor, [sink]) as rig:
        msg = ControlMessage(kind, id="bad")
        msg.payload = ["not", "an", "object"]  # type: ignore[assignment]
        ack = await asyncio.wait_for(rig.ch.request(msg), 5)
        assert ack.result == AckResult.FAILURE and "payload must be a JSON object" in ack.detail
        [received] = [e for e in sink.events if e.WhichOneof("payload") == "control_received"]
        assert received.control_received.control.id == "bad"  # recorded, without its payload
    assert rig.run is not None and (await rig.run).success
