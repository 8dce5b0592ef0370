"""The TUI approves a LangGraph tool call (interrupt() in the graph) with its keys."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from examples.langgraph_agent import ScriptedChatModel, build, tidy_script
from goldfive.control import ControlChannel
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.types import Plan, Task, TaskStatus
from goldfive.view import RunPhase
from goldfive_tui.local_source import LocalRunSource
from tests.tui.conftest import run_app, run_screen
from goldfive_tui.widgets.approvals import ApprovalsView
from tests.tui.test_demo_e2e import acked, controls, wait_until


async def test_the_tui_approves_a_langgraph_tool_call_and_it_runs() -> None:
    model = ScriptedChatModel(respond=tidy_script)
    graph = build(model)

    def factory(sinks: list[object], channel: ControlChannel) -> tuple[Runner, str]:
        plan = Plan(tasks=[Task("clean", "Delete build/old.log")])
        return Runner(agent=graph, planner=StaticPlanner(plan), sinks=sinks, control=channel), "tidy"

    source = LocalRunSource(factory)
    app = run_app(source, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, "the delete_file approval", lambda: bool(run_screen(app).state.approvals))
        [request] = run_screen(app).state.approvals.values()
        assert (request.tool_name, request.target_id) == ("delete_file", "clean-del")
        approvals = app.query_one(ApprovalsView)
        await wait_until(pilot, "the approval listed", lambda: approvals.selected_key == request.target_id)
        await pilot.press("tab", "tab", "tab")  # plan -> task detail -> events -> approvals
        assert app.focused is approvals
        await pilot.press("a")  # an approval never opened opens first (issue 23 item 3), then a approves
        from goldfive_tui.screens.detail import ApprovalScreen

        await wait_until(pilot, "the approval opened", lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("a")
        await wait_until(pilot, "APPROVE acked", lambda: acked(app, "APPROVE"))
        assert controls(app, "APPROVE")[0].ack_result == "SUCCESS"
        await wait_until(pilot, "run COMPLETED", lambda: run_screen(app).state.phase == RunPhase.COMPLETED)
        assert run_screen(app).state.tasks["clean"].status == TaskStatus.COMPLETED
    [ran] = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert ran.content == "deleted build/old.log"
