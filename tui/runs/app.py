"""HubApp: the runs screen over many runs, and the usual run screen for the one opened.

The app is GoldfiveApp (its default screen shows one run); the runs screen and the waiting
queue are screens pushed over it. Opening a run swaps the app's RunSource and starts folding
that run afresh. A poll (``POLL_S``) refreshes the rows and the queue and turns what newly
needs a person into notices: a toast and the bell (even while another run is open), an OSC 9 /
OSC 777 desktop notification through the terminal, and ``--notify-cmd``'s command.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable, ClassVar, Literal

from textual.binding import Binding, BindingType

from goldfive.control import AckResult
from goldfive.notify import Notice, NotifyCommand, diff_notices, notice_key, osc777, osc9
from goldfive.view import RunState

from ..app import GoldfiveApp
from ..keys import KEYS
from ..screens.dialogs import ConfirmScreen
from ..screens.runs import RunsScreen
from ..screens.waiting import WaitingScreen
from ..source import RunSource, ScriptedSource
from .model import RunsSource, Snapshot, WaitingItem

__all__ = ["HUB_KEYS", "HubApp"]

log = logging.getLogger("goldfive_tui.runs")

def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


#: Keys the hub adds to the run screen; they work from every screen.
HUB_KEYS: list[BindingType] = [
    Binding("n", "next_needing", "Next needing you", show=False, tooltip="Open the next run that needs you", id="hub.next"),
    Binding("d", "waiting", "Decisions waiting", show=False, tooltip="Everything waiting for a person (decisions), every run, oldest first", id="hub.waiting"),
]  # fmt: skip


class HubApp(GoldfiveApp):
    BINDINGS: ClassVar[list[BindingType]] = [*KEYS, *HUB_KEYS]
    CSS_PATH = ["../styles/app.tcss", "../styles/runs.tcss"]  # type: ignore[assignment]  # str or a list

    def __init__(
        self,
        runs: RunsSource,
        *,
        clock: Callable[[], int] | None = None,
        cursor_blink: bool = True,
        poll_s: float = 0.5,
        notify_cmd: NotifyCommand | None = None,
        osc: bool = True,
    ) -> None:
        super().__init__(ScriptedSource([], live=True, title="no run open"), clock=clock or _wall_ms, cursor_blink=cursor_blink)
        self.runs = runs
        self.poll_s = poll_s
        self.notify_cmd = notify_cmd
        self.osc = osc
        self.open_run_id = ""
        self.snapshot = Snapshot()
        self.runs_screen = RunsScreen(runs.title)
        #: Every notice raised, in order (what the bell, the toasts and the hook were told).
        self.notices: list[Notice] = []
        self._notice_keys: set[tuple[str, str, str]] | None = None
        self._poll_lock = asyncio.Lock()

    def wall_ms(self) -> int:
        return self._clock() if self._clock is not None else _wall_ms()

    #: App keys that act on the open run: off (and out of the footer) on the hub's screens.
    RUN_VIEW_ONLY = frozenset({*GoldfiveApp.RUN_CONTROLS, "filter", "copy", "help", "focus_next", "focus_previous"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.RUN_VIEW_ONLY and isinstance(self.screen, (RunsScreen, WaitingScreen)):
            return False
        if action in self.RUN_CONTROLS and not self.open_run_id:
            return False
        return super().check_action(action, parameters)

    # -- life ------------------------------------------------------------------------------------
    # Textual runs on_mount / on_unmount of every class in the MRO: GoldfiveApp's run too.
    def on_mount(self) -> None:
        self.install_screen(self.runs_screen, name="runs")
        self.push_screen("runs")
        self.run_worker(self._start_runs(), group="hub", exclusive=False)

    async def _start_runs(self) -> None:
        await self.runs.start()
        await self.poll()
        self.set_interval(self.poll_s, self._poll_soon)

    async def _consume(self) -> None:
        if self.open_run_id:  # no run is open at first: nothing to read
            await super()._consume()

    def _poll_soon(self) -> None:
        if not self._poll_lock.locked():
            self.run_worker(self.poll(), group="hub-poll", exclusive=False)

    async def on_unmount(self) -> None:
        # GoldfiveApp's on_unmount stops the opened run's source (never the run itself).
        await self.runs.stop()
        if self.notify_cmd is not None:
            await self.notify_cmd.aclose()

    async def poll(self) -> Snapshot:
        """Read every run now; repaint the runs screen and the queue; raise new notices."""
        async with self._poll_lock:
            try:
                snap = await self.runs.poll()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: a failed poll is shown, the next one retries
                snap = Snapshot(self.snapshot.rows, self.snapshot.waiting, f"poll failed: {exc}")
            self.snapshot = snap
            now = self.wall_ms()
            self.runs_screen.show(snap, now)
            for screen in self.screen_stack:
                if isinstance(screen, WaitingScreen):
                    screen.show(snap, now)
            if not snap.problem or snap.rows:
                self._announce(snap)
            return snap

    # -- notices ---------------------------------------------------------------------------------
    def _announce(self, snap: Snapshot) -> None:
        current = snap.notices()
        new = diff_notices(self._notice_keys, current)
        self._notice_keys = {notice_key(n) for n in current}
        ring = False
        for notice in new:
            self.notices.append(notice)
            if self.notify_cmd is not None:
                self.notify_cmd.send(notice)
            self._terminal_notice(notice)
            # The open run's own screen already announces its approvals (toast and bell).
            if notice.kind == "approval" and notice.run_id == self.open_run_id and not isinstance(self.screen, (RunsScreen, WaitingScreen)):
                continue
            ring = True
            severity: Literal["warning", "error"] = "error" if notice.kind == "failed" else "warning"
            self.notify(f"run {notice.run_id[:8]}: {notice.body}", title="Needs you", severity=severity, timeout=8)
        if ring:
            self.bell()

    def _terminal_notice(self, notice: Notice) -> None:
        """A desktop notification through the terminal (OSC 9 and OSC 777; a terminal ignores
        the one it does not know)."""
        if self.osc and not self.is_headless and self._driver is not None:
            self._driver.write(osc9(notice) + osc777(notice))

    def action_bindings(self) -> list[Binding]:
        """Help and the palette: the run's keys, then the hub's, then help and quit."""
        base = super().action_bindings()
        return base[:-2] + [b for b in HUB_KEYS if isinstance(b, Binding)] + base[-2:]

    # -- opening runs ----------------------------------------------------------------------------
    def open_run(self, run_id: str) -> None:
        """Show ``run_id`` in the run screen (swapping the source when it is another run)."""
        if run_id != self.open_run_id:
            self._swap_source(run_id, self.runs.open(run_id))
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.query_one("#plan").focus()

    def _swap_source(self, run_id: str, source: RunSource) -> None:
        from ..grpc_source import GrpcRunSource, connection_notifier
        from ..widgets.eventlog import EventLog

        old = self.source
        self.open_run_id = run_id
        self.source = source
        if isinstance(source, GrpcRunSource):
            source.on_state = connection_notifier(self)
        self.state = RunState()
        self._mine.clear()
        self._control_lines.clear()
        self._acked.clear()
        self.rejected.clear()
        self._new_approvals, self._critical = [], []
        self._stream_note = self._connection_note = ""
        self.query_one(EventLog).clear()
        self.refresh_bindings()
        self.run_worker(self._consume(), name="events", group="events", exclusive=True)
        self.run_worker(old.stop(), group="hub-close")
        self._dirty = True

    def action_next_needing(self) -> None:
        """Open the next run that needs a person, after the open (or selected) one, in the
        runs screen's order."""
        from .model import sort_rows

        needing = [r.run_id for r in sort_rows(self.snapshot.rows) if r.needs_kind]
        if not needing:
            self.notify("No run needs you now.", timeout=3)
            return
        current = self.open_run_id
        if isinstance(self.screen, RunsScreen):
            selected = self.runs_screen.selected_run or ""
            if selected in needing and selected != self.open_run_id:
                self.open_run(selected)  # the selected row itself needs you
                return
            current = selected or current
        after = needing.index(current) + 1 if current in needing else 0
        self.open_run(needing[after % len(needing)])

    def action_waiting(self) -> None:
        if isinstance(self.screen, WaitingScreen):
            return
        self.push_screen(WaitingScreen(self.snapshot, self.wall_ms()))

    def action_clear_filter(self) -> None:
        """Esc in the run screen: clear the log's filter, else come back to the runs screen."""
        from textual.widgets import Input

        box = self.query_one("#filter", Input)
        if box.display or box.value:
            super().action_clear_filter()
        elif self.screen is not self.runs_screen:
            self.push_screen("runs")

    # -- decisions from the queue -----------------------------------------------------------------
    def decide(self, items: list[WaitingItem], approve: bool, reason: str = "") -> None:
        self.run_worker(self._decide(items, approve, reason), group="hub-decide")

    async def _decide(self, items: list[WaitingItem], approve: bool, reason: str) -> None:
        done, refused = 0, []
        for item in items:
            try:
                ack = await self.runs.decide(item, approve, reason)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: one failed delivery does not stop the batch
                refused.append(f"{item.what} ({item.run_id[:8]}): {exc}")
                continue
            if ack.result == AckResult.SUCCESS:
                done += 1
            else:
                refused.append(f"{item.what} ({item.run_id[:8]}): {ack.detail or ack.result}")
        verb = "approved" if approve else "rejected"
        if done:
            self.notify(f"{verb} {done} item{'s' if done != 1 else ''}", timeout=4)
        if refused:
            self.notify("; ".join(refused[:3]), title="refused", severity="error", timeout=8)
        await self.poll()

    # -- quitting ----------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        live = getattr(self.runs, "live", 0)
        if not self.runs.owns_runs or not live:
            self.exit()
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(ConfirmScreen(f"Quit and cancel the {live} live runs of this process?", yes="Quit"), confirmed)
