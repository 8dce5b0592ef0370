"""The best tools' habits: the log's tail (f) and wrap (W) toggles, z zooms the focused pane,
the theme a person picks is remembered, and the filter box hands focus back on Enter."""

from __future__ import annotations

import json
import os
from pathlib import Path

from textual.widgets import Input

from goldfive import events as E
from goldfive_tui.prefs import prefs_path
from goldfive_tui.widgets.eventlog import EventLog
from goldfive_tui.widgets.plan import PlanView
from tests.tui.conftest import make_rig, settle

SMALL = (80, 24)


async def test_w_wraps_long_lines_onto_rows_and_back() -> None:
    rig = make_rig()
    long_detail = "slide 4: " + " ".join(f"word{i}" for i in range(80))
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        rig.source.release([E.task_progress(rig.script.session, "draft", detail=long_detail)])
        await settle(rig, pilot)
        log = rig.app.query_one(EventLog)
        log.focus()
        lines_before = log.shown_count
        rows_before = log.virtual_size.height
        assert rows_before == lines_before
        await pilot.press("W")
        await settle(rig, pilot)
        await pilot.pause()
        assert log.wrap and "wrapped" in str(log.border_subtitle)
        assert log.virtual_size.height > rows_before  # the long line takes several rows now
        width = log.scrollable_content_region.width
        assert log.virtual_size.width == width  # nothing scrolls sideways
        # The last rows on screen are the wrapped long line, cut at the width, nothing lost.
        start, rows = log._rows_of(log.shown_count - 1)
        assert rows >= 2
        text = "".join(log.render_line(r - round(log.scroll_y)).text for r in range(start, start + rows))
        assert "word79" in text and "word40" in text
        await pilot.press("W")
        await pilot.pause()
        assert not log.wrap and log.virtual_size.height == lines_before


async def test_f_toggles_tail() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        log = rig.app.query_one(EventLog)
        log.focus()
        assert log.follow
        await pilot.press("f")
        assert not log.follow and "tail off" in str(log.border_subtitle)
        rig.source.release([E.task_progress(rig.script.session, "draft", detail="more")])
        await settle(rig, pilot)
        assert log.cursor < log.shown_count - 1  # stayed where it was
        await pilot.press("f")
        assert log.follow and log.cursor == log.shown_count - 1


async def test_z_zooms_the_focused_pane_and_z_restores() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        plan = rig.app.query_one(PlanView)
        plan.focus()
        await pilot.press("z")
        assert rig.app.screen.maximized is plan
        await pilot.press("z")
        assert rig.app.screen.maximized is None


async def test_the_picked_theme_is_remembered(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GOLDFIVE_CONFIG_DIR", str(tmp_path))
    rig = make_rig()
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        rig.app.theme = "nord"
        await pilot.pause()
    assert json.loads(prefs_path().read_text())["theme"] == "nord"
    again = make_rig()
    async with again.app.run_test(size=SMALL) as pilot:
        await settle(again, pilot)
        assert again.app.theme == "nord"
    prefs_path().write_text("{not json")  # a damaged file is ignored, never fatal
    third = make_rig()
    async with third.app.run_test(size=SMALL) as pilot:
        await settle(third, pilot)
        assert third.app.theme != "nord"
    assert os.environ["GOLDFIVE_CONFIG_DIR"] == str(tmp_path)


async def test_enter_in_the_filter_keeps_it_and_gives_the_log_the_keys() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        await pilot.press("slash", *"task", "enter")
        log = rig.app.query_one(EventLog)
        assert rig.app.focused is log and log.filter_text == "task"
        await pilot.press("j", "k")  # moves in the log, not typed into the box
        assert rig.app.query_one("#filter", Input).value == "task"
