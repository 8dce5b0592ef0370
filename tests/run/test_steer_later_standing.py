"""Steering that waits or sticks (issue 26 parts 1 and 2): a STEER sent "after this task" is
queued and delivered when the next task starts; a standing note is in every later task's input
until removed; both are controls with acks, visible in the views, and survive resume."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from goldfive import events
from goldfive.adapters.common import task_input
from goldfive.control import AckResult, AppliedAs, ControlChannel, ControlKind, ControlMessage
from goldfive.durable.recover import recover
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.sinks.sqlite import SQLitePersistenceSink, replay_from_sqlite
from goldfive.types import Session, Task
from goldfive.view.state import RunState
from tests.runtime_kit import Harness, ReplanningPlanner, executor, kinds, linear_plan, static  # noqa: F401
from tests.durable.test_durable_resume import RUN, crash_copy, plan


class Held:
    """An agent that records each task's input (``task_input``, what every framework adapter
    sends) and the injected messages it read; ``hold`` blocks a task until released."""

    def __init__(self, hold: str = "") -> None:
        self.hold = hold
        self.inputs: dict[str, str] = {}
        self.read: dict[str, list[str]] = {}
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def __call__(self, task: Task, session: Session) -> str:
        import goldfive

        self.inputs[task.id] = task_input(session, task)  # as the task starts
        if task.id == self.hold:
            self.entered.set()
            await self.gate.wait()
        self.read[task.id] = await goldfive.read_injected(session, task.id)
        return f"{task.id} done"


async def held_run(agent: Held, planner: Any, executor: Any = None) -> Harness:
    from goldfive.executors.sequential import SequentialExecutor

    h = Harness(agent=agent, executor=executor or SequentialExecutor(), planner=planner)
    h.start("do the things")
    await asyncio.wait_for(agent.entered.wait(), 5)
    return h


# -- later: queued, delivered when the next task starts -------------------------------------------


async def test_a_later_steer_lets_the_running_task_finish_then_replans_before_the_next_task_starts(executor: Any) -> None:
    agent = Held(hold="a")
    planner = ReplanningPlanner(linear_plan("a", "b", "c"))
    h = await held_run(agent, planner, executor)
    ack = await h.control(ControlKind.STEER, note="use the staging db", author="ann", when="later")
    assert ack.result == AckResult.SUCCESS and ack.applied_as is AppliedAs.QUEUED_LATER
    assert "queued as q1" in ack.detail and "next task starts" in ack.detail
    await h.wait_event("steer_queued")
    assert planner.refine_calls == []  # nothing replanned yet: a still runs
    agent.gate.set()
    out = await h.finish()
    assert out.success, out.reason
    ks = kinds(h.events)
    # a finished (not cancelled), then the note was delivered and replanned before the next start
    done_a = ks.index("task_completed")
    delivered = ks.index("steer_queue_changed")
    assert "task_cancelled" not in ks
    assert done_a < delivered < ks.index("plan_revised") < ks.index("task_started", done_a)
    assert h.of("steer_queue_changed")[0].op == "delivered" and list(h.of("steer_queue_changed")[0].order) == []
    assert len(planner.refine_calls) == 1 and planner.refine_calls[0]["drift"].metadata["note"] == "use the staging db"
    assert [t for t in agent.inputs] == ["a", "r1_1"]
    state = RunState.from_events(h.events)
    assert state.notes.queue == []


async def test_with_a_plan_that_cannot_change_a_later_steer_reaches_the_next_tasks_agent() -> None:
    agent = Held(hold="a")
    h = await held_run(agent, static("a", "b"))
    ack = await h.control(ControlKind.STEER, note="say it in French", when="later")
    assert ack.applied_as is AppliedAs.QUEUED_LATER
    agent.gate.set()
    out = await h.finish()
    assert out.success, out.reason
    assert agent.read["a"] == []  # queued for after a: a never saw it
    assert agent.read["b"] == ["[user_steering]say it in French[/user_steering]"]


async def test_the_queue_is_edited_reordered_held_and_withdrawn_by_controls_with_acks() -> None:
    agent = Held(hold="a")
    h = await held_run(agent, static("a", "b"))
    for note in ("first", "second", "third"):
        assert (await h.control(ControlKind.STEER, note=note, when="later")).applied_as is AppliedAs.QUEUED_LATER
    await h.wait_event("steer_queued", lambda p: p.note.id == "q3")

    async def queue(op: str, **kw: Any) -> Any:
        return await h.control(ControlKind.STEER_QUEUE, op=op, **kw)

    edit = await queue("edit", note_id="q1", text="first, edited")
    assert edit.applied_as is AppliedAs.QUEUE_CHANGED and "q1 edited" in edit.detail
    up = await queue("up", note_id="q3")
    assert up.applied_as is AppliedAs.QUEUE_CHANGED and "the queue: q1, q3, q2" in up.detail
    assert (await queue("up", note_id="q1")).applied_as is AppliedAs.UNCHANGED  # already first
    assert (await queue("withdraw", note_id="q2")).applied_as is AppliedAs.WITHDRAWN
    assert (await queue("hold", note_id="q1")).applied_as is AppliedAs.QUEUE_CHANGED
    listed = await queue("list")
    assert listed.applied_as is AppliedAs.QUEUE_LISTED
    assert listed.detail == "q1 [held]: first, edited; q3: third"
    # refusals: one sentence, nothing changed
    gone = await queue("edit", note_id="q2", text="again")
    assert gone.result == AckResult.FAILURE and "no queued note 'q2'" in gone.detail and "q1, q3" in gone.detail
    bad = await queue("shuffle", note_id="q1")
    assert bad.result == AckResult.FAILURE and "list|edit|withdraw|up|down|hold|release" in bad.detail
    blank = await queue("edit", note_id="q1", text="  ")
    assert blank.result == AckResult.FAILURE and "empty" in blank.detail
    state = RunState.from_events(h.events)
    assert [(n.id, n.text, n.held) for n in state.notes.queue] == [("q1", "first, edited", True), ("q3", "third", False)]
    agent.gate.set()
    out = await h.finish()
    assert out.success, out.reason
    assert agent.read["b"] == ["[user_steering]third[/user_steering]"]  # the held note is not delivered
    assert [n.id for n in RunState.from_events(h.events).notes.queue] == ["q1"]


async def test_later_and_standing_together_are_refused() -> None:
    agent = Held(hold="a")
    h = await held_run(agent, static("a"))
    ack = await h.control(ControlKind.STEER, note="x", when="later", standing=True)
    assert ack.result == AckResult.FAILURE and "cannot be combined" in ack.detail
    when = await h.control(ControlKind.STEER, note="x", when="tomorrow")
    assert when.result == AckResult.FAILURE and "now|later" in when.detail
    agent.gate.set()
    await h.finish()
    assert "steer_queued" not in h.kinds() and "guidance_added" not in h.kinds()


# -- standing guidance -----------------------------------------------------------------------------


async def test_a_standing_note_is_in_every_later_tasks_input_until_removed() -> None:
    agent = Held(hold="a")
    h = await held_run(agent, static("a", "b", "c"))
    ack = await h.control(ControlKind.STEER, note="never touch prod", author="ann", standing=True)
    assert ack.applied_as is AppliedAs.STANDING and "standing guidance g1" in ack.detail
    await h.wait_event("guidance_added")
    listed = await h.control(ControlKind.GUIDANCE, op="list")
    assert listed.applied_as is AppliedAs.GUIDANCE_LISTED and listed.detail == "g1 (by ann): never touch prod"
    agent.hold, agent.entered = "b", asyncio.Event()
    agent.gate.set()
    agent.gate = asyncio.Event()
    await asyncio.wait_for(agent.entered.wait(), 5)
    removed = await h.control(ControlKind.GUIDANCE, op="remove", id="g1")
    assert removed.applied_as is AppliedAs.GUIDANCE_REMOVED
    missing = await h.control(ControlKind.GUIDANCE, op="remove", id="g1")
    assert missing.result == AckResult.FAILURE and "no standing guidance 'g1'" in missing.detail
    agent.gate.set()
    out = await h.finish()
    assert out.success, out.reason
    assert "never touch prod" not in agent.inputs["a"]  # a had started before the note was sent
    assert "## Standing guidance" in agent.inputs["b"] and "- never touch prod" in agent.inputs["b"]
    assert "never touch prod" not in agent.inputs["c"]
    assert RunState.from_events(h.events).notes.standing == []


async def test_standing_guidance_survives_a_replan_and_reaches_new_tasks() -> None:
    agent = Held(hold="a")
    planner = ReplanningPlanner(linear_plan("a", "b"))
    h = await held_run(agent, planner)
    await h.control(ControlKind.STEER, note="write tests first", standing=True)
    now = await h.control(ControlKind.STEER, note="do it differently")
    assert now.applied_as is AppliedAs.REPLANNED
    agent.gate.set()
    out = await h.finish()
    assert out.success, out.reason
    assert "r1_1" in agent.inputs and "write tests first" in agent.inputs["r1_1"]


async def test_an_earlier_steer_or_a_queued_note_is_made_standing_after_the_fact() -> None:
    agent = Held(hold="a")
    h = await held_run(agent, static("a", "b"))
    steer = await h.send(ControlKind.STEER, note="keep answers short")
    assert (await h.ack(steer)).applied_as is AppliedAs.NOTED
    made = await h.control(ControlKind.GUIDANCE, op="make_standing", id=steer.id)
    assert made.applied_as is AppliedAs.MADE_STANDING and "standing guidance g1" in made.detail
    await h.control(ControlKind.STEER, note="cite sources", when="later")
    queued = await h.control(ControlKind.GUIDANCE, op="make_standing", id="q1")
    assert queued.applied_as is AppliedAs.MADE_STANDING and "leaves the queue" in queued.detail
    unknown = await h.control(ControlKind.GUIDANCE, op="make_standing", id="nope")
    assert unknown.result == AckResult.FAILURE and "no queued note or earlier steer 'nope'" in unknown.detail
    agent.gate.set()
    out = await h.finish()
    assert out.success, out.reason
    state = RunState.from_events(h.events)
    assert [(n.id, n.text) for n in state.notes.standing] == [("g1", "keep answers short"), ("g2", "cite sources")]
    assert state.notes.queue == []
    assert "- keep answers short\n- cite sources" in agent.inputs["b"]
    assert agent.read["a"] == ["[user_steering]keep answers short[/user_steering]"]  # the steer itself, on the running task
    assert agent.read["b"] == []  # q1 became guidance: never delivered as a steer


# -- resume -----------------------------------------------------------------------------------------


async def _crashed_with_notes(tmp_path: Path) -> Path:
    """A durable run of a, b, c stopped while b runs, with a queued note, a held one and a
    standing one: the SQLite file as a killed process leaves it."""
    db = tmp_path / "runs.sqlite"
    agent = Held(hold="b")
    channel = ControlChannel()
    runner = Runner(agent=agent, planner=StaticPlanner(plan("a", "b", "c")), run_id=RUN,
                    sinks=[SQLitePersistenceSink(db, durability="normal")], control=channel)  # fmt: skip
    task = asyncio.ensure_future(runner.run("do the things"))
    await asyncio.wait_for(agent.entered.wait(), 5)
    for payload in ({"note": "check the logs", "when": "later"}, {"note": "wait for me", "when": "later"},
                    {"note": "no prod", "standing": True}):  # fmt: skip
        assert (await channel.request(ControlMessage(ControlKind.STEER, payload=payload))).result == AckResult.SUCCESS
    hold = await channel.request(ControlMessage(ControlKind.STEER_QUEUE, payload={"op": "hold", "note_id": "q2"}))
    assert hold.result == AckResult.SUCCESS
    copy = crash_copy(db, tmp_path / "crashed.sqlite")
    agent.gate.set()
    await task
    await runner.close()
    return copy


async def test_queued_and_standing_notes_survive_a_stop_and_resume(tmp_path: Path) -> None:
    crashed = await _crashed_with_notes(tmp_path)
    rec = recover(RUN, replay_from_sqlite(crashed, RUN))
    assert [(n.id, n.held) for n in rec.notes.queue] == [("q1", False), ("q2", True)]
    assert [n.text for n in rec.notes.standing] == ["no prod"]
    agent, sink = Held(), InMemorySink()
    out = await Runner.resume(RUN, store=crashed, agent=agent, planner=StaticPlanner(plan("a", "b", "c")), sinks=[sink])
    assert out.success, out.reason
    # b ran again after the resume, with the queued note delivered as it started, and the guidance
    assert agent.read["b"] == ["[user_steering]check the logs[/user_steering]"]
    assert "- no prod" in agent.inputs["b"] and "- no prod" in agent.inputs["c"]
    resumed = next(e.run_resumed for e in sink.events if e.WhichOneof("payload") == "run_resumed")
    assert "2 queued steer(s) and 1 standing note(s) kept" in resumed.detail
    state = RunState.from_events(replay_from_sqlite(crashed, RUN))
    assert [(n.id, n.held) for n in state.notes.queue] == [("q2", True)]  # held: still waiting
    assert [n.id for n in state.notes.standing] == ["g1"]


async def test_a_note_acked_but_not_recorded_is_queued_again_on_resume(tmp_path: Path) -> None:
    crashed = await _crashed_with_notes(tmp_path)
    evs = replay_from_sqlite(crashed, RUN)
    # As if the stop came between the ack and its event: the ack is on disk, steer_queued is not.
    cut = [e for e in evs if not (e.WhichOneof("payload") == "steer_queued" and e.steer_queued.note.id == "q1")]
    cut = [e for e in cut if e.WhichOneof("payload") != "steer_queue_changed"]  # and the hold after it
    rec = recover(RUN, cut)
    assert [n.id for n in rec.notes.queue] == ["q2"] and len(rec.notes_to_add) == 1
    assert rec.notes_to_add[0].payload.note == "check the logs"


async def test_a_delivery_the_stop_cut_off_is_delivered_again(tmp_path: Path) -> None:
    agent = Held(hold="a")
    db = tmp_path / "runs.sqlite"
    channel = ControlChannel()
    runner = Runner(agent=agent, planner=ReplanningPlanner(linear_plan("a", "b")), run_id=RUN,
                    sinks=[SQLitePersistenceSink(db, durability="normal")], control=channel)  # fmt: skip
    task = asyncio.ensure_future(runner.run("go"))
    await asyncio.wait_for(agent.entered.wait(), 5)
    await channel.request(ControlMessage(ControlKind.STEER, payload={"note": "switch to plan B", "when": "later"}))
    agent.gate.set()
    await task
    await runner.close()
    evs = replay_from_sqlite(db, RUN)
    ks = kinds(evs)
    delivered = next(i for i, e in enumerate(evs) if e.WhichOneof("payload") == "steer_queue_changed")
    assert ks[delivered + 1] == "drift_detected"
    rec = recover(RUN, evs[: delivered + 1])  # stopped after the delivery, before its steer
    assert [n.text for n in rec.notes.queue] == ["switch to plan B"]
    rec = recover(RUN, evs[: delivered + 2])
    assert rec.notes.queue == []


# -- the event rows -----------------------------------------------------------------------------


def test_the_note_events_read_as_one_line_each() -> None:
    from goldfive.event_format import format_event
    from goldfive.steering import SteeringNote

    session = Session(run_id="r")
    lines = [
        format_event(events.steer_queued(session, SteeringNote("q1", "use staging", "ann"))),
        format_event(events.steer_queue_changed(session, "q1", "held", order=["q1"])),
        format_event(events.guidance_added(session, SteeringNote("g1", "no prod", "bob"))),
        format_event(events.guidance_removed(session, "g1", author="bob")),
    ]
    assert "q1 by ann: use staging" in lines[0]
    assert "q1 held" in lines[1]
    assert "g1 by bob: no prod" in lines[2]
    assert "g1 by bob" in lines[3]


# -- through a hub: ctl and GetRun ------------------------------------------------------------------


def test_ctl_queues_holds_and_lists_notes_and_status_shows_the_queue_and_the_guidance(tmp_path: Path) -> None:
    import json

    from tests.cli.test_cli_remote import ServerThread, ctl

    st = ServerThread(tmp_path / "runs.sqlite")
    try:
        later = ctl(st.addr, "steer", "r1", "check the numbers", "--later", "--author", "ann")
        assert later.exit_code == 0, later.output
        assert later.output.startswith("STEER SUCCESS: queued as q1") and "\ncontrol " in later.output
        assert ctl(st.addr, "steer", "r1", "second thought", "--later").exit_code == 0
        standing = ctl(st.addr, "steer", "r1", "no stock photos", "--standing")
        assert standing.exit_code == 0 and "standing guidance g1" in standing.output
        both = ctl(st.addr, "steer", "r1", "x", "--later", "--standing")
        assert both.exit_code == 2 and "cannot be combined" in both.output
        hold = ctl(st.addr, "steer-queue", "r1", "hold", "q1")
        assert hold.exit_code == 0 and "q1 held" in hold.output
        missing = ctl(st.addr, "steer-queue", "r1", "withdraw", "q9")
        assert missing.exit_code == 1 and "no queued note 'q9'" in missing.output
        assert ctl(st.addr, "steer-queue", "r1", "edit", "q2").exit_code == 2  # no TEXT
        listed = ctl(st.addr, "steer-queue", "r1", "list")
        from goldfive.settings import os_user

        # a note sent without --author is signed by the OS user (issue 23 item 8)
        assert f"q1 [held] (by ann): check the numbers; q2 (by {os_user()}): second thought" in listed.output
        status = ctl(st.addr, "status", "r1")
        assert status.exit_code == 0, status.output
        assert "queued for when the next task starts:" in status.output
        assert "q1 [held]  check the numbers  (by ann)" in status.output and "q2  second thought" in status.output
        assert "standing guidance (in every later task's input):" in status.output and "g1  no stock photos" in status.output
        snap = json.loads(ctl(st.addr, "--json", "status", "r1").output)
        assert [n["id"] for n in snap["steer_queue"]] == ["q1", "q2"] and snap["steer_queue"][0]["held"] is True
        assert [n["text"] for n in snap["guidance"]] == ["no stock photos"]
        assert snap["summary"]["queued_steers"] == 2 and snap["summary"]["standing_guidance"] == 1
        assert ctl(st.addr, "guidance", "r1", "remove", "g1").exit_code == 0
        assert "no standing guidance" in ctl(st.addr, "guidance", "r1", "list").output
    finally:
        st.stop()


async def test_a_replan_is_given_the_standing_guidance_for_the_planners_prompt() -> None:
    agent = Held(hold="a")
    planner = ReplanningPlanner(linear_plan("a", "b"))
    h = await held_run(agent, planner)
    await h.control(ControlKind.STEER, note="write tests first", standing=True)
    await h.control(ControlKind.STEER, note="do it differently")
    agent.gate.set()
    assert (await h.finish()).success
    (call,) = planner.refine_calls
    assert call["drift"].metadata["standing_guidance"] == ["write tests first"]


def _cut_after_last_ack(db: Path, kind: str) -> Path:
    """The recording as a stop right after the last ack leaves it: the last ``kind`` event
    (what that ack's effect recorded) and everything after it gone."""
    import sqlite3

    evs = replay_from_sqlite(db, RUN)
    seq = max(e.sequence for e in evs if e.WhichOneof("payload") == kind)
    assert any(e.WhichOneof("payload") == "control_acked" and e.sequence == seq - 1 for e in evs)  # its ack just before
    conn = sqlite3.connect(db)
    with conn:
        (n,) = conn.execute("SELECT COUNT(*) FROM events WHERE run_id = ? AND sequence >= ?", (RUN, seq)).fetchone()
        conn.execute("DELETE FROM events WHERE run_id = ? AND sequence >= ?", (RUN, seq))
    conn.close()
    assert n >= 1
    return db


async def test_a_queue_change_acked_but_cut_off_before_its_event_is_applied_again_on_resume(tmp_path: Path) -> None:
    crashed = _cut_after_last_ack(await _crashed_with_notes(tmp_path), "steer_queue_changed")  # the hold of q2
    rec = recover(RUN, replay_from_sqlite(crashed, RUN))
    assert [(n.id, n.held) for n in rec.notes.queue] == [("q1", False), ("q2", False)]
    assert [c.payload.op.value for c in rec.note_changes_to_apply] == ["hold"]
    agent, sink = Held(), InMemorySink()
    out = await Runner.resume(RUN, store=crashed, agent=agent, planner=StaticPlanner(plan("a", "b", "c")), sinks=[sink])
    assert out.success, out.reason
    assert agent.read["b"] == ["[user_steering]check the logs[/user_steering]"]  # q2 held again: not delivered
    state = RunState.from_events(replay_from_sqlite(crashed, RUN))
    assert [(n.id, n.held) for n in state.notes.queue] == [("q2", True)]
    resumed = next(e.run_resumed for e in sink.events if e.WhichOneof("payload") == "run_resumed")
    assert "1 acked control(s) applied again" in resumed.detail
    # once applied and recorded, a second resume does not apply it again
    assert recover(RUN, replay_from_sqlite(crashed, RUN)).note_changes_to_apply == []


async def test_a_guidance_removal_acked_but_cut_off_is_removed_again_on_resume(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    agent = Held(hold="b")
    channel = ControlChannel()
    runner = Runner(agent=agent, planner=StaticPlanner(plan("a", "b", "c")), run_id=RUN,
                    sinks=[SQLitePersistenceSink(db, durability="normal")], control=channel)  # fmt: skip
    task = asyncio.ensure_future(runner.run("do the things"))
    await asyncio.wait_for(agent.entered.wait(), 5)
    await channel.request(ControlMessage(ControlKind.STEER, payload={"note": "no prod", "standing": True}))
    removed = await channel.request(ControlMessage(ControlKind.GUIDANCE, payload={"op": "remove", "id": "g1"}))
    assert removed.result == AckResult.SUCCESS
    crashed = _cut_after_last_ack(crash_copy(db, tmp_path / "crashed.sqlite"), "guidance_removed")
    agent.gate.set()
    await task
    await runner.close()
    assert [n.id for n in recover(RUN, replay_from_sqlite(crashed, RUN)).notes.standing] == ["g1"]
    again = Held()
    out = await Runner.resume(RUN, store=crashed, agent=again, planner=StaticPlanner(plan("a", "b", "c")))
    assert out.success, out.reason
    assert "no prod" not in again.inputs["b"] and "no prod" not in again.inputs["c"]


async def test_a_make_standing_cut_off_between_its_two_events_is_finished_on_resume(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    agent = Held(hold="b")
    channel = ControlChannel()
    runner = Runner(agent=agent, planner=StaticPlanner(plan("a", "b", "c")), run_id=RUN,
                    sinks=[SQLitePersistenceSink(db, durability="normal")], control=channel)  # fmt: skip
    task = asyncio.ensure_future(runner.run("do the things"))
    await asyncio.wait_for(agent.entered.wait(), 5)
    await channel.request(ControlMessage(ControlKind.STEER, payload={"note": "cite sources", "when": "later"}))
    made = await channel.request(ControlMessage(ControlKind.GUIDANCE, payload={"op": "make_standing", "id": "q1"}))
    assert made.result == AckResult.SUCCESS
    crashed = crash_copy(db, tmp_path / "crashed.sqlite")
    agent.gate.set()
    await task
    await runner.close()
    evs = replay_from_sqlite(crashed, RUN)
    assert kinds(evs)[-3:] == ["control_acked", "steer_queue_changed", "guidance_added"]
    import sqlite3

    conn = sqlite3.connect(crashed)
    with conn:  # the stop came after the note left the queue, before its guidance was added
        conn.execute("DELETE FROM events WHERE run_id = ? AND sequence = ?", (RUN, evs[-1].sequence))
    conn.close()
    rec = recover(RUN, replay_from_sqlite(crashed, RUN))
    assert rec.notes.queue == [] and rec.notes.standing == [] and list(rec.half_made_standing) == [made.control_id]
    again = Held()
    out = await Runner.resume(RUN, store=crashed, agent=again, planner=StaticPlanner(plan("a", "b", "c")))
    assert out.success, out.reason
    assert "- cite sources" in again.inputs["b"] and again.read["b"] == []  # standing, never delivered as a steer
    assert recover(RUN, replay_from_sqlite(crashed, RUN)).note_changes_to_apply == []
