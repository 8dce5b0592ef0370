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


RUN = ["run", "examples.pydantic_ai_agent:agent", "--goal", GOAL, "--plan", PLAN, "--headless"]


def test_goldfive_run_takes_the_pydantic_ai_agent_as_it_is() -> None:
    result = CliRunner().invoke(main, RUN)
    assert result.exit_code == 0, result.output
    assert "3/3 tasks completed" in result.output
    # Headless without a hub, nobody can approve: it says so at start, the call to publish is
    # rejected (a decision in the ledger, by this person's default) and the model is told why.
    assert "approvals: each is rejected at once" in result.stderr
    started = [ln for ln in result.stderr.splitlines() if ln.startswith("goldfive: run ") and ln.endswith(" started")]
    assert len(started) == 1 and started[0].split()[2] in result.stderr.splitlines()[-1]  # the id the replay line names
    assert "1 approval rejected by --approvals reject" in result.stderr
    publish = [ln for ln in result.output.splitlines() if "agent_step" in ln and "publish({" in ln]
    assert len(publish) == 1 and "rejected" in publish[0] and "--approvals reject" in publish[0]
    assert "approval_decided   REJECTED publish by" in result.output
    assert "agent_step         draft model" in result.output


def test_run_headless_approvals_approve_runs_the_tool() -> None:
    result = CliRunner().invoke(main, [*RUN, "--approvals", "approve"])
    assert result.exit_code == 0, result.output
    assert "approvals: each is approved at once" in result.stderr
    assert "approval_decided   APPROVED publish by" in result.output and "via headless" in result.output
    publish = [ln for ln in result.output.splitlines() if "agent_step" in ln and "publish({" in ln]
    assert len(publish) == 1 and " ok" in publish[0]


def test_run_headless_approvals_wait_without_a_hub_is_refused_before_the_run() -> None:
    result = CliRunner().invoke(main, [*RUN, "--approvals", "wait"])
    assert result.exit_code == 2
    assert "wait forever" in result.stderr and "--hub" in result.stderr
    assert "run_started" not in result.output


def test_approvals_goes_with_headless_only() -> None:
    result = CliRunner().invoke(main, [*RUN[:-1], "--approvals", "approve"])
    assert result.exit_code == 2 and "--approvals goes with --headless" in result.stderr


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
        await pilot.press("a")  # an approval never opened opens first (issue 23 item 3)
        from goldfive_tui.screens.detail import ApprovalScreen

        await wait_until(pilot, "the approval opened", lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("a")
        await wait_until(pilot, "run COMPLETED", lambda: run_screen(app).state.phase == RunPhase.COMPLETED)
        assert all(t.status == TaskStatus.COMPLETED for t in run_screen(app).state.tasks.values())
    assert source.error is None
    assert source.runner.session is not None
    assert "posted to #releases" in source.runner.session.completed_results["publish"]
