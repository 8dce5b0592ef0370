"""Edit, then approve in the TUI (issue 15): ``e`` on an approval opens its arguments as JSON,
ctrl+s sends APPROVE with the edited arguments (checked first: a wrong name or type stays in
the editor with the reason); ``l`` shows the ledger; a deadline warning is a toast."""

from __future__ import annotations

import json

from textual.widgets import TextArea

from goldfive import events as E
from tests.tui.conftest import make_rig, screen_text, settle
from tests.tui.pilot_kit import pilot_until

SIZE = (120, 40)
PARAMS = {"type": "object", "properties": {"slides": {"type": "integer"}, "title": {"type": "string"}},
          "required": ["slides"], "additionalProperties": False}  # fmt: skip


def _ask(rig, target: str = "call-1") -> object:  # type: ignore[no-untyped-def]
    return rig.script._at(5, E.approval_requested, target_id=target, kind="tool", prompt="Run publish_deck?",
                          task_id="draft", tool_name="publish_deck", args={"slides": 8}, parameters=PARAMS)  # fmt: skip



async def _type_over(pilot, area: TextArea, text: str) -> None:  # type: ignore[no-untyped-def]
    area.text = text
    await pilot.pause()


async def test_e_edits_the_arguments_and_ctrl_s_approves_the_edited_call() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release([_ask(rig)])
        await settle(rig, pilot)
        await pilot.press("e")
        await pilot.pause()
        area = rig.app.screen.query_one(TextArea)
        assert json.loads(area.text) == {"slides": 8}
        await _type_over(pilot, area, '{"slides": "six"}')
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "argument 'slides' must be integer, got string" in screen_text(rig.app)
        assert rig.source.sent == [] and area.text == '{"slides": "six"}'  # nothing sent, nothing lost
        await _type_over(pilot, area, '{"slides": 6, "titel": "x"}')
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "unknown argument 'titel'" in screen_text(rig.app) and rig.source.sent == []
        await _type_over(pilot, area, '{"slides": 6}')
        await pilot.press("ctrl+s")
        await settle(rig, pilot)
        (msg,) = rig.source.sent
        assert str(msg.kind) == "APPROVE" and msg.payload["target_id"] == "call-1"
        assert msg.payload["arguments"] == {"slides": 6} and msg.payload["client"] == "tui" and msg.payload["author"]
        assert len(rig.app.screen_stack) == 1


async def test_e_in_the_approval_detail_opens_the_editor_and_esc_sends_nothing() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release([_ask(rig)])
        await settle(rig, pilot)
        rig.screen.open_approval("call-1")
        await pilot.pause()
        assert "e edit, then approve" in screen_text(rig.app)
        await pilot.press("e")
        await pilot.pause()
        assert rig.app.screen.query(TextArea)
        await pilot.press("escape")
        await pilot.pause()
        assert rig.source.sent == [] and len(rig.app.screen_stack) == 1


async def test_l_shows_the_ledger_and_a_deadline_warning_is_a_toast() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release([
            _ask(rig, "call-2"),
            rig.script._at(6, E.approval_expiring, "call-2", ms_left=30_000, on_timeout="reject"),
        ])  # fmt: skip
        await settle(rig, pilot)
        assert "Approval deadline near" in [n.title for n in rig.app._notifications]
        rig.source.release([
            rig.script._at(7, E.approval_decided, target_id="call-2", outcome="EDITED_APPROVED", author="ann", client="ctl",
                           tool_name="publish_deck", requested_args={"slides": 8}, ran_args={"slides": 6}),
        ])  # fmt: skip
        await settle(rig, pilot)
        await pilot.press("l")
        await pilot.pause()
        text = screen_text(rig.app)
        assert "Approvals ledger (1 decision)" in text and "EDITED_APPROVED" in text and "by ann via ctl" in text
        assert 'asked {"slides":8} -> ran {"slides":6}' in text


async def test_r_lists_the_runs_rules_and_d_removes_the_selected_one() -> None:
    from goldfive.approvals import Matcher, Rule, RuleBook
    from goldfive.run import RuntimeConfig
    from goldfive.run.approval_rules import RULES_VERB
    from goldfive.run.context import RunContext
    from goldfive.run.handlers import decide
    from goldfive.types import Session

    book = RuleBook(rules=[Rule("publish_deck", {"slides": Matcher("range", low=1, high=10)}, author="ann"), Rule("lint")])
    ctx = RunContext(Session(run_id="r"), sinks=[], steerer=None, planner=None, config=RuntimeConfig(approval_rules=book))
    rig = make_rig()
    scripted_send = rig.source.send
    asked: list[dict] = []

    async def send(msg):  # type: ignore[no-untyped-def]
        if msg.kind != RULES_VERB:
            return await scripted_send(msg)
        asked.append(dict(msg.payload))
        return (await decide(ctx, msg)).ack  # the run's own handler answers

    rig.source.send = send  # type: ignore[method-assign]
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        await pilot.press("r")
        await pilot_until(pilot, "the screen to get there", lambda: "R2    run" in screen_text(rig.app))
        text = screen_text(rig.app)
        assert "R1    run      publish_deck: slides in [1, 10]  (made by ann)" in text and "R2    run      lint: always" in text
        await pilot.press("down", "d")  # the second rule: asks first
        await pilot.pause()
        assert "Remove rule R2 (lint: always, run)?" in screen_text(rig.app)
        await pilot.press("n")
        await pilot.pause()
        assert [a["op"] for a in asked] == ["list"] and "R2    run" in screen_text(rig.app)
        await pilot.press("d", "y")
        await pilot_until(pilot, "the screen to get there", lambda: len(asked) == 3 and "R2    run" not in screen_text(rig.app))
        assert [a["op"] for a in asked] == ["list", "remove", "list"] and asked[1]["rule_id"] == "R2"
        assert asked[1]["client"] == "tui" and [r.id for r in book.rules()] == ["R1"]
        assert "R2    run" not in screen_text(rig.app)


async def test_ctrl_s_right_after_fast_typing_approves_the_arguments_as_typed_to_the_end() -> None:
    """Keys sent faster than they are handled: ctrl+s never approves arguments half typed
    (typing "30" then ctrl+s must not approve 3)."""
    from textual import events as tev

    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        rig.source.release([_ask(rig)])
        await settle(rig, pilot)
        await pilot.press("e")
        await pilot.pause()
        area = rig.app.screen.query_one(TextArea)
        await _type_over(pilot, area, '{"slides": ')
        area.move_cursor(area.document.end)
        driver = rig.app._driver
        assert driver is not None
        for ch in "30}":
            driver.send_message(tev.Key("right_curly_bracket" if ch == "}" else ch, ch))
        driver.send_message(tev.Key("ctrl+s", None))
        await settle(rig, pilot)
        (msg,) = rig.source.sent
        assert str(msg.kind) == "APPROVE" and msg.payload["arguments"] == {"slides": 30}


async def test_A_in_the_approval_detail_approves_and_adds_the_rule_it_shows() -> None:
    """Approve, and don't ask again: the choices show the rule whole before one is picked; the
    APPROVE carries it, the run's own handler adds it, and the rules screen lists it."""
    import asyncio

    from goldfive.run import RuntimeConfig
    from goldfive.run.approval_rules import RULES_VERB
    from goldfive.run.context import RunContext
    from goldfive.run.handlers import decide
    from goldfive.types import Session

    ctx = RunContext(Session(run_id="r"), sinks=[], steerer=None, planner=None, config=RuntimeConfig())
    waiter = ctx.session.pending_approvals["call-1"] = asyncio.Event()
    ctx.session.pending_approvals_meta["call-1"] = {"kind": "tool", "tool_name": "publish_deck", "args": {"slides": 8}}
    rig = make_rig()
    scripted_send = rig.source.send
    sent: list = []

    async def send(msg):  # type: ignore[no-untyped-def]
        if msg.kind not in (RULES_VERB, "APPROVE"):
            return await scripted_send(msg)
        sent.append(msg)
        outcome = await decide(ctx, msg)  # the run's own handler answers
        if outcome.effect is not None and msg.kind != RULES_VERB:
            await outcome.effect()
        return outcome.ack

    rig.source.send = send  # type: ignore[method-assign]
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release([_ask(rig)])
        await settle(rig, pilot)
        rig.screen.open_approval("call-1")
        await pilot.pause()
        assert "A approve, and don't ask again" in screen_text(rig.app)
        await pilot.press("A")
        await pilot.pause()
        text = screen_text(rig.app)
        assert "Approve publish_deck, and don't ask again for:" in text
        assert "1  this run     · publish_deck: slides = 8" in text and "2  this run     · publish_deck: any arguments" in text
        assert "3  this machine · publish_deck: slides = 8" in text and "4  this machine · publish_deck: any arguments" in text
        assert sent == []  # nothing is approved before a rule is chosen
        await pilot.press("1")
        await pilot_until(pilot, "the screen to get there", lambda: len(sent) == 1)
        (msg,) = sent
        assert msg.payload["always"] == {"scope": "run", "match": {"slides": {"kind": "exact", "value": 8}}}
        assert msg.payload["target_id"] == "call-1" and msg.payload["author"] == "ada"
        assert waiter.is_set() and ctx.session.pending_approvals_meta.get("call-1", {}).get("decision", "approve") == "approve"
        await pilot_until(pilot, "the screen to get there", lambda: len(rig.app.screen_stack) == 1)
        await pilot.press("r")
        await pilot_until(pilot, "the screen to get there", lambda: "R1    run" in screen_text(rig.app))
        assert "R1    run      publish_deck: slides = 8  (made by ada" in screen_text(rig.app)


async def test_A_offers_no_rule_for_a_task_approval_and_esc_approves_nothing() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release([_ask(rig)])
        await settle(rig, pilot)
        rig.screen.open_approval("call-1")
        await pilot.pause()
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert rig.source.sent == [] and len(rig.app.screen_stack) == 1
        rig.source.release([rig.script._at(6, E.approval_requested, target_id="t-2", kind="task", prompt="Start publishing?", task_id="draft")])
        await settle(rig, pilot)
        rig.screen.open_approval("t-2")
        await pilot.pause()
        assert "don't ask again" not in screen_text(rig.app)
        await pilot.press("A")
        await pilot.pause()
        assert "rules are for tool calls" in screen_text(rig.app) and rig.source.sent == []
