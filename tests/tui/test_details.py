"""Reading before acting: an approval's whole request, an event whole, a task's whole result,
and y to copy them; what a REJECT did to a task stays visible."""

from __future__ import annotations

from goldfive_tui.run.controls import who

import json

from goldfive import events as E
from tests.tui.conftest import make_rig, screen_text, settle
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.screens.detail import ApprovalScreen, EventScreen
from goldfive_tui.screens.dialogs import TextPrompt
from goldfive_tui.widgets.approvals import ApprovalsView
from goldfive_tui.widgets.eventlog import EventLog
from goldfive_tui.widgets.plan import PlanView

SMALL = (80, 24)
SIZE = (120, 40)


def copies(app: GoldfiveApp) -> list[str]:
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    return copied


async def test_enter_on_an_approval_at_80x24_shows_its_prompt_task_age_and_every_argument() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        rig.app.query_one(ApprovalsView).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(rig.app.screen, ApprovalScreen)
        text = screen_text(rig.app)
        assert "Publish the deck to the team site?" in text
        assert '"audience": "eng",' in text and '"slides": 6' in text  # indented JSON, one key a line
        assert "task: polish_and_ship" in text and "tool: publish_deck" in text
        assert "waiting 0s, times out in 5m00s" in text


async def test_a_in_the_approval_detail_approves_that_approval() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        rig.app.query_one(ApprovalsView).focus()
        await pilot.press("enter", "a")
        await settle(rig, pilot)
        assert [(str(m.kind), m.payload) for m in rig.source.sent] == [("APPROVE", {"target_id": "publish_deck", "detail": "", **who()})]
        assert not isinstance(rig.app.screen, ApprovalScreen)


async def test_x_in_the_approval_detail_asks_the_reason_then_rejects() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SMALL) as pilot:
        await settle(rig, pilot)
        rig.app.query_one(ApprovalsView).focus()
        await pilot.press("enter", "x")
        await pilot.pause()
        assert isinstance(rig.app.screen, TextPrompt)
        await pilot.press(*"too early", "enter")
        await settle(rig, pilot)
        assert [(str(m.kind), m.payload) for m in rig.source.sent] == [("REJECT", {"target_id": "publish_deck", "detail": "too early", **who()})]


async def test_the_approval_detail_says_so_when_the_approval_was_answered_elsewhere() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        rig.app.query_one(ApprovalsView).focus()
        await pilot.press("enter")
        rig.source.release([E.approval_granted(rig.script.session, "publish_deck", "by ctl")])
        await settle(rig, pilot)
        assert "No longer waiting" in screen_text(rig.app)
        await pilot.press("a")
        await settle(rig, pilot)
        assert rig.source.sent == []


async def test_enter_on_an_event_opens_it_whole_and_y_copies_it() -> None:
    rig = make_rig()
    long_detail = "slide 4: " + " ".join(f"word{i}" for i in range(60))
    async with rig.app.run_test(size=SMALL) as pilot:
        copied = copies(rig.app)
        await settle(rig, pilot)
        rig.source.release([E.task_progress(rig.script.session, "draft", detail=long_detail)])
        await settle(rig, pilot)
        log = rig.app.query_one(EventLog)
        log.focus()
        assert log.selected_line is not None and log.selected_line.text.endswith("…")  # clipped in the log
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(rig.app.screen, EventScreen)
        text = " ".join(screen_text(rig.app).split())
        assert "word30" in text and "task_id: draft" in text
        await pilot.press("y")
        assert long_detail in copied[0] and '"sequence":' in copied[0]
        await pilot.press("escape", "up", "y")  # the line above, from the log itself
        assert "slide 3 of 8" in copied[1]


async def test_the_task_detail_is_focusable_wraps_and_scrolls_through_a_long_result() -> None:
    rig = make_rig()
    result = "\n".join(f"line {i}: " + "x" * 70 for i in range(40))
    async with rig.app.run_test(size=SMALL) as pilot:
        copied = copies(rig.app)
        await settle(rig, pilot)
        rig.source.release([E.task_completed(rig.script.session, "draft", result)])
        await settle(rig, pilot)
        await pilot.press("down", "down", "enter")  # the plan's draft row, then into its detail
        await settle(rig, pilot)
        box = rig.app.query_one("#detail-scroll")
        assert rig.app.focused is box
        assert box.max_scroll_y > 40  # 40 long lines, wrapped: all there to scroll to
        await pilot.press("end")
        await pilot.pause()
        assert box.scroll_y == box.max_scroll_y and "line 39" in screen_text(rig.app)
        await pilot.press("y")
        assert copied == [result]


async def test_a_rejected_tool_call_is_marked_on_its_task_and_in_the_final_summary() -> None:
    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("x", "x", *"not today", "enter")  # the first x opens it (unread)
        await settle(rig, pilot)
        rig.source.release(rig.script.finish())
        await settle(rig, pilot)
        plan = rig.app.query_one(PlanView)
        row = plan._rows[plan._keys.index("polish_and_ship")].plain
        assert "⊗ rejected publish_deck" in row
        lines = screen_text(rig.app).splitlines()
        assert "COMPLETED" in lines[0] and "1 tool call rejected" in lines[1]
        plan.select_key("polish_and_ship")
        await settle(rig, pilot)
        assert "rejected: publish_deck: not today" in screen_text(rig.app)


def test_pretty_arguments_are_json_indented_and_sorted() -> None:
    from goldfive_tui.screens.detail import pretty_json

    assert pretty_json({"b": 1, "a": [1, 2]}) == json.dumps({"a": [1, 2], "b": 1}, indent=2)
    assert pretty_json("not json {") == "not json {"


async def test_an_approval_withdrawn_by_a_steer_or_timed_out_is_not_counted_as_rejected() -> None:
    from goldfive.run.approvals import WITHDRAWN

    rig = make_rig("approval")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        [target] = list(rig.screen.state.approvals)
        rig.source.release([E.approval_rejected(rig.script.session, target, WITHDRAWN)])
        await settle(rig, pilot)
        assert not rig.screen.state.approvals
        assert rig.screen.feed.rejected == {}
        assert "rejected" not in screen_text(rig.app).splitlines()[1]
