"""The plan tree: every task with its status mark, dependencies and revision, plus a detail
panel for the task under the cursor."""

from __future__ import annotations

from typing import ClassVar, Mapping, Sequence

from rich.text import Text
from textual.widgets import Static

from goldfive.view import RunState, TaskView
from goldfive.types import TaskStatus
from goldfive.usage.format import format_totals
from ..format import STATUS_MARK, clip, clock_text, duration_text, task_note
from .cursorlist import CursorList


class PlanView(CursorList):
    COMPONENT_CLASSES: ClassVar[set[str]] = CursorList.COMPONENT_CLASSES | {
        f"plan--{s.value.lower()}" for s in TaskStatus
    } | {"plan--dim", "plan--revision", "plan--rejected"}

    def update_plan(self, state: RunState, now_ms: int, rejected: Mapping[str, Sequence[str]] | None = None) -> None:
        """``rejected``: task id -> the tool calls a person rejected in it (marked ⊗)."""
        rejected = rejected or {}
        tasks = state.ordered_tasks()
        # Titles get the room the pane has beyond ~16 cells for the mark, revision and a
        # short note: replanned tasks carry long titles ("review: focus on fewer slides").
        room = max(22, self.scrollable_content_region.width - 16)
        title_w = min(room, max((len(t.title or t.id) for t in tasks), default=8))
        dim = self.get_component_rich_style("plan--dim", partial=True)
        rev = self.get_component_rich_style("plan--revision", partial=True)
        rows: list[Text] = []
        for t in tasks:
            status_style = self.get_component_rich_style(f"plan--{t.status.value.lower()}", partial=True)
            row = Text(" ")
            row.append(STATUS_MARK[t.status], status_style)
            row.append(" ")
            row.append(clip(t.title or t.id, title_w).ljust(title_w))
            row.append(f" +r{t.added_revision}" if t.added_revision else "    ", rev)
            row.append(" ")
            note = clip(task_note(t, now_ms), 28)
            row.append(note, status_style if t.reason and t.reason.startswith(note[:-1]) else dim)
            calls = rejected.get(t.id, ())
            if calls:
                names = ", ".join(c.split(":")[0] for c in calls)
                row.append(("  " if note else "") + f"⊗ rejected {names}", self.get_component_rich_style("plan--rejected", partial=True))
                note = note or "x"
            if t.deps:
                row.append(("  " if note else "") + "← " + ", ".join(t.deps), dim)
            rows.append(row)
        self.set_rows([t.id for t in tasks], rows)


def task_detail(
    task: TaskView | None, state: RunState, now_ms: int, rejected: Sequence[str] = (), traceback: str = ""
) -> Text:
    """Everything known about a task, nothing clipped: the pane wraps and scrolls."""
    if task is None:
        return Text("no task selected", style="dim")
    out = Text()
    out.append(f"{STATUS_MARK[task.status]} {task.title or task.id}", style="bold")
    out.append(f"  {task.status.value}")
    if task.added_revision:
        out.append(f"  added in rev {task.added_revision}")
    out.append("\n")
    if task.description:
        out.append(task.description + "\n")
    if task.deps:
        out.append("after: " + ", ".join(task.deps) + "\n", style="dim")
    timing = []
    if task.started_ms and state.started_ms:
        timing.append(f"started {clock_text(task.started_ms - state.started_ms)}")
    if task.duration_ms is not None:
        timing.append(f"took {duration_text(task.duration_ms)}")
    elif task.status == TaskStatus.RUNNING and task.started_ms:
        timing.append(f"running {duration_text(max(0, now_ms - task.started_ms))}")
    if timing:
        out.append("  ".join(timing) + "\n", style="dim")
    if task.usage.calls:
        out.append("usage: " + format_totals(task.usage) + "\n", style="dim")
    for drift in state.drifts:
        if drift.task_id == task.id and drift.evidence:
            out.append(f"{drift.kind} {drift.severity}: {drift.detail}\n", style="bold yellow")
            for at_ms, what in drift.evidence:
                when = clock_text(at_ms - state.started_ms) if state.started_ms else ""
                out.append(f"  {when} {what}\n", style="dim")
    for call in rejected:
        out.append(f"rejected: {call}\n", style="bold red")
    if task.result:
        out.append("result: " + task.result + "\n")
    if task.reason:
        out.append("reason: " + task.reason + "\n")
    if task.progress and task.status == TaskStatus.RUNNING:
        out.append("progress: " + task.progress + "\n")
    if traceback:
        out.append("traceback:\n", style="bold")
        out.append(traceback.rstrip() + "\n", style="dim")
    out.rstrip()
    return out


class TaskDetail(Static):
    """The selected task's description, result, reason, rejections, timing and (for an
    agent crash in this process) the traceback. Its parent scrolls it."""

    def show(
        self, task: TaskView | None, state: RunState, now_ms: int, rejected: Sequence[str] = (), traceback: str = ""
    ) -> None:
        self.update(task_detail(task, state, now_ms, rejected, traceback))
