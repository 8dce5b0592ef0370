"""Core value types: plan validation and graph queries, statuses, severities, Session."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator

import pytest

from goldfive.errors import GoldfiveError, PlanValidationError, UnknownTaskError
from goldfive.types import (
    DriftSeverity,
    Plan,
    Session,
    Task,
    TaskEdge,
    TaskStatus,
    set_task_status,
)
from goldfive.sequence import _LockedCounter
from goldfive.sequence import sequence_counter as _sequence_counter


def _plan(ids: list[str], edges: list[tuple[str, str]] = ()) -> Plan:  # type: ignore[assignment]
    return Plan(tasks=[Task(i, i.upper()) for i in ids], edges=[TaskEdge(a, b) for a, b in edges])


# -- validation ------------------------------------------------------------------------


def test_validate_returns_the_plan_when_valid() -> None:
    plan = _plan(["a", "b", "c"], [("a", "b"), ("b", "c"), ("a", "c")])
    assert plan.validate() is plan


def test_validate_rejects_a_plan_without_tasks() -> None:
    with pytest.raises(PlanValidationError, match="no tasks"):
        Plan(tasks=[]).validate()


@pytest.mark.parametrize("bad_id", ["", "   "])
def test_validate_rejects_an_empty_task_id_naming_its_position(bad_id: str) -> None:
    plan = Plan(tasks=[Task("a", "A"), Task(bad_id, "B")])
    with pytest.raises(PlanValidationError, match="empty task id") as info:
        plan.validate()
    assert info.value.ids == ("1",)


def test_validate_rejects_a_duplicate_id_and_names_it() -> None:
    plan = _plan(["a", "dup", "b", "dup"])
    with pytest.raises(PlanValidationError) as info:
        plan.validate()
    assert "duplicate" in str(info.value)
    assert "dup" in str(info.value)
    assert info.value.ids == ("dup",)


def test_validate_rejects_an_edge_to_an_unknown_task_and_names_the_edge() -> None:
    plan = _plan(["a", "b"], [("a", "b"), ("b", "ghost")])
    with pytest.raises(PlanValidationError, match="unknown task") as info:
        plan.validate()
    assert "b->ghost" in str(info.value)
    assert info.value.ids == ("b->ghost",)


def test_validate_rejects_an_edge_from_an_unknown_task() -> None:
    with pytest.raises(PlanValidationError, match="ghost->a"):
        _plan(["a"], [("ghost", "a")]).validate()


def test_validate_rejects_a_self_loop_naming_the_cycle() -> None:
    with pytest.raises(PlanValidationError) as info:
        _plan(["a", "b"], [("a", "b"), ("b", "b")]).validate()
    assert str(info.value) == "cycle: b -> b"
    assert info.value.rule == "cycle"


def test_validate_rejects_a_three_task_cycle_naming_its_path() -> None:
    plan = _plan(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    with pytest.raises(PlanValidationError) as info:
        plan.validate()
    assert str(info.value) == "cycle: a -> b -> c -> a"
    assert info.value.ids == ("a", "b", "c")


def test_validate_names_only_the_cycle_not_the_path_leading_into_it() -> None:
    plan = _plan(["entry", "x", "y"], [("entry", "x"), ("x", "y"), ("y", "x")])
    with pytest.raises(PlanValidationError) as info:
        plan.validate()
    assert str(info.value) == "cycle: x -> y -> x"


def test_validate_accepts_a_diamond_which_is_not_a_cycle() -> None:
    plan = _plan(["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    assert plan.validate() is plan


def test_plan_validation_error_is_a_goldfive_error_and_a_value_error() -> None:
    with pytest.raises(PlanValidationError) as info:
        Plan(tasks=[]).validate()
    assert isinstance(info.value, GoldfiveError)
    assert isinstance(info.value, ValueError)


# -- immutability ----------------------------------------------------------------------


def test_plan_is_frozen() -> None:
    plan = _plan(["a"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.summary = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.tasks = ()  # type: ignore[misc]


def test_plan_stores_lists_as_tuples_so_callers_cannot_mutate_it() -> None:
    tasks = [Task("a", "A")]
    plan = Plan(tasks=tasks, goal_ids=["g"])
    tasks.append(Task("b", "B"))
    assert isinstance(plan.tasks, tuple) and [t.id for t in plan.tasks] == ["a"]
    assert plan.goal_ids == ("g",)


# -- statuses and severities --------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "terminal"),
    [
        (TaskStatus.PENDING, False),
        (TaskStatus.RUNNING, False),
        (TaskStatus.BLOCKED, False),
        (TaskStatus.COMPLETED, True),
        (TaskStatus.FAILED, True),
        (TaskStatus.CANCELLED, True),
        (TaskStatus.NOT_NEEDED, True),
    ],
)
def test_task_status_is_terminal(status: TaskStatus, terminal: bool) -> None:
    assert status.is_terminal is terminal


def test_every_task_status_is_classified_above() -> None:
    assert len(TaskStatus) == 7


def test_drift_severity_orders_by_rank_not_alphabetically() -> None:
    info, warning, critical = DriftSeverity.INFO, DriftSeverity.WARNING, DriftSeverity.CRITICAL
    # Alphabetically CRITICAL < INFO < WARNING; by severity INFO < WARNING < CRITICAL.
    assert info < warning < critical
    assert critical > warning > info
    assert critical >= critical and info <= info
    assert not (critical < info)
    assert sorted([critical, info, warning]) == [info, warning, critical]
    assert max([warning, critical, info]) is critical


# -- graph queries --------------------------------------------------------------------


def test_downstream_is_every_reachable_task_in_bfs_order_excluding_itself() -> None:
    plan = _plan(
        ["a", "b", "c", "d", "e", "f"],
        [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")],
    )
    assert plan.downstream("a") == ["b", "c", "d", "e"]
    assert plan.downstream("c") == ["d", "e"]
    assert plan.downstream("e") == []
    assert plan.downstream("f") == []


def test_topological_order_respects_edges_and_is_stable_in_plan_order() -> None:
    plan = _plan(["c", "a", "b", "z"], [("a", "c"), ("b", "c")])
    order = [t.id for t in plan.topological_order()]
    assert order == ["a", "b", "z", "c"]


def test_topological_order_puts_every_edge_source_first() -> None:
    edges = [("e", "d"), ("d", "c"), ("c", "b"), ("b", "a")]
    order = [t.id for t in _plan(["a", "b", "c", "d", "e"], edges).topological_order()]
    assert order == ["e", "d", "c", "b", "a"]


def test_is_ready_requires_pending_and_every_predecessor_completed() -> None:
    plan = _plan(["a", "b", "c"], [("a", "c"), ("b", "c")])
    assert plan.is_ready("a") and plan.is_ready("b")
    assert not plan.is_ready("c")
    set_task_status(plan.task("a"), TaskStatus.COMPLETED)
    assert not plan.is_ready("c")  # b still pending
    assert not plan.is_ready("a")  # no longer PENDING
    set_task_status(plan.task("b"), TaskStatus.NOT_NEEDED)
    assert not plan.is_ready("c")  # only COMPLETED predecessors count
    set_task_status(plan.task("b"), TaskStatus.COMPLETED)
    assert plan.is_ready("c")


def test_unknown_task_lookups_raise_unknown_task_error() -> None:
    plan = _plan(["a"])
    with pytest.raises(UnknownTaskError, match="nope"):
        plan.task("nope")
    with pytest.raises(UnknownTaskError, match="nope"):
        plan.is_ready("nope")


# -- Session ------------------------------------------------------------------------


def test_next_sequence_is_gap_free_from_zero() -> None:
    s = Session(run_id="r")
    assert s.last_sequence == -1
    assert [s.next_sequence() for _ in range(5)] == [0, 1, 2, 3, 4]
    assert s.last_sequence == 4


@pytest.mark.parametrize("counter", [_sequence_counter, _LockedCounter], ids=["this-interpreter", "locked"])
def test_next_sequence_is_unique_and_gap_free_across_threads(counter: Callable[[], Iterator[int]]) -> None:
    s = Session(run_id="r", _counter=counter())
    n_workers, per_worker = 8, 10_000
    barrier = threading.Barrier(n_workers)

    def draw(_: int) -> list[int]:
        barrier.wait()  # start together so the draws interleave
        return [s.next_sequence() for _ in range(per_worker)]

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up, if any
    try:
        with ThreadPoolExecutor(max_workers=n_workers) as pool:
            chunks = list(pool.map(draw, range(n_workers)))
    finally:
        sys.setswitchinterval(interval)
    seqs = [x for chunk in chunks for x in chunk]
    assert sorted(seqs) == list(range(n_workers * per_worker))
    # Each thread sees its own draws in increasing order.
    assert all(chunk == sorted(chunk) for chunk in chunks)
    assert s.last_sequence == n_workers * per_worker - 1


async def test_next_sequence_is_unique_and_gap_free_across_asyncio_tasks() -> None:
    s = Session(run_id="r")
    n_tasks, per_task = 50, 40

    async def draw() -> list[int]:
        out = []
        for _ in range(per_task):
            out.append(s.next_sequence())
            await asyncio.sleep(0)  # interleave with the other tasks
        return out

    chunks = await asyncio.gather(*(draw() for _ in range(n_tasks)))
    seqs = [x for chunk in chunks for x in chunk]
    assert sorted(seqs) == list(range(n_tasks * per_task))
    assert len(set(seqs)) == len(seqs)


def test_event_id_has_run_id_sequence_and_eight_hex_digits() -> None:
    s = Session(run_id="run-7")
    assert re.fullmatch(r"run-7:42:[0-9a-f]{8}", s.event_id(42)), s.event_id(42)


def test_event_ids_differ_between_sessions_that_share_a_run_id() -> None:
    # The collector dedupes by event id: a rerun (or another process) under the same run_id
    # must not have its events dropped as duplicates of the first run's.
    ids = {Session(run_id="run-7").event_id(0) for _ in range(20)}
    assert len(ids) == 20, ids


def test_event_ids_within_a_session_differ_by_sequence() -> None:
    s = Session(run_id="run-7")
    assert len({s.event_id(s.next_sequence()) for _ in range(1_000)}) == 1_000


def test_session_id_defaults_to_run_id() -> None:
    assert Session(run_id="r1").session_id == "r1"
    assert Session(run_id="r1", session_id="s1").session_id == "s1"


def test_a_plan_for_a_run_shares_its_tasks_and_indexes_and_says_the_run() -> None:
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[TaskEdge("a", "b")], id="p").validate()
    ran = plan.for_run("r1")
    assert ran.run_id == "r1" and plan.run_id == ""
    assert ran.task("b") is plan.task("b") and ran.tasks == plan.tasks
    assert ran.predecessors("b") == ["a"] and ran.successors("a") == ["b"]
    assert [t.id for t in ran.topological_order()] == ["a", "b"]
    ran.validate()  # valid as its plan was
