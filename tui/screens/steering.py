"""The steer queue and the standing guidance of a run (docs/protocol.md#steer-later-and-standing),
with the keys that change them: each sends a STEER_QUEUE or GUIDANCE control and shows its ack.

The list is read from the run's state (``RunState.notes``), which the events keep current, so
what it shows is what the run recorded, a moment after each ack.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from goldfive.control import AckResult, ControlAck, ControlKind
from goldfive.steering import SteeringNote, SteeringNotes

from ..inputs import validate_steer_note
from .note import NotePrompt

__all__ = ["SteeringScreen"]

Ask = Callable[[ControlKind, dict[str, Any]], Awaitable[ControlAck]]

HINT = "d withdraw/remove · h hold/release · [ ] move · e edit · m make standing · Esc close"


def note_line(note: SteeringNote, standing: bool) -> str:
    what = "standing" if standing else ("held" if note.held else "queued")
    by = f"  (by {note.author})" if note.author else ""
    text = " ".join(note.text.split())
    return f"{note.id:<4} {what:<8} {text}{by}"


class SteeringScreen(ModalScreen[None]):
    """Queued notes first (in delivery order), then the standing guidance."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d,delete", "remove", "Withdraw / remove", id="steering.remove"),
        Binding("h", "hold", "Hold / release", id="steering.hold"),
        Binding("left_square_bracket", "move('up')", "Move up", key_display="[", id="steering.up"),
        Binding("right_square_bracket", "move('down')", "Move down", key_display="]", id="steering.down"),
        Binding("e", "edit", "Edit", id="steering.edit"),
        Binding("m", "make_standing", "Make standing", id="steering.standing"),
        Binding("escape,q", "close", "Close", id="steering.close"),
    ]

    def __init__(self, notes: Callable[[], SteeringNotes], ask: Ask) -> None:
        super().__init__(classes="dialog-screen")
        self._notes = notes
        self._ask = ask
        self._shown: list[tuple[str, str, str, str]] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog detail"):
            yield Label("Steering: queued for after this task, and standing", classes="dialog-title")
            yield OptionList(id="steering-list")
            yield Label("", id="steering-note", classes="dialog-error")
            yield Label(HINT, classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.reload()
        self.set_interval(0.25, self.reload)  # the events that follow an ack land a moment later

    def reload(self) -> None:
        notes = self._notes()
        rows = [(n.id, "queue", n.text, str(n.held)) for n in notes.queue] + [(n.id, "standing", n.text, "") for n in notes.standing]
        if rows == self._shown:
            return
        self._shown = rows
        options = self.query_one(OptionList)
        keep = options.highlighted or 0
        # The selection follows its note (moved up or down); a note that left keeps the place.
        selected = options.get_option_at_index(keep).id if options.option_count and options.highlighted is not None else None
        options.clear_options()
        for n in notes.queue:
            options.add_option(Option(note_line(n, False), id=n.id))
        for n in notes.standing:
            options.add_option(Option(note_line(n, True), id=n.id))
        ids = [r[0] for r in rows]
        if rows:
            options.highlighted = ids.index(selected) if selected in ids else min(keep, len(rows) - 1)
            self._note("")
        else:
            self._note("nothing queued, no standing guidance (s, then ctrl+l or ctrl+g, adds one)")

    def _selected(self) -> SteeringNote | None:
        options = self.query_one(OptionList)
        index = options.highlighted
        if index is None or not self._shown:
            self._note("nothing selected")
            return None
        note_id = options.get_option_at_index(index).id or ""
        notes = self._notes()
        return notes.queued(note_id) or notes.guidance(note_id)

    def _send(self, kind: ControlKind, payload: dict[str, Any]) -> None:
        self.run_worker(self._answer(kind, payload), group="steering")

    async def _answer(self, kind: ControlKind, payload: dict[str, Any]) -> None:
        ack = await self._ask(kind, payload)
        ok = AckResult(ack.result) is AckResult.SUCCESS
        self.notify(ack.detail, title=str(kind) if ok else f"{kind} refused", severity="information" if ok else "error")

    def action_remove(self) -> None:
        note = self._selected()
        if note is None:
            return
        if self._notes().queued(note.id) is not None:
            self._send(ControlKind.STEER_QUEUE, {"op": "withdraw", "note_id": note.id})
        else:
            self._send(ControlKind.GUIDANCE, {"op": "remove", "id": note.id})

    def action_hold(self) -> None:
        note = self._selected()
        if note is None:
            return
        if self._notes().queued(note.id) is None:
            self._note(f"{note.id} is standing guidance: only a queued note is held")
            return
        self._send(ControlKind.STEER_QUEUE, {"op": "release" if note.held else "hold", "note_id": note.id})

    def action_move(self, where: str) -> None:
        note = self._selected()
        if note is not None and self._notes().queued(note.id) is not None:
            self._send(ControlKind.STEER_QUEUE, {"op": where, "note_id": note.id})

    def action_make_standing(self) -> None:
        note = self._selected()
        if note is not None and self._notes().queued(note.id) is not None:
            self._send(ControlKind.GUIDANCE, {"op": "make_standing", "id": note.id})

    def action_edit(self) -> None:
        note = self._selected()
        if note is None:
            return
        if self._notes().queued(note.id) is None:
            self._note(f"{note.id} is standing guidance: remove it and send a new one to change it")
            return

        def edited(text: str | None) -> None:
            if text is not None and text.strip() != note.text:
                self._send(ControlKind.STEER_QUEUE, {"op": "edit", "note_id": note.id, "text": text.strip()})

        prompt = NotePrompt(f"Edit {note.id}", hint="ctrl+s saves · Enter new line · Esc cancels", validate=validate_steer_note, text=note.text)
        self.app.push_screen(prompt, edited)

    def _note(self, text: str) -> None:
        self.query_one("#steering-note", Label).update(text)

    def action_close(self) -> None:
        self.dismiss(None)
