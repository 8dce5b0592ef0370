"""The PydanticAI example through the front-ends: ``goldfive run ... --headless`` and the TUI.

Both take ``examples.pydantic_ai_agent:agent``, a plain PydanticAI ``Agent``, as it is.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner
from textual.pilot import Pilot

from goldfive.cli import main
from goldfive.inputs import make_planner
from goldfive.control import ControlChannel
from goldfive.goals import PassthroughGoalDeriver
from goldfive.runner import Runner
from goldfive.types import TaskStatus
from goldfive.view import RunPhase
from goldfive_tui.local_source import LocalRunSource
from tests.tui.conftest import run_app, run_screen
from goldfive_tui.widgets.approvals import ApprovalsView

PLAN = "examples/pydantic_ai_plan.json"
GOAL = "ship the 1.2 release notes"


@pytest.fixture(autouse=True)
def fast_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("examples.pydantic_ai_agent.DELAY_S", 0.0)
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))


def test_goldfive_run_takes_the_pydantic_ai_agent_as_it_is() -> None:
    result = CliRunner().invoke(main, ["run", "examples.pydantic_ai_agent:agent", "--goal", GOAL, "--plan", PLAN, "--headless"])
    assert result.exit_code == 0, result.output
    assert "3/3 tasks completed" in result.output
    # Headless, nobody can approve: the call to publish is denied and the model is told why.
    publish = [ln for ln in result.output.splitlines() if "agent_step" in ln and "publish({" in ln]
    assert len(publish) == 1 and "rejected" in publish[0] and "no control channel" in publish[0]
    assert "agent_step         draft model" in result.output


async def wait_until(pilot: Pilot, what: str, cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for: {what}")
        await pilot.pause(0.01)


async def test_the_tui_approves_a_pydantic_ai_tool_call_and_the_tool_runs() -> None:
    from examples.pydantic_ai_agent import agent

    def factory(sinks: list[object], channel: ControlChannel) -> tuple[Runner, str]:
        runner = Runner(
            agent=agent, planner=make_planner(PLAN, None, None, None).planner,
            goal_deriver=PassthroughGoalDeriver(GOAL), sinks=sinks, control=channel,
        )
        return runner, GOAL

    source = LocalRunSource(factory)
    app = run_app(source, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, "the publish approval", lambda: bool(run_screen(app).state.approvals))
        [request] = run_screen(app).state.approvals.values()
        assert request.tool_name == "publish" and request.task_id == "publish"
        assert request.target_id.startswith("pyd_ai_")  # PydanticAI's own tool call id
        approvals = app.query_one(ApprovalsView)
        await wait_until(pilot, "the approval listed", lambda: approvals.selected_key == request.target_id)
        await pilot.press("tab", "tab", "tab")  # plan -> task detail -> events -> approvals
        assert app.focused is approvals
        await pilot.press("a")  # unread: its detail opens first (nothing is sent)
        await pilot.pause(0.2)
        await pilot.press("a")  # a decides there
        await wait_until(pilot, "run COMPLETED", lambda: run_screen(app).state.phase == RunPhase.COMPLETED)
        assert all(t.status == TaskStatus.COMPLETED for t in run_screen(app).state.tasks.values())
    assert source.error is None
    assert source.runner.session is not None
    assert "posted to #releases" in source.runner.session.completed_results["publish"]
