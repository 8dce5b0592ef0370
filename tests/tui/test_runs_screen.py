"""The runs screen, driven with Pilot: what needs you first, Enter/Esc, n, /, the bell and
toast for another run, and the waiting queue's batch-approve rule."""

from __future__ import annotations

from goldfive_tui.app import GoldfiveApp
from goldfive_tui.run.screen import RunScreen
from goldfive_tui.runs.model import RunRow, sort_rows
from goldfive_tui.screens.runs import RunsScreen
from goldfive_tui.screens.waiting import WaitingDetail, WaitingScreen

from tests.tui.conftest import screen_text
from tests.tui.runs_kit import IDS, hub_of, make_hub, make_runs, new_approval, open_screen
from tests.tui.pilot_kit import pilot_until

SIZE = (80, 24)


async def ready(app: GoldfiveApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await hub_of(app).poll()
    await pilot.pause()


def title_of(queue: WaitingScreen) -> str:
    return str(queue.query_one("#waiting-title").render())


def shown_ids(app: GoldfiveApp) -> list[str]:
    return [r.run_id for r in hub_of(app).rows]


async def test_rows_sort_what_needs_a_person_first() -> None:
    app = make_hub("done", "running", "paused", "failed", "approval", "escalation")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        order = shown_ids(app)
        # approval and escalation (the oldest first), failed, paused, then live, then finished
        assert order[:2] == sorted([IDS["approval"], IDS["escalation"]], key=lambda r: next(x.needs_since_ms for x in hub_of(app).snapshot.rows if x.run_id == r))
        assert order[2:] == [IDS["failed"], IDS["paused"], IDS["running"], IDS["done"]]
        text = screen_text(app)
        assert "approve publish_deck" in text and "4 need you" in text
        assert "escalation" in text and "failed" in text


def test_sort_key_puts_the_longest_waiting_approval_first() -> None:
    rows = [
        RunRow("late", "RUNNING", 0, 1, "", 0, "hosted", "approval", "approval: x", 2000),
        RunRow("early", "RUNNING", 0, 1, "", 0, "hosted", "approval", "approval: y", 1000),
        RunRow("paused", "PAUSED", 0, 1, "", 0, "hosted", "paused", "paused", 500),
        RunRow("done", "COMPLETED", 1, 1, "", 9000, "hosted"),
        RunRow("live", "RUNNING", 0, 1, "", 100, "hosted"),
    ]
    assert [r.run_id for r in sort_rows(rows)] == ["early", "late", "paused", "live", "done"]


async def test_enter_opens_the_run_and_esc_comes_back() -> None:
    app = make_hub("running", "approval")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        first = shown_ids(app)[0]
        assert first == IDS["approval"]
        await pilot.press("enter")
        await pilot.pause()
        assert hub_of(app).open_run_id == first
        assert not isinstance(app.screen, RunsScreen)
        await hub_of(app).runs.opened[first].wait_idle()  # type: ignore[attr-defined]
        await pilot.pause()
        open_screen(app).repaint()
        assert open_screen(app).state.run_id == first and "publish_deck" in open_screen(app).state.approvals
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("j", "enter")  # the other run: the source is swapped, its state afresh
        await pilot.pause()
        assert hub_of(app).open_run_id == IDS["running"]
        await hub_of(app).runs.opened[IDS["running"]].wait_idle()  # type: ignore[attr-defined]
        await pilot.pause()
        assert open_screen(app).state.run_id == IDS["running"] and not open_screen(app).state.approvals


async def test_n_opens_the_next_run_that_needs_you_from_anywhere() -> None:
    app = make_hub("running", "approval", "failed", "done")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        assert hub_of(app).open_run_id == IDS["approval"]
        await pilot.press("n")  # from inside a run: the next one
        await pilot.pause()
        assert hub_of(app).open_run_id == IDS["failed"]
        await pilot.press("n")  # and round again
        await pilot.pause()
        assert hub_of(app).open_run_id == IDS["approval"]


async def test_slash_filters_the_rows() -> None:
    app = make_hub("running", "approval", "failed")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("slash", *"b2bb")
        await pilot.pause()
        assert shown_ids(app) == [IDS["failed"]]
        await pilot.press("enter")  # keeps the filter, back on the table
        await pilot.press("escape")
        await pilot.pause()
        assert len(shown_ids(app)) == 3


async def test_a_new_approval_in_another_run_rings_and_toasts_while_a_run_is_open() -> None:
    app = make_hub("running", "paused")
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert hub_of(app).announcer.notices == [] and bells == []  # what waited already is not news
        hub_of(app).open_run(IDS["running"])
        await pilot.pause()
        hub_of(app).runs.release(IDS["paused"], [new_approval(IDS["paused"])])  # type: ignore[attr-defined]
        await hub_of(app).poll()
        await pilot.pause()
        assert [(n.run_id, n.kind, n.tool_name) for n in hub_of(app).announcer.notices] == [(IDS["paused"], "approval", "send_mail")]
        assert bells == [1]
        toasts = [n.message for n in app._notifications]
        assert any(IDS["paused"][:8] in m and "send_mail" in m for m in toasts)
        await hub_of(app).poll()  # the same approval at the next poll: no second alarm
        assert len(hub_of(app).announcer.notices) == 1 and bells == [1]


async def test_completion_is_not_a_notice() -> None:
    runs = make_runs("running")
    app = make_hub(runs=runs)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        from tests.tui.runs_kit import script_events

        script, _ = script_events("running")
        from goldfive import events as E

        runs.release(IDS["running"], [script._at(5000, E.run_completed, "done")])
        await hub_of(app).poll()
        assert hub_of(app).announcer.notices == []


async def test_batch_approve_acts_only_on_read_items_listed_when_the_queue_opened() -> None:
    runs = make_runs("running", "paused", "approval")
    app = make_hub(runs=runs)
    runs.release(IDS["running"], [new_approval(IDS["running"], "send_mail", at_ms=hub_of(app).wall_ms() - 94_000)])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        queue = app.screen
        assert isinstance(queue, WaitingScreen)
        assert [w.tool_name for w in queue.items] == ["send_mail", "publish_deck"]  # oldest first
        assert "+" not in title_of(queue)  # nothing came in since it opened: no mark to explain
        await pilot.press("A")  # nothing read yet: nothing approved
        await pilot.pause()
        assert runs.decisions == []
        await pilot.press("enter")  # read the first (send_mail)
        await pilot.pause()
        assert isinstance(app.screen, WaitingDetail)
        await pilot.press("escape")
        await pilot.pause()
        # A new approval arrives after the list was drawn; the person even reads it.
        runs.release(IDS["paused"], [new_approval(IDS["paused"], "drop_table", at_ms=hub_of(app).wall_ms() - 1_000)])
        await hub_of(app).poll()
        await pilot.pause()
        assert [w.tool_name for w in queue.items] == ["send_mail", "publish_deck", "drop_table"]
        assert title_of(queue).endswith("· 3 items · 1 read (A approves those) · + arrived after opening")  # the mark, in words
        await pilot.press("G", "enter", "escape")
        await pilot.pause()
        assert queue.read == {queue.items[0].key, queue.items[2].key}
        await pilot.press("A")  # asks first, naming what it approves; n approves nothing
        await pilot.pause()
        assert "Approve the 1 item you read? send_mail (d4dd0004)" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert runs.decisions == [] and app.screen is queue
        await pilot.press("A", "y")
        await pilot.pause()
        await pilot.pause()
        assert [(item.tool_name, approve) for item, approve, _ in runs.decisions] == [("send_mail", True)]


async def test_reject_from_the_queue_asks_a_reason_and_unread_items_open_first() -> None:
    runs = make_runs("approval")
    app = make_hub(runs=runs)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("x")  # unread: its detail opens instead
        await pilot.pause()
        assert isinstance(app.screen, WaitingDetail)
        await pilot.press("x")
        await pilot.pause()
        await pilot.press(*"too early", "enter")
        await pilot.pause()
        await pilot.pause()
        assert [(i.tool_name, a, r) for i, a, r in runs.decisions] == [("publish_deck", False, "too early")]


async def test_jump_from_the_queue_opens_the_run_and_does_not_toast_what_was_read_there() -> None:
    app = make_hub("running", "approval")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert hub_of(app).open_run_id == IDS["approval"]
        assert [type(s) for s in app.screen_stack] == [RunsScreen, RunScreen]
        await pilot.pause(0.15)  # a repaint: the alerts are taken there
        assert open_screen(app).state.approvals
        assert [n.title for n in app._notifications if n.title in ("Approval needed", "Question for you")] == []
        hub_of(app).runs.release(IDS["approval"], [new_approval(IDS["approval"], "send_mail")])  # type: ignore[attr-defined]
        await pilot.pause(0.15)
        assert [n.message for n in app._notifications if n.title == "Approval needed"] == ["send_mail: Run send_mail?"]  # a new one is news


async def test_help_on_the_runs_screen_and_in_a_run_lists_the_hub_keys() -> None:
    from goldfive_tui.screens.help import HelpScreen

    app = make_hub("approval")
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for words in ("next run that needs you", "waiting for a person", "Filter the rows", "Down, up, first, last"):
            assert words in text, words
        await pilot.press("escape", "enter")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "Open the next run that needs you" in text and "Everything waiting for a person (decisions)" in text


async def test_a_run_cancelled_from_its_screen_is_cancelled_not_failed() -> None:
    """Issue 23 item 1: c (confirmed) on a run's screen left it "NEEDS YOU ✗ failed" with a
    "failed" notice; it is CANCELLED, needs nobody and tells nobody."""
    from goldfive import events as E
    from goldfive.control import ControlKind
    from goldfive.types import DriftEvent, DriftKind, DriftSeverity
    from tests.tui.runs_kit import script_events

    runs = make_runs("running")
    app = make_hub(runs=runs)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        sent = runs.opened[IDS["running"]].sent
        assert [m.kind for m in sent] == [ControlKind.CANCEL]
        script, _ = script_events("running")
        reason = str(sent[0].payload["reason"])
        runs.release(IDS["running"], [
            script._at(3000, E.control_received, sent[0]),
            script._at(3001, E.drift_detected, DriftEvent(DriftKind.USER_CANCEL, DriftSeverity.CRITICAL, reason)),
            script._at(3002, E.run_aborted, reason),
        ])  # fmt: skip
        await pilot.press("escape")
        await hub_of(app).poll()
        await pilot.pause()
        row = next(r for r in hub_of(app).rows if r.run_id == IDS["running"])
        assert (row.state, row.needs_kind) == ("CANCELLED", "")
        assert hub_of(app).announcer.notices == []
        assert "0 need you" in screen_text(app) and "CANCELLED" in screen_text(app)



def _footer(app: GoldfiveApp) -> str:
    return screen_text(app).splitlines()[-1]


async def test_a_failure_is_acknowledged_from_the_runs_screen_or_inside_the_run() -> None:
    """Issue 23 item 1: a failure could not be dismissed; a (on its row, or inside the run)
    acknowledges it, after which it needs nobody; the key is offered only on a failed run."""
    runs = make_runs("failed", "running", "done")
    app = make_hub(runs=runs)
    async with app.run_test(size=(100, 24)) as pilot:
        await ready(app, pilot)
        hub = hub_of(app)
        assert shown_ids(app)[0] == IDS["failed"] and "1 needs you" in screen_text(app)
        assert "Ack failure" in _footer(app)
        await pilot.press("j")  # the running run: nothing to acknowledge, nothing offered
        await pilot.pause()
        assert hub.selected_run == IDS["running"] and "Ack failure" not in _footer(app)
        await pilot.press("a")
        await pilot.pause()
        assert runs.marks == {}
        await pilot.press("k", "a")
        await pilot_until(pilot, "the runs screen to show it", lambda: runs.marks)
        await hub.poll()
        await pilot.pause()
        row = next(r for r in hub.rows if r.run_id == IDS["failed"])
        assert (row.state, row.needs_kind, row.acknowledged) == ("ABORTED", "", True)
        assert "0 need you" in screen_text(app) and "Ack failure" not in _footer(app)

        # Inside the run: a is Ack failure on a failed run (it is Approve while one runs).
        runs.marks.clear()
        await hub.poll()
        hub.open_run(IDS["failed"])
        await pilot.pause()
        await pilot_until(pilot, "the runs screen to show it", lambda: open_screen(app).state.finished)
        await pilot.pause()
        assert "Ack failure" in _footer(app) and "Approve" not in _footer(app)
        await pilot.press("a")
        await pilot_until(pilot, "the runs screen to show it", lambda: runs.marks.get(IDS["failed"]))
        assert runs.marks == {IDS["failed"]: {"acknowledged"}}


async def test_del_archives_an_ended_run_after_a_confirmation_and_never_a_live_one() -> None:
    runs = make_runs("running", "done")
    app = make_hub(runs=runs)
    async with app.run_test(size=(100, 24)) as pilot:
        await ready(app, pilot)
        hub = hub_of(app)
        assert hub.selected_run == IDS["running"] and "Archive" not in _footer(app)
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen) and runs.marks == {}
        await pilot.press("j")
        await pilot.pause()
        assert hub.selected_run == IDS["done"] and "del Archive" in _footer(app)
        await pilot.press("delete")
        await pilot.pause()
        await pilot.press("y")
        await pilot_until(pilot, "the runs screen to show it", lambda: runs.marks)
        await pilot_until(pilot, "the runs screen to show it", lambda: len(shown_ids(app)) == 1)
        assert runs.marks == {IDS["done"]: {"archived"}} and shown_ids(app) == [IDS["running"]]


async def test_a_question_in_the_queue_is_answered_by_picking_or_typing() -> None:
    from goldfive import events as E
    from goldfive_tui.screens.approvals import AnswerScreen
    from tests.tui.scenario import T0_MS, DemoScript

    runs = make_runs("running")
    app = make_hub(runs=runs)
    script = DemoScript(run_id=IDS["running"])
    script.clock.advance(hub_of(app).wall_ms() - 3_000 - T0_MS)
    asked = [
        script._at(0, E.approval_requested, target_id="q-1", kind="question", prompt="Which region?", task_id="publish"),
        script._at(0, E.question_asked, target_id="q-1", prompt="Which region?", task_id="publish", options=("eu", "us"), free_text=True),
    ]
    runs.release(IDS["running"], asked)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert "? question: Which region?" in screen_text(app)  # the runs screen's needs-you column
        await pilot.press("d")
        await pilot.pause()
        queue = app.screen
        assert isinstance(queue, WaitingScreen)
        [item] = queue.items
        assert (item.kind, item.what, item.options) == ("question", "question", ("eu", "us"))
        await pilot.press("a")  # unread: its detail first
        await pilot.pause()
        assert isinstance(app.screen, WaitingDetail) and "options: eu / us" in screen_text(app)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, AnswerScreen)
        await pilot.press("1")
        await pilot.pause()
        await pilot.pause()
        assert runs.answers == [{"option": "eu"}] and [(i.target_id, a) for i, a, _ in runs.decisions] == [("q-1", True)]
        from goldfive_tui.runs.local import decision

        sent = decision(item, True, "", {"option": "eu"})  # what goes to the run: ANSWER, with who and through the TUI
        assert str(sent.kind) == "ANSWER" and sent.payload["option"] == "eu" and sent.payload["client"] == "tui" and sent.payload["author"]
        await pilot.press("a")  # read now: straight to the answer dialog
        await pilot.pause()
        await pilot.press("tab", *"later", "enter")
        await pilot.pause()
        await pilot.pause()
        assert runs.answers[-1] == {"text": "later"}


async def test_e_in_the_queue_edits_the_call_then_approves_it_as_edited() -> None:
    """As on a run's screen: e opens the call's arguments (an unread item opens first), a
    wrong edit stays in the editor with the reason, ctrl+s sends APPROVE with the edit."""
    import json

    from textual.widgets import TextArea

    runs = make_runs("approval")
    app = make_hub(runs=runs)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("e")  # unread: its detail opens instead, and says e is there
        await pilot.pause()
        assert isinstance(app.screen, WaitingDetail) and "e edit, then approve" in screen_text(app)
        await pilot.press("e")
        await pilot.pause()
        area = app.screen.query_one(TextArea)
        args = json.loads(area.text)
        assert isinstance(args["slides"], int) and runs.decisions == []
        area.text = '{"slides": "six"'
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "not JSON" in screen_text(app) and runs.decisions == []  # nothing sent, nothing lost
        area.text = json.dumps({**args, "slides": args["slides"] + 1})
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.pause()
        [(item, approve, _)] = runs.decisions
        [msg] = runs.messages
        assert item.tool_name == "publish_deck" and approve and str(msg.kind) == "APPROVE"
        assert msg.payload["arguments"] == {**args, "slides": args["slides"] + 1} and msg.payload["client"] == "tui"


async def test_e_in_the_queue_on_a_question_says_it_has_no_arguments() -> None:
    from goldfive import events as E
    from tests.tui.scenario import T0_MS, DemoScript

    runs = make_runs("running")
    app = make_hub(runs=runs)
    script = DemoScript(run_id=IDS["running"])
    script.clock.advance(hub_of(app).wall_ms() - 3_000 - T0_MS)
    runs.release(IDS["running"], [script._at(0, E.approval_requested, target_id="q-1", kind="question", prompt="Which region?", task_id="publish")])
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        assert "A question has no arguments to edit" in screen_text(app) and isinstance(app.screen, WaitingScreen)
        assert runs.decisions == []


def test_at_80_columns_the_age_is_whole_and_the_task_has_room() -> None:
    from goldfive_tui.runs.table import header_text, row_text

    row = RunRow("a1aa0001bbbb", "RUNNING", 2, 5, "polish_and_ship", 1_000, "hosted")
    text = row_text(row, 1_000 + 908_000, 80).plain  # started 15m08s ago
    assert text.rstrip().endswith("15m08s") and len(text) <= 80
    assert "polish_and" in text  # 11 characters of the task, not 5
    head = header_text(80).plain
    assert head.rstrip().endswith("AGE") and "ORIGIN" not in head  # origin only from 100 columns
    assert "ORIGIN" in header_text(120).plain and "hosted" in row_text(row, 909_000, 120).plain

