"""Modal detail views: one pending approval (read its arguments, then a / x) and one event
log line shown whole. Both scroll; y copies what they show (OSC 52)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from google.protobuf.json_format import MessageToDict
from rich.highlighter import JSONHighlighter
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.view import ApprovalView, RunState

from ..format import LogLine, age_text

_JSON = JSONHighlighter()


def pretty_json(value: Any) -> str:
    """Indented JSON of ``value``; a string that is not JSON is returned as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def highlighted(text: str) -> Text:
    out = Text(text)
    _JSON.highlight(out)
    return out


def _event_dict(ev: Event) -> dict[str, Any]:
    return MessageToDict(ev, always_print_fields_with_no_presence=True, preserving_proto_field_name=True)


def event_json(ev: Event) -> str:
    """Every field of an event, as the wire has it (defaults included)."""
    return json.dumps(_event_dict(ev), indent=2, ensure_ascii=False)


def event_text(ev: Event) -> Text:
    """Every field of an event for reading: the payload's fields first, one ``name: value``
    each (wrapped by the screen, never clipped), then the envelope, dimmed."""
    data = _event_dict(ev)
    kind = ev.WhichOneof("payload") or ""
    payload = data.pop(kind, {}) if kind else {}
    out = Text()
    for name, value in payload.items():
        out.append(f"{name}: ", style="bold")
        out.append(value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False))
        out.append("\n")
    for name, value in data.items():
        out.append(f"{name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}\n", style="dim")
    out.rstrip()
    return out


class _DetailScreen(ModalScreen[str | None]):
    """A titled, scrolling body with a hint line; y copies ``copy_text``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="detail.close"),
        Binding("y", "copy", "Copy", id="detail.copy"),
    ]
    copy_text = ""
    copy_what = "text"

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The scrolling body gets the rows the rest of the dialog leaves (its title, text and
        hint stay on screen at 60x16), so what it holds can always be scrolled to."""
        dialogs, bodies = self.query(".dialog"), self.query(".detail-body")
        if not dialogs or not bodies:
            return
        dialog, body = dialogs.first(), bodies.first()
        others = sum(c.outer_size.height + c.styles.margin.top + c.styles.margin.bottom for c in dialog.children if c is not body)
        room = self.size.height - others - dialog.styles.gutter.height - body.styles.margin.height
        body.styles.max_height = max(3, room)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.copy_text)
        self.notify(f"Copied the {self.copy_what} ({len(self.copy_text):,} characters).", timeout=3)


class ApprovalScreen(_DetailScreen):
    """A pending approval: prompt, tool, task, age and the full arguments. ``a`` approves,
    ``x`` rejects (the run screen asks for the reason), Esc closes without answering; with
    ``can_decide=False`` (a read-only view) it only shows the request."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer('approve')", "Approve", id="approval.approve"),
        Binding("x", "answer('reject')", "Reject", id="approval.reject"),
        Binding("e", "answer('edit')", "Edit+approve", id="approval.edit"),
        Binding("A", "answer('always')", "Approve always", id="approval.always"),
    ]
    copy_what = "arguments"

    def __init__(self, view: ApprovalView, state: RunState, now_ms: int, *, can_decide: bool = True) -> None:
        super().__init__()
        self.view = view
        self.can_decide = can_decide
        self.copy_text = view.prompt if view.is_question else pretty_json(view.args if view.args is not None else view.args_json)
        self._state, self._now = state, now_ms
        self.gone = ""

    def compose(self) -> ComposeResult:
        v = self.view
        with Vertical(classes="dialog detail"):
            name = v.tool_name or v.target_id
            yield Label(f"Question ({v.target_id})" if v.is_question else f"Approval: {name} ({v.kind})", classes="dialog-title")
            yield Static(Text(v.prompt), id="approval-prompt")
            if v.options:
                yield Static(Text("options: " + " / ".join(v.options) + ("" if v.free_text else " (pick one)"), style="bold"), id="approval-options")
            yield Static(self._meta(), id="approval-meta", classes="detail-meta")
            with VerticalScroll(id="approval-args", classes="detail-body", can_focus=True):
                if v.is_question:
                    yield Static(Text(self.copy_text))
                else:
                    yield Static(highlighted(self.copy_text or "(no arguments)"))
            edit = " · e edit, then approve · A approve, and don't ask again" if v.kind == "tool" else ""
            verbs = "a answer (type or pick) · x reject" if v.is_question else f"a approve · x reject{edit}"
            decide = f"{verbs} · " if self.can_decide else ""
            copy = "the question" if v.is_question else "the arguments"
            yield Label(f"{decide}y copy {copy} · ↑↓ scroll · Esc close", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#approval-args").focus()

    def _meta(self) -> Text:
        v, state = self.view, self._state
        task = state.tasks.get(v.task_id)
        meta = Text(style="dim")
        if v.task_id:
            title = f" ({task.title})" if task and task.title and task.title != v.task_id else ""
            meta.append(f"task: {v.task_id}{title}\n")
        if v.tool_name:
            meta.append(f"tool: {v.tool_name}    call: {v.target_id}\n")
        waited = f"waiting {age_text(self._now - v.requested_ms)}"
        if v.timeout_ms:
            waited += f", times out in {age_text(v.timeout_ms - (self._now - v.requested_ms))}"
        meta.append(waited)
        now = state.approvals.get(v.target_id, v)  # the reviewer may have answered since it opened
        if now.review:
            said = "asks you" if now.review == "ask" else f"{now.review}s unless you decide first"
            meta.append(f"\nreviewer {said}: {now.review_reason}", style="bold" if now.review == "ask" else "")
        if self.gone:
            meta.append(f"\n{self.gone}", style="bold")
        return meta

    def refresh_from(self, state: RunState, now_ms: int) -> None:
        """The app calls this on repaint: the age moves, and an answer from elsewhere shows."""
        self._state, self._now = state, now_ms
        if not self.gone and self.view.target_id not in state.approvals:
            self.gone = "No longer waiting: it was answered or timed out."
        for meta in self.query("#approval-meta").results(Static):  # none yet before it is composed
            meta.update(self._meta())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and not self.can_decide:
            return False
        return super().check_action(action, parameters)

    def action_answer(self, what: str) -> None:
        if self.gone:
            self.notify(self.gone, severity="warning")
            return
        if what == "always" and self.view.kind != "tool":
            what = "a question" if self.view.is_question else "a task approval"
            self.notify(f"This is {what}: rules are for tool calls. a approves this one.", severity="warning")
            return
        self.dismiss("answer_question" if what == "approve" and self.view.is_question else what)


class EventScreen(_DetailScreen):
    """One event log line whole: its text wrapped, then every field of the event."""

    copy_what = "event"

    def __init__(self, line: LogLine, ev: Event | None) -> None:
        super().__init__()
        self.line = line
        self.event = ev
        # A control sent from here has no event: its line is all there is.
        self.copy_text = event_json(ev) if ev is not None else f"{line.at} {line.label.strip()} {line.text}"

    def compose(self) -> ComposeResult:
        line, ev = self.line, self.event
        title = f"{line.at}  {ev.WhichOneof('payload')}  #{ev.sequence}" if ev is not None else f"{line.at}  {line.label.strip()}"
        with Vertical(classes="dialog detail"):
            yield Label(title, classes="dialog-title")
            with VerticalScroll(id="event-body", classes="detail-body", can_focus=True):
                yield Static(event_text(ev) if ev is not None else Text(line.text), id="event-text")
            yield Label("y copy (JSON) · ↑↓ scroll · Esc close", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#event-body").focus()
