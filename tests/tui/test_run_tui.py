"""``goldfive run`` without --headless: the user's agent runs in-process under the TUI."""

from __future__ import annotations

from goldfive.cli_local import _runner_factory
from goldfive.planner import StaticPlanner
from goldfive.runstate import RunPhase
from goldfive.sinks import SQLitePersistenceSink, list_runs
from goldfive.types import Plan, Task, TaskEdge, TaskStatus
from tui.app import GoldfiveApp
from tui.local_source import LocalRunSource


async def agent(task, session):  # type: ignore[no-untyped-def]
    return f"did {task.id}"


async def test_the_run_factory_drives_the_tui_to_completed_and_records_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = Plan(tasks=[Task("fetch", "Fetch"), Task("report", "Report")], edges=[TaskEdge("fetch", "report")])
    factory = _runner_factory(agent, StaticPlanner(plan), "ship it")
    db = tmp_path / "runs.sqlite"
    source = LocalRunSource(factory, extra_sinks=[SQLitePersistenceSink(db)])  # type: ignore[arg-type]
    app = GoldfiveApp(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert source._run_task is not None
        await source._run_task
        await pilot.pause()
        await app.workers.wait_for_complete()
        app._repaint()
        await pilot.pause()
        assert app.state.phase == RunPhase.COMPLETED
        assert {t.status for t in app.state.tasks.values()} == {TaskStatus.COMPLETED}
        assert app.state.goal_summary == "ship it"
    assert len(list_runs(db)) == 1
