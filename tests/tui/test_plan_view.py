"""The plan pane gives long (replanned) task titles the room it has."""

from __future__ import annotations

from goldfive import events as E
from goldfive.types import Plan, Session, Task, TaskEdge
from tests.tui.conftest import run_app, run_screen, screen_text
from tests.tui.scenario import ScriptClock
from tests.tui.scripted import ScriptedSource

LONG = "review (focus on fewer slides)"  # 30 characters, as the demo's replanner names tasks


def _source() -> ScriptedSource:
    session = Session(run_id="r1", clock=ScriptClock())
    plan = Plan(
        tasks=[Task(id="draft", title="Draft the slides"), Task(id="review_focus", title=LONG)],
        edges=[TaskEdge("draft", "review_focus")],
        id="p1",
        run_id="r1",
    )
    return ScriptedSource([E.run_started(session, goal_summary="deck", user_input="deck"), E.plan_submitted(session, plan)])


async def test_a_30_character_title_is_shown_whole_at_120_columns() -> None:
    app = run_app(_source(), cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        run_screen(app).repaint()
        await pilot.pause()
        plan_rows = [ln.split("││")[0] for ln in screen_text(app).splitlines()]
        assert any(LONG in row for row in plan_rows)


async def test_at_80_columns_it_is_clipped_with_an_ellipsis() -> None:
    app = run_app(_source(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        run_screen(app).repaint()
        await pilot.pause()
        text = screen_text(app)
        assert LONG not in text and "review (focus on fewe…" in text
