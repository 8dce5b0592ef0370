"""The plan tree: every task with its status mark, dependencies and revision, plus a detail
panel for the task under the cursor."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widgets import Static

from goldfive.view import RunState, TaskView
from goldfive.types import TaskStatus
from tui.format import STATUS_MARK, clip, clock_text, duration_text, task_note
from tui.widgets.cursorlist import CursorList


class PlanView(CursorList):
    COMPONENT_CLASSES: ClassVar[set[str]] = CursorList.COMPONENT_CLASSES | {
        f"plan--{s.value.lower()}" for s in TaskStatus
    } | {"plan--dim", "plan--revision"}

    def update_plan(self, state: RunState, now_ms: int) -> None:
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
            if t.deps:
                row.append(("  " if note else "") + "← " + ", ".join(t.deps), dim)
            rows.append(row)
        self.set_rows([t.id for t in tasks], rows)


def task_detail(task: TaskView | None, state: RunState, now_ms: int) -> Text:
    if task is None:
        return Text("no task selected", style="dim")
    out = Text()
    out.append(f"{STATUS_MARK[task.status]} {task.title or task.id}", style="bold")
    out.append(f"  {task.status.value}")
    if task.added_revision:
        out.append(f"  added in rev {task.added_revision}")
    out.append("\n")
    if task.description:
        out.append(clip(task.description, 300) + "\n")
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
    if task.result:
        out.append("result: " + clip(task.result, 300) + "\n")
    if task.reason:
        out.append("reason: " + clip(task.reason, 300) + "\n")
    if task.progress and task.status == TaskStatus.RUNNING:
        out.append("progress: " + clip(task.progress, 200) + "\n")
    out.rstrip()
    return out


class TaskDetail(Static):
    """The selected task's description, result, reason and timing."""

    def show(self, task: TaskView | None, state: RunState, now_ms: int) -> None:
        self.update(task_detail(task, state, now_ms))
