"""Each key sends exactly the expected ControlMessage, and its ack shows up on screen."""

from __future__ import annotations

from goldfive_tui.run.controls import who

import pytest
from textual.widgets import Label, TextArea

from goldfive import events as E
from goldfive.control import AckResult, ControlKind
from goldfive.view import RunPhase
from goldfive.types import DriftEvent, DriftKind, DriftSeverity
from goldfive.sinks.memory import Missed
from tests.tui.conftest import Rig, make_rig, screen_text, settle
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.screens.dialogs import ConfirmScreen
from goldfive_tui.screens.note import NotePrompt
from goldfive_tui.screens.help import HelpScreen
from goldfive_tui.widgets.approvals import ApprovalsView
from goldfive_tui.widgets.eventlog import EventLog
from goldfive_tui.widgets.plan import PlanView

SIZE = (120, 40)


def sent(rig: Rig) -> list[tuple[str, dict]]:
    return [(str(m.kind), m.payload) for m in rig.source.sent]


def log_texts(app: GoldfiveApp) -> list[str]:
    return [f"{ln.label.strip()} {ln.text}" for ln in app.query_one(EventLog).shown_lines()]


async def test_p_sends_pause_then_resume_and_shows_each_ack() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("p")
        await settle(rig, pilot)
        assert sent(rig) == [("PAUSE", who())]
        # One line per control, its ack folded in: no toast, no control_received / control_acked lines.
        assert [t for t in log_texts(rig.app) if t.startswith(("control", "ack"))] == ["control PAUSE → SUCCESS"]
        assert not [n for n in rig.app._notifications if "PAUSE" in n.message]
        assert rig.screen.state.phase == RunPhase.PAUSING  # the rig's task is still running
        assert "PAUSING" in screen_text(rig.app).splitlines()[0]
        await pilot.press("p")
        await settle(rig, pilot)
        assert sent(rig)[1] == ("RESUME", who())
        assert rig.screen.state.phase == RunPhase.RUNNING


async def test_s_sends_steer_with_the_note_and_shows_the_revision_it_produced() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("s")
        assert isinstance(rig.app.screen, NotePrompt)
        await pilot.press(*"fewer slides", "ctrl+s")
        await settle(rig, pilot)
        assert sent(rig) == [("STEER", {"note": "fewer slides", **who()})]
        lines = log_texts(rig.app)
        assert [t for t in lines if t.startswith(("control", "ack"))] == ['control STEER "fewer slides" → SUCCESS → plan revision 1']
        assert "draft_focused" in rig.screen.state.tasks
        assert "+r1" in screen_text(rig.app)


async def test_esc_in_the_steer_input_sends_nothing() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("s", *"abc", "escape")
        await settle(rig, pilot)
        assert sent(rig) == []
        assert not isinstance(rig.app.screen, NotePrompt)


async def test_an_empty_steer_note_is_refused_with_a_message() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("s", "space", "enter", "ctrl+s")
        await pilot.pause()
        assert isinstance(rig.app.screen, NotePrompt)
        error = str(rig.app.screen.query_one("#prompt-error", Label).content)
        assert "empty note" in error
        assert sent(rig) == []


async def test_a_steer_note_over_8_kib_is_refused_showing_its_size() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("s")
        rig.app.screen.query_one(TextArea).load_text("é" * 4097)  # 8,194 bytes in UTF-8
        await pilot.press("ctrl+s")
        await pilot.pause()
        error = str(rig.app.screen.query_one("#prompt-error", Label).content)
        assert "8,194 bytes" in error and "8 KiB" in error
        assert sent(rig) == []
        rig.app.screen.query_one(TextArea).load_text("é" * 4096)  # exactly 8,192 bytes: accepted
        await pilot.press("ctrl+s")
        await settle(rig, pilot)
        assert [k for k, _ in sent(rig)] == ["STEER"]


async def test_typing_a_in_the_steer_input_approves_nothing() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("s", "a", "x", "p", "c", "w")
        await pilot.pause()
        assert rig.app.screen.query_one(TextArea).text == "axpcw"
        await pilot.press("escape")
        await settle(rig, pilot)
        assert sent(rig) == []
        assert "publish_deck" in rig.screen.state.approvals


async def test_a_approves_the_selected_approval_and_it_leaves_the_pane() -> None:
    """Issue 23 item 3: a on an approval never opened opens it first (nothing is sent); a
    there, or a again once it has been read, approves."""
    from goldfive_tui.screens.detail import ApprovalScreen

    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        assert " · publish_deck" in screen_text(rig.app)  # unread
        await pilot.press("a")
        await settle(rig, pilot)
        assert sent(rig) == [] and isinstance(rig.app.screen, ApprovalScreen)
        await pilot.press("escape")  # read, not decided
        await settle(rig, pilot)
        assert sent(rig) == [] and " ✓ publish_deck" in screen_text(rig.app)
        await pilot.press("a")  # read now: a approves at once
        await settle(rig, pilot)
        assert sent(rig) == [("APPROVE", {"target_id": "publish_deck", "detail": "", **who()})]
        assert "control APPROVE \"publish_deck\" → SUCCESS" in log_texts(rig.app)
        assert rig.screen.state.approvals == {}
        assert "Approvals (0)" in screen_text(rig.app)


async def test_a_with_no_pending_approval_sends_nothing() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("a")
        await settle(rig, pilot)
        assert sent(rig) == []


async def test_x_rejects_the_selected_approval_with_the_typed_reason() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("x")  # unread: its detail opens, where x rejects
        await settle(rig, pilot)
        assert sent(rig) == []
        await pilot.press("x", *"not yet", "enter")
        await settle(rig, pilot)
        assert sent(rig) == [("REJECT", {"target_id": "publish_deck", "detail": "not yet", **who()})]
        assert "control REJECT \"publish_deck: not yet\" → SUCCESS" in log_texts(rig.app)


async def test_w_rewinds_to_the_selected_task_only_after_confirming() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        assert rig.app.focused is rig.app.query_one(PlanView)
        await pilot.press("down", "w")
        assert isinstance(rig.app.screen, ConfirmScreen)
        await pilot.press("n")
        assert sent(rig) == []
        await pilot.press("down", "w", "y")
        await settle(rig, pilot)
        assert sent(rig) == [("REWIND_TO", {"task_id": "draft", **who()})]
        assert "control REWIND_TO \"draft\" → SUCCESS" in log_texts(rig.app)


async def test_w_on_a_task_that_never_ran_says_so_and_asks_nothing() -> None:
    """It once offered to rewind a task that had not started (issue 23, low)."""
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        await pilot.press("down", "down", "down", "down", "w")
        await pilot.pause()
        assert not isinstance(rig.app.screen, ConfirmScreen) and sent(rig) == []
        assert any("has not run yet: there is nothing to rewind" in str(n.message) for n in rig.app._notifications)


async def test_i_injects_a_user_message() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("i", *"use the blue theme", "ctrl+s")
        await settle(rig, pilot)
        assert sent(rig) == [("INJECT_MESSAGE", {"role": "user", "text": "use the blue theme", **who()})]


async def test_c_cancels_the_run_after_confirmation() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("c", "escape")
        assert sent(rig) == []
        await pilot.press("c", "y")
        await settle(rig, pilot)
        assert sent(rig) == [("CANCEL", {"reason": "cancelled from the TUI", **who()})]
        assert rig.screen.state.phase == RunPhase.ABORTED
        assert "CANCELLED" in screen_text(rig.app).splitlines()[0]  # a person ended it: not a failure


@pytest.mark.parametrize("result", [AckResult.FAILURE, AckResult.UNSUPPORTED])
async def test_a_failed_or_unsupported_ack_is_shown_with_its_detail(result: AckResult) -> None:
    rig = make_rig(acks={ControlKind.PAUSE: (result, "not now")})
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("p")
        await settle(rig, pilot)
        assert f"control PAUSE → {result.value}: not now" in log_texts(rig.app)
        assert [n.title for n in rig.app._notifications] == ["refused"]  # a refusal also toasts
        assert rig.screen.state.phase == RunPhase.RUNNING


async def test_a_send_that_raises_shows_a_failure_instead_of_crashing() -> None:
    rig = make_rig()

    async def broken(msg):  # type: ignore[no-untyped-def]
        raise ConnectionError("server went away")

    rig.source.send = broken  # type: ignore[method-assign]
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("p")
        await settle(rig, pilot)
        assert "control PAUSE → FAILURE: not delivered: server went away" in log_texts(rig.app)


async def test_slash_filters_the_log_and_escape_clears_it() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        total = len(log_texts(rig.app))
        await pilot.press("slash", *"drift", "a")  # the "a" goes into the filter, approving nothing
        await settle(rig, pilot)
        assert log_texts(rig.app) == []  # "drifta" matches nothing
        await pilot.press("backspace")
        await settle(rig, pilot)
        assert log_texts(rig.app) == ["drift CONTEXT_PRESSURE INFO: context 61% full"]
        assert sent(rig) == []
        await pilot.press("escape")
        await settle(rig, pilot)
        assert len(log_texts(rig.app)) == total


async def test_the_command_palette_offers_the_same_actions() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("ctrl+p", *"Pause")
        await pilot.pause(0.3)  # the palette searches in a worker with a debounce
        await pilot.press("enter")
        await settle(rig, pilot)
        assert sent(rig) == [("PAUSE", who())]


async def test_help_lists_every_binding_from_the_table() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=(120, 40)) as pilot:  # all of it on screen (it scrolls when shorter)
        await settle(rig, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(rig.app.screen, HelpScreen)
        text = screen_text(rig.app)
        for b in rig.screen.offered_bindings():
            assert b.tooltip in text
        await pilot.press("escape")
        assert not isinstance(rig.app.screen, HelpScreen)


async def test_scrolling_up_pauses_follow_and_counts_new_lines() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=(120, 24)) as pilot:
        await settle(rig, pilot)
        log = rig.app.query_one(EventLog)
        session = rig.script.session
        rig.source.release([E.task_progress(session, "draft", detail=f"step {i}") for i in range(30)])
        await settle(rig, pilot)
        assert log.follow and log.scroll_y == log.max_scroll_y > 0
        log.focus()
        await pilot.press("up")
        await settle(rig, pilot)
        assert not log.follow
        rig.source.release(rig.script.finish())
        await settle(rig, pilot)
        assert log.new_lines == 2
        assert "2 new" in screen_text(rig.app)
        await pilot.press("end")
        await settle(rig, pilot)
        assert log.follow and log.new_lines == 0


async def test_missed_events_are_reported_in_the_log() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        rig.source.release([Missed(count=3, first_sequence=10, last_sequence=12)])
        await settle(rig, pilot)
        assert "missed 3 events (10..12) were dropped" in log_texts(rig.app)
        assert rig.screen.state.missed == 3


async def test_a_new_approval_rings_the_bell_and_shows_a_toast() -> None:
    rig = make_rig()
    bells: list[int] = []
    rig.app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        assert bells == []
        rig.source.release(rig.script.to_approval(task="draft"))
        await settle(rig, pilot)
        assert bells == [1]
        assert any("Publish the deck" in n.message for n in rig.app._notifications)


async def test_an_approval_answered_in_history_does_not_ring_and_an_ended_run_offers_no_approval_keys() -> None:
    rig = make_rig("finished")
    bells: list[int] = []
    rig.app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        assert bells == []
        assert not [n for n in rig.app._notifications if n.title == "Approval needed"]
        # The approvals pane's hint said "a approve · x reject" on a run that had ended.
        assert rig.screen.query_one(ApprovalsView).border_subtitle == "the run has ended: nothing to decide"


async def test_a_critical_drift_rings_the_bell_and_shows_a_toast() -> None:
    rig = make_rig()
    bells: list[int] = []
    rig.app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        drift = DriftEvent(DriftKind.SAFETY_CONCERN, DriftSeverity.CRITICAL, "deleting the repo")
        rig.source.release([E.drift_detected(rig.script.session, drift)])
        await settle(rig, pilot)
        assert bells == [1]
        assert [n.title for n in rig.app._notifications] == ["CRITICAL drift"]


async def test_j_k_g_and_shift_g_move_in_the_plan_and_the_event_log_and_send_nothing() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        plan = rig.app.query_one(PlanView)
        plan.focus()
        await pilot.press("g")
        assert plan.cursor == 0
        await pilot.press("j", "j")
        assert plan.cursor == 2
        await pilot.press("k")
        assert plan.cursor == 1
        await pilot.press("G")
        assert plan.cursor == len(rig.screen.state.tasks) - 1
        log = rig.app.query_one(EventLog)
        log.focus()
        await pilot.press("g")
        top = log.cursor
        await pilot.press("j")
        assert log.cursor == top + 1
        await pilot.press("k")
        assert log.cursor == top
        assert rig.source.sent == []  # moving never sends a control


async def test_a_steer_note_can_span_lines_and_up_recalls_the_previous_one() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("s", *"fewer slides", "enter", *"and shorter", "ctrl+s")
        await settle(rig, pilot)
        assert sent(rig) == [("STEER", {"note": "fewer slides\nand shorter", **who()})]
        await pilot.press("s", *"draft", "up")  # the cursor is on the first line: history
        area = rig.app.screen.query_one(TextArea)
        assert area.text == "fewer slides\nand shorter"
        await pilot.press("down", "down")  # down to the last line, then past the newest: the draft
        assert area.text == "draft"
        await pilot.press("escape")
        await pilot.press("i", "up")  # inject keeps its own history
        assert rig.app.screen.query_one(TextArea).text == ""


async def test_ctrl_s_right_after_fast_typing_sends_every_key_typed_before_it() -> None:
    """Keys arriving faster than they are handled (a paste, tmux send-keys) stay in order:
    ctrl+s never overtakes text still queued for the note."""
    from textual import events as tev

    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("s")
        driver = rig.app._driver
        assert driver is not None
        for ch in "fewer slides please":
            driver.send_message(tev.Key("space" if ch == " " else ch, ch))
        driver.send_message(tev.Key("ctrl+s", None))
        await settle(rig, pilot)
        assert sent(rig) == [("STEER", {"note": "fewer slides please", **who()})]


async def test_dollar_sets_the_budget_refusing_words_it_cannot_read() -> None:
    from textual.widgets import Input

    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("dollar_sign", *"tokens=lots", "enter")
        await pilot.pause()
        assert isinstance(rig.app.screen.focused, Input)  # still asking: the error says why
        assert "not a number" in screen_text(rig.app)
        rig.app.screen.query_one(Input).value = ""
        await pilot.press(*"tokens=50k,usd=none", "enter")
        await settle(rig, pilot)
        [(kind, payload)] = sent(rig)
        assert kind == "BUDGET" and {k: payload[k] for k in ("tokens", "usd")} == {"tokens": 50_000, "usd": 0}
        assert "resume" not in payload  # the run is not paused by a budget: it only sets it


async def test_end_and_home_jump_to_the_end_and_the_top_of_the_help_whatever_has_focus() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=(80, 24)) as pilot:  # the table is taller than the dialog: it scrolls
        await settle(rig, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = rig.app.screen
        assert isinstance(help_screen, HelpScreen)
        body = help_screen.query_one("#help-body")
        assert body.max_scroll_y > 0
        for focus_left in (False, True):  # a click or a tap on the dialog leaves nothing focused
            if focus_left:
                help_screen.set_focus(None)
            await pilot.press("end")
            for _ in range(60):  # it scrolls there, animated
                if body.scroll_y == body.max_scroll_y:
                    break
                await pilot.pause(0.05)
            assert body.scroll_y == body.max_scroll_y, focus_left
            await pilot.press("home")
            for _ in range(60):
                if body.scroll_y == 0:
                    break
                await pilot.pause(0.05)
            assert body.scroll_y == 0, focus_left
        assert "Home End" in screen_text(rig.app)  # the hint says so


async def test_toasts_wait_while_the_approval_detail_is_open_and_show_when_it_closes() -> None:
    """A toast covered part of the approval detail at 80x24 (the trial): while a dialog is up,
    what the run has to say waits, and shows once it closes."""
    from goldfive_tui.screens.detail import ApprovalScreen

    rig = make_rig()
    async with rig.app.run_test(size=(80, 24)) as pilot:
        await settle(rig, pilot)
        rig.source.release(rig.script.to_approval(task="draft"))
        await settle(rig, pilot)
        rig.app.clear_notifications()
        rig.screen.query_one(ApprovalsView).focus()
        await pilot.press("a")  # unread: its detail opens (no toast says so: the dialog is the answer)
        await settle(rig, pilot)
        assert isinstance(rig.app.screen, ApprovalScreen)
        later = rig.script._at(10, E.approval_requested, target_id="send_mail", kind="tool", prompt="Mail the team?",
                               task_id="polish_and_ship", tool_name="send_mail", args={}, timeout_ms=0)  # fmt: skip
        rig.source.release([later])
        await settle(rig, pilot)
        await pilot.pause(0.3)
        assert [n.message for n in rig.app._notifications] == []
        await pilot.press("escape")
        await settle(rig, pilot)
        await pilot.pause(0.3)
        assert [n.title for n in rig.app._notifications] == ["Approval needed"]
