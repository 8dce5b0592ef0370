"""Deterministic runs for the runs screen's tests and snapshot: fixed ids, fixed clock."""

from __future__ import annotations

from goldfive import events as E
from goldfive.control import ControlKind, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive_tui.runs.app import HubApp
from goldfive_tui.runs.scripted import ScriptedRuns
from goldfive_tui.scenario import T0_MS, DemoScript, flatten

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


def make_hub(*kinds: str, runs: ScriptedRuns | None = None) -> HubApp:
    runs = runs or make_runs(*kinds)
    # A long poll: tests poll by hand (await app.poll()) so nothing races them.
    return HubApp(runs, clock=lambda: NOW_MS, cursor_blink=False, poll_s=3600, osc=False)


def new_approval(run_id: str, target: str = "send_mail", at_ms: int = NOW_MS - 2_000) -> Event:
    script = DemoScript(run_id=run_id)
    script.clock.advance(at_ms - T0_MS)
    return script._at(0, E.approval_requested, target_id=target, kind="tool", prompt=f"Run {target}?",
                      task_id="publish", tool_name=target, args={"to": "team@example.com"}, timeout_ms=0)  # fmt: skip
