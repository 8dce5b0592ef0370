"""The event log: every event and control (with its ack), drawn with the Line API.

Lines are kept as small tuples and turned into segments only when visible, so 100,000
lines scroll like 100. A cursor marks one line (Enter opens it whole); follow mode keeps
the cursor on the newest line until the person moves it up; then the border counts the
lines that arrived since.
"""

from __future__ import annotations

import bisect
from functools import lru_cache

from typing import ClassVar, Iterable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from goldfive import conv
from goldfive.types import DriftSeverity

from ..format import LogLine, describe

_PLAIN = Style()

STYLES = (
    "run", "plan", "task", "ok", "fail", "warn", "dim", "control", "ack-ok", "ack-fail",
    "approval", "drift-info", "drift-warning", "drift-critical", "other", "time",
)  # fmt: skip


class EventLog(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"eventlog--{s}" for s in STYLES} | {
        "eventlog--cursor",
        "eventlog--cursor-blur",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "cursor_page(-1)", "Page up", show=False),
        Binding("pagedown", "cursor_page(1)", "Page down", show=False),
        Binding("home", "cursor_home", "First", show=False),
        Binding("end", "follow", "Follow", show=False),
        Binding("j", "cursor(1)", "Down", show=False),
        Binding("k", "cursor(-1)", "Up", show=False),
        Binding("g", "cursor_home", "First", show=False),
        Binding("G", "follow", "Follow", show=False),
        Binding("enter", "open", "Open", show=False),
        # Toolong's habits: a tail toggle and a wrap toggle, named in the border.
        Binding("f", "toggle_follow", "Tail", show=False),
        Binding("W", "toggle_wrap", "Wrap", show=False),
    ]

    filter_text: reactive[str] = reactive("", init=False)
    follow: reactive[bool] = reactive(True, init=False)
    #: Long lines wrap onto the next rows instead of scrolling sideways.
    wrap: reactive[bool] = reactive(False, init=False)
    #: Index into the shown lines (filter applied) of the marked line.
    cursor: reactive[int] = reactive(0, init=False, repaint=True)

    class Opened(Message):
        """Enter (or a double click) on a line: ``line`` is the one to show whole."""

        def __init__(self, log: EventLog, line: LogLine) -> None:
            super().__init__()
            self.log = log
            self.line = line

        @property
        def control(self) -> EventLog:
            return self.log

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.lines: list[LogLine] = []
        # Indices of lines matching the filter; None while unfiltered (every line shows).
        self._shown: list[int] | None = None
        self.new_lines = 0
        self._width = 0
        self._pending = False
        # While wrapping: the first screen row of each shown line (``_row_start[i]``), for
        # ``_mapped`` shown lines at ``_wrap_width`` columns; extended as lines arrive.
        self._row_start: list[int] = []
        self._rows_total = 0
        self._mapped = 0
        self._wrap_width = 0
        #: Unshortened text of lines shown wrapped, by index into ``lines``.
        self._whole: dict[int, str] = {}

    # -- content ---------------------------------------------------------------------------
    def add(self, lines: Iterable[LogLine]) -> None:
        """Append lines; the view updates on the next ``flush`` (the app throttles it)."""
        start = len(self.lines)
        self.lines.extend(lines)
        added = len(self.lines) - start
        if not added:
            return
        if self._shown is not None:
            needle = self.filter_text.lower()
            before = len(self._shown)
            self._shown.extend(i for i in range(start, len(self.lines)) if _matches(self.lines[i], needle))
            added = len(self._shown) - before
        if not self.follow:
            self.new_lines += added
        self._pending = True

    def clear(self) -> None:
        """Forget every line (the runs screen opened another run in this app)."""
        self.lines.clear()
        self._shown = None if self._shown is None else []
        self.new_lines = 0
        self._width = 0
        self.cursor = 0
        self._pending = True

    def replace(self, index: int, line: LogLine) -> None:
        """Rewrite line ``index`` in place (a control's line when its ack arrives)."""
        self.lines[index] = line
        self._whole.pop(index, None)
        self._mapped = 0  # its wrapped height may have changed
        self._pending = True
        self.refresh()

    @property
    def selected_line(self) -> LogLine | None:
        if 0 <= self.cursor < self.shown_count:
            return self.lines[self.cursor if self._shown is None else self._shown[self.cursor]]
        return None

    @property
    def shown_count(self) -> int:
        return len(self.lines) if self._shown is None else len(self._shown)

    def shown_lines(self) -> list[LogLine]:
        """Every line the current filter lets through (for tests and export)."""
        return list(self.lines) if self._shown is None else [self.lines[i] for i in self._shown]

    def flush(self) -> None:
        """Apply added lines to the view: size, follow scroll, counters."""
        if not self._pending:
            return
        self._pending = False
        self._resize()
        if self.follow:
            self.cursor = max(0, self.shown_count - 1)
            self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
        self._update_subtitle()
        self.refresh()

    def _resize(self) -> None:
        tail = self.lines[-50:]
        self._width = max(self._width, max((_width(line) for line in tail), default=0))
        if self.wrap:
            self._map_rows()
            self.virtual_size = Size(self._wrap_width, self._rows_total)
        else:
            self.virtual_size = Size(self._width, self.shown_count)

    # -- wrapping ----------------------------------------------------------------------------
    def _shown_line(self, i: int) -> LogLine:
        """Shown line ``i``; while wrapping, with its text whole (not shortened for one row)."""
        index = i if self._shown is None else self._shown[i]
        line = self.lines[index]
        if not self.wrap or line.event is None:
            return line
        text = self._whole.get(index)
        if text is None:
            text = self._whole[index] = describe(line.event, whole=True)[1]
        return line._replace(text=text)

    def _map_rows(self) -> None:
        """Bring the row map up to date: whole when the width changed, else the new lines."""
        width = max(1, self.scrollable_content_region.width or self.size.width or 80)
        if width != self._wrap_width or self._mapped > self.shown_count:
            self._wrap_width, self._mapped, self._rows_total = width, 0, 0
        if self._mapped == 0:
            self._row_start.clear()
            self._rows_total = 0
        for i in range(self._mapped, self.shown_count):
            self._row_start.append(self._rows_total)
            self._rows_total += max(1, -(-_width(self._shown_line(i)) // width))
        self._mapped = self.shown_count

    def _rows_of(self, index: int) -> tuple[int, int]:
        """The first screen row of shown line ``index`` and how many rows it takes."""
        if not self.wrap or not self._row_start:
            return index, 1
        index = max(0, min(index, len(self._row_start) - 1))
        start = self._row_start[index]
        end = self._row_start[index + 1] if index + 1 < len(self._row_start) else self._rows_total
        return start, end - start

    def _line_at_row(self, row: int) -> int:
        if not self.wrap:
            return row
        return max(0, bisect.bisect_right(self._row_start, row) - 1)

    def watch_wrap(self, wrap: bool) -> None:
        self._mapped = 0
        self.scroll_to(x=0, animate=False, force=True)
        self._resize()
        self.watch_cursor(self.cursor)
        self._update_subtitle()
        self.refresh()

    def on_resize(self) -> None:
        if self.wrap:
            self._rewrap()

    def _rewrap(self) -> None:
        if self.wrap and self.scrollable_content_region.width != self._wrap_width:
            self._resize()
            self.watch_cursor(self.cursor)
            self.refresh()

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap

    def action_toggle_follow(self) -> None:
        """Tail on (jump to the newest line and stay there) or off (stay where the cursor is)."""
        if self.follow:
            self.follow = False
        else:
            self.action_follow()

    # -- follow mode and filter --------------------------------------------------------------
    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        at_bottom = round(new_value) >= self.max_scroll_y
        if new_value < old_value and not at_bottom:
            self.follow = False
        elif at_bottom and not self.follow:
            self.follow = True

    def watch_follow(self, follow: bool) -> None:
        if follow:
            self.new_lines = 0
        self._update_subtitle()

    def action_follow(self) -> None:
        self.follow = True
        self.cursor = max(0, self.shown_count - 1)
        self.scroll_to(y=self.max_scroll_y, animate=False, force=True)

    # -- the cursor ----------------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, self.shown_count - 1))

    def watch_cursor(self, value: int) -> None:
        top, height = round(self.scroll_y), self.scrollable_content_region.height
        first, rows = self._rows_of(value)
        if first < top:
            self.scroll_to(y=first, animate=False, force=True)
        elif height and first + rows > top + height:
            self.scroll_to(y=first + rows - height, animate=False, force=True)

    def action_cursor(self, delta: int) -> None:
        last = self.shown_count - 1
        self.cursor += delta
        if self.cursor >= last:
            self.action_follow()
        else:
            self.follow = False

    def action_cursor_page(self, pages: int) -> None:
        self.action_cursor(pages * max(1, self.scrollable_content_region.height - 1))

    def action_cursor_home(self) -> None:
        self.follow = False
        self.cursor = 0

    def action_open(self) -> None:
        line = self.selected_line
        if line is not None:
            self.post_message(self.Opened(self, line))

    def on_click(self, event: events.Click) -> None:
        index = self._line_at_row(round(self.scroll_y) + event.y)
        if 0 <= index < self.shown_count:
            self.follow = index == self.shown_count - 1
            self.cursor = index
            if event.chain == 2:
                self.action_open()

    def watch_filter_text(self, text: str) -> None:
        needle = text.lower()
        self._shown = None if not needle else [i for i, ln in enumerate(self.lines) if _matches(ln, needle)]
        self._mapped = 0
        self.new_lines = 0
        self._resize()
        self.action_follow()
        self._update_subtitle()
        self.refresh()

    def _update_subtitle(self) -> None:
        parts = []
        if self.filter_text:
            problem = filter_problem(self.filter_text.lower())
            parts.append(problem if problem else f"filter: {self.filter_text} ({self.shown_count})")
        if not self.follow and self.new_lines:
            parts.append(f"{self.new_lines} new ↓ end")
        elif not self.follow:
            parts.append("tail off: f or end")
        if self.wrap:
            parts.append("wrapped")
        parts.append("/ filter")
        self.border_subtitle = "  ".join(parts)

    # -- drawing -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        row = scroll_y + y
        index = self._line_at_row(row)
        if index >= self.shown_count or (self.wrap and row >= self._rows_total):
            return Strip.blank(width, base)
        if self.wrap:  # this row shows the part of the line that starts at column part * width
            if width and width != self._wrap_width:  # a scrollbar came or went: map rows again
                self.call_later(self._rewrap)
            scroll_x = (row - self._rows_of(index)[0]) * width
        line = self._shown_line(index)
        style = self.get_component_rich_style
        segments = [
            Segment(f"{line.at} ", base + style("eventlog--time", partial=True)),
            Segment(f"{line.label} ", base + style(f"eventlog--{line.style}", partial=True)),
            Segment(line.text, base + (style("eventlog--dim", partial=True) if line.style == "dim" else _PLAIN)),
        ]
        strip = Strip(segments).crop_extend(scroll_x, scroll_x + width, base)
        if index == self.cursor:
            cursor = style("eventlog--cursor" if self.has_focus else "eventlog--cursor-blur", partial=True)
            strip = Strip(list(Segment.apply_style(strip, post_style=cursor)), width)
        return strip

    def _on_focus(self, event: events.Focus) -> None:
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self.refresh()


def _width(line: LogLine) -> int:
    return len(line.at) + len(line.label) + len(line.text) + 2


def _matches(line: LogLine, needle: str) -> bool:
    """Every term of the filter holds for the line: the plain words, as one phrase in its
    label or text; ``kind:X`` (the event's kind contains X); ``task:X`` (its task id contains
    X); ``severity>=S`` (a drift of severity S or worse: info, warning, critical)."""
    return all(_holds(line, how, what) for how, what in _terms(needle))


def filter_problem(needle: str) -> str:
    """Why the filter can match nothing, in words ("" when it can): a severity that is not
    one, so an empty log says why it is empty."""
    for how, what in _terms(needle):
        if how == "severity" and what.upper() not in DriftSeverity.__members__:
            names = "|".join(s.lower() for s in DriftSeverity.__members__)
            return f"bad severity {what!r}: {names}"
    return ""


@lru_cache(maxsize=64)
def _terms(needle: str) -> tuple[tuple[str, str], ...]:
    out, plain = [], []
    for word in needle.split(" "):
        for prefix, how in (("kind:", "kind"), ("task:", "task"), ("severity>=", "severity")):
            if word.startswith(prefix):
                out.append((how, word[len(prefix) :]))
                break
        else:
            plain.append(word)
    phrase = " ".join(plain).strip()
    if phrase:
        out.append(("text", phrase))
    return tuple(out)


def _holds(line: LogLine, how: str, what: str) -> bool:
    if how == "text":
        return what in line.label.lower() or what in line.text.lower()
    ev = line.event
    kind = (ev.WhichOneof("payload") or "") if ev is not None else line.label.strip().lower()
    if how == "kind":
        return what in kind
    payload = getattr(ev, kind, None) if ev is not None and kind else None
    if how == "task":
        task = str(getattr(payload, "task_id", "") or getattr(payload, "current_task_id", "") or "")
        return bool(what) and what in task.lower()
    if kind != "drift_detected" or payload is None:  # severity: drifts only
        return False
    try:
        floor = DriftSeverity(what.upper())
    except ValueError:
        return False
    severity = conv.drift_severity_from_pb(payload.severity)
    return isinstance(severity, DriftSeverity) and severity >= floor

