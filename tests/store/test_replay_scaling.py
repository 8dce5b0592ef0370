"""Replay cost grows with the events, not events x tasks: cheap checkpoints spaced by the plan's
size, and SQLite recordings read on demand instead of whole."""

from __future__ import annotations

import copy
import dataclasses
import typing
import sqlite3
from collections import deque
from pathlib import Path

from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.pb.goldfive.v1 import types_pb2 as tpb
from goldfive.recording import open_recording
from goldfive.steering import SteeringNotes
from goldfive.store.events import StoredEvents
from goldfive.timeline import Timeline, fork
from goldfive.usage import UsageTotals
from goldfive.view import RunState
from tests.store.test_store_damage import record, spoil_row, story


def big_run(tasks: int, events: int) -> list[pb.Event]:
    plan = tpb.Plan(id="p", tasks=[tpb.Task(id=f"t{i}", title=f"task {i}") for i in range(tasks)])
    out = [pb.Event(run_id="r", sequence=0, plan_submitted=pb.PlanSubmitted(plan=plan))]
    for seq in range(1, events):
        task = f"t{seq % tasks}"
        payload = {"task_started": pb.TaskStarted(task_id=task)} if seq % 3 else {"task_progress": pb.TaskProgress(task_id=task, detail=str(seq))}
        out.append(pb.Event(run_id="r", sequence=seq, **payload))
    return out


def test_fork_equals_deepcopy_and_shares_nothing_mutable() -> None:
    state = RunState.from_events(big_run(20, 200))
    state.apply(pb.Event(run_id="r", sequence=200, drift_detected=pb.DriftDetected(id="d", detail="x")))
    copied = fork(state)
    assert copied == copy.deepcopy(state)
    copied.tasks["t1"].progress = "changed"
    copied.kind_counts["task_started"] = -1
    copied._rate[-1][1] = -1
    assert state.tasks["t1"].progress != "changed" and state.kind_counts["task_started"] > 0 and state._rate[-1][1] > 0


def test_every_mutable_runstate_field_is_a_container_fork_copies() -> None:
    # A new kind of mutable field would be shared between checkpoints: fork must learn it first.
    # UsageTotals is a frozen value: sharing it is safe.
    # A field that is None until set must hold a frozen value (BudgetPauseView, say): shared safely.
    hints = typing.get_type_hints(RunState)
    for f in dataclasses.fields(RunState):
        value = getattr(RunState(), f.name)
        if value is None:
            kinds = [k for k in typing.get_args(hints[f.name]) if k is not type(None)]
            assert kinds and all(dataclasses.is_dataclass(k) and k.__dataclass_params__.frozen for k in kinds), f.name  # type: ignore[attr-defined]
            continue
        assert isinstance(value, (dict, list, deque, str, int, float, bool, UsageTotals, SteeringNotes)), f.name


def test_fork_copies_the_steer_queue_and_the_guidance() -> None:
    from goldfive.steering import SteeringNote

    state = RunState()
    state.notes.queue.append(SteeringNote("q1", "later"))
    copied = fork(state)
    copied.notes.queue.append(SteeringNote("q2", "more"))
    copied.notes.standing.append(SteeringNote("g1", "always"))
    assert [n.id for n in state.notes.queue] == ["q1"] and state.notes.standing == []


def test_checkpoints_are_spaced_by_the_number_of_tasks_and_states_stay_exact() -> None:
    events = big_run(tasks=5000, events=30_000)
    timeline = Timeline(events)
    assert timeline.checkpoints <= 1 + 30_000 // (2 * 5000)  # was one per 1,000 events: 31 copies of 5,000 tasks
    for n in (0, 1, 9_999, 10_001, 29_999, 30_000):
        assert timeline.state_at(n) == RunState.from_events(events[:n])


def test_a_sqlite_recording_is_read_on_demand_and_a_damaged_row_keeps_its_place(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    events = story("r1", progress=2500)
    record(db, events)
    bad = spoil_row(db, "r1", "task_progress")
    rec = open_recording(db)
    assert isinstance(rec.events, StoredEvents) and len(rec.events) == len(events)
    read = list(rec.events)
    assert read[bad].WhichOneof("payload") is None and rec.events.damaged == 1
    assert [e.sequence for e in rec.events[1200:1203]] == [1200, 1201, 1202]
    assert rec.events[-1] == events[-1]
    intact = [e for i, e in enumerate(events) if i != bad]
    timeline = Timeline(rec.events)
    assert timeline.final.tasks == RunState.from_events(intact).tasks
    assert timeline.state_at(1500).tasks["t1"].progress == "step 1496"


def test_the_state_at_the_end_is_a_copy_of_the_final_state_not_a_replay(monkeypatch) -> None:
    events = big_run(tasks=10, events=3500)
    timeline = Timeline(events)
    applied = 0
    real = RunState.apply

    def counting(self: RunState, ev: pb.Event) -> None:
        nonlocal applied
        applied += 1
        real(self, ev)

    monkeypatch.setattr(RunState, "apply", counting)
    end = timeline.state_at(len(events))
    assert applied == 0 and end == timeline.final and end is not timeline.final
