"""The app around the keys: clock, stream failures, a very long event log."""

from __future__ import annotations

import inspect
from typing import AsyncIterator

from textual._log import LogGroup, LogVerbosity
from textual.app import App

from goldfive.control import ControlAck, ControlMessage
from tests.tui.conftest import make_rig, run_app, run_screen, screen_text, settle
from goldfive_tui.format import LogLine
from tests.tui.scenario import T0_MS
from goldfive_tui.widgets.approvals import ApprovalsView
from goldfive_tui.widgets.eventlog import EventLog

SIZE = (120, 40)


async def test_without_a_clock_elapsed_time_follows_the_event_clock() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        assert "00:05" in screen_text(rig.app).splitlines()[0]


async def test_an_injected_clock_drives_elapsed_time_and_approval_ages() -> None:
    rig = make_rig("approval")
    app = run_app(rig.source, clock=lambda: T0_MS + 65_000)
    rig.app, rig.screen = app, run_screen(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        text = screen_text(app)
        assert "01:05" in text.splitlines()[0]
        row = app.query_one(ApprovalsView)._rows[0].plain  # a toast may cover it on screen
        assert "publish_deck  55s (4m04s left)" in row


class BrokenSource:
    title = "broken"

    async def events(self) -> AsyncIterator[object]:
        raise ConnectionError("lost the server")
        yield  # pragma: no cover

    async def send(self, msg: ControlMessage) -> ControlAck:  # pragma: no cover
        raise AssertionError("not used")

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass


async def test_a_failing_event_stream_is_shown_and_the_app_stays_up() -> None:
    app = run_app(BrokenSource())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await run_screen(app).workers.wait_for_complete()
        run_screen(app).repaint()
        await pilot.pause()
        assert app.is_running
        assert "event stream failed: lost the server" in screen_text(app)


async def test_the_event_log_draws_100000_lines_by_the_visible_rows_only() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        log = rig.app.query_one(EventLog)
        log.add(LogLine("00:00", "task_progress", f"line {i}", "dim") for i in range(100_000))
        log.flush()
        await pilot.pause()
        assert log.virtual_size.height == 100_010
        assert log.scroll_y == log.max_scroll_y  # following: the newest line is in view
        log.scroll_to(y=50_000, animate=False, force=True)
        await pilot.pause()
        assert "line 49990" in log.render_line(0).text
        assert not log.follow
        log.filter_text = "line 4242"
        await pilot.pause()
        assert [ln.text for ln in log.shown_lines()] == [f"line {n}" for n in (4242, *range(42420, 42430))]


def test_textual_logging_calls_reach_app_log_with_textuals_signature() -> None:
    # Textual's logger calls App._log(group, verbosity, frame, *objects) when devtools are
    # attached, so an override with another signature crashes the app at start.
    app = make_rig().app
    frame = inspect.getframeinfo(inspect.currentframe())  # type: ignore[arg-type]
    app._log(LogGroup.INFO, LogVerbosity.NORMAL, frame, "hello")  # no devtools: a no-op
    assert type(app)._log is App._log
