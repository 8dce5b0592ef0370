"""What the TUI draws holds no control character a terminal would obey.

Rich keeps ``ESC`` (and C1 controls) inside a Text, and Textual writes a segment's text to
the terminal as it is: a run's goal holding ``ESC ] 52 ;`` would write the clipboard. The
filter below runs on every line any widget renders (Textual's line filters), so no widget
has to remember to clean what a run sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from goldfive.terminal_text import drop_controls, has_terminal_controls


class DropControls(LineFilter):
    """Removes C0, DEL and C1 controls from the text of every segment (never from Textual's
    own control segments, which carry the cursor moves)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(seg.control is None and has_terminal_controls(seg.text) for seg in segments):
            return segments
        return [
            Segment(drop_controls(seg.text), seg.style) if seg.control is None else seg
            for seg in segments
        ]


_FILTER = DropControls()


def safe_line_filters(filters: Sequence[LineFilter]) -> list[LineFilter]:
    """An app's line filters with :class:`DropControls` last."""
    return [*filters, _FILTER]
