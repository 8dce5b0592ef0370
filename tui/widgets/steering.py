"""The steering section of a run screen: the steers queued for when the next task starts and
the standing guidance, one line each; hidden while there are none (``t`` opens them to change)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from goldfive.steering import SteeringNotes

#: Lines shown at most; the rest are counted on the last line.
MAX_LINES = 4


class SteeringView(Static):
    DEFAULT_CSS = """
    SteeringView { height: auto; max-height: 6; border: round $secondary; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._shown: tuple[object, ...] = ()

    def update_notes(self, notes: SteeringNotes) -> None:
        key = (tuple(notes.queue), tuple(notes.standing))
        if key == self._shown:
            return
        self._shown = key
        rows = [("held" if n.held else "next", n) for n in notes.queue] + [("always", n) for n in notes.standing]
        self.display = bool(rows)
        self.border_title = f"Steering: {len(notes.queue)} queued, {len(notes.standing)} standing"
        text = Text(no_wrap=True, overflow="ellipsis")
        for i, (what, n) in enumerate(rows[:MAX_LINES]):
            if i:
                text.append("\n")
            text.append(f"{n.id:<4}", "bold")
            text.append(f"{what:<7}", "dim" if what == "held" else "cyan")
            text.append(" ".join(n.text.split()))
        if len(rows) > MAX_LINES:
            text.append(f"\n… {len(rows) - MAX_LINES} more (t shows them all)", "dim")
        self.update(text)
