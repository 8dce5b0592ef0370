"""The TUI on the real demo run (LLM code path, offline model, in-process Runner), driven by keys.

Each wait is bounded: the app is given turns with ``pilot.pause`` until the run state it
folds from the event stream says what we wait for, or the test fails naming what never came.
"""

from __future__ import annotations

import functools
from pathlib import Path

from goldfive.control import ControlChannel
from goldfive.demo import DEMO_GOAL, make_demo_runner
from goldfive.recording import open_recording
from goldfive.runner import Runner
from goldfive.view import ControlView, RunPhase
from goldfive.sinks.sqlite import SQLitePersistenceSink
from goldfive.types import TaskStatus
from tests.tui.conftest import run_app, run_screen, screen_text
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.local_source import LocalRunSource
from goldfive_tui.screens.detail import ApprovalScreen
from goldfive_tui.widgets.approvals import ApprovalsView
from goldfive_tui.widgets.eventlog import EventLog
from tests.tui.pilot_kit import pilot_until

SIZE = (120, 40)
#: The demo at 8x: a task takes ~0.3 s, the whole run ~2.5 s plus our pauses; slow enough
#: that a loaded machine still presses p long before the run reaches publishing.
SPEED = 8.0
WAIT_S = 10.0
NOTE = "focus on fewer slides"


wait_until = functools.partial(pilot_until, timeout=WAIT_S)


def demo_app(db: Path) -> tuple[GoldfiveApp, LocalRunSource]:
    def factory(sinks: list[object], channel: ControlChannel) -> tuple[Runner, str]:
        return make_demo_runner(sinks=sinks, control=channel, speed=SPEED), DEMO_GOAL

    source = LocalRunSource(factory, extra_sinks=[SQLitePersistenceSink(str(db))])
    return run_app(source, cursor_blink=False), source


def controls(app: GoldfiveApp, kind: str) -> list[ControlView]:
    return [c for c in run_screen(app).state.controls.values() if c.kind == kind]


def acked(app: GoldfiveApp, kind: str) -> bool:
    return any(c.acked for c in controls(app, kind))


def started(app: GoldfiveApp) -> set[str]:
    return {t.id for t in run_screen(app).state.tasks.values() if t.started_ms}


def log_texts(app: GoldfiveApp) -> list[str]:
    return [f"{ln.label.strip()} {ln.text}" for ln in app.query_one(EventLog).shown_lines()]


async def test_pause_resume_steer_and_approve_the_real_demo_to_completion(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    app, source = demo_app(db)
    async with app.run_test(size=SIZE) as pilot:
        # -- pause while the first task runs: it finishes, nothing new starts -------------
        await wait_until(pilot, "the first task to start", lambda: bool(started(app)))
        await pilot.press("p")
        await wait_until(pilot, "PAUSE acked", lambda: acked(app, "PAUSE"))
        [pause] = controls(app, "PAUSE")
        assert pause.ack_result == "SUCCESS", pause.ack_detail
        # The running task finishes first: PAUSING until it has, then PAUSED.
        assert run_screen(app).state.phase in (RunPhase.PAUSING, RunPhase.PAUSED)
        await wait_until(pilot, "the running task to finish", lambda: run_screen(app).state.count_status(TaskStatus.RUNNING) == 0)
        before = started(app)
        await pilot.pause(0.8)  # ~2.5 task lengths at this speed: time for one to start if pause leaked
        assert started(app) == before
        assert run_screen(app).state.phase == RunPhase.PAUSED
        run_screen(app).repaint()
        await pilot.pause()
        screen = screen_text(app).splitlines()
        assert "PAUSED" in screen[0]
        assert "p Pause/Resume" in screen[-1]

        # -- resume: the next task starts ---------------------------------------------------
        await pilot.press("p")
        await wait_until(pilot, "RESUME acked", lambda: acked(app, "RESUME"))
        assert controls(app, "RESUME")[0].ack_result == "SUCCESS"
        await wait_until(pilot, "a task after the pause to start", lambda: started(app) > before)

        # -- steer with a note: the plan is revised with the note's words -------------------
        # Paused again first, so the steer lands before publishing however slowly we type;
        # the steer is applied while paused and the run stays paused until RESUME.
        await pilot.press("p")
        await wait_until(pilot, "the second PAUSE acked", lambda: run_screen(app).state.phase == RunPhase.PAUSED)
        await pilot.press("s", *NOTE, "ctrl+s")
        await wait_until(pilot, "STEER acked", lambda: acked(app, "STEER"))
        [steer] = controls(app, "STEER")
        assert steer.ack_result == "SUCCESS", steer.ack_detail
        assert steer.summary == NOTE and "stays paused" in steer.ack_detail
        assert run_screen(app).state.phase == RunPhase.PAUSED
        await wait_until(pilot, "the STEER's plan revision", lambda: steer.revision is not None)
        await pilot.press("p")
        await wait_until(pilot, "the second RESUME acked", lambda: run_screen(app).state.phase == RunPhase.RUNNING)
        assert steer.revision == run_screen(app).state.revision == 1
        added = [t for t in run_screen(app).state.tasks.values() if t.added_revision == 1]
        assert added and all("fewer slides" in t.title for t in added)
        await wait_until(pilot, "the revision line in the log", lambda: any(t.endswith("→ plan revision 1") for t in log_texts(app)))

        # -- approve publish_deck when it is requested --------------------------------------
        await wait_until(pilot, "the publish_deck approval", lambda: bool(run_screen(app).state.approvals))
        [request] = run_screen(app).state.approvals.values()
        assert request.tool_name == "publish_deck"
        approvals = app.query_one(ApprovalsView)
        await wait_until(pilot, "the approval listed", lambda: approvals.selected_key == request.target_id)
        await pilot.press("tab", "tab", "tab")  # plan -> task detail -> events -> approvals
        assert app.focused is approvals
        await pilot.press("a")  # unread: its detail opens, where a approves
        await wait_until(pilot, "the approval's detail", lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("a")
        await wait_until(pilot, "APPROVE acked", lambda: acked(app, "APPROVE"))
        [approve] = controls(app, "APPROVE")
        assert approve.ack_result == "SUCCESS", approve.ack_detail
        assert approve.summary == request.target_id

        # -- the run completes, and the header says so --------------------------------------
        await wait_until(pilot, "run COMPLETED", lambda: run_screen(app).state.phase == RunPhase.COMPLETED)
        assert run_screen(app).state.approvals == {}
        assert all(t.status == TaskStatus.COMPLETED for t in added)
        run_screen(app).repaint()
        await pilot.pause()
        header = screen_text(app).splitlines()[:2]
        assert "COMPLETED" in header[0] and "rev 1" in header[0]
        total = len(run_screen(app).state.tasks)
        assert f"{total}/{total} tasks" in header[1]
    assert source.error is None
    recorded = open_recording(db)
    assert recorded.events[-1].WhichOneof("payload") == "run_completed"


async def test_keys_typed_into_the_steer_input_control_nothing_on_the_real_run(tmp_path: Path) -> None:
    app, _ = demo_app(tmp_path / "runs.db")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, "the plan", lambda: bool(run_screen(app).state.tasks))
        await pilot.press("s", "a", "p", "c", "x")
        assert app.screen.query_one("#note-input").text == "apcx"  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_until(pilot, "the publish_deck approval", lambda: bool(run_screen(app).state.approvals))
        assert run_screen(app).state.controls == {}
        assert run_screen(app).state.phase == RunPhase.RUNNING
