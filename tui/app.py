"""GoldfiveApp: watch a run live and steer it with single keys.

Data flow: a worker reads ``source.events()`` and folds each event into one ``RunState``
(the same reducer replay and the server use); widgets repaint from it at most every
``REPAINT_S`` seconds, so a flood of events never starves key handling. Keys build
ControlMessages that a worker hands to ``source.send``; the log shows each one as sent,
then its ack, and for STEER the plan revision it produced.
"""

from __future__ import annotations

import asyncio
from typing import Callable, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input

from goldfive import conv
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.view import ControlView, RunState
from goldfive.types import DriftKind
from tui.commands import GoldfiveCommands
from tui.format import (
    LogLine,
    clip,
    clock_text,
    control_ack_line,
    control_revision_line,
    control_sent_line,
    describe,
)
from tui.inputs import validate_message, validate_steer_note
from tui.keys import KEY_DISPLAY, KEYS, help_rows, palette_bindings
from tui.screens.dialogs import ConfirmScreen, TextPrompt
from tui.screens.help import HelpScreen
from tui.source import RunSource
from tui.widgets.approvals import ApprovalsView
from tui.widgets.cursorlist import CursorList
from tui.widgets.eventlog import EventLog
from tui.widgets.header import RunHeader
from tui.widgets.plan import PlanView, TaskDetail

REPAINT_S = 0.05
#: Events applied between yields to the message loop while a backlog is drained.
_BATCH = 256


class GoldfiveApp(App[None]):
    TITLE = "goldfive"
    CSS_PATH = "styles/app.tcss"
    COMMANDS = App.COMMANDS | {GoldfiveCommands}
    BINDINGS: ClassVar[list[BindingType]] = KEYS  # the one table (tui.keys)

    def __init__(
        self, source: RunSource, *, clock: Callable[[], int] | None = None, cursor_blink: bool = True
    ) -> None:
        super().__init__()
        self.source = source
        #: False for snapshots: a blinking cursor would make screenshots racy.
        self.cursor_blink = cursor_blink
        self.state = RunState()
        self._clock = clock
        self._dirty = True
        self._mine: set[str] = set()  # ids of controls sent from this TUI
        self._announced: set[str] = set()  # STEERs whose revision was shown
        self._stream_note = ""
        self._connection_note = ""  # remote sources: where the link is, always visible
        # Alerts are raised at repaint, once per batch, so replaying history does not ring
        # for approvals already answered or flood toasts with old drifts.
        self._new_approvals: list[str] = []
        self._critical: list[str] = []

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        with Horizontal(id="panes"):
            with Vertical(id="plan-pane"):
                yield PlanView(id="plan")
                yield TaskDetail(id="detail")
            with Vertical(id="events-pane"):
                yield EventLog(id="events")
                yield Input(placeholder="filter the log by text or kind; Enter keeps it, Esc clears", id="filter")
        yield ApprovalsView(id="approvals")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PlanView).border_title = "Plan"
        self.query_one(EventLog).border_title = "Events"
        self.query_one(EventLog).border_subtitle = "/ filter"
        self.query_one(ApprovalsView).border_title = "Approvals (0)"
        self.query_one(ApprovalsView).empty_text = "no approvals waiting"
        self.query_one(TaskDetail).border_title = "Task"
        self.query_one(PlanView).focus()
        self.query_one("#filter", Input).cursor_blink = self.cursor_blink
        self.set_interval(REPAINT_S, self._repaint_if_dirty)
        if self._clock is not None:  # elapsed time and ages move with the clock
            self.set_interval(1.0, self._mark_dirty)
        self.run_worker(self._consume(), name="events", group="events", exclusive=True)
        self._repaint()

    async def on_unmount(self) -> None:
        await self.source.stop()

    # -- time ----------------------------------------------------------------------------
    def now_ms(self) -> int:
        """The clock if one was given, else the time of the latest event (replay-safe)."""
        return self._clock() if self._clock is not None else self.state.last_event_ms

    def _at(self, ms: int | None = None) -> str:
        if not self.state.started_ms:
            return "--:--"
        return clock_text((self.now_ms() if ms is None else ms) - self.state.started_ms)

    # -- the event stream ----------------------------------------------------------------
    async def _consume(self) -> None:
        await self.source.start()
        n = 0
        try:
            async for item in self.source.events():
                if isinstance(item, Event):
                    self._on_event(item)
                else:
                    self._on_missed(item)
                n += 1
                if n % _BATCH == 0:
                    await asyncio.sleep(0)  # let keys and repaints in during a backlog
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: a broken stream is shown, the UI stays up
            self._stream_note = f"(event stream failed: {exc})"
            self._append_log_line(LogLine(self._at(), "stream", f"failed: {exc}", "fail"))
        else:
            if not self.state.finished:
                self._stream_note = "(event stream ended)"
        self._dirty = True

    def set_connection_state(self, state: str, detail: str = "") -> None:
        """Called by a remote source on every change of its link (connecting, connected,
        reconnecting, ended); the header shows it until the next change."""
        self._connection_note = f"[{state}]" if state else ""
        self._dirty = True

    def _on_event(self, ev: Event) -> None:
        self.state.apply(ev)
        kind = ev.WhichOneof("payload")
        label, text, style = describe(ev)
        self._append_log_line(LogLine(self._at(ev.emitted_at.ToMilliseconds()), label, text, style))
        if kind == "approval_requested":
            self._new_approvals.append(ev.approval_requested.target_id)
        elif kind == "drift_detected" and style == "drift-critical" and not self._cancelled_here(ev):
            self._critical.append(ev.drift_detected.detail)
        elif kind == "plan_revised":
            self._announce_revisions()
        self._dirty = True

    def _cancelled_here(self, ev: Event) -> bool:
        """A USER_CANCEL drift after our own CANCEL: its ack already said so, no alarm."""
        if conv.drift_kind_from_pb(ev.drift_detected.kind) != DriftKind.USER_CANCEL:
            return False
        return any(self.state.controls[c].kind == "CANCEL" for c in self._mine if c in self.state.controls)

    def _on_missed(self, missed: object) -> None:
        count = int(getattr(missed, "count", 0))
        first, last = getattr(missed, "first_sequence", "?"), getattr(missed, "last_sequence", "?")
        self.state.apply_missed(count)
        self._append_log_line(LogLine(self._at(), "missed", f"{count} events ({first}..{last}) were dropped", "fail"))
        self._dirty = True

    def _announce_revisions(self) -> None:
        for cid in self._mine - self._announced:
            view = self.state.controls.get(cid)
            if view is not None and view.revision is not None:
                self._announced.add(cid)
                self._append_log_line(control_revision_line(view, self._at()))
                self.notify(f"STEER produced plan revision {view.revision}", title="Plan revised")

    def _append_log_line(self, line: LogLine) -> None:
        self.query_one(EventLog).add((line,))

    # -- repaint (throttled) ---------------------------------------------------------------
    def _mark_dirty(self) -> None:
        self._dirty = True

    def _repaint_if_dirty(self) -> None:
        if self._dirty:
            self._repaint()

    def _raise_alerts(self) -> None:
        waiting = [t for t in self._new_approvals if t in self.state.approvals]
        critical = self._critical
        self._new_approvals, self._critical = [], []
        for target in waiting[-3:]:
            self.notify(f"{self._approval_name(target)}: {self.state.approvals[target].prompt}", title="Approval needed", severity="warning")
        if critical:
            title = "CRITICAL drift" if len(critical) == 1 else f"{len(critical)} CRITICAL drifts"
            self.notify(clip(critical[-1], 120), title=title, severity="error")
        if waiting or critical:
            self.bell()

    def _repaint(self) -> None:
        if not self.is_running or not self.query(RunHeader):
            return  # shutting down: an ack that lands now has nothing left to paint on
        self._dirty = False
        self._raise_alerts()
        now = self.now_ms()
        state = self.state
        note = " ".join(n for n in (self._connection_note, self._stream_note) if n)
        self.query_one(RunHeader).show(state, now, note)
        plan = self.query_one(PlanView)
        plan.update_plan(state, now)
        self._show_detail()
        approvals = self.query_one(ApprovalsView)
        approvals.update_approvals(state, now)
        approvals.styles.height = min(max(len(state.approvals), 1), 5) + 2
        self.query_one(EventLog).flush()

    def _show_detail(self) -> None:
        key = self.query_one(PlanView).selected_key
        task = self.state.tasks.get(key) if key else None
        self.query_one(TaskDetail).show(task, self.state, self.now_ms())

    def on_cursor_list_highlighted(self, event: CursorList.Highlighted) -> None:
        if isinstance(event.list, PlanView):
            self._show_detail()

    # -- sending controls --------------------------------------------------------------------
    def send_control(self, kind: ControlKind, payload: dict[str, object] | None = None) -> ControlMessage:
        """Show the control as sent at once and deliver it from a worker."""
        msg = ControlMessage(kind=kind, payload=dict(payload or {}))
        msg.issued_at_ms = self.now_ms()
        view = self.state.control_sent(msg, msg.issued_at_ms)
        self._mine.add(msg.id)
        self._append_log_line(control_sent_line(view, self._at()))
        self.run_worker(self._deliver(msg, view.kind), group="controls")
        self._dirty = True
        return msg

    async def _deliver(self, msg: ControlMessage, kind: str) -> None:
        try:
            ack = await self.source.send(msg)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: a broken transport is shown as a FAILURE
            ack = ControlAck(msg.id, AckResult.FAILURE, f"not delivered: {exc}")
        view = self.state.control_ack(ack, kind)
        self._show_ack(view)

    def _show_ack(self, view: ControlView) -> None:
        self._append_log_line(control_ack_line(view, self._at()))
        detail = f": {view.ack_detail}" if view.ack_detail else ""
        severity = {"SUCCESS": "information", "UNSUPPORTED": "warning"}.get(view.ack_result, "error")
        self.notify(f"{view.kind} {view.ack_result}{detail}", title="ack", severity=severity, timeout=4)  # type: ignore[arg-type]
        self._repaint()  # acks are rare and the person is waiting for this one: no throttle

    # -- actions -------------------------------------------------------------------------------
    def action_bindings(self) -> list[Binding]:
        """The bindings offered by help and the command palette."""
        return palette_bindings(self.BINDINGS)

    def _run_ended(self) -> bool:
        """Say so, and send nothing, when the run has already ended."""
        if self.state.finished:
            self.notify(f"The run has ended ({self.state.finished}): there is nothing to control.", severity="warning")
        return bool(self.state.finished)

    def action_pause(self) -> None:
        if not self._run_ended():
            self.send_control(ControlKind.RESUME if self.state.paused else ControlKind.PAUSE)

    def action_resume(self) -> None:
        self.action_pause()

    def action_steer(self) -> None:
        if self._run_ended():
            return
        prompt = TextPrompt(
            "Steer the run: what should change?",
            placeholder="e.g. focus on fewer, higher-quality slides",
            hint="Enter sends STEER · Esc cancels · at most 8 KiB",
            validate=validate_steer_note,
        )
        self.push_screen(prompt, self._steer_entered)

    def _steer_entered(self, note: str | None) -> None:
        if note is not None:
            self.send_control(ControlKind.STEER, {"note": note.strip(), "author": "you"})

    def action_rewind(self) -> None:
        if self._run_ended():
            return
        task_id = self.query_one(PlanView).selected_key
        if not task_id:
            self.notify("Select a task in the plan first.", severity="warning")
            return
        task = self.state.tasks.get(task_id)
        name = f"{task_id} ({task.title})" if task and task.title and task.title != task_id else task_id
        question = f"Rewind to {name}? It and every task after it run again."

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send_control(ControlKind.REWIND_TO, {"task_id": task_id})

        self.push_screen(ConfirmScreen(question, yes="Rewind"), confirmed)

    def _selected_approval(self) -> str | None:
        target = self.query_one(ApprovalsView).selected_key
        if not target:
            self.notify("No approval is waiting.", severity="warning")
        return target

    def _approval_name(self, target: str) -> str:
        """The tool's name first: a target id is often an opaque call id."""
        view = self.state.approvals.get(target)
        return f"{view.tool_name} ({target})" if view and view.tool_name and view.tool_name != target else target

    def action_approve(self) -> None:
        if target := self._selected_approval():
            self.send_control(ControlKind.APPROVE, {"target_id": target, "detail": ""})

    def action_reject(self) -> None:
        target = self._selected_approval()
        if not target:
            return

        def entered(reason: str | None) -> None:
            if reason is not None:
                self.send_control(ControlKind.REJECT, {"target_id": target, "detail": reason.strip()})

        prompt = TextPrompt(f"Reject {self._approval_name(target)}: reason (optional)", hint="Enter sends REJECT · Esc cancels")
        self.push_screen(prompt, entered)

    def action_inject(self) -> None:
        if self._run_ended():
            return
        def entered(text: str | None) -> None:
            if text is not None:
                self.send_control(ControlKind.INJECT_MESSAGE, {"role": "user", "text": text.strip()})

        prompt = TextPrompt(
            "Inject a message into the running turn",
            hint="Enter sends INJECT_MESSAGE · Esc cancels",
            validate=validate_message,
        )
        self.push_screen(prompt, entered)

    def action_cancel_run(self) -> None:
        if self._run_ended():
            return
        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send_control(ControlKind.CANCEL, {"reason": "cancelled from the TUI"})

        self.push_screen(ConfirmScreen("Cancel the whole run?", yes="Cancel run"), confirmed)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if not box.display and not box.value:
            return
        box.value = ""
        box.display = False
        self.query_one(EventLog).filter_text = ""
        self.query_one(EventLog).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.query_one(EventLog).filter_text = event.value

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if not event.value:
                event.input.display = False
            self.query_one(EventLog).focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(help_rows(self.action_bindings(), self.BINDINGS), KEY_DISPLAY))
