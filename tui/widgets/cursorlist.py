"""A selectable list drawn with the Line API: only the visible rows are rendered."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class CursorList(ScrollView, can_focus=True):
    """Rows of rich Text with one highlighted row. Subclasses set rows with ``set_rows``
    and keys (ids) so the cursor stays on the same item when rows change."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"cursorlist--cursor", "cursorlist--cursor-blur"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        # The habits of less, vim, k9s and lazygit: j / k move, g / G jump to the ends.
        Binding("j", "cursor(1)", "Down", show=False),
        Binding("k", "cursor(-1)", "Up", show=False),
        Binding("g", "cursor_to(0)", "First", show=False),
        Binding("G", "cursor_to(-1)", "Last", show=False),
        Binding("enter", "select", "Open", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, repaint=True)

    class Highlighted(Message):
        """The highlighted item changed (``key`` is "" for an empty list)."""

        def __init__(self, sender: CursorList, key: str) -> None:
            super().__init__()
            self.list = sender
            self.key = key

        @property
        def control(self) -> CursorList:
            return self.list

    class Selected(Message):
        """Enter on an item (``key``): the app opens what the item stands for."""

        def __init__(self, sender: CursorList, key: str) -> None:
            super().__init__()
            self.list = sender
            self.key = key

        @property
        def control(self) -> CursorList:
            return self.list

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[Text] = []
        self._keys: list[str] = []
        #: Shown (dimmed) on the first line while there are no rows.
        self.empty_text = ""

    @property
    def selected_key(self) -> str | None:
        if 0 <= self.cursor < len(self._keys):
            return self._keys[self.cursor]
        return None

    def set_rows(self, keys: list[str], rows: list[Text]) -> None:
        old = self.selected_key
        self._keys, self._rows = keys, rows
        if old in keys:
            new_cursor = keys.index(old)
        else:
            new_cursor = min(self.cursor, max(0, len(keys) - 1))
        width = max((r.cell_len for r in rows), default=0)
        self.virtual_size = Size(width, len(rows))
        self.cursor = new_cursor
        if self.selected_key != old:
            self.post_message(self.Highlighted(self, self.selected_key or ""))
        self.refresh()

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self._rows) - 1)) if self._rows else 0

    def watch_cursor(self, value: int) -> None:
        self.scroll_to_region_if_needed(value)

    def scroll_to_region_if_needed(self, row: int) -> None:
        top = round(self.scroll_y)
        height = self.scrollable_content_region.height
        if row < top:
            self.scroll_to(y=row, animate=False, force=True)
        elif height and row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, force=True)

    def action_cursor(self, delta: int) -> None:
        self.cursor += delta
        self.post_message(self.Highlighted(self, self.selected_key or ""))

    def action_cursor_to(self, index: int) -> None:
        self.cursor = index if index >= 0 else len(self._rows) - 1
        self.post_message(self.Highlighted(self, self.selected_key or ""))

    def action_select(self) -> None:
        if self.selected_key:
            self.post_message(self.Selected(self, self.selected_key))

    def select_key(self, key: str) -> None:
        if key in self._keys:
            self.action_cursor_to(self._keys.index(key))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self._rows):
            if index == 0 and self.empty_text:
                empty = Text(f" {self.empty_text}", style="dim")
                segments = Segment.apply_style(empty.render(self.app.console, end=""), base)
                return Strip(list(segments)).crop_extend(0, width, base)
            return Strip.blank(width, base)
        segments = Segment.apply_style(self._rows[index].render(self.app.console, end=""), base)
        strip = Strip(list(segments)).crop_extend(scroll_x, scroll_x + width, base)
        if index == self.cursor:
            name = "cursorlist--cursor" if self.has_focus else "cursorlist--cursor-blur"
            cursor = self.get_component_rich_style(name, partial=True)
            strip = Strip(list(Segment.apply_style(strip, post_style=cursor)), width)
        return strip

    # Widget's own _on_focus/_on_blur still run: Textual calls the handler of every class in the MRO.
    def _on_focus(self, event: events.Focus) -> None:
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self.refresh()

