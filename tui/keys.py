"""The live app's one key table: the footer, the help screen and the command palette are all
built from it, so a key and its description cannot drift apart."""

from __future__ import annotations

from typing import Iterable

from textual.binding import Binding, BindingType

#: How help shows keys whose Textual names are words.
KEY_DISPLAY = {"slash": "/", "question_mark": "?", "ctrl+p": "^p", "shift+tab": "shift+tab"}

KEYS: list[BindingType] = [
    # One label for both directions: a label that followed the state would rebuild the
    # footer on every toggle (tens of ms, measured), delaying the ack the person waits for.
    # The header says PAUSED.
    Binding("p", "pause", "Pause/Resume", tooltip="Pause the run (PAUSE), or resume it when paused (RESUME)", id="pause"),
    Binding("s", "steer", "Steer", tooltip="Steer: type a note, Enter sends STEER", id="steer"),
    Binding("w", "rewind", "Rewind", tooltip="Rewind to the task selected in the plan (REWIND_TO)", id="rewind"),
    Binding("a", "approve", "Approve", tooltip="Approve the selected pending approval (APPROVE)", id="approve"),
    Binding("x", "reject", "Reject", tooltip="Reject the selected approval, with an optional reason (REJECT)", id="reject"),
    Binding("i", "inject", "Inject", tooltip="Inject a message into the running turn (INJECT_MESSAGE)", id="inject"),
    Binding("c", "cancel_run", "Cancel", tooltip="Cancel the run, after a confirmation (CANCEL)", id="cancel"),
    Binding("slash", "filter", "Filter", tooltip="Filter the event log by text or kind (Esc clears)", id="filter"),
    Binding("tab", "focus_next", "Next pane", show=False, tooltip="Move to the next pane", id="focus.next"),
    Binding("shift+tab", "focus_previous", "Previous pane", show=False, tooltip="Move to the previous pane", id="focus.previous"),
    Binding("question_mark", "help", "Help", tooltip="Show the keys", id="help"),
    Binding("q", "quit", "Quit", tooltip="Quit the TUI (the run is not cancelled)", id="quit"),
    Binding("escape", "clear_filter", "Clear filter", show=False, id="filter.clear"),
]  # fmt: skip

#: Actions that help and the command palette offer; pane moves and Esc are keys only.
PALETTE_ACTIONS = ("pause", "steer", "rewind", "approve", "reject", "inject", "cancel_run", "filter", "help", "quit")


def palette_bindings(bindings: Iterable[BindingType]) -> list[Binding]:
    """The bindings offered by help and the command palette, in table order."""
    return [b for b in bindings if isinstance(b, Binding) and b.action in PALETTE_ACTIONS]


def help_rows(offered: list[Binding], bindings: Iterable[BindingType]) -> list[Binding]:
    """Help's rows: the offered keys, then pane moves and the palette, with help and quit last."""
    panes = [b for b in bindings if isinstance(b, Binding) and b.action.startswith("focus_")]
    palette = Binding("ctrl+p", "command_palette", "Command palette", tooltip="Command palette: the same actions by name")
    return offered[:-2] + panes + [palette] + offered[-2:]
