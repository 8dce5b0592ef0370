"""The task input the framework adapters send (``common.task_input``): the whole context for a
conversation's first task, what changed since for each later one (``task_prompt.Told``)."""

from __future__ import annotations

from goldfive.adapters.common import task_input
from goldfive.adapters.task_prompt import Told, system_prompt
from goldfive.steering import NOTES_KEY, SteeringNote, notes_of
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus, set_task_status


def session_of(n: int) -> Session:
    tasks = [Task(f"t{i}", f"Task {i}", f"do step {i}") for i in range(n)]
    plan = Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="p")
    return Session("r", goals=[Goal("g1", "ship it")], plan=plan)


def start(session: Session, i: int) -> Task:
    assert session.plan is not None
    task = session.plan.tasks[i]
    set_task_status(task, TaskStatus.RUNNING)
    return task


def finish(session: Session, i: int, result: str) -> None:
    assert session.plan is not None
    session.completed_results[f"t{i}"] = result
    set_task_status(session.plan.tasks[i], TaskStatus.COMPLETED)


def test_a_conversations_first_input_is_the_whole_context_and_later_ones_only_what_changed_whatever_the_plans_size() -> None:
    sizes = []
    for n in (10, 200):
        session, told = session_of(n), Told()
        t0 = start(session, 0)
        first = task_input(session, t0, told)
        assert first == task_input(session, t0)  # as without a conversation
        assert "## Goals\n- g1: ship it" in first and f"- t{n - 1} [PENDING]: Task {n - 1} (after t{n - 2})" in first
        finish(session, 0, "zero done")
        second = task_input(session, start(session, 1), told)
        assert second == (
            "Plan changes since your previous task: t0 COMPLETED.\n\nCompleted since:\n- t0: zero done\n\n"
            "Current task description: do step 1\n\nDo the current task (t1): Task 1"
        )
        finish(session, 1, "one done")
        third = task_input(session, start(session, 2), told)
        assert "- t1: one done" in third and "zero done" not in third  # a result is given once
        sizes.append(len(third))
    assert sizes[0] == sizes[1]  # the same update for a 10- and a 200-task plan


def test_an_input_that_never_reached_the_conversation_is_covered_by_the_next_one() -> None:
    session, told = session_of(5), Told()
    task_input(session, start(session, 0), told)
    finish(session, 1, "one done elsewhere")  # (another conversation's task)
    told.input(session, start(session, 2))  # built, but the turn was cancelled before it was kept
    again = task_input(session, session.plan.tasks[2] if session.plan else start(session, 2), told)
    assert "t1 COMPLETED" in again and "- t1: one done elsewhere" in again
    finish(session, 2, "two done")
    finish(session, 3, "three done elsewhere")
    later = task_input(session, start(session, 4), told)
    assert "- t2: two done\n- t3: three done elsewhere" in later and "one done" not in later
    assert "Plan changes since your previous task: t2 COMPLETED, t3 COMPLETED." in later


def test_a_new_plan_goals_and_standing_guidance_are_given_whole_when_they_change() -> None:
    session, told = session_of(3), Told()
    task_input(session, start(session, 0), told)
    finish(session, 0, "zero done")
    notes_of(session).standing.append(SteeringNote("g1", "use the staging db"))
    session.goals = [Goal("g1", "ship it"), Goal("g2", "and document it")]
    old = session.plan
    assert old is not None
    revised = Plan(tasks=[old.tasks[0], Task("n1", "New step")], edges=[TaskEdge("t0", "n1")], id="p2")
    session.plan = revised
    update = task_input(session, start(session, 1), told)
    assert "## Goals (changed)\n- g1: ship it\n- g2: and document it" in update
    assert "## Plan (revised: this replaces the plan given before)\n- t0 [COMPLETED]: Task 0\n- n1 [RUNNING]: New step (after t0)" in update
    assert "Completed since:\n- t0: zero done" in update
    assert "## Standing guidance" in update and "- use the staging db" in update
    session.state[NOTES_KEY].standing.clear()
    later = task_input(session, session.plan.tasks[1], told)
    assert "The standing guidance given before was removed." in later
    assert "## Plan (revised" not in later and "## Goals" not in later
    assert task_input(session, session.plan.tasks[1], told) == "Do the current task (n1): New step"  # nothing changed


def test_the_whole_prompt_shows_each_tasks_status_and_result_as_they_are_now() -> None:
    session = session_of(4)
    assert session.plan is not None
    before = system_prompt(session, session.plan.tasks[0])  # the lines are cached from here on
    finish(session, 0, "zero\ndone")
    session.completed_results["t0"] = "zero, redone"  # a result replaced (a rewound task)
    after = system_prompt(session, start(session, 1))
    assert "- t0 [PENDING]" in before and "- t0 [COMPLETED]: Task 0\n- t1 [RUNNING]" in after
    assert "## Completed results\n- t0: zero, redone\n" in after
    fresh = Session("r", goals=session.goals, plan=session.plan, completed_results=dict(session.completed_results))
    assert system_prompt(fresh, session.plan.tasks[1]) == after  # what an uncached render says


def test_tasks_of_one_conversation_at_the_same_time_count_the_newest_input_kept() -> None:
    session, told = session_of(4), Told()
    task_input(session, start(session, 0), told)
    finish(session, 0, "zero done")
    told.input(session, start(session, 1))  # older input: kept
    finish(session, 3, "three done elsewhere")
    told.input(session, start(session, 2))  # newer input: its turn failed before it was kept
    told.kept("t1")
    later = task_input(session, session.plan.tasks[2] if session.plan else start(session, 2), told)
    assert "- t3: three done elsewhere" in later and "zero done" not in later  # t1's input had t0's result


def test_a_brief_lists_a_small_plan_whole_and_at_most_five_of_the_results_a_task_depends_on() -> None:
    from goldfive.adapters.task_prompt import DEFAULT_REPORTING, brief_prompt

    tasks = [Task(f"t{i}", f"Task {i}") for i in range(8)]
    plan = Plan(tasks=tasks, edges=[TaskEdge(f"t{i}", "t7") for i in range(7)], id="p")
    session = Session("r", goals=[Goal("g1", "ship it")], plan=plan)
    for i in range(7):
        finish(session, i, f"result {i}\nsecond line" if i else "")
    notes_of(session).standing.append(SteeringNote("g1", "be brief"))
    brief = brief_prompt(session, start(session, 7), "REPORT LIKE THIS")
    assert "REPORT LIKE THIS" in brief and DEFAULT_REPORTING not in brief
    assert "## Plan\n- t0 [COMPLETED]: Task 0\n" in brief and "- t7 [RUNNING]: Task 7 (after t0, t1, t2, t3, t4, t5, t6)" in brief
    assert "- t0: (no result text)\n- t1: result 1 second line" in brief and "- t4: result 4 second line\n(and 2 more)" in brief
    assert "result 5" not in brief and brief.rstrip().endswith("be brief")
