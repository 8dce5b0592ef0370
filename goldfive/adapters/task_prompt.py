"""The prompt that tells an agent where its task sits in the run (goals, plan, what is done):
goldfive's own LLM agent sends it as the system prompt, and the framework adapters put it
before the task in the framework run's input (``common.task_input``).

A framework adapter that keeps one conversation across the run's tasks (a LangGraph thread, an
ADK or OpenAI Agents session, a PydanticAI message history, a Claude session) gives the whole
prompt to the first task of the conversation only; each later task gets an update: what changed
since the conversation's previous input (plan lines whose status moved, results completed
since, the goals or standing guidance when they changed, a new plan whole) and the task.
:class:`Told` remembers, per conversation, what it was given.

An adapter whose every task is a conversation of its own can send :func:`brief_prompt`
instead: bounded in size whatever the plan's (the goals, a short plan, the results the task
depends on, the task). ``reporting`` (both prompts) is what they say about reporting: an
adapter offering other reporting tools than the eight says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from goldfive.llm.prompts import render_prompt
from goldfive.plan_tally import status_counts
from goldfive.steering import notes_of
from goldfive.types import Plan, Session, Task, TaskStatus

__all__ = ["BRIEF_NEIGHBOURS", "BRIEF_WHOLE_PLAN", "DEFAULT_REPORTING", "Told", "brief_prompt", "system_prompt", "update_prompt"]

#: How much of each completed task's result the prompt repeats.
_RESULT_CHARS = 600  # completed outputs are context for the model, not the whole artifact
#: Where a session keeps its plan's rendered lines (re-rendered only for tasks that moved).
_LINES_KEY = "goldfive.task_prompt.lines"
#: What the prompt says about reporting, for an agent offered the reporting tools one by one.
DEFAULT_REPORTING = (
    "Report as you go with the reporting tools: report_task_progress while you work,\n"
    "report_task_completed with a short summary of the result when the task is done,\n"
    "report_task_failed if it cannot be done, report_awaiting_approval before anything risky."
)
_COMPLETED = TaskStatus.COMPLETED  # (an enum member looked up once: this runs per task per input)
_status_of = attrgetter("status")


class _Lines:
    """One plan's prompt lines, cached per task with the status and result they were made from:
    a 100-task plan is not re-formatted whole for every task."""

    __slots__ = ("plan", "after", "cache")

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.after = [f" (after {', '.join(deps)})" if (deps := plan.predecessors(t.id)) else "" for t in plan.tasks]
        #: per task: (status, result object, plan line, completed line or "")
        self.cache: list[tuple[TaskStatus | None, object, str, str]] = [(None, None, "", "")] * len(plan.tasks)

    def line(self, session: Session, i: int, t: Task) -> tuple[str, str]:
        """Task ``i``'s plan line and, when it is completed, its result line."""
        status = t.status
        result = session.completed_results.get(t.id) if status is _COMPLETED else None
        cached = self.cache[i]
        if cached[0] is not status or cached[1] is not result:
            done = ""
            if status is _COMPLETED:
                text = str(result if result is not None else "").strip().replace("\n", " ")
                done = f"- {t.id}: {text[:_RESULT_CHARS] or '(no result text)'}"
            cached = self.cache[i] = (status, result, f"- {t.id} [{status}]: {t.title}{self.after[i]}", done)
        return cached[2], cached[3]


def _lines(session: Session, plan: Plan) -> _Lines:
    lines = session.state.get(_LINES_KEY)
    if not isinstance(lines, _Lines) or lines.plan is not plan:
        lines = session.state[_LINES_KEY] = _Lines(plan)
    return lines


def _goals(session: Session) -> str:
    return "\n".join(f"- {g.id}: {g.summary}" for g in session.goals) or "(none)"


def _guidance(session: Session) -> str:
    standing = notes_of(session).standing
    if not standing:
        return ""
    return render_prompt("agent_task.guidance", guidance="\n".join(f"- {n.text}" for n in standing)).rstrip()


def system_prompt(session: Session, task: Task, reporting: str = DEFAULT_REPORTING) -> str:
    """The ``agent_task.system`` prompt for ``task``: goals, plan, completed results, the task;
    then the run's standing guidance (``agent_task.guidance``), when it has any. ``reporting``:
    what it says about reporting (an adapter offering other reporting tools says so)."""
    plan_lines: list[str] = []
    completed: list[str] = []
    if session.plan is not None:
        lines = _lines(session, session.plan)
        for i, t in enumerate(session.plan.tasks):
            line, done = lines.line(session, i, t)
            plan_lines.append(line)
            if done:
                completed.append(done)
    prompt = render_prompt(
        "agent_task.system",
        reporting=reporting,
        goals=_goals(session),
        plan="\n".join(plan_lines) or "(none)",
        completed="\n".join(completed) or "(none)",
        task_id=task.id,
        task_title=task.title,
        task_description=task.description or "(none)",
    )
    guidance = _guidance(session)
    if not guidance:
        return prompt
    return f"{prompt.rstrip()}\n\n{guidance}\n"


@dataclass(frozen=True)
class _Snapshot:
    """What a conversation was given: the plan (object) and each task's status as it was told
    (a completed one with its result), the goals and the standing guidance."""

    plan: Plan | None
    statuses: tuple[TaskStatus, ...]
    goals: str
    guidance: str

    def results(self) -> set[str]:
        """The tasks whose result the conversation was given."""
        tasks = self.plan.tasks if self.plan is not None else ()
        return {t.id for t, s in zip(tasks, self.statuses) if s is _COMPLETED}


def _snapshot(session: Session) -> _Snapshot:
    plan = session.plan
    statuses = tuple(map(_status_of, plan.tasks)) if plan is not None else ()
    return _Snapshot(plan, statuses, _goals(session), _guidance(session))


class Told:
    """What one conversation has been given of the run, so its next task's input says only
    what changed (:func:`update_prompt`). A fresh ``Told`` (a new conversation) gets the whole
    prompt. ``input`` builds a task's input; the adapter calls ``kept`` once that input is in
    the conversation (a turn that never reached it, cancelled or refused, leaves ``Told`` as it
    was, so the next input covers its changes too). Tasks of one conversation may run at the
    same time: the newest input kept counts."""

    def __init__(self, reporting: str = DEFAULT_REPORTING) -> None:
        #: What the first input says about reporting (``system_prompt``).
        self.reporting = reporting
        self._given: _Snapshot | None = None
        self._given_n = 0
        #: task id -> (the input's number, what it told), until it is kept or dropped.
        self._pending: dict[str, tuple[int, _Snapshot]] = {}
        self._n = 0

    @property
    def started(self) -> bool:
        """Whether the conversation holds a task input already."""
        return self._given is not None

    def input(self, session: Session, task: Task) -> str:
        """The prompt of ``task`` for this conversation: whole the first time, an update after."""
        now = _snapshot(session)
        self._n += 1
        self._pending[task.id] = (self._n, now)
        if self._given is None:
            return system_prompt(session, task, self.reporting)
        return update_prompt(session, task, self._given, now)

    def kept(self, task_id: str) -> None:
        """The input ``input`` built for ``task_id`` is in the conversation now."""
        n, snapshot = self._pending.pop(task_id, (0, None))
        if snapshot is not None and n > self._given_n:
            self._given, self._given_n = snapshot, n


def update_prompt(session: Session, task: Task, given: _Snapshot, now: _Snapshot) -> str:
    """What changed between ``given`` and ``now``, in a few lines (a long run's conversation
    keeps one per task), then the task's description; "" when nothing did and it has none.

    Tasks whose status moved are listed as "ID STATUS" (the task itself is left out: it is the
    current task), with the results of those completed; a new plan, changed goals or guidance
    whole."""
    sections: list[str] = []
    if now.goals != given.goals:
        sections.append(f"## Goals (changed)\n{now.goals}")
    plan = session.plan
    if plan is not None:
        lines = _lines(session, plan)
        told: set[str] = set()
        if plan is not given.plan:
            whole = [lines.line(session, i, t)[0] for i, t in enumerate(plan.tasks)]
            sections.append("## Plan (revised: this replaces the plan given before)\n" + "\n".join(whole))
            moved: list[int] = list(range(len(plan.tasks)))
            told |= given.results()
        else:
            moved = [i for i, (a, b) in enumerate(zip(given.statuses, now.statuses)) if a is not b]
            others = [f"{plan.tasks[i].id} {now.statuses[i]}" for i in moved if plan.tasks[i] is not task]
            if others:
                sections.append(f"Plan changes since your previous task: {', '.join(others)}.")
        done = [d for i in moved if plan.tasks[i].id not in told and (d := lines.line(session, i, plan.tasks[i])[1])]
        if done:
            sections.append("Completed since:\n" + "\n".join(done))
    if now.guidance != given.guidance:
        sections.append(now.guidance or "## Standing guidance\nThe standing guidance given before was removed.")
    if task.description:
        sections.append(f"Current task description: {task.description}")
    return "\n\n".join(sections)


#: A brief lists a plan of at most this many tasks whole; a longer one as counts and neighbours.
BRIEF_WHOLE_PLAN = 12
#: How many of the task's dependencies (and successors) a brief names, and their results at most.
BRIEF_NEIGHBOURS = 5
#: How much of the goals a brief repeats.
_BRIEF_GOALS_CHARS = 1200


def brief_prompt(session: Session, task: Task, reporting: str = DEFAULT_REPORTING) -> str:
    """A task's input for a conversation of its own (no memory of the run), bounded in size
    whatever the plan's: the goals, a short plan (whole up to :data:`BRIEF_WHOLE_PLAN` tasks,
    else each status's count and the task's neighbours), the results of the tasks it depends on
    (at most :data:`BRIEF_NEIGHBOURS`, each cut as in the whole prompt), the task; then the
    standing guidance. ``system_prompt`` repeats every plan line and every result instead."""
    goals = _goals(session)
    if len(goals) > _BRIEF_GOALS_CHARS:
        goals = goals[: _BRIEF_GOALS_CHARS - 1] + "…"
    plan = session.plan
    plan_text, results = "(none)", "(none)"
    if plan is not None:
        before, after = plan.predecessors(task.id), plan.successors(task.id)
        if len(plan.tasks) <= BRIEF_WHOLE_PLAN:
            lines = _lines(session, plan)
            plan_text = "\n".join(lines.line(session, i, t)[0] for i, t in enumerate(plan.tasks))
        else:
            # The plan's tally, kept by the status writes: a brief costs the same whatever the plan's size.
            counts = status_counts(plan)
            plan_text = f"{len(plan.tasks)} tasks: " + ", ".join(f"{n} {status}" for status, n in counts)
            if before:
                plan_text += f"\nThis task comes after: {_some(before)}"
            if after:
                plan_text += f"\nThen: {_some(after)}"
        done = []
        for dep in before[:BRIEF_NEIGHBOURS]:
            if dep in session.completed_results:
                text = str(session.completed_results[dep] or "").strip().replace("\n", " ")
                done.append(f"- {dep}: {text[:_RESULT_CHARS] or '(no result text)'}")
        if len(before) > BRIEF_NEIGHBOURS:
            done.append(f"(and {len(before) - BRIEF_NEIGHBOURS} more)")
        results = "\n".join(done) or "(none)"
    prompt = render_prompt(
        "agent_task.brief",
        reporting=reporting,
        goals=goals,
        plan=plan_text,
        results=results,
        task_id=task.id,
        task_title=task.title,
        task_description=task.description or "(none)",
    )
    guidance = _guidance(session)
    return f"{prompt.rstrip()}\n\n{guidance.rstrip()}" if guidance else prompt.rstrip()


def _some(ids: list[str]) -> str:
    shown = ", ".join(ids[:BRIEF_NEIGHBOURS])
    return f"{shown} (and {len(ids) - BRIEF_NEIGHBOURS} more)" if len(ids) > BRIEF_NEIGHBOURS else shown
