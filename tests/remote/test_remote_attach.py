"""``goldfive attach`` end to end: the TUI on a demo run served over gRPC, steered and approved
with its keys, every event shown once, connection state visible."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

from goldfive.demo import DEMO_GOAL, make_demo_runner
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote import RunHost, start_server
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.run.screen import RunScreen
from goldfive_tui.widgets.approvals import ApprovalsView
from goldfive_tui.grpc_source import GrpcRunSource, connection_notifier
from goldfive_tui.widgets.eventlog import EventLog
from tests.tui.conftest import screen_text


class WatchedSource(GrpcRunSource):
    """Lets the test wait for the n-th event of a kind (applied by the app when it returns)."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.counts: Counter[str] = Counter()
        self.sequences: list[int] = []
        self._changed = asyncio.Condition()

    async def events(self) -> AsyncIterator[Event]:
        async for ev in super().events():
            self.sequences.append(ev.sequence)
            async with self._changed:
                self.counts[ev.WhichOneof("payload") or ""] += 1
                self._changed.notify_all()
            yield ev

    async def wait_for(self, kind: str, n: int = 1) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: self.counts[kind] >= n), 30)


def _demo(*, sinks: object, control: object, run_id: str) -> object:
    return make_demo_runner(sinks=sinks, control=control, speed=50, run_id=run_id)  # type: ignore[arg-type]


def _log(app: GoldfiveApp) -> list[str]:
    return [f"{ln.label.strip()} {ln.text}" for ln in app.query_one(EventLog).shown_lines()]


async def test_attach_steers_and_approves_a_served_demo_run(tmp_path: Path) -> None:
    host = RunHost(tmp_path / "runs.sqlite")
    server = await start_server(host, listen="127.0.0.1:0")
    host.start_run(_demo, DEMO_GOAL, run_id="demo1")
    source = WatchedSource(server.address, "demo1")
    screen = RunScreen(source)
    app = GoldfiveApp(screen, cursor_blink=False)
    states: list[str] = []
    notify = connection_notifier(screen)

    def on_state(state: str, detail: str) -> None:
        states.append(state)
        notify(state, detail)

    source.on_state = on_state
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await source.wait_for("approval_requested")
            assert screen.state.approvals and source.connection_state == "connected"
            assert screen.sub_title == "connected"
            await pilot.pause(0.15)  # one repaint
            assert "[connected]" in screen_text(app)  # persistently, in the header
            await pilot.press("s", *"keep it short", "ctrl+s")  # the steer prompt: Enter is a new line, ctrl+s sends
            await source.wait_for("plan_revised")
            await source.wait_for("approval_requested", 2)
            approvals = app.query_one(ApprovalsView)
            for _ in range(500):  # under load the pane may repaint later: 'a' acts on what it selects
                if approvals.selected_key in screen.state.approvals:
                    break
                await pilot.pause(0.02)
            assert approvals.selected_key in screen.state.approvals
            await pilot.press("a")  # unread: its detail opens first (nothing is sent)
            await pilot.pause(0.2)
            await pilot.press("a")  # a decides there
            await source.wait_for("run_completed")
            await pilot.pause()
            log = _log(app)
            assert any(line.startswith("control STEER") and "→ SUCCESS" in line and line.endswith("→ plan revision 1") for line in log)
            assert any(line.startswith("control APPROVE") and "→ SUCCESS" in line for line in log)
            assert screen.state.finished == "COMPLETED"
            assert any(t.startswith("publish_") for t in screen.state.tasks)
            for _ in range(100):
                if "ended" in states:
                    break
                await pilot.pause(0.02)
            # The run's end is on the screen (its header): the stream's end after it is no news.
            assert [n.title for n in app._notifications if n.title == "stream ended"] == []
        assert source.sequences == list(range(len(source.sequences)))
        assert states[:2] == ["connecting", "connected"] and "ended" in states
    finally:
        await server.stop(None)


def test_the_notifier_toasts_once_per_state_change_not_per_retry() -> None:
    class FakeApp:
        sub_title = ""

        def __init__(self) -> None:
            self.toasts: list[str] = []
            self.states: list[str] = []

        def notify(self, text: str, *, title: str, **kw: object) -> None:
            self.toasts.append(title)

        def set_connection_state(self, state: str, detail: str) -> None:
            self.states.append(state)

    app = FakeApp()
    on_state = connection_notifier(app)
    for state in ("connecting", "connected", "reconnecting", "reconnecting", "reconnecting", "connected", "ended"):
        on_state(state, "x" * 300)
    assert app.toasts == ["connected", "connection lost, reconnecting", "connected", "stream ended"]
    assert len(app.states) == 7 and app.sub_title == "ended"
