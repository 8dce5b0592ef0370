"""Build a Plan from a parsed answer, enforcing the rules a revision must keep.

The rules (docs/protocol.md#steer-delete-and-replan): completed tasks are re-inserted verbatim from the old
plan whatever the answer says about them; an answer that re-lists a completed id as new work is
an error; edges never point into a completed task; on USER_STEER new ids never reuse an id of
the old plan (colliding ids get ``_r<revision>`` and their edges follow).
"""

from __future__ import annotations

from dataclasses import replace

from goldfive.errors import PlanValidationError
from goldfive.planners.parse import AnswerError, RawPlan
from goldfive.types import Goal, Plan, Task, TaskEdge, TaskStatus


def _validated(plan: Plan) -> Plan:
    try:
        return plan.validate()
    except PlanValidationError as e:
        raise AnswerError(f"invalid plan: {e}") from None


def build_generated_plan(raw: RawPlan, goals: list[Goal], available_agents: list[str]) -> Plan:
    if available_agents:
        known = set(available_agents)
        bad = [t.id for t in raw.tasks if t.assignee_agent_id and t.assignee_agent_id not in known]
        if bad:
            raise AnswerError(
                f"unknown assignee_agent_id on task {', '.join(bad)}; available agents: {', '.join(available_agents)}"
            )
    tasks = [Task(id=t.id, title=t.title, description=t.description, assignee_agent_id=t.assignee_agent_id) for t in raw.tasks]
    edges = [TaskEdge(a, b) for a, b in raw.edges]
    return _validated(
        Plan(tasks=tasks, edges=edges, id=raw.id, goal_ids=[g.id for g in goals], summary=raw.summary)
    )


def _fresh_id(base: str, revision_index: int, taken: set[str]) -> str:
    candidate = f"{base}_r{revision_index}"
    n = 2
    while candidate in taken:
        candidate = f"{base}_r{revision_index}_{n}"
        n += 1
    return candidate


def build_refined_plan(
    raw: RawPlan,
    old: Plan,
    *,
    rename_reused_ids: bool,
    revision_index: int,
    revision_kind: str,
    revision_severity: str,
    revision_reason: str,
) -> Plan:
    """``rename_reused_ids``: USER_STEER deletes pending work, so an answer id equal to a
    dropped task's id is new work and must get a new id; a generic refine may keep a
    remaining task by reusing its id."""
    completed = [t for t in old.tasks if t.status == TaskStatus.COMPLETED]
    completed_ids = {t.id for t in completed}
    old_ids = {t.id for t in old.tasks}
    old_by_id = {t.id: t for t in old.tasks}

    relisted = [t for t in raw.tasks if t.id in completed_ids and t.status and t.status != TaskStatus.COMPLETED]
    if relisted:
        ids = ", ".join(f"{t.id} (as {t.status})" for t in relisted)
        raise AnswerError(
            f"completed task re-listed as new work: {ids}; completed tasks are kept as they are, give new work a new id"
        )
    # Echoed completed tasks (even with a changed title) are dropped here and re-inserted verbatim.
    new_raw = [t for t in raw.tasks if t.id not in completed_ids]
    if not new_raw:
        raise AnswerError("answer has no new tasks: list the remaining work (completed tasks are kept automatically)")
    seen: set[str] = set()
    dups: list[str] = []
    for t in new_raw:
        if t.id in seen and t.id not in dups:
            dups.append(t.id)
        seen.add(t.id)
    if dups:
        raise AnswerError(f"invalid plan: duplicate task id: {', '.join(dups)}")

    rename: dict[str, str] = {}
    taken = old_ids | {t.id for t in new_raw}
    if rename_reused_ids:
        for t in new_raw:
            if t.id in old_ids:
                rename[t.id] = _fresh_id(t.id, revision_index, taken)
                taken.add(rename[t.id])

    new_tasks: list[Task] = []
    for t in new_raw:
        tid = rename.get(t.id, t.id)
        # A generic refine keeping a RUNNING task must not make the executor start it twice.
        prev = old_by_id.get(t.id) if not rename_reused_ids else None
        status = TaskStatus.RUNNING if prev is not None and prev.status == TaskStatus.RUNNING else TaskStatus.PENDING
        new_tasks.append(
            Task(id=tid, title=t.title, description=t.description, assignee_agent_id=t.assignee_agent_id, status=status)
        )
    new_ids = {t.id for t in new_tasks}

    def resolve(task_id: str) -> str:
        return rename.get(task_id, task_id)

    edges: list[TaskEdge] = [e for e in old.edges if e.from_task_id in completed_ids and e.to_task_id in completed_ids]
    unknown: list[str] = []
    into_completed: list[str] = []
    for a, b in raw.edges:
        if a in completed_ids and b in completed_ids:
            continue  # already kept from the old plan
        ra, rb = resolve(a), resolve(b)
        if rb in completed_ids:
            into_completed.append(f"{a}->{b}")
        elif (ra not in new_ids and ra not in completed_ids) or rb not in new_ids:
            unknown.append(f"{a}->{b}")
        else:
            edges.append(TaskEdge(ra, rb))
    if unknown:
        raise AnswerError(f"invalid plan: edge to unknown task: {', '.join(unknown)}")
    if into_completed:
        raise AnswerError(f"invalid plan: edge into a completed task: {', '.join(into_completed)}")

    return _validated(
        Plan(
            # Copies, so a later status change in the new plan never rewrites the old one.
            tasks=[*(replace(t) for t in completed), *new_tasks],
            edges=list(dict.fromkeys(edges)),
            id=old.id,
            run_id=old.run_id,
            goal_ids=old.goal_ids,
            summary=raw.summary or old.summary,
            revision_reason=revision_reason,
            revision_kind=revision_kind,
            revision_severity=revision_severity,
            revision_index=revision_index,
        )
    )
