"""Property tests: random control sequences at random (scripted) moments.

Every invocation is held until the script releases it, so a "moment" is a step of the
script (send a control, maybe wait for its ack, release the oldest held task, maybe wait for
it to end), never wall-clock time. Invariants checked after every run:

- every message got exactly one ack; acks of messages handled by the run are on the stream;
- the run ended: RunCompleted or RunAborted is the last event, and the only terminal one;
- sequences are gap-free from 0 and in order;
- task statuses only move forward, except a rewind back to PENDING;
- a completed task never runs again unless it was rewound; every invocation has its TaskStarted.

Task t2 asks for approval (flow A) with a short timeout; APPROVE / REJECT for it are in the mix.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldfive import conv
from goldfive.control import ControlKind, ControlMessage
from goldfive.executors._ready import ReadyFrontier
from goldfive.types import Plan, Task, TaskEdge, TaskStatus, set_task_status
from tests.runtime_kit import EXECUTORS, Harness, ReplanningPlanner, ScriptedAgent, linear_plan

S = TaskStatus

MESSAGES: list[tuple[ControlKind | str, dict[str, Any]]] = [
    (ControlKind.PAUSE, {}),
    (ControlKind.RESUME, {}),
    (ControlKind.STATUS_QUERY, {}),
    (ControlKind.INTERCEPT_TRANSFER, {"enabled": False}),
    (ControlKind.STEER, {"note": "left"}),
    (ControlKind.STEER, {"note": "right", "annotation_id": "ann-A", "author": "al"}),
    (ControlKind.REWIND_TO, {"task_id": "t1"}),
    (ControlKind.REWIND_TO, {"task_id": "t2"}),
    (ControlKind.REWIND_TO, {"task_id": "zz"}),
    (ControlKind.INJECT_MESSAGE, {"text": "hi"}),
    (ControlKind.APPROVE, {"target_id": "nope"}),
    (ControlKind.APPROVE, {"target_id": "t2"}),
    (ControlKind.REJECT, {"target_id": "t2"}),
    ("CHECKPOINT", {}),
    (ControlKind.CANCEL, {"reason": "enough"}),
]

send_step = st.tuples(st.just("send"), st.integers(0, len(MESSAGES) - 1), st.booleans())
release_step = st.tuples(st.just("release"), st.just(0), st.booleans())
scripts = st.lists(st.one_of(send_step, release_step, release_step), max_size=14)

RANK = {S.PENDING: 0, S.RUNNING: 1, S.BLOCKED: 1}  # every other status is terminal: 2


def rank(status: TaskStatus) -> int:
    return RANK.get(status, 2)


async def scenario(executor_name: str, script: list[tuple[str, int, bool]]) -> tuple[Harness, list[ControlMessage], ScriptedAgent]:
    agent = ScriptedAgent()
    agent.hold_every = True

    async def asks(task: Any, session: Any, tools: dict[str, Any]) -> str:
        # Finite wait so an unanswered request cannot wedge the run; any decision is valid.
        decision = await tools["report_awaiting_approval"](prompt="ok?", timeout_ms=50)
        return str(decision["decision"])

    agent.on("t2", asks)
    h = Harness(agent, EXECUTORS[executor_name](), ReplanningPlanner(linear_plan("t1", "t2", "t3")))
    sent: list[ControlMessage] = []
    run = h.start()
    for step, index, wait in script:
        if step == "send":
            kind, payload = MESSAGES[index]
            msg = await h.send(kind, **payload)
            sent.append(msg)
            if wait:
                await h.ack(msg)
        elif agent.waiting:
            task_id = agent.waiting[0]
            agent.release(task_id)
            if wait:
                await agent.finished_event(task_id)
        else:
            await asyncio.sleep(0)  # one scheduling step, still deterministic
    agent.open_all()
    sent.append(await h.send(ControlKind.RESUME))  # a PAUSE left standing must not wedge the run
    await asyncio.wait_for(run, 10)
    await h.shutdown()
    return h, sent, agent


def check_invariants(h: Harness, sent: list[ControlMessage], agent: ScriptedAgent) -> None:
    evs = h.events
    ks = h.kinds()
    # Exactly one ack per message; the run's own acks are on the stream, late ones are not.
    assert {m.id: len(h.acks.get(m.id, [])) for m in sent} == {m.id: 1 for m in sent}
    on_stream = Counter(e.control_acked.ack.control_id for e, k in zip(evs, ks) if k == "control_acked")
    # Handled in send order (the channel is not a scheduler, spec 8).
    received = [e.control_received.control.id for e, k in zip(evs, ks) if k == "control_received"]
    assert received == [m.id for m in sent if m.id in set(received)]
    for m in sent:
        if on_stream[m.id] == 0:
            assert h.acks[m.id][0].detail.startswith("run not active"), h.acks[m.id][0]
        else:
            assert on_stream[m.id] == 1
    # The run ended, with one terminal event, last.
    terminal = [k for k in ks if k in ("run_completed", "run_aborted")]
    assert len(terminal) == 1 and ks[-1] == terminal[0]
    # Gap-free, in order.
    assert [e.sequence for e in evs] == list(range(len(evs)))
    # Monotonic statuses except rewinds; completed work is only redone after a rewind.
    status: dict[str, TaskStatus] = {}
    starts: Counter[str] = Counter()

    def move(task_id: str, to: TaskStatus, rewind: bool = False) -> None:
        frm = status.get(task_id, S.PENDING)
        if rewind:
            assert to == S.PENDING and frm != S.PENDING, (task_id, frm, to)
        else:
            assert rank(frm) < 2 and rank(to) >= rank(frm) and frm != to, (task_id, frm, to)
        status[task_id] = to

    for e, k in zip(evs, ks):
        p = getattr(e, k)
        if k in ("plan_submitted", "plan_revised"):
            status = {t.id: conv.task_status_from_pb(t.status) for t in p.plan.tasks}
        elif k == "task_started":
            assert status.get(p.task_id) == S.PENDING, (p.task_id, status.get(p.task_id))
            starts[p.task_id] += 1
            move(p.task_id, S.RUNNING)
        elif k == "task_completed":
            move(p.task_id, S.COMPLETED)
        elif k == "task_failed":
            move(p.task_id, S.FAILED)
        elif k == "task_cancelled":
            move(p.task_id, S.CANCELLED)
        elif k == "task_blocked":
            move(p.task_id, S.BLOCKED)
        elif k == "task_transitioned":
            to = conv.task_status_from_pb(p.to_status)
            assert conv.task_status_from_pb(p.from_status) == status.get(p.task_id, S.PENDING)
            move(p.task_id, to, rewind=p.reason == "rewind")
    assert Counter(agent.runs) == starts  # no invocation without its TaskStarted
    plan = h.runner.session.plan if h.runner.session else None
    assert plan is not None and {t.id: t.status for t in plan.tasks} == {t: s for t, s in status.items() if plan.has_task(t)}
    if ks[-1] == "run_completed":
        assert all(t.status.is_terminal for t in plan.tasks)


@pytest.mark.parametrize("executor_name", sorted(EXECUTORS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=scripts)
def test_random_controls_at_random_moments_keep_every_invariant(executor_name: str, script: list[tuple[str, int, bool]]) -> None:
    h, sent, agent = asyncio.run(scenario(executor_name, script))
    check_invariants(h, sent, agent)


@pytest.mark.parametrize("executor_name", sorted(EXECUTORS))
def test_the_invariant_checker_catches_a_broken_stream(executor_name: str) -> None:
    """The checker itself must be able to fail: drop one event from a good run."""
    h, sent, agent = asyncio.run(scenario(executor_name, [("send", 2, True), ("release", 0, True)]))
    check_invariants(h, sent, agent)
    del h.sink.events[4]
    with pytest.raises(AssertionError):
        check_invariants(h, sent, agent)


# -- the ready frontier ----------------------------------------------------------------------

FORWARD = {
    S.PENDING: [S.RUNNING, S.BLOCKED, S.COMPLETED, S.FAILED, S.CANCELLED, S.NOT_NEEDED],
    S.RUNNING: [S.COMPLETED, S.FAILED, S.CANCELLED, S.BLOCKED],
    S.BLOCKED: [S.RUNNING, S.COMPLETED],
}


@st.composite
def dags_and_moves(draw: Any) -> tuple[Plan, list[tuple[int, int]], int | None]:
    n = draw(st.integers(1, 9))
    edges = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] < e[1]), max_size=14))
    # Plan order is shuffled so topological order differs from plan order.
    perm = draw(st.permutations(range(n)))
    plan = Plan(tasks=[Task(f"n{i}", str(i)) for i in perm], edges=[TaskEdge(f"n{a}", f"n{b}") for a, b in sorted(edges)])
    moves = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 6)), max_size=30))
    limit = draw(st.one_of(st.none(), st.integers(1, 4)))
    return plan, moves, limit


@settings(max_examples=300, deadline=None)
@given(case=dags_and_moves())
def test_the_ready_frontier_always_agrees_with_plan_is_ready(case: tuple[Plan, list[tuple[int, int]], int | None]) -> None:
    plan, moves, limit = case
    frontier = ReadyFrontier()
    results: dict[str, str] = {}  # stands in for session.completed_results

    def expected() -> list[str]:
        ids = [t.id for t in plan.topological_order() if plan.is_ready(t.id)]
        return ids if limit is None else ids[:limit]

    assert [t.id for t in frontier.ready(plan, limit, len(results))] == expected()
    for node, choice in moves:
        task = plan.task(f"n{node}")
        if choice == 6:  # a rewind: the task and its downstream back to PENDING
            for tid in [task.id, *plan.downstream(task.id)]:
                set_task_status(plan.task(tid), S.PENDING)
                results.pop(tid, None)
            frontier.reset()
        elif task.status in FORWARD:
            options = FORWARD[task.status]
            set_task_status(task, options[choice % len(options)])
            if task.status == S.COMPLETED:
                results[task.id] = "r"
        assert [t.id for t in frontier.ready(plan, limit, len(results))] == expected()
