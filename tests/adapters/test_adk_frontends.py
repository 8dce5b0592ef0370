"""The ADK example through `goldfive run` (the CLI picks the adapter from the ADK object) and
through the TUI, where a person approves the ADK tool call with a key."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner
from textual.pilot import Pilot

import examples.adk_agent as example
from goldfive.cli import main
from goldfive.control import ControlChannel
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks.sqlite import SQLitePersistenceSink
from goldfive.types import Plan, Task, TaskStatus
from goldfive.view import RunPhase
from tests.adapters.adk_kit import warm_up_adk
from goldfive_tui.local_source import LocalRunSource
from tests.tui.conftest import run_app, run_screen
from goldfive_tui.widgets.approvals import ApprovalsView


@pytest.fixture(scope="module", autouse=True)
def _adk_warmed_up() -> None:
    warm_up_adk()


@pytest.fixture
def fast_example(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The example without its pause per model call; what publish_haiku published."""
    monkeypatch.setattr(example, "DELAY_S", 0.0)
    published: list[str] = []
    monkeypatch.setattr(example, "print", lambda *a, **k: published.append(" ".join(map(str, a))), raising=False)
    return published


def test_goldfive_run_takes_the_adk_agent_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast_example: list[str]) -> None:
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(
        main,
        ["run", "examples.adk_agent:agent", "--goal", "publish a haiku", "--plan", "examples/adk_plan.json", "--headless"],
    )
    assert result.exit_code == 0, result.output
    assert "3/3 tasks completed" in result.output
    # Headless: nobody can approve, so ADK's confirmation is answered "no" and the model is told.
    assert "publish_haiku" in result.output and "rejected" in result.output
    assert fast_example == []


async def wait_until(pilot: Pilot[Any], what: str, cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for: {what}")
        await pilot.pause(0.01)


async def test_the_tui_approves_an_adk_tool_call(tmp_path: Path, fast_example: list[str]) -> None:
    plan = Plan(tasks=[Task("publish", "Publish it", "needs approval")])

    def factory(sinks: list[object], channel: ControlChannel) -> tuple[Runner, str]:
        runner = Runner(agent=example.agent, planner=StaticPlanner(plan), sinks=sinks, control=channel)  # type: ignore[arg-type]
        return runner, "publish a haiku"

    source = LocalRunSource(factory, extra_sinks=[SQLitePersistenceSink(str(tmp_path / "runs.db"))])
    app = run_app(source, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, "the publish_haiku approval", lambda: bool(run_screen(app).state.approvals))
        [request] = run_screen(app).state.approvals.values()
        assert request.tool_name == "publish_haiku"
        approvals = app.query_one(ApprovalsView)
        await wait_until(pilot, "the approval listed", lambda: approvals.selected_key == request.target_id)
        approvals.focus()
        await pilot.press("a")  # an approval never opened opens first (issue 23 item 3), then a approves
        from goldfive_tui.screens.detail import ApprovalScreen

        await wait_until(pilot, "the approval opened", lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("a")
        await wait_until(pilot, "run COMPLETED", lambda: run_screen(app).state.phase == RunPhase.COMPLETED)
        assert run_screen(app).state.tasks["publish"].status == TaskStatus.COMPLETED
    assert source.error is None
    assert fast_example == ["PUBLISHED: old pond / a frog jumps in / the sound of water"]
