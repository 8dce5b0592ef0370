"""The note prompt steers now, after this task (ctrl+l) or standing (ctrl+g); the run screen's
steering section lists the queue and the guidance, and t opens them to withdraw, hold or remove."""

from __future__ import annotations

import asyncio
import functools

from goldfive.cli.local import _runner_factory
from goldfive.planners.static import StaticPlanner
from goldfive.types import Plan, Task, TaskEdge
from goldfive_tui.local_source import LocalRunSource
from goldfive_tui.screens.note import NotePrompt
from goldfive_tui.screens.steering import SteeringScreen
from goldfive_tui.widgets.steering import SteeringView
from tests.tui.conftest import run_app, run_screen, screen_text
from tests.tui.pilot_kit import pilot_until

SIZE = (120, 40)


async def test_the_prompts_three_send_keys_queue_keep_and_the_section_and_t_change_them() -> None:
    gate = asyncio.Event()
    started = asyncio.Event()

    async def agent(task, session):  # type: ignore[no-untyped-def]
        if task.id == "a":
            started.set()
            await gate.wait()
        return f"did {task.id}"

    plan = Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[TaskEdge("a", "b")])
    source = LocalRunSource(_runner_factory(agent, StaticPlanner(plan), "go"))  # type: ignore[arg-type]
    app = run_app(source)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(started.wait(), 5)
        screen = run_screen(app)
        section = screen.query_one(SteeringView)
        assert section.display is False  # nothing queued, nothing standing: no section

        until = functools.partial(pilot_until, pilot, "the run's events", timeout=5.0, step=0.05)

        async def note(text: str, key: str) -> None:
            await pilot.press("s")
            assert isinstance(app.screen, NotePrompt)
            assert "ctrl+l after this task" in screen_text(app) and "ctrl+g standing" in screen_text(app)
            await pilot.press(*text, key)

        await note("check twice", "ctrl+l")
        await note("be brief", "ctrl+l")
        await note("no prod", "ctrl+g")
        state = screen.state
        await until(lambda: len(state.notes.queue) == 2 and len(state.notes.standing) == 1)
        assert [(n.id, n.text) for n in state.notes.queue] == [("q1", "check twice"), ("q2", "be brief")]
        assert [n.text for n in state.notes.standing] == ["no prod"]
        screen.repaint()
        await pilot.pause()
        assert section.display is True
        text = screen_text(app)
        assert "Steering: 2 queued, 1 standing" in text and "q1  next   check twice" in text and "g1  always no prod" in text

        await pilot.press("t")
        assert isinstance(app.screen, SteeringScreen)
        await pilot.press("right_square_bracket")  # q1 down: the queue is q2, q1
        await until(lambda: [n.id for n in state.notes.queue] == ["q2", "q1"])
        await pilot.pause(0.4)
        await pilot.press("left_square_bracket")  # the selection followed q1: up again
        await until(lambda: [n.id for n in state.notes.queue] == ["q1", "q2"])
        await pilot.pause(0.4)
        await pilot.press("h")  # q1 held
        await until(lambda: state.notes.queue[0].held)
        await pilot.press("down", "d")  # q2 withdrawn
        await until(lambda: [n.id for n in state.notes.queue] == ["q1"])
        await pilot.pause(0.4)  # the list shows q1, g1 now, the selection kept in place: on g1
        await pilot.press("d")  # g1 removed
        await until(lambda: state.notes.standing == [])
        await pilot.press("escape")
        gate.set()
        assert source._run_task is not None
        await source._run_task
        assert [n.id for n in state.notes.queue] == ["q1"]  # held: never delivered
