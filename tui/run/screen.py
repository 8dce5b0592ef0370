"""RunScreen: one run (header, plan, task, event log, approvals, footer), live or replayed.

What the screen can do is given to its constructor, not chosen by subclassing: a ``source``
streams the run's events and takes its controls; ``controls`` binds the keys that steer it
(off: a read-only view, whose control keys only say so); a ``replay`` shows a recording at a
cursor with its transport bar instead of a stream; an ``opener`` (the runs screen) adds n, d
and Esc-back. ``check_action`` turns off what the flags leave out (``keys.Capabilities``), so
the footer, help and palette never offer a key that does nothing.

Data flow: a worker folds the source's events into the ``RunFeed`` (``RunFeed.follow``); the
panes repaint from it at most every ``REPAINT_S`` seconds, so a flood of events never starves
key handling. Controls go out through ``RunControls``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, ClassVar, Protocol

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import ModalScreen, Screen
from textual.widgets import Input

from goldfive.recording import Recording
from goldfive.view import RunState
from goldfive.view.attention import cancelled_by_person

from ..commands import KeyCommands
from ..format import LogLine
from ..keys import KEY_DISPLAY, KEYS, OPENER_KEYS, READ_ONLY_KEYS, REPLAY_KEYS, Capabilities, help_rows
from ..replay import BACK_TO_PICKER, PLAY_RATE, Replay, ReplayBar, show_lines
from ..screens.detail import ApprovalScreen, EventScreen
from ..screens.dialogs import DETACH, DETACH_REJECT, QuitScreen
from ..screens.approvals import LedgerScreen
from ..screens.help import HelpScreen
from ..source import RunSource
from ..widgets.approvals import ApprovalsView
from ..widgets.steering import SteeringView
from ..widgets.cursorlist import CursorList
from ..widgets.footer import FitFooter
from ..widgets.eventlog import EventLog
from ..widgets.header import RunHeader
from ..widgets.logpane import LogPane
from ..widgets.plan import PlanView, TaskDetail, task_detail
from .controls import RunControls, open_approval
from .feed import RunFeed

__all__ = ["Opener", "RunScreen", "replay_screen"]

REPAINT_S = 0.05
READ_ONLY = "{view} is read-only: {what} does nothing here{hint}."
ENDED = "The run has ended ({finished}): {what} does nothing now; q quits, r shows its rules."


class Opener(Protocol):
    """The screen a run was opened from (the runs screen): n and d act there."""

    def next_needing(self) -> None: ...

    def show_waiting(self) -> None: ...

    def acknowledge(self, run_id: str) -> None:
        """The run's failure has been seen: it no longer needs anyone."""
        ...


class RunScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*KEYS, *OPENER_KEYS, *READ_ONLY_KEYS, *REPLAY_KEYS]
    COMMANDS = {KeyCommands}
    #: Under ONE_COLUMN columns (a phone in web mode: 40-48) the panes stack in one column,
    #: plan, approvals, events (``RunScreen.-narrow`` in app.tcss, and ``_place_panes``);
    #: from there on, the plan sits beside the events and the approvals run along the bottom.
    ONE_COLUMN = 60
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (ONE_COLUMN, "-wide")]

    def __init__(
        self,
        source: RunSource | None = None,
        *,
        controls: bool = True,
        replay: Replay | None = None,
        opener: Opener | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        if (source is None) == (replay is None):
            raise ValueError("a run screen shows either a source or a replay")
        if controls and source is None:
            raise ValueError("controls need a source to send them to")
        super().__init__()
        self.source = source
        self.replay = replay
        self.controls = controls
        self.opener = opener
        self.can = Capabilities(controls, replay=replay is not None, opener=opener is not None)
        self._clock = clock
        self.feed = RunFeed(replay.state if replay is not None else None)
        # The panes are kept, not queried: an event or an ack may still land while the screen
        # is being torn down (a run switched, the app quitting), when queries find nothing.
        self._header = RunHeader(id="header")
        self._plan = PlanView(id="plan")
        self._detail = TaskDetail(id="detail")
        self._detail_box = VerticalScroll(self._detail, id="detail-scroll", can_focus=True)
        self._log = EventLog(id="events")
        self._log_pane = LogPane(self._log, id="events-pane")
        self._approvals = ApprovalsView(id="approvals")
        self._steering = SteeringView(id="steering")
        #: Sends controls (the control keys, and cancelling on quit) when there is a source.
        self._control = RunControls(self, source) if source is not None else None
        #: Approvals the person has opened and read: a and x answer only those at once (an
        #: unread one opens first, as in the waiting queue).
        self.read_approvals: set[str] = set()
        self._dirty = True

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield self._header
        # One container, so that one column can put the approvals between the plan and the
        # events (``_place_panes``); side by side they are split off along its bottom (app.tcss).
        with Horizontal(id="panes"):
            with Vertical(id="plan-pane"):
                yield self._plan
                yield self._detail_box
            yield self._log_pane
            yield self._steering
            yield self._approvals
        if self.replay is not None:
            yield ReplayBar(self.replay, id="replay-status")
        yield FitFooter()

    def _place_panes(self) -> None:
        """One column: plan, approvals, events (what needs a person before the history);
        side by side, the approvals after the events (the focus order: plan, task, events,
        steering, approvals)."""
        one_column = self.app.size.width < self.ONE_COLUMN
        panes = self._approvals.parent
        if not isinstance(panes, Horizontal):
            return
        if one_column and panes.children.index(self._approvals) > panes.children.index(self._log_pane):
            panes.move_child(self._approvals, before=self._log_pane)
        elif not one_column and panes.children.index(self._approvals) < panes.children.index(self._log_pane):
            panes.move_child(self._approvals, after=self._steering)

    def on_resize(self, event: Resize) -> None:
        self._place_panes()
        self.mark_dirty()  # rows fitted to the old width (the approvals' arguments) are redrawn

    def on_mount(self) -> None:
        self._place_panes()
        self._plan.border_title = "Plan"
        self._log.border_title = "Events"
        self._log.border_subtitle = "/ filter"
        approvals = self._approvals
        approvals.border_title = "Approvals (0)"
        approvals.empty_text = "no approvals waiting"
        # What Enter and the keys do here; a read-only view only opens the request to read it.
        approvals.border_subtitle = self._approvals_hint()
        self._steering.display = False
        self._steering.border_subtitle = "t change" if self.controls else ""
        self._detail_box.border_title = "Task"
        self._plan.focus()
        self.set_interval(REPAINT_S, self._repaint_if_dirty)
        if self._clock is not None:  # elapsed time and ages move with the clock
            self.set_interval(1.0, self.mark_dirty)
        if self.source is not None:
            self.run_worker(self._consume(self.source), name="events", group="events", exclusive=True)
        else:
            self._show_replay()
        self.repaint()

    async def on_unmount(self) -> None:
        # Kept running (DETACH): whoever ran the app stops the run at the end.
        if self.source is not None and self.app.return_value not in (DETACH, DETACH_REJECT):
            await self.source.stop()

    @property
    def state(self) -> RunState:
        """The run as this screen shows it (live: as of the last event; replay: the cursor)."""
        return self.feed.state

    # -- time ----------------------------------------------------------------------------
    def now_ms(self) -> int:
        """The clock if one was given, else the time of the latest event (replay-safe)."""
        return self._clock() if self._clock is not None else self.feed.state.last_event_ms

    def at(self, ms: int | None = None) -> str:
        return self.feed.at(self.now_ms() if ms is None else ms)

    # -- the event stream ----------------------------------------------------------------
    async def _consume(self, source: RunSource) -> None:
        async for line, rewrite, ended, control in self.feed.follow(source, self.now_ms):
            if control:
                self.feed.placed(control, self.log_size())
            if ended or (line is not None and line.event is not None and line.event.WhichOneof("payload") == "budget_changed"):
                self.refresh_bindings()  # the control keys go (nothing is left to steer); $ shows once there is a budget
            if line is not None:
                self._log.add((line,))
            for control_id in rewrite:
                self.rewrite_control(control_id)
            self._dirty = True
        self._dirty = True

    def stream_end_is_news(self) -> bool:
        """A remote stream's end is told in a toast only while the person looks at this run
        and it has not ended: a run that ended says so in the header, and a screen left (Esc,
        another run opened) has nothing to tell."""
        return self.is_current and not self.state.finished

    def set_connection_state(self, state: str, detail: str = "") -> None:
        """Told by a remote source on every change of its link (connecting, connected,
        reconnecting, ended); the header shows it until the next change."""
        self.feed.connection_note = f"[{state}]" if state else ""
        self._dirty = True

    def on_replay_bar_moved(self, event: ReplayBar.Moved) -> None:
        event.stop()
        self._show_replay()

    def _show_replay(self) -> None:
        assert self.replay is not None
        self.feed.state = self.replay.state
        show_lines(self._log, self.replay.lines, self.replay.cursor)
        self._dirty = True

    # -- the log -----------------------------------------------------------------------------
    def log_size(self) -> int:
        return len(self._log.lines)

    def add_line(self, line: LogLine) -> None:
        self._log.add((line,))
        self._dirty = True

    def rewrite_control(self, control_id: str) -> bool:
        """Rewrite a sent control's line; True when its ack shows for the first time."""
        found = self.feed.control_line(control_id)
        if found is None:
            return False
        index, line, first = found
        self._log.replace(index, line)
        return first

    # -- repaint (throttled) ---------------------------------------------------------------
    def mark_dirty(self) -> None:
        self._dirty = True

    def _repaint_if_dirty(self) -> None:
        if self._dirty:
            self.repaint()

    def repaint(self) -> None:
        if not self.is_running:
            return  # torn down: an ack that lands now has nothing left to paint on
        self._dirty = False
        if not self._dialog_up():  # under a dialog a toast would cover it: they wait for it to close
            alerts, ring = self.feed.take_alerts()
            for alert in alerts:
                self.notify(alert.message, title=alert.title, severity=alert.severity)
            if ring:
                self.app.bell()
        now = self.now_ms()
        feed = self.feed
        state = feed.state
        note = " ".join(n for n in (feed.connection_note, feed.stream_note) if n)
        # A rate needs a wall clock (live screens get one); after the end there is no rate.
        live = self._clock is not None and not state.finished
        rejected = sum(len(v) for v in feed.rejected.values())
        try:
            self._header.show(state, now, note, rate=live, rejected=rejected)
            self._plan.update_plan(state, now, feed.rejected)
            self._approvals.update_approvals(state, now, self.read_approvals)
        except KeyError:  # pushed this instant: a pane's component styles are not applied yet
            self._dirty = True  # the next tick paints it
            return
        self._show_detail()
        self._approvals.border_subtitle = self._approvals_hint()
        # Zoomed (z), the pane fills the screen: its usual height (a row per approval, up to 5)
        # would leave it 3 rows tall over a hatched screen.
        zoomed = self.maximized is self._approvals
        self._approvals.styles.height = "1fr" if zoomed else min(max(len(state.approvals), 1), 5) + 2
        self._steering.update_notes(state.notes)
        self._log.flush()
        stack = self.app.screen_stack
        # An empty stack: the app is closing under this tick (seen in CI under load).
        if stack and isinstance(stack[-1], ApprovalScreen):
            stack[-1].refresh_from(state, now)
        if stack and isinstance(stack[-1], QuitScreen) and state.finished:
            # The run ended under the dialog: its choices (cancel it, keep it running) are moot.
            stack[-1].dismiss(None)
            self.notify(f"The run ended ({state.finished}) while you were deciding: q quits now, nothing to cancel or keep.", timeout=6)

    def _dialog_up(self) -> bool:
        """A dialog (the approval detail, the help, a prompt) is over this screen."""
        stack = self.app.screen_stack
        return bool(stack) and stack[-1] is not self and isinstance(stack[-1], ModalScreen)

    def on_screen_resume(self) -> None:
        self._dirty = True  # a dialog closed: what waited under it is told now

    def _approvals_hint(self) -> str:
        """The approvals pane's keys while they do something; once the run ended, that."""
        if self.controls and self.feed.state.finished:
            return "the run has ended: nothing to decide"
        return "Enter details · a approve · e edit · x reject" if self.controls else "Enter details"

    def _show_detail(self) -> None:
        key = self._plan.selected_key
        task = self.feed.state.tasks.get(key) if key else None
        tracebacks = getattr(self.source, "tracebacks", {})
        trace = tracebacks.get(task.id, "") if task is not None else ""
        notes = self.feed.rejected.get(task.id, []) if task is not None else []
        self._detail.show(task, self.feed.state, self.now_ms(), notes, trace)

    def on_cursor_list_highlighted(self, event: CursorList.Highlighted) -> None:
        if isinstance(event.list, PlanView):
            self._show_detail()
            self._detail_box.scroll_home(animate=False)

    # -- what the keys offer -------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Keys typed into an input (the log filter) are text, never replay moves.
        state = self.feed.state
        failed = state.finished == "ABORTED" and not cancelled_by_person(state)
        typing = isinstance(self.focused, Input)
        return self.can.enabled(action, ended=bool(state.finished), typing=typing, failed=failed, budgeted=bool(state.budget))

    def offered_bindings(self) -> list[Binding]:
        return self.can.offered()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(help_rows(self.offered_bindings(), decide=self.controls), KEY_DISPLAY))

    def action_read_only(self, what: str) -> None:
        finished = self.feed.state.finished
        if self.controls and finished:
            if what == "rules":  # still worth reading: which calls were approved by a rule
                self.control.rules(read_only=True)
                return
            self.notify(ENDED.format(finished=finished.lower(), what=what), title="run ended", severity="warning")
            return
        view, hint = ("Replay", " (use ← → space + - [ ] home end)") if self.replay is not None else ("This view", "")
        self.notify(READ_ONLY.format(view=view, what=what, hint=hint), title="read-only", severity="warning")

    # -- the transport (a replay) ---------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        self.query_one(ReplayBar).step(delta)

    def action_jump(self, where: int) -> None:
        self.query_one(ReplayBar).jump(where)

    def action_play(self) -> None:
        self.query_one(ReplayBar).play()

    def action_speed(self, step: int) -> None:
        self.query_one(ReplayBar).faster(step)

    def action_mark(self, direction: int) -> None:
        self.query_one(ReplayBar).jump_mark(direction)

    def action_back_to_picker(self) -> None:
        self.app.exit(BACK_TO_PICKER)

    # -- the runs screen it came from -----------------------------------------------------------
    def action_next_needing(self) -> None:
        if self.opener is not None:
            self.opener.next_needing()

    def action_waiting(self) -> None:
        if self.opener is not None:
            self.opener.show_waiting()

    def action_ack_failure(self) -> None:
        if self.opener is not None and self.feed.state.run_id:
            self.opener.acknowledge(self.feed.state.run_id)

    # -- the control keys (tui.run.controls does the work) --------------------------------------
    @property
    def control(self) -> RunControls:
        """The control keys are bound only on a screen with a source, which has this."""
        if self._control is None:
            raise RuntimeError("this run screen has no source to send controls to")
        return self._control

    def _selected_approval(self, *, read: bool = False) -> str | None:
        """The selected approval; with ``read``, None (and its detail opened) until it has been read."""
        target = self._approvals.selected_key
        if not target:
            self.notify("No approval is waiting.", severity="warning")
            return None
        if read and target not in self.read_approvals:  # read before you decide: show it first
            self.open_approval(target)
            return None
        return target

    def action_pause(self) -> None:
        self.control.pause()

    def action_steer(self) -> None:
        self.control.steer()

    def action_rewind(self) -> None:
        self.control.rewind(self._plan.selected_key)

    def action_inject(self) -> None:
        self.control.inject()

    def action_steering(self) -> None:
        self.control.steering()
    def action_budget(self) -> None:
        self.control.budget()

    def action_set_budget(self) -> None:
        self.control.budget()

    def action_cancel_run(self) -> None:
        self.control.cancel()

    def action_approve(self) -> None:
        """a: approve the selected approval; a question is answered instead (type or pick)."""
        if target := self._selected_approval(read=True):
            view = self.feed.state.approvals.get(target)
            if view is not None and view.is_question:
                self.control.answer_question(target)
            else:
                self.control.approve(target)

    def action_reject(self) -> None:
        if target := self._selected_approval(read=True):
            self.control.reject(target)

    def action_edit_approval(self) -> None:
        if target := self._selected_approval():
            self.control.edit(target)

    def action_rules(self) -> None:
        self.control.rules()

    def action_ledger(self) -> None:
        self.app.push_screen(LedgerScreen(self.feed.ledger))

    def open_approval(self, target: str) -> None:
        if target in self.feed.state.approvals:
            self.read_approvals.add(target)
            self.mark_dirty()
        open_approval(self, target, self._control if self.controls else None)

    # -- opening, copying, filtering, moving -----------------------------------------------------
    def on_cursor_list_selected(self, event: CursorList.Selected) -> None:
        if isinstance(event.list, ApprovalsView):
            self.open_approval(event.key)
        elif isinstance(event.list, PlanView):
            self._detail_box.focus()  # read (and scroll) the whole task

    def on_event_log_opened(self, event: EventLog.Opened) -> None:
        self.app.push_screen(EventScreen(event.line, event.line.event))

    def action_focus_next(self) -> None:
        self.focus_next()

    def action_focus_previous(self) -> None:
        self.focus_previous()

    def action_toggle_maximize(self) -> None:
        """z: the focused pane fills the screen; z again (or Esc, Textual's own) restores it."""
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None and not self.maximize(self.focused):
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
            key = self._plan.selected_key
            state = self.feed.state
            task = state.tasks.get(key) if key else None
            if task is None:
                self.notify("Select a task or an event first.", severity="warning")
                return
            notes = self.feed.rejected.get(task.id, [])
            text, what = task.result or task_detail(task, state, self.now_ms(), notes).plain, "task's result" if task.result else "task"
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied the {what} ({len(text):,} characters).", timeout=3)

    def action_filter(self) -> None:
        self._log_pane.open_filter()

    def action_clear_filter(self) -> None:
        """Esc: clear the log's filter; else, for a run opened from the runs screen, go back."""
        if not self._log_pane.clear_filter() and self.opener is not None:
            self.app.pop_screen()

    # -- quitting ------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        await self.app.action_quit()  # the app asks its first screen: this one, or the runs screen

    def owns_live_run(self) -> bool:
        """A run in this process that is still going: quitting would end it."""
        return bool(getattr(self.source, "owns_run", False)) and not self.feed.state.finished

    async def confirm_quit(self) -> None:
        """Quit, asking first what to do with a live run of this process."""
        if self._control is not None and self.owns_live_run():
            self._control.ask_quit()
        else:
            self.app.exit()


def replay_screen(recording: Recording, *, start_at: int | None = None, play_rate: float | None = PLAY_RATE, back: bool = False) -> RunScreen:
    """The run screen on ``recording``: read-only, with the transport; ``back``: it was picked
    from the list of recorded runs, and b returns to that list."""
    screen = RunScreen(replay=Replay(recording, start_at=start_at, play_rate=play_rate), controls=False)
    screen.can = replace(screen.can, picker=back)
    return screen
