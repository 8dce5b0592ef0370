"""The OpenAI Agents SDK example through `goldfive run --headless` and the TUI approving a call."""

from __future__ import annotations

from pathlib import Path

import pytest
from agents import Agent
from agents.testing import ScriptedModel, assistant_message, function_call
from click.testing import CliRunner

from goldfive.cli import main
from goldfive.cli.local import _runner_factory
from goldfive.planners.static import StaticPlanner
from goldfive.sinks import list_runs, replay_from_sqlite
from goldfive.types import Plan, Task, TaskStatus
from goldfive.view import RunPhase
from goldfive_tui.local_source import LocalRunSource
from tests.tui.conftest import run_app, run_screen
from goldfive_tui.widgets.approvals import ApprovalsView
from tests.tui.pilot_kit import pilot_until as wait_until


def test_goldfive_run_takes_the_sdk_agent_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("examples.openai_agents_agent.DELAY_S", 0.0)
    db = tmp_path / "runs.sqlite"
    result = CliRunner().invoke(
        main,
        ["run", "examples.openai_agents_agent:agent", "--goal", "release notes for 1.2",
         "--plan", "examples/openai_agents_plan.json", "--headless", "--db", str(db)],
    )
    assert result.exit_code == 0, result.output
    assert "3/3 tasks completed" in result.output
    assert "read_changelog(" in result.output  # the SDK's tool call, on the event stream
    (run,) = list_runs(db)
    steps = [e.agent_step for e in replay_from_sqlite(db, run.run_id) if e.HasField("agent_step")]
    # headless without a hub rejects each approval (--approvals reject, said at start):
    # publish_notes did not run and the model was told why
    [publish] = [s for s in steps if s.tool_name == "publish_notes"]
    assert publish.outcome == "rejected" and "--approvals reject" in publish.text



async def test_the_tui_approves_an_sdk_tool_call_and_the_tool_runs() -> None:
    from examples.openai_agents_agent import publish_notes

    model = ScriptedModel([
        [function_call("publish_notes", {"title": "1.2", "body": "notes"}, call_id="call-pub")],
        [assistant_message("published")],
    ])
    agent = Agent(name="publisher", model=model, tools=[publish_notes])
    plan = Plan(tasks=[Task("publish", "Publish the notes")])
    source = LocalRunSource(_runner_factory(agent, StaticPlanner(plan), "publish 1.2"))  # type: ignore[arg-type]
    app = run_app(source, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, "the publish_notes approval", lambda: bool(run_screen(app).state.approvals))
        [request] = run_screen(app).state.approvals.values()
        assert (request.tool_name, request.target_id) == ("publish_notes", "call-pub")
        approvals = app.query_one(ApprovalsView)
        await wait_until(pilot, "the approval listed", lambda: approvals.selected_key == request.target_id)
        approvals.focus()
        await pilot.press("a")  # an approval never opened opens first (issue 23 item 3), then a approves
        from goldfive_tui.screens.detail import ApprovalScreen

        await wait_until(pilot, "the approval opened", lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("a")
        await wait_until(pilot, "run COMPLETED", lambda: run_screen(app).state.phase == RunPhase.COMPLETED)
        assert run_screen(app).state.approvals == {}
        assert {t.status for t in run_screen(app).state.tasks.values()} == {TaskStatus.COMPLETED}
    assert source.error is None
    tool_output = [i for i in model.calls[1].input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert tool_output[0]["output"].startswith("published '1.2'")
