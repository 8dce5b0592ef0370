"""q while a run lives in this process asks first; a kept run goes on headless; an agent's
crash keeps its traceback (in the task detail and on quit) and the exit code says it failed."""

from __future__ import annotations

import io

from goldfive.cli.local import _runner_factory
from goldfive.planners.static import StaticPlanner
from goldfive.sinks import list_runs
from goldfive.types import Plan, Task, TaskEdge
from tests.tui.conftest import make_rig, run_app, run_screen, screen_text, settle
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.launch import run_local_tui
from goldfive_tui.local_source import LocalRunSource
from goldfive_tui.screens.dialogs import DETACH, QuitScreen

SIZE = (120, 40)


async def test_q_on_a_live_local_run_asks_and_enter_stays() -> None:
    rig = make_rig(owns_run=True)
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(rig.app.screen, QuitScreen)
        text = screen_text(rig.app)
        assert "Cancel run (c)" in text and "Keep running (k)" in text and "Keep, reject (t)" in text and "Stay (Enter)" in text
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(rig.app.screen, QuitScreen) and rig.app.is_running
        assert rig.source.sent == []


async def test_q_then_c_cancels_the_run_and_quits() -> None:
    rig = make_rig(owns_run=True)
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("q", "c")
        await settle(rig, pilot)
        await rig.screen.workers.wait_for_complete()
        assert [str(m.kind) for m in rig.source.sent] == ["CANCEL"]
    assert rig.app.return_value is None


async def test_q_then_k_quits_and_leaves_the_run_alive() -> None:
    rig = make_rig(owns_run=True)
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("q", "k")
        await pilot.pause()
    assert rig.app.return_value == DETACH
    assert rig.source.sent == [] and not rig.source.stopped  # on_unmount left the run alone


async def test_q_quits_at_once_when_the_run_is_not_ours_or_has_ended() -> None:
    for rig in (make_rig(), make_rig("finished", owns_run=True)):
        async with rig.app.run_test(size=SIZE) as pilot:
            await settle(rig, pilot)
            await pilot.press("q")
            await pilot.pause()
            assert not isinstance(rig.app.screen, QuitScreen)
        assert rig.source.stopped


async def test_the_system_commands_leave_quit_to_the_q_key() -> None:
    rig = make_rig()
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        titles = [c.title for c in rig.app.get_system_commands(rig.app.screen)]
        assert "Quit" not in titles and "Theme" in titles
        assert [b.description for b in rig.screen.offered_bindings()].count("Quit") == 1


# -- the launcher: keep running headless, crashes, exit codes -------------------------------------


async def slow_agent(task, session):  # type: ignore[no-untyped-def]
    import asyncio

    await asyncio.sleep(0.05)
    return f"did {task.id}"


async def crashing_agent(task, session):  # type: ignore[no-untyped-def]
    if task.id == "boom":
        raise RuntimeError("kaboom")
    return "ok"


def _quit_at_once(monkeypatch, result):  # type: ignore[no-untyped-def]
    """App.run_async replaced: start the run, then quit with ``result`` (no terminal)."""

    async def run_async(self: GoldfiveApp):  # type: ignore[no-untyped-def]
        source = self.home.source
        await source.start()
        if result != DETACH:
            await source.wait_finished()  # type: ignore[attr-defined]
            await source.stop()  # type: ignore[attr-defined]
        return result

    monkeypatch.setattr(GoldfiveApp, "run_async", run_async)


def test_keep_running_follows_the_run_headless_to_its_end_and_says_where_it_is_recorded(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _quit_at_once(monkeypatch, DETACH)
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[TaskEdge("a", "b")])
    db, out, err = tmp_path / "runs.sqlite", io.StringIO(), io.StringIO()
    code = run_local_tui(_runner_factory(slow_agent, StaticPlanner(plan), "ship it"), db_path=str(db), out=out, err=err)
    assert code == 0
    (info,) = list_runs(db)
    assert "run_completed" in out.getvalue() and "task_completed" in out.getvalue()
    assert f"goes on headless until it ends; it is recorded to {db}" in err.getvalue()
    assert f"goldfive replay {db} --run-id {info.run_id}" in err.getvalue()


def test_an_agent_crash_prints_its_traceback_on_quit_and_exits_1(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _quit_at_once(monkeypatch, None)
    plan = Plan(tasks=[Task("boom", "Boom")])
    err = io.StringIO()
    code = run_local_tui(_runner_factory(crashing_agent, StaticPlanner(plan), "x"), db_path=str(tmp_path / "r.sqlite"), out=io.StringIO(), err=err)
    assert code == 1
    text = err.getvalue()
    assert "the agent raised on task boom:" in text and "Traceback (most recent call last)" in text
    assert 'raise RuntimeError("kaboom")' in text and "RuntimeError: kaboom" in text


async def test_an_agent_crash_shows_its_traceback_in_the_task_detail() -> None:
    plan = Plan(tasks=[Task("boom", "Boom")])
    source = LocalRunSource(_runner_factory(crashing_agent, StaticPlanner(plan), "x"))  # type: ignore[arg-type]
    app = run_app(source)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await source.wait_finished()
        await pilot.pause()
        run_screen(app).repaint()
        await pilot.pause()
        assert run_screen(app).state.finished == "ABORTED"
        text = screen_text(app)
        assert "traceback:" in text and "RuntimeError: kaboom" in text


# -- keep running with approvals nobody can answer (issue 23 item 6) -------------------------------


async def asking_agent(task, session, tools):  # type: ignore[no-untyped-def]
    answer = await tools["report_awaiting_approval"](prompt="ship it?")
    return f"asked: {answer.get('decision')}"


async def test_the_quit_dialog_says_what_becomes_of_an_approval_and_t_picks_rejecting_them() -> None:
    from goldfive_tui.screens.dialogs import DETACH_REJECT

    rig = make_rig(owns_run=True)
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("q")
        await pilot.pause()
        text = " ".join(screen_text(rig.app).split())
        assert "times out" not in text  # there is no timeout: it said so, and the run hung
        assert "waiting for ever" in text and "rejects each after 10 minutes" in text and "--hub" in text
        await pilot.press("t")
        await pilot.pause()
    assert rig.app.return_value == DETACH_REJECT and not rig.source.stopped


async def test_a_kept_run_rejects_an_undecided_approval_after_the_chosen_time() -> None:
    import asyncio

    from goldfive.approvals import ledger_of
    from goldfive.settings import os_user

    plan = Plan(tasks=[Task("ask", "Ask")])
    source = LocalRunSource(_runner_factory(asking_agent, StaticPlanner(plan), "x"))  # type: ignore[arg-type]
    await source.start()
    for _ in range(500):
        if any(e.WhichOneof("payload") == "approval_requested" for e in source.sink.events):
            break
        await asyncio.sleep(0.01)
    source.last_sequence = source.sink.events[-1].sequence  # what the app had shown when it closed
    out = io.StringIO()
    await asyncio.wait_for(source.follow(out, reject_after=0.05), 10)
    await source.stop()
    assert source.succeeded
    (entry,) = ledger_of(source.sink.events)
    assert (entry.outcome, entry.author, entry.client) == ("REJECTED", os_user(), "tui")
    assert "after the TUI closed" in entry.reason


async def test_ctrl_c_opens_the_quit_dialog_as_q_does() -> None:
    rig = make_rig(owns_run=True)
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(rig.app.screen, QuitScreen)
        await pilot.press("ctrl+c")  # again: the dialog stays, once
        await pilot.pause()
        assert isinstance(rig.app.screen, QuitScreen) and len(rig.app.screen_stack) == 2
        await pilot.press("enter")
        await pilot.pause()
        assert rig.app.is_running and rig.source.sent == []


async def test_ctrl_c_quits_a_view_with_no_run_of_this_process() -> None:
    rig = make_rig(owns_run=False)
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert not rig.app.is_running


async def test_the_quit_dialog_closes_and_says_so_when_the_run_ends_under_it() -> None:
    rig = make_rig(owns_run=True)
    async with rig.app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(rig, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(rig.app.screen, QuitScreen)
        rig.source.release(rig.script.finish())
        await settle(rig, pilot)
        assert not isinstance(rig.app.screen, QuitScreen) and rig.app.is_running
        assert "The run ended (COMPLETED) while you were deciding" in screen_text(rig.app)
        assert rig.source.sent == []
        await pilot.press("q")  # ended: q quits at once
        await pilot.pause()
    assert not rig.app.is_running


async def test_z_on_the_approvals_pane_fills_the_screen_and_restores_its_height() -> None:
    from goldfive_tui.widgets.approvals import ApprovalsView

    rig = make_rig("approval")
    async with rig.app.run_test(size=(80, 24)) as pilot:
        await settle(rig, pilot)
        pane = rig.app.screen.query_one(ApprovalsView)
        before = pane.outer_size.height
        pane.focus()
        await pilot.press("z")
        await settle(rig, pilot)
        assert rig.screen.maximized is pane and pane.outer_size.height >= 20
        await pilot.press("z")
        await settle(rig, pilot)
        assert rig.screen.maximized is None and pane.outer_size.height == before
