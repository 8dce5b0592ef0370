"""The event log: every event, control and ack, drawn with the Line API.

Lines are kept as small tuples and turned into segments only when visible, so 100,000
lines scroll like 100. Follow mode keeps the newest line in view until the person scrolls
up; then the border counts the lines that arrived since.
"""

from __future__ import annotations

from typing import ClassVar, Iterable

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.format import LogLine

_PLAIN = Style()

STYLES = (
    "run", "plan", "task", "ok", "fail", "warn", "dim", "control", "ack-ok", "ack-fail",
    "approval", "drift-info", "drift-warning", "drift-critical", "other", "time",
)  # fmt: skip


class EventLog(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"eventlog--{s}" for s in STYLES}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "follow", "Follow", show=False),
    ]

    filter_text: reactive[str] = reactive("", init=False)
    follow: reactive[bool] = reactive(True, init=False)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.lines: list[LogLine] = []
        # Indices of lines matching the filter; None while unfiltered (every line shows).
        self._shown: list[int] | None = None
        self.new_lines = 0
        self._width = 0
        self._pending = False

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
            self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
        self._update_subtitle()
        self.refresh()

    def _resize(self) -> None:
        tail = self.lines[-50:]
        self._width = max(self._width, max((_width(line) for line in tail), default=0))
        self.virtual_size = Size(self._width, self.shown_count)

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
        self.scroll_to(y=self.max_scroll_y, animate=False, force=True)

    def watch_filter_text(self, text: str) -> None:
        needle = text.lower()
        self._shown = None if not needle else [i for i, ln in enumerate(self.lines) if _matches(ln, needle)]
        self.new_lines = 0
        self._resize()
        self.follow = True
        self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
        self._update_subtitle()
        self.refresh()

    def _update_subtitle(self) -> None:
        parts = []
        if self.filter_text:
            parts.append(f"filter: {self.filter_text} ({self.shown_count})")
        if not self.follow and self.new_lines:
            parts.append(f"{self.new_lines} new ↓ end")
        elif not self.follow:
            parts.append("paused ↓ end")
        parts.append("/ filter")
        self.border_subtitle = "  ".join(parts)

    # -- drawing -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= self.shown_count:
            return Strip.blank(width, base)
        line = self.lines[index if self._shown is None else self._shown[index]]
        style = self.get_component_rich_style
        segments = [
            Segment(f"{line.at} ", base + style("eventlog--time", partial=True)),
            Segment(f"{line.label} ", base + style(f"eventlog--{line.style}", partial=True)),
            Segment(line.text, base + (style("eventlog--dim", partial=True) if line.style == "dim" else _PLAIN)),
        ]
        return Strip(segments).crop_extend(scroll_x, scroll_x + width, base)


def _width(line: LogLine) -> int:
    return len(line.at) + len(line.label) + len(line.text) + 2


def _matches(line: LogLine, needle: str) -> bool:
    return needle in line.label.lower() or needle in line.text.lower()

