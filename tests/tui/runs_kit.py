"""Deterministic runs for the runs screen's tests and snapshot: fixed ids, fixed clock."""

from __future__ import annotations

from goldfive import events as E
from goldfive.control import ControlKind, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.run.screen import RunScreen
from tests.tui.scripted import ScriptedRuns
from goldfive_tui.screens.runs import RunsScreen
from tests.tui.scenario import T0_MS, DemoScript, flatten

NOW_MS = T0_MS + 95_000
IDS = {
    "approval": "a1aa0001bbbb",
    "failed": "b2bb0002cccc",
    "paused": "c3cc0003dddd",
    "running": "d4dd0004eeee",
    "done": "e5ee0005ffff",
    "escalation": "f6ff0006aaaa",
}


def script_events(kind: str) -> tuple[DemoScript, list[Event]]:
    script = DemoScript(run_id=IDS[kind])
    steps = [script.opening()]
    if kind in ("approval", "done"):
        steps.append(script.to_approval(task="draft"))
    if kind == "done":
        steps.append(script.finish())
    if kind == "failed":
        steps.append([script._at(2000, E.run_aborted, "agent raised RuntimeError: kaboom")])
    if kind == "paused":
        steps.append(script.control(ControlMessage(kind=ControlKind.PAUSE, payload={})))
    if kind == "escalation":
        steps.append(script.control(ControlMessage(kind=ControlKind.GOLDFIVE_PAUSE_ESCALATE, payload={"reason": "repeated failure"})))
    return script, flatten(*steps)


def make_runs(*kinds: str) -> ScriptedRuns:
    return ScriptedRuns({IDS[k]: script_events(k)[1] for k in kinds})


def make_hub(*kinds: str, runs: ScriptedRuns | None = None) -> GoldfiveApp:
    runs = runs or make_runs(*kinds)
    # A long poll: tests poll by hand (await hub_of(app).poll()) so nothing races them.
    return GoldfiveApp(RunsScreen(runs, clock=lambda: NOW_MS, poll_s=3600, osc=False), cursor_blink=False)


def hub_of(app: GoldfiveApp) -> RunsScreen:
    """The app's runs screen (its first screen)."""
    assert isinstance(app.home, RunsScreen)
    return app.home


def open_screen(app: GoldfiveApp) -> RunScreen:
    """The run screen of the run opened last."""
    screen = hub_of(app).run_screen
    assert screen is not None
    return screen


def new_approval(run_id: str, target: str = "send_mail", at_ms: int = NOW_MS - 2_000) -> Event:
    script = DemoScript(run_id=run_id)
    script.clock.advance(at_ms - T0_MS)
    return script._at(0, E.approval_requested, target_id=target, kind="tool", prompt=f"Run {target}?",
                      task_id="publish", tool_name=target, args={"to": "team@example.com"}, timeout_ms=0)  # fmt: skip
