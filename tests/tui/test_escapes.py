"""What a run wrote is drawn as text, never sent to the terminal as an escape: Rich keeps
``ESC`` and C1 controls inside a Text, so the app's line filter removes them from every line."""

from __future__ import annotations

from rich.segment import Segment

from goldfive import events as E
from goldfive.types import Plan, Session, Task
from goldfive_tui.app import GoldfiveApp
from tests.tui.conftest import run_app, run_screen
from goldfive_tui.safe_output import DropControls
from tests.tui.scripted import ScriptedSource
from tests.escapes import forbidden_in, laden


def _drawn(app: GoldfiveApp) -> str:
    """The text of every segment the screen would write (Textual's own cursor moves aside)."""
    update = app.screen._compositor.render_update(full=True)
    return "".join(seg.text for line in update.strips for strip in line for seg in strip if seg.control is None)


async def test_a_runs_goal_titles_prompt_and_progress_are_drawn_without_their_escapes() -> None:
    s = Session(run_id="evil-run")
    evs = [
        E.run_started(s, goal_summary=laden("goal")),
        E.plan_submitted(s, Plan(tasks=[Task("t1", laden("title")), Task("t2", laden("second"))], id="p")),
        E.task_started(s, "t1"),
        E.task_progress(s, "t1", detail=laden("progress")),
        E.approval_requested(s, target_id="a1", kind="tool", prompt=laden("prompt"), task_id="t1", tool_name="publish", args={"p": laden("arg")}),
    ]
    for i, ev in enumerate(evs):
        ev.sequence = i
    source = ScriptedSource(evs)
    app = run_app(source, cursor_blink=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await source.wait_idle()
        await pilot.pause()
        run_screen(app).repaint()
        await pilot.pause()
        drawn = _drawn(app)
    assert "goal" in drawn and "title" in drawn  # the run's text is on screen
    assert forbidden_in(drawn) == []


def test_the_filter_keeps_widths_and_textuals_control_segments() -> None:
    cursor = Segment("", None, [(1, 0)])  # type: ignore[list-item]
    out = DropControls().apply([Segment("a\x1b]0;t\x07b\x9b2J"), cursor], background=None)  # type: ignore[arg-type]
    assert out[0].text == "a]0;tb2J" and out[0].cell_length == Segment("a\x1b]0;t\x07b\x9b2J").cell_length
    assert out[1] is cursor
