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
    Binding("s", "steer", "Steer", tooltip="Steer: type a note (lines allowed), ctrl+s sends STEER", id="steer"),
    # w and i stay out of the footer (help and the palette list them) so that at 80 columns
    # it still shows Cancel, Help and Quit.
    Binding("w", "rewind", "Rewind", show=False, tooltip="Rewind to the task selected in the plan (REWIND_TO)", id="rewind"),
    Binding("a", "approve", "Approve", tooltip="Approve the selected pending approval (APPROVE)", id="approve"),
    Binding("x", "reject", "Reject", tooltip="Reject the selected approval, with an optional reason (REJECT)", id="reject"),
    Binding("e", "edit_approval", "Edit+approve", show=False, tooltip="Edit the selected call's arguments, then approve (ctrl+s)", id="edit_approval"),
    Binding("r", "rules", "Rules", show=False, tooltip="The run's rules for \"always\": list, d removes one", id="rules"),
    Binding("l", "ledger", "Ledger", show=False, tooltip="The approvals ledger: who decided what, via which client", id="ledger"),
    Binding("i", "inject", "Inject", show=False, tooltip="Inject a message into the running turn (INJECT_MESSAGE)", id="inject"),
    Binding("c", "cancel_run", "Cancel", tooltip="Cancel the run, after a confirmation (CANCEL)", id="cancel"),
    # The log's border says "/ filter"; y is in help.
    Binding("slash", "filter", "Filter", show=False, tooltip="Filter the event log by text or kind (Esc clears)", id="filter"),
    Binding("y", "copy", "Copy", show=False, tooltip="Copy the selected event, or the selected task's result", id="copy"),
    Binding("z", "toggle_maximize", "Zoom pane", show=False, tooltip="Maximize the focused pane; z again (or Esc) restores", id="maximize"),
    Binding("tab", "focus_next", "Next pane", show=False, tooltip="Move to the next pane", id="focus.next"),
    Binding("shift+tab", "focus_previous", "Previous pane", show=False, tooltip="Move to the previous pane", id="focus.previous"),
    Binding("question_mark", "help", "Help", tooltip="Show the keys", id="help"),
    Binding("q", "quit", "Quit", tooltip="Quit; while a run started here is live, asks what to do with it", id="quit"),
    Binding("escape", "clear_filter", "Clear filter", show=False, id="filter.clear"),
]  # fmt: skip

#: Actions that help and the command palette offer; pane moves and Esc are keys only.
PALETTE_ACTIONS = ("pause", "steer", "rewind", "approve", "reject", "edit_approval", "rules", "ledger", "inject", "cancel_run", "filter", "copy", "toggle_maximize", "help", "quit")


def palette_bindings(bindings: Iterable[BindingType]) -> list[Binding]:
    """The bindings offered by help and the command palette, in table order."""
    return [b for b in bindings if isinstance(b, Binding) and b.action in PALETTE_ACTIONS]


def help_rows(offered: list[Binding], bindings: Iterable[BindingType]) -> list[Binding]:
    """Help's rows: the offered keys, then pane moves and the palette, with help and quit last."""
    panes = [b for b in bindings if isinstance(b, Binding) and b.action.startswith("focus_")]
    palette = Binding("ctrl+p", "command_palette", "Command palette", tooltip="Command palette: the same actions by name")
    # Enter belongs to the panes (each opens its own selection), so it is not in KEYS.
    enter = Binding("enter", "open", "Open", tooltip="Open the selection: an approval (then a / x), an event, a task")
    # The event log's own keys (while it has the focus).
    tail = Binding("f", "toggle_follow", "Tail", tooltip="In the event log: tail on / off (follow the newest line)")
    wrap = Binding("W", "toggle_wrap", "Wrap", tooltip="In the event log: wrap long lines, shown whole / one line each")
    return offered[:-2] + [enter, tail, wrap] + panes + [palette] + offered[-2:]
