"""The runs table: one line per run, drawn with the Line API (only visible rows are painted).

Columns: id, state, progress bar, needs you (what and for how long), current task (takes
the width that is left), cost so far, age, origin. ``row_text`` builds one row; ``RunsTable.show`` sets
every row from rows already sorted and filtered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from rich.text import Text
from textual.geometry import Size

from goldfive.usage.format import format_cost

from ..format import age_text, clip
from ..widgets.cursorlist import CursorList
from .model import RunRow

__all__ = ["COLUMNS", "RunsTable", "header_text", "row_text"]

#: (title, width); the task column (width 0) takes what is left.
COLUMNS = (("RUN", 8), ("STATE", 9), ("PROGRESS", 10), ("NEEDS YOU", -1), ("TASK", 0), ("COST", 7), ("AGE", 6), ("ORIGIN", 6))
#: Narrower than this, the COST column is left out (the needs-you column keeps its room).
_COST_FROM = 100
_COST_W = 8
#: Narrower than this, the ORIGIN column is left out too: at 80 columns the task gets its room
#: and the age (6 wide, e.g. 15m08s) is whole.
_ORIGIN_FROM = 100
_ORIGIN_W = 7
#: The needs-you column: this wide at 80 columns, and a third of every column past 80.
_NEEDS_W = 29
_BAR = 5
_ORIGIN = {"connected": "conn.", "followed": "foll.", "recorded": "rec."}
_FIXED = sum(max(0, w) for _, w in COLUMNS) + len(COLUMNS) - 1 - _COST_W - _ORIGIN_W
_MIN_TASK = 6
_STATE_STYLE = {
    "RUNNING": "green", "PAUSED": "yellow", "PAUSING": "yellow", "COMPLETED": "blue",
    "ABORTED": "bold red", "CANCELLED": "dim", "DISCONNECTED": "yellow", "INTERRUPTED": "red", "PENDING": "dim",
}  # fmt: skip
_NEEDS_STYLE = {"approval": "bold yellow", "question": "bold cyan", "escalation": "bold magenta", "budget": "bold magenta", "failed": "bold red", "paused": "yellow"}
#: Narrow in every terminal (no emoji presentation).
_NEEDS_MARK = {"approval": "◆", "question": "?", "escalation": "▲", "failed": "✗", "paused": "‖"}


def _needs_width(width: int) -> int:
    return _NEEDS_W + max(0, (width - 80) // 3)


def _task_width(width: int) -> int:
    wide = width >= _COST_FROM
    return max(_MIN_TASK, width - _FIXED - _needs_width(width) - (_COST_W if wide else 0) - (_ORIGIN_W if width >= _ORIGIN_FROM else 0))


def header_text(width: int) -> Text:
    out = Text(style="bold")
    columns = [c for c in COLUMNS if (c[0] != "COST" or width >= _COST_FROM) and (c[0] != "ORIGIN" or width >= _ORIGIN_FROM)]
    for n, (title, w) in enumerate(columns):
        w = _needs_width(width) if w < 0 else (w or _task_width(width))
        out.append(title.ljust(w)[:w])
        if n < len(columns) - 1:
            out.append(" ")
    return out


def _bar(done: int, total: int) -> Text:
    filled = round(_BAR * done / total) if total else 0
    text = Text("■" * filled, style="green")
    text.append("□" * (_BAR - filled), style="dim")
    text.append(f" {done}/{total}".ljust(10 - _BAR)[: 10 - _BAR])
    return text


def needs_text(row: RunRow, now_ms: int, width: int = _NEEDS_W) -> Text:
    if not row.needs_kind:
        if row.reviewing:  # nobody needs to decide: the run's reviewer has it until it asks
            return Text(clip(row.reviewing, width).ljust(width), style="dim")
        return Text("·".ljust(width), style="dim")  # "·": a cell that starts with a space would merge
    age = f" {age_text(now_ms - row.needs_since_ms)}" if row.needs_since_ms and row.needs_kind != "failed" else ""
    reason = row.needs_reason
    if row.needs_kind == "approval":  # "approve publish_deck": the column's title says who
        reason = "approve " + reason.removeprefix("approval: ")
    words = f"{_NEEDS_MARK.get(row.needs_kind, '!')} {reason}"
    return Text(clip(words, width - len(age)).ljust(width - len(age)) + age, style=_NEEDS_STYLE.get(row.needs_kind, "bold"))


def row_text(row: RunRow, now_ms: int, width: int) -> Text:
    # Each column's trailing space belongs to its own span: a span never starts with spaces
    # (some SVG renderers drop them, which would shift the snapshot's columns).
    started = age_text(now_ms - row.started_ms) if row.started_ms else "-"
    out = Text(no_wrap=True, overflow="crop")
    out.append(row.run_id[:8].ljust(8) + " ", style="bold")
    out.append(row.state[:9].ljust(9) + " ", style=_STATE_STYLE.get(row.state, "") or "default")
    out.append_text(_bar(row.done, row.total))
    out.append(" ")
    needs = needs_text(row, now_ms, _needs_width(width))
    needs.append(" ")
    out.append_text(needs)
    task_w = _task_width(width)
    task = clip(row.current_task or ("·" if row.live else row.goal), task_w).ljust(task_w) + " "
    out.append(task, style="dim" if not row.current_task else "not dim")
    if width >= _COST_FROM:
        cost = format_cost(row.usage) or "·"  # "·": see needs_text
        out.append(cost[:7].ljust(7) + " ", style="dim" if cost == "·" else "not dim")
    if width < _ORIGIN_FROM:
        out.append(started[:6].ljust(6), style="dim")
        return out
    out.append(started[:6].ljust(6) + " ", style="dim")
    out.append(_ORIGIN.get(row.origin, row.origin)[:6].ljust(6), style="dim")
    return out


class _LazyRows(Sequence[Text]):
    """The table's rows, each built the first time it is drawn: a frame costs the visible
    rows, not all of them (1,000 runs re-render like 10)."""

    def __init__(self, rows: list[RunRow], now_ms: int, width: int) -> None:
        self._rows, self._now, self._width = rows, now_ms, width
        self._built: dict[int, Text] = {}

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Text: ...

    @overload
    def __getitem__(self, index: slice) -> list[Text]: ...

    def __getitem__(self, index: int | slice) -> Text | list[Text]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self._rows)
        text = self._built.get(index)
        if text is None:
            text = self._built[index] = row_text(self._rows[index], self._now, self._width)
        return text


class RunsTable(CursorList):
    def show(self, rows: list[RunRow], now_ms: int) -> None:
        width = self.scrollable_content_region.width or 80
        old = self.selected_key
        keys = [r.run_id for r in rows]
        self._keys, self._rows = keys, _LazyRows(rows, now_ms, width)  # type: ignore[assignment]
        self.virtual_size = Size(width, len(rows))
        self.cursor = keys.index(old) if old in keys else min(self.cursor, max(0, len(keys) - 1))
        if self.selected_key != old:
            self.post_message(self.Highlighted(self, self.selected_key or ""))
        self.refresh()
