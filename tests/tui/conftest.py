"""One deterministic app factory for the TUI tests: fixed run id, fixed clock, scripted events."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest
from rich.console import Console
from textual.app import App

from goldfive_tui.app import GoldfiveApp
from goldfive_tui.run.screen import RunScreen
from tests.tui.scenario import DemoScript, story_source
from tests.tui.scripted import ScriptedSource

STAGES = ("opening", "approval", "finished")


@pytest.fixture(autouse=True)
def one_person(monkeypatch: pytest.MonkeyPatch) -> None:
    """Controls carry the OS user (getpass reads LOGNAME first): one name on every machine,
    so snapshots that show who steered are the same everywhere."""
    monkeypatch.setenv("LOGNAME", "ada")


@dataclass
class Rig:
    app: GoldfiveApp
    screen: RunScreen
    source: ScriptedSource
    script: DemoScript


def run_app(source: object, *, clock=None, cursor_blink: bool = True) -> GoldfiveApp:  # type: ignore[no-untyped-def]
    """The app on one live run screen over ``source`` (what ``goldfive run`` opens)."""
    return GoldfiveApp(RunScreen(source, clock=clock), cursor_blink=cursor_blink)  # type: ignore[arg-type]


def run_screen(app: GoldfiveApp) -> RunScreen:
    """The app's run screen (its first screen)."""
    assert isinstance(app.home, RunScreen)
    return app.home


def make_rig(
    stage: str = "opening", *, live: bool = True, acks: dict | None = None, cursor_blink: bool = True, owns_run: bool = False
) -> Rig:
    """The demo story up to ``stage``; controls get the runtime's reaction events.
    ``owns_run``: behave like a run in this process (q asks before quitting)."""
    script = DemoScript()
    source = story_source(script, stage, live=live, acks=acks)
    source.owns_run = owns_run
    screen = RunScreen(source, clock=None)
    return Rig(GoldfiveApp(screen, cursor_blink=cursor_blink), screen, source, script)


async def settle(rig: Rig, pilot) -> None:  # type: ignore[no-untyped-def]
    """Wait until every released event is applied and the screen repainted."""
    await pilot.pause()
    await rig.source.wait_idle()
    await pilot.pause()
    rig.screen.repaint()
    await pilot.pause()


def toasts_stay(app: App[object], seconds: float = 120.0) -> None:
    """Every toast ``app`` shows stays ``seconds`` whatever timeout it asks for: a test that reads
    a 2-second toast off the screen would miss it on a loaded machine, where the presses and
    repaints between the toast and the read can take longer than that."""
    notify = app.notify

    def held(*args, **kw):  # type: ignore[no-untyped-def]
        kw["timeout"] = seconds
        return notify(*args, **kw)

    app.notify = held  # type: ignore[method-assign]


def screen_text(app: App[object]) -> str:
    """The current screen as plain text (what a person reads)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


@pytest.fixture
def rig() -> Rig:
    return make_rig()
