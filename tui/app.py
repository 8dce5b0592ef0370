"""GoldfiveApp: watch a run live and steer it with single keys.

Data flow: a worker reads ``source.events()`` and folds each event into one ``RunState``
(the same reducer replay and the server use); widgets repaint from it at most every
``REPAINT_S`` seconds, so a flood of events never starves key handling. Keys build
ControlMessages that a worker hands to ``source.send`` (``tui.actions``); each shows as one
log line, rewritten when its ack (and for STEER the plan revision) arrives.
"""

from __future__ import annotations

import asyncio
from typing import Callable, ClassVar, Iterable

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input

from goldfive import conv
from goldfive.control import ControlKind
from goldfive.approvals.ledger import LedgerEntry
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.run.approvals import WITHDRAWN
from goldfive.types import DriftKind
from goldfive.view import RunState

from .actions import ControlActions
from .commands import GoldfiveCommands
from .format import LogLine, clip, clock_text, describe
from .prefs import load_prefs, save_pref
from .keys import KEY_DISPLAY, KEYS, help_rows, palette_bindings
from .screens.detail import ApprovalScreen, EventScreen
from .screens.dialogs import DETACH, QuitScreen
from .screens.help import HelpScreen
from .source import RunSource
from .widgets.approvals import ApprovalsView
from .widgets.cursorlist import CursorList
from .widgets.eventlog import EventLog
from .widgets.header import RunHeader
from .widgets.plan import PlanView, TaskDetail, task_detail

REPAINT_S = 0.05
#: Events applied between yields to the message loop while a backlog is drained.
_BATCH = 256
#: Runtime events about a control; for a control sent from here its one line says it all.
_CONTROL_EVENTS = ("control_received", "control_acked")


class GoldfiveApp(ControlActions):
    """Returns DETACH when the person chose to keep a local run going without the TUI."""

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
        self._control_lines: dict[str, int] = {}  # their log line
        self._acked: set[str] = set()  # those whose ack was shown
        #: task id -> the tool calls rejected in it ("publish_deck: too early"); the reducer
        #: forgets an approval once answered, so the TUI keeps what a REJECT did to a task.
        self.rejected: dict[str, list[str]] = {}
        self._stream_note = ""
        self._connection_note = ""  # remote sources: where the link is, always visible
        # Alerts are raised at repaint, once per batch, so replaying history does not ring
        # for approvals already answered or flood toasts with old drifts.
        self._new_approvals: list[str] = []
        self._critical: list[str] = []
        self.ledger: list[LedgerEntry] = []
        self._expiring: list[str] = []
        self._theme_ready = False  # the saved theme is applied before changes are saved
        self.note_history: dict[str, list[str]] = {}

    def watch_theme(self, theme: str) -> None:
        if getattr(self, "_theme_ready", False):
            save_pref("theme", theme)

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        with Horizontal(id="panes"):
            with Vertical(id="plan-pane"):
                yield PlanView(id="plan")
                with VerticalScroll(id="detail-scroll", can_focus=True):
                    yield TaskDetail(id="detail")
            with Vertical(id="events-pane"):
                yield EventLog(id="events")
                yield Input(placeholder="filter the log by text or kind; Enter keeps it, Esc clears", id="filter")
        yield ApprovalsView(id="approvals")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        theme = load_prefs().get("theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme  # the one the person picked last time (ctrl+p → theme)
        self._theme_ready = True
        self.query_one(PlanView).border_title = "Plan"
        self.query_one(EventLog).border_title = "Events"
        self.query_one(EventLog).border_subtitle = "/ filter"
        self.query_one(ApprovalsView).border_title = "Approvals (0)"
        self.query_one(ApprovalsView).empty_text = "no approvals waiting"
        self.query_one("#detail-scroll").border_title = "Task"
        self.query_one(ApprovalsView).border_subtitle = "Enter details · a approve · e edit · x reject"
        self.query_one(PlanView).focus()
        self.query_one("#filter", Input).cursor_blink = self.cursor_blink
        self.set_interval(REPAINT_S, self._repaint_if_dirty)
        if self._clock is not None:  # elapsed time and ages move with the clock
            self.set_interval(1.0, self._mark_dirty)
        self.run_worker(self._consume(), name="events", group="events", exclusive=True)
        self._repaint()

    async def on_unmount(self) -> None:
        if self.return_value != DETACH:  # kept running: whoever ran the app stops it at the end
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
        kind = ev.WhichOneof("payload")
        if kind == "approval_rejected":
            self._note_rejection(ev)
        self.state.apply(ev)
        if kind in ("run_completed", "run_aborted"):
            self.refresh_bindings()  # the control keys go: nothing is left to steer
        control_id = self._control_id(ev, kind)
        if control_id in self._mine:  # folded into the control's own line
            if kind == "control_acked":
                self._refresh_control_line(control_id)
                self._acked.add(control_id)
            self._dirty = True
            return
        label, text, style = describe(ev)
        self._append_log_line(LogLine(self._at(ev.emitted_at.ToMilliseconds()), label, text, style, ev))
        if kind == "approval_requested":
            self._new_approvals.append(ev.approval_requested.target_id)
        elif kind == "drift_detected" and style == "drift-critical" and not self._cancelled_here(ev):
            self._critical.append(ev.drift_detected.detail)
        elif kind == "plan_revised":
            self._announce_revisions()
        elif kind == "approval_decided":
            self.ledger.append(LedgerEntry.from_event(ev))
        elif kind == "approval_expiring":
            self._expiring.append(ev.approval_expiring.target_id)
        self._dirty = True

    @staticmethod
    def _control_id(ev: Event, kind: str | None) -> str:
        if kind == "control_received":
            return ev.control_received.control.id
        if kind == "control_acked":
            return ev.control_acked.ack.control_id
        return ""

    def _note_rejection(self, ev: Event) -> None:
        """Keep a person's rejection on its task; a request withdrawn because its invocation
        was cancelled (STEER, CANCEL) or one that timed out was nobody's decision."""
        p = ev.approval_rejected
        if p.detail.startswith((WITHDRAWN, "timeout")):
            return
        view = self.state.approvals.get(p.target_id)
        if view is not None and view.task_id:
            name = view.tool_name or p.target_id
            self.rejected.setdefault(view.task_id, []).append(f"{name}: {p.detail}" if p.detail else name)

    def _task_notes(self, task_id: str) -> list[str]:
        return self.rejected.get(task_id, [])

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
        for cid in self._mine:
            view = self.state.controls.get(cid)
            if view is not None and view.revision is not None:
                self._refresh_control_line(cid)

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
        for target in [t for t in self._expiring if t in self.state.approvals][-3:]:
            view = self.state.approvals[target]
            self.notify(f"{self._approval_name(target)}: {view.on_timeout} soon unless decided", title="Approval deadline near", severity="warning")
        self._expiring = []
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
        # A rate needs a wall clock (live apps pass one); after the end there is no rate.
        live = self._clock is not None and not state.finished
        rejected = sum(len(v) for v in self.rejected.values())
        self.query_one(RunHeader).show(state, now, note, rate=live, rejected=rejected)
        plan = self.query_one(PlanView)
        plan.update_plan(state, now, self.rejected)
        self._show_detail()
        approvals = self.query_one(ApprovalsView)
        approvals.update_approvals(state, now)
        approvals.styles.height = min(max(len(state.approvals), 1), 5) + 2
        self.query_one(EventLog).flush()
        if isinstance(self.screen, ApprovalScreen):
            self.screen.refresh_from(state, now)

    def _show_detail(self) -> None:
        key = self.query_one(PlanView).selected_key
        task = self.state.tasks.get(key) if key else None
        tracebacks = getattr(self.source, "tracebacks", {})
        trace = tracebacks.get(task.id, "") if task is not None else ""
        notes = self._task_notes(task.id) if task is not None else []
        self.query_one(TaskDetail).show(task, self.state, self.now_ms(), notes, trace)

    def on_cursor_list_highlighted(self, event: CursorList.Highlighted) -> None:
        if isinstance(event.list, PlanView):
            self._show_detail()
            self.query_one("#detail-scroll", VerticalScroll).scroll_home(animate=False)

    # -- quitting, opening, copying -------------------------------------------------------------
    def action_bindings(self) -> list[Binding]:
        """The bindings offered by help and the command palette."""
        return palette_bindings(self.BINDINGS)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # The palette's Quit is the q key's (which asks first while a run is live), not a second one.
        return (c for c in super().get_system_commands(screen) if c.title != "Quit")

    def owns_live_run(self) -> bool:
        """A run in this process that is still going: quitting would end it."""
        return bool(getattr(self.source, "owns_run", False)) and not self.state.finished

    async def action_quit(self) -> None:
        if not self.owns_live_run():
            self.exit()
            return

        def chosen(choice: str | None) -> None:
            if choice == "cancel":
                self.run_worker(self._cancel_and_exit(), group="quit", exclusive=True)
            elif choice == "detach":
                self.exit(DETACH)

        self.push_screen(QuitScreen(self._recorded_where()), chosen)

    def _recorded_where(self) -> str:
        where = getattr(self.source, "recorded_at", None)
        return where() if callable(where) else ""

    async def _cancel_and_exit(self) -> None:
        """CANCEL the run and give it a moment to record how it ended, then quit."""
        self.send_control(ControlKind.CANCEL, {"reason": "cancelled: the TUI quit"})
        finished = getattr(self.source, "wait_finished", None)
        if finished is not None:
            try:
                await asyncio.wait_for(finished(), timeout=5)
            except asyncio.TimeoutError:
                pass  # stop() cancels what is left
        self.exit()

    def on_cursor_list_selected(self, event: CursorList.Selected) -> None:
        if isinstance(event.list, ApprovalsView):
            self.open_approval(event.key)
        elif isinstance(event.list, PlanView):
            self.query_one("#detail-scroll").focus()  # read (and scroll) the whole task

    def on_event_log_opened(self, event: EventLog.Opened) -> None:
        self.push_screen(EventScreen(event.line, event.line.event))

    def action_toggle_maximize(self) -> None:
        """z: the focused pane fills the screen; z again (or Esc, Textual's own) restores it."""
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is not None and not self.screen.maximize(self.focused):
            self.notify("This pane cannot be maximized; Tab to the plan, events or approvals.", severity="warning")

    def action_copy(self) -> None:
        """y: the selected event in the log, else the selected task's result (OSC 52)."""
        if isinstance(self.focused, EventLog):
            line = self.focused.selected_line
            if line is None:
                self.notify("The log is empty: nothing to copy.", severity="warning")
                return
            text, what = EventScreen(line, line.event).copy_text, "event"
        else:
            key = self.query_one(PlanView).selected_key
            task = self.state.tasks.get(key) if key else None
            if task is None:
                self.notify("Select a task or an event first.", severity="warning")
                return
            text, what = task.result or task_detail(task, self.state, self.now_ms(), self._task_notes(task.id)).plain, "task's result" if task.result else "task"
        self.copy_to_clipboard(text)
        self.notify(f"Copied the {what} ({len(text):,} characters).", timeout=3)

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
