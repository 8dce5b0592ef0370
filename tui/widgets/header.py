"""The run header: name, run id, goal, state, revision, elapsed time, rate and progress."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from goldfive.view import RunPhase, RunState
from goldfive.view.attention import CANCELLED, cancelled_by_person
from goldfive.types import TaskStatus
from goldfive.usage.format import format_cost, format_rate, format_tokens
from ..format import clip, clock_text

_BAR_WIDTH = 24


class RunHeader(Static):
    COMPONENT_CLASSES = {
        "header--brand",
        "header--dim",
        "header--bar-done",
        "header--bar-todo",
        "header--approvals",
    } | {f"header--{p.value.lower()}" for p in RunPhase}

    _shown: tuple[RunState, int, str, bool, int] | None = None

    def on_resize(self) -> None:
        """Lay the lines out again for the new width: an ended run (or a replay) repaints
        nothing else, and its goal line, fitted to the old width, wrapped over the progress
        line (the trial, at 60 columns)."""
        if self._shown is not None:
            state, now_ms, note, rate, rejected = self._shown
            self.show(state, now_ms, note, rate=rate, rejected=rejected)

    def show(self, state: RunState, now_ms: int, stream_note: str = "", *, rate: bool = True, rejected: int = 0) -> None:
        """``rate``: show events per second (a live run); ``rejected``: tool calls a person
        rejected, part of the run's summary."""
        self._shown = (state, now_ms, stream_note, rate, rejected)
        style = lambda name: self.get_component_rich_style(name, partial=True)  # noqa: E731
        width = max(40, self.size.width or 120)
        phase = state.phase
        cancelled = cancelled_by_person(state)  # a person ended it: not shown as a failure
        run = state.run_id[:4] + ".." if len(state.run_id) > 6 else state.run_id
        # Narrow (a phone, 60x16) the first line gives up the rate, then the revision, then the
        # run id, so that it never wraps over the progress line.
        for show_rate, show_rev, show_run in ((rate, True, True), (False, True, True), (False, False, True), (False, False, False)):
            right = Text()
            right.append(f" {CANCELLED if cancelled else phase.value} ", style("header--dim" if cancelled else f"header--{phase.value.lower()}"))
            right.append(f"  rev {state.revision}  " if show_rev else " ")
            right.append(f"{clock_text(state.elapsed_ms(now_ms))} ")
            if show_rate:
                right.append(f" {state.events_per_second(now_ms):.0f} ev/s ", style("header--dim"))
            left = Text()
            left.append(" goldfive ", style("header--brand"))
            if show_run:
                left.append(f"  run {run}  ", style("header--dim"))
            else:
                left.append(" ")
            if left.cell_len + right.cell_len + 8 <= width:  # room for a few characters of the goal
                break
        room = width - left.cell_len - right.cell_len - 2
        left.append(clip(state.goal_summary, max(0, room)))
        line1 = left + Text(" " * max(1, width - left.cell_len - right.cell_len)) + right

        total = len(state.tasks)
        done = state.count_status(TaskStatus.COMPLETED)
        bar_width = _BAR_WIDTH if width >= 60 else _BAR_WIDTH // 2
        filled = round(bar_width * done / total) if total else 0
        line2 = Text(" ")
        line2.append("█" * filled, style("header--bar-done"))
        line2.append("░" * (bar_width - filled), style("header--bar-todo"))
        line2.append(f" {done}/{total} tasks")
        waiting = len(state.waiting_for_a_person())  # not those the run's reviewer has, until it asks
        full = 1 + bar_width + len(f" {done}/{total} tasks") + (len(f"   {waiting} approvals waiting") if waiting else 0)
        if state.usage.calls:
            full += len(f"   {format_tokens(state.usage.tokens)} tok {format_cost(state.usage)}  {format_rate(state.burn_rate(now_ms))}")
        narrow = width < 60 or full > width  # the waiting count must not be the part cut off
        noun = "approval" if waiting == 1 else "approvals"
        if waiting and narrow:  # first where the line is short: it is what needs the person
            line2.append(f"   {waiting} waiting", style("header--approvals"))
        if state.usage.calls:
            line2.append(f"   {format_tokens(state.usage.tokens)} tok {format_cost(state.usage)}")
            burn = format_rate(state.burn_rate(now_ms))
            if burn and not narrow:
                line2.append(f"  {burn}", style("header--dim"))
        if waiting and not narrow:
            line2.append(f"   {waiting} {noun} waiting", style("header--approvals"))
        if reviewing := len(state.with_reviewer()):
            line2.append(f"   reviewer has {reviewing}", style("header--dim"))
        detail, detail_style = "", "header--dim"
        if state.recording_error and state.paused and not state.finished:
            detail, detail_style = f"needs you: recording failed: {state.recording_error}", "header--approvals"
        elif state.pause_kind == "BUDGET" and state.paused and not state.finished:
            # the held task keeps the phase at PAUSING: without this line nothing says why
            detail, detail_style = f"needs you: {state.budget_reached or 'budget reached'} ($ raises it)", "header--approvals"
        elif state.finished == "ABORTED" and state.abort_reason:
            detail = f"{'cancelled' if cancelled else 'aborted'}: {state.abort_reason}"
        elif state.finished == "COMPLETED" and state.outcome:
            detail = f"done: {state.outcome}"
        if rejected:
            noun = "tool call" if rejected == 1 else "tool calls"
            detail = f"{detail} · {rejected} {noun} rejected".strip(" ·")
        if stream_note:
            detail = f"{detail}  {stream_note}".strip()
        if detail:
            line2.append(f"   {clip(detail, max(0, width - line2.cell_len - 4))}", style(detail_style))
        for line in (line1, line2):  # one row each, whatever the width: a wrapped line pushes the next out
            line.truncate(width, overflow="ellipsis")
        self.update(Text("\n").join([line1, line2]))
