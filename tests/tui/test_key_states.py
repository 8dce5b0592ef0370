"""Keys that depend on the run's state: p pauses or resumes; an ended run takes no controls."""

from __future__ import annotations

import re

from goldfive import events as E
from goldfive.control import AckResult
from goldfive.types import DriftEvent, DriftKind, DriftSeverity
from tests.tui.conftest import make_rig, run_screen, screen_text, settle
from goldfive_tui.app import GoldfiveApp

SIZE = (120, 40)


def footer(app: GoldfiveApp) -> str:
    return screen_text(app).splitlines()[-1]


def palette_names(app: GoldfiveApp) -> list[str]:
    screen = run_screen(app)
    return [b.description for b in screen.offered_bindings() if screen.check_action(b.action, ()) is not False]


async def test_p_pauses_then_resumes_and_the_header_says_pausing_while_a_task_still_runs() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        assert "p Pause/Resume" in footer(rig.app)
        assert "Pause/Resume" in palette_names(rig.app)
        await pilot.press("p")
        await settle(rig, pilot)
        assert "PAUSING" in screen_text(rig.app).splitlines()[0]
        await pilot.press("p")
        await settle(rig, pilot)
        assert [str(m.kind) for m in rig.source.sent] == ["PAUSE", "RESUME"]
        assert "PAUS" not in screen_text(rig.app).splitlines()[0]


async def test_the_help_says_p_pauses_and_resumes() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(rig.app)
        assert re.search(r"│  p +Pause the run \(PAUSE\), or resume it when paused \(RESUME\)", text)


async def test_after_the_run_ended_the_control_keys_leave_the_footer_and_send_nothing() -> None:
    rig = make_rig("finished")
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        for key in ("p", "s", "w", "i", "c"):
            await pilot.press(key)
            await settle(rig, pilot)
            assert len(rig.app.screen_stack) == 1, f"{key} opened a dialog on an ended run"
        assert rig.source.sent == []
        # Issue 23 (low): each key said nothing; now it says why it does nothing.
        said = [n.message for n in rig.app._notifications]
        for what in ("pause/resume", "steer", "rewind", "inject", "cancel"):
            assert f"The run has ended (completed): {what} does nothing now; q quits, r shows its rules." in said, said
        shown = footer(rig.app)
        assert "Pause" not in shown and "Steer" not in shown and "Cancel" not in shown
        assert "Help" in shown and "Quit" in shown
        assert "Pause/Resume" not in palette_names(rig.app)


async def test_the_approval_toast_and_reject_prompt_name_the_tool_behind_a_call_id() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release([rig.script._at(
            5, E.approval_requested, target_id="call-1234", kind="tool", prompt="Run publish_deck?",
            task_id="draft", tool_name="publish_deck", args={"slides": 8}, timeout_ms=0)])
        await settle(rig, pilot)
        assert "publish_deck (call-1234): Run publish_deck?" in screen_text(rig.app)  # the toast
        await pilot.press("x", "x")  # the first opens the unread approval, the second rejects
        await pilot.pause()
        assert "Reject publish_deck (call-1234): reason" in screen_text(rig.app)


def _user_cancel(rig) -> object:  # type: ignore[no-untyped-def]
    drift = DriftEvent(DriftKind.USER_CANCEL, DriftSeverity.CRITICAL, "cancelled from the TUI")
    return rig.script._at(5, E.drift_detected, drift)


async def test_our_own_cancel_raises_no_critical_drift_alarm() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        await pilot.press("c", "y")
        await settle(rig, pilot)
        rig.source.release([_user_cancel(rig)])
        await settle(rig, pilot)
        titles = [n.title for n in rig.app._notifications]
        assert "CRITICAL drift" not in titles
        assert rig.screen.state.controls[rig.source.sent[0].id].ack_result == "SUCCESS"


async def test_a_cancel_from_elsewhere_still_raises_the_alarm() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release([_user_cancel(rig)])
        await settle(rig, pilot)
        assert [n.title for n in rig.app._notifications] == ["CRITICAL drift"]


async def test_on_an_ended_run_r_opens_the_rules_read_only() -> None:
    from goldfive_tui.screens.approvals import RulesScreen

    rig = make_rig("finished")
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        await pilot.press("r")
        await settle(rig, pilot)
        rules = rig.app.screen
        assert isinstance(rules, RulesScreen) and rules.read_only
        assert "read-only: the run has ended" in screen_text(rig.app)
        await pilot.press("d")  # nothing to confirm: removing is off
        await pilot.pause()
        assert rig.app.screen is rules
        assert all(m.payload.get("op") == "list" for m in rig.source.sent), rig.source.sent


async def test_on_an_ended_run_r_lists_the_rules_it_made_read_from_its_events() -> None:
    """Issue 23 (low): the read-only rules view of an ended local run was empty (it asked the
    run, which answers nothing now); it lists the rules the run's events show it made."""
    from goldfive.control import ControlKind, ControlMessage

    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.screen.open_approval("publish_deck")
        await pilot.pause()
        await pilot.press("A", "1")  # approve, and don't ask again for calls like it in this run
        await settle(rig, pilot)
        assert rig.source.sent and rig.source.sent[-1].payload["always"]["scope"] == "run"
        added = ControlMessage("approval_rules", payload={"op": "add", "rule": {"tool": "lint"}, "author": "bo"})
        refused = ControlMessage("approval_rules", payload={"op": "add", "rule": {"tool": "rm"}, "author": "bo"})
        rig.source.release([
            *rig.script.control(added, detail="added R2: lint: always (scope run, by bo)"),
            *rig.script.control(refused, AckResult.FAILURE, "rule not added: no"),
            *rig.script.finish(),
        ])  # fmt: skip
        await settle(rig, pilot)
        rig.source.sent.clear()
        await pilot.press("r")
        await settle(rig, pilot)
        text = screen_text(rig.app)
        assert "R1    run      publish_deck: audience = 'eng', slides = 6  (made by ada" in text, text
        assert "R2    run      lint: always  (made by bo" in text and "rm: always" not in text  # refused: no rule
        assert "the rules this run made, from its events" in text
        assert rig.source.sent == []  # nothing asked of a run that has ended
