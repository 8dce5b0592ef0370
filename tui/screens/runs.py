"""The runs screen (k9s-like): one row per run, what needs a person first.

It is the app's first screen for many runs (``demo --runs``, ``attach ADDR``). Enter pushes
a RunScreen for the selected run (Esc there comes back; coming back to the same run finds it as
it was left), ``n`` opens the next run that needs you, ``w`` (``d`` from anywhere) the waiting
queue, ``/`` filters the rows. A poll (``poll_s``) refreshes the rows and the queue and turns
what newly needs a person into notices (``tui.runs.notices``), also while a run is open.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, ClassVar, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from goldfive.control import AckResult
from goldfive.errors import GoldfiveError
from goldfive.notify import NotifyCommand
from goldfive.store.registry import ACKNOWLEDGED, ARCHIVED

from ..commands import KeyCommands
from ..run.screen import RunScreen
from ..runs.model import RunRow, RunsSource, Snapshot, WaitingItem, sort_rows
from ..runs.notices import Announcer
from ..runs.table import RunsTable, header_text
from ..widgets.footer import FitFooter
from .dialogs import ConfirmScreen
from .waiting import WaitingScreen

__all__ = ["RUNS_KEYS", "RunsScreen"]

RUNS_KEYS: list[BindingType] = [
    Binding("enter", "open", "Open", tooltip="Open the selected run in the usual screen (Esc there comes back)", id="runs.open"),
    Binding("n", "next_needing", "Next needing you", tooltip="Open the next run that needs you (from anywhere)", id="runs.next"),
    Binding("w,d", "waiting", "Waiting", tooltip="Everything waiting for a person, every run, oldest first (d from anywhere)", id="runs.waiting"),
    Binding("s", "start_run", "Start run", tooltip="Start a run on the hub: the demo, or MODULE:FUNCTION with a goal (as ctl start)", id="runs.start"),
    Binding("slash", "filter", "Filter", tooltip="Filter the rows by text (id, state, task, needs, goal); Esc clears", id="runs.filter"),
    # Shown only on a row they apply to (check_action): a failed run, an ended run.
    Binding("a", "ack_failure", "Ack failure", tooltip="Acknowledge the selected run's failure: it no longer needs you (also a in the run)", id="runs.ack"),
    Binding("delete", "archive", "Archive", key_display="del", tooltip="Archive the selected ended run: it leaves this list (ctl runs --archived lists it)", id="runs.archive"),
    Binding("question_mark", "help", "Help", tooltip="Show the keys", id="runs.help"),
    Binding("q", "app.quit", "Quit", tooltip="Quit; runs started in this process are cancelled after a confirmation", id="runs.quit"),
    Binding("escape", "clear_filter", "Clear filter", show=False, id="runs.filter.clear"),
]  # fmt: skip


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class RunsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = RUNS_KEYS
    COMMANDS = {KeyCommands}

    def __init__(
        self,
        runs: RunsSource,
        *,
        clock: Callable[[], int] | None = None,
        poll_s: float = 0.5,
        notify_cmd: NotifyCommand | None = None,
        osc: bool = True,
    ) -> None:
        super().__init__(id="runs-screen")
        self.runs = runs
        self.wall_ms = clock or _wall_ms
        self.poll_s = poll_s
        self.snapshot = Snapshot()
        self.rows: list[RunRow] = []  # sorted and filtered, as shown
        self.filter_text = ""
        self._now = 0
        self.announcer = Announcer(notify_cmd, osc=osc)
        self._poll_lock = asyncio.Lock()
        #: The run opened last, and its screen (kept while the person looks at other runs' rows).
        self.open_run_id = ""
        self.run_screen: RunScreen | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="runs-title")
        yield Static(id="runs-head")
        yield RunsTable(id="runs")
        yield Input(placeholder="filter runs by text; Enter keeps it, Esc clears", id="runs-filter")
        yield FitFooter()

    def on_mount(self) -> None:
        table = self.query_one(RunsTable)
        table.empty_text = "no runs yet"
        self.query_one("#runs-filter", Input).cursor_blink = getattr(self.app, "cursor_blink", True)
        table.focus()
        self._paint()
        self.run_worker(self._start_runs(), group="hub", exclusive=False)

    async def _start_runs(self) -> None:
        await self.runs.start()
        await self.poll()
        self.set_interval(self.poll_s, self._poll_soon)

    def _poll_soon(self) -> None:
        if not self._poll_lock.locked():
            self.run_worker(self.poll(), group="hub-poll", exclusive=False)

    async def on_unmount(self) -> None:
        kept = self.run_screen
        if kept is not None and kept not in self.app.screen_stack and kept.source is not None:
            await kept.source.stop()  # a kept run screen is no longer mounted: its own unmount will not run
        await self.runs.stop()
        await self.announcer.close()

    def on_resize(self) -> None:
        self._paint()

    # -- data -----------------------------------------------------------------------------------
    async def poll(self) -> Snapshot:
        """Read every run now; repaint this screen and the queue; raise new notices."""
        async with self._poll_lock:
            try:
                snap = await self.runs.poll()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: a failed poll is shown, the next one retries
                snap = Snapshot(self.snapshot.rows, self.snapshot.waiting, f"poll failed: {exc}")
            now = self.wall_ms()
            self.show(snap, now)
            for screen in self.app.screen_stack:
                if isinstance(screen, WaitingScreen):
                    screen.show(snap, now)
            if (not snap.problem or snap.rows) and not snap.disconnected:
                self._announce(snap)
            return snap

    def show(self, snapshot: Snapshot, now_ms: int) -> None:
        self.snapshot, self._now = snapshot, now_ms
        if self.is_mounted:
            self._paint()

    def _announce(self, snap: Snapshot) -> None:
        ring = False
        on_runs = isinstance(self.app.screen, (RunsScreen, WaitingScreen))
        for notice in self.announcer.news(snap, self.app):
            # The open run's own screen already announces its approvals (toast and bell).
            if notice.kind in ("approval", "question") and notice.run_id == self.open_run_id and not on_runs:
                continue
            ring = True
            severity: Literal["warning", "error"] = "error" if notice.kind == "failed" else "warning"
            self.notify(f"run {notice.run_id[:8]}: {notice.body}", title="Needs you", severity=severity, timeout=8)
        if ring:
            self.app.bell()

    def _paint(self) -> None:
        if not self.query(RunsTable):
            return  # composing, or torn down while a poll was in flight
        needle = self.filter_text.lower()
        rows = sort_rows(self.snapshot.rows)
        if needle:
            rows = [r for r in rows if needle in r.searchable()]
        self.rows = rows
        table = self.query_one(RunsTable)
        table.set_class(self.snapshot.disconnected, "-disconnected")  # the last list read, dimmed
        table.show(rows, self._now)
        width = table.scrollable_content_region.width or 80
        self.query_one("#runs-head", Static).update(header_text(width))
        self.query_one("#runs-title", Static).update(self._title())

    def _title(self) -> Text:
        rows = self.snapshot.rows
        needing = sum(1 for r in rows if r.needs_kind)
        out = Text()
        out.append("goldfive ", style="bold")
        out.append(self.runs.title)
        if self.snapshot.disconnected:  # first, so 80 columns show it: the rows are not live
            out.append(" DISCONNECTED", style="bold red")
        out.append(f" · {len(rows)} runs · {sum(1 for r in rows if r.live)} live · ")
        out.append(f"{needing} {'needs' if needing == 1 else 'need'} you", style="bold yellow" if needing else "dim")
        if waiting := len(self.snapshot.waiting):
            out.append(f" · {waiting} waiting (w)", style="yellow")
        if self.filter_text:
            out.append(f" · filter: {self.filter_text} ({len(self.rows)} shown)", style="dim")
        if self.snapshot.problem:
            out.append(f" · {self.snapshot.problem}", style="bold red")
        return out

    @property
    def selected_run(self) -> str | None:
        return self.query_one(RunsTable).selected_key

    def _row(self, run_id: str | None) -> RunRow | None:
        return next((r for r in self.snapshot.rows if r.run_id == run_id), None) if run_id else None

    def on_cursor_list_highlighted(self, event: RunsTable.Highlighted) -> None:
        self.refresh_bindings()  # a and del are offered on the rows they apply to

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_run":
            return not isinstance(self.focused, Input) and callable(getattr(self.runs, "start_run", None))
        if action in ("ack_failure", "archive"):
            if isinstance(self.focused, Input):
                return False  # typed into the filter
            row = self._row(self.selected_run)
            if action == "ack_failure":
                return row is not None and row.failed and not row.acknowledged
            return row is not None and not row.live
        return True

    # -- starting a run (a hub) --------------------------------------------------------------------
    def action_start_run(self) -> None:
        from .dialogs import StartRunScreen

        async def start(agent: str, goal: str) -> str:
            run_id: str = await self.runs.start_run(agent, goal)  # type: ignore[attr-defined]
            return run_id

        def started(what: tuple[str, str] | None) -> None:
            if what is not None:  # a refusal stayed in the dialog, with what was typed
                agent, run_id = what
                self.notify(f"started run {run_id[:12]} ({agent})", timeout=4)
                self.run_worker(self.poll(), group="hub-start")

        self.app.push_screen(StartRunScreen(getattr(self.runs, "addr", "the hub"), start), started)

    # -- opening runs ----------------------------------------------------------------------------
    def open_run(self, run_id: str) -> None:
        """Show ``run_id`` in a RunScreen over this one (the one kept, when it is that run)."""
        while self.app.screen is not self:
            self.app.pop_screen()
        screen = self.run_screen
        if screen is None or run_id != self.open_run_id:
            if screen is not None:
                self.app.uninstall_screen(screen)
                self.run_worker(self._discard(screen), group="hub-close")
            screen = self.run_screen = self._run_screen_for(run_id)
            self.open_run_id = run_id
            self.app.install_screen(screen, f"run-{run_id}")
        elif screen.is_mounted:
            screen.query_one("#plan").focus()
        self.app.push_screen(screen)

    @staticmethod
    async def _discard(screen: RunScreen) -> None:
        await screen.remove()  # its unmount stops its source (never the run itself)

    def _run_screen_for(self, run_id: str) -> RunScreen:
        from ..grpc_source import GrpcRunSource, connection_notifier

        source = self.runs.open(run_id)
        screen = RunScreen(source, opener=self, clock=self.wall_ms)
        # What waits in it was listed here (and in the waiting queue): opening it is no news.
        screen.feed.shown_elsewhere.update(w.target_id for w in self.snapshot.waiting if w.run_id == run_id)
        if isinstance(source, GrpcRunSource):
            source.on_state = connection_notifier(screen)
        return screen

    def next_needing(self) -> None:
        """Open the next run that needs a person, after the open (or selected) one, in this
        screen's order."""
        needing = [r.run_id for r in sort_rows(self.snapshot.rows) if r.needs_kind]
        if not needing:
            self.notify("No run needs you now.", timeout=3)
            return
        current = self.open_run_id
        if self.app.screen is self:
            selected = self.selected_run or ""
            if selected in needing and selected != self.open_run_id:
                self.open_run(selected)  # the selected row itself needs you
                return
            current = selected or current
        after = needing.index(current) + 1 if current in needing else 0
        self.open_run(needing[after % len(needing)])

    def show_waiting(self) -> None:
        if not isinstance(self.app.screen, WaitingScreen):
            self.app.push_screen(WaitingScreen(self.snapshot, self.wall_ms(), self))

    # -- decisions from the queue -----------------------------------------------------------------
    def decide(
        self, items: list[WaitingItem], approve: bool, reason: str = "", answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
    ) -> None:
        self.run_worker(self._decide(items, approve, reason, answer, arguments), group="hub-decide")

    async def _decide(
        self, items: list[WaitingItem], approve: bool, reason: str, answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
    ) -> None:
        done, refused = 0, []
        for item in items:
            try:
                ack = await self.runs.decide(item, approve, reason, answer, arguments)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: one failed delivery does not stop the batch
                refused.append(f"{item.what} ({item.run_id[:8]}): {exc}")
                continue
            if ack.result == AckResult.SUCCESS:
                done += 1
            else:
                refused.append(f"{item.what} ({item.run_id[:8]}): {ack.detail or ack.result}")
        verb = "answered" if answer is not None else "approved with edited arguments" if arguments is not None else "approved" if approve else "rejected"
        if done:
            self.notify(f"{verb} {done} item{'s' if done != 1 else ''}", timeout=4)
        if refused:
            self.notify("; ".join(refused[:3]), title="refused", severity="error", timeout=8)
        await self.poll()

    # -- a person's marks on a run (acknowledged, archived) ----------------------------------------
    def acknowledge(self, run_id: str) -> None:
        """The run's failure has been seen: it no longer needs anyone (a here, or in the run)."""
        self.run_worker(self._mark(run_id, ACKNOWLEDGED, "failure acknowledged: it no longer needs you"), group="hub-mark")

    async def _mark(self, run_id: str, mark: str, done: str) -> None:
        try:
            await self.runs.mark(run_id, mark)
        except asyncio.CancelledError:
            raise
        except GoldfiveError as exc:  # refused (not failed, still live) or not delivered: said, not raised
            self.notify(str(exc), title="not marked", severity="warning", timeout=6)
            return
        self.notify(f"run {run_id[:8]}: {done}", timeout=4)
        await self.poll()
        self.refresh_bindings()

    def action_ack_failure(self) -> None:
        if run_id := self.selected_run:
            self.acknowledge(run_id)

    def action_archive(self) -> None:
        run_id = self.selected_run
        if not run_id:
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._mark(run_id, ARCHIVED, "archived (ctl runs --archived lists it)"), group="hub-mark")

        question = f"Archive run {run_id[:8]}? It leaves this list; its recording is kept."
        self.app.push_screen(ConfirmScreen(question, yes="Archive"), confirmed)

    # -- keys -----------------------------------------------------------------------------------
    def on_cursor_list_selected(self, event: RunsTable.Selected) -> None:
        event.stop()
        self.open_run(event.key)

    def action_open(self) -> None:
        if key := self.selected_run:
            self.open_run(key)

    def action_next_needing(self) -> None:
        self.next_needing()

    def action_waiting(self) -> None:
        self.show_waiting()

    def action_filter(self) -> None:
        box = self.query_one("#runs-filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#runs-filter", Input)
        box.value = ""
        box.display = False
        self.filter_text = ""
        self._paint()
        self.query_one(RunsTable).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "runs-filter":
            self.filter_text = event.value
            self._paint()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "runs-filter":
            if not event.value:
                event.input.display = False
            self.query_one(RunsTable).focus()

    def offered_bindings(self) -> list[Binding]:
        """What help and the command palette offer here."""
        return [b for b in RUNS_KEYS if isinstance(b, Binding) and b.show and b.action != "open"]

    def action_help(self) -> None:
        from ..keys import KEY_DISPLAY
        from .help import HelpScreen

        shown = [b for b in RUNS_KEYS if isinstance(b, Binding) and b.show]
        moves = Binding("j,k,g,G", "cursor", "Move", tooltip="Down, up, first, last (arrows, Home, End too)")
        self.app.push_screen(HelpScreen([*shown[:-2], moves, *shown[-2:]], KEY_DISPLAY))

    async def confirm_quit(self) -> None:
        """Quit; live runs of this process are cancelled by it, so that is asked first."""
        live = getattr(self.runs, "live", 0)
        if not self.runs.owns_runs or not live:
            self.app.exit()
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.app.exit()

        self.app.push_screen(ConfirmScreen(f"Quit and cancel the {live} live runs of this process?", yes="Quit"), confirmed)
