"""The run screen's key tables: the footer, the help screen and the command palette are all
built from them, so a key and its description cannot drift apart.

A RunScreen binds every table; what its constructor flags leave out (the control keys without
``controls``, the transport without a replay, n and d without a runs screen) its
``check_action`` turns off, so those keys are neither shown nor handled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from textual.binding import Binding, BindingType

#: How help shows keys whose Textual names are words.
KEY_DISPLAY = {"right_square_bracket": "]", "left_square_bracket": "[", "slash": "/", "question_mark": "?", "ctrl+p": "^p", "shift+tab": "shift+tab", "dollar_sign": "$"}

KEYS: list[BindingType] = [
    # One label for both directions: a label that followed the state would rebuild the
    # footer on every toggle (tens of ms, measured), delaying the ack the person waits for.
    # The header says PAUSED.
    Binding("p", "pause", "Pause/Resume", tooltip="Pause the run (PAUSE), or resume it when paused (RESUME)", id="pause"),
    Binding("s", "steer", "Steer", tooltip="Steer: ctrl+s now, ctrl+l after this task, ctrl+g standing", id="steer"),
    # w and i stay out of the footer (help and the palette list them) so that at 80 columns
    # it still shows Cancel, Help and Quit.
    Binding("w", "rewind", "Rewind", show=False, tooltip="Rewind to the task selected in the plan (REWIND_TO)", id="rewind"),
    Binding("a", "approve", "Approve", tooltip="Approve the selected approval, or answer a question (ANSWER)", id="approve"),
    Binding("x", "reject", "Reject", tooltip="Reject the selected approval, with an optional reason (REJECT)", id="reject"),
    Binding("e", "edit_approval", "Edit+approve", show=False, tooltip="Edit the selected call's arguments, then approve (ctrl+s)", id="edit_approval"),
    Binding("r", "rules", "Rules", show=False, tooltip="The run's rules for \"always\": list, d removes one", id="rules"),
    Binding("l", "ledger", "Ledger", show=False, tooltip="The approvals ledger: who decided what, via which client", id="ledger"),
    Binding("i", "inject", "Inject", show=False, tooltip="Inject a message into the running turn (INJECT_MESSAGE)", id="inject"),
    Binding("t", "steering", "Steering notes", show=False, tooltip="Queued and standing notes: withdraw, hold, move, edit, remove", id="steering"),
    # In the footer only on a run that has a budget (80 columns keep Cancel, Help and Quit
    # otherwise); the key works on every run (set_budget, the same prompt).
    Binding("dollar_sign", "budget", "Budget", key_display="$", tooltip="Set the run's budget, e.g. tokens=100000 (BUDGET)", id="budget"),
    Binding("dollar_sign", "set_budget", "Budget", key_display="$", show=False, id="budget.set"),
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

#: The keys that steer a run: off without controls, and once the run has ended.
CONTROL_ACTIONS = frozenset({"pause", "steer", "rewind", "approve", "reject", "edit_approval", "rules", "inject", "steering", "budget", "set_budget", "cancel_run"})

#: Without controls (or once the run has ended) the same keys only say why they do nothing
#: (never in the footer); r opens the rules read-only.
READ_ONLY_KEYS: list[BindingType] = [
    Binding(b.key, f"read_only({b.description.lower()!r})", b.description, show=False, id=f"read_only.{b.id}")
    for b in KEYS
    if isinstance(b, Binding) and b.action in CONTROL_ACTIONS
]

#: A run opened from the runs screen: n and d work there as on the runs screen.
OPENER_KEYS: list[BindingType] = [
    Binding("n", "next_needing", "Next needing you", show=False, tooltip="Open the next run that needs you", id="hub.next"),
    Binding("d", "waiting", "Decisions waiting", show=False, tooltip="Everything waiting for a person (decisions), every run, oldest first", id="hub.waiting"),
    # Only on a run that failed (a is Approve while it runs): in the footer there, so it is found.
    Binding("a", "ack_failure", "Ack failure", tooltip="Acknowledge that this run failed: it no longer needs you", id="hub.ack"),
]  # fmt: skip

#: A replay's transport. Priority: the panes' own arrows and Home/End give way to it.
REPLAY_KEYS: list[BindingType] = [
    Binding("left,comma", "step(-1)", "Back", key_display="←", priority=True, tooltip="Step back one event (← or ,)", id="replay.back"),
    Binding("right,full_stop", "step(1)", "Forward", key_display="→", priority=True, tooltip="Step forward one event (→ or .)", id="replay.forward"),
    # Only on a replay picked from the list of recorded runs.
    Binding("b", "back_to_picker", "Runs", tooltip="Back to the list of recorded runs, to pick another", id="replay.runs"),
    Binding("space", "play", "Play/pause", key_display="space", priority=True, tooltip="Play the recording in real time (silences over 2 s shortened to 2 s), at the speed shown; again to pause", id="replay.play"),
    Binding("home", "jump(0)", "Start", show=False, priority=True, tooltip="Jump to the start of the recording", id="replay.start"),
    Binding("end", "jump(-1)", "End", show=False, priority=True, tooltip="Jump to the end of the recording", id="replay.end"),
    Binding("right_square_bracket", "mark(1)", "Next mark", key_display="]", show=False, priority=True, tooltip="Jump to the next control, approval, question or failure", id="replay.next"),
    Binding("left_square_bracket", "mark(-1)", "Previous mark", key_display="[", show=False, priority=True, tooltip="Jump to the previous control, approval, question or failure", id="replay.previous"),
    Binding("plus,equals_sign", "speed(1)", "Faster", key_display="+", priority=True, tooltip="Play faster (up to 64x)", id="replay.faster"),
    Binding("minus", "speed(-1)", "Slower", key_display="-", priority=True, tooltip="Play slower (down to 0.5x)", id="replay.slower"),
]  # fmt: skip
TRANSPORT_ACTIONS = frozenset({"step", "jump", "play", "speed", "mark"})

#: Actions that help and the command palette offer; pane moves and Esc are keys only.
PALETTE_ACTIONS = ("pause", "steer", "rewind", "approve", "reject", "edit_approval", "rules", "ledger", "inject", "steering", "budget", "cancel_run", "filter", "copy", "toggle_maximize", "help", "quit")


@dataclass(frozen=True)
class Capabilities:
    """What a run screen was built to do: steer the run (``controls``), move through a
    recording (``replay``), lead back to the runs screen it was opened from (``opener``)."""

    controls: bool
    replay: bool = False
    opener: bool = False
    #: A replay picked from the list of recorded runs: b goes back to it.
    picker: bool = False

    def enabled(self, action: str, *, ended: bool = False, typing: bool = False, failed: bool = False, budgeted: bool = False) -> bool:
        """Whether ``action``'s key works now (False: neither shown nor handled). ``ended``:
        the run has ended; ``typing``: an input has the focus (keys are text there);
        ``failed``: the run failed (not cancelled by a person); ``budgeted``: it has a budget."""
        if action == "budget" or action == "set_budget":
            return self.controls and not ended and budgeted == (action == "budget")
        if action in CONTROL_ACTIONS:
            return self.controls and not ended
        if action == "read_only":  # says why the key does nothing (a view, or the run ended)
            return not self.controls or ended
        if action in TRANSPORT_ACTIONS:
            return self.replay and not typing
        if action == "back_to_picker":
            return self.replay and self.picker
        if action in ("next_needing", "waiting"):
            return self.opener
        if action == "ack_failure":
            return self.opener and failed
        return True

    def offered(self) -> list[Binding]:
        """What help and the command palette offer: the replay's moves first, the control
        keys only with controls, n and d (with an opener) before help and quit."""
        keys = [b for b in palette_bindings(KEYS) if self.controls or b.action not in CONTROL_ACTIONS]
        if self.replay:
            keys = [b for b in REPLAY_KEYS if isinstance(b, Binding) and (self.picker or b.action != "back_to_picker")] + keys
        if self.opener:
            keys = keys[:-2] + [b for b in OPENER_KEYS if isinstance(b, Binding)] + keys[-2:]
        return keys


def palette_bindings(bindings: Iterable[BindingType]) -> list[Binding]:
    """The bindings offered by help and the command palette, in table order."""
    return [b for b in bindings if isinstance(b, Binding) and b.action in PALETTE_ACTIONS]


def help_rows(offered: list[Binding], bindings: Iterable[BindingType] = KEYS, *, decide: bool = True) -> list[Binding]:
    """Help's rows: the offered keys, then pane moves and the palette, with help and quit last.
    ``decide``: an approval opened with Enter can be answered there (not in a read-only view)."""
    panes = [b for b in bindings if isinstance(b, Binding) and b.action.startswith("focus_")]
    palette = Binding("ctrl+p", "command_palette", "Command palette", tooltip="Command palette: the same actions by name")
    # Enter belongs to the panes (each opens its own selection), so it is not in KEYS.
    approval = "an approval (then a / x)" if decide else "an approval"
    enter = Binding("enter", "open", "Open", tooltip=f"Open the selection: {approval}, an event, a task")
    # The event log's own keys (while it has the focus).
    tail = Binding("f", "toggle_follow", "Tail", tooltip="In the event log: tail on / off (follow the newest line)")
    wrap = Binding("W", "toggle_wrap", "Wrap", tooltip="In the event log: wrap long lines, shown whole / one line each")
    moves = Binding("j,k,g,G", "cursor", "Move", key_display="j k g G", tooltip="Down, up, first, last in the plan, approvals and log (arrows, Home, End too)")
    return offered[:-2] + [enter, moves, tail, wrap] + panes + [palette] + offered[-2:]
