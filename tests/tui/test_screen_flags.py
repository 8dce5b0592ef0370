"""The run screen's capabilities are constructor flags: without controls the control keys are
neither shown nor sent (they only say the view is read-only), a replay adds its transport, a
run opened from the runs screen adds n, d and Esc-back, and that screen is kept while the
person looks at other rows."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Label

from goldfive.recording import Recording
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.keys import CONTROL_ACTIONS, KEYS, TRANSPORT_ACTIONS, Capabilities
from goldfive_tui.run.screen import RunScreen
from goldfive_tui.screens.detail import ApprovalScreen
from goldfive_tui.widgets.approvals import ApprovalsView
from tests.tui.conftest import make_rig, screen_text, settle
from tests.tui.runs_kit import IDS, hub_of, make_hub
from tests.tui.test_replay import index_of, replay_app, screen_of, story

SIZE = (120, 40)
CONTROL_KEYS = [b.key for b in KEYS if hasattr(b, "action") and b.action in CONTROL_ACTIONS]


def test_capabilities_say_which_keys_work() -> None:
    live, viewer, replay = Capabilities(True), Capabilities(False), Capabilities(False, replay=True)
    for action in CONTROL_ACTIONS:
        budgeted = action == "budget"  # $ is shown (budget) on a run with a budget, else works unshown (set_budget)
        assert live.enabled(action, budgeted=budgeted) and not live.enabled(action, ended=True, budgeted=budgeted)
        assert not viewer.enabled(action, budgeted=budgeted) and not replay.enabled(action, budgeted=budgeted)
    assert not live.enabled("budget") and not live.enabled("set_budget", budgeted=True)
    assert viewer.enabled("read_only") and not live.enabled("read_only")
    for action in TRANSPORT_ACTIONS:
        assert replay.enabled(action) and not replay.enabled(action, typing=True) and not live.enabled(action)
    assert not live.enabled("next_needing") and Capabilities(True, opener=True).enabled("next_needing")
    offered = [b.action for b in replay.offered()]
    assert offered[0] == "step(-1)" and not set(offered) & CONTROL_ACTIONS and offered[-2:] == ["help", "quit"]
    hub = [b.action for b in Capabilities(True, opener=True).offered()]
    assert hub[-5:] == ["next_needing", "waiting", "ack_failure", "help", "quit"]
    opened = Capabilities(True, opener=True)
    assert not opened.enabled("ack_failure") and opened.enabled("ack_failure", ended=True, failed=True)
    assert not live.enabled("ack_failure", ended=True, failed=True)  # no runs screen: nothing to acknowledge to


def test_a_run_screen_needs_a_source_or_a_replay_and_controls_need_a_source() -> None:
    with pytest.raises(ValueError, match="either a source or a replay"):
        RunScreen()
    with pytest.raises(ValueError, match="controls need a source"):
        RunScreen(replay=screen_of(replay_app(Recording("story", "jsonl", "r", story()))).replay)


async def test_a_read_only_view_of_a_live_run_shows_no_control_key_and_sends_nothing() -> None:
    rig = make_rig("approval")
    rig.screen = RunScreen(rig.source, controls=False)
    rig.app = GoldfiveApp(rig.screen, cursor_blink=False)
    said: list[str] = []
    original = rig.app.notify
    rig.app.notify = lambda message, **kw: (said.append(message), original(message, **kw))[1]  # type: ignore[method-assign]
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        footer = screen_text(rig.app).splitlines()[-1]
        assert "Pause" not in footer and "Approve" not in footer and "Cancel" not in footer and "Quit" in footer
        for key in CONTROL_KEYS:
            await pilot.press(key)
        await settle(rig, pilot)
        assert rig.source.sent == [] and len(rig.app.screen_stack) == 1
        hints = [m for m in said if "read-only" in m]  # the approval's own toast is news, not a hint
        assert len(hints) == len(CONTROL_KEYS) and all(m.startswith("This view is read-only") for m in hints)
        rig.screen.query_one(ApprovalsView).focus()
        await pilot.press("enter")  # the approval opens to be read, not answered
        await pilot.pause()
        assert isinstance(rig.app.screen, ApprovalScreen)
        assert str(rig.app.screen.query_one(".dialog-hint", Label).content).startswith("y copy the arguments")
        await pilot.press("a", "x", "e")
        await pilot.pause()
        assert isinstance(rig.app.screen, ApprovalScreen) and rig.source.sent == []


async def test_in_a_replay_e_and_r_are_read_only_too_and_an_approval_opens_read_only() -> None:
    events = story()
    asked = index_of(events, "approval_requested")
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=asked + 1)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("e", "r")
        await pilot.pause()
        assert len(app.screen_stack) == 1  # no editor, no rules dialog
        assert [n.title for n in app._notifications] == ["read-only", "read-only"]
        screen_of(app).query_one(ApprovalsView).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen) and not app.screen.can_decide
        assert str(app.screen.query_one(".dialog-hint", Label).content).startswith("y copy the arguments")
        assert "Publish the deck" in screen_text(app)


async def test_transport_keys_do_nothing_on_a_live_screen_and_home_still_moves_the_plan() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("G", "home")
        assert rig.screen.query_one("#plan").cursor == 0  # the plan's own Home, not a replay jump
        await pilot.press("space", "right", "plus")
        await settle(rig, pilot)
        assert rig.source.sent == [] and "replay" not in screen_text(rig.app)


async def test_reopening_a_run_finds_its_screen_as_left_and_another_run_replaces_it() -> None:
    app = make_hub("running", "approval")
    async with app.run_test(size=(80, 24)) as pilot:
        hub = hub_of(app)
        await pilot.pause()
        await hub.poll()
        hub.open_run(IDS["running"])
        await pilot.pause()
        first = hub.run_screen
        assert first is not None and app.screen is first
        await pilot.press("p")  # a control sent from here: one line, its ack folded in
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is hub
        hub.open_run(IDS["running"])
        await pilot.pause()
        assert hub.run_screen is first and app.screen is first
        assert any(ln.label.strip() == "control" for ln in first._log.lines)
        source = first.source
        hub.open_run(IDS["approval"])
        for _ in range(20):
            await pilot.pause()
            if source.stopped:  # type: ignore[union-attr]
                break
        assert hub.run_screen is not first and source.stopped  # type: ignore[union-attr]
        assert [type(s).__name__ for s in app.screen_stack] == ["RunsScreen", "RunScreen"]


async def test_n_works_from_the_waiting_queue_and_q_there_asks_the_runs_screen() -> None:
    app = make_hub("running", "approval")
    async with app.run_test(size=(80, 24)) as pilot:
        hub = hub_of(app)
        await pilot.pause()
        await hub.poll()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert hub.open_run_id == IDS["approval"] and isinstance(app.screen, RunScreen)
        await pilot.press("slash", *"x")
        assert isinstance(app.focused, Input)
        await pilot.press("escape", "escape")  # clears the filter, then back to the runs screen
        await pilot.pause()
        assert app.screen is hub
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value is None
