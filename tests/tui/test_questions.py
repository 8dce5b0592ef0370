"""Questions in the TUI (docs/approvals.md#questions): the approvals pane shows the question and
its options, ``a`` on it (once read) opens the answer dialog, a digit or Enter on an option
picks it, a typed line answers it; each sends ANSWER with who and through which client. In the
waiting queue ``a`` on a question answers it the same way."""

from __future__ import annotations

from textual.widgets import Input

from goldfive import events as E
from tests.tui.conftest import make_rig, screen_text, settle

SIZE = (120, 40)


def _ask(rig, target: str = "q-1", options: tuple[str, ...] = ("eu", "us"), free_text: bool = True) -> list[object]:  # type: ignore[no-untyped-def]
    return [
        rig.script._at(5, E.approval_requested, target_id=target, kind="question", prompt="Which region?", task_id="draft"),
        rig.script._at(5, E.question_asked, target_id=target, prompt="Which region?", task_id="draft", options=options, free_text=free_text),
    ]


async def test_a_question_shows_its_options_and_a_digit_picks_one() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release(_ask(rig))
        await settle(rig, pilot)
        text = screen_text(rig.app)
        assert '? question' in text and '"Which region?"  eu / us' in text
        await pilot.press("a")  # read it first: the detail opens
        await pilot.pause()
        assert "options: eu / us" in screen_text(rig.app) and "a answer (type or pick)" in screen_text(rig.app)
        assert rig.source.sent == []
        await pilot.press("a")  # from the detail: the answer dialog
        await pilot.pause()
        assert "1  eu" in screen_text(rig.app) and "2  us" in screen_text(rig.app)
        await pilot.press("2")
        await settle(rig, pilot)
        (msg,) = rig.source.sent
        assert str(msg.kind) == "ANSWER" and msg.payload["target_id"] == "q-1" and msg.payload["option"] == "us"
        assert "text" not in msg.payload and msg.payload["client"] == "tui" and msg.payload["author"]
        assert len(rig.app.screen_stack) == 1


async def test_a_typed_answer_is_sent_as_text_and_an_empty_one_is_not() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release(_ask(rig, options=()))
        await settle(rig, pilot)
        rig.screen.open_approval("q-1")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        line = rig.app.screen.query_one(Input)
        assert rig.app.screen.focused is line
        await pilot.press("enter")
        await pilot.pause()
        assert "the answer is empty" in screen_text(rig.app) and rig.source.sent == []
        await pilot.press(*"eu-west-1", "enter")
        await settle(rig, pilot)
        (msg,) = rig.source.sent
        assert str(msg.kind) == "ANSWER" and msg.payload["text"] == "eu-west-1" and "option" not in msg.payload


async def test_a_question_that_takes_only_its_options_offers_no_line_to_type_in() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        rig.source.release(_ask(rig, free_text=False))
        await settle(rig, pilot)
        rig.screen.open_approval("q-1")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        assert not rig.app.screen.query(Input)
        await pilot.press("escape")
        await pilot.pause()
        assert rig.source.sent == []
