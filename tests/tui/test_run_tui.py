"""``goldfive run`` without --headless: the user's agent runs in-process under the TUI."""

from __future__ import annotations

from goldfive.cli.local import _runner_factory
from goldfive.planners.static import StaticPlanner
from goldfive.view import RunPhase
from goldfive.sinks import SQLitePersistenceSink, list_runs
from goldfive.types import Plan, Task, TaskEdge, TaskStatus
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.local_source import LocalRunSource
from tests.tui.conftest import run_app, run_screen


async def agent(task, session):  # type: ignore[no-untyped-def]
    return f"did {task.id}"


async def test_the_run_factory_drives_the_tui_to_completed_and_records_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = Plan(tasks=[Task("fetch", "Fetch"), Task("report", "Report")], edges=[TaskEdge("fetch", "report")])
    factory = _runner_factory(agent, StaticPlanner(plan), "ship it")
    db = tmp_path / "runs.sqlite"
    source = LocalRunSource(factory, extra_sinks=[SQLitePersistenceSink(db)])  # type: ignore[arg-type]
    app = run_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert source._run_task is not None
        await source._run_task
        await pilot.pause()
        screen = run_screen(app)
        await screen.workers.wait_for_complete()
        screen.repaint()
        await pilot.pause()
        assert screen.state.phase == RunPhase.COMPLETED
        assert {t.status for t in screen.state.tasks.values()} == {TaskStatus.COMPLETED}
        assert screen.state.goal_summary == "ship it"
    assert len(list_runs(db)) == 1


def test_after_the_tui_closes_the_run_says_where_it_was_recorded_and_how_to_replay_it(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from goldfive_tui.launch import run_local_tui

    async def headless_app_run(self: GoldfiveApp) -> None:  # drive the run to its end without a terminal
        source = self.home.source
        await source.start()
        await source._run_task  # type: ignore[attr-defined]
        await source.stop()  # type: ignore[attr-defined]

    monkeypatch.setattr(GoldfiveApp, "run_async", headless_app_run)
    plan = Plan(tasks=[Task("fetch", "Fetch")])
    db = tmp_path / "runs.sqlite"
    assert run_local_tui(_runner_factory(agent, StaticPlanner(plan), "ship it"), db_path=str(db)) == 0
    (info,) = list_runs(db)
    err = capsys.readouterr().err
    assert f"recorded to {db} (run {info.run_id}): goldfive replay {db} --run-id {info.run_id}" in err
