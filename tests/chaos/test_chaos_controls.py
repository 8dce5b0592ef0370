"""Random controls at random moments in both executors, and what INJECT_MESSAGE becomes.

Each run: a random plan (1-4 tasks, random edges), an agent whose tasks take a random few
milliseconds, sometimes read their injected messages and (t2) sometimes ask for approval with
a short timeout; a sender that fires random controls at random moments, valid, invalid and
unencodable. After the run: every control got exactly one ack (none lost, none twice, none
stray), sequences are gap-free from 0, the terminal event is the only one and last, and every
parked INJECT_MESSAGE ended delivered or returned (never both, never neither).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter, defaultdict
from typing import Any

import pytest

from goldfive import events, read_injected
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.types import Plan, Session, Task, TaskEdge
from tests.chaos.conftest import Chaos
from tests.chaos.tally import TALLY
from tests.runtime_kit import EXECUTORS, ReplanningPlanner

pytestmark = pytest.mark.chaos

K = ControlKind
HANG_S = 15.0  # a run that has not ended this long after its last control is a hang
BIG = "x" * (64 * 1024 + 1)  # over the 64 KiB payload limit


def _valid(rng: random.Random) -> tuple[ControlKind | str, dict[str, Any]]:
    return rng.choice(
        [
            (K.PAUSE, {}),
            (K.RESUME, {}),
            (K.STATUS_QUERY, {}),
            (K.INTERCEPT_TRANSFER, {"enabled": rng.random() < 0.5}),
            (K.STEER, {"note": rng.choice(["left", "go faster", "ünïcødé ✓"])}),
            (K.STEER, {"note": "right", "annotation_id": "ann", "author": "al"}),
            (K.REWIND_TO, {"task_id": rng.choice(["t1", "t2", "t3", "zz"])}),
            (K.INJECT_MESSAGE, {"text": f"note {rng.randrange(1000)}"}),
            (K.INJECT_MESSAGE, {"text": "as system", "role": "system"}),
            (K.APPROVE, {"target_id": rng.choice(["t2", "nope"])}),
            (K.REJECT, {"target_id": "t2", "detail": "no"}),
            (K.GOLDFIVE_STEER, {"note": "ladder says hi"}),
            (K.GOLDFIVE_PAUSE_ESCALATE, {}),
            (K.CANCEL, {"reason": "enough"}),
        ]
    )


def _invalid(rng: random.Random) -> tuple[ControlKind | str, dict[str, Any]]:
    return rng.choice(
        [
            (K.STEER, {"note": ""}),
            (K.STEER, {"note": "   "}),
            (K.STEER, {"note": "n" * (8 * 1024 + 1)}),  # over the 8 KiB note limit
            (K.INJECT_MESSAGE, {}),
            (K.REWIND_TO, {}),
            (K.APPROVE, {"target_id": ""}),
            (K.REWIND_TO, {"task_id": "t" * 300}),  # an id over 256 characters
            ("CHECKPOINT", {}),
            ("no such verb", {"x": 1}),
            ("pause_later", {}),
        ]
    )


def _unencodable(rng: random.Random) -> tuple[ControlKind | str, dict[str, Any]]:
    kind = rng.choice([K.STEER, K.INJECT_MESSAGE, K.REWIND_TO, K.APPROVE, "CUSTOM"])
    key = {K.STEER: "note", K.INJECT_MESSAGE: "text", K.REWIND_TO: "task_id", K.APPROVE: "target_id"}.get(kind, "v")
    value = rng.choice(
        [b"bytes", {1, 2}, "\ud800", "ok \udfff", math.nan, math.inf, BIG, object(), {"deep": [[b"x"]]}, {(1, 2): "tuple key"}]
    )
    return kind, {key: value}


def random_control(rng: random.Random) -> tuple[ControlMessage, str]:
    """A control and its class: "valid", "invalid" or "unencodable"."""
    roll = rng.random()
    if roll < 0.6:
        cls, (kind, payload) = "valid", _valid(rng)
    elif roll < 0.8:
        cls, (kind, payload) = "invalid", _invalid(rng)
    else:
        cls, (kind, payload) = "unencodable", _unencodable(rng)
    msg = ControlMessage(kind, payload=payload)
    extra = rng.random()
    if extra < 0.03:
        msg.id = msg.id + "i" * rng.choice([225, 300, 5000])  # ids over 256 characters
        cls = "invalid"
    elif extra < 0.05:
        msg.payload = ["not", "a", "dict"]  # type: ignore[assignment]
        cls = "invalid"
    return msg, cls


def random_plan(rng: random.Random) -> Plan:
    n = rng.randint(1, 4)
    ids = [f"t{i}" for i in range(1, n + 1)]
    edges = [TaskEdge(a, b) for a, b in zip(ids, ids[1:]) if rng.random() < 0.7]
    return Plan(tasks=[Task(i, i.upper()) for i in ids], edges=edges, id="p1")


def make_agent(rng: random.Random) -> Any:
    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for _ in range(rng.randint(0, 4)):
            await asyncio.sleep(rng.choice([0, 0.0005, 0.002, 0.005]))
            if rng.random() < 0.5:
                await read_injected(session, task.id)
        if task.id == "t2" and rng.random() < 0.3:
            await tools["report_awaiting_approval"](prompt="ok?", timeout_ms=rng.choice([5, 30]))
        return f"done {task.id}"

    return agent


class RunRecord:
    def __init__(self) -> None:
        self.sent: list[tuple[ControlMessage, str]] = []
        self.acks: dict[str, list[ControlAck]] = defaultdict(list)
        self.hang = False
        self.events: list[Any] = []


async def one_run(executor_name: str, rng: random.Random, max_controls: int) -> RunRecord:
    rec = RunRecord()
    sink = InMemorySink()
    channel = ControlChannel()
    runner = Runner(
        agent=make_agent(rng),
        planner=ReplanningPlanner(random_plan(rng), per_steer=rng.randint(1, 2)),
        executor=EXECUTORS[executor_name](),
        sinks=[sink],
        control=channel,
    )

    async def collect() -> None:
        async for ack in channel.acks():
            rec.acks[ack.control_id].append(ack)

    collector = asyncio.create_task(collect())
    run = asyncio.create_task(runner.run("chaos"))
    for _ in range(rng.randint(0, max_controls)):
        if run.done() and rng.random() < 0.7:
            break  # most runs stop here; the rest also test controls sent after the end
        await asyncio.sleep(rng.choice([0, 0, 0, 0.0002, 0.001, 0.004]))
        msg, cls = random_control(rng)
        await channel.send(msg)  # also after the run ended: acked FAILURE "run not active"
        rec.sent.append((msg, cls))
    if not run.done():  # a PAUSE left standing must not wedge the run
        resume = ControlMessage(K.RESUME)
        await channel.send(resume)
        rec.sent.append((resume, "valid"))
    try:
        await asyncio.wait_for(asyncio.shield(run), HANG_S)
    except TimeoutError:
        rec.hang = True
        run.cancel()
    except Exception:  # a run that raised still has its RunAborted; the stream is judged below
        pass
    await asyncio.gather(run, return_exceptions=True)
    channel.close()
    try:
        await asyncio.wait_for(runner.close(), HANG_S)
        await asyncio.wait_for(collector, HANG_S)
    except TimeoutError:
        rec.hang = True
        collector.cancel()
    rec.events = list(sink.events)
    return rec


def judge(rec: RunRecord, problems: list[str]) -> None:
    """Add this run's figures to the tally and its invariant breaks to ``problems``."""
    ids = [m.id for m, _ in rec.sent]
    sent = set(ids)
    assert len(sent) == len(ids), "the generator made two controls with one id"
    lost = [i for i in ids if not rec.acks.get(i)]
    dup = [i for i in ids if len(rec.acks.get(i, [])) > 1]
    stray = [i for i in rec.acks if i not in sent]
    results = Counter(a.result for i in ids for a in rec.acks.get(i, [])[:1])
    refused = sum(1 for (m, cls) in rec.sent if cls != "valid" and rec.acks.get(m.id) and rec.acks[m.id][0].result != AckResult.SUCCESS)
    for m, cls in rec.sent:
        acks = rec.acks.get(m.id)
        if cls == "unencodable" and acks and acks[0].result == AckResult.SUCCESS:
            problems.append(f"unencodable control {m.kind!r} {ascii(m.payload)[:80]} was acked SUCCESS")
    evs = rec.events
    ks = [events.kind_of(e) for e in evs]
    gaps = [e.sequence for e in evs] != list(range(len(evs)))
    body = ks[:-1] if ks and ks[-1] == "conversation_ended" else ks
    terminals = [k for k in ks if k in ("run_completed", "run_aborted")]
    terminal_last = len(terminals) == 1 and bool(body) and body[-1] == terminals[0]
    # The audit trail: every control the run received is acked on the stream, once.
    received = Counter(e.control_received.control.id for e, k in zip(evs, ks) if k == "control_received")
    acked = Counter(e.control_acked.ack.control_id for e, k in zip(evs, ks) if k == "control_acked")
    if received != acked or any(n != 1 for n in acked.values()):
        problems.append(f"audit trail: received {dict(received)} acked {dict(acked)}")
    TALLY.add(
        runs=1,
        controls=len(ids),
        acked_once=sum(1 for i in ids if len(rec.acks.get(i, [])) == 1),
        lost=len(lost),
        duplicated=len(dup),
        stray_acks=len(stray),
        hangs=int(rec.hang),
        sequence_gaps=int(gaps),
        terminal_not_last=int(not terminal_last),
        ack_success=results[AckResult.SUCCESS],
        ack_failure=results[AckResult.FAILURE],
        ack_unsupported=results[AckResult.UNSUPPORTED],
        refused_invalid=refused,
    )
    for what, bad in (("lost", lost), ("acked more than once", dup), ("stray acks", stray)):
        if bad:
            problems.append(f"{len(bad)} controls {what}: {[ascii(i)[:40] for i in bad[:3]]}")
    if rec.hang:
        problems.append("the run did not end in time")
    if gaps:
        problems.append(f"sequence gap: {[e.sequence for e in evs][:50]}")
    if not terminal_last:
        problems.append(f"terminal event not last / not single: {ks[-4:]}")
    judge_injections(rec, evs, ks, problems)


def judge_injections(rec: RunRecord, evs: list[Any], ks: list[str], problems: list[str]) -> None:
    steps: dict[str, list[str]] = defaultdict(list)  # message id -> parked/delivered/returned, in order
    by_control: dict[str, str] = {}
    for e, k in zip(evs, ks):
        if k == "message_parked":
            steps[e.message_parked.message_id].append("parked")
            by_control[e.message_parked.control_id] = e.message_parked.message_id
        elif k == "message_delivered":
            steps[e.message_delivered.message_id].append("next_turn" if e.message_delivered.via == "next_turn" else "delivered")
        elif k == "message_returned":
            steps[e.message_returned.message_id].append("returned")
    injects = [m for m, cls in rec.sent if m.kind == K.INJECT_MESSAGE]
    accepted = [m for m in injects if rec.acks.get(m.id) and rec.acks[m.id][0].result == AckResult.SUCCESS]
    delivered = next_turn = returned = lost = both = twice = 0
    for m in accepted:
        mid = by_control.get(m.id)
        if mid is None:
            lost += 1
            problems.append(f"INJECT_MESSAGE {m.id} acked SUCCESS but never parked")
            continue
        s = steps[mid]
        n_delivered = sum(1 for x in s if x in ("delivered", "next_turn"))
        if s[0] != "parked" or s.count("parked") != 1:
            problems.append(f"message {mid}: {s}")
        if n_delivered > 1:
            twice += 1
        elif n_delivered == 1 and s[-1] == "returned":  # handed back after it was delivered
            both += 1
        elif n_delivered == 1:
            delivered += 1
            next_turn += int("next_turn" in s)
        elif s[-1] == "returned":
            returned += 1
        else:
            lost += 1
        if n_delivered > 1 or (n_delivered == 1 and s[-1] == "returned") or s[-1] == "parked":
            problems.append(f"message {mid} ended as {s}")
    TALLY.add(
        inject_sent=len(injects),
        inject_parked=len(accepted) - sum(1 for m in accepted if m.id not in by_control),
        inject_delivered=delivered,
        inject_delivered_next_turn=next_turn,
        inject_returned=returned,
        inject_lost=lost,
        inject_both=both,
        inject_twice=twice,
    )


@pytest.mark.parametrize("executor_name", sorted(EXECUTORS))
async def test_random_controls_at_random_moments_are_each_acked_exactly_once(executor_name: str, chaos: Chaos, request: pytest.FixtureRequest) -> None:
    started = time.monotonic()
    runs = chaos.n(100, 10_000)
    deadline = chaos.deadline(8, 120)
    TALLY.executors.add(executor_name)
    problems: list[str] = []
    done = 0
    for i in range(runs):
        if time.monotonic() > deadline:
            break
        rec = await one_run(executor_name, chaos.rng, max_controls=chaos.rng.choice([3, 8, 25]))
        done += 1
        before = len(problems)
        judge(rec, problems)
        if len(problems) > before:
            problems.insert(before, f"-- run {i}:")
        if len(problems) > 40:
            break
    TALLY.time("controls", started)
    assert done >= min(runs, 5), f"only {done} runs in the time bound"
    assert not problems, "\n".join(problems[:40]) + "\n" + chaos.why(request.node.nodeid)


async def test_injected_messages_are_delivered_or_returned_never_lost(chaos: Chaos, request: pytest.FixtureRequest) -> None:
    """A run per executor with mostly INJECT_MESSAGE: the parked/delivered/returned ledger."""
    started = time.monotonic()
    problems: list[str] = []
    deadline = chaos.deadline(6, 45)
    for i in range(chaos.n(60, 4000)):
        if time.monotonic() > deadline:
            break
        name = sorted(EXECUTORS)[i % 2]
        TALLY.executors.add(name)
        rng = chaos.rng
        rec = RunRecord()
        sink, channel = InMemorySink(), ControlChannel()
        runner = Runner(
            agent=make_agent(rng), planner=ReplanningPlanner(random_plan(rng)), executor=EXECUTORS[name](), sinks=[sink], control=channel
        )
        ack_task = asyncio.create_task(_collect(channel, rec))
        run = asyncio.create_task(runner.run("inject"))
        for _ in range(rng.randint(1, 12)):
            await asyncio.sleep(rng.choice([0, 0.0003, 0.001, 0.003]))
            kind = K.INJECT_MESSAGE if rng.random() < 0.85 else rng.choice([K.STEER, K.REWIND_TO, K.STATUS_QUERY])
            payload = {"text": f"m{rng.randrange(99)}"} if kind == K.INJECT_MESSAGE else {"note": "n", "task_id": "t1"}
            msg = ControlMessage(kind, payload=payload)
            await channel.send(msg)
            rec.sent.append((msg, "valid"))
        try:
            await asyncio.wait_for(asyncio.shield(run), HANG_S)
        except TimeoutError:
            rec.hang = True
            run.cancel()
        await asyncio.gather(run, return_exceptions=True)
        channel.close()
        await asyncio.wait_for(runner.close(), HANG_S)
        await asyncio.wait_for(ack_task, HANG_S)
        rec.events = list(sink.events)
        before = len(problems)
        judge(rec, problems)
        if len(problems) > before:
            problems.insert(before, f"-- run {i} ({name}):")
    TALLY.time("inject", started)
    assert not problems, "\n".join(problems[:40]) + "\n" + chaos.why(request.node.nodeid)


async def _collect(channel: ControlChannel, rec: RunRecord) -> None:
    async for ack in channel.acks():
        rec.acks[ack.control_id].append(ack)


async def test_a_control_id_with_a_lone_surrogate_is_refused_or_recorded_as_sent() -> None:
    """validate_control checks the payload for lone surrogates but not the id: a control with
    id "\\ud800" is acked SUCCESS under that id while the audit trail records "\\ufffd"."""
    sink, channel = InMemorySink(), ControlChannel()
    gate = asyncio.Event()

    async def agent(task: Task, session: Session) -> str:
        await gate.wait()
        return "ok"

    runner = Runner(agent=agent, planner=ReplanningPlanner(random_plan(random.Random(1))), sinks=[sink], control=channel)
    run = asyncio.create_task(runner.run("x"))
    ack = await channel.request(ControlMessage(K.STATUS_QUERY, id="\ud800"), timeout=5)
    gate.set()
    await asyncio.wait_for(run, 5)
    await runner.close()
    recorded = [e.control_acked.ack.control_id for e in sink.events if events.kind_of(e) == "control_acked"]
    assert ack.result == AckResult.FAILURE or recorded == [ack.control_id], (ack, [ascii(r) for r in recorded])
